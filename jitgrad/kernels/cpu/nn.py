"""Hand-written Numba kernels for the neural-network layers (convolution and pooling here; the
norms, NLL and embedding gradient in ``kernels/cpu/norm.py``; the optimizer updates in
``kernels/cpu/optim.py``), and the kernel builder they share.

Layout: every kernel takes flat 1-D C-contiguous arrays plus the sizes as ints (compile time
grows with ndim, DESIGN-NUMBA.md), and works on the natural NCHW / row-major order:

* convolution (2-D; 1-D is H == 1): direct kernels for the forward and the weight gradient of
  stride-1 convolutions with few taps ``C/groups * KH * KW``, else (and always for the input
  gradient) im2col + BLAS + col2im (Note [conv algorithm]);
* max / average pooling, forward and backward, one image plane per work item;
* (cpu_norm) batch norm (one channel per work item), layer norm (one row per work item, the
  weight and bias gradients as fixed row-block partial sums, so results do not depend on the
  threads); the NLL gather / scatter of cross-entropy, the embedding gradient;
* (cpu_optim) one fused update per optimizer over a flat parameter.

Each kernel body is one Python function compiled twice, serial and ``parallel=True`` (``prange``
is a plain ``range`` in the serial copy), lazily on first use, ``nogil=True``, disk-cached
(``kernel_cache.njit``). The parallel copy runs only above a size threshold and when
``_config.parallel_kernels()`` allows it (serial inside a busy threaded backward). Batch-norm
statistics and the conv weight gradient accumulate in float64; layer norm (row sums of at most
a few thousand elements) and the elementwise-style updates stay in the array dtype, with scalars
passed already cast to it (a Python float would turn float32 math into float64).
"""
from __future__ import annotations


import numpy as np
from numba import njit, prange

from . import pool
from .kernel_cache import njit as cached_njit  # the healing disk cache
from ..rebind import bind as _bind

try:  # serial kernels while several threads run backward work (the engine's policy)
    from ..._config import parallel_kernels
except ImportError:  # pragma: no cover - a core without the policy: honour NUM_THREADS only
    from ... import _config

    def parallel_kernels() -> bool:
        if _config.NUM_THREADS <= 1:
            return False
        import numba
        numba.set_num_threads(min(_config.NUM_THREADS, numba.config.NUMBA_NUM_THREADS))
        return True

# A parallel variant pays a thread-pool launch, so small calls run serially. The thresholds
# follow the core's crossovers (kernels/cpu/elementwise.py: memory-bound loops; compute-bound loops win
# earlier). The measurements: docs/cuda.md, "Measurements behind the device code".
PAR_MIN_WORK = 1 << 15      # conv / pool / norm: multiply-adds or elements per call
PAR_MIN_OPTIM = 1 << 16     # optimizer updates: parameter elements
_FM = {"reassoc", "contract", "arcp", "nsz"}   # vectorised sums, but isnan still works
_kernels: dict = {}


def _get(f, parallel: bool, fastmath: bool = False):
    key = (f, parallel)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = cached_njit(nogil=True, error_model="numpy", parallel=parallel,
                                        fastmath=_FM if fastmath else False)(
            _bind(f, f"{f.__name__}_{'par' if parallel else 'ser'}"))
    return k


def _par(work: int, items: int = 2, threshold: int = PAR_MIN_WORK) -> bool:
    return work >= threshold and items > 1 and parallel_kernels()


def _flat(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1)


def _valid(off, stride, n_in, n_out):
    """Output positions o in [o0, o1) whose input position o*stride + off lies in [0, n_in)."""
    o0 = 0 if off >= 0 else (-off + stride - 1) // stride
    o1 = 0 if n_in - 1 - off < 0 else min(n_out, (n_in - 1 - off) // stride + 1)
    return o0, max(o0, o1)


_valid_nb = njit(inline="always")(_valid)


# ---- convolution: direct kernels (stride 1) ------------------------------------------------
# Note [flat shifts]: with stride 1 the input is zero-padded to (Hp, Wp) planes and the output
# is computed "wide", Ho rows of Wp columns (the last Wp - Wo of each row are junk). Then every
# tap (kh, kw) is ONE contiguous multiply-add over L = (Ho - 1) * Wp + Wo elements:
# wide[i] += w * xpad[i + kh*dh*Wp + kw*dw], a long loop that vectorises. Valid outputs only
# read inside their own plane; the junk columns are dropped when copying out. The weight
# gradient is a dot product of the padded input plane with g laid out wide (zeros in the junk
# columns). (The input gradient as the transposed loop was slower than im2col: see
# conv_input_grad.)
# Note [slices]: inner loops run over slice views with range(0, n) (as in cpu_reduce): direct
# computed indices make Numba emit wraparound selects that stop LLVM from vectorising.
def _conv_fwd(xp, w, b, wide, out, N, C, Hp, Wp, Co, KH, KW, Ho, Wo, dh, dw, G):
    Cg = C // G
    Cog = Co // G
    P = Hp * Wp
    L = (Ho - 1) * Wp + Wo
    HWo = Ho * Wo
    for t in prange(N * Co):
        n = t // Co
        co = t - n * Co
        grp = co // Cog
        acc = wide[t * Ho * Wp:t * Ho * Wp + L]
        for i in range(L):
            acc[i] = 0
        for ci in range(Cg):
            xc = xp[(n * C + grp * Cg + ci) * P:(n * C + grp * Cg + ci + 1) * P]
            for kh in range(KH):
                for kw in range(KW):
                    wv = w[((co * Cg + ci) * KH + kh) * KW + kw]
                    off = kh * dh * Wp + kw * dw
                    xs = xc[off:off + L]
                    for i in range(L):
                        acc[i] += wv * xs[i]
        bias = b[co] if b.size > 0 else out.dtype.type(0)
        o = out[t * HWo:(t + 1) * HWo]
        for oh in range(Ho):
            src = acc[oh * Wp:oh * Wp + Wo]
            dst = o[oh * Wo:(oh + 1) * Wo]
            for j in range(Wo):
                dst[j] = src[j] + bias


def _conv_bw(xp, gw_, out, N, C, Hp, Wp, Co, KH, KW, Ho, Wo, dh, dw, G):
    Cg = C // G
    Cog = Co // G
    P = Hp * Wp
    L = (Ho - 1) * Wp + Wo
    for t in prange(Co * Cg):
        co = t // Cg
        ci = t - co * Cg
        c = (co // Cog) * Cg + ci
        acc = np.zeros(KH * KW)
        for n in range(N):  # image-major: both planes stay in L1 across the taps
            gs = gw_[(n * Co + co) * Ho * Wp:(n * Co + co) * Ho * Wp + L]
            xc = xp[(n * C + c) * P:(n * C + c + 1) * P]
            for kh in range(KH):
                for kw in range(KW):
                    off = kh * dh * Wp + kw * dw
                    xs = xc[off:off + L]
                    s = out.dtype.type(0)
                    for i in range(L):
                        s += gs[i] * xs[i]
                    acc[kh * KW + kw] += s
        for k in range(KH * KW):
            out[t * KH * KW + k] = acc[k]


# ---- convolution: im2col / col2im ---------------------------------------------------------
def _im2col(x, cols, n0, nb, C, H, W, KH, KW, Ho, Wo, sh, sw, ph, pw, dh, dw):
    """cols[(m, c, kh, kw), (oh, ow)] = x[n0 + m, c, ih, iw] (0 in the padding), m < nb."""
    HW = H * W
    HWo = Ho * Wo
    for t in prange(nb * C):
        xc = x[((n0 * C) + t) * HW:((n0 * C) + t + 1) * HW]
        for kh in range(KH):
            for kw in range(KW):
                row = cols[((t * KH + kh) * KW + kw) * HWo:((t * KH + kh) * KW + kw + 1) * HWo]
                off = kw * dw - pw
                ow0, ow1 = _valid_nb(off, sw, W, Wo)
                for oh in range(Ho):
                    r = row[oh * Wo:(oh + 1) * Wo]
                    ih = oh * sh - ph + kh * dh
                    if ih < 0 or ih >= H or ow1 <= ow0:
                        for j in range(Wo):
                            r[j] = 0
                        continue
                    for j in range(ow0):
                        r[j] = 0
                    xs = xc[ih * W + ow0 * sw + off:ih * W + (ow1 - 1) * sw + off + 1]
                    rs = r[ow0:ow1]
                    for j in range(ow1 - ow0):
                        rs[j] = xs[j * sw]
                    for j in range(ow1, Wo):
                        r[j] = 0


def _col2im(cols, gx, n0, nb, C, H, W, KH, KW, Ho, Wo, sh, sw, ph, pw, dh, dw):
    """gx[n0 + m, c] = sum of the columns that read it (the adjoint of _im2col)."""
    HW = H * W
    HWo = Ho * Wo
    for t in prange(nb * C):
        gxp = gx[((n0 * C) + t) * HW:((n0 * C) + t + 1) * HW]
        for i in range(HW):
            gxp[i] = 0
        for kh in range(KH):
            for kw in range(KW):
                row = cols[((t * KH + kh) * KW + kw) * HWo:((t * KH + kh) * KW + kw + 1) * HWo]
                off = kw * dw - pw
                ow0, ow1 = _valid_nb(off, sw, W, Wo)
                if ow1 <= ow0:
                    continue
                for oh in range(Ho):
                    ih = oh * sh - ph + kh * dh
                    if ih < 0 or ih >= H:
                        continue
                    rs = row[oh * Wo + ow0:oh * Wo + ow1]
                    xs = gxp[ih * W + ow0 * sw + off:ih * W + (ow1 - 1) * sw + off + 1]
                    for j in range(ow1 - ow0):
                        xs[j * sw] += rs[j]


# Note [conv algorithm]: the direct kernels (Note [flat shifts]) do C/groups*KH*KW passes over
# each output plane; im2col turns the product into BLAS calls but materialises C*KH*KW x Ho*Wo
# columns per image. Direct was as fast at few taps and avoids the column buffer; im2col won at
# many (docs/cuda.md, 'Measurements behind the device code'). So direct up to 18 taps, im2col
# above; strided convolutions always use im2col.
DIRECT_MAX_TAPS = 18
_IM2COL_CHUNK = 1 << 22  # column elements per batch chunk (bounds the temporary)


class ConvGeom:
    """Sizes of a 2-D convolution (1-D is H == KH == 1), shared by the three kernels."""

    __slots__ = ("N", "C", "H", "W", "Co", "KH", "KW", "Ho", "Wo", "sh", "sw", "ph", "pw",
                 "dh", "dw", "G")

    def __init__(self, xshape, wshape, stride, padding, dilation, groups):
        self.N, self.C, self.H, self.W = xshape
        self.Co, _, self.KH, self.KW = wshape
        (self.sh, self.sw), (self.ph, self.pw) = stride, padding
        (self.dh, self.dw), self.G = dilation, groups
        self.Ho = (self.H + 2 * self.ph - self.dh * (self.KH - 1) - 1) // self.sh + 1
        self.Wo = (self.W + 2 * self.pw - self.dw * (self.KW - 1) - 1) // self.sw + 1

    @property
    def taps(self) -> int:
        return self.C // self.G * self.KH * self.KW

    @property
    def direct(self) -> bool:
        return self.sh == 1 and self.sw == 1 and self.taps <= DIRECT_MAX_TAPS

    @property
    def macs(self) -> int:
        return self.N * self.Co * self.taps * self.Ho * self.Wo

    def flat_args(self):
        Hp, Wp = self.H + 2 * self.ph, self.W + 2 * self.pw
        return (self.N, self.C, Hp, Wp, self.Co, self.KH, self.KW, self.Ho, self.Wo, self.dh,
                self.dw, self.G)

    def padded(self, x):
        """x zero-padded to (N*C*Hp*Wp,) (x itself, flattened, without padding)."""
        if self.ph == 0 and self.pw == 0:
            return _flat(x)
        xp = pool.empty((self.N, self.C, self.H + 2 * self.ph, self.W + 2 * self.pw), x.dtype)
        xp[:, :, :self.ph] = 0
        xp[:, :, self.ph + self.H:] = 0
        xp[:, :, self.ph:self.ph + self.H, :self.pw] = 0
        xp[:, :, self.ph:self.ph + self.H, self.pw + self.W:] = 0
        # (a 1-d convolution's x is (N, C, W): viewed with its unit H)
        xp[:, :, self.ph:self.ph + self.H, self.pw:self.pw + self.W] = x.reshape(
            self.N, self.C, self.H, self.W)
        return xp.reshape(-1)

    def wide(self, g):
        """g (N, Co, Ho, Wo) laid out in rows of Wp with zeros in the junk columns."""
        Wp = self.W + 2 * self.pw
        if Wp == self.Wo:
            return _flat(g)
        gw = pool.empty((self.N, self.Co, self.Ho, Wp), g.dtype)
        gw[..., self.Wo:] = 0
        gw[..., :self.Wo] = g.reshape(self.N, self.Co, self.Ho, self.Wo)  # (1-d: unit Ho)
        return gw.reshape(-1)

    def col_args(self):
        return (self.C, self.H, self.W, self.KH, self.KW, self.Ho, self.Wo, self.sh, self.sw,
                self.ph, self.pw, self.dh, self.dw)

    def chunks(self):
        per = max(1, _IM2COL_CHUNK // max(1, self.C * self.KH * self.KW * self.Ho * self.Wo))
        for n0 in range(0, self.N, per):
            yield n0, min(per, self.N - n0)

    def cols(self, xf, n0, nb, dtype):
        cols = pool.empty((nb, self.C * self.KH * self.KW, self.Ho * self.Wo), dtype)
        _get(_im2col, _par(cols.size, nb * self.C))(xf, cols.reshape(-1), n0, nb,
                                                     *self.col_args())
        return cols


def conv_forward(x, w, b, geo: ConvGeom):
    """out[n, co] = b[co] + sum_{ci, kh, kw} w[co, ci, kh, kw] x[n, g*Cg + ci, ih, iw]."""
    out = pool.empty((geo.N, geo.Co, geo.Ho, geo.Wo), x.dtype)
    if out.size == 0:
        return out
    if geo.direct:
        wide = pool.empty(geo.N * geo.Co * geo.Ho * (geo.W + 2 * geo.pw), x.dtype)
        _get(_conv_fwd, _par(geo.macs, geo.N * geo.Co))(
            geo.padded(x), _flat(w), _flat(b), wide, out.reshape(-1), *geo.flat_args())
        return out
    G, K, L = geo.G, geo.taps, geo.Ho * geo.Wo
    Cog = geo.Co // G
    w2 = np.ascontiguousarray(w).reshape(geo.Co, K)
    xf = _flat(x)
    for n0, nb in geo.chunks():
        cols = geo.cols(xf, n0, nb, x.dtype)
        for g in range(G):
            np.matmul(w2[g * Cog:(g + 1) * Cog], cols[:, g * K:(g + 1) * K],
                      out=out[n0:n0 + nb, g * Cog:(g + 1) * Cog].reshape(nb, Cog, L))
    if b.size:
        out += b.reshape(1, -1, 1, 1)
    return out


def conv_input_grad(g, w, geo: ConvGeom):
    """The adjoint of ``conv_forward`` in x: gx = conv_transpose(g, w), as one GEMM per image
    and group (w^T g: the columns) and col2im. Always this way: even at 9 taps it beat the
    direct kernel (the measurement: docs/cuda.md)."""
    gx = pool.empty((geo.N, geo.C, geo.H, geo.W), g.dtype)
    if gx.size == 0:
        return gx
    if g.size == 0:
        gx[...] = 0
        return gx
    G, K, L = geo.G, geo.taps, geo.Ho * geo.Wo
    Cog = geo.Co // G
    w2 = np.ascontiguousarray(w).reshape(geo.Co, K)
    g3 = np.ascontiguousarray(g).reshape(geo.N, geo.Co, L)
    for n0, nb in geo.chunks():
        cols = pool.empty((nb, G * K, L), g.dtype)
        for gr in range(G):
            np.matmul(w2[gr * Cog:(gr + 1) * Cog].T, g3[n0:n0 + nb, gr * Cog:(gr + 1) * Cog],
                      out=cols[:, gr * K:(gr + 1) * K])
        _get(_col2im, _par(cols.size, nb * geo.C))(cols.reshape(-1), gx.reshape(-1), n0, nb,
                                                   *geo.col_args())
    return gx


def conv_weight_grad(x, g, geo: ConvGeom):
    """gw[co, ci, kh, kw] = sum_{n, oh, ow} g[n, co, oh, ow] x[n, g*Cg + ci, ih, iw]."""
    wshape = (geo.Co, geo.C // geo.G, geo.KH, geo.KW)
    if x.size == 0 or g.size == 0:
        return np.zeros(wshape, x.dtype)
    if geo.direct:
        gw = pool.empty(wshape, x.dtype)
        _get(_conv_bw, _par(geo.macs, geo.Co * geo.C // geo.G), fastmath=True)(
            geo.padded(x), geo.wide(g), gw.reshape(-1), *geo.flat_args())
        return gw
    G, K, L = geo.G, geo.taps, geo.Ho * geo.Wo
    Cog = geo.Co // G
    gw = np.zeros((geo.Co, K), x.dtype)
    xf = _flat(x)
    g3 = np.ascontiguousarray(g).reshape(geo.N, geo.Co, L)
    for n0, nb in geo.chunks():
        cols = geo.cols(xf, n0, nb, x.dtype)
        # sum_n g[n] @ cols[n]^T as one GEMM over (n, l): (Co, nb*L) @ (nb*L, C*KH*KW)
        gm = np.ascontiguousarray(g3[n0:n0 + nb].transpose(1, 0, 2)).reshape(geo.Co, nb * L)
        cm = np.ascontiguousarray(cols.transpose(0, 2, 1)).reshape(nb * L, G * K)
        for gr in range(G):
            gw[gr * Cog:(gr + 1) * Cog] += gm[gr * Cog:(gr + 1) * Cog] @ cm[:, gr * K:(gr + 1) * K]
    return gw.reshape(wshape)


# ---- pooling ------------------------------------------------------------------------------
def pool_out_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length (a window may not start inside the right padding)."""
    eff = d * (k - 1) + 1
    num = n + 2 * p - eff + ((s - 1) if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return max(out, 0)


def _maxpool_fwd(x, out, idx, P, H, W, Ho, Wo, KH, KW, sh, sw, ph, pw, dh, dw):
    HW = H * W
    HWo = Ho * Wo
    neg_inf = x.dtype.type(-np.inf)
    for p in prange(P):
        xp = x[p * HW:(p + 1) * HW]
        op = out[p * HWo:(p + 1) * HWo]
        ip = idx[p * HWo:(p + 1) * HWo]
        for oh in range(Ho):
            for ow in range(Wo):
                best = neg_inf
                bi = -1
                for kh in range(KH):
                    ih = oh * sh - ph + kh * dh
                    if ih < 0 or ih >= H:
                        continue
                    for kw in range(KW):
                        iw = ow * sw - pw + kw * dw
                        if iw < 0 or iw >= W:
                            continue
                        v = xp[ih * W + iw]
                        if v > best or v != v or bi < 0:  # NaN wins, as PyTorch
                            best = v
                            bi = ih * W + iw
                op[oh * Wo + ow] = best
                ip[oh * Wo + ow] = bi


def _maxpool_fwd_inside(x, out, idx, P, H, W, Ho, Wo, KH, KW, sh, sw):
    """Every window inside the input, no dilation (the common case): no bounds checks, the
    first element seeds the max. The general loop's runtime dilation alone made it much slower
    (the measurement: docs/cuda.md)."""
    HW = H * W
    HWo = Ho * Wo
    for p in prange(P):
        xp = x[p * HW:(p + 1) * HW]
        op = out[p * HWo:(p + 1) * HWo]
        ip = idx[p * HWo:(p + 1) * HWo]
        for oh in range(Ho):
            for ow in range(Wo):
                b0 = oh * sh * W + ow * sw
                best = xp[b0]
                bi = b0
                for kh in range(KH):
                    r = b0 + kh * W
                    for kw in range(KW):
                        v = xp[r + kw]
                        if v > best or v != v:  # NaN wins, as PyTorch
                            best = v
                            bi = r + kw
                op[oh * Wo + ow] = best
                ip[oh * Wo + ow] = bi


def _maxpool_bwd(g, idx, gx, P, HW, HWo):
    for p in prange(P):
        gxp = gx[p * HW:(p + 1) * HW]
        gp = g[p * HWo:(p + 1) * HWo]
        ip = idx[p * HWo:(p + 1) * HWo]
        for i in range(HW):
            gxp[i] = 0
        for o in range(HWo):
            k = ip[o]
            if k >= 0:
                gxp[k] += gp[o]


def _avgpool(x, out, P, H, W, Ho, Wo, KH, KW, sh, sw, ph, pw, include_pad, divisor, backward):
    """Forward: out = window mean of x. Backward (x is g, out is gx): spread g / divisor."""
    HW = H * W
    HWo = Ho * Wo
    for p in prange(P):
        if backward:
            gp = x[p * HWo:(p + 1) * HWo]
            gxp = out[p * HW:(p + 1) * HW]
            for i in range(HW):
                gxp[i] = 0
        else:
            xp = x[p * HW:(p + 1) * HW]
            op = out[p * HWo:(p + 1) * HWo]
        for oh in range(Ho):
            h0 = oh * sh - ph
            h1 = min(h0 + KH, H + ph)
            for ow in range(Wo):
                w0 = ow * sw - pw
                w1 = min(w0 + KW, W + pw)
                size = (h1 - h0) * (w1 - w0)
                a0, a1 = max(h0, 0), min(h1, H)
                b0, b1 = max(w0, 0), min(w1, W)
                if divisor > 0:
                    div = divisor
                elif include_pad:
                    div = size
                else:
                    div = (a1 - a0) * (b1 - b0)
                if backward:
                    v = gp[oh * Wo + ow] / div
                    for ih in range(a0, a1):
                        r = gxp[ih * W + b0:ih * W + b1]
                        for j in range(b1 - b0):
                            r[j] += v
                else:
                    s = 0.0
                    for ih in range(a0, a1):
                        r = xp[ih * W + b0:ih * W + b1]
                        for j in range(b1 - b0):
                            s += r[j]
                    op[oh * Wo + ow] = s / div


def maxpool_forward(x, k, s, p, d, ceil_mode):
    """Values and flat in-plane argmax indices (int64) of max pooling over (N*C, H, W)."""
    P, H, W = x.shape
    Ho = pool_out_size(H, k[0], s[0], p[0], d[0], ceil_mode)
    Wo = pool_out_size(W, k[1], s[1], p[1], d[1], ceil_mode)
    out = pool.empty((P, Ho, Wo), x.dtype)
    idx = pool.empty((P, Ho, Wo), np.int64)
    if out.size:
        par = _par(out.size * k[0] * k[1], P)
        inside = (p == (0, 0) and d == (1, 1) and (Ho - 1) * s[0] + k[0] <= H
                  and (Wo - 1) * s[1] + k[1] <= W)
        if inside:
            _get(_maxpool_fwd_inside, par)(_flat(x), out.reshape(-1), idx.reshape(-1), P, H, W,
                                           Ho, Wo, k[0], k[1], s[0], s[1])
        else:
            _get(_maxpool_fwd, par)(_flat(x), out.reshape(-1), idx.reshape(-1), P, H, W, Ho, Wo,
                                    k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1])
    return out, idx


def maxpool_backward(g, idx, in_shape):
    """gx[p, idx[p, o]] += g[p, o] (windows may overlap)."""
    P, H, W = in_shape
    gx = pool.empty((P, H, W), g.dtype)
    if gx.size:
        _get(_maxpool_bwd, _par(gx.size + g.size, P))(
            _flat(g), _flat(idx), gx.reshape(-1), P, H * W, idx[0].size if P else 0)
    return gx


def avgpool(x, k, s, p, ceil_mode, include_pad, divisor, in_hw=None):
    """Average pooling of (P, H, W) -> (P, Ho, Wo); with ``in_hw`` the backward, (P, Ho, Wo)
    gradients -> (P, H, W)."""
    backward = in_hw is not None
    P = x.shape[0]
    H, W = in_hw if backward else x.shape[1:]
    Ho = pool_out_size(H, k[0], s[0], p[0], 1, ceil_mode)
    Wo = pool_out_size(W, k[1], s[1], p[1], 1, ceil_mode)
    out = pool.empty((P, H, W) if backward else (P, Ho, Wo), x.dtype)
    if out.size:
        _get(_avgpool, _par(P * Ho * Wo * k[0] * k[1], P))(
            _flat(x), out.reshape(-1), P, H, W, Ho, Wo, k[0], k[1], s[0], s[1], p[0], p[1],
            bool(include_pad), int(divisor or 0), backward)
    return out
