"""Value-selecting reductions: ``max``/``min`` (all elements, or ``(values, indices)`` along a
dim), ``amax``/``amin`` and ``argmax``/``argmin``, with the gather/scatter rows their derivatives
use. ``ops/reduce.py`` re-exports every public name here (``reduce.max`` is this ``max``).

Forward: the canonical ``(outer, r, inner)`` layout of ``ops/reduce_common.py`` and the
``reduce_max``/``reduce_min`` kernels of ``kernels.cpu.reduce`` (value and first index; NaN
wins). Derivatives (Tensor ops, so double backward works):

* ``max(x)``/``min(x)`` and ``amax``/``amin``: ``g`` split evenly among the elements equal to
  the result (``mask * g / sum(mask)``, NaN equal to a NaN result), PyTorch's
  ``evenly_distribute_backward``; jvp: the mean of the tangent over those elements;
* ``max(x, dim)``/``min(x, dim)``: ``g`` put at ``indices`` (``_index_scatter``); jvp: the
  tangent gathered at ``indices`` (``_take_along_dim``); the two rows are each other's
  derivatives;
* ``argmax``/``argmin``: integer results, not differentiable.

The rules sum with the Tensor method ``sum`` (``ops.reduce.sum``: that module imports this one).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..kernels.cpu import reduce as cpu_reduce, pool
from . import binary, reduce_cuda, unary
from .core import dispatch, upper
from . import shape as _shape
from .core.registry import def_composite, public
from .reduce_common import (JvpCtx, dims_batch, finish, keep_shape, numpy_keywords, out_shape,
                            reduced_dims, shift, stash_reduction, to3, to_keepdim)


# --- scatter / gather helpers for value-selecting reductions --------------------------------
def _scatter_fwd(ctx, g, index, dim, shape):
    out = pool.zeros(shape, g.dtype)
    np.put_along_axis(out, index, g, axis=dim)
    return out


def _scatter_bwd(ctx, grad, index):
    return (_take_along_dim(grad, index, ctx.dim), None)


def _gather_fwd(ctx, x, index, dim):
    ctx.in_shape = x.shape
    return np.take_along_axis(x, index, axis=dim)


def _gather_bwd(ctx, grad, index):
    return (_index_scatter(grad, index, ctx.dim, ctx.in_shape), None)


def _scatter_jvp(tangents, primals, outs, dim, shape):
    return None if tangents[0] is None else _index_scatter(tangents[0], primals[1], dim, shape)


def _gather_jvp(tangents, primals, outs, dim):
    return None if tangents[0] is None else _take_along_dim(tangents[0], primals[1], dim)


def _with_batch(args, batched):
    """The arguments, the unbatched ones broadcast to the batch size."""
    size = next(a.shape[0] for a, b in zip(args, batched) if b)
    return [a if b else _shape.expand(_shape.unsqueeze(a, 0), (size,) + tuple(a.shape))
            for a, b in zip(args, batched)]


def _scatter_batch(args, batched, dim, shape):
    g, index = _with_batch(args, batched)
    return _index_scatter(g, index, dim + 1, (g.shape[0],) + tuple(shape))


def _gather_batch(args, batched, dim):
    x, index = _with_batch(args, batched)
    return _take_along_dim(x, index, dim + 1)


_SCATTER = def_composite("_index_scatter", "ScatterBackward0", ("g", "index"), _scatter_fwd,
                         _scatter_bwd, attrs=("dim", "shape"), save=("index",), jvp=_scatter_jvp,
                         batch_rule=_scatter_batch, cuda_forward=reduce_cuda.scatter_forward)
_GATHER = def_composite("_take_along_dim", "GatherBackward0", ("x", "index"), _gather_fwd,
                        _gather_bwd, attrs=("dim",), save=("index",), jvp=_gather_jvp,
                        batch_rule=_gather_batch, cuda_forward=reduce_cuda.gather_forward)


def _index_scatter(g, index, dim, shape):
    """Zeros of ``shape`` with ``g`` put at ``index`` along ``dim`` (one index per slice, as
    the indices of max/min). Derivative: ``take_along_dim(grad, index, dim)``."""
    return dispatch.composite(_SCATTER, g, index, dim=dim, shape=tuple(shape))


def _take_along_dim(x, index, dim):
    """``x`` gathered at ``index`` along ``dim``. Derivative: ``_index_scatter`` of ``grad``."""
    return dispatch.composite(_GATHER, x, index, dim=dim)


# --- max / min / amax / amin ---------------------------------------------------------------
_KERNELS = {"max": cpu_reduce.reduce_max, "min": cpu_reduce.reduce_min}
max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])


def _tie_mask(x, value):
    """Where ``x`` equals the selected value (NaN matching NaN)."""
    # (on CUDA the NaN-aware form always: checking for NaN first would cost a host sync)
    if dispatch.device_of(value._data) == "cpu" and upper.host_read_hook is None and \
            not np.isnan(value._data).any():  # (while tracing: the form for every value)
        return x == value
    return (x == value) | ((x != x) & (value != value))


def _extreme_full_bwd(ctx, g, x, result):
    # PyTorch's evenly_distribute_backward: ties share the gradient equally; a masked fill, so an
    # inf gradient stays inf at the maximum and 0 elsewhere (Note [masked gradients])
    mask = _tie_mask(x, result)
    return (binary.where(mask, g / unary.cast(mask.sum(), g.dtype), 0.0),)


def _extreme_dim_fwd(ctx, x, dims, keepdim, kind):
    shape = stash_reduction(ctx, x, dims, keepdim)
    vals, idx = _KERNELS[kind](to3(x, dims))
    ctx.indices = idx.reshape(ctx.keep_shape)  # where the backward scatters the gradient
    # a selected value keeps the input's dtype (the kernels widen small ints to int64)
    return finish(vals, x, shape).astype(x.dtype, copy=False), idx.reshape(shape)


def _extreme_dim_bwd(ctx, g, _g_indices):
    if not ctx.dims:  # 0-d input: the value itself
        return (g,)
    index = dispatch.Tensor._make(ctx.indices)
    return (_index_scatter(to_keepdim(ctx, g), index, ctx.dims[0], ctx.in_shape),)


def _amax_bwd(ctx, g, x, result):
    mask = _tie_mask(x, to_keepdim(ctx, result))
    count = unary.cast(mask.sum(ctx.dims, keepdim=True), g.dtype)
    return (mask * (to_keepdim(ctx, g) / count),)


def _extreme_full_jvp(tangents, primals, outs, dims, keepdim, kind):
    # PyTorch's evenly_read_jvp: the mean of the tangent over the tied extremes
    (t,), (x,), (result,) = tangents, primals, outs
    mask = _tie_mask(x, result)
    return binary.where(mask, t, 0.0).sum() / unary.cast(mask.sum(), t.dtype)


def _extreme_dim_jvp(tangents, primals, outs, dims, keepdim, kind):
    t, indices = tangents[0], outs[1]
    if not dims:  # 0-d input: the value itself
        return t, None
    ctx = JvpCtx(dims=dims, keep_shape=keep_shape(t.shape, dims))
    picked = _take_along_dim(t, to_keepdim(ctx, indices), dims[0])
    return (picked if keepdim else _shape.squeeze(picked, dims[0])), None


def _amax_jvp(tangents, primals, outs, dims, keepdim, kind):
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = JvpCtx(dims=dims, keep_shape=keep_shape(x.shape, dims))
    mask = _tie_mask(x, to_keepdim(ctx, result))
    count = unary.cast(mask.sum(dims, keepdim=True), t.dtype)
    return (binary.where(mask, t, 0.0) / count).sum(dims, keepdim=keepdim)


def _extreme_full_batch(args, batched, dims, keepdim, kind):
    flat = _shape.reshape(args[0], (args[0].shape[0], -1))  # ties share evenly, as max()
    return dispatch.composite(AMAX if kind == "max" else AMIN, flat, dims=(1,), keepdim=False,
                              kind=kind)


def _extreme_rows(kind, upper):
    full = def_composite(kind, f"{upper}Backward1", ("x",), _extreme_values_fwd,
                         _extreme_full_bwd, attrs=("dims", "keepdim", "kind"), save=("x", "result"),
                         jvp=_extreme_full_jvp, batch_rule=_extreme_full_batch,
                         cuda_forward=reduce_cuda.extreme_values_forward, method=True, export=True)
    dim = def_composite(f"{kind}_dim", f"{upper}Backward0", ("x",), _extreme_dim_fwd,
                        _extreme_dim_bwd, attrs=("dims", "keepdim", "kind"), n_outputs=2,
                        jvp=_extreme_dim_jvp, batch_rule=dims_batch(f"{kind}_dim"),
                        cuda_forward=reduce_cuda.extreme_dim_forward)
    amax = def_composite(f"a{kind}", f"A{kind}Backward0", ("x",), _extreme_values_fwd,
                         _amax_bwd, attrs=("dims", "keepdim", "kind"), save=("x", "result"),
                         jvp=_amax_jvp, batch_rule=dims_batch(f"a{kind}"),
                         cuda_forward=reduce_cuda.extreme_values_forward, method=True, export=True)
    return full, dim, amax


def _extreme_values_fwd(ctx, x, dims, keepdim, kind):
    shape = stash_reduction(ctx, x, dims, keepdim)
    return finish(_KERNELS[kind](to3(x, dims))[0], x, shape).astype(x.dtype, copy=False)


MAX, MAX_DIM, AMAX = _extreme_rows("max", "Max")
MIN, MIN_DIM, AMIN = _extreme_rows("min", "Min")


def _check_nonempty(op, x, dims, full):
    if full and x.numel() == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _extreme(kind, x, dim, keepdim):
    x = dispatch.tensor_operand(x, kind)
    if dim is None:
        if keepdim:
            raise TypeError(f"{kind}(): keepdim=True needs an int 'dim'")
        _check_nonempty(kind, x, (), True)
        return dispatch.composite(MAX if kind == "max" else MIN, x, dims=tuple(range(x.ndim)),
                                  keepdim=False, kind=kind)
    dims = reduced_dims(kind, dim, x.ndim, multi=False)
    _check_nonempty(kind, x, dims, False)
    values, indices = dispatch.composite(MAX_DIM if kind == "max" else MIN_DIM, x, dims=dims,
                                         keepdim=bool(keepdim), kind=kind)
    return (max_result if kind == "max" else min_result)(values, indices)


@public(MAX)
def max(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Maximum. ``max(x)``: the largest element (0-d); the gradient is split evenly among
    ties (``MaxBackward1``). ``max(x, dim)``: a ``(values, indices)`` named tuple along one
    dim (first occurrence); the gradient goes to ``indices`` (``MaxBackward0``). NaN
    propagates. ``max(x, other_tensor)`` is ``maximum``. Empty inputs raise.
    """
    dim, keepdim = numpy_keywords("max", dim, keepdim, axis, keepdims)
    if isinstance(dim, dispatch.Tensor):
        return binary.maximum(input, dim)
    return _extreme("max", input, dim, keepdim)


@public(MIN)
def min(input, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Minimum: as ``max`` with the smallest element (``MinBackward1`` / ``MinBackward0``)."""
    dim, keepdim = numpy_keywords("min", dim, keepdim, axis, keepdims)
    if isinstance(dim, dispatch.Tensor):
        return binary.minimum(input, dim)
    return _extreme("min", input, dim, keepdim)


def _amax(kind, x, dim, keepdim):
    x = dispatch.tensor_operand(x, f"a{kind}")
    dims = reduced_dims(f"a{kind}", dim, x.ndim)
    _check_nonempty(f"a{kind}", x, dims, x.ndim == 0 or len(dims) == x.ndim)
    return dispatch.composite(AMAX if kind == "max" else AMIN, x, dims=dims,
                              keepdim=bool(keepdim), kind=kind)


@public(AMAX)
def amax(input, dim=(), keepdim=False, *, axis=None, keepdims=None):
    """Maximum over ``dim`` (int or tuple; ``()`` = all): ``out = max_{i in dim} x_i``.

    Derivative: ``g`` split evenly among the elements equal to the maximum (NaN counts as
    equal to a NaN result). Records ``AmaxBackward0``.
    """
    dim, keepdim = numpy_keywords("amax", dim, keepdim, axis, keepdims, default=())
    return _amax("max", input, dim, keepdim)


@public(AMIN)
def amin(input, dim=(), keepdim=False, *, axis=None, keepdims=None):
    """Minimum over ``dim``; derivative split evenly among ties. Records ``AminBackward0``."""
    dim, keepdim = numpy_keywords("amin", dim, keepdim, axis, keepdims, default=())
    return _amax("min", input, dim, keepdim)


def _arg_fwd(ctx, x, dims, keepdim, kind):
    _, idx = _KERNELS[kind](to3(x, dims))
    return idx.reshape(out_shape(x.shape, dims, keepdim))


def _arg_batch(args, batched, dims, keepdim, kind):
    x = args[0]
    if len(dims) == 1:
        return dispatch.composite(_ARG[kind], x, dims=shift(dims), keepdim=keepdim, kind=kind)
    # the flattened input of each example: one dim per example, then the unbatched shape
    flat = _shape.reshape(x, (x.shape[0], -1))
    idx = dispatch.composite(_ARG[kind], flat, dims=(1,), keepdim=False, kind=kind)
    return _shape.reshape(idx, (x.shape[0],) + out_shape(x.shape[1:], dims, keepdim))


# index results (int64): rows without a derivative (``dtype_rule="bool"`` marks a row not
# differentiable), so a compiled program computes them from the data at every call
_ARG = {kind: def_composite(f"arg{kind}", f"Arg{kind}Backward0", ("x",), _arg_fwd, None,
                            attrs=("dims", "keepdim", "kind"), dtype_rule="bool",
                            batch_rule=_arg_batch, cuda_forward=reduce_cuda.arg_forward)
        for kind in ("max", "min")}


def _arg(kind, x, dim, keepdim):
    x = dispatch.tensor_operand(x, f"arg{kind}")
    dims = reduced_dims(f"arg{kind}", dim, x.ndim, multi=False)  # None: the flattened input
    _check_nonempty(f"arg{kind}", x, () if dim is None else dims, dim is None)
    return dispatch.composite(_ARG[kind], x, dims=dims, keepdim=bool(keepdim), kind=kind)


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index (int64) of the first maximum along ``dim``; of the flattened input when ``dim`` is
    None. NaN counts as the maximum. Not differentiable."""
    dim, keepdim = numpy_keywords("argmax", dim, keepdim, axis, keepdims)
    return _arg("max", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index (int64) of the first minimum along ``dim`` (flattened when None)."""
    dim, keepdim = numpy_keywords("argmin", dim, keepdim, axis, keepdims)
    return _arg("min", input, dim, keepdim)


# --- argsort ----------------------------------------------------------------------------------
def argsort_array(d, axis: int, descending: bool = False, kind=None):
    """The int64 indices that sort the ndarray ``d`` along ``axis`` (stable unless ``kind``
    says otherwise; NaN last; ``descending`` keeps ties in their original order)."""
    if not descending:
        return np.argsort(d, axis=axis, kind=kind or "stable").astype(np.int64, copy=False)
    # stable descending: ties keep their original order (n - 1 - reversed stable argsort)
    rev = np.flip(np.argsort(np.flip(d, axis), axis=axis, kind="stable"), axis)
    return (d.shape[axis] - 1 - rev).astype(np.int64, copy=False)


def _argsort_fwd(ctx, x, dim, descending, kind):
    return argsort_array(x, dim, descending, kind)


def _argsort_batch(args, batched, dim, descending, kind):
    return dispatch.composite(ARGSORT, args[0], dim=dim + 1, descending=descending, kind=kind)


# an index result (CPU; no derivative): what sorts, medians and quantiles gather with, so a
# compiled program sorts the data of each call (``_take_along_dim`` takes the index as a value)
ARGSORT = def_composite("argsort", "ArgsortBackward0", ("x",), _argsort_fwd, None,
                        attrs=("dim", "descending", "kind"), dtype_rule="bool",
                        batch_rule=_argsort_batch)


def argsort(x, dim: int, descending: bool = False, kind=None):
    """``argsort_array`` of ``x`` along the non-negative ``dim`` as the ``argsort`` row."""
    return dispatch.composite(ARGSORT, x, dim=dim, descending=bool(descending), kind=kind)


def take_along_dim(x, index, dim: int):
    """``x`` gathered at the int64 Tensor ``index`` along ``dim`` (shapes equal outside
    ``dim``); the gradient is scattered back. The index is an input of the row, not an
    attribute: a compiled program reads it at every call."""
    return _take_along_dim(x, index, dim)
