"""The helpers the ``nn`` family's modules share: ``ops/nn.py`` (activations, norms, embedding),
``ops/conv.py`` (convolution, pooling), ``ops/losses.py`` and the CUDA forwards of all three in
``ops/nn_cuda.py``. They import this module and not each other, so the family has no import
cycle (``ops/nn.py`` re-exports the rows of conv and losses).

* absent optional inputs (``none_tensor``) and wrapping a result array (``wrap``);
* jvp and vmap pieces: ``sum_terms`` (the sum of the tangent terms that exist), ``pad_batched``;
* convolution geometry: ``as4`` (1-d shapes as 2-d ones with a unit H), ``conv_geometry``
  (the ``kernels.cpu.nn.ConvGeom`` of a call), ``out_nd`` (back to 1-d), ``planes_shape``.
"""
from __future__ import annotations

import math

import numpy as np

from ..kernels.cpu import nn as cpu_nn
from .core import dispatch, upper
from . import shape as _shape


# --- tensors ---------------------------------------------------------------------------------
@upper.constant_maker
def none_tensor(like):
    """A stand-in for an absent optional input: never requires grad, so its edge is None."""
    if like.is_cuda:  # on the input's device, or the op would see mixed devices
        return dispatch.Tensor._make(dispatch.cuda_backend().empty((0,), like.dtype.np,
                                                                   like._data.index))
    return dispatch.Tensor._make(np.empty(0, like.dtype.np))


def wrap(a):
    """A result array (NumPy or CUDA) as a Tensor without a ``grad_fn``."""
    return dispatch.Tensor._make(a)


# --- jvp and vmap rules ----------------------------------------------------------------------
def sum_terms(*terms):
    """The sum of the terms that are not None (None when all are): a tangent is the sum of
    one term per input that has a tangent."""
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else out + t
    return out


def pad_batched(t, nd):
    """A batched ``t`` (batch first) with 1s after the batch dim up to ``nd`` example dims."""
    k = nd - (t.ndim - 1)
    return _shape.reshape(t, (t.shape[0],) + (1,) * k + tuple(t.shape[1:])) if k > 0 else t


# --- convolution geometry --------------------------------------------------------------------
def as4(shape):
    """A 1-d convolution's ``(N, C, W)`` shape as the 2-d ``(N, C, 1, W)``; 4-d ones as given."""
    return shape if len(shape) == 4 else (shape[0], shape[1], 1, shape[2])


def conv_geometry(xshape, wshape, ctx_or_attrs):
    """The ``ConvGeom`` (sizes, output sizes, stride, padding, dilation, groups) of a
    convolution of an input of ``xshape`` with a weight of ``wshape``; ``ctx_or_attrs``: a
    mapping of the row's attributes."""
    a = ctx_or_attrs
    return cpu_nn.ConvGeom(as4(xshape), as4(wshape), a["stride"], a["padding"], a["dilation"],
                           a["groups"])


def out_nd(arr, nd):
    """A 2-d kernel's ``(N, C, 1, W)`` result back to 1-d when the input had ``nd == 3`` dims."""
    return arr if nd == 4 else arr.reshape(arr.shape[0], arr.shape[1], arr.shape[3])


def planes_shape(shape):
    """``shape`` as ``(planes, H, W)``: the leading dims flattened (pooling's layout)."""
    return (math.prod(shape[:-2]),) + tuple(shape[-2:])
