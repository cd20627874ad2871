"""CUDA matrix products: a tiled shared-memory matmul, and a row-dot reduction for the cases
with a vector operand (dot, matrix @ vector, vector @ matrix).

Operands are strided CudaArrays read through their strides (Note [cuda storage]): a transposed
or broadcast operand needs no copy; broadcast batch dims have stride 0. The accumulator has the
operands' (common) dtype, so float32 products accumulate in float32 like the CPU path
(``np.matmul``: sgemm accumulates in single precision). Results are fresh C-contiguous arrays.

No cuBLAS: numba-cuda ships no BLAS bindings. A real GPU could hand contiguous (or singly
transposed) operands to cuBLAS zero-copy through ``__cuda_array_interface__``; the tiled kernel
is the dependency-free path.
"""
from __future__ import annotations

import math
import threading

import numpy as np
from numba import cuda

from . import backend as cuda_backend
from . import reduce as cuda_reduce

#: matmul tile edge; a block is TILE x TILE threads (the simulator runs each as a Python thread)
TILE = 4 if cuda_backend.SIMULATOR else 16
#: largest grid extent used per axis (grid-stride loops cover the rest)
_GRID_MAX = 1 if cuda_backend.SIMULATOR else 65535
_T = cuda_reduce._T


def _matmul_kernel(a, a_off, a_bst, a_rs, a_cs, b, b_off, b_bst, b_rs, b_cs, bshape, nbatch,
                   N, K, M, zero, bias, bias_off, bias_rs, bias_cs, has_bias, out):
    """out[t, n, m] = bias[n, m] + sum_k a[t, n, k] * b[t, k, m] for batch t < nbatch
    (unravelled over ``bshape`` with each operand's batch strides, 0 where broadcast), out
    contiguous; ``bias`` (read through its strides, one for every batch) only when ``has_bias``.

    Each block owns TILE x TILE outputs; per K-step it stages a TILE x TILE tile of a and of b in
    shared memory (zero-padded at the edges), then every thread adds TILE products. Grid-stride
    over batch (z), tile rows (y) and tile columns (x): every loop bound is block-uniform, so all
    threads of a block reach each syncthreads."""
    sa = cuda.shared.array((TILE, TILE), _SDT)
    sb = cuda.shared.array((TILE, TILE), _SDT)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n_ti = (N + TILE - 1) // TILE
    n_tj = (M + TILE - 1) // TILE
    t = cuda.blockIdx.z
    while t < nbatch:
        pa = a_off + _offset(t, bshape, a_bst)
        pb = b_off + _offset(t, bshape, b_bst)
        ti = cuda.blockIdx.y
        while ti < n_ti:
            n = ti * TILE + ty
            tj = cuda.blockIdx.x
            while tj < n_tj:
                m = tj * TILE + tx
                acc = zero
                for k0 in range(0, K, TILE):
                    ka = k0 + tx
                    kb = k0 + ty
                    sa[ty, tx] = a[pa + n * a_rs + ka * a_cs] if n < N and ka < K else zero
                    sb[ty, tx] = b[pb + kb * b_rs + m * b_cs] if kb < K and m < M else zero
                    cuda.syncthreads()
                    for kk in range(TILE):
                        acc += sa[ty, kk] * sb[kk, tx]
                    cuda.syncthreads()
                if n < N and m < M:
                    if has_bias:
                        acc += bias[bias_off + n * bias_rs + m * bias_cs]
                    out[(t * N + n) * M + m] = acc
                tj += cuda.gridDim.x
            ti += cuda.gridDim.y
        t += cuda.gridDim.z


def _rowdot_kernel(a, a_off, rshape, rstr, a_ks, v, v_off, v_ks, n_items, K, chunk, P, zero,
                   out):
    """out[t] = sum_{k in chunk} a[row, k] * v[k], work item t = row * P + chunk (Note [cuda
    reduction passes] in ``cuda_reduce``): rows unravel over ``rshape``/``rstr``, ``a_ks`` and
    ``v_ks`` are the strides along k. Shared-memory tree over the block's threads."""
    sh = cuda.shared.array(_T, _SDT)
    tid = cuda.threadIdx.x
    t = cuda.blockIdx.x
    while t < n_items:
        _, k, k1, base = cuda_reduce.work_item(t, P, chunk, K, a_off, rshape, rstr)
        s = zero
        k += tid
        while k < k1:
            s += a[base + k * a_ks] * v[v_off + k * v_ks]
            k += _T
        total = cuda_backend.block_sum(sh, s)
        if tid == 0:
            out[t] = total
        t += cuda.gridDim.x


_offset = cuda_backend.strided_offset
_kernels: dict = {}
_lock = threading.Lock()


def _get(body, dt):
    key = (body, dt)
    kern = _kernels.get(key)
    if kern is None:
        with _lock:
            kern = _kernels.get(key)
            if kern is None:
                fn = cuda_reduce._bind(body, f"{body.__name__}_{dt}", _SDT=cuda_reduce._SHARED[dt])
                cuda_backend.tag_kernel(fn, _get, body, dt)
                kern = _kernels[key] = cuda.jit(fn)
    return kern


def _compute_dtype(a, b):
    """(result dtype, kernel dtype): NumPy's promotion; bool and small ints are computed in
    int64, float16 in float32 (the shared-memory types), then cast back."""
    rt = np.result_type(a.dtype, b.dtype)
    if rt.kind in "biu":
        return rt, np.dtype(np.int64)
    if rt == np.float16:
        return rt, np.dtype(np.float32)
    return rt, rt


def gemm(a, b, dt, bias=None):
    """(..., N, K) @ (..., K, M), batch dims broadcast, by the tiled kernel in dtype ``dt`` (the
    operands' dtype); ``bias`` (a view broadcast to (N, M), any strides) is added to every
    product matrix (``cuda_nn.addmm``)."""
    bshape = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    N, K = a.shape[-2:]
    M = b.shape[-1]
    out = cuda_backend.empty(bshape + (N, M), dt, a.index)
    nbatch = math.prod(bshape)
    if out.size == 0:
        return out
    if K == 0 and bias is None:
        cuda_backend.fill(out, 0)
        return out
    if bias is None:
        bias_args = (out.buffer, 0, 0, 0, False)  # not read
    else:
        bias_args = (bias.buffer, bias.offset, bias.elem_strides[-2], bias.elem_strides[-1], True)
    grid = (min(-(-M // TILE), _GRID_MAX), min(-(-N // TILE), _GRID_MAX),
            min(nbatch, _GRID_MAX))
    with cuda.gpus[a.index]:
        _get(_matmul_kernel, dt)[grid, (TILE, TILE)](
            a.buffer, a.offset, cuda_backend.batch_strides(a, bshape), a.elem_strides[-2],
            a.elem_strides[-1], b.buffer, b.offset, cuda_backend.batch_strides(b, bshape),
            b.elem_strides[-2], b.elem_strides[-1], bshape or (1,), nbatch, N, K, M,
            dt.type(0), *bias_args, out.buffer)
    return out


def _rowdot(a, v, dt):
    """out[...] = sum_k a[..., k] * v[k]: (rows..., K) with a vector, result of shape rows."""
    rows = a.shape[:-1]
    K = a.shape[-1]
    R = math.prod(rows)
    if R == 0 or K == 0:
        return cuda_backend.zeros(rows, dt, a.index)
    rs, rt = cuda_reduce._collapse(rows, a.elem_strides[:-1])
    chunk, P = cuda_reduce._plan(R, K)
    out = cuda_backend.empty((R * P,), dt, a.index)
    cuda_reduce._launch(_get(_rowdot_kernel, dt), R * P, a.index, a.buffer, a.offset, rs, rt,
                 a.elem_strides[-1], v.buffer, v.offset, v.elem_strides[0], R * P, K, chunk, P,
                 dt.type(0), out.buffer)
    if P > 1:  # sum the per-chunk partials
        out = cuda_reduce._fold(out.reshape(R, P), (1,), cuda_reduce._add, cuda_reduce._map_id,
                                None, dt)
    return out.reshape(rows)


def matmul(a, b):
    """NumPy's ``matmul`` of two CudaArrays (ranks >= 1, shapes already checked): 1-d @ 1-d is
    a 0-d dot product, a 1-d operand is a row (left) or column (right) vector whose dim is
    removed, batch dims broadcast. Vector cases run the row-dot reduction, the rest tiles."""
    rt, dt = _compute_dtype(a, b)
    if a.dtype != dt:
        a = a.astype(dt)
    if b.dtype != dt:
        b = b.astype(dt)
    if b.ndim == 1:    # (..., K) @ (K,): a's rows dotted with b
        out = _rowdot(a, b, dt)
    elif a.ndim == 1:  # (K,) @ (..., K, M): the rows of b^T (..., M, K) dotted with a
        out = _rowdot(b.transpose(tuple(range(b.ndim - 2)) + (b.ndim - 1, b.ndim - 2)), a, dt)
    else:
        out = gemm(a, b, dt)
    return out if rt == dt else out.astype(rt)
