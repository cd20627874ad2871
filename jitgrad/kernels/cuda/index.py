"""CUDA kernels for indexing and scatter, and the stride-only views the shape ops need.

Imported lazily by the ops (``dispatch.cuda_kernels("index")``) once a CUDA tensor exists.

Note [cuda index positions]: every read or write addressed by an index reduces to *flat
positions*: the C-order flat index, into an array's logical shape, of each element read or
written. Kernels unravel a position over the shape and dot it with the element strides, so any
strided view (transposed, sliced, a view written in place) is read or written where it lies in
its buffer; nothing is made contiguous first. Positions computed from index arrays (advanced
indexing, ``take``/``put``, ``index_put``, the view geometry of ``CopySlices``) are built on the
host by the ops from the host index arrays (which they validate there, with the CPU path's
messages) and copied to the device once per call (``index_to_device``). Gathers and scatters
*along a dim* (``index_select``, ``gather``, ``index_add``, ``scatter_add``) instead upload
only the index tensor and compute the positions on the device.

Scatter-adds accumulate with ``cuda.atomic.add``, so repeated indices sum whatever order the
threads run in (float sums may differ from the CPU's sequential order in the last bits).
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from . import backend as cuda_backend
from .backend import CudaArray


# --- views (no data moves; Note [cuda storage] in kernels/cuda/backend.py) ----------------------------
def as_strided(a: CudaArray, shape, strides, offset) -> CudaArray:
    """A view of ``a``'s buffer with the given shape, element strides and element offset
    (it holds ``a``'s pool block, so the memory stays allocated while the view lives)."""
    return a._view(shape, strides, offset)


def alias(a: CudaArray) -> CudaArray:
    """A new view of exactly the same elements (``x[...]``, ``x.t()`` of a 0-d tensor)."""
    return as_strided(a, a.shape, a.elem_strides, a.offset)


def squeeze(a: CudaArray, dims) -> CudaArray:
    """``a`` without the size-1 dims ``dims`` (a view)."""
    keep = [k for k in range(a.ndim) if k not in dims]
    return as_strided(a, [a.shape[k] for k in keep], [a.elem_strides[k] for k in keep], a.offset)


def expand_dims(a: CudaArray, dim: int) -> CudaArray:
    """``a`` with a size-1 dim inserted at ``dim`` (a view; its stride never matters)."""
    shape, strides = list(a.shape), list(a.elem_strides)
    shape.insert(dim, 1)
    strides.insert(dim, 0)
    return as_strided(a, shape, strides, a.offset)


def diagonal(a: CudaArray, offset: int, dim1: int, dim2: int) -> CudaArray:
    """The writable view ``y[..., i] = a[..., i, i + offset]`` over ``dim1``/``dim2`` (those
    dims removed, the diagonal last), like ``ops.shape._diagonal_view`` on the CPU."""
    n1, n2 = a.shape[dim1], a.shape[dim2]
    s1, s2 = a.elem_strides[dim1], a.elem_strides[dim2]
    if offset >= 0:
        length, start = max(min(n1, n2 - offset), 0), offset * s2
    else:
        length, start = max(min(n1 + offset, n2), 0), -offset * s1
    other = [k for k in range(a.ndim) if k not in (dim1, dim2)]
    return as_strided(a, [a.shape[k] for k in other] + [length],
                      [a.elem_strides[k] for k in other] + [s1 + s2],
                      a.offset + (start if length else 0))


def reshape_view(a: CudaArray, shape) -> CudaArray | None:
    """``a`` reshaped without copying, or None when its strides cannot express ``shape``
    (NumPy's ``_attempt_nocopy_reshape``: groups of old dims that multiply to groups of new
    dims must each be contiguous among themselves)."""
    shape = tuple(int(n) for n in shape)
    if a.size == 0 or a.is_contiguous():
        return as_strided(a, shape, None, a.offset)
    old = [(n, s) for n, s in zip(a.shape, a.elem_strides) if n != 1]
    odims, ostr = [n for n, _ in old], [s for _, s in old]
    new = [0] * len(shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(shape) and oi < len(odims):
        np_, op_ = shape[ni], odims[oi]
        while np_ != op_:
            if np_ < op_:
                np_ *= shape[nj]
                nj += 1
            else:
                op_ *= odims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if ostr[ok] != odims[ok + 1] * ostr[ok + 1]:
                return None
        new[nj - 1] = ostr[oj - 1]
        for nk in range(nj - 1, ni, -1):
            new[nk - 1] = new[nk] * shape[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = new[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(shape)):
        new[nk] = last
    return as_strided(a, shape, new, a.offset)


# --- host helpers --------------------------------------------------------------------------
def index_to_device(index: np.ndarray, device: int = 0):
    """A flat int64 device copy of a host index array (one host->device copy into a pooled
    block, Note [cuda pool]). Callers hold it until the kernel reading its ``buffer`` is
    queued, so the block cannot be handed out again before."""
    flat = np.ascontiguousarray(np.asarray(index).reshape(-1), dtype=np.int64)
    return cuda_backend.to_device(flat, device)


def _dims(a: CudaArray) -> tuple:
    """``(shape, strides)`` tuples for a kernel; a 0-d array acts as shape ``(1,)``."""
    return (a.shape, a.elem_strides) if a.ndim else ((1,), (0,))


def _launch(kern, n: int, device: int, *args) -> None:
    if n == 0:
        return
    blocks, threads = cuda_backend._launch_config(n)
    with cuda.gpus[device]:
        kern[blocks, threads](n, *args)


# --- kernels -------------------------------------------------------------------------------
_offset = cuda_backend.strided_offset


@cuda.jit
def _take_kernel(n, pos, src, src_off, src_shape, src_st, out):
    """``out[i] = src.flat[pos[i]]`` for ``i < n``: position ``pos[i]`` (C order over
    ``src_shape``) unravelled and dotted with ``src``'s element strides."""
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        out[i] = src[src_off + _offset(pos[i], src_shape, src_st)]
        i += step


@cuda.jit
def _put_kernel(n, pos, sel, has_sel, vals, v_off, v_shape, v_st, out, o_off, o_shape, o_st):
    """``out.flat[pos[i]] = vals.flat[i]`` for the writes ``i = sel[k]`` (``k < n``; every
    ``i = k`` when not ``has_sel``). ``vals`` is read through its (broadcast) strides over
    ``v_shape``; the positions are distinct, so no two threads write one element."""
    k = cuda.grid(1)
    step = cuda.gridsize(1)
    while k < n:
        i = sel[k] if has_sel else k
        out[o_off + _offset(pos[i], o_shape, o_st)] = vals[v_off + _offset(i, v_shape, v_st)]
        k += step


@cuda.jit
def _put_add_kernel(n, pos, vals, v_off, v_shape, v_st, out, o_off, o_shape, o_st):
    """``out.flat[pos[i]] += vals.flat[i]`` for ``i < n``, atomically (repeated positions
    accumulate)."""
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        cuda.atomic.add(out, o_off + _offset(pos[i], o_shape, o_st),
                        vals[v_off + _offset(i, v_shape, v_st)])
        i += step


@cuda.jit
def _dim_gather_kernel(n, shape, dim, src, src_off, src_st, idx, idx_st, out):
    """Gather along ``dim`` into the contiguous ``out`` of ``shape``: for the element at
    coordinates ``c``, ``out[c] = src[c with c[dim] replaced by idx[c . idx_st]]``.
    ``index_select``: ``idx_st`` is 1 on ``dim`` and 0 elsewhere; ``gather``: ``idx`` has
    ``shape`` (contiguous strides)."""
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        p = src_off
        q = 0
        for d in range(len(shape) - 1, -1, -1):
            c = rem % shape[d]
            rem = rem // shape[d]
            q += c * idx_st[d]
            if d != dim:
                p += c * src_st[d]
        out[i] = src[p + idx[q] * src_st[dim]]
        i += step


@cuda.jit
def _dim_scatter_add_kernel(n, shape, dim, src, src_off, src_st, idx, idx_st, alpha,
                            out, out_off, out_st):
    """Scatter-add along ``dim``, the adjoint of ``_dim_gather_kernel``: for every ``c`` in
    ``shape``, ``out[c with c[dim] replaced by idx[c . idx_st]] += alpha * src[c]``
    (atomically: repeated indices accumulate)."""
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        p = src_off
        po = out_off
        q = 0
        for d in range(len(shape) - 1, -1, -1):
            c = rem % shape[d]
            rem = rem // shape[d]
            q += c * idx_st[d]
            p += c * src_st[d]
            if d != dim:
                po += c * out_st[d]
        cuda.atomic.add(out, po + idx[q] * out_st[dim], src[p] * alpha)
        i += step


# --- entry points (host side) --------------------------------------------------------------
def take(src: CudaArray, pos: np.ndarray) -> CudaArray:
    """``src.flat[pos]`` (C-order positions, already valid) as a new contiguous array shaped
    like ``pos``."""
    out = cuda_backend.empty(np.shape(pos), src.dtype, src.index)
    dev = index_to_device(pos, src.index)
    shape, st = _dims(src)
    _launch(_take_kernel, out.size, src.index, dev.buffer, src.buffer, src.offset, shape, st,
            out.buffer)
    return out


def _values(vals, shape, dtype, index) -> CudaArray:
    """``vals`` (a CudaArray or a number) as a device array of ``dtype`` viewed with
    ``shape`` (broadcast)."""
    if not isinstance(vals, CudaArray):
        vals = cuda_backend.full((), vals, dtype, index)
    elif vals.dtype != dtype:
        vals = vals.astype(dtype)
    return vals.broadcast_to(tuple(shape))


def put(out: CudaArray, pos: np.ndarray, vals, accumulate: bool = False,
        keep: np.ndarray | None = None) -> CudaArray:
    """In place ``out.flat[pos] = vals`` (``vals`` broadcast to ``pos``'s shape, cast to
    ``out``'s dtype): ``+=`` with repeats accumulating when ``accumulate``, else only the
    writes ``keep`` marks (the last write to each element; None: all, no repeats)."""
    pos = np.asarray(pos)
    v = _values(vals, pos.shape, out.dtype, out.index)
    vshape, vst = _dims(v)
    oshape, ost = _dims(out)
    dev = index_to_device(pos, out.index)
    if accumulate:
        _launch(_put_add_kernel, pos.size, out.index, dev.buffer, v.buffer, v.offset, vshape, vst,
                out.buffer, out.offset, oshape, ost)
        return out
    if keep is None:
        _launch(_put_kernel, pos.size, out.index, dev.buffer, dev.buffer, False, v.buffer,
                v.offset, vshape, vst, out.buffer, out.offset, oshape, ost)
    else:
        sel = index_to_device(np.flatnonzero(np.asarray(keep).reshape(-1)), out.index)
        _launch(_put_kernel, sel.size, out.index, dev.buffer, sel.buffer, True,
                v.buffer, v.offset, vshape, vst, out.buffer, out.offset, oshape, ost)
    return out


def _dim_index(index: np.ndarray, shape: tuple, dim: int, vector: bool, device: int):
    """The device copy of an index and its strides over ``shape`` (Note [cuda index
    positions]): a vector is read along ``dim`` only, a full index with its own layout."""
    dev = index_to_device(index, device)
    if vector:
        st = tuple(1 if k == dim else 0 for k in range(len(shape)))
    else:
        st = cuda_backend.contiguous_strides(np.shape(index))
    return dev, st


def dim_gather(src: CudaArray, dim: int, index: np.ndarray, vector: bool) -> CudaArray:
    """``index_select`` (``vector``: ``out[..., i, ...] = src[..., index[i], ...]``) or
    ``gather`` (``out[c] = src[c with c[dim] = index[c]]``); indices already validated."""
    if vector:
        shape = src.shape[:dim] + (index.size,) + src.shape[dim + 1:]
    else:
        shape = tuple(index.shape)
    out = cuda_backend.empty(shape, src.dtype, src.index)
    if out.size == 0:
        return out
    dev, ist = _dim_index(index, shape, dim, vector, src.index)
    _launch(_dim_gather_kernel, out.size, src.index, shape, dim, src.buffer, src.offset,
            src.elem_strides, dev.buffer, ist, out.buffer)
    return out


def dim_scatter_add(out: CudaArray, dim: int, index: np.ndarray, src: CudaArray,
                    vector: bool, alpha=1) -> CudaArray:
    """In place, the adjoint of ``dim_gather``: ``index_add`` (``vector``:
    ``out[..., index[i], ...] += alpha * src[..., i, ...]``) or ``scatter_add``
    (``out[c with c[dim] = index[c]] += src[c]`` for ``c`` within ``index``'s shape)."""
    if src.dtype != out.dtype:
        src = src.astype(out.dtype)
    shape = tuple(src.shape) if vector else tuple(index.shape)
    n = int(np.prod(shape)) if shape else 1
    if n == 0:
        return out
    dev, ist = _dim_index(index, shape, dim, vector, out.index)
    _launch(_dim_scatter_add_kernel, n, out.index, shape, dim, src.buffer, src.offset,
            src.elem_strides, dev.buffer, ist, out.dtype.type(alpha), out.buffer, out.offset,
            out.elem_strides)
    return out
