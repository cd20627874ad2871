"""CUDA kernels for the neural-network layers: softmax, addmm, convolution and pooling (the
twin of ``kernels.cpu.nn``; normalisation, embedding and the losses are in ``cuda/nn_norm.py``).

Conventions (the brief every CUDA kernel module follows):

* Host functions take :class:`kernels.cuda.backend.CudaArray` operands, make them contiguous on the
  device when they are not (a copy kernel, never a host round trip), and hand the kernels flat
  1-D buffers plus sizes as ints or tuples of ints.
* Element-parallel kernels are grid-stride loops launched with ``kernels.cuda.backend._launch_config``.
* Reductions (a softmax row, a weight-gradient entry) are one block each: every thread folds a
  strided share of the elements, then a shared-memory tree (``block_sum`` / ``block_max``) of
  ``BLOCK`` lanes combines them. The order is fixed, so results do not depend on timing.
* Sums accumulate in float64 (more accurate than the CPU's float32 sums; the op tests compare
  within a few ulp). ``addmm`` runs ``cuda_linalg``'s tiled GEMM, which accumulates in the
  operands' dtype, as BLAS.
* Scatter-adds (max-pool backward) use ``cuda.atomic.add``.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import cuda, float64

from . import backend as cuda_backend
from . import linalg as cuda_linalg
from ..cpu.nn import ConvGeom, pool_out_size

#: lanes of the shared-memory tree reductions (a power of two; one block per reduced row)
BLOCK = cuda_backend.THREADS_PER_BLOCK


# --- helpers ------------------------------------------------------------------------------------
def flat(a):
    """A contiguous 1-D device buffer holding ``a``'s elements in C order (a copy kernel first
    when ``a`` is a strided view)."""
    if not a.is_contiguous():
        a = a.copy()
    return a.buffer[a.offset:a.offset + a.size]


def dummy(dtype=np.float64, index: int = 0):
    """A 1-element device buffer standing in for an absent optional operand (flag says so)."""
    return cuda_backend.empty((1,), dtype, index).buffer


def launch(kern, n: int, *args) -> None:
    """``kern`` over ``n`` work items, grid-stride (``kernels.cuda.backend._launch_config``)."""
    if n > 0:
        blocks, threads = cuda_backend._launch_config(n)
        kern[blocks, threads](*args)


def launch_rows(kern, rows: int, *args) -> None:
    """``kern`` with one block of ``BLOCK`` threads per row (blocks stride over the rows)."""
    if rows > 0:
        kern[min(rows, cuda_backend.MAX_BLOCKS), BLOCK](*args)


block_sum = cuda_backend.block_sum  # (shared with the matmul kernels)


@cuda.jit(device=True)
def _max_nan(a, b):
    """The larger of ``a`` and ``b``, NaN when either is (as NumPy's max)."""
    if b > a or b != b:
        return b
    return a


#: the max of ``v`` over the block's threads (NaN wins, as NumPy's max)
block_max = cuda_backend.block_reduce(_max_nan, "block_max")


@cuda.jit(device=True)
def channel_pos(j, c, C, L):
    """The flat position of channel ``c``'s element ``j`` (of ``N * L``, C order over (n, l))
    in a C-order (N, C, L) array."""
    n = j // L
    return (n * C + c) * L + j - n * L


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
    out = cuda_backend.empty(src.shape, src.dtype, x.index)
    if src.size:
        shape = src.shape or (1,)
        d = dim if src.ndim else 0
        R, inner = shape[d], math.prod(shape[d + 1:])
        rows = math.prod(shape[:d]) * inner
        launch_rows(_softmax_k, rows, flat(src), out.buffer, R, inner, rows, bool(log))
    return out if out.dtype == x.dtype else out.astype(x.dtype)


# --- addmm: the tiled GEMM of cuda_linalg, with the bias added in its epilogue --------------------
def addmm(bias, m1, m2):
    """``bias + m1 @ m2`` (``bias`` broadcast to the result; any strides), computed in float32
    (float16, float32 operands) or float64 (the rest)."""
    dt = np.result_type(m1.dtype, m2.dtype)
    if dt.kind != "f" or dt == np.float16:
        dt = np.dtype(np.float64) if dt.kind != "f" else np.dtype(np.float32)
    m1 = m1 if m1.dtype == dt else m1.astype(dt)
    m2 = m2 if m2.dtype == dt else m2.astype(dt)
    has_bias = bias is not None and bias.size > 0
    shape = (m1.shape[0], m2.shape[1])
    return cuda_linalg.gemm(m1, m2, dt, bias.broadcast_to(shape) if has_bias else None)


# --- convolution: direct kernels ----------------------------------------------------------------
#: the conv kernels' geometry, packed into one tuple of ints (``geo_tuple``) and named again on
#: the device by ``conv_geometry``: cpu_nn.ConvGeom's fields, in this order
ConvGeometry = namedtuple("ConvGeometry", ConvGeom.__slots__)


def geo_tuple(geo) -> tuple:
    """``geo`` (a cpu_nn.ConvGeom) packed for a kernel: a plain tuple in ConvGeometry's order."""
    return tuple(getattr(geo, name) for name in ConvGeometry._fields)


@cuda.jit(device=True)
def conv_geometry(gp):
    """The packed geometry ``gp`` (``geo_tuple``) with its fields named: ``geo.N``, ``geo.KH``..."""
    return ConvGeometry(*gp)


@cuda.jit(device=True)
def unravel_nchw(i, C, H, W):
    """(n, c, h, w): the coordinates of flat index ``i`` in a C-order (N, C, H, W) array."""
    w = i % W
    r = i // W
    h = r % H
    r = r // H
    return r // C, r % C, h, w


@cuda.jit
def _conv_fwd_k(x, w, b, has_b, out, gp):
    """``out[n, co, oh, ow] = b[co] + sum_{ci, kh, kw} w[co, ci, kh, kw]
    x[n, grp*Cg + ci, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw]`` (zero outside), one output
    per thread (``gp``: the packed ``conv_geometry``)."""
    geo = conv_geometry(gp)
    Cg, Cog = geo.C // geo.G, geo.Co // geo.G  # channels per group: input, output
    i = cuda.grid(1)
    while i < geo.N * geo.Co * geo.Ho * geo.Wo:
        n, co, oh, ow = unravel_nchw(i, geo.Co, geo.Ho, geo.Wo)
        c0 = (co // Cog) * Cg
        acc = 0.0
        for ci in range(Cg):
            for kh in range(geo.KH):
                ih = oh * geo.sh - geo.ph + kh * geo.dh
                if ih >= 0 and ih < geo.H:
                    for kw in range(geo.KW):
                        iw = ow * geo.sw - geo.pw + kw * geo.dw
                        if iw >= 0 and iw < geo.W:
                            acc += (w[((co * Cg + ci) * geo.KH + kh) * geo.KW + kw]
                                    * x[((n * geo.C + c0 + ci) * geo.H + ih) * geo.W + iw])
        if has_b:
            acc += b[co]
        out[i] = acc
        i += cuda.gridsize(1)


@cuda.jit
def _conv_bx_k(g, w, gx, gp):
    """The adjoint in x: ``gx[n, c, ih, iw] = sum g[n, co, oh, ow] w[co, ci, kh, kw]`` over the
    ``(co, kh, kw)`` of c's group with ``ih = oh*sh - ph + kh*dh`` (same for w), one input
    element per thread (a gather: no atomics)."""
    geo = conv_geometry(gp)
    Cg, Cog = geo.C // geo.G, geo.Co // geo.G
    i = cuda.grid(1)
    while i < geo.N * geo.C * geo.H * geo.W:
        n, c, ih, iw = unravel_nchw(i, geo.C, geo.H, geo.W)
        grp = c // Cg
        ci = c - grp * Cg
        acc = 0.0
        for co in range(grp * Cog, (grp + 1) * Cog):
            for kh in range(geo.KH):
                th = ih + geo.ph - kh * geo.dh
                if th >= 0 and th % geo.sh == 0 and th // geo.sh < geo.Ho:
                    oh = th // geo.sh
                    for kw in range(geo.KW):
                        tw = iw + geo.pw - kw * geo.dw
                        if tw >= 0 and tw % geo.sw == 0 and tw // geo.sw < geo.Wo:
                            acc += (g[((n * geo.Co + co) * geo.Ho + oh) * geo.Wo + tw // geo.sw]
                                    * w[((co * Cg + ci) * geo.KH + kh) * geo.KW + kw])
        gx[i] = acc
        i += cuda.gridsize(1)


@cuda.jit
def _conv_bw_k(x, g, gw, gp):
    """``gw[co, ci, kh, kw] = sum_{n, oh, ow} g[n, co, oh, ow] x[n, grp*Cg + ci, ih, iw]``:
    one block per weight entry, a shared-memory tree over the ``N*Ho*Wo`` terms."""
    sm = cuda.shared.array(BLOCK, float64)
    geo = conv_geometry(gp)
    Cg, Cog = geo.C // geo.G, geo.Co // geo.G
    HWo = geo.Ho * geo.Wo
    tid = cuda.threadIdx.x
    e = cuda.blockIdx.x
    while e < geo.Co * Cg * geo.KH * geo.KW:
        kw = e % geo.KW
        r = e // geo.KW
        kh = r % geo.KH
        r = r // geo.KH
        ci = r % Cg
        co = r // Cg
        c = (co // Cog) * Cg + ci
        acc = 0.0
        j = tid
        while j < geo.N * HWo:
            ow = j % geo.Wo
            oh = (j // geo.Wo) % geo.Ho
            n = j // HWo
            ih = oh * geo.sh - geo.ph + kh * geo.dh
            iw = ow * geo.sw - geo.pw + kw * geo.dw
            if ih >= 0 and ih < geo.H and iw >= 0 and iw < geo.W:
                acc += (g[((n * geo.Co + co) * geo.Ho + oh) * geo.Wo + ow]
                        * x[((n * geo.C + c) * geo.H + ih) * geo.W + iw])
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
            acc += g[channel_pos(j, c, C, L)]
            j += BLOCK
        acc = block_sum(sm, acc)
        if tid == 0:
            out[c] = acc
        c += cuda.gridDim.x


def conv_forward(x, w, b, geo):
    """The convolution of (N, C, H, W) ``x`` with (Co, C/G, KH, KW) ``w`` (+ ``b``)."""
    out = cuda_backend.empty((geo.N, geo.Co, geo.Ho, geo.Wo), x.dtype, x.index)
    has_b = b.size > 0
    launch(_conv_fwd_k, out.size, flat(x), flat(w), flat(b) if has_b else dummy(x.dtype, x.index),
           has_b, out.buffer, geo_tuple(geo))
    return out


def conv_input_grad(g, w, geo):
    gx = cuda_backend.empty((geo.N, geo.C, geo.H, geo.W), g.dtype, g.index)
    launch(_conv_bx_k, gx.size, flat(g), flat(w), gx.buffer, geo_tuple(geo))
    return gx


def conv_weight_grad(x, g, geo):
    gw = cuda_backend.empty((geo.Co, geo.C // geo.G, geo.KH, geo.KW), x.dtype, x.index)
    launch_rows(_conv_bw_k, gw.size, flat(x), flat(g), gw.buffer, geo_tuple(geo))
    return gw


def channel_sum(g):
    """``g`` (N, C, ...) summed over every dim but 1."""
    N, C = g.shape[0], g.shape[1]
    out = cuda_backend.empty((C,), g.dtype, g.index)
    launch_rows(_channel_sum_k, C, flat(g), out.buffer, N, C, math.prod(g.shape[2:]))
    return out


# --- pooling --------------------------------------------------------------------------------------
#: the pooling kernels' geometry: planes, input and output sizes, window, stride, padding and
#: dilation; packed into a tuple of ints by ``_pool_geo``, named on the device by ``pool_geometry``
PoolGeometry = namedtuple("PoolGeometry", "P H W Ho Wo KH KW sh sw ph pw dh dw")


@cuda.jit(device=True)
def pool_geometry(pp):
    """The packed pooling geometry ``pp`` with its fields named (``PoolGeometry``)."""
    return PoolGeometry(*pp)


@cuda.jit
def _maxpool_k(x, out, idx, pp):
    """``out[p, oh, ow] = max`` over the dilated window (padding excluded; NaN wins) and
    ``idx`` its flat in-plane position, one output per thread."""
    geo = pool_geometry(pp)
    i = cuda.grid(1)
    while i < geo.P * geo.Ho * geo.Wo:
        ow = i % geo.Wo
        oh = (i // geo.Wo) % geo.Ho
        p = i // (geo.Wo * geo.Ho)
        best = -math.inf
        bi = -1
        for kh in range(geo.KH):
            ih = oh * geo.sh - geo.ph + kh * geo.dh
            if ih >= 0 and ih < geo.H:
                for kw in range(geo.KW):
                    iw = ow * geo.sw - geo.pw + kw * geo.dw
                    if iw >= 0 and iw < geo.W:
                        v = x[p * geo.H * geo.W + ih * geo.W + iw]
                        if v > best or v != v or bi < 0:
                            best = v
                            bi = ih * geo.W + iw
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
def _avg_div(oh, ow, geo, include_pad, divisor):
    """The divisor of window (oh, ow) (``geo``: the named ``pool_geometry``): ``divisor`` if
    > 0, else its size clipped to the padded input (``include_pad``) or its number of real
    elements."""
    if divisor > 0:
        return divisor
    h0 = oh * geo.sh - geo.ph
    w0 = ow * geo.sw - geo.pw
    h1 = min(h0 + geo.KH, geo.H + geo.ph)
    w1 = min(w0 + geo.KW, geo.W + geo.pw)
    if include_pad:
        return (h1 - h0) * (w1 - w0)
    return (min(h1, geo.H) - max(h0, 0)) * (min(w1, geo.W) - max(w0, 0))


@cuda.jit
def _avgpool_k(x, out, pp, include_pad, divisor):
    """``out[p, oh, ow] = sum(window) / div``, one output per thread."""
    geo = pool_geometry(pp)
    i = cuda.grid(1)
    while i < geo.P * geo.Ho * geo.Wo:
        ow = i % geo.Wo
        oh = (i // geo.Wo) % geo.Ho
        p = i // (geo.Wo * geo.Ho)
        h0 = oh * geo.sh - geo.ph
        w0 = ow * geo.sw - geo.pw
        s = 0.0
        for ih in range(max(h0, 0), min(h0 + geo.KH, geo.H)):
            for iw in range(max(w0, 0), min(w0 + geo.KW, geo.W)):
                s += x[p * geo.H * geo.W + ih * geo.W + iw]
        out[i] = s / _avg_div(oh, ow, geo, include_pad, divisor)
        i += cuda.gridsize(1)


@cuda.jit
def _avgpool_bwd_k(g, gx, pp, include_pad, divisor):
    """``gx[p, ih, iw] = sum g[p, oh, ow] / div`` over the windows holding (ih, iw): one input
    element per thread (a gather: no atomics)."""
    geo = pool_geometry(pp)
    sh, sw, ph, pw = geo.sh, geo.sw, geo.ph, geo.pw
    i = cuda.grid(1)
    while i < geo.P * geo.H * geo.W:
        iw = i % geo.W
        ih = (i // geo.W) % geo.H
        p = i // (geo.W * geo.H)
        # windows oh with oh*sh - ph <= ih < oh*sh - ph + KH
        oh0 = max(0, (ih + ph - geo.KH + sh) // sh)
        oh1 = min(geo.Ho - 1, (ih + ph) // sh)
        ow0 = max(0, (iw + pw - geo.KW + sw) // sw)
        ow1 = min(geo.Wo - 1, (iw + pw) // sw)
        s = 0.0
        for oh in range(oh0, oh1 + 1):
            for ow in range(ow0, ow1 + 1):
                s += g[(p * geo.Ho + oh) * geo.Wo + ow] / _avg_div(oh, ow, geo, include_pad,
                                                                   divisor)
        gx[i] = s
        i += cuda.gridsize(1)


def _pool_geo(P, H, W, k, s, p, d, ceil_mode) -> PoolGeometry:
    Ho = pool_out_size(H, k[0], s[0], p[0], d[0], ceil_mode)
    Wo = pool_out_size(W, k[1], s[1], p[1], d[1], ceil_mode)
    return PoolGeometry(P, H, W, Ho, Wo, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1])


def maxpool_forward(x3, k, s, p, d, ceil_mode):
    """Values and flat in-plane argmax indices (int64) of max pooling over (P, H, W)."""
    geo = _pool_geo(*x3.shape, k, s, p, d, ceil_mode)
    out = cuda_backend.empty((geo.P, geo.Ho, geo.Wo), x3.dtype, x3.index)
    idx = cuda_backend.empty(out.shape, np.int64, x3.index)
    launch(_maxpool_k, out.size, flat(x3), out.buffer, idx.buffer, tuple(geo))
    return out, idx


def maxpool_backward(g3, idx3, in_shape):
    """``gx`` (P, H, W): each output's gradient added at its argmax."""
    P, H, W = in_shape
    gx = cuda_backend.zeros((P, H, W), g3.dtype, g3.index)
    HWo = g3.shape[1] * g3.shape[2]
    if P:
        launch(_maxpool_bwd_k, g3.size, flat(g3), flat(idx3), gx.buffer, H * W, HWo, g3.size)
    return gx


def maxpool_gather(gg3, idx3):
    """``out[p, o] = gg[p, idx[p, o]]`` for (P, H, W) ``gg`` and (P, Ho, Wo) ``idx``."""
    out = cuda_backend.empty(idx3.shape, gg3.dtype, gg3.index)
    launch(_gather_planes_k, out.size, flat(gg3), flat(idx3), out.buffer,
           gg3.shape[1] * gg3.shape[2], idx3.shape[1] * idx3.shape[2], out.size)
    return out


def avgpool(x3, k, s, p, ceil_mode, include_pad, divisor, in_hw=None):
    """Average pooling (P, H, W) -> (P, Ho, Wo); with ``in_hw`` the backward (P, Ho, Wo)
    gradients -> (P, H, W)."""
    P = x3.shape[0]
    H, W = in_hw if in_hw is not None else x3.shape[1:]
    geo = _pool_geo(P, H, W, k, s, p, (1, 1), ceil_mode)
    if in_hw is None:
        out = cuda_backend.empty((P, geo.Ho, geo.Wo), x3.dtype, x3.index)
        launch(_avgpool_k, out.size, flat(x3), out.buffer, tuple(geo), bool(include_pad),
               int(divisor))
    else:
        out = cuda_backend.empty((P, H, W), x3.dtype, x3.index)
        launch(_avgpool_bwd_k, out.size, flat(x3), out.buffer, tuple(geo), bool(include_pad),
               int(divisor))
    return out
