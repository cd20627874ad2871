"""The Array API (2023.12) names of ``jitgrad.numpy`` that NumPy's own namespace spells
differently or that need the standard's keywords: ``argsort(descending=)``,
``cumulative_sum``/``cumulative_prod`` (``include_initial``), ``unstack``,
``broadcast_arrays``, ``meshgrid``, ``nextafter``, the ``unique_*`` family, the ``bitwise_*``
spellings, ``isin``, ``from_dlpack``, ``finfo``/``iinfo`` for Tensors and jitgrad dtypes, and
``__array_namespace_info__``.

Imported into ``jitgrad.numpy`` (``from ._array_api import *``) after its own functions, which
these use; the protocol table there maps ``numpy.<name>`` to these implementations too.
"""
from __future__ import annotations

from collections import namedtuple as _namedtuple

import numpy as _np

from .. import autograd as _autograd
from ..ops import extrema as _extrema
from ..ops import shape as _shape_ops
from ..tensor import Tensor
from ._passthrough import mark as _mark
from . import _constants, _creation, _join, _reductions, _shape, _sorting
from ._common import constant_array as _constant_array, to_tensor as _t

__all__ = ["argsort", "cumulative_sum", "cumulative_prod", "unstack", "broadcast_arrays",
           "meshgrid", "nextafter", "unique_values", "unique_counts", "unique_inverse",
           "unique_all", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "isin",
           "from_dlpack", "finfo", "iinfo"]

UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _wrap(a):
    return Tensor._make(_np.asarray(a))


@_mark
def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """Indices that sort ``a`` along ``axis`` (an int64 Tensor; no gradient). Stable by default;
    ``descending=True`` keeps ties in their original order (the Array API's rule)."""
    if order is not None:
        raise NotImplementedError("jitgrad.numpy.argsort: order= (structured arrays) is not "
                                  "covered")
    a = _t(a)
    if not a.is_cuda and a.ndim and a.dtype.np.kind in "biuf":  # the argsort row (a
        if axis is None:                               # compiled program sorts each call's data)
            a, axis = _shape_ops.reshape(a, (-1,)), 0
        return _extrema.argsort(a, int(axis) % a.ndim, descending, kind)
    d = a._host("jitgrad.numpy.argsort")
    if axis is None:
        d, axis = d.ravel(), 0
    idx = _sorting.argsort_data(d, int(axis) % max(d.ndim, 1), kind, descending)
    return _wrap(idx.astype(_np.int64))


def _cumulative(fn, x, axis, dtype, include_initial, fill):
    x = _t(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("cumulative_*: axis must be given for arrays with more than one "
                             "dimension")
        axis = 0
    if x.ndim == 0:
        x = _shape_ops.reshape(x, (1,))
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        axis = int(axis) % x.ndim
        shape = list(out.shape)
        shape[axis] = 1
        out = _join.concatenate([_constant_array(_np.full(shape, fill, dtype=out.dtype.np),
                                                 out), out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """``y_k = sum_{j<=k} x_j`` along ``axis`` (``include_initial``: a leading 0); gradient
    ``g_x_j = sum_{k>=j} g_y_k`` (reversed cumulative sum)."""
    return _cumulative(_reductions.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """``y_k = prod_{j<=k} x_j`` along ``axis`` (``include_initial``: a leading 1); gradient
    ``g_x_j = sum_{k>=j} g_y_k prod_{i<=k, i!=j} x_i`` (exact also with zeros)."""
    return _cumulative(_reductions.cumprod, x, axis, dtype, include_initial, 1)


def unstack(x, /, *, axis=0):
    """The slices ``x[..., i, ...]`` along ``axis`` (a tuple of views); each slice's gradient
    lands in its position."""
    x = _t(x)
    axis = int(axis) % x.ndim
    return tuple(_shape_ops.select(x, axis, i) for i in range(x.shape[axis]))


def broadcast_arrays(*arrays):
    """The arrays broadcast to their common shape (a tuple); each gradient is summed back over
    the broadcast dims."""
    ts = [_t(a) for a in arrays]
    shape = _np.broadcast_shapes(*(t.shape for t in ts))
    return tuple(t if tuple(t.shape) == shape else _shape.broadcast_to(t, shape) for t in ts)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate grids from 1-d ``xi`` (``indexing`` ``'xy'`` swaps the first two output
    dims, as NumPy); ``out_k`` is ``x_k`` broadcast, so ``g_x_k`` sums ``g_out_k`` over the
    other dims."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ts = [_shape_ops.reshape(_t(x), (-1,)) for x in xi]
    n = len(ts)
    shape = [t.shape[0] for t in ts]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for k, t in enumerate(ts):
        pos = k
        if indexing == "xy" and n > 1 and k < 2:
            pos = 1 - k
        view = [1] * n
        view[pos] = t.shape[0]
        v = _shape_ops.reshape(t, tuple(view))
        out.append(v if sparse else _shape.broadcast_to(v, tuple(shape)))
    return tuple(out)


def nextafter(x1, x2, /):
    """The next float after ``x1`` towards ``x2``: ``x1`` plus a piecewise-constant ulp step,
    so ``d/dx1 = 1`` and ``d/dx2 = 0``."""
    a, b = _t(x1), _t(x2)
    ad = a._host("jitgrad.numpy.nextafter")
    step = _np.nextafter(ad, b._host("jitgrad.numpy.nextafter")) - ad
    return a + _wrap(step)


def _no_grad_input(name, x):
    if x.requires_grad and _autograd.is_grad_enabled():
        raise TypeError(f"jitgrad.numpy.{name} is not differentiable (its output shape depends "
                        "on which values are equal); call it on x.detach()")
    return x._host(f"jitgrad.numpy.{name}")


def _unique(name, x):
    """values, first indices, inverse (shaped like ``x``) and counts, NaNs kept distinct."""
    d = _no_grad_input(name, _t(x))
    vals, idx, inv, cnt = _np.unique(d.ravel(), return_index=True, return_inverse=True,
                                     return_counts=True, equal_nan=False)
    i64 = _np.int64
    return vals, idx.astype(i64), inv.reshape(d.shape).astype(i64), cnt.astype(i64)


@_mark
def unique_values(x, /):
    """The sorted distinct values of ``x`` (flattened), a constant Tensor (no gradient: an
    input that requires grad raises)."""
    return _wrap(_unique("unique_values", x)[0])


@_mark
def unique_counts(x, /):
    """``(values, counts)`` of the distinct values (constants; no gradient)."""
    vals, _, _, cnt = _unique("unique_counts", x)
    return UniqueCountsResult(_wrap(vals), _wrap(cnt))


@_mark
def unique_inverse(x, /):
    """``(values, inverse_indices)``, ``values[inverse_indices] == x`` (no gradient)."""
    vals, _, inv, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(_wrap(vals), _wrap(inv))


@_mark
def unique_all(x, /):
    """``(values, indices, inverse_indices, counts)`` (no gradient)."""
    return UniqueAllResult(*(_wrap(v) for v in _unique("unique_all", x)))


def _int_op(fn, name):
    what = f"jitgrad.numpy.{name}"

    def f(*args, **kwargs):
        return _wrap(fn(*(_t(a)._host(what) for a in args), **kwargs))

    f.__name__ = name
    f.__doc__ = f"``numpy.{fn.__name__}`` (the Array API's ``{name}``) on integer/bool data " \
                "(no gradient)."
    return _mark(f)


# NumPy < 2 lacks the Array API spellings; these are the same ufuncs
bitwise_invert = _int_op(_np.invert, "bitwise_invert")
bitwise_left_shift = _int_op(_np.left_shift, "bitwise_left_shift")
bitwise_right_shift = _int_op(_np.right_shift, "bitwise_right_shift")


@_mark
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` is in ``test_elements`` (a bool Tensor)."""
    what = "jitgrad.numpy.isin"
    return _wrap(_np.isin(_t(element)._host(what), _t(test_elements)._host(what),
                          assume_unique=assume_unique, invert=invert, kind=kind))


@_mark
def from_dlpack(x, /, *, device=None, copy=None):
    """A constant Tensor from a DLPack-capable array (a Tensor is returned as is)."""
    _creation.check_device(device)
    if isinstance(x, Tensor):
        return _creation.asarray(x, copy=copy)
    return Tensor._make(_np.from_dlpack(x, copy=copy) if copy is not None else _np.from_dlpack(x))


def _np_dtype_of(x):
    if isinstance(x, Tensor):
        return x.dtype.np
    return _np.dtype(getattr(x, "np", x))


@_mark
def finfo(type, /):  # noqa: A002
    """``numpy.finfo`` of a dtype (NumPy's or jitgrad's) or of a Tensor's dtype."""
    return _np.finfo(_np_dtype_of(type))


@_mark
def iinfo(type, /):  # noqa: A002
    """``numpy.iinfo`` of a dtype (NumPy's or jitgrad's) or of a Tensor's dtype."""
    return _np.iinfo(_np_dtype_of(type))


class _Info:
    """The Array API inspection object (``jitgrad.numpy.__array_namespace_info__()``)."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu"]

    def default_dtypes(self, *, device=None):
        return {"real floating": _np.dtype(_np.float64),
                "complex floating": _np.dtype(_np.complex128),
                "integral": _np.dtype(_np.int64), "indexing": _np.dtype(_np.int64)}

    def dtypes(self, *, device=None, kind=None):
        names = ("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64",
                 "complex64", "complex128")
        table = {n: _np.dtype(n) for n in names}
        if kind is None:
            return table
        return {n: d for n, d in table.items() if _constants.isdtype(d, kind)}


def __array_namespace_info__():
    """The Array API inspection namespace: devices (``'cpu'``), default dtypes (float64,
    int64) and the dtypes jitgrad tensors can hold (no uint16/32/64)."""
    return _Info()


_UNSUPPORTED = {
    "uint16": "jitgrad has no uint16 dtype (unsigned: uint8 only)",
    "uint32": "jitgrad has no uint32 dtype (unsigned: uint8 only)",
    "uint64": "jitgrad has no uint64 dtype (unsigned: uint8 only)",
}


def _missing_message(name):
    """The AttributeError text for an Array API name jitgrad.numpy cannot provide (else None)."""
    why = _UNSUPPORTED.get(name)
    if why:
        return f"jitgrad.numpy has no '{name}': {why}; see docs/numpy.md (Array API)"
    return None
