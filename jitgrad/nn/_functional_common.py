"""Helpers shared by the ``jitgrad.nn.functional`` modules: operand checks, argument
normalisation (int-or-tuple sizes, PyTorch's ``reduction`` strings) and the reductions of the
losses. Private: the public functions are in ``functional.py`` and the ``_functional_*.py``
modules it re-exports."""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..ops import reduce as _red
from ..ops import inplace
from ..ops.core import dispatch, upper
from ..ops.reduce import torch_dtype_name as _tname


def tensor_cls():
    return dispatch.Tensor


def on_device_of(x, t):
    """Optional constant operands (loss weights, eval-mode running stats) given as CPU tensors
    follow a CUDA input to its device (a recorded, differentiable ``to``), so a weight made
    with ``jitgrad.tensor(...)`` works with CUDA inputs."""
    if t is None or not isinstance(t, tensor_cls()) or t.device == x.device:
        return t
    return t.to(x.device)


def as_tensor(x, op):
    return dispatch.tensor_operand(x, op)


def kernel_float(op, *tensors):
    """The fused kernels run in float32/float64 (Numba has no float16 arithmetic on the CPU)."""
    for t in tensors:
        if t is not None and t.dtype.name not in ("float32", "float64"):
            raise RuntimeError(f"{op}: expected float32 or float64 inputs, got "
                               f"{_tname(t.dtype)} (convert with .float() or .double())")


def ntuple(v, n, name):
    if isinstance(v, numbers.Integral):
        return (int(v),) * n
    v = tuple(int(i) for i in v)
    if len(v) == 1 and n > 1:
        v = v * n
    if len(v) != n:
        raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {v}")
    return v

def index_array(t, op):
    if isinstance(t, tensor_cls()) and t.is_cuda:  # indices stay on the device (int64 there)
        if t.dtype.np.kind not in "iu":
            raise RuntimeError(f"{op}: expected an integer (Long) index tensor, got "
                               f"{t.dtype.np}")
        data = t._data  # device read: the indices go to the device kernel (no host copy)
        return data if data.dtype == np.int64 else data.astype(np.int64)
    arr = np.asarray(t._host(op) if isinstance(t, tensor_cls()) else t)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer (Long) index tensor, got {arr.dtype}")
    return arr.astype(np.int64, copy=False)

def host_index_array(t, op):
    """The int64 indices of ``t`` on the host (a copy from a CUDA device): for the functions
    that compute with them in NumPy (the margin losses' masks, unpooling's bounds check)."""
    arr = np.asarray(t._host(op) if isinstance(t, tensor_cls()) else t)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer (Long) index tensor, got {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def class_targets(target, op, like):
    """Integer class targets as a Tensor on ``like``'s device, their values not read (a compile
    trace keeps them an input of the program); Python and NumPy targets become a Tensor."""
    if not isinstance(target, tensor_cls()):
        return index_tensor(host_index_array(target, op), like)
    if target.dtype.np.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer (Long) index tensor, got "
                           f"{target.dtype.np}")
    return on_device_of(like, target)


def value_check(x, bad, msg, error=IndexError):
    """``x``, after raising ``error(msg)`` if the bool Tensor ``bad`` has a True: read on the
    host eagerly; while a compile trace records, the ``checked`` row (``ops/nplinalg.py``), so
    each compiled call makes the check (a RuntimeError there, same message)."""
    if upper.host_read_hook is None:
        if bool(bad.any()):
            raise error(msg)
        return x
    from ..ops.nplinalg import checked
    return checked(x, _red.sum(bad), msg)


REDUCTIONS = ("none", "mean", "sum")


def reduction_mode(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:  # PyTorch's legacy arguments
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def loss_pair(op, input, target):  # noqa: A002
    x, y = as_tensor(input, op), as_tensor(target, op)
    if x.shape != y.shape:
        warnings.warn(f"Using a target size ({list(y.shape)}) that is different to the input "
                      f"size ({list(x.shape)}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)
    return x, y

def apply_reduction(loss, reduction):
    if reduction == "mean":
        return _red.mean(loss)
    return _red.sum(loss) if reduction == "sum" else loss



def maybe_inplace(input, inplace_, name, fn):  # noqa: A002
    """``fn(input)``, written into ``input`` when ``inplace_`` (PyTorch's ``inplace=True``)."""
    if inplace_:
        return inplace.apply_inplace(input, name, fn)
    return fn(input)


def float_tensor(x, op):
    """``x`` as a Tensor, which must be floating point."""
    x = as_tensor(x, op)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {_tname(x.dtype)} "
                           "(convert with .float() or .double())")
    return x


def check_rank(op, x, ranks):
    if x.ndim not in ranks:
        want = " or ".join(f"{r}D" for r in ranks)
        raise RuntimeError(f"{op}: expected a {want} input, got a {x.ndim}D input of shape "
                           f"{list(x.shape)}")


def const(x, array):
    """A constant Tensor (no grad) from ``array``, in ``x``'s dtype and on its device."""
    t = tensor_cls()._make(np.asarray(array, dtype=x.dtype.np))
    return t if not x.is_cuda else t.to(x.device)


def index_tensor(array, like):
    """An int64 (or bool) constant Tensor from ``array`` on ``like``'s device (indices and
    masks computed on the host for a gather/select on ``like``)."""
    a = np.asarray(array)
    t = tensor_cls()._make(a if a.dtype == np.bool_ else a.astype(np.int64, copy=False))
    return t if not like.is_cuda else t.to(like.device)


# Constant versions of ``const`` and ``index_tensor`` for arrays computed from shapes and
# Python arguments only (a window, an identity, a causal mask, a padding index, a Python
# scalar): constants of a compiled program (``upper.constant_maker``). NEVER for arrays made
# from tensor values (targets, indices, argmaxes): those use ``const`` / ``index_tensor``,
# which a compile trace refuses rather than bake the first call's values in.
@upper.constant_maker
def shape_const(x, array):
    """``const`` for an array that depends on shapes and Python arguments only."""
    return const(x, array)


@upper.constant_maker
def shape_index(array, like):
    """``index_tensor`` for indices that depend on shapes and Python arguments only."""
    return index_tensor(array, like)


def same_dtype(op, a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: expected both operands to have the same dtype, but got "
                           f"{_tname(a.dtype)} and {_tname(b.dtype)}")


def conv_padding(padding, k, dilation, stride, nd):
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * nd
        if padding != "same":
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
        if any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        total = [d * (kk - 1) for d, kk in zip(dilation, k)]
        if any(t % 2 for t in total):
            raise NotImplementedError(
                "padding='same' with an even effective kernel size needs asymmetric padding, "
                "which jitgrad does not support yet; pass explicit padding instead")
        return tuple(t // 2 for t in total)
    return ntuple(padding, nd, "padding")
