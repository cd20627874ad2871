"""What the reduction families share: ``ops/reduce.py`` (sum, mean, prod, var/std, logsumexp),
``ops/extrema.py`` (max/min, amax/amin, argmax/argmin) and their CUDA forwards in
``ops/reduce_cuda.py``. They import this module and not each other's helpers, so the three have
no import cycle (``ops/reduce.py`` re-exports the functions of ``ops/extrema.py``).

* arguments: ``reduced_dims`` (``dim`` as sorted non-negative axes, PyTorch's errors),
  ``numpy_keywords`` (NumPy's ``axis``/``keepdims`` for ``dim``/``keepdim``),
  ``torch_dtype_name`` for messages;
* layout: every CPU reduction reads the canonical C-contiguous ``(outer, r, inner)`` array of
  ``kernels.cpu.reduce`` (``to3``), its result shaped back by ``finish``;
* what a backward needs: ``stash_reduction`` saves the dims and shapes on ``ctx``, ``to_keepdim``
  reshapes an output-shaped Tensor so that it broadcasts against the input, ``JvpCtx`` stands in
  for ``ctx`` in the jvp rules;
* vmap: ``dims_batch``, the batch rule of a reduction over ``dims`` (shifted past the batch dim).
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .core import dispatch
from . import shape as _shape
from .core.registry import OPS

_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "float16": "Half", "float32": "Float", "float64": "Double"}


def torch_dtype_name(d) -> str:
    """PyTorch's scalar-type name for a jitgrad dtype (``int64`` -> ``Long``), for messages."""
    return _TORCH_NAMES.get(d.name, d.name)


# --- argument and layout helpers -----------------------------------------------------------
def reduced_dims(op, dim, ndim, multi=True) -> tuple:
    """``dim`` (None, int, tuple/list; negatives wrap) as sorted non-negative axes.

    None or an empty tuple mean every axis. A 0-d tensor accepts 0 and -1 and reduces nothing.
    """
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if not multi:
            raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
        if len(dim) == 0:
            return tuple(range(ndim))
        items = list(dim)
    else:
        items = [dim]
    n = builtins.max(ndim, 1)
    out = []
    for d in items:
        try:
            d = operator.index(d)
        except TypeError:
            raise TypeError(f"{op}(): dim must be an int or a tuple of ints, got "
                            f"{type(d).__name__}") from None
        if not -n <= d < n:
            raise IndexError(f"{op}(): Dimension out of range (expected to be in range of "
                             f"[{-n}, {n - 1}], but got {d})")
        d %= n
        if d in out:
            raise RuntimeError(f"{op}(): dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out)) if ndim else ()


def numpy_keywords(name, dim, keepdim, axis, keepdims, default=None):
    """``(dim, keepdim)`` with NumPy's keyword names ``axis`` / ``keepdims`` accepted for
    PyTorch's (as PyTorch's argument parser does)."""
    if axis is not None:
        if dim is not default:
            raise TypeError(f"{name}() got both 'dim' and 'axis'; pass one")
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, keepdim


def keep_shape(shape, dims) -> tuple:
    """``shape`` with the reduced ``dims`` kept as 1s (the keepdim output shape)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def out_shape(shape, dims, keepdim) -> tuple:
    """The output shape of a reduction of ``shape`` over ``dims``."""
    if keepdim:
        return keep_shape(shape, dims)
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def to3(a: np.ndarray, dims: tuple) -> np.ndarray:
    """``a`` as a C-contiguous ``(outer, r, inner)`` array whose middle axis spans ``dims``."""
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    if not dims:
        return np.ascontiguousarray(a).reshape(1, 1, -1)
    shape = a.shape
    d0, d1 = dims[0], dims[-1]
    if d1 - d0 + 1 == len(dims):  # adjacent: a reshape of the C-contiguous array
        r = math.prod(shape[d0:d1 + 1])
        return np.ascontiguousarray(a).reshape(math.prod(shape[:d0]), r, math.prod(shape[d1 + 1:]))
    k = len(dims)
    moved = np.moveaxis(a, dims, range(a.ndim - k, a.ndim))
    outer, r = math.prod(moved.shape[:a.ndim - k]), math.prod(moved.shape[a.ndim - k:])
    return np.ascontiguousarray(moved).reshape(outer, r, 1)


def finish(res: np.ndarray, a: np.ndarray, shape: tuple) -> np.ndarray:
    """Kernel output reshaped to ``shape``; float16 inputs get float16 results back."""
    res = res.reshape(shape)
    if a.dtype == np.float16 and res.dtype == np.float32:
        res = res.astype(np.float16)
    return res


# --- backward and jvp helpers --------------------------------------------------------------
def stash_reduction(ctx, x, dims, keepdim):
    """Save the reduced ``dims``, ``keepdim``, the input shape and the keepdim shape on ``ctx``
    (what the backward rules read); the output shape."""
    ctx.dims, ctx.keepdim = dims, keepdim
    ctx.in_shape, ctx.keep_shape = x.shape, keep_shape(x.shape, dims)
    return out_shape(x.shape, dims, keepdim)


class JvpCtx:
    """A ctx stand-in for the jvp rules, which share helpers with the backward rules."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def to_keepdim(ctx, t):
    """An output-shaped Tensor reshaped to the keepdim shape (broadcastable to the input)."""
    return t if t.shape == ctx.keep_shape else _shape.reshape(t, ctx.keep_shape)


# Batch rules (vmap, func/_batching.py): the inputs arrive with the batch as dim 0, so the
# reduced dims shift by one and the batch dim is kept.
def shift(dims):
    """The reduced ``dims`` of an example as dims of the batch (past the batch dim 0)."""
    return tuple(d + 1 for d in dims)


def dims_batch(name):
    """The batch rule of a reduction over ``dims``: the row ``name`` (looked up when the rule
    runs, so a row can name itself) over the shifted dims."""
    def rule(args, batched, dims, **attrs):
        return dispatch.composite(OPS[name], args[0], dims=shift(dims), **attrs)
    return rule
