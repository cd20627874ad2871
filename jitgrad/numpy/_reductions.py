"""Reductions and sums of ``jitgrad.numpy``: ``sum``, ``mean``, ``prod``, ``var``, ``std``,
``max``/``min`` (ties share the gradient evenly), ``ptp``, ``average``, the cumulative
``cumsum``/``cumprod`` and the differences ``diff``/``gradient``. ``axis`` is None (all), an int
or a tuple; integer inputs of ``mean``/``var``/``std`` give float64, as NumPy."""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ..ops import npfuncs as _npfuncs
from ..ops import reduce as _reduce_ops
from ..ops import shape as _shape_ops
from ..tensor import Tensor
from . import _plain
from ._common import (cast as _cast, cast_to as _cast_for, normalize_axes as _axes,
                      slice_axis as _slice_axis, to_tensor as _t)
from ._shape import ravel

__all__ = ["sum", "mean", "prod", "var", "std", "max", "min", "amax", "amin", "ptp", "average",
           "cumsum", "cumprod", "diff", "gradient"]


@_plain.checks_itself
def sum(a, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """Sum over ``axis`` (None: all; int or tuple); gradient ``g`` broadcast back."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)  # Note [plain inputs]
    a = _cast_for(_t(a), dtype)
    if a.dtype.np == _np.bool_:
        a = _cast(a, _np.int64)
    return _reduce_ops.sum(a, dim=axis, keepdim=keepdims) if axis is not None or keepdims else _reduce_ops.sum(a)


@_plain.checks_itself
def mean(a, axis=None, dtype=None, keepdims=False):
    """Mean over ``axis``; gradient ``g / n`` broadcast back. Integer inputs give float64."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)  # Note [plain inputs]
    a = _t(a)
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    return _reduce_ops.mean(a, dim=axis, keepdim=keepdims) if axis is not None or keepdims else _reduce_ops.mean(a)


@_plain.checks_itself
def prod(a, axis=None, dtype=None, keepdims=False):
    """Product over ``axis`` (int, tuple or None); exact gradient also with zeros."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.prod(a, axis=axis, dtype=dtype, keepdims=keepdims)  # Note [plain inputs]
    a = _cast_for(_t(a), dtype)
    if axis is None and not keepdims:
        return _reduce_ops.prod(a)
    out = a
    for ax in sorted(_axes(axis, a.ndim), reverse=True):
        out = _reduce_ops.prod(out, dim=ax, keepdim=keepdims)
    return out


@_plain.leaf
def var(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """Variance ``sum (x - mean)^2 / (n - ddof)``; gradient ``2 g (x - mean) / (n - ddof)``.
    ``correction`` is the Array API's (and NumPy 2's) name for ``ddof``."""
    a = _t(a)
    ddof = ddof if correction is None else correction
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    return _reduce_ops.var(a, axis, keepdim=keepdims, correction=ddof)


@_plain.leaf
def std(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """Standard deviation ``sqrt(var)``; gradient ``g (x - mean) / ((n - ddof) std)``.
    ``correction`` is the Array API's (and NumPy 2's) name for ``ddof``."""
    a = _t(a)
    ddof = ddof if correction is None else correction
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    return _reduce_ops.std(a, axis, keepdim=keepdims, correction=ddof)


@_plain.checks_itself
def max(a, axis=None, keepdims=False):  # noqa: A001
    """Maximum over ``axis``; ties share the gradient evenly (PyTorch's ``amax`` rule)."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.max(a, axis=axis, keepdims=keepdims)  # Note [plain inputs]
    a = _t(a)
    if axis is None and not keepdims:
        return _reduce_ops.max(a)
    return _reduce_ops.amax(a, dim=_axes(axis, a.ndim), keepdim=keepdims)


@_plain.checks_itself
def min(a, axis=None, keepdims=False):  # noqa: A001
    """Minimum over ``axis``; ties share the gradient evenly."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.min(a, axis=axis, keepdims=keepdims)  # Note [plain inputs]
    a = _t(a)
    if axis is None and not keepdims:
        return _reduce_ops.min(a)
    return _reduce_ops.amin(a, dim=_axes(axis, a.ndim), keepdim=keepdims)


amax, amin = max, min


def ptp(a, axis=None, keepdims=False):
    """``max - min`` over ``axis``."""
    return max(a, axis, keepdims) - min(a, axis, keepdims)


def average(a, axis=None, weights=None, keepdims=False):
    """Weighted mean ``sum(w x) / sum(w)`` over ``axis`` (plain mean without weights)."""
    if weights is None:
        return mean(a, axis, keepdims=keepdims)
    a, w = _t(a), _t(weights)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise TypeError("average: 1D weights expected when shapes of a and weights differ")
        ax = int(axis) % a.ndim
        w = _shape_ops.reshape(w, tuple(w.shape[0] if i == ax else 1 for i in range(a.ndim)))
    return sum(a * w, axis, keepdims=keepdims) / sum(w + a * 0, axis, keepdims=keepdims)


def cumsum(a, axis=None, dtype=None):
    """Cumulative sum (flattened when ``axis`` is None); gradient: reversed cumulative sum."""
    a = _cast_for(_t(a), dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return _npfuncs.cumsum(a, axis)


def cumprod(a, axis=None, dtype=None):
    """Cumulative product (flattened when ``axis`` is None); exact gradient also with zeros."""
    a = _cast_for(_t(a), dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return _npfuncs.cumprod(a, axis)


def diff(a, n=1, axis=-1):
    """``n``-th discrete difference along ``axis``."""
    a = _t(a)
    axis = int(axis) % a.ndim
    for _ in range(n):
        m = a.shape[axis]
        a = _slice_axis(a, axis, 1, m) - _slice_axis(a, axis, 0, m - 1)
    return a


def gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient``: second-order central differences inside, one-sided at the edges
    (``edge_order=1``), uniform scalar spacings; a linear map of ``f``, so it is differentiable."""
    f = _t(f)
    if edge_order != 1:
        raise NotImplementedError("jitgrad.numpy.gradient: only edge_order=1 is supported")
    axes = list(range(f.ndim)) if axis is None else list(_axes(axis, f.ndim))
    if len(varargs) == 0:
        hs = [1.0] * len(axes)
    elif len(varargs) == 1:
        hs = [varargs[0]] * len(axes)
    else:
        hs = list(varargs)
    if len(hs) != len(axes) or _builtins.any(_np.ndim(h) for h in hs):
        raise NotImplementedError("jitgrad.numpy.gradient: give one scalar spacing per axis")
    outs = []
    for ax, h in zip(axes, hs):
        n = f.shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        first = (_slice_axis(f, ax, 1, 2) - _slice_axis(f, ax, 0, 1)) / h
        last = (_slice_axis(f, ax, n - 1, n) - _slice_axis(f, ax, n - 2, n - 1)) / h
        parts = [first]
        if n > 2:
            parts.append((_slice_axis(f, ax, 2, n) - _slice_axis(f, ax, 0, n - 2)) / (2.0 * h))
        parts.append(last)
        outs.append(_shape_ops.cat(parts, ax))
    return outs[0] if len(outs) == 1 else tuple(outs)
