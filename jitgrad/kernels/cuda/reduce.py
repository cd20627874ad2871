"""CUDA reduction kernels: sum, prod, max/min (+ indices), var, logsumexp, gather/put along a dim.

Every reduction over a set of axes of a strided :class:`~jitgrad.kernels.cuda.backend.CudaArray` is seen
as an ``(M, K)`` problem read through strides, nothing copied (Note [cuda storage]): the kept
axes (in order) unravel the output row ``m < M``, the reduced axes (in order, C order) unravel
the reduced position ``k < K``. Adjacent axes whose strides chain are merged first, so a
contiguous reduced block costs one division per element.

Note [cuda reduction passes]: a work item is one output row, or a chunk of one row when there
are few rows and many elements (then the kernel writes per-chunk partials and a second launch
of a kernel over the ``(M, P)`` partials finishes, recursively if needed). One block per work
item, grid-stride over the items; inside a block each thread folds a strided slice of the chunk
and a shared-memory tree combines the threads (block size a power of two). float32 sums
accumulate in float32 like the CPU kernels (``kernels.cpu.reduce``); only the order differs, so
results agree to rounding.

max/min keep the CPU semantics: the value and the smallest index where it occurs, and any NaN
wins (its first index). Every combine compares (value, index) pairs, so the per-thread strided
order and the tree order cannot change the result: it is exact.

Kernel bodies are plain functions; ``_bind`` makes a copy per (combine op, element map, shared
dtype) with those bound as globals (the shared array's dtype must be a compile-time constant).
"""
from __future__ import annotations

import math
import threading

import numba
import numpy as np
from numba import cuda

from . import backend as cuda_backend
from ..rebind import bind as _bind

#: threads per reduction block: a power of two (the tree halves it); few under the simulator
_T = cuda_backend.THREADS_PER_BLOCK
#: elements per work item before a row is split into several chunks (8 per thread)
CHUNK = 8 * _T
#: rows at which one item per row already fills the device (no split below this)
SPLIT_ROWS = 8 if cuda_backend.SIMULATOR else 1024
#: the number of work items a split aims at (a few per multiprocessor on a GPU)
TARGET_ITEMS = 8 if cuda_backend.SIMULATOR else 2048

_SHARED = {np.dtype(np.float64): numba.float64, np.dtype(np.float32): numba.float32,
           np.dtype(np.int64): numba.int64, np.dtype(np.uint8): numba.uint8}


# ---- device functions ----------------------------------------------------------------------
_offset = cuda_backend.strided_offset


@cuda.jit(device=True)
def _add(a, b):
    """a + b"""
    return a + b


def _mul(a, b):
    """a * b"""
    return a * b


def _map_id(v, c, row):
    """v"""
    return v


def _map_exp(v, c, row):
    """exp(v - c[row]): logsumexp's shifted exponential (c is the row maximum)."""
    return math.exp(v - c[row])


def _map_sq(v, c, row):
    """(v - c[row])^2: var's squared deviation from the row mean c[row]."""
    d = v - c[row]
    return d * d


def _gt(a, b):
    """a > b (max)"""
    return a > b


def _lt(a, b):
    """a < b (min)"""
    return a < b


def _take(v, i, bv, bi):
    """Whether candidate (v, i) replaces the running (bv, bi) of a first-occurrence, NaN-sticky
    extreme: i < 0 marks an empty candidate; NaN beats any number; equal values (or two NaNs)
    go to the smaller index. Order-independent, hence exact under any combine tree."""
    if i < 0:
        return False
    if bi < 0:
        return True
    if v != v:
        return bv == bv or i < bi
    if bv != bv:
        return False
    if _better(v, bv):
        return True
    return v == bv and i < bi


@cuda.jit(device=True)
def work_item(t, P, chunk, K, x_off, shape, strides):
    """(row, k0, k1, base) of work item ``t`` (Note [cuda reduction passes]): its output row
    ``t // P``, the chunk ``[k0, k1)`` of the row's K reduced positions it folds, and the offset
    of the row's first element (the row unravelled over ``shape`` with element ``strides``)."""
    row = t // P
    k0 = (t - row * P) * chunk
    return row, k0, min(k0 + chunk, K), x_off + _offset(row, shape, strides)


# ---- kernel bodies (``_op``, ``_block_op``, ``_map``, ``_better``, ``_take``, ``_SDT`` bound
# per copy) ------------------------------------------------------------------------------------
def _fold_kernel(x, x_off, kshape, kstr, rshape, rstr, n_items, K, chunk, P, c, ident, out):
    """out[t] = op_{k in chunk(t)} map(x[row, k], c, row) for work item t = row * P + chunk,
    chunk covering k in [chunk * (t % P), min(K, chunk * (t % P + 1))); ``ident`` is op's
    identity (its dtype is the accumulator's). The threads' partial folds are combined by
    ``_block_op``, op's shared-memory tree (``cuda.block_reduce``)."""
    sh = cuda.shared.array(_T, _SDT)
    tid = cuda.threadIdx.x
    t = cuda.blockIdx.x
    while t < n_items:
        row, k, k1, base = work_item(t, P, chunk, K, x_off, kshape, kstr)
        s = ident
        k += tid
        while k < k1:
            s = _op(s, _map(x[base + _offset(k, rshape, rstr)], c, row))
            k += _T
        total = _block_op(sh, s)
        if tid == 0:
            out[t] = total
        t += cuda.gridDim.x


def _arg_kernel(x, x_off, kshape, kstr, rshape, rstr, n_items, K, chunk, P, xi, has_idx,
                vals, idx):
    """(vals[t], idx[t]) = the first extreme (or first NaN) of x[row, k] over the chunk of work
    item t (as ``_fold_kernel``), by ``_take``. The index of x[row, k] is k, or xi at the same
    position when ``has_idx`` (the second pass over partial results)."""
    sv = cuda.shared.array(_T, _SDT)
    si = cuda.shared.array(_T, numba.int64)
    tid = cuda.threadIdx.x
    t = cuda.blockIdx.x
    while t < n_items:
        row, k, k1, base = work_item(t, P, chunk, K, x_off, kshape, kstr)
        bv = x[base]
        bi = -1
        k += tid
        while k < k1:
            p = base + _offset(k, rshape, rstr)
            v = x[p]
            i = xi[p] if has_idx else k
            if _take(v, i, bv, bi):
                bv = v
                bi = i
            k += _T
        sv[tid] = bv
        si[tid] = bi
        cuda.syncthreads()
        step = _T // 2
        while step > 0:
            if tid < step and _take(sv[tid + step], si[tid + step], sv[tid], si[tid]):
                sv[tid] = sv[tid + step]
                si[tid] = si[tid + step]
            cuda.syncthreads()
            step //= 2
        if tid == 0:
            vals[t] = sv[0]
            idx[t] = si[0]
        cuda.syncthreads()
        t += cuda.gridDim.x


_kernels: dict = {}
_lock = threading.Lock()


_DEV: dict = {}


def _dev(f, **env):
    """``f`` (with ``env`` bound) as a device function, one per (f, env)."""
    key = (f, tuple(sorted(env.items(), key=lambda kv: kv[0])))
    if key not in _DEV:
        _DEV[key] = cuda.jit(device=True)(_bind(f, f.__name__, **env) if env else f)
    return _DEV[key]


def _get(kind, op, fmap, dt):
    """The kernel ``kind`` ("fold" or "arg") for combine ``op``, element map ``fmap`` and
    accumulator/shared dtype ``dt``, compiled on first use."""
    key = (kind, op, fmap, dt)
    kern = _kernels.get(key)
    if kern is None:
        with _lock:
            kern = _kernels.get(key)
            if kern is None:
                if kind == "fold":
                    block_op = cuda_backend.block_reduce(_dev(op), f"block{op.__name__}")
                    body = _bind(_fold_kernel, f"fold_{op.__name__}{fmap.__name__}_{dt}",
                                 _op=_dev(op), _block_op=block_op, _map=_dev(fmap),
                                 _SDT=_SHARED[dt])
                else:
                    better = _dev(op)
                    body = _bind(_arg_kernel, f"arg_{op.__name__}_{dt}",
                                 _take=_dev(_take, _better=better), _SDT=_SHARED[dt])
                cuda_backend.tag_kernel(body, _get, kind, op, fmap, dt)
                kern = _kernels[key] = cuda.jit(body)
    return kern


def _prod_others(dt):
    """The kernel computing, per element, the product of the others in its row (dtype ``dt``)."""
    key = ("prod_others", dt)
    kern = _kernels.get(key)
    if kern is None:
        with _lock:
            kern = _kernels.get(key)
            if kern is None:
                body = _bind(_prod_others_kernel, f"prod_others_{dt}", _SDT=_SHARED[dt])
                cuda_backend.tag_kernel(body, _prod_others, dt)
                kern = _kernels[key] = cuda.jit(body)
    return kern


# ---- host-side layout ----------------------------------------------------------------------
def _collapse(shape, strides):
    """Drop size-1 axes and merge axes whose strides chain (row-major), padding to one axis."""
    out_s, out_t = [], []
    for n, s in zip(shape, strides):
        if n == 1:
            continue
        if out_s and out_t[-1] == s * n:
            out_s[-1] *= n
            out_t[-1] = s
        else:
            out_s.append(n)
            out_t.append(s)
    return (tuple(out_s), tuple(out_t)) if out_s else ((1,), (0,))


def _split(x, dims):
    """(kept shape, kept strides, reduced shape, reduced strides, M, K), collapsed."""
    kept = [d for d in range(x.ndim) if d not in dims]
    ks, kt = _collapse([x.shape[d] for d in kept], [x.elem_strides[d] for d in kept])
    rs, rt = _collapse([x.shape[d] for d in dims], [x.elem_strides[d] for d in dims])
    return ks, kt, rs, rt, math.prod(x.shape[d] for d in kept), math.prod(x.shape[d] for d in dims)


def _plan(M, K):
    """(chunk, P): K split into P chunks per row (Note [cuda reduction passes])."""
    if K <= CHUNK or M >= SPLIT_ROWS:
        return max(K, 1), 1
    P = min(-(-K // CHUNK), max(1, -(-TARGET_ITEMS // M)))
    chunk = -(-K // P)
    return chunk, -(-K // chunk)


def _launch(kern, n_items, index, *args):
    blocks = min(max(n_items, 1), cuda_backend.MAX_BLOCKS)
    with cuda.gpus[index]:
        kern[blocks, _T](*args)


def _fold(x, dims, op, fmap, c, acc_dt):
    """(M,) array: op-fold of map(x[row, k]) over the reduced dims, accumulated in ``acc_dt``
    (``c``: the map's per-row shift, or None)."""
    acc_dt = np.dtype(acc_dt)
    ident = acc_dt.type(1 if op is _mul else 0)
    ks, kt, rs, rt, M, K = _split(x, dims)
    if M == 0 or K == 0:
        return cuda_backend.full((M,), ident, acc_dt, x.index)
    c = x.buffer if c is None else c.buffer  # unused by the identity map
    chunk, P = _plan(M, K)
    out = cuda_backend.empty((M * P,), acc_dt, x.index)
    _launch(_get("fold", op, fmap, acc_dt), M * P, x.index, x.buffer, x.offset, ks, kt, rs, rt,
            M * P, K, chunk, P, c, ident, out.buffer)
    if P == 1:
        return out
    # the (M, P) partials: combined by the same op (the map was applied in the first pass)
    return _fold(out.reshape(M, P), (1,), _mul if op is _mul else _add, _map_id, None, acc_dt)


def _arg(x, dims, better, xi=None):
    """((M,) values, (M,) int64 indices) of the first extreme over the reduced dims."""
    ks, kt, rs, rt, M, K = _split(x, dims)
    if K == 0:
        raise ValueError("the reduction has zero elements (reduced dimension of size 0)")
    vals = cuda_backend.empty((M,), x.dtype, x.index)
    idx = cuda_backend.empty((M,), np.int64, x.index)
    if M == 0:
        return vals, idx
    chunk, P = _plan(M, K)
    if P > 1:
        vals = cuda_backend.empty((M * P,), x.dtype, x.index)
        idx = cuda_backend.empty((M * P,), np.int64, x.index)
    has = xi is not None
    _launch(_get("arg", better, None, x.dtype), M * P, x.index, x.buffer, x.offset, ks, kt, rs,
            rt, M * P, K, chunk, P, xi.buffer if has else idx.buffer, has, vals.buffer,
            idx.buffer)
    if P == 1:
        return vals, idx
    return _arg(vals.reshape(M, P), (1,), better, idx)


# ---- public reductions: x any strided CudaArray, dims sorted axes; results have x's shape
# without ``dims`` (contiguous, fresh) --------------------------------------------------------
def _kept_shape(x, dims):
    return tuple(n for d, n in enumerate(x.shape) if d not in dims)


def _prep(x):
    """Small ints to int64 (as the CPU kernels), bool to uint8 (a plain shared-memory type)."""
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    if x.dtype.kind in "iu" and x.dtype != np.int64:
        return x.astype(np.int64)
    return x


def _acc_dtype(x, out_dtype):
    if out_dtype is not None:
        return np.dtype(out_dtype)
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.int64)


def _fold_public(x, dims, out_dtype, op):
    dt = _acc_dtype(x, out_dtype)
    x = _prep(x)
    if np.result_type(x.dtype, dt) != dt:  # float input summed into int: cast first (as CPU)
        x = x.astype(dt)
    return _fold(x, dims, op, _map_id, None, dt).reshape(_kept_shape(x, dims))


def reduce_sum(x, dims, out_dtype=None):
    """sum over ``dims``; 0 when empty. Floats accumulate in their dtype, int/bool in int64;
    ``out_dtype`` overrides (``kernels.cpu.reduce.reduce_sum``'s rules)."""
    return _fold_public(x, dims, out_dtype, _add)


def reduce_prod(x, dims, out_dtype=None):
    """prod over ``dims``; 1 when empty. Dtype rules as ``reduce_sum``."""
    return _fold_public(x, dims, out_dtype, _mul)


def _extreme(x, dims, better):
    src = _prep(x)
    vals, idx = _arg(src, dims, better)
    shape = _kept_shape(x, dims)
    if x.dtype == np.bool_:
        vals = vals.astype(np.bool_)
    return vals.reshape(shape), idx.reshape(shape)


def reduce_max(x, dims):
    """(values, int64 indices) of the maximum over ``dims`` (index = C-order position within
    the reduced dims): first occurrence, NaN wins. ValueError when the reduction is empty."""
    return _extreme(x, dims, _gt)


def reduce_min(x, dims):
    """(values, indices) of the minimum; first occurrence, NaN wins (as ``reduce_max``)."""
    return _extreme(x, dims, _lt)


def _div(a, b):
    """a / b"""
    return a / b


def reduce_var(x, dims, correction=1):
    """sum_k (x_k - mean)^2 / max(0, K - correction), two passes in the input's float dtype:
    inf (nan for a constant row) when the divisor is 0, nan when K == 0 (as the CPU)."""
    dt = x.dtype
    ks, kt, rs, rt, M, K = _split(x, dims)
    shape = _kept_shape(x, dims)
    if K == 0:
        return cuda_backend.full(shape, np.nan, dt, x.index)
    mean = _fold(x, dims, _add, _map_id, None, dt)
    mean = cuda_backend.elementwise(_div, [mean, dt.type(K)], mean.shape, dt, dt)
    ss = _fold(x, dims, _add, _map_sq, mean, dt)
    return cuda_backend.elementwise(_div, [ss, dt.type(max(0, K - correction))], ss.shape, dt,
                           dt).reshape(shape)


def _lse_finish(s, m):
    """m + log(s) where the row maximum m is finite, else m (+inf, -inf or NaN)."""
    if math.isinf(m) or m != m:
        return m
    return m + math.log(s)


def reduce_logsumexp(x, dims):
    """m + log(sum_k exp(x_k - m)), m = max_k x_k (NaN-propagating); the exponentials summed
    in float64; +inf/-inf/NaN maxima pass through; -inf when K == 0 (as the CPU)."""
    shape = _kept_shape(x, dims)
    if math.prod(x.shape[d] for d in dims) == 0:
        return cuda_backend.full(shape, -np.inf, x.dtype, x.index)
    m, _ = _arg(x, dims, _gt)
    s = _fold(x, dims, _add, _map_exp, m, np.float64)
    return cuda_backend.elementwise(_lse_finish, [s, m], m.shape, x.dtype,
                                    np.float64).reshape(shape)


def _sqrt(v):
    """sqrt(v) (v >= 0, inf or nan here)"""
    return math.sqrt(v)


def sqrt(x):
    """Elementwise square root into a new array (std from var)."""
    return cuda_backend.elementwise(_sqrt, [x], x.shape, x.dtype, x.dtype)


# ---- gather / put along one dim (the max/min gradient and its transpose) -------------------
@cuda.jit
def _gather_kernel(n, shape, out, x, x_off, x_st, x_step, xn, ix, ix_off, ix_st):
    """out[pos] = x[pos with coordinate ``dim`` replaced by ix[pos]]: ``out`` contiguous over
    ``shape``, ``x_st`` is x's strides with 0 at ``dim`` (and at broadcast axes), ``x_step``
    x's stride along ``dim``; negative indices wrap by ``xn``, x's size there. Grid-stride."""
    i = cuda.grid(1)
    while i < n:
        rem = i
        px = x_off
        pi = ix_off
        for d in range(len(shape) - 1, -1, -1):
            j = rem % shape[d]
            rem //= shape[d]
            px += j * x_st[d]
            pi += j * ix_st[d]
        k = ix[pi]
        if k < 0:
            k += xn
        out[i] = x[px + k * x_step]
        i += cuda.gridsize(1)


@cuda.jit
def _put_kernel(n, shape, out, o_st, o_step, on, g, g_off, g_st, ix, ix_off, ix_st):
    """out[pos with coordinate ``dim`` replaced by ix[pos]] = g[pos] for pos over ``shape``
    (the index's shape; ``o_st`` is out's strides with 0 at ``dim``, ``o_step`` its stride
    there, ``on`` its size there for negative indices). A put, not an add: with repeated
    indices one write wins, as NumPy's put_along_axis keeps the last."""
    i = cuda.grid(1)
    while i < n:
        rem = i
        po = 0
        pg = g_off
        pi = ix_off
        for d in range(len(shape) - 1, -1, -1):
            j = rem % shape[d]
            rem //= shape[d]
            po += j * o_st[d]
            pg += j * g_st[d]
            pi += j * ix_st[d]
        k = ix[pi]
        if k < 0:
            k += on
        out[po + k * o_step] = g[pg]
        i += cuda.gridsize(1)


def _st(a):
    return a.elem_strides if a.ndim else (0,)


def take_along_dim(x, index, dim):
    """NumPy's ``take_along_axis(x, index, dim)``: index and x broadcast over the other axes.
    Indices are not bounds-checked (a device-side check would need a host sync)."""
    shape = tuple(max(a, b) if d != dim else b
                  for d, (a, b) in enumerate(zip(x.shape, index.shape)))
    out = cuda_backend.empty(shape, x.dtype, x.index)
    n = out.size
    if n == 0:
        return out
    xb = x.broadcast_to(tuple(x.shape[d] if d == dim else shape[d] for d in range(x.ndim)))
    ib = index.broadcast_to(shape)
    x_st = tuple(0 if d == dim else s for d, s in enumerate(xb.elem_strides))
    blocks, threads = cuda_backend._launch_config(n)
    with cuda.gpus[x.index]:
        _gather_kernel[blocks, threads](n, shape, out.buffer, xb.buffer, xb.offset, x_st,
                                        xb.elem_strides[dim], x.shape[dim], ib.buffer, ib.offset,
                                        ib.elem_strides)
    return out


def index_scatter(g, index, dim, shape):
    """Zeros of ``shape`` (g's dtype) with ``g`` put at ``index`` along ``dim``
    (``np.put_along_axis``; g broadcast to the index's shape)."""
    shape = tuple(shape)
    out = cuda_backend.zeros(shape, g.dtype, g.index)
    bshape = tuple(max(a, b) if d != dim else a
                   for d, (a, b) in enumerate(zip(index.shape, shape)))
    n = math.prod(bshape)
    if n == 0:
        return out
    gb, ib = g.broadcast_to(bshape), index.broadcast_to(bshape)
    o_st = tuple(0 if d == dim else s for d, s in enumerate(out.elem_strides))
    blocks, threads = cuda_backend._launch_config(n)
    with cuda.gpus[g.index]:
        _put_kernel[blocks, threads](n, bshape, out.buffer, o_st, out.elem_strides[dim],
                                     shape[dim], gb.buffer, gb.offset, gb.elem_strides,
                                     ib.buffer, ib.offset, ib.elem_strides)
    return out


def divide(x, n):
    """x / n in x's dtype (mean from a sum; 0/0 gives nan)."""
    return cuda_backend.elementwise(_div, [x, x.dtype.type(n)], x.shape, x.dtype, x.dtype)


def _prod_others_kernel(x, x_off, kshape, kstr, rshape, rstr, M, K, per, one, out):
    """out[row * K + k] = prod_{j < k} x[row, j] * prod_{j > k} x[row, j] (exact with zeros,
    no division). One block per row: thread ``tid`` owns the contiguous chunk
    [tid * per, (tid + 1) * per) of k; chunk products go to shared memory, thread 0 turns them
    into exclusive prefix and suffix products over the chunks, then each thread scans its chunk
    both ways starting from those."""
    pre = cuda.shared.array(_T, _SDT)
    suf = cuda.shared.array(_T, _SDT)
    tid = cuda.threadIdx.x
    row = cuda.blockIdx.x
    while row < M:
        base = x_off + _offset(row, kshape, kstr)
        k0 = min(tid * per, K)
        k1 = min(k0 + per, K)
        p = one
        for k in range(k0, k1):
            p *= x[base + _offset(k, rshape, rstr)]
        pre[tid] = p
        cuda.syncthreads()
        if tid == 0:
            acc = one
            for j in range(_T - 1, -1, -1):
                suf[j] = acc
                acc *= pre[j]
            acc = one
            for j in range(_T):
                v = pre[j]
                pre[j] = acc
                acc *= v
        cuda.syncthreads()
        acc = pre[tid]
        for k in range(k0, k1):
            out[row * K + k] = acc
            acc *= x[base + _offset(k, rshape, rstr)]
        acc = suf[tid]
        for k in range(k1 - 1, k0 - 1, -1):
            out[row * K + k] *= acc
            acc *= x[base + _offset(k, rshape, rstr)]
        cuda.syncthreads()
        row += cuda.gridDim.x


def prod_others(x, dims):
    """out = prod over ``dims`` of every element but the one at each position (x's shape, a
    strided view of a fresh buffer): the plain backward of prod. int/bool give int64."""
    x = _prep(x)
    dt = _acc_dtype(x, None)
    if x.dtype != dt:
        x = x.astype(dt)
    ks, kt, rs, rt, M, K = _split(x, dims)
    kept = [d for d in range(x.ndim) if d not in dims]
    out = cuda_backend.empty((M * K,), dt, x.index)
    if M and K:
        kern = _prod_others(dt)
        _launch(kern, M, x.index, x.buffer, x.offset, ks, kt, rs, rt, M, K, -(-K // _T),
                dt.type(1), out.buffer)
    # out is laid out (kept..., reduced...): view it back in x's axis order
    perm = kept + list(dims)
    moved = out.reshape(tuple(x.shape[d] for d in perm))
    return moved.transpose(tuple(perm.index(d) for d in range(x.ndim)))
