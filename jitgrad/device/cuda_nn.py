"""CUDA kernels for the neural-network layers: softmax, addmm, convolution and pooling (the
twin of ``device.cpu_nn``; normalisation, embedding and the losses are in ``cuda_nn_norm``).

Conventions (the brief every CUDA kernel module follows):

* Host functions take :class:`device.cuda.CudaArray` operands, make them contiguous on the
  device when they are not (a copy kernel, never a host round trip), and hand the kernels flat
  1-D buffers plus sizes as ints or tuples of ints.
* Element-parallel kernels are grid-stride loops launched with ``device.cuda._launch_config``.
* Reductions (a softmax row, a weight-gradient entry) are one block each: every thread folds a
  strided share of the elements, then a shared-memory tree (``block_sum`` / ``block_max``) of
  ``BLOCK`` lanes combines them. The order is fixed, so results do not depend on timing.
* Sums accumulate in float64 (more accurate than the CPU's float32 sums; the op tests compare
  within a few ulp). The tiled GEMM of ``addmm`` accumulates in the operands' dtype, as BLAS.
* Scatter-adds (max-pool backward) use ``cuda.atomic.add``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, float32, float64

from . import cuda as dc
from .cpu_nn import pool_out_size
from .rebind import bind

#: lanes of the shared-memory tree reductions (a power of two; one block per reduced row)
BLOCK = dc.THREADS_PER_BLOCK
#: GEMM tile edge: TILE x TILE threads per block (4 Python threads under the simulator)
TILE = 2 if dc.SIMULATOR else 16
#: the GEMM accumulator's dtype: a global of each dtype's copy of ``_gemm_body``
_ACC = float64


# --- helpers ------------------------------------------------------------------------------------
def flat(a):
    """A contiguous 1-D device buffer holding ``a``'s elements in C order (a copy kernel first
    when ``a`` is a strided view)."""
    if not a.is_contiguous():
        a = a.copy()
    return a.buffer[a.offset:a.offset + a.size]


def dummy(dtype=np.float64, index: int = 0):
    """A 1-element device buffer standing in for an absent optional operand (flag says so)."""
    return dc.empty((1,), dtype, index).buffer


def launch(kern, n: int, *args) -> None:
    """``kern`` over ``n`` work items, grid-stride (``device.cuda._launch_config``)."""
    if n > 0:
        blocks, threads = dc._launch_config(n)
        kern[blocks, threads](*args)


def launch_rows(kern, rows: int, *args) -> None:
    """``kern`` with one block of ``BLOCK`` threads per row (blocks stride over the rows)."""
    if rows > 0:
        kern[min(rows, dc.MAX_BLOCKS), BLOCK](*args)


block_sum = dc.block_sum  # (shared with the matmul kernels)


@cuda.jit(device=True)
def block_max(sm, v):
    """The max of ``v`` over the block's threads (NaN wins, as NumPy's max)."""
    tid = cuda.threadIdx.x
    sm[tid] = v
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            b = sm[tid + s]
            if b > sm[tid] or b != b:
                sm[tid] = b
        cuda.syncthreads()
        s //= 2
    total = sm[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def safe_div(a, b):
    """``a / b`` with IEEE results for ``b == 0`` (the simulator's Python division raises)."""
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.inf if a > 0 else -math.inf
    return a / b


# --- softmax / log_softmax ----------------------------------------------------------------------
@cuda.jit
def _softmax_k(x, out, R, inner, rows, log):
    """Row ``k = (o, i)`` of the ``(outer, R, inner)`` layout: ``m = max_j x_j``,
    ``s = sum_j exp(x_j - m)``, then ``out_j = x_j - m - log s`` (log) or ``exp(x_j - m) / s``.
    One block per row; both reductions are shared-memory trees."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    row = cuda.blockIdx.x
    while row < rows:
        o = row // inner
        base = o * R * inner + (row - o * inner)
        m = -math.inf
        j = tid
        while j < R:
            v = x[base + j * inner]
            if v > m or v != v:
                m = v
            j += BLOCK
        m = block_max(sm, m)
        s = 0.0
        j = tid
        while j < R:
            s += math.exp(x[base + j * inner] - m)
            j += BLOCK
        s = block_sum(sm, s)
        ls = math.log(s) if s > 0 else math.nan  # s >= 1 unless the row holds NaN / inf
        j = tid
        while j < R:
            z = x[base + j * inner] - m
            if log:
                out[base + j * inner] = z - ls
            else:
                out[base + j * inner] = math.exp(z) / s
            j += BLOCK
        row += cuda.gridDim.x


def softmax(x, dim: int, log: bool):
    """(log-)softmax of ``x`` along ``dim`` (the CPU's ``_softmax_fwd`` math)."""
    src = x.astype(np.float32) if x.dtype == np.float16 else x
    out = dc.empty(src.shape, src.dtype, x.index)
    if src.size:
        shape = src.shape or (1,)
        d = dim if src.ndim else 0
        R, inner = shape[d], math.prod(shape[d + 1:])
        rows = math.prod(shape[:d]) * inner
        launch_rows(_softmax_k, rows, flat(src), out.buffer, R, inner, rows, bool(log))
    return out if out.dtype == x.dtype else out.astype(x.dtype)


# --- addmm: a tiled GEMM --------------------------------------------------------------------------
def _gemm_body(a, a_off, a_st, b, b_off, b_st, bias, bias_off, bias_st, has_bias, out, M, N, K,
               zero):
    """``out[i, j] = bias[i, j] + sum_k a[i, k] b[k, j]`` over strided operands (``bias``
    broadcast by stride 0). One TILE x TILE block per output tile (blocks stride over the
    tiles); the K loop stages TILE x TILE slices of ``a`` and ``b`` in shared memory and
    accumulates in the operands' dtype (``zero`` brings it)."""
    sa = cuda.shared.array((TILE, TILE), _ACC)
    sb = cuda.shared.array((TILE, TILE), _ACC)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tm = (M + TILE - 1) // TILE
    tn = (N + TILE - 1) // TILE
    t = cuda.blockIdx.x
    while t < tm * tn:
        bm = t // tn
        r = bm * TILE + ty
        c = (t - bm * tn) * TILE + tx
        acc = zero
        for k0 in range(0, K, TILE):
            ka = k0 + tx
            if r < M and ka < K:
                sa[ty, tx] = a[a_off + r * a_st[0] + ka * a_st[1]]
            else:
                sa[ty, tx] = 0
            kb = k0 + ty
            if kb < K and c < N:
                sb[ty, tx] = b[b_off + kb * b_st[0] + c * b_st[1]]
            else:
                sb[ty, tx] = 0
            cuda.syncthreads()
            for k in range(TILE):
                acc += sa[ty, k] * sb[k, tx]
            cuda.syncthreads()
        if r < M and c < N:
            if has_bias:
                acc += bias[bias_off + r * bias_st[0] + c * bias_st[1]]
            out[r * N + c] = acc
        t += cuda.gridDim.x


_gemm_kernels: dict = {}


def _gemm_kernel(dtype):
    kern = _gemm_kernels.get(dtype)
    if kern is None:  # the accumulator's shared-array dtype is a compile-time constant
        fn = bind(_gemm_body, f"gemm_{dtype}", _ACC=float32 if dtype == np.float32 else float64)
        dc.tag_kernel(fn, _gemm_kernel, dtype)
        kern = _gemm_kernels[dtype] = cuda.jit(fn)
    return kern


def _st2(a):
    return tuple(a.elem_strides) if a.ndim == 2 else (0, 0)


def addmm(bias, m1, m2):
    """``bias + m1 @ m2`` (``bias`` broadcast to the result; any strides)."""
    dt = np.result_type(m1.dtype, m2.dtype)
    if dt.kind != "f" or dt == np.float16:
        dt = np.dtype(np.float64) if dt.kind != "f" else np.dtype(np.float32)
    m1 = m1 if m1.dtype == dt else m1.astype(dt)
    m2 = m2 if m2.dtype == dt else m2.astype(dt)
    M, K = m1.shape
    N = m2.shape[1]
    out = dc.empty((M, N), dt, m1.index)
    if out.size == 0:
        return out
    has_bias = bias is not None and bias.size > 0
    if has_bias:
        bb = bias.broadcast_to((M, N))
        bias_args = (bb.buffer, bb.offset, _st2(bb))
    else:
        bias_args = (dummy(dt, m1.index), 0, (0, 0))
    tiles = ((M + TILE - 1) // TILE) * ((N + TILE - 1) // TILE)
    _gemm_kernel(dt)[min(tiles, dc.MAX_BLOCKS), (TILE, TILE)](
        m1.buffer, m1.offset, _st2(m1), m2.buffer, m2.offset, _st2(m2), *bias_args, has_bias,
        out.buffer, M, N, K, dt.type(0))
    return out


# --- convolution: direct kernels ----------------------------------------------------------------
# geo: (N, C, H, W, Co, KH, KW, Ho, Wo, sh, sw, ph, pw, dh, dw, G), cpu_nn.ConvGeom's fields.
def geo_tuple(geo) -> tuple:
    return (geo.N, geo.C, geo.H, geo.W, geo.Co, geo.KH, geo.KW, geo.Ho, geo.Wo, geo.sh, geo.sw,
            geo.ph, geo.pw, geo.dh, geo.dw, geo.G)


@cuda.jit
def _conv_fwd_k(x, w, b, has_b, out, gp):
    """``out[n, co, oh, ow] = b[co] + sum_{ci, kh, kw} w[co, ci, kh, kw]
    x[n, grp*Cg + ci, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw]`` (zero outside), one output
    per thread."""
    N, C, H, W, Co, KH, KW, Ho, Wo = gp[0], gp[1], gp[2], gp[3], gp[4], gp[5], gp[6], gp[7], gp[8]
    sh, sw, ph, pw, dh, dw, G = gp[9], gp[10], gp[11], gp[12], gp[13], gp[14], gp[15]
    Cg = C // G
    Cog = Co // G
    i = cuda.grid(1)
    while i < N * Co * Ho * Wo:
        ow = i % Wo
        r = i // Wo
        oh = r % Ho
        r = r // Ho
        co = r % Co
        n = r // Co
        c0 = (co // Cog) * Cg
        acc = 0.0
        for ci in range(Cg):
            for kh in range(KH):
                ih = oh * sh - ph + kh * dh
                if ih >= 0 and ih < H:
                    for kw in range(KW):
                        iw = ow * sw - pw + kw * dw
                        if iw >= 0 and iw < W:
                            acc += (w[((co * Cg + ci) * KH + kh) * KW + kw]
                                    * x[((n * C + c0 + ci) * H + ih) * W + iw])
        if has_b:
            acc += b[co]
        out[i] = acc
        i += cuda.gridsize(1)


@cuda.jit
def _conv_bx_k(g, w, gx, gp):
    """The adjoint in x: ``gx[n, c, ih, iw] = sum g[n, co, oh, ow] w[co, ci, kh, kw]`` over the
    ``(co, kh, kw)`` of c's group with ``ih = oh*sh - ph + kh*dh`` (same for w), one input
    element per thread (a gather: no atomics)."""
    N, C, H, W, Co, KH, KW, Ho, Wo = gp[0], gp[1], gp[2], gp[3], gp[4], gp[5], gp[6], gp[7], gp[8]
    sh, sw, ph, pw, dh, dw, G = gp[9], gp[10], gp[11], gp[12], gp[13], gp[14], gp[15]
    Cg = C // G
    Cog = Co // G
    i = cuda.grid(1)
    while i < N * C * H * W:
        iw = i % W
        r = i // W
        ih = r % H
        r = r // H
        c = r % C
        n = r // C
        grp = c // Cg
        ci = c - grp * Cg
        acc = 0.0
        for co in range(grp * Cog, (grp + 1) * Cog):
            for kh in range(KH):
                th = ih + ph - kh * dh
                if th >= 0 and th % sh == 0 and th // sh < Ho:
                    oh = th // sh
                    for kw in range(KW):
                        tw = iw + pw - kw * dw
                        if tw >= 0 and tw % sw == 0 and tw // sw < Wo:
                            acc += (g[((n * Co + co) * Ho + oh) * Wo + tw // sw]
                                    * w[((co * Cg + ci) * KH + kh) * KW + kw])
        gx[i] = acc
        i += cuda.gridsize(1)


@cuda.jit
def _conv_bw_k(x, g, gw, gp):
    """``gw[co, ci, kh, kw] = sum_{n, oh, ow} g[n, co, oh, ow] x[n, grp*Cg + ci, ih, iw]``:
    one block per weight entry, a shared-memory tree over the ``N*Ho*Wo`` terms."""
    sm = cuda.shared.array(BLOCK, float64)
    N, C, H, W, Co, KH, KW, Ho, Wo = gp[0], gp[1], gp[2], gp[3], gp[4], gp[5], gp[6], gp[7], gp[8]
    sh, sw, ph, pw, dh, dw, G = gp[9], gp[10], gp[11], gp[12], gp[13], gp[14], gp[15]
    Cg = C // G
    Cog = Co // G
    tid = cuda.threadIdx.x
    e = cuda.blockIdx.x
    while e < Co * Cg * KH * KW:
        kw = e % KW
        r = e // KW
        kh = r % KH
        r = r // KH
        ci = r % Cg
        co = r // Cg
        c = (co // Cog) * Cg + ci
        acc = 0.0
        j = tid
        while j < N * Ho * Wo:
            ow = j % Wo
            oh = (j // Wo) % Ho
            n = j // (Wo * Ho)
            ih = oh * sh - ph + kh * dh
            iw = ow * sw - pw + kw * dw
            if ih >= 0 and ih < H and iw >= 0 and iw < W:
                acc += g[((n * Co + co) * Ho + oh) * Wo + ow] * x[((n * C + c) * H + ih) * W + iw]
            j += BLOCK
        acc = block_sum(sm, acc)
        if tid == 0:
            gw[e] = acc
        e += cuda.gridDim.x


@cuda.jit
def _channel_sum_k(g, out, N, C, L):
    """``out[c] = sum_{n, l} g[n, c, l]`` (the bias gradient), one block per channel."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    c = cuda.blockIdx.x
    while c < C:
        acc = 0.0
        j = tid
        while j < N * L:
            n = j // L
            acc += g[(n * C + c) * L + j - n * L]
            j += BLOCK
        acc = block_sum(sm, acc)
        if tid == 0:
            out[c] = acc
        c += cuda.gridDim.x


def conv_forward(x, w, b, geo):
    """The convolution of (N, C, H, W) ``x`` with (Co, C/G, KH, KW) ``w`` (+ ``b``)."""
    out = dc.empty((geo.N, geo.Co, geo.Ho, geo.Wo), x.dtype, x.index)
    has_b = b.size > 0
    launch(_conv_fwd_k, out.size, flat(x), flat(w), flat(b) if has_b else dummy(x.dtype, x.index),
           has_b, out.buffer, geo_tuple(geo))
    return out


def conv_input_grad(g, w, geo):
    gx = dc.empty((geo.N, geo.C, geo.H, geo.W), g.dtype, g.index)
    launch(_conv_bx_k, gx.size, flat(g), flat(w), gx.buffer, geo_tuple(geo))
    return gx


def conv_weight_grad(x, g, geo):
    gw = dc.empty((geo.Co, geo.C // geo.G, geo.KH, geo.KW), x.dtype, x.index)
    launch_rows(_conv_bw_k, gw.size, flat(x), flat(g), gw.buffer, geo_tuple(geo))
    return gw


def channel_sum(g):
    """``g`` (N, C, ...) summed over every dim but 1."""
    N, C = g.shape[0], g.shape[1]
    out = dc.empty((C,), g.dtype, g.index)
    launch_rows(_channel_sum_k, C, flat(g), out.buffer, N, C, math.prod(g.shape[2:]))
    return out


# --- pooling --------------------------------------------------------------------------------------
# pp: (P, H, W, Ho, Wo, KH, KW, sh, sw, ph, pw, dh, dw): planes, sizes, window geometry
@cuda.jit
def _maxpool_k(x, out, idx, pp):
    """``out[p, oh, ow] = max`` over the dilated window (padding excluded; NaN wins) and
    ``idx`` its flat in-plane position, one output per thread."""
    P, H, W, Ho, Wo, KH, KW = pp[0], pp[1], pp[2], pp[3], pp[4], pp[5], pp[6]
    sh, sw, ph, pw, dh, dw = pp[7], pp[8], pp[9], pp[10], pp[11], pp[12]
    i = cuda.grid(1)
    while i < P * Ho * Wo:
        ow = i % Wo
        oh = (i // Wo) % Ho
        p = i // (Wo * Ho)
        best = -math.inf
        bi = -1
        for kh in range(KH):
            ih = oh * sh - ph + kh * dh
            if ih >= 0 and ih < H:
                for kw in range(KW):
                    iw = ow * sw - pw + kw * dw
                    if iw >= 0 and iw < W:
                        v = x[p * H * W + ih * W + iw]
                        if v > best or v != v or bi < 0:
                            best = v
                            bi = ih * W + iw
        out[i] = best
        idx[i] = bi
        i += cuda.gridsize(1)


@cuda.jit
def _maxpool_bwd_k(g, idx, gx, HW, HWo, n):
    """``gx[p, idx[p, o]] += g[p, o]`` (windows may overlap: atomic adds into zeroed gx)."""
    i = cuda.grid(1)
    while i < n:
        k = idx[i]
        if k >= 0:
            cuda.atomic.add(gx, (i // HWo) * HW + k, g[i])
        i += cuda.gridsize(1)


@cuda.jit
def _gather_planes_k(gg, idx, out, HW, HWo, n):
    """``out[p, o] = gg[p, idx[p, o]]`` (the max-pool scatter's adjoint)."""
    i = cuda.grid(1)
    while i < n:
        out[i] = gg[(i // HWo) * HW + idx[i]]
        i += cuda.gridsize(1)


@cuda.jit(device=True)
def _avg_div(oh, ow, pp, include_pad, divisor):
    """The divisor of window (oh, ow): ``divisor`` if > 0, else its size clipped to the
    padded input (``include_pad``) or its number of real elements."""
    H, W, KH, KW, sh, sw, ph, pw = pp[1], pp[2], pp[5], pp[6], pp[7], pp[8], pp[9], pp[10]
    if divisor > 0:
        return divisor
    h0 = oh * sh - ph
    w0 = ow * sw - pw
    h1 = min(h0 + KH, H + ph)
    w1 = min(w0 + KW, W + pw)
    if include_pad:
        return (h1 - h0) * (w1 - w0)
    return (min(h1, H) - max(h0, 0)) * (min(w1, W) - max(w0, 0))


@cuda.jit
def _avgpool_k(x, out, pp, include_pad, divisor):
    """``out[p, oh, ow] = sum(window) / div``, one output per thread."""
    P, H, W, Ho, Wo, KH, KW = pp[0], pp[1], pp[2], pp[3], pp[4], pp[5], pp[6]
    sh, sw, ph, pw = pp[7], pp[8], pp[9], pp[10]
    i = cuda.grid(1)
    while i < P * Ho * Wo:
        ow = i % Wo
        oh = (i // Wo) % Ho
        p = i // (Wo * Ho)
        h0 = oh * sh - ph
        w0 = ow * sw - pw
        s = 0.0
        for ih in range(max(h0, 0), min(h0 + KH, H)):
            for iw in range(max(w0, 0), min(w0 + KW, W)):
                s += x[p * H * W + ih * W + iw]
        out[i] = s / _avg_div(oh, ow, pp, include_pad, divisor)
        i += cuda.gridsize(1)


@cuda.jit
def _avgpool_bwd_k(g, gx, pp, include_pad, divisor):
    """``gx[p, ih, iw] = sum g[p, oh, ow] / div`` over the windows holding (ih, iw): one input
    element per thread (a gather: no atomics)."""
    P, H, W, Ho, Wo, KH, KW = pp[0], pp[1], pp[2], pp[3], pp[4], pp[5], pp[6]
    sh, sw, ph, pw = pp[7], pp[8], pp[9], pp[10]
    i = cuda.grid(1)
    while i < P * H * W:
        iw = i % W
        ih = (i // W) % H
        p = i // (W * H)
        # windows oh with oh*sh - ph <= ih < oh*sh - ph + KH
        oh0 = max(0, (ih + ph - KH + sh) // sh)
        oh1 = min(Ho - 1, (ih + ph) // sh)
        ow0 = max(0, (iw + pw - KW + sw) // sw)
        ow1 = min(Wo - 1, (iw + pw) // sw)
        s = 0.0
        for oh in range(oh0, oh1 + 1):
            for ow in range(ow0, ow1 + 1):
                s += g[(p * Ho + oh) * Wo + ow] / _avg_div(oh, ow, pp, include_pad, divisor)
        gx[i] = s
        i += cuda.gridsize(1)


def _pool_geo(P, H, W, k, s, p, d, ceil_mode):
    Ho = pool_out_size(H, k[0], s[0], p[0], d[0], ceil_mode)
    Wo = pool_out_size(W, k[1], s[1], p[1], d[1], ceil_mode)
    return (P, H, W, Ho, Wo, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1])


def maxpool_forward(x3, k, s, p, d, ceil_mode):
    """Values and flat in-plane argmax indices (int64) of max pooling over (P, H, W)."""
    pp = _pool_geo(*x3.shape, k, s, p, d, ceil_mode)
    out = dc.empty((pp[0], pp[3], pp[4]), x3.dtype, x3.index)
    idx = dc.empty(out.shape, np.int64, x3.index)
    launch(_maxpool_k, out.size, flat(x3), out.buffer, idx.buffer, pp)
    return out, idx


def maxpool_backward(g3, idx3, in_shape):
    """``gx`` (P, H, W): each output's gradient added at its argmax."""
    P, H, W = in_shape
    gx = dc.zeros((P, H, W), g3.dtype, g3.index)
    HWo = g3.shape[1] * g3.shape[2]
    if P:
        launch(_maxpool_bwd_k, g3.size, flat(g3), flat(idx3), gx.buffer, H * W, HWo, g3.size)
    return gx


def maxpool_gather(gg3, idx3):
    """``out[p, o] = gg[p, idx[p, o]]`` for (P, H, W) ``gg`` and (P, Ho, Wo) ``idx``."""
    out = dc.empty(idx3.shape, gg3.dtype, gg3.index)
    launch(_gather_planes_k, out.size, flat(gg3), flat(idx3), out.buffer,
           gg3.shape[1] * gg3.shape[2], idx3.shape[1] * idx3.shape[2], out.size)
    return out


def avgpool(x3, k, s, p, ceil_mode, include_pad, divisor, in_hw=None):
    """Average pooling (P, H, W) -> (P, Ho, Wo); with ``in_hw`` the backward (P, Ho, Wo)
    gradients -> (P, H, W)."""
    P = x3.shape[0]
    H, W = in_hw if in_hw is not None else x3.shape[1:]
    pp = _pool_geo(P, H, W, k, s, p, (1, 1), ceil_mode)
    if in_hw is None:
        out = dc.empty((P, pp[3], pp[4]), x3.dtype, x3.index)
        launch(_avgpool_k, out.size, flat(x3), out.buffer, pp, bool(include_pad), int(divisor))
    else:
        out = dc.empty((P, H, W), x3.dtype, x3.index)
        launch(_avgpool_bwd_k, out.size, flat(x3), out.buffer, pp, bool(include_pad),
               int(divisor))
    return out
