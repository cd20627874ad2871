"""Joining and splitting in ``jitgrad.numpy``: ``concatenate``/``concat``, ``stack`` and its
``hstack``/``vstack``/``dstack``/``column_stack`` forms, and ``split``/``array_split`` with
``hsplit``/``vsplit``/``dsplit`` (slices: each piece's gradient lands in its place)."""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ..ops import shape as _shape_ops
from ._common import slice_axis as _slice_axis, to_tensor as _t
from ._shape import atleast_1d, atleast_2d, atleast_3d, ravel, reshape

__all__ = ["concatenate", "concat", "stack", "hstack", "vstack", "row_stack", "dstack",
           "column_stack", "array_split", "split", "hsplit", "vsplit", "dsplit"]


def concatenate(arrays, axis=0):
    """Join along an existing axis (``axis=None``: flatten first)."""
    ts = [_t(a) for a in arrays]
    if axis is None:
        ts, axis = [ravel(t) for t in ts], 0
    return _shape_ops.cat(ts, int(axis))


concat = concatenate


def stack(arrays, axis=0):
    """Join along a new axis."""
    return _shape_ops.stack([_t(a) for a in arrays], int(axis))


def hstack(tup):
    """Stack column-wise (1-d inputs are concatenated)."""
    ts = atleast_1d(*tup) if len(tup) > 1 else [atleast_1d(tup[0])]
    return concatenate(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tup):
    """Stack row-wise (1-d ``(N,)`` inputs become rows)."""
    ts = atleast_2d(*tup) if len(tup) > 1 else [atleast_2d(tup[0])]
    return concatenate(ts, 0)


row_stack = vstack


def dstack(tup):
    """Stack along the third axis."""
    ts = atleast_3d(*tup) if len(tup) > 1 else [atleast_3d(tup[0])]
    return concatenate(ts, 2)


def column_stack(tup):
    """1-d inputs become columns; 2-d are stacked horizontally."""
    return concatenate([reshape(_t(a), (-1, 1)) if _t(a).ndim < 2 else _t(a) for a in tup], 1)


def array_split(ary, indices_or_sections, axis=0):
    """Split into sub-arrays (sections may differ in size by one)."""
    a = _t(ary)
    axis = int(axis) % a.ndim
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        q, r = _builtins.divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return [_slice_axis(a, axis, bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (or at the given indices)."""
    a = _t(ary)
    if isinstance(indices_or_sections, (int, _np.integer)) and \
            a.shape[int(axis) % a.ndim] % int(indices_or_sections):
        raise ValueError("array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-d)."""
    return split(ary, indices_or_sections, 1 if _t(ary).ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along axis 0."""
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """Split along axis 2."""
    return split(ary, indices_or_sections, 2)
