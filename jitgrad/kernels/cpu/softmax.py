"""Softmax, log-softmax and logsumexp along one axis: the same Numba kernels for all three (one
per layout of the slices: ``KERNELS``), called by eager code and by compiled programs (Note
[native segments] in ``compile/native.py``) alike.

The input is a flat C-contiguous array seen as ``(outer, r, inner)``: the slices run along the
middle axis. Per slice ``x_i``, ``i < r``:

    m = max_i x_i                      (NaN-propagating)
    s = sum_i exp(x_i - m)             (accumulated in float64)
    logsumexp = m + log(s)             (m itself where m is +-inf or NaN)
    softmax_i = exp(x_i - m) / s
    log_softmax_i = (x_i - m) - log(s)

so the largest exponent is 0 and nothing overflows. A slice holding +inf gives NaN softmax
(``inf - inf``), as PyTorch's; an all -inf slice gives NaN softmax and -inf logsumexp.

Note [short slices]: a loop over a slice of three elements (a mixture of three components, a
softmax over four classes) runs three scalar ``exp`` calls per slice and never vectorises. When
``inner == 1`` and the slices are short, a block of slices is copied transposed, so the loops
run ACROSS slices (``n`` contiguous lanes per slice position), as they do for ``inner > 1``.
Long contiguous slices run along the slice, with lane accumulators (``_L`` independent partial
sums and maxima, combined in a fixed order) so the serial and the parallel copies give the
same bits. No fast-math reassociation: with ``reassoc`` LLVM vectorised a sum of exp terms
differently in the serial and the parallel copy (the order of the adds is its choice), and
logsumexp gave 1-ulp different bits with 1 and 2 threads (11 of 400 rows of a (400, 300) float64
input); strict order costs nothing measurable, exp dominates the loop.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ... import _config
from ..rebind import bind
from . import vmath
from .kernel_cache import njit as cached_njit

LOGSUMEXP, SOFTMAX, LOG_SOFTMAX = 0, 1, 2
_ROW_MIN = 32        # inner == 1: slices at least this long run along the slice (Note [short slices])
_BLK = 256           # inner == 1, short slices: slices per transposed block (one work item)
_CW = 1024           # inner > 1: columns per work item
_L = 8               # lanes of the long-slice sums and maxima
PAR_MIN_SIZE = 1 << 14   # elements: exp per element, so parallel pays off early (as logsumexp did)

if _config.FAST_MATH:
    _exp, _log = vmath.exp, vmath.log
else:
    _exp, _log = math.exp, math.log


def _pick(v, m):
    """v if v beats m or v is NaN, else m: a NaN-sticky running maximum."""
    return v if (v > m or v != v) else m


def _finish(m, ls):
    """logsumexp from m and ls = log(s): m + ls, or m where m is not finite (NaN, or +-inf:
    s is then NaN or 1)."""
    return m + ls if (m - m) == 0 else m


def _cols(x, base, stride, r, n, mode, out, obase, ostride, m, s, e):
    """The slices x[base + i*stride + j], i < r, for j < n (r >= 1): m[j], s[j], then the
    result of ``mode`` into out (position i of column j at ``obase + i*ostride + j``;
    logsumexp at ``obase + j``). ``e``: n scratch elements. One exp per element."""
    first = x[base:base + n]
    for j in range(n):
        m[j] = first[j]
        s[j] = 0.0
    for i in range(1, r):
        row = x[base + i * stride:base + i * stride + n]
        for j in range(n):
            m[j] = _pick(row[j], m[j])
    for i in range(r):
        row = x[base + i * stride:base + i * stride + n]
        for j in range(n):
            e[j] = _exp(row[j] - m[j])
            s[j] += e[j]
        if mode == SOFTMAX:  # the exponentials, divided by s below
            res = out[obase + i * ostride:obase + i * ostride + n]
            for j in range(n):
                res[j] = e[j]
    if mode == SOFTMAX:
        for i in range(r):
            res = out[obase + i * ostride:obase + i * ostride + n]
            for j in range(n):
                res[j] = res[j] / s[j]
        return
    for j in range(n):
        s[j] = _log(s[j])  # from here on s holds log(s)
    if mode == LOGSUMEXP:
        res = out[obase:obase + n]
        for j in range(n):
            res[j] = _finish(m[j], s[j])
        return
    for i in range(r):
        res = out[obase + i * ostride:obase + i * ostride + n]
        row = x[base + i * stride:base + i * stride + n]
        for j in range(n):
            res[j] = (row[j] - m[j]) - s[j]


def _row(x, base, r, mode, out, lanes_m, lanes_s, e):
    """One contiguous slice x[base:base + r] (r >= _L), lane by lane; ``e``: r scratch
    elements. One exp per element."""
    xs = x[base:base + r]
    full = r - r % _L
    for k in range(_L):
        lanes_m[k] = xs[k]
    for i0 in range(_L, full, _L):
        for k in range(_L):
            lanes_m[k] = _pick(xs[i0 + k], lanes_m[k])
    m = lanes_m[0]
    for k in range(1, _L):
        m = _pick(lanes_m[k], m)
    for i in range(full, r):
        m = _pick(xs[i], m)
    for i in range(r):
        e[i] = _exp(xs[i] - m)
    for k in range(_L):
        lanes_s[k] = 0.0
    for i0 in range(0, full, _L):
        for k in range(_L):
            lanes_s[k] += e[i0 + k]
    s = 0.0
    for k in range(_L):
        s += lanes_s[k]
    for i in range(full, r):
        s += e[i]
    if mode == SOFTMAX:
        res = out[base:base + r]
        for i in range(r):
            res[i] = e[i] / s
        return
    ls = _log(s)
    if mode == LOGSUMEXP:
        out[base // r] = _finish(m, ls)
        return
    res = out[base:base + r]
    for i in range(r):
        res[i] = (xs[i] - m) - ls


def _short_block(x, o0, n, r, mode, out):
    """Slices o0 .. o0+n-1 (inner == 1, r < _ROW_MIN), through a transposed copy: the loops
    run across the n slices (Note [short slices])."""
    block = np.empty(r * n, x.dtype)  # block[i*n + k] = slice o0 + k, position i
    for k in range(n):
        src = x[(o0 + k) * r:(o0 + k) * r + r]
        for i in range(r):
            block[i * n + k] = src[i]
    m = np.empty(n, x.dtype)
    s = np.empty(n, np.float64)
    e = np.empty(n, x.dtype)
    # (a bare 0 is typed as a literal, and each call's pattern of literals compiled _cols anew:
    # 1.2 s each, cold)
    zero = np.int64(0)
    if mode == LOGSUMEXP:
        _cols(block, zero, n, r, n, mode, out, o0, zero, m, s, e)
        return
    res = np.empty(r * n, out.dtype)
    _cols(block, zero, n, r, n, mode, res, zero, n, m, s, e)
    for k in range(n):
        dst = out[(o0 + k) * r:(o0 + k) * r + r]
        for i in range(r):
            dst[i] = res[i * n + k]


def _long_block(x, o0, n, r, mode, out):
    """Slices o0 .. o0+n-1 (inner == 1, r >= _ROW_MIN), each along itself."""
    lanes_m = np.empty(_L, x.dtype)
    lanes_s = np.empty(_L, np.float64)
    e = np.empty(r, x.dtype)
    for k in range(n):
        _row(x, (o0 + k) * r, r, mode, out, lanes_m, lanes_s, e)


def _column_chunk(x, o, j0, n, r, inner, mode, out):
    """Columns j0 .. j0+n-1 of slab o (inner > 1)."""
    base = o * r * inner + j0
    obase = o * inner + j0 if mode == LOGSUMEXP else base
    _cols(x, base, inner, r, n, mode, out, obase, inner, np.empty(n, x.dtype),
          np.empty(n, np.float64), np.empty(n, x.dtype))


def _short_slices(x, outer, r, inner, mode, out):
    """inner == 1, r < _ROW_MIN: a work item is a block of _BLK slices, transposed."""
    for t in prange((outer + _BLK - 1) // _BLK):
        _short_block(x, t * _BLK, min(_BLK, outer - t * _BLK), r, mode, out)


def _long_slices(x, outer, r, inner, mode, out):
    """inner == 1, r >= _ROW_MIN: a work item is a block of _BLK slices, each along itself."""
    for t in prange((outer + _BLK - 1) // _BLK):
        _long_block(x, t * _BLK, min(_BLK, outer - t * _BLK), r, mode, out)


def _column_slices(x, outer, r, inner, mode, out):
    """inner > 1: a work item is a chunk of _CW columns of one slab."""
    nc = (inner + _CW - 1) // _CW
    for t in prange(outer * nc):
        o = t // nc
        j0 = (t - o * nc) * _CW
        _column_chunk(x, o, j0, min(_CW, inner - j0), r, inner, mode, out)


_ENV = dict(_exp=_exp, _log=_log, _pick=_pick, LOGSUMEXP=LOGSUMEXP, SOFTMAX=SOFTMAX,
            LOG_SOFTMAX=LOG_SOFTMAX, _ROW_MIN=_ROW_MIN, _BLK=_BLK, _CW=_CW, _L=_L)


def _compiled(f, inline: bool):
    options = {"inline": "always"} if inline else {"nogil": True, "error_model": "numpy"}
    return njit(**options)(bind(f, "_softmax" + f.__name__, **_ENV))


# helpers first, each bound with the ones before it (the order of calls). The block helpers are
# functions of their own, not inlined: inlined, the parallel copy took 12.5 s to compile (3.1 s
# like this) and ran no faster on long slices (2026-12-07)
for _helper, _inline in ((_pick, True), (_finish, True), (_cols, False), (_row, False),
                         (_short_block, False), (_long_block, False), (_column_chunk, False)):
    _ENV[_helper.__name__] = _compiled(_helper, _inline)

#: per layout (``layout``), the (serial, parallel) kernel, each ``(x, outer, r, inner, mode, out)``
#: with x and out flat: one layout's code compiles only when it is used (each takes seconds)
KERNELS = {
    name: tuple(cached_njit(nogil=True, error_model="numpy", parallel=par)(
        bind(body, f"_softmax{body.__name__}_{'par' if par else 'ser'}", **_ENV))
        for par in (False, True))
    for name, body in (("short", _short_slices), ("long", _long_slices),
                       ("columns", _column_slices))}


def layout(r: int, inner: int) -> str:
    """Which kernel of ``KERNELS`` runs slices of length ``r`` spaced ``inner`` apart."""
    return "columns" if inner > 1 else "long" if r >= _ROW_MIN else "short"


def slices(x3: np.ndarray, mode: int) -> np.ndarray:
    """``mode`` (``LOGSUMEXP``, ``SOFTMAX``, ``LOG_SOFTMAX``) along axis 1 of the float32 or
    float64 array ``x3`` of shape (outer, r, inner), r >= 1: a fresh (outer, inner) array for
    logsumexp, (outer, r, inner) otherwise, in x3's dtype."""
    outer, r, inner = x3.shape
    x = np.ascontiguousarray(x3).reshape(-1)
    out = np.empty((outer, inner) if mode == LOGSUMEXP else (outer, r, inner), x3.dtype)
    if out.size:
        parallel = x.size >= PAR_MIN_SIZE and _config.parallel_kernels()
        KERNELS[layout(r, inner)][parallel](x, outer, r, inner, mode, out.reshape(-1))
    return out


# for generated code (Note [native segments] in compile/native.py): the serial kernels by name
SERIAL_SHORT, SERIAL_LONG, SERIAL_COLUMNS = (KERNELS[k][0] for k in ("short", "long", "columns"))
