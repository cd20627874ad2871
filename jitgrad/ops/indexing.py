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

import operator
import re

import numpy as np

from ..device import pool
from . import dispatch
from ..autograd.grad_mode import is_grad_enabled
from .registry import def_composite

_BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
              "are valid indices (got {})")
_INDEX_DTYPE_MSG = "tensors used as indices must be long, int, byte or bool tensors"


# --- index normalisation -------------------------------------------------------------------
def _index_array(a) -> np.ndarray:
    a = np.asarray(a)
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
        return _index_array(item._data)
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


def normalize_index(index) -> tuple:
    """``(index tuple, kind)``; kind is "advanced" or the name of the last basic op applied
    ("select", "slice", "unsqueeze", "alias"). Basic indices get a trailing Ellipsis so that
    an all-int index yields a 0-d view rather than a NumPy scalar."""
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


def _reword(err: Exception) -> str:
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


# --- getitem -------------------------------------------------------------------------------
def _getitem_fwd(ctx, a, index, kind):
    ctx.input_shape = a.shape
    try:
        return a[index]
    except IndexError as e:
        raise IndexError(_reword(e)) from None


def _getitem_back(ctx, g):
    return (index_backward(g, ctx.input_shape, ctx.index, ctx.kind),)


_NODE_NAMES = {"select": "SelectBackward0", "slice": "SliceBackward0",
               "unsqueeze": "UnsqueezeBackward0", "alias": "AliasBackward0",
               "advanced": "IndexBackward0"}
GETITEM = {kind: def_composite(f"getitem_{kind}", node, ("x",), _getitem_fwd, _getitem_back,
                               attrs=("index", "kind"), view=kind != "advanced")
           for kind, node in _NODE_NAMES.items()}


def getitem(x, index):
    """``x[index]`` with NumPy semantics (result shapes follow NumPy's advanced-indexing rules).

    Forward: ``y = x[index]`` (a view for basic indices, a copy for advanced ones).
    Derivative: ``dx = zeros_like(x); dx[index] += g`` (repeated indices accumulate).
    """
    x = dispatch.operand(x, "getitem")
    if not isinstance(x, dispatch.Tensor):
        raise TypeError(f"getitem: expected a Tensor, got {type(x).__name__}")
    idx, kind = normalize_index(index)
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


INDEX_BACKWARD = def_composite("index_backward", "IndexPutBackward0", ("g",), _index_backward_fwd,
                               _index_backward_back, attrs=("shape", "index", "kind"))


def index_backward(g, shape, index, kind="advanced"):
    """The gradient of ``x[index]`` for ``x`` of ``shape``: ``out = zeros(shape);
    out[index] += g`` (accumulating over repeated indices). Linear in ``g``; its derivative
    is ``gg[index]``. ``index`` is a normalised index (``normalize_index``)."""
    return dispatch.composite(INDEX_BACKWARD, g, shape=tuple(shape), index=index, kind=kind)


# --- setitem -------------------------------------------------------------------------------
SETITEM_GRAD_MSG = (
    "setitem: assigning into a tensor that requires grad (or a value that requires grad) is not "
    "supported yet; use jitgrad.where / cat, or wrap the assignment in jitgrad.no_grad()")


def setitem(x, index, value):
    """``x[index] = value`` in place (NumPy semantics: ``value`` is broadcast to ``x[index]``
    and cast to ``x``'s dtype; with repeated indices the last write wins). Bumps the version
    counter shared by ``x`` and its views. Not differentiable yet: with grad mode on it refuses
    tensors that require grad (use it under ``no_grad`` to update parameters)."""
    T = dispatch.Tensor
    if is_grad_enabled():
        if x._requires_grad and x._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        base = x._base
        if base is not None and base._requires_grad and base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if x._requires_grad or (isinstance(value, T) and value._requires_grad):
            raise RuntimeError(SETITEM_GRAD_MSG)
    idx, _ = normalize_index(index)
    if isinstance(value, T):
        val = value._data
    elif isinstance(value, (bool, int, float, complex, np.ndarray, np.generic)):
        val = value
    else:
        val = np.asarray(value)
    data = x._data
    if not data.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.")
    try:
        data[idx] = val
    except IndexError as e:
        raise IndexError(_reword(e)) from None
    except ValueError as e:
        m = re.match(r"could not broadcast input array from shape (\(.*?\)) into shape (\(.*?\))",
                     str(e))
        if m is None:
            raise
        src, dst = ([int(v) for v in re.findall(r"\d+", s)] for s in m.groups())
        raise RuntimeError(f"shape mismatch: value tensor of shape {src} cannot be broadcast to "
                           f"indexing result of shape {dst}") from None
    x._version_counter.bump()
