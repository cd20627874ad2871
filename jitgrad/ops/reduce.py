"""Reductions: sum, mean, prod, max/min, amax/amin, var/std, logsumexp, argmax/argmin.

Forward: every reduction is laid out as the device layer's canonical C-contiguous
``(outer, r, inner)`` array (``kernels.cpu.reduce``): reduced dims that are adjacent need only a
reshape; others are moved to the end first (one copy). float16 is reduced in float32.

Backward rules use Tensor ops only (``reshape``/``expand`` from ``shape``, elementwise ops and
these reductions), so ``create_graph`` records a graph and double backward works. The one
exception is ``prod``'s plain (no ``create_graph``) backward, which calls the exact
``prod_others`` kernel directly.
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..graph.grad_mode import is_grad_enabled
from ..kernels.cpu import reduce as cpu_reduce, pool
from . import binary, reduce_cuda, unary
from .core import dispatch, upper
from . import shape as _shape
from .core.registry import LINEAR, OPS, def_composite, public
from .reduce_cuda import cuda_in as _cuda_in, cuda_kernels as _cuda_kernels

_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "float16": "Half", "float32": "Float", "float64": "Double"}


def torch_dtype_name(d) -> str:
    """PyTorch's scalar-type name for a jitgrad dtype (``int64`` -> ``Long``), for messages."""
    return _TORCH_NAMES.get(d.name, d.name)


# --- argument and layout helpers -----------------------------------------------------------
def _dims(op, dim, ndim, multi=True) -> tuple:
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


def _keep_shape(shape, dims) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _out_shape(shape, dims, keepdim) -> tuple:
    if keepdim:
        return _keep_shape(shape, dims)
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _to3(a: np.ndarray, dims: tuple) -> np.ndarray:
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


def _finish(res: np.ndarray, a: np.ndarray, shape: tuple) -> np.ndarray:
    """Kernel output reshaped to ``shape``; float16 inputs get float16 results back."""
    res = res.reshape(shape)
    if a.dtype == np.float16 and res.dtype == np.float32:
        res = res.astype(np.float16)
    return res


def stash_reduction(ctx, x, dims, keepdim):
    ctx.dims, ctx.keepdim = dims, keepdim
    ctx.in_shape, ctx.keep_shape = x.shape, _keep_shape(x.shape, dims)
    return _out_shape(x.shape, dims, keepdim)


class _Ns:
    """A ctx stand-in for the jvp rules, which share helpers with the backward rules."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _keep(ctx, t):
    """An output-shaped Tensor reshaped to the keepdim shape (broadcastable to the input)."""
    return t if t.shape == ctx.keep_shape else _shape.reshape(t, ctx.keep_shape)


def _expand_back(ctx, g):
    """The gradient ``g`` of a reduction broadcast back to the input's shape (a view)."""
    if dispatch.records_nothing(g):
        # a plain backward records nothing: the read-only view without the ops' bookkeeping
        # (the same view; the two recorded view ops were a measurable cost per call: docs/design.md,
        # 'Measurements behind the code')
        data = g._data
        if data.ndim == 0:  # a full reduction: the scalar repeated, as np.broadcast_to makes
            # it but without its Python-level argument handling (several µs per call)
            view = np.ndarray(ctx.in_shape, data.dtype, data, 0, (0,) * len(ctx.in_shape))
            view.flags.writeable = False
            return dispatch.Tensor._make(view)
        return dispatch.Tensor._make(np.broadcast_to(data.reshape(ctx.keep_shape), ctx.in_shape))
    g = _keep(ctx, g)
    return g if g.shape == ctx.in_shape else _shape.expand(g, ctx.in_shape)


# --- sum / mean ----------------------------------------------------------------------------
def _fold_fwd(kernel):
    def forward(ctx, x, dims, keepdim, dtype):
        shape = stash_reduction(ctx, x, dims, keepdim)
        out_np = None if dtype is None or dtype is dtypes.float16 else dtype.np
        res = _finish(kernel(_to3(x, dims), out_np), x, shape)
        return res if dtype is None else res.astype(dtype.np, copy=False)
    return forward


def _sum3(x3, out_dtype=None):
    """``cpu_reduce.reduce_sum``; complex input takes NumPy's pairwise sum instead (the fold
    kernels are compiled for real dtypes only; Note [complex support] in ops/core/operands.py)."""
    if x3.dtype.kind == "c":
        return x3.sum(axis=1, dtype=out_dtype)
    return cpu_reduce.reduce_sum(x3, out_dtype)


_fold_sum_fwd, _prod_fwd = _fold_fwd(_sum3), _fold_fwd(cpu_reduce.reduce_prod)


def _sum_fwd(ctx, x, dims, keepdim, dtype):
    """The sum's forward; the full sum of a small contiguous float array goes straight to the
    serial kernel (Note [eager fast path]: the same kernel and bits as ``_fold_sum_fwd``)."""
    if dtype is None and not keepdim and x.ndim and len(dims) == x.ndim:
        total = cpu_reduce.sum_all(x)
        if total is not None:
            ctx.dims, ctx.keepdim = dims, keepdim
            ctx.in_shape, ctx.keep_shape = x.shape, (1,) * x.ndim
            return total
    return _fold_sum_fwd(ctx, x, dims, keepdim, dtype)


def _sum_bwd(ctx, g):
    return (_expand_back(ctx, g),)


# Batch rules (vmap, func/_batching.py): the inputs arrive with the batch as dim 0, so the
# reduced dims shift by one and the batch dim is kept.
def _shift(dims):
    return tuple(d + 1 for d in dims)


def _dims_batch(name):
    """The batch rule of a reduction over ``dims``: the row ``name`` (looked up when the rule
    runs, so a row can name itself) over the shifted dims."""
    def rule(args, batched, dims, **attrs):
        return dispatch.composite(OPS[name], args[0], dims=_shift(dims), **attrs)
    return rule


SUM_DIM = def_composite("sum_dim", "SumBackward1", ("x",), _sum_fwd, _sum_bwd,
                        attrs=("dims", "keepdim", "dtype"), jvp=LINEAR,
                        batch_rule=_dims_batch("sum_dim"), cuda_forward=reduce_cuda.sum_forward,
                        complex_ok=True)
SUM = def_composite("sum", "SumBackward0", ("x",), _sum_fwd, _sum_bwd,
                    attrs=("dims", "keepdim", "dtype"), jvp=LINEAR,
                    batch_rule=_dims_batch("sum_dim"), cuda_forward=reduce_cuda.sum_forward,
                    method=True, export=True, complex_ok=True)


def _numpy_keywords(name, dim, keepdim, axis, keepdims, default=None):
    """``(dim, keepdim)`` with NumPy's keyword names ``axis`` / ``keepdims`` accepted for
    PyTorch's (as PyTorch's argument parser does)."""
    if axis is not None:
        if dim is not default:
            raise TypeError(f"{name}() got both 'dim' and 'axis'; pass one")
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, keepdim


@public(SUM)
def sum(x, dim=None, keepdim=False, dtype=None, *, axis=None,  # noqa: A001 - NumPy's name
        keepdims=None):
    """Sum over ``dim`` (None: all; int or tuple, negatives wrap).

    ``out = sum_{i in dim} x_i``; bool/int inputs sum to int64 (like PyTorch), ``dtype`` casts
    first. Empty reductions give 0. Derivative: ``g`` broadcast back over the reduced dims.
    Records ``SumBackward0`` (full sum) or ``SumBackward1`` (with ``dim``/``keepdim``).
    """
    if dim is None and dtype is None and axis is None and not keepdim and keepdims is None:
        result = dispatch.full_sum(SUM, x)  # Note [eager fast path] (ops/core/fastpath.py)
        if result is not None:
            return result
    dim, keepdim = _numpy_keywords("sum", dim, keepdim, axis, keepdims)
    x = dispatch.tensor_operand(x, "sum")
    dims = _dims("sum", dim, x.ndim)
    op = SUM if dim is None and not keepdim else SUM_DIM
    return dispatch.composite(op, x, dims=dims, keepdim=bool(keepdim),
                              dtype=None if dtype is None else dtypes.to_dtype(dtype))


def _mean_fwd(ctx, x, dims, keepdim):
    shape = stash_reduction(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    s = _sum3(_to3(x, dims))
    with np.errstate(invalid="ignore", divide="ignore"):
        s /= s.dtype.type(ctx.n)  # 0/0 = nan for an empty reduction, like PyTorch
    return _finish(s, x, shape)


def _mean_bwd(ctx, g):
    return (_expand_back(ctx, g / ctx.n if ctx.n else g * math.nan),)


MEAN_DIM = def_composite("mean_dim", "MeanBackward1", ("x",), _mean_fwd, _mean_bwd,
                         attrs=("dims", "keepdim"), jvp=LINEAR, batch_rule=_dims_batch("mean_dim"),
                         cuda_forward=reduce_cuda.mean_forward, complex_ok=True)
MEAN = def_composite("mean", "MeanBackward0", ("x",), _mean_fwd, _mean_bwd,
                     attrs=("dims", "keepdim"), jvp=LINEAR, batch_rule=_dims_batch("mean_dim"),
                     cuda_forward=reduce_cuda.mean_forward, method=True, export=True,
                     complex_ok=True)


@public(MEAN)
def mean(x, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    """Arithmetic mean over ``dim``: ``out = sum_{i in dim} x_i / n`` (nan when ``n == 0``).

    Float input only (or pass ``dtype``). Derivative: ``g / n`` broadcast back.
    Records ``MeanBackward0`` (full) or ``MeanBackward1`` (with ``dim``/``keepdim``).
    """
    dim, keepdim = _numpy_keywords("mean", dim, keepdim, axis, keepdims)
    x = dispatch.tensor_operand(x, "mean")
    if dtype is not None:
        x = unary.cast(x, dtypes.to_dtype(dtype))
    if not x.dtype.is_differentiable:  # floating point or complex
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {torch_dtype_name(x.dtype)}")
    dims = _dims("mean", dim, x.ndim)
    op = MEAN if dim is None and not keepdim else MEAN_DIM
    return dispatch.composite(op, x, dims=dims, keepdim=bool(keepdim))


# --- prod ----------------------------------------------------------------------------------
def _prod_others_masked(ctx, x):
    """``prod_{k != i} x_k`` along the reduced dim with Tensor ops (differentiable, exact with
    zeros): the input is repeated ``r`` times with the diagonal replaced by 1, then multiplied.
    Costs ``r`` times the memory; used only under ``create_graph`` when ``x`` has zeros."""
    full = len(ctx.dims) != 1 or x.ndim == 0
    xf = _shape.reshape(x, (x.numel(),)) if full else x
    d = 0 if full else ctx.dims[0]
    r = xf.shape[d]
    mask = _eye_mask(r, xf.ndim - d - 1, dispatch.device_of(x._data))
    masked = binary.where(mask, 1.0, _shape.unsqueeze(xf, d))
    others = prod(masked, d + 1)
    return _shape.reshape(others, x.shape) if full else others


@upper.constant_maker
def _eye_mask(r: int, trailing: int, device: str):
    """The ``(r, r, 1...)`` boolean identity on ``device`` (a constant of a traced program)."""
    mask = np.eye(r, dtype=bool).reshape((r, r) + (1,) * trailing)
    return dispatch.Tensor._make(mask if device == "cpu" else dispatch.move(mask, device))


def _has_zero(x) -> bool:
    """Whether ``x`` has a zero (picks prod's derivative formula). On CUDA the answer is data
    the host must see: one device-to-host sync, as PyTorch's prod backward does. While
    jitgrad.compile traces, True without a read: the formula exact for every value."""
    if upper.host_read_hook is not None:
        return True
    if dispatch.device_of(x._data) == "cpu":
        return bool(np.any(x._data == 0))
    return bool(_cuda_kernels().reduce_sum((x == 0)._data, tuple(range(x.ndim))).get())


def _prod_bwd(ctx, g, x, result):
    gx = _expand_back(ctx, g)
    # plain backward: the exact kernel, no graph needed (not while tangents or batched
    # gradients flow: Note [transform hooks])
    if not is_grad_enabled() and dispatch.transform_hook is None:
        if dispatch.device_of(x._data) != "cpu":
            others = _cuda_kernels().prod_others(_cuda_in(x._data), ctx.dims)
            return (gx * dispatch.Tensor._make(others.astype(x._data.dtype, copy=False)),)
        others = cpu_reduce.prod_others(_to3(x._data, ctx.dims))
        return (gx * dispatch.Tensor._make(others.reshape(x.shape).astype(x._data.dtype)),)
    if not _has_zero(x):
        return (gx * (_keep(ctx, result) / x),)
    return (gx * _prod_others_masked(ctx, x),)


def _prod_jvp(tangents, primals, outs, dims, keepdim, dtype):
    """``t_out = sum_i t_i prod_{k != i} x_k`` over the reduced dims."""
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = _Ns(dims=dims, keep_shape=_keep_shape(x.shape, dims))
    others = (_keep(ctx, result) / x if not _has_zero(x)
              else _prod_others_masked(ctx, x))
    out = sum(t * others, dims, keepdim=keepdim)
    return out if dtype is None else unary.cast(out, dtype)


def _prod_batch(args, batched, dims, keepdim, dtype):
    x = args[0]
    if len(dims) == 1:
        return dispatch.composite(PROD_DIM, x, dims=_shift(dims), keepdim=keepdim, dtype=dtype)
    flat = _shape.reshape(x, (x.shape[0], -1))  # a full product: one dim per example
    return dispatch.composite(PROD_DIM, flat, dims=(1,), keepdim=False, dtype=dtype)


PROD = def_composite("prod", "ProdBackward0", ("x",), _prod_fwd, _prod_bwd,
                     attrs=("dims", "keepdim", "dtype"), save=("x", "result"), jvp=_prod_jvp,
                     batch_rule=_prod_batch, cuda_forward=reduce_cuda.prod_forward,
                     method=True, export=True)
PROD_DIM = def_composite("prod_dim", "ProdBackward1", ("x",), _prod_fwd, _prod_bwd,
                         attrs=("dims", "keepdim", "dtype"), save=("x", "result"), jvp=_prod_jvp,
                         batch_rule=_prod_batch, cuda_forward=reduce_cuda.prod_forward)


@public(PROD)
def prod(x, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    """Product over all elements, or over one int ``dim``: ``out = prod_i x_i`` (1 if empty).

    bool/int inputs give int64. Derivative: ``g * prod_{k != i} x_k``, exact when ``x`` has
    zeros (exclusive prefix/suffix products); under ``create_graph`` ``g * out / x`` when ``x``
    has no zeros, else a differentiable masked product.
    Records ``ProdBackward0`` (full) or ``ProdBackward1`` (with ``dim``).
    """
    dim, keepdim = _numpy_keywords("prod", dim, keepdim, axis, keepdims)
    x = dispatch.tensor_operand(x, "prod")
    dims = _dims("prod", dim, x.ndim, multi=False)
    op = PROD if dim is None else PROD_DIM
    if dim is None and keepdim:
        raise TypeError("prod(): keepdim=True needs an int 'dim'")
    return dispatch.composite(op, x, dims=dims, keepdim=bool(keepdim),
                              dtype=None if dtype is None else dtypes.to_dtype(dtype))


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
    return (binary.where(mask, g / unary.cast(sum(mask), g.dtype), 0.0),)


def _extreme_dim_fwd(ctx, x, dims, keepdim, kind):
    shape = stash_reduction(ctx, x, dims, keepdim)
    vals, idx = _KERNELS[kind](_to3(x, dims))
    ctx.indices = idx.reshape(ctx.keep_shape)  # where the backward scatters the gradient
    # a selected value keeps the input's dtype (the kernels widen small ints to int64)
    return _finish(vals, x, shape).astype(x.dtype, copy=False), idx.reshape(shape)


def _extreme_dim_bwd(ctx, g, _g_indices):
    if not ctx.dims:  # 0-d input: the value itself
        return (g,)
    index = dispatch.Tensor._make(ctx.indices)
    return (_index_scatter(_keep(ctx, g), index, ctx.dims[0], ctx.in_shape),)


def _amax_bwd(ctx, g, x, result):
    mask = _tie_mask(x, _keep(ctx, result))
    count = unary.cast(sum(mask, ctx.dims, keepdim=True), g.dtype)
    return (mask * (_keep(ctx, g) / count),)


def _extreme_full_jvp(tangents, primals, outs, dims, keepdim, kind):
    # PyTorch's evenly_read_jvp: the mean of the tangent over the tied extremes
    (t,), (x,), (result,) = tangents, primals, outs
    mask = _tie_mask(x, result)
    return sum(binary.where(mask, t, 0.0)) / unary.cast(sum(mask), t.dtype)


def _extreme_dim_jvp(tangents, primals, outs, dims, keepdim, kind):
    t, indices = tangents[0], outs[1]
    if not dims:  # 0-d input: the value itself
        return t, None
    ctx = _Ns(dims=dims, keep_shape=_keep_shape(t.shape, dims))
    picked = _take_along_dim(t, _keep(ctx, indices), dims[0])
    return (picked if keepdim else _shape.squeeze(picked, dims[0])), None


def _amax_jvp(tangents, primals, outs, dims, keepdim, kind):
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = _Ns(dims=dims, keep_shape=_keep_shape(x.shape, dims))
    mask = _tie_mask(x, _keep(ctx, result))
    count = unary.cast(sum(mask, dims, keepdim=True), t.dtype)
    return sum(binary.where(mask, t, 0.0) / count, dims, keepdim=keepdim)


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
                        jvp=_extreme_dim_jvp, batch_rule=_dims_batch(f"{kind}_dim"),
                        cuda_forward=reduce_cuda.extreme_dim_forward)
    amax = def_composite(f"a{kind}", f"A{kind}Backward0", ("x",), _extreme_values_fwd,
                         _amax_bwd, attrs=("dims", "keepdim", "kind"), save=("x", "result"),
                         jvp=_amax_jvp, batch_rule=_dims_batch(f"a{kind}"),
                         cuda_forward=reduce_cuda.extreme_values_forward, method=True, export=True)
    return full, dim, amax


def _extreme_values_fwd(ctx, x, dims, keepdim, kind):
    shape = stash_reduction(ctx, x, dims, keepdim)
    return _finish(_KERNELS[kind](_to3(x, dims))[0], x, shape).astype(x.dtype, copy=False)


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
    dims = _dims(kind, dim, x.ndim, multi=False)
    _check_nonempty(kind, x, dims, False)
    values, indices = dispatch.composite(MAX_DIM if kind == "max" else MIN_DIM, x, dims=dims,
                                         keepdim=bool(keepdim), kind=kind)
    return (max_result if kind == "max" else min_result)(values, indices)


@public(MAX)
def max(x, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Maximum. ``max(x)``: the largest element (0-d); the gradient is split evenly among
    ties (``MaxBackward1``). ``max(x, dim)``: a ``(values, indices)`` named tuple along one
    dim (first occurrence); the gradient goes to ``indices`` (``MaxBackward0``). NaN
    propagates. ``max(x, other_tensor)`` is ``maximum``. Empty inputs raise.
    """
    dim, keepdim = _numpy_keywords("max", dim, keepdim, axis, keepdims)
    if isinstance(dim, dispatch.Tensor):
        return binary.maximum(x, dim)
    return _extreme("max", x, dim, keepdim)


@public(MIN)
def min(x, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Minimum: as ``max`` with the smallest element (``MinBackward1`` / ``MinBackward0``)."""
    dim, keepdim = _numpy_keywords("min", dim, keepdim, axis, keepdims)
    if isinstance(dim, dispatch.Tensor):
        return binary.minimum(x, dim)
    return _extreme("min", x, dim, keepdim)


def _amax(kind, x, dim, keepdim):
    x = dispatch.tensor_operand(x, f"a{kind}")
    dims = _dims(f"a{kind}", dim, x.ndim)
    _check_nonempty(f"a{kind}", x, dims, x.ndim == 0 or len(dims) == x.ndim)
    return dispatch.composite(AMAX if kind == "max" else AMIN, x, dims=dims,
                              keepdim=bool(keepdim), kind=kind)


@public(AMAX)
def amax(x, dim=(), keepdim=False, *, axis=None, keepdims=None):
    """Maximum over ``dim`` (int or tuple; ``()`` = all): ``out = max_{i in dim} x_i``.

    Derivative: ``g`` split evenly among the elements equal to the maximum (NaN counts as
    equal to a NaN result). Records ``AmaxBackward0``.
    """
    dim, keepdim = _numpy_keywords("amax", dim, keepdim, axis, keepdims, default=())
    return _amax("max", x, dim, keepdim)


@public(AMIN)
def amin(x, dim=(), keepdim=False, *, axis=None, keepdims=None):
    """Minimum over ``dim``; derivative split evenly among ties. Records ``AminBackward0``."""
    dim, keepdim = _numpy_keywords("amin", dim, keepdim, axis, keepdims, default=())
    return _amax("min", x, dim, keepdim)


def _arg(kind, x, dim, keepdim):
    x = dispatch.tensor_operand(x, f"arg{kind}")
    dims = _dims(f"arg{kind}", dim, x.ndim, multi=False)  # None: the flattened input
    _check_nonempty(f"arg{kind}", x, () if dim is None else dims, dim is None)
    if dispatch.device_of(x._data) != "cpu":
        kernels = _cuda_kernels()
        fn = kernels.reduce_max if kind == "max" else kernels.reduce_min
        _, idx = fn(_cuda_in(x._data), dims)
        return dispatch.Tensor._make(idx.reshape(_out_shape(x.shape, dims, keepdim)))
    _, idx = _KERNELS[kind](_to3(x._data, dims))
    return dispatch.Tensor._make(idx.reshape(_out_shape(x.shape, dims, keepdim)))


def argmax(x, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index (int64) of the first maximum along ``dim``; of the flattened input when ``dim`` is
    None. NaN counts as the maximum. Not differentiable."""
    dim, keepdim = _numpy_keywords("argmax", dim, keepdim, axis, keepdims)
    return _arg("max", x, dim, keepdim)


def argmin(x, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Index (int64) of the first minimum along ``dim`` (flattened when None)."""
    dim, keepdim = _numpy_keywords("argmin", dim, keepdim, axis, keepdims)
    return _arg("min", x, dim, keepdim)


# --- var / std / logsumexp -----------------------------------------------------------------
def _var_fwd(ctx, x, dims, keepdim, correction, sqrt):
    shape = stash_reduction(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    if ctx.n - correction <= 0:
        warnings.warn(f"{'std' if sqrt else 'var'}(): degrees of freedom is <= 0. Correction should "
                      "be strictly less than the reduction factor (input numel divided by output "
                      "numel).", UserWarning, stacklevel=4)
    res = cpu_reduce.reduce_var(_to3(x, dims), correction)
    if sqrt:
        np.sqrt(res, out=res)
    return _finish(res, x, shape)


def _centered(ctx, x):
    """``(x - mean(x)) / (n - correction)``, by the raw divisor as PyTorch's backward (inf at 0,
    negative below)."""
    dof = ctx.n - ctx.correction
    mu = mean(x, ctx.dims if ctx.dims else None, keepdim=True)
    return (x - mu) * (1.0 / dof if dof != 0 else math.inf)


def _var_bwd(ctx, g, x):
    return (_keep(ctx, g) * 2.0 * _centered(ctx, x),)


def _std_bwd(ctx, g, x, result):
    r = _keep(ctx, result)
    zero = r == 0  # PyTorch masks the gradient to 0 where std is 0
    scaled = binary.where(zero, 0.0, _keep(ctx, g) / binary.where(zero, 1.0, r))
    return (scaled * _centered(ctx, x),)


def _var_jvp(tangents, primals, outs, dims, keepdim, correction, sqrt):
    """var: ``sum(2 (x - mean) t) / (n - correction)``; std: that over ``2 std`` (0 where
    std is 0, as the backward)."""
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = _Ns(dims=dims, correction=correction, n=math.prod(x.shape[d] for d in dims))
    s = sum(t * _centered(ctx, x), dims, keepdim=keepdim)
    if not sqrt:
        return s * 2.0
    zero = result == 0
    return binary.where(zero, 0.0, s / binary.where(zero, 1.0, result))


VAR = def_composite("var", "VarBackward0", ("x",), _var_fwd, _var_bwd,
                    attrs=("dims", "keepdim", "correction", "sqrt"), save=("x",), jvp=_var_jvp,
                    batch_rule=_dims_batch("var"), cuda_forward=reduce_cuda.var_forward,
                    method=True, export=True)
STD = def_composite("std", "StdBackward0", ("x",), _var_fwd, _std_bwd,
                    attrs=("dims", "keepdim", "correction", "sqrt"), save=("x", "result"),
                    jvp=_var_jvp, batch_rule=_dims_batch("std"),
                    cuda_forward=reduce_cuda.var_forward, method=True, export=True)


def _var_args(op, x, dim, correction, unbiased):
    x = dispatch.tensor_operand(x, op)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}(): std and var only support floating point and complex dtypes, "
                           f"got {torch_dtype_name(x.dtype)}")
    if isinstance(dim, bool):  # legacy var(x, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return x, _dims(op, dim, x.ndim), 1 if correction is None else correction


@public(VAR)
def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
        keepdims=None):
    """Variance over ``dim``: ``sum_i (x_i - mean)**2 / max(0, n - correction)`` (``correction``
    defaults to 1; ``unbiased=False`` means 0; PyTorch's positional ``(dim, unbiased, keepdim)``
    form works). inf (with a warning) when ``n <= correction``.
    Derivative: ``g * 2 (x - mean) / (n - correction)``. Records ``VarBackward0``.
    """
    dim, keepdim = _numpy_keywords("var", dim, keepdim, axis, keepdims)
    x, dims, correction = _var_args("var", x, dim, correction, unbiased)
    return dispatch.composite(VAR, x, dims=dims, keepdim=bool(keepdim), correction=correction,
                              sqrt=False)


@public(STD)
def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
        keepdims=None):
    """Standard deviation ``sqrt(var(x, dim, correction))``. Derivative:
    ``g (x - mean) / ((n - correction) std)``, 0 where std is 0. Records ``StdBackward0``.
    """
    dim, keepdim = _numpy_keywords("std", dim, keepdim, axis, keepdims)
    x, dims, correction = _var_args("std", x, dim, correction, unbiased)
    return dispatch.composite(STD, x, dims=dims, keepdim=bool(keepdim), correction=correction,
                              sqrt=True)


def _lse_fwd(ctx, x, dims, keepdim):
    shape = stash_reduction(ctx, x, dims, keepdim)
    return _finish(cpu_reduce.reduce_logsumexp(_to3(x, dims)), x, shape)


def _lse_bwd(ctx, g, x, result):
    return (_keep(ctx, g) * (x - _keep(ctx, result)).exp(),)


def _lse_jvp(tangents, primals, outs, dims, keepdim):
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = _Ns(dims=dims, keep_shape=_keep_shape(x.shape, dims))
    return sum(t * (x - _keep(ctx, result)).exp(), dims, keepdim=keepdim)


LOGSUMEXP = def_composite("logsumexp", "LogsumexpBackward0", ("x",), _lse_fwd, _lse_bwd,
                          attrs=("dims", "keepdim"), save=("x", "result"), jvp=_lse_jvp,
                          batch_rule=_dims_batch("logsumexp"),
                          cuda_forward=reduce_cuda.logsumexp_forward, method=True, export=True)


@public(LOGSUMEXP)
def logsumexp(x, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """``log(sum_{i in dim} exp(x_i))``, computed stably as ``m + log(sum exp(x_i - m))`` with
    ``m = max x_i``. Int inputs use the default float dtype. Derivative:
    ``g * exp(x - out)`` (the softmax). Records ``LogsumexpBackward0``.
    """
    dim, keepdim = _numpy_keywords("logsumexp", dim, keepdim, axis, keepdims)
    if dim is None:
        raise TypeError("logsumexp() missing required argument 'dim' (or NumPy's 'axis')")
    x = dispatch.tensor_operand(x, "logsumexp")
    if not x.dtype.is_floating_point:
        x = unary.cast(x, dtypes.get_default_dtype())
    return dispatch.composite(LOGSUMEXP, x, dims=_dims("logsumexp", dim, x.ndim),
                              keepdim=bool(keepdim))


# --- gradient broadcasting -----------------------------------------------------------------
def sum_to_shape(x, shape):
    """Sum ``x`` down to ``shape`` (which must broadcast to ``x.shape``): sum the leading
    extra dims and the dims where ``shape`` has 1. Returns ``x`` itself when the shapes are
    equal. Differentiable (``SumBackward1`` + a reshape); raises ValueError otherwise.
    """
    shape = tuple(shape)
    xs = tuple(x.shape)
    if xs == shape:
        return x
    lead = len(xs) - len(shape)
    if lead < 0 or any(s not in (1, t) for s, t in zip(shape, xs[lead:])):
        raise ValueError(f"sum_to_shape: shape {list(shape)} is not broadcastable to "
                         f"{list(xs)}")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and xs[lead + i] != 1)
    if dims and builtins.any(xs[d] != 1 for d in dims):
        x = sum(x, dims, keepdim=True)
    return x if tuple(x.shape) == shape else _shape.reshape(x, shape)
