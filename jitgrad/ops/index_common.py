"""What the indexing families share: ``ops/indexing.py`` (getitem, take/put, index_put,
setitem), ``ops/scatter.py``, ``ops/scatter_reduce.py`` and the CUDA forwards in
``ops/indexing_cuda.py``. They import this module and not each other's private helpers, so the
CUDA sibling does not import its family back (``ops/indexing.py`` re-exports the public names).

* index arrays: ``host_index`` (a CUDA index comes to the host, where it is validated),
  ``copy_array``, ``index_kernels`` (the CUDA index kernels);
* NumPy's indexing errors in PyTorch's words: ``reword``, and ``check_basic`` for the CUDA path;
* flat positions, the machinery of take/put, index_put, scatter and view gradients:
  ``positions`` (the C-order flat index of every element of ``a[index]``), ``winners`` (which
  writes survive when the last write wins), ``write_flat``, ``broadcast_value``;
* vmap: ``batch_all`` (the unbatched arguments expanded to the batch).
"""
from __future__ import annotations

import re

import numpy as np

from ..kernels.cpu import pool
from .core import dispatch
from . import shape as _shape


# --- index arrays --------------------------------------------------------------------------
def host_index(a):
    """An index array on the host. A CUDA index tensor is copied to the host (a device->host
    sync, as PyTorch's): indices are validated there with the CPU path's messages, a boolean
    mask's count of True values sets the result's shape, and the flat positions the kernels
    read are built from them (Note [cuda index positions] in kernels/cuda/index.py)."""
    return a.get() if dispatch.device_of(a) != "cpu" else a


def copy_array(a):
    """A contiguous copy of a NumPy or CUDA array (the pooled one on the CPU)."""
    return pool.copy(a) if dispatch.device_of(a) == "cpu" else a.copy()


def index_kernels():
    """``kernels.cuda.index`` (reached lazily: Note [lazy cuda])."""
    return dispatch.cuda_kernels("index")


# --- messages ------------------------------------------------------------------------------
def reword(err: Exception) -> str:
    """NumPy's indexing messages in PyTorch's words."""
    msg = str(err)
    m = re.match(r"too many indices for array: array is (\d+)-dimensional", msg)
    if m:
        return f"too many indices for tensor of dimension {m.group(1)}"
    m = re.match(r"boolean index did not match indexed array along (?:axis|dimension) (\d+); "
                 r"size of (?:axis|dimension) is (\d+) but size of corresponding boolean "
                 r"(?:axis|dimension) is (\d+)", msg)
    if m:
        d, n, k = m.groups()
        return (f"The shape of the mask [{k}] at index {d} does not match the shape of the "
                f"indexed tensor [{n}] at index {d}")
    return msg.replace("axis", "dimension").replace("arrays", "tensors").replace("array", "tensor")


def check_basic(index, ndim: int) -> None:
    """NumPy's errors for a basic index a CUDA array cannot take (the CPU path gets them from
    NumPy itself)."""
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if sum(1 for i in index if i is not None and i is not Ellipsis) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")


# --- flat positions ------------------------------------------------------------------------
def positions(shape: tuple, index) -> np.ndarray:
    """The C-order flat index into an array of ``shape`` of every element of ``a[index]``
    (an intp array shaped like ``a[index]``), built without materialising ``a``."""
    try:
        pos = np.array(np.broadcast_to(np.intp(0), shape)[index], dtype=np.intp)
        step = 1
        for k in range(len(shape) - 1, -1, -1):
            if shape[k] > 1:
                grid = [1] * len(shape)
                grid[k] = shape[k]
                coord = np.broadcast_to(np.arange(shape[k], dtype=np.intp).reshape(grid), shape)
                pos += coord[index] * step
            step *= shape[k]
    except IndexError as e:
        raise IndexError(reword(e)) from None
    return pos


def may_repeat(index) -> bool:
    """Only integer arrays can name an element twice (masks, slices and ints cannot)."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, np.ndarray) and i.dtype.kind != "b" for i in items)


def winners(pos) -> np.ndarray | None:
    """Which writes to the flat positions ``pos`` (in C order) survive when the last write to
    an element wins; None when every write does (no repeated position)."""
    flat = pos.reshape(-1)
    if flat.size < 2:
        return None
    order = np.argsort(flat, kind="stable")
    s = flat[order]
    dup = s[1:] == s[:-1]
    if not dup.any():
        return None
    keep = np.ones(flat.size, dtype=bool)
    keep[order[:-1][dup]] = False  # every write followed by another one to the same element
    return keep.reshape(pos.shape)


def write_flat(arr: np.ndarray, pos, vals, accumulate: bool, keep=None) -> None:
    """``arr.flat[pos] = vals`` in place (C-order positions, any layout of ``arr``): added with
    repeats accumulating, or only the ``keep`` writes (last write wins)."""
    if dispatch.device_of(arr) != "cpu":  # vals: a (broadcast) CUDA array or a number
        index_kernels().put(arr, pos, vals, accumulate, keep)
        return
    pos = pos.reshape(-1)
    vals = np.asarray(vals).reshape(-1).astype(arr.dtype, copy=False)
    if keep is not None:
        keep = keep.reshape(-1)
        pos, vals = pos[keep], vals[keep]
    flat = arr.reshape(-1) if arr.flags.c_contiguous else None
    if flat is not None and (arr.size == 0 or np.shares_memory(flat, arr)):
        target, key = flat, pos
    else:
        target, key = arr, np.unravel_index(pos, arr.shape)
    if accumulate:
        np.add.at(target, key, vals)
    else:
        target[key] = vals


def broadcast_value(v: np.ndarray, shape: tuple) -> np.ndarray:
    """``v`` broadcast to an indexing result of ``shape`` (leading size-1 dims of ``v`` beyond
    ``shape``'s rank are dropped, as NumPy's assignment does)."""
    src = v
    while v.ndim > len(shape) and v.shape[0] == 1:
        v = v[0]
    try:
        return broadcast(v, shape)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(src.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(shape)}") from None


def broadcast(v, shape: tuple):
    """``np.broadcast_to`` for NumPy and CUDA arrays (ValueError when it does not fit)."""
    if dispatch.device_of(v) == "cpu":
        return np.broadcast_to(v, shape)
    if np.broadcast_shapes(v.shape, tuple(shape)) != tuple(shape):
        raise ValueError(f"cannot broadcast {v.shape} to {tuple(shape)}")
    return v.broadcast_to(shape)


# --- vmap ----------------------------------------------------------------------------------
def batch_all(args, batched):
    """``(batch size, args)`` with the unbatched arguments expanded to the batch size (a vmap
    rule that needs every argument batched)."""
    size = next(a.shape[0] for a, b in zip(args, batched) if b)
    return size, [a if b else _shape.expand(_shape.unsqueeze(a, 0), (size,) + tuple(a.shape))
                  for a, b in zip(args, batched)]


def flat_index(geom: tuple) -> np.ndarray:
    """For each element of the view, the C-order flat index of the root element it aliases
    (an intp array of the view's shape)."""
    rshape, rstrides, itemsize, offset, vshape, vstrides = geom
    rel = np.asarray(offset, dtype=np.intp)
    for k, (n, st) in enumerate(zip(vshape, vstrides)):
        shp = [1] * len(vshape)
        shp[k] = n
        rel = rel + (np.arange(n, dtype=np.intp) * st).reshape(shp)
    rel = np.broadcast_to(rel, vshape)
    cstrides, acc = [0] * len(rshape), 1
    for k in range(len(rshape) - 1, -1, -1):
        cstrides[k] = acc
        acc *= rshape[k]
    if all(n == 1 or st == c * itemsize for n, st, c in zip(rshape, rstrides, cstrides)):
        return rel // itemsize  # a C-contiguous root: the byte offset is the flat index
    # Any other root: undo its strides, largest first (negative strides count from the end).
    dims = sorted((k for k in range(len(rshape)) if rshape[k] > 1), key=lambda k: -abs(rstrides[k]))
    if any(rstrides[k] == 0 for k in dims):
        raise RuntimeError("jitgrad: cannot locate a view in a base whose elements overlap in "
                           "memory (a base made from an expanded array); clone() the base first")
    r = rel + sum((rshape[k] - 1) * -rstrides[k] for k in dims if rstrides[k] < 0)
    out = np.zeros(vshape, dtype=np.intp)
    for k in dims:
        q, r = np.divmod(r, abs(rstrides[k]))
        if np.any(q >= rshape[k]):
            raise RuntimeError("jitgrad: a view's elements do not map onto its base's layout")
        out += (q if rstrides[k] > 0 else rshape[k] - 1 - q) * cstrides[k]
    if np.any(r != 0):
        raise RuntimeError("jitgrad: a view's elements do not map onto its base's layout")
    return out
