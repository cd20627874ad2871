"""Sorting in ``jitgrad.numpy``: ``sort`` and ``partition`` are gathers by the indices NumPy's
``argsort``/``argpartition`` compute on the data, so the gradient is scattered back to the
original positions. (``argsort`` itself, an index result, is ``_array_api``'s.)"""
from __future__ import annotations

import numpy as _np

from ..ops import extrema as _extrema
from ..ops import scatter as _scatter_ops
from ..tensor import Tensor
from ._common import on_device as _on, to_tensor as _t
from ._shape import ravel

__all__ = ["sort", "partition"]


def argsort_data(d, axis, kind, descending):
    """The indices that sort the ndarray ``d`` along ``axis`` (stable unless ``kind`` says
    otherwise; ``descending`` keeps ties in their original order)."""
    return _extrema.argsort_array(d, axis, descending, kind)


def sort(a, axis=-1, kind=None, *, stable=None, descending=False):
    """Sort along ``axis`` (flattened when None): a gather by ``argsort``, so the gradient is
    scattered back to the original positions (``descending``/``stable``: the Array API's)."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    if not a.is_cuda:  # the argsort row: a compiled program sorts each call's data
        return _extrema.take_along_dim(a, _extrema.argsort(a, axis, descending, kind), axis)
    idx = argsort_data(a._host("jitgrad.numpy.sort"), axis, kind, descending)
    return _scatter_ops.gather(a, axis, _on(Tensor._make(idx), a.device))


def partition(a, kth, axis=-1):
    """``numpy.partition`` as a gather by ``argpartition`` (gradient scattered back)."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    idx = _np.argpartition(a._host("jitgrad.numpy.partition"), kth, axis=axis)
    return _scatter_ops.gather(a, axis, _on(Tensor._make(idx.astype(_np.int64)),
                                            a.device if a.is_cuda else None))
