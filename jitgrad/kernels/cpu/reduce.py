"""Hand-written Numba reduction kernels over a canonical 3-D layout.

The caller reshapes any reduction into a C-contiguous ``x3`` of shape ``(outer, r, inner)``: the
reduced axis is the middle one, and every function returns fresh C-contiguous ``(outer, inner)``
arrays (``prod_others``: ``x3``'s shape). Writing ``x[o, i, j]`` for ``x3``:

* inner == 1: each output reduces one contiguous row ``x[o, :, 0]`` (a vectorised scalar loop);
* inner > 1: rows of length ``inner`` are accumulated into an ``(inner,)`` slice of the output,
  the inner loop runs over contiguous ``j`` (vectorised), never a strided loop over ``i``.

Summation is pairwise over fixed blocks (``_B`` contiguous elements, or ``_BR`` rows of ``inner``):
block sums go to a scratch array, then a fixed in-place binary tree adds them. The blocking never
depends on the thread count, so serial and parallel variants, and any ``numba.set_num_threads``,
give the same bits. float32 sums stay float32 (like NumPy/PyTorch) with NumPy-like accuracy.

Kernels are compiled lazily (first call) with ``nogil=True, error_model="numpy"`` and the disk
cache of ``kernel_cache.njit``.
Each kernel body is one Python function; ``_variants`` makes a serial ``njit`` and a
``parallel=True`` copy of it (``prange`` is a plain ``range`` when not parallel), binding the
combine op / element map as globals of the copy. No closures: Numba's on-disk cache keys a closure
by the pickled cell contents, which never match across processes. Each copy gets its own
``__qualname__``, because the cache index is keyed by qualname + line, not by ``parallel``.

Supported dtypes: float32, float64, int64, bool (other integer dtypes are converted to int64).
This module imports only NumPy and Numba (jitgrad._config sets the cache dir and threading layer).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import pool, softmax
from .kernel_cache import njit as cached_njit, read_only_inputs  # the healing disk cache
from ..rebind import bind as _bind
from ... import _config  # _config.parallel_kernels: the engine's kernel policy

# Parallel variants run only above a size threshold, and only when there is more than one work
# item. The thresholds are the measured crossovers of each kernel (docs/design.md, 'Measurements
# behind the code'). The memory-bound folds crossed at the same number of input bytes in float64
# and float32, so their threshold counts float64-sized elements (bytes / 8).
PARALLEL_MIN_SIZE = 1 << 18   # sum/prod/var (memory-bound): x.nbytes >= 8 * PARALLEL_MIN_SIZE
_PAR_MIN_ARG = 1 << 16        # max/min
_PAR_MIN_PO = 1 << 15         # prod_others, with several work items

_B = 1024    # contiguous elements per summation block (inner == 1)
_BR = 64     # rows per summation block (inner > 1)
_CW = 2048   # columns per work item (inner > 1)
_BA = 4096   # elements per max/min work item (inner == 1)
_L = 64      # independent lanes of the max/min value scan (inner == 1)
_FM = {"reassoc", "contract", "arcp", "nsz"}   # never full fastmath: it breaks isnan
_NOC = np.zeros(1)                              # dummy shift array for plain sum / prod


def _variants(f, tag, fastmath=False, **env):
    """(serial, parallel) lazily compiled dispatchers of ``f`` with ``env`` bound as globals."""
    return tuple(
        cached_njit(nogil=True, error_model="numpy", parallel=par, fastmath=fastmath)(
            _bind(f, f"{f.__name__}_{tag}_{'par' if par else 'ser'}", **env))
        for par in (False, True))


def _inline(f, name=None, **env):
    return njit(inline="always")(_bind(f, name or f.__name__, **env) if env else f)


# ---- combine ops and element maps (inlined into the kernels); a map sees (v, shift array, k) ----
_ADD = _inline(lambda a, b: a + b)
_MUL = _inline(lambda a, b: a * b)
_MAPS = {"id": _inline(lambda v, c, k: v),                          # v
         "sq": _inline(lambda v, c, k: (v - c[k]) * (v - c[k]))}    # (v - c[k])^2


def _tree(p, base, n, stride, j0, j1):
    """p[base + j] = op-tree of p[base + b*stride + j], b < n, j0 <= j < j1 (pairwise, fixed)."""
    step = 1
    while step < n:
        for b in range(0, n - step, 2 * step):
            lo = base + b * stride
            a = p[lo + j0:lo + j1]
            q = p[lo + step * stride + j0:lo + step * stride + j1]
            for j in range(a.size):
                a[j] = _op(a[j], q[j])
        step *= 2


# ---- kernel bodies (``_op``, ``_map``, ``_tree``, ``_better`` are bound per variant) ----
# Note [slices]: inner loops run over slice views with range(0, n). Indexing x[lo + i] directly
# makes Numba emit a negative-index wraparound select that LLVM cannot drop inside a parfor, and
# the loop no longer vectorises (the cost: docs/design.md, 'Measurements behind the code').
def _fold_rows(x, outer, r, c, ident, out):
    """inner == 1: out[o] = op_{i<r} map(x[o*r + i], c, o), pairwise over blocks of _B."""
    nb = max(1, (r + _B - 1) // _B)
    part = out if nb == 1 else np.empty(outer * nb, out.dtype)
    for t in prange(outer * nb):
        o = t // nb
        lo = o * r + (t - o * nb) * _B
        xs = x[lo:min(lo + _B, o * r + r)]
        s = ident
        for i in range(xs.size):
            s = _op(s, _map(xs[i], c, o))
        part[t] = s
    if nb > 1:   # combine serially: size / _B partials (one parallel region compiles faster)
        for o in range(outer):
            _tree(part, o * nb, nb, 1, 0, 1)
            out[o] = part[o * nb]


def _fold_cols(x, outer, r, inner, c, ident, out):
    """inner > 1: out[o*inner + j] = op_{i<r} map(x[(o*r + i)*inner + j], c, o*inner + j),
    pairwise over blocks of _BR rows; work items are (o, row block, column chunk)."""
    nb = max(1, (r + _BR - 1) // _BR)
    nc = (inner + _CW - 1) // _CW
    part = out if nb == 1 else np.empty(outer * nb * inner, out.dtype)
    for t in prange(outer * nb * nc):
        o = t // (nb * nc)
        b = (t - o * nb * nc) // nc
        j0 = (t - (o * nb + b) * nc) * _CW
        j1 = min(j0 + _CW, inner)
        acc = part[(o * nb + b) * inner + j0:(o * nb + b) * inner + j1]
        cs = c[o * inner + j0:o * inner + j1]   # empty for the dummy shift: never read then
        for j in range(acc.size):
            acc[j] = ident
        for i in range(b * _BR, min(r, b * _BR + _BR)):
            xs = x[(o * r + i) * inner + j0:(o * r + i) * inner + j1]
            for j in range(xs.size):
                acc[j] = _op(acc[j], _map(xs[j], cs, j))
    if nb > 1:   # serially: the partials are 1/_BR of the input
        for t in range(outer * nc):
            o = t // nc
            j0 = (t - o * nc) * _CW
            j1 = min(j0 + _CW, inner)
            _tree(part, o * nb * inner, nb, inner, j0, j1)
            for j in range(j0, j1):
                out[o * inner + j] = part[o * nb * inner + j]


def _pick(v, m):
    """v if v beats m or v is NaN, else m: a NaN-sticky running extreme (NaN never leaves)."""
    return v if (_better(v, m) or v != v) else m


def _arg_rows(x, outer, r, vals, idx):
    """inner == 1, r >= 1: (vals[o], idx[o]) = first extreme (or first NaN) of x[o*r : o*r + r].

    Work items are blocks of _BA elements: the extreme value m is found over _L independent lanes
    (a branch-free, vectorisable loop), then the block's first i with x == m (or NaN) is searched;
    blocks are combined in order. Exact, so the blocking does not change results."""
    if r <= 16:  # short rows (classes, mixture components): one pass per row, no views
        for o in prange(outer):
            base = o * r
            m = x[base]
            bi = 0
            for i in range(1, r):
                v = x[base + i]
                if m == m and (_better(v, m) or v != v):  # the first extreme, or first NaN
                    m = v
                    bi = i
            vals[o] = m
            idx[o] = bi
        return
    nb = (r + _BA - 1) // _BA
    pv = vals if nb == 1 else np.empty(outer * nb, vals.dtype)
    pi = idx if nb == 1 else np.empty(outer * nb, np.int64)
    # lane scratch allocated once, outside the parallel loop (per-item allocation did not scale)
    lanes = np.empty((outer * nb if r >= 4 * _L else 0) * _L, x.dtype)
    for t in prange(outer * nb):
        o = t // nb
        lo = (t - o * nb) * _BA
        xs = x[o * r + lo:o * r + min(lo + _BA, r)]
        n = xs.size
        m = xs[0]
        i0 = 1
        if n >= 4 * _L:
            acc = lanes[t * _L:t * _L + _L]
            for k in range(_L):
                acc[k] = xs[k]
            i0 = n - n % _L
            for i in range(_L, i0, _L):
                ys = xs[i:i + _L]
                for k in range(_L):
                    acc[k] = _pick(ys[k], acc[k])
            for k in range(_L):
                m = _pick(acc[k], m)
        for i in range(i0, n):
            m = _pick(xs[i], m)
        bi = 0
        if m != m:
            while xs[bi] == xs[bi]:
                bi += 1
        else:
            while xs[bi] != m:
                bi += 1
        pv[t] = xs[bi]
        pi[t] = lo + bi
    if nb > 1:
        for o in range(outer):
            bv = pv[o * nb]
            bi = pi[o * nb]
            for t in range(o * nb + 1, o * nb + nb):
                v = pv[t]
                if _better(v, bv) or (v != v and bv == bv):
                    bv = v
                    bi = pi[t]
            vals[o] = bv
            idx[o] = bi


def _arg_cols(x, outer, r, inner, vals, idx):
    """inner > 1, r >= 1: per (o, j) the first extreme (or first NaN) over i, vectorised over j."""
    nc = (inner + _CW - 1) // _CW
    for t in prange(outer * nc):
        o = t // nc
        j0 = (t - o * nc) * _CW
        j1 = min(j0 + _CW, inner)
        vs = vals[o * inner + j0:o * inner + j1]
        ix = idx[o * inner + j0:o * inner + j1]
        x0 = x[o * r * inner + j0:o * r * inner + j1]
        for j in range(x0.size):
            vs[j] = x0[j]
            ix[j] = 0
        for i in range(1, r):
            xs = x[(o * r + i) * inner + j0:(o * r + i) * inner + j1]
            for j in range(xs.size):
                v = xs[j]
                bv = vs[j]
                if _better(v, bv) or (v != v and bv == bv):
                    vs[j] = v
                    ix[j] = i


def _prod_others_k(x, outer, r, inner, one, out):
    """out[o,i,j] = (prod_{k<i} x[o,k,j]) * (prod_{k>i} x[o,k,j]): two scans, no division."""
    nc = (inner + _CW - 1) // _CW
    for t in prange(outer * nc):
        o = t // nc
        if inner == 1:
            xs = x[o * r:o * r + r]
            ys = out[o * r:o * r + r]
            acc = one
            for i in range(r):
                ys[i] = acc
                acc *= xs[i]
            acc = one
            for i in range(r - 1, -1, -1):
                ys[i] *= acc
                acc *= xs[i]
            continue
        j0 = (t - o * nc) * _CW
        j1 = min(j0 + _CW, inner)
        accs = np.full(j1 - j0, one)
        for i in range(r):
            xs = x[(o * r + i) * inner + j0:(o * r + i) * inner + j1]
            ys = out[(o * r + i) * inner + j0:(o * r + i) * inner + j1]
            for j in range(xs.size):
                ys[j] = accs[j]
                accs[j] *= xs[j]
        accs.fill(one)
        for i in range(r - 1, -1, -1):
            xs = x[(o * r + i) * inner + j0:(o * r + i) * inner + j1]
            ys = out[(o * r + i) * inner + j0:(o * r + i) * inner + j1]
            for j in range(xs.size):
                ys[j] *= accs[j]
                accs[j] *= xs[j]


_TREE_ADD = _inline(_tree, "_tree_add", _op=_ADD)
_TREE_MUL = _inline(_tree, "_tree_mul", _op=_MUL)


def _fold_pair(tag, op, tree, m, fastmath=_FM):
    env = dict(_op=op, _tree=tree, _map=_MAPS[m])
    # Note [read-only inputs] (kernel_cache.py): a fold writes only ``out``, its last argument
    return tuple(tuple(read_only_inputs(k, (-1,))
                       for k in _variants(f, tag, fastmath, **env))
                 for f in (_fold_rows, _fold_cols))


_K_SUM = _fold_pair("sum", _ADD, _TREE_ADD, "id")
# the serial sum kernels by name, for generated code (Note [native segments] in
# compile/native.py calls them as ``_fold`` does: (x, outer, r[, inner], c, ident, out))
SERIAL_SUM_ROWS, SERIAL_SUM_COLS = _K_SUM[0][False], _K_SUM[1][False]
_K_PROD = _fold_pair("prod", _MUL, _TREE_MUL, "id")
_K_SQ = _fold_pair("sumsq", _ADD, _TREE_ADD, "sq")


def _arg_pair(tag, better):
    env = dict(_better=better, _pick=_inline(_pick, "_pick_" + tag, _better=better))
    return (_variants(_arg_rows, tag, **env), _variants(_arg_cols, tag, **env))


_K_MAX = _arg_pair("max", _inline(lambda a, b: a > b))
_K_MIN = _arg_pair("min", _inline(lambda a, b: a < b))
_K_PO = _variants(_prod_others_k, "po")


# ---- Python wrappers ----
def _prep(x3):
    """Validate and canonicalise: returns (flat C-contiguous input, outer, r, inner)."""
    x3 = np.asarray(x3)
    if x3.ndim != 3:
        raise ValueError(f"expected a 3-D (outer, r, inner) array, got shape {x3.shape}")
    k = x3.dtype.kind
    if k in "iu" and x3.dtype != np.int64:
        x3 = x3.astype(np.int64)
    elif not (k == "b" or x3.dtype in (np.float32, np.float64, np.int64)):
        raise TypeError(f"unsupported dtype {x3.dtype} for a CPU reduction")
    outer, r, inner = x3.shape
    return np.ascontiguousarray(x3).reshape(-1), outer, r, inner


def _acc_dtype(dt, out_dtype):
    if out_dtype is not None:
        return np.dtype(out_dtype)
    return dt if dt.kind == "f" else np.dtype(np.int64)


def _fold(kernels, x, outer, r, inner, c, dt, par):
    """Run a fold kernel pair (rows, cols) into a fresh (outer, inner) array of dtype ``dt``."""
    out = pool.empty((outer, inner), dt)
    if out.size:
        par = par and _config.parallel_kernels()
        ident = (dt.type(1) if kernels is _K_PROD else dt.type(0))
        if inner == 1:
            par = par and outer * -(-r // _B) > 1        # a single work item runs serially
            kernels[0][par](x, outer, r, c, ident, out.reshape(-1))
        else:
            par = par and outer * -(-r // _BR) * -(-inner // _CW) > 1
            kernels[1][par](x, outer, r, inner, c, ident, out.reshape(-1))
    return out


def _par(x):
    """Memory-bound folds go parallel above PARALLEL_MIN_SIZE float64-sized elements."""
    return x.nbytes >= PARALLEL_MIN_SIZE * 8


def _fold_dtype(x3, out_dtype):
    x, outer, r, inner = _prep(x3)
    dt = _acc_dtype(x.dtype, out_dtype)
    if x.dtype != dt and np.result_type(x.dtype, dt) != dt:  # e.g. float summed into int: cast
        x = x.astype(dt)
    return x, outer, r, inner, dt


def reduce_sum(x3, out_dtype=None):
    """out[o, j] = sum_{i<r} x3[o, i, j]; 0 when r == 0.

    Float inputs accumulate in their own dtype (pairwise over fixed blocks), int/bool in int64
    (wrapping on overflow like NumPy); ``out_dtype`` overrides the accumulation/result dtype."""
    x, outer, r, inner, dt = _fold_dtype(x3, out_dtype)
    return _fold(_K_SUM, x, outer, r, inner, _NOC, dt, _par(x))


def sum_all(x):
    """``reduce_sum`` of every element of ``x`` as a 0-d array of its own (not a view: the
    caller's alias check has nothing to look at), where ``reduce_sum`` would run its serial row
    kernel on the flat array: a non-empty C-contiguous float32/float64 ndarray below the
    parallel size. The same kernel and bits, without the 3-D set-up, through the compiled entry
    point (Note [direct kernel entry] in kernels/cpu/elementwise.py) of ``_sum_flat``, which calls it. None
    elsewhere."""
    if type(x) is not np.ndarray:
        return None
    entry = _sum_all_plans.get(x.dtype)
    if entry is None:
        entry = _sum_all_plan(x.dtype)
    size = x.size
    if entry is False or not x.flags.c_contiguous or size == 0 or size * x.itemsize >= _PAR_BYTES:
        return None  # (the last: ``_par(x)``, inline)
    out = np.empty((), x.dtype)
    entry(x if x.ndim == 1 else x.reshape(-1), out)
    return out


def _sum_flat(x, out):
    """out[()] = the serial row fold of the flat ``x`` (outer 1, r = x.size): ``reduce_sum``'s
    kernel, called with its arguments, so two array operands cross the entry, not six."""
    _rows(x, np.int64(1), x.size, _noc, _zero, out.reshape(1))  # (int64: not a literal)


_PAR_BYTES = PARALLEL_MIN_SIZE * 8
# dtype -> the entry point of ``sum_all``'s kernel, or False
_sum_all_plans: dict = {}


def _sum_all_plan(dtype):
    plan = False
    if dtype.kind == "f" and dtype.itemsize >= 4:
        from numba import types

        scalar = types.float64 if dtype.itemsize == 8 else types.float32
        # x typed read-only: the entry takes writeable arrays too (Note [direct kernel entry])
        sig = (types.Array(scalar, 1, "C", readonly=True), types.Array(scalar, 0, "C"))
        kernel = cached_njit(nogil=True, error_model="numpy")(
            _bind(_sum_flat, f"_sum_flat_{dtype.name}", _rows=_K_SUM[0][False], _noc=_NOC,
                  _zero=dtype.type(0)))
        plan = kernel.compile(sig)
    _sum_all_plans[dtype] = plan
    return plan


def reduce_prod(x3, out_dtype=None):
    """out[o, j] = prod_{i<r} x3[o, i, j]; 1 when r == 0. Dtype rules as ``reduce_sum``."""
    x, outer, r, inner, dt = _fold_dtype(x3, out_dtype)
    return _fold(_K_PROD, x, outer, r, inner, _NOC, dt, _par(x))


def _arg_extreme(kernels, x3):
    x, outer, r, inner = _prep(x3)
    if r == 0:
        raise ValueError("the reduction has zero elements (reduced dimension of size 0)")
    vals = np.empty((outer, inner), x.dtype)
    idx = np.empty((outer, inner), np.int64)
    if vals.size:
        par = x.size >= _PAR_MIN_ARG and _config.parallel_kernels()
        if inner == 1:
            par = par and outer * -(-r // _BA) > 1
            kernels[0][par](x, outer, r, vals.reshape(-1), idx.reshape(-1))
        else:
            par = par and outer * -(-inner // _CW) > 1
            kernels[1][par](x, outer, r, inner, vals.reshape(-1), idx.reshape(-1))
    return vals, idx


def reduce_max(x3):
    """(values, indices): values[o, j] = max_i x3[o, i, j], indices[o, j] = the smallest i with
    x3[o, i, j] == values[o, j] (int64). Any NaN in the slice gives NaN and the first NaN's index.
    Raises ValueError when r == 0."""
    return _arg_extreme(_K_MAX, x3)


def reduce_min(x3):
    """(values, indices) of the minimum along r; first occurrence, NaN-propagating (as max)."""
    return _arg_extreme(_K_MIN, x3)


def _need_float(x3, name):
    x3 = np.asarray(x3)
    if x3.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name} needs a float32/float64 input, got {x3.dtype}")
    return x3


def reduce_logsumexp(x3):
    """out[o, j] = m + log(sum_i exp(x3[o, i, j] - m)) with m = max_i x3[o, i, j]
    (``softmax.slices``: the kernel softmax and log_softmax share).

    The exponentials are summed in float64. NaN in the slice gives NaN; otherwise m == +inf
    gives +inf and an all -inf slice (or r == 0) gives -inf. Float input only (TypeError)."""
    x3 = _need_float(x3, "logsumexp")
    outer, r, inner = x3.shape
    if r == 0:
        return np.full((outer, inner), -np.inf, x3.dtype)
    return softmax.slices(x3, softmax.LOGSUMEXP)


def reduce_var(x3, correction=1):
    """out[o, j] = sum_i (x3[o, i, j] - mean[o, j])^2 / max(0, r - correction), two passes
    (mean, then squared deviations), in the input float dtype. As PyTorch, a divisor of 0 gives
    inf (nan for a constant slice) and an empty slice nan, without an exception. Float input
    only (TypeError)."""
    x3 = _need_float(x3, "var")
    x, outer, r, inner = _prep(x3)
    dt = x.dtype
    if r == 0:
        return np.full((outer, inner), np.nan, dt)
    mean = _fold(_K_SUM, x, outer, r, inner, _NOC, dt, _par(x))
    mean /= dt.type(r)
    ss = _fold(_K_SQ, x, outer, r, inner, mean.reshape(-1), dt, _par(x))
    with np.errstate(divide="ignore", invalid="ignore"):
        ss /= dt.type(max(0, r - correction))
    return ss


def prod_others(x3):
    """out[o, i, j] = prod_{k != i} x3[o, k, j] (same shape as x3), as exclusive prefix times
    exclusive suffix products: exact with zeros, no division. int/bool give int64."""
    x, outer, r, inner = _prep(x3)
    out = pool.empty((outer, r, inner), _acc_dtype(x.dtype, None))
    if out.size:
        par = (x.size >= _PAR_MIN_PO and outer * -(-inner // _CW) > 1
               and _config.parallel_kernels())
        _K_PO[par](x, outer, r, inner, out.dtype.type(1), out.reshape(-1))
    return out


def _bool_fold(x, outer, r, inner, want_all, out):
    """out[o, j] = all (``want_all``) or any of ``x[o, i, j] != 0`` over i, stopping at the
    first element that decides a slice."""
    for o in range(outer):
        for j in range(inner):
            acc = want_all
            for i in range(r):
                if (x[(o * r + i) * inner + j] != 0) != want_all:
                    acc = not want_all
                    break
            out[o * inner + j] = acc


# (by name, for generated code: Note [native segments] in compile/native.py)
SERIAL_BOOL_FOLD = cached_njit(nogil=True, error_model="numpy")(
    _bind(_bool_fold, "_bool_fold_ser"))


def fold_layout(shape, dims):
    """(outer, r, inner): ``shape`` seen with the reduced ``dims`` as the middle axis, or None
    for non-adjacent dims (eager moves the axes first)."""
    dims = tuple(sorted(d % len(shape) for d in dims)) if shape else ()
    if dims and dims[-1] - dims[0] + 1 != len(dims):
        return None
    if not dims:
        return 1, 1, math.prod(shape)
    return (math.prod(shape[:dims[0]]), math.prod(shape[dims[0]:dims[-1] + 1]),
            math.prod(shape[dims[-1] + 1:]))


def reduce_bool(x3, want_all: bool) -> np.ndarray:
    """``all`` (``want_all``) or ``any`` of ``x3 != 0`` over its middle axis: (outer, inner)
    bools."""
    x, outer, r, inner = _prep(x3)
    out = np.empty(outer * inner, np.bool_)
    if out.size:
        SERIAL_BOOL_FOLD(x, outer, r, inner, bool(want_all), out)
    return out.reshape(outer, inner)
