"""Shape functions of ``jitgrad.numpy``: ``reshape``/``ravel``, axis permutations
(``transpose``, ``moveaxis``, ``swapaxes``, ``rollaxis``, ``matrix_transpose``), added and
removed axes (``expand_dims``, ``squeeze``, ``atleast_*d``, ``broadcast_to``), reversals and
rotations (``flip``, ``roll``, ``rot90``), and index selections (``take``,
``take_along_axis``, ``repeat``, ``tile``, ``pad``): views and gathers whose gradient is
reshaped, permuted or scattered back (summing repeats)."""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ..ops import npfuncs as _npfuncs
from ..ops import roll as _roll_ops
from ..ops import scatter as _scatter_ops
from ..ops import shape as _shape_ops
from ..ops import unary as _unary_ops
from ..tensor import Tensor
from . import _plain
from ._common import (constant_array as _constant_array, host_data as _data,
                      normalize_axes as _axes, to_tensor as _t)

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "moveaxis", "swapaxes",
           "expand_dims", "squeeze", "broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d",
           "take", "take_along_axis", "flip", "fliplr", "flipud", "roll", "repeat", "tile", "pad",
           "matrix_transpose", "rollaxis", "rot90"]


def reshape(a, shape, order="C", *, copy=None):
    """Reshape (C order); gradient reshaped back. ``copy=True`` (Array API) returns a copy."""
    if order != "C":
        raise NotImplementedError("jitgrad.numpy.reshape: only order='C' is supported")
    if copy:
        return _unary_ops.clone(reshape(a, shape))
    return _shape_ops.reshape(_t(a), tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),))


def ravel(a, order="C"):
    """Flatten to 1-d (C order)."""
    return reshape(a, (-1,), order)


@_plain.leaf
def transpose(a, axes=None):
    """Permute the axes (reversed when ``axes`` is None)."""
    a = _t(a)
    axes = tuple(range(a.ndim - 1, -1, -1)) if axes is None else tuple(axes)
    return _shape_ops.permute(a, axes)


permute_dims = transpose


def moveaxis(a, source, destination):
    """Move axes to new positions (the others keep their order)."""
    a = _t(a)
    return _shape_ops.permute(a, tuple(_perm_moveaxis(a.ndim, source, destination)))


def _perm_moveaxis(ndim, source, destination):
    src = [int(s) % ndim for s in _np.atleast_1d(source)]
    dst = [int(d) % ndim for d in _np.atleast_1d(destination)]
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return order


def swapaxes(a, axis1, axis2):
    """Exchange two axes."""
    return _shape_ops.transpose(_t(a), axis1, axis2)


def expand_dims(a, axis):
    """Insert length-1 axes at ``axis`` (int or tuple, positions in the result)."""
    a = _t(a)
    axes = sorted(int(x) % (a.ndim + len(_np.atleast_1d(axis))) for x in _np.atleast_1d(axis))
    for ax in axes:
        a = _shape_ops.unsqueeze(a, ax)
    return a


def squeeze(a, axis=None):
    """Remove length-1 axes (all, or those in ``axis``)."""
    a = _t(a)
    if axis is None:
        return _shape_ops.squeeze(a)
    for ax in sorted(_axes(axis, a.ndim), reverse=True):
        if a.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        a = _shape_ops.squeeze(a, ax)
    return a


def broadcast_to(a, shape):
    """Broadcast to ``shape``; gradient summed back."""
    return _shape_ops.expand(_t(a), tuple(shape))


def atleast_1d(*arys):
    """Views with at least one dimension."""
    out = [reshape(_t(a), (1,)) if _t(a).ndim == 0 else _t(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Views with at least two dimensions (1-d ``(N,)`` becomes ``(1, N)``)."""
    out = []
    for a in arys:
        a = _t(a)
        out.append(reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """At least three dimensions (``(N,)`` -> ``(1, N, 1)``, ``(M, N)`` -> ``(M, N, 1)``)."""
    out = []
    for a in arys:
        a = _t(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = reshape(a, tuple(a.shape) + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def _take_axis(a, idx, axis):
    return a[(slice(None),) * axis + (_np.asarray(idx, dtype=_np.intp),)]


def take(a, indices, axis=None):
    """Elements at ``indices`` (along ``axis``, or of the flattened array); the gradient is
    scattered back (summing repeats)."""
    a = _t(a)
    idx = _np.asarray(_data(indices, "jitgrad.numpy.take"))
    if axis is None:
        return ravel(a)[idx] if idx.ndim else ravel(a)[int(idx)]
    return _take_axis(a, idx, int(axis) % a.ndim)


def take_along_axis(arr, indices, axis):
    """``numpy.take_along_axis`` (gradient scattered back)."""
    a = _t(arr)
    idx = _np.asarray(_data(indices, "jitgrad.numpy.take_along_axis"))
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    idx = _np.broadcast_to(idx, tuple(i if d == axis else s for d, (s, i) in
                                      enumerate(zip(a.shape, idx.shape))))
    # a constant of a traced program: ``indices`` were read through ``Tensor._host`` above, which
    # refuses computed values and guards an argument's (Note [value guards])
    idx = _constant_array(_np.ascontiguousarray(idx, dtype=_np.int64))
    return _scatter_ops.gather(a, axis, idx)


def flip(m, axis=None):
    """Reverse the order along ``axis`` (all when None)."""
    return _npfuncs.flip(_t(m), axis)


def fliplr(m):
    """Reverse along axis 1."""
    return flip(m, 1)


def flipud(m):
    """Reverse along axis 0."""
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Roll elements along ``axis`` (flattened when None; ``shift`` and ``axis`` broadcast, a
    repeated axis adds its shifts): the ``roll`` row (RollBackward0), whose gradient is ``g``
    rolled back."""
    a = _t(a)
    if axis is None:
        return _roll_ops.roll(a, int(_np.sum(_np.atleast_1d(shift))))
    shifts, axes = _np.broadcast_arrays(_np.atleast_1d(shift), _np.atleast_1d(axis))
    return _roll_ops.roll(a, tuple(int(s) for s in shifts), tuple(int(x) for x in axes))


def repeat(a, repeats, axis=None):
    """Repeat elements (of the flattened array when ``axis`` is None); gradient sums the
    copies."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    return _take_axis(a, _np.repeat(_np.arange(a.shape[axis]), _data(repeats, "jitgrad.numpy.repeat")), axis)


def tile(A, reps):
    """Repeat the whole array ``reps`` times per axis; gradient sums the tiles."""
    a = _t(A)
    reps = tuple(_np.atleast_1d(reps).tolist())
    nd = _builtins.max(a.ndim, len(reps))
    a = reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    reps = (1,) * (nd - len(reps)) + reps
    for ax, r in enumerate(reps):
        if r != 1:
            a = _take_axis(a, _np.tile(_np.arange(a.shape[ax]), r), ax)
    return a


def pad(array, pad_width, mode="constant", constant_values=0):
    """Pad; ``constant`` pads with a value (gradient: the inner slice), ``edge``, ``reflect``,
    ``symmetric`` and ``wrap`` are index selections (gradient scattered back)."""
    a = _t(array)
    pw = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.intp), (a.ndim, 2))
    if mode == "constant":
        if _np.ndim(constant_values):
            raise NotImplementedError("jitgrad.numpy.pad: constant_values must be one number")
        return _npfuncs.pad_constant(a, pw, float(_data(constant_values, "jitgrad.numpy.pad")))
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"jitgrad.numpy.pad: mode={mode!r} is not supported (constant, "
                                  "edge, reflect, symmetric, wrap are)")
    for ax in range(a.ndim):
        if pw[ax].any():
            a = _take_axis(a, _np.pad(_np.arange(a.shape[ax]), tuple(pw[ax]), mode=mode), ax)
    return a


def matrix_transpose(x):
    """Swap the last two axes."""
    return _shape_ops.transpose(_t(x), -1, -2)


def rollaxis(a, axis, start=0):
    """Roll ``axis`` backwards until it lies before ``start`` (NumPy's older ``moveaxis``)."""
    a = _t(a)
    axis = int(axis) % a.ndim
    start = int(start) + a.ndim if start < 0 else int(start)
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start) if axis != start else a


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (flips and a transpose)."""
    m = _t(m)
    k %= 4
    a0, a1 = axes
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _shape_ops.permute(flip(m, a1), tuple(perm))
    return flip(_shape_ops.permute(m, tuple(perm)), a1)
