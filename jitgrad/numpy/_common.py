"""The helpers every module of ``jitgrad.numpy`` shares: coercing arguments to Tensors and
reading their values for NumPy.

* ``to_tensor(x, dtype)``: a Tensor for any argument (Tensors pass through; containers holding
  Tensors are stacked, recording the graph; anything else becomes a constant);
* ``cast``/``cast_to``: a recorded dtype cast (the gradient is cast back);
* ``constant``/``constant_array``: constant Tensors of Tensor-free data (``constant_maker``:
  ``jitgrad.compile`` treats them as constants of the traced program);
* ``host_data``/``on_device``: a Tensor's values for NumPy (through ``Tensor._host``, which
  jitgrad.compile watches) and NumPy's results moved back to the operands' device;
* ``normalize_axes``/``slice_axis``: axis arguments as non-negative tuples, a slice along one
  axis.

The topic modules import these under their former private names (``to_tensor as _t``...).
"""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from .. import dtypes as _dtypes
from ..ops import creation as _creation
from ..ops import unary as _unary_ops
from ..ops.core import upper as _upper
from ..tensor import Tensor

__all__ = ["cast", "to_tensor", "constant", "constant_array", "host_data", "on_device",
           "normalize_axes", "cast_to", "slice_axis"]


def cast(x, dtype):
    """``x`` cast to the NumPy ``dtype`` (recorded: the gradient is cast back)."""
    return _unary_ops.cast(x, _dtypes.to_dtype(_np.dtype(dtype)))


def to_tensor(x, dtype=None):
    """A Tensor for ``x`` (Tensors pass through; arrays, lists and numbers are wrapped as
    constants keeping NumPy's dtype: Python floats are float64). Containers holding Tensors at
    any depth are stacked level by level, recording the graph (``creation.stack_nested``)."""
    if isinstance(x, Tensor):
        out = x
    elif _creation.holds_tensor(x):
        out = _creation.stack_nested(x, constant)
    else:
        return constant(x, dtype)
    return out if dtype is None or out.dtype.np == _np.dtype(dtype) else cast(out, dtype)


@_upper.constant_maker
def constant(x, dtype=None):
    """A constant Tensor holding a copy of the Tensor-free data ``x`` (NumPy's conversion)."""
    return Tensor._make(_creation.checked(_np.array(x, dtype=dtype), "jitgrad.numpy.array()", x))


@_upper.constant_maker
def constant_array(array, like=None):
    """A constant Tensor of ``array``, an ndarray computed from shapes and Python values only
    (a mask, a grid), on ``like``'s device."""
    t = Tensor._make(array)
    return t if like is None or not like.is_cuda else t.to(like.device)


def host_data(x, what):
    """``x``'s values for NumPy (a Tensor's through ``Tensor._host``, which jitgrad.compile
    watches: Note [compile tracing]); ``what`` names the reader."""
    return x._host(what) if isinstance(x, Tensor) else x


def on_device(r, device):
    """Wrapped results moved to ``device`` (None: left on the host)."""
    if device is None:
        return r
    if isinstance(r, Tensor):
        return r.to(device)
    if isinstance(r, (tuple, list)):
        return type(r)(on_device(v, device) for v in r)
    return r


def normalize_axes(axis, ndim):
    """``axis`` (None: all, an int, a tuple or list) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(int(a) % _builtins.max(ndim, 1) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))


def cast_to(x, dtype):
    """``x`` cast to ``dtype`` (``x`` itself when ``dtype`` is None)."""
    return x if dtype is None else cast(x, _np.dtype(dtype))


def slice_axis(a, axis, start, stop):
    """``a[start:stop]`` along ``axis``."""
    return a[(slice(None),) * axis + (slice(start, stop),)]
