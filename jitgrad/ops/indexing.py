"""Indexing: ``x[index]`` (getitem) and ``x[index] = value`` (setitem), with NumPy's semantics.

Basic indexing (ints, slices, None, Ellipsis) returns a view sharing storage and the version
counter; advanced indexing (integer/boolean arrays or Tensors, lists, Python bools) copies.

Derivative of ``y = x[index]``: ``dx = index_backward(g)``, i.e. zeros of ``x``'s shape with
``g`` scattered back (``np.add.at`` for advanced indices, so repeated indices accumulate).
``index_backward`` is itself a registry op whose derivative is ``gg[index]``, so double
backward works.

Node names follow PyTorch's last applied op: ``x[0]`` SelectBackward0, ``x[1:]``
SliceBackward0, ``x[None]`` UnsqueezeBackward0, ``x[...]`` AliasBackward0, anything advanced
IndexBackward0.
"""
from __future__ import annotations

import math
import operator
import re

import numpy as np

from ..kernels.cpu import pool
from .core import dispatch
from . import indexing_cuda
from . import shape as _shape
from .core.registry import LINEAR, def_composite, public
# the helpers indexing, scatter and the CUDA forwards share (the public ones re-exported here)
from .index_common import (batch_all, broadcast, broadcast_value, check_basic,  # noqa: F401
                           copy_array, host_index, index_kernels, may_repeat, positions, reword,
                           winners, write_flat)

_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
              "are valid indices (got {})")
_INDEX_DTYPE_MSG = "tensors used as indices must be long, int, byte or bool tensors"


# --- index normalisation -------------------------------------------------------------------
def _index_array(a) -> np.ndarray:
    a = np.asarray(host_index(a))
    if a.dtype.kind in "iub":
        return a
    if a.size == 0 and a.dtype.kind == "f":  # [] -> an empty integer index, as NumPy
        return a.astype(np.intp)
    raise IndexError(_INDEX_DTYPE_MSG)


def _element(item):
    """One index component as NumPy understands it."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, dispatch.Tensor):
        if hasattr(item, "_bt_inner"):  # a BatchedTensor (func/_batching.py) holds no values
            raise NotImplementedError("vmap: indexing with a batched index tensor is not "
                                      "supported (getitem); index outside vmap")
        return _index_array(item._host("indexing with a tensor"))  # the values are the index
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, slice):
        conv = [None if v is None else operator.index(v)
                for v in (item.start, item.stop, item.step)]
        if conv[2] == 0:
            raise ValueError("slice step cannot be zero")
        return slice(*conv)
    if isinstance(item, (np.ndarray, list, tuple)):
        return _index_array([_element(i) if isinstance(i, dispatch.Tensor) else i for i in item]
                            if isinstance(item, (list, tuple)) else item)
    try:
        return operator.index(item)
    except TypeError:
        raise IndexError(_BAD_INDEX.format(type(item).__name__)) from None


_PLAIN = (int, type(None))


def normalize_index(index) -> tuple:
    """``(index tuple, kind)``; kind is "advanced" or the name of the last basic op applied
    ("select", "slice", "unsqueeze", "alias"). Basic indices get a trailing Ellipsis so that
    an all-int index yields a 0-d view rather than a NumPy scalar."""
    kind = type(index)
    if kind is int:  # the common basic indices, already in NumPy's terms
        return (index, Ellipsis), "select"
    if kind is slice:
        step = index.step
        if (step is None or (type(step) is int and step != 0)) and (
                type(index.start) in _PLAIN and type(index.stop) in _PLAIN):
            return (index, Ellipsis), "slice"
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(_element(i) for i in items)
    if any(isinstance(i, (np.ndarray, bool)) for i in items):
        return items, "advanced"
    kind = "alias"
    for i in items:
        if i is None:
            kind = "unsqueeze"
        elif isinstance(i, slice):
            kind = "slice"
        elif i is not Ellipsis:
            kind = "select"
    if not any(i is Ellipsis for i in items):
        items = items + (Ellipsis,)
    return items, kind


# --- getitem -------------------------------------------------------------------------------
def _getitem_fwd(ctx, a, index, kind):
    ctx.input_shape = a.shape
    try:
        return a[index]
    except IndexError as e:
        raise IndexError(reword(e)) from None


def _getitem_back(ctx, g):
    if dispatch.records_nothing(g):  # a plain backward: the same zeros and writes, unrecorded
        return (dispatch.Tensor._make(
            _index_backward_fwd(None, g._data, ctx.input_shape, ctx.index, ctx.kind)),)
    return (index_backward(g, ctx.input_shape, ctx.index, ctx.kind),)


_NODE_NAMES = {"select": "SelectBackward0", "slice": "SliceBackward0",
               "unsqueeze": "UnsqueezeBackward0", "alias": "AliasBackward0",
               "advanced": "IndexBackward0"}
def _batch_last(index) -> tuple:
    """``index`` extended to leave one more, trailing, dim untouched. Put the batch dim of vmap
    there: NumPy keeps a trailing untouched dim last whatever the advanced indices do, so the
    example dims come out exactly as they would unbatched (func/_batching.py)."""
    if any(i is Ellipsis for i in index):
        return tuple(index) + (slice(None),)
    return tuple(index) + (Ellipsis,)


def _to_back(t):
    return dispatch.composite(_shape.PERMUTE, t, dims=tuple(range(1, t.ndim)) + (0,))


def _to_front(t):
    return dispatch.composite(_shape.PERMUTE, t, dims=(t.ndim - 1,) + tuple(range(t.ndim - 1)))


def _getitem_batch(args, batched, index, kind):
    return _to_front(dispatch.composite(GETITEM[kind], _to_back(args[0]), index=_batch_last(index),
                                        kind=kind))


GETITEM = {kind: def_composite(f"getitem_{kind}", node, ("x",), _getitem_fwd, _getitem_back,
                               attrs=("index", "kind"), view=kind != "advanced", jvp=LINEAR,
                               batch_rule=_getitem_batch,
                               cuda_forward=indexing_cuda.getitem_forward, complex_ok=True)
           for kind, node in _NODE_NAMES.items()}
_SLICE = GETITEM["slice"]


def getitem(x, index):
    """``x[index]`` with NumPy semantics (result shapes follow NumPy's advanced-indexing rules).

    Forward: ``y = x[index]`` (a view for basic indices, a copy for advanced ones).
    Derivative: ``dx = zeros_like(x); dx[index] += g`` (repeated indices accumulate).
    """
    if type(index) is slice:  # ``x[a:b]``, the commonest index: ``normalize_index``'s case, inline
        step, start, stop = index.step, index.start, index.stop
        if ((step is None or (type(step) is int and step != 0))
                and (start is None or type(start) is int) and (stop is None or type(stop) is int)):
            idx = (index, Ellipsis)
            out = dispatch.basic_view(_SLICE, x, idx, "slice")
            if out is not None:
                return out
    if type(x) is not dispatch.Tensor:
        x = dispatch.operand(x, "getitem")
        if not isinstance(x, dispatch.Tensor):
            raise TypeError(f"getitem: expected a Tensor, got {type(x).__name__}")
    idx, kind = normalize_index(index)
    if kind != "advanced":
        out = dispatch.basic_view(GETITEM[kind], x, idx, kind)
        if out is not None:  # Note [eager fast path] (ops/core/fastpath.py)
            return out
    return dispatch.composite(GETITEM[kind], x, index=idx, kind=kind)


def _index_backward_fwd(ctx, g, shape, index, kind):
    out = pool.zeros(shape, g.dtype)
    if kind == "advanced":
        np.add.at(out, index, g)
    else:
        out[index] = g
    return out


def _index_backward_back(ctx, gg):
    return (dispatch.composite(GETITEM[ctx.kind], gg, index=ctx.index, kind=ctx.kind),)


def _index_backward_batch(args, batched, shape, index, kind):
    g = _to_back(args[0])
    out = dispatch.composite(INDEX_BACKWARD, g, shape=tuple(shape) + (g.shape[-1],),
                             index=_batch_last(index), kind=kind)
    return _to_front(out)


INDEX_BACKWARD = def_composite("index_backward", "IndexPutBackward0", ("g",), _index_backward_fwd,
                               _index_backward_back, attrs=("shape", "index", "kind"), jvp=LINEAR,
                               batch_rule=_index_backward_batch,
                               cuda_forward=indexing_cuda.index_backward_forward, complex_ok=True)


def index_backward(g, shape, index, kind="advanced"):
    """The gradient of ``x[index]`` for ``x`` of ``shape``: ``out = zeros(shape);
    out[index] += g`` (accumulating over repeated indices). Linear in ``g``; its derivative
    is ``gg[index]``. ``index`` is a normalised index (``normalize_index``)."""
    return dispatch.composite(INDEX_BACKWARD, g, shape=tuple(shape), index=index, kind=kind)


def _value_grad(gv, value_shape: tuple):
    """Reduce the gradient of a broadcast value back to the value's own shape."""
    from .reduce import sum_to_shape
    from .shape import reshape

    stripped = tuple(value_shape)
    while len(stripped) > gv.ndim and stripped[0] == 1:
        stripped = stripped[1:]
    gv = sum_to_shape(gv, stripped)
    return gv if tuple(gv.shape) == tuple(value_shape) else reshape(gv, value_shape)


def _keep_only(gv, keep):
    from .binary import where

    if keep is None:
        return gv
    if gv.device != "cpu":
        keep = dispatch.move(keep, gv.device)
    return where(dispatch.Tensor._make(keep), gv, 0.0)


def _take_fwd(ctx, x, index):
    ctx.input_shape = x.shape
    return np.ascontiguousarray(x).reshape(-1)[index]


def _take_back(ctx, g):
    return (put_flat(dispatch.zeros(ctx.input_shape, g.dtype, g.device), ctx.index, g, accumulate=True),)


def _put_write(ctx, out, v, index, accumulate, unique):
    ctx.keep = None if accumulate or unique else winners(index)
    write_flat(out, index, broadcast(v, index.shape), accumulate, ctx.keep)
    return out


def _put_fwd(ctx, x, v, index, accumulate, unique):
    return _put_write(ctx, copy_array(x), v, index, accumulate, unique)


def _put_back(ctx, g):
    need_x, need_v = ctx.needs_input_grad
    gx = gv = None
    if need_x:
        gx = g if ctx.accumulate else put_flat(
            g, ctx.index, dispatch.zeros(ctx.index.shape, g.dtype, g.device), unique=True)
    if need_v:
        gv = _keep_only(take_flat(g, ctx.index), ctx.keep)
    return gx, gv


# take/put address each example's flat positions: offset them by b * numel(example).
def _flat_offsets(index, size, n):
    return np.arange(size).reshape((size,) + (1,) * index.ndim) * n + index[None]


def _take_batch(args, batched, index):
    x = args[0]
    return dispatch.composite(TAKE, x, index=_flat_offsets(index, x.shape[0],
                                                           math.prod(x.shape[1:])))


def _put_batch(args, batched, index, accumulate, unique):
    size, (x, src) = batch_all(args, batched)
    k = index.ndim - (src.ndim - 1)  # the source broadcasts to index's shape per example
    if k > 0:
        src = _shape.reshape(src, (size,) + (1,) * k + tuple(src.shape[1:]))
    return dispatch.composite(PUT, x, src, index=_flat_offsets(index, size, math.prod(x.shape[1:])),
                              accumulate=accumulate, unique=unique)


# forward mode: linear in all their tensor inputs
TAKE = def_composite("take", "TakeBackward0", ("x",), _take_fwd, _take_back, attrs=("index",),
                     jvp=LINEAR, batch_rule=_take_batch, cuda_forward=indexing_cuda.take_forward,
                     method=True, export=True)
PUT = def_composite("put", "PutBackward0", ("x", "source"), _put_fwd, _put_back,
                    attrs=("index", "accumulate", "unique"), jvp=LINEAR, batch_rule=_put_batch,
                    cuda_forward=_put_fwd)


def take_flat(x, index: np.ndarray):
    """``x.flatten()[index]`` for a valid intp ``index`` (no checks). Derivative: ``g`` added
    into zeros at ``index``."""
    return dispatch.composite(TAKE, x, index=index)


def put_flat(x, index: np.ndarray, source, accumulate=False, unique=False):
    """A copy of ``x`` with ``source`` (broadcast to ``index.shape``) written at the flat
    positions ``index``: added (``accumulate``) or the last write winning. Derivatives: ``g``
    (zeroed where overwritten) and ``g.flatten()[index]`` (0 for the writes that lost).
    ``unique`` promises that ``index`` has no repeats (skips the check)."""
    return dispatch.composite(PUT, x, source, index=index, accumulate=accumulate, unique=unique)


def _index_of(name: str, index, kinds="iu") -> np.ndarray:
    if isinstance(index, dispatch.Tensor):
        a = index._host(f"{name}() with a tensor index")
    else:
        a = np.asarray(index)
    if a.dtype.kind not in kinds:
        if a.size == 0 and a.dtype.kind == "f":
            return a.astype(np.intp)
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{dispatch.scalar_type_name(a.dtype)}")
    return a


@public(TAKE)
def take(input, index, *, out=None):
    """``x.flatten()[index]`` (negative indices count from the end), PyTorch's ``take``.
    Derivative: ``g`` added into zeros of ``x``'s shape at ``index``. ``out``: write the result
    there (no autograd)."""
    input = dispatch.tensor_operand(input, "take")
    idx = _index_of("take", index).astype(np.intp)
    n = input._data.size
    bad = (idx >= n) | (idx < -n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad].reshape(-1)[0])} on "
                         f"a tensor of {n} elements.")
    return dispatch.composite(TAKE, input, index=idx % max(n, 1), out=out)


# --- index_put / setitem -------------------------------------------------------------------
def _index_put_write(ctx, out, v, index, accumulate):
    pos = positions(out.shape, index)
    vals = broadcast_value(v, pos.shape)
    ctx.pos, ctx.value_shape = pos, v.shape
    ctx.keep = None if accumulate or not may_repeat(index) else winners(pos)
    write_flat(out, pos, vals, accumulate, ctx.keep)
    return out


def _index_put_fwd(ctx, x, v, index, accumulate):
    return _index_put_write(ctx, copy_array(x), v, index, accumulate)


def _index_put_back(ctx, g):
    need_x, need_v = ctx.needs_input_grad
    gx = gv = None
    if need_x:
        gx = g if ctx.accumulate else put_flat(
            g, ctx.pos, dispatch.zeros(ctx.pos.shape, g.dtype, g.device), unique=True)
    if need_v:
        gv = _value_grad(_keep_only(take_flat(g, ctx.pos), ctx.keep), ctx.value_shape)
    return gx, gv


def _index_put_batch(args, batched, index, accumulate):
    """The batch goes last, past every indexed dim (see ``_batch_last``); the values get it
    last too, so they broadcast against ``x[index]`` per example."""
    (x, v), (bx, bv) = args, batched
    size = (x if bx else v).shape[0]
    if not bx:
        x = _shape.expand(_shape.unsqueeze(x, 0), (size,) + tuple(x.shape))
    v = _to_back(v) if bv else _shape.unsqueeze(v, -1)
    out = dispatch.composite(INDEX_PUT, _to_back(x), v, index=_batch_last(index),
                             accumulate=accumulate)
    return _to_front(out)


INDEX_PUT = def_composite("index_put", "IndexPutBackward0", ("x", "values"), _index_put_fwd,
                          _index_put_back, attrs=("index", "accumulate"), jvp=LINEAR,
                          batch_rule=_index_put_batch, cuda_forward=_index_put_fwd, method=True)
WRITERS = {"index_put": _index_put_write, "put": _put_write}


def index_put_index(name: str, indices) -> tuple:
    """PyTorch's ``indices`` (a tuple/list of index tensors) as a NumPy index tuple."""
    if isinstance(indices, dispatch.Tensor) or not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    idx, _ = normalize_index(tuple(indices))
    return idx


@public(INDEX_PUT)
def index_put(x, indices, values, accumulate=False):
    """``out = x.clone(); out[indices] = values`` (or ``+=`` with repeats accumulating when
    ``accumulate``); without ``accumulate`` the last write to a repeated index wins, as NumPy.
    Derivatives: ``g`` zeroed where written (``g`` itself when accumulating) and
    ``g[indices]`` for ``values`` (0 for writes that another one overwrote)."""
    x = dispatch.tensor_operand(x, "index_put")
    values = dispatch.tensor_operand(values, "index_put")
    return dispatch.composite(INDEX_PUT, x, values, index=index_put_index("index_put", indices),
                              accumulate=bool(accumulate))


def setitem_untracked(x, idx, kind, value) -> None:
    """``x[idx] = value`` with no autograd history (``inplace.setitem`` decides): NumPy's
    semantics (broadcast, cast, last write wins), then the version counter bumps."""
    T = dispatch.Tensor
    if isinstance(value, T):
        val = value._data
    elif isinstance(value, (bool, int, float, complex, np.ndarray, np.generic)):
        val = value
    else:
        val = np.asarray(value)
    dispatch.check_writable(x)
    if dispatch.device_of(x._data) != "cpu":
        _setitem_cuda(x, idx, kind, val)
        x._version_counter.bump()
        return
    try:
        x._data[idx] = val
    except IndexError as e:
        raise IndexError(reword(e)) from None
    except ValueError as e:
        m = re.match(r"could not broadcast input array from shape (\(.*?\)) into shape (\(.*?\))",
                     str(e))
        if m is None:
            raise
        src, dst = ([int(v) for v in re.findall(r"\d+", s)] for s in m.groups())
        raise RuntimeError(f"shape mismatch: value tensor of shape {src} cannot be broadcast to "
                           f"indexing result of shape {dst}") from None
    x._version_counter.bump()


def _setitem_cuda(x, idx, kind, val) -> None:
    """``x[idx] = val`` for a CUDA tensor (no autograd): a strided copy into the view for a
    basic index, a scatter of the surviving writes for an advanced one (last write wins)."""
    be = dispatch.cuda_backend()
    data = x._data
    if isinstance(val, (np.ndarray, list, tuple)) and np.ndim(val):
        val = be.to_device(np.asarray(val), data.index)  # host values: one upload
    elif isinstance(val, np.ndarray):
        val = val[()]
    if isinstance(val, be.CudaArray) and dispatch.shares_memory(val, data):
        val = val.copy()  # x[1:] = x[:-1] reads the old values (NumPy buffers the overlap)
    if kind == "advanced":
        pos = positions(data.shape, idx)
        if isinstance(val, be.CudaArray):
            val = broadcast_value(val, pos.shape)
        index_kernels().put(data, pos, val, False, winners(pos) if may_repeat(idx) else None)
        return
    check_basic(idx, data.ndim)
    target = data[idx]
    if isinstance(val, be.CudaArray):
        be.copy_into(target, broadcast_value(val, target.shape))
    else:
        be.fill(target, val)
