"""Reductions: sum, mean, prod, var/std, logsumexp; max/min, amax/amin and argmax/argmin are
in ``ops/extrema.py`` (re-exported here), the helpers both use in ``ops/reduce_common.py``.

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
import warnings

import numpy as np

from .. import dtypes
from ..graph.grad_mode import is_grad_enabled
from ..kernels.cpu import reduce as cpu_reduce
from . import binary, reduce_cuda, unary
from .core import dispatch, upper
from . import shape as _shape
from .core.registry import LINEAR, def_composite, public
from .reduce_common import (JvpCtx, dims_batch, finish, keep_shape, numpy_keywords, reduced_dims,
                            shift, stash_reduction, to3, to_keepdim, torch_dtype_name)
from .reduce_cuda import cuda_in as _cuda_in, cuda_kernels as _cuda_kernels
# the value-selecting reductions live in ops/extrema.py (re-exported: ``reduce.max`` is its max)
from .extrema import (AMAX, AMIN, MAX, MAX_DIM, MIN, MIN_DIM, amax, amin,  # noqa: F401
                      argmax, argmin, max, max_result, min, min_result)


# --- the backward of sum, mean and prod ----------------------------------------------------
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
    g = to_keepdim(ctx, g)
    return g if g.shape == ctx.in_shape else _shape.expand(g, ctx.in_shape)


# --- sum / mean ----------------------------------------------------------------------------
def _fold_fwd(kernel):
    def forward(ctx, x, dims, keepdim, dtype):
        shape = stash_reduction(ctx, x, dims, keepdim)
        out_np = None if dtype is None or dtype is dtypes.float16 else dtype.np
        res = finish(kernel(to3(x, dims), out_np), x, shape)
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


SUM_DIM = def_composite("sum_dim", "SumBackward1", ("x",), _sum_fwd, _sum_bwd,
                        attrs=("dims", "keepdim", "dtype"), jvp=LINEAR,
                        batch_rule=dims_batch("sum_dim"), cuda_forward=reduce_cuda.sum_forward,
                        complex_ok=True)
SUM = def_composite("sum", "SumBackward0", ("x",), _sum_fwd, _sum_bwd,
                    attrs=("dims", "keepdim", "dtype"), jvp=LINEAR,
                    batch_rule=dims_batch("sum_dim"), cuda_forward=reduce_cuda.sum_forward,
                    method=True, export=True, complex_ok=True)


@public(SUM)
def sum(input, dim=None, keepdim=False, dtype=None, *, axis=None,  # noqa: A001 - NumPy's name
        keepdims=None):
    """Sum over ``dim`` (None: all; int or tuple, negatives wrap).

    ``out = sum_{i in dim} x_i``; bool/int inputs sum to int64 (like PyTorch), ``dtype`` casts
    first. Empty reductions give 0. Derivative: ``g`` broadcast back over the reduced dims.
    Records ``SumBackward0`` (full sum) or ``SumBackward1`` (with ``dim``/``keepdim``).
    """
    if dim is None and dtype is None and axis is None and not keepdim and keepdims is None:
        result = dispatch.full_sum(SUM, input)  # Note [eager fast path] (ops/core/fastpath.py)
        if result is not None:
            return result
    dim, keepdim = numpy_keywords("sum", dim, keepdim, axis, keepdims)
    input = dispatch.tensor_operand(input, "sum")
    dims = reduced_dims("sum", dim, input.ndim)
    op = SUM if dim is None and not keepdim else SUM_DIM
    return dispatch.composite(op, input, dims=dims, keepdim=bool(keepdim),
                              dtype=None if dtype is None else dtypes.to_dtype(dtype))


def _mean_fwd(ctx, x, dims, keepdim):
    shape = stash_reduction(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    s = _sum3(to3(x, dims))
    with np.errstate(invalid="ignore", divide="ignore"):
        s /= s.dtype.type(ctx.n)  # 0/0 = nan for an empty reduction, like PyTorch
    return finish(s, x, shape)


def _mean_bwd(ctx, g):
    return (_expand_back(ctx, g / ctx.n if ctx.n else g * math.nan),)


MEAN_DIM = def_composite("mean_dim", "MeanBackward1", ("x",), _mean_fwd, _mean_bwd,
                         attrs=("dims", "keepdim"), jvp=LINEAR, batch_rule=dims_batch("mean_dim"),
                         cuda_forward=reduce_cuda.mean_forward, complex_ok=True)
MEAN = def_composite("mean", "MeanBackward0", ("x",), _mean_fwd, _mean_bwd,
                     attrs=("dims", "keepdim"), jvp=LINEAR, batch_rule=dims_batch("mean_dim"),
                     cuda_forward=reduce_cuda.mean_forward, method=True, export=True,
                     complex_ok=True)


@public(MEAN)
def mean(input, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    """Arithmetic mean over ``dim``: ``out = sum_{i in dim} x_i / n`` (nan when ``n == 0``).

    Float input only (or pass ``dtype``). Derivative: ``g / n`` broadcast back.
    Records ``MeanBackward0`` (full) or ``MeanBackward1`` (with ``dim``/``keepdim``).
    """
    dim, keepdim = numpy_keywords("mean", dim, keepdim, axis, keepdims)
    input = dispatch.tensor_operand(input, "mean")
    if dtype is not None:
        input = unary.cast(input, dtypes.to_dtype(dtype))
    if not input.dtype.is_differentiable:  # floating point or complex
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {torch_dtype_name(input.dtype)}")
    dims = reduced_dims("mean", dim, input.ndim)
    op = MEAN if dim is None and not keepdim else MEAN_DIM
    return dispatch.composite(op, input, dims=dims, keepdim=bool(keepdim))


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
        others = cpu_reduce.prod_others(to3(x._data, ctx.dims))
        return (gx * dispatch.Tensor._make(others.reshape(x.shape).astype(x._data.dtype)),)
    if not _has_zero(x):
        return (gx * (to_keepdim(ctx, result) / x),)
    return (gx * _prod_others_masked(ctx, x),)


def _prod_jvp(tangents, primals, outs, dims, keepdim, dtype):
    """``t_out = sum_i t_i prod_{k != i} x_k`` over the reduced dims."""
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = JvpCtx(dims=dims, keep_shape=keep_shape(x.shape, dims))
    others = (to_keepdim(ctx, result) / x if not _has_zero(x)
              else _prod_others_masked(ctx, x))
    out = sum(t * others, dims, keepdim=keepdim)
    return out if dtype is None else unary.cast(out, dtype)


def _prod_batch(args, batched, dims, keepdim, dtype):
    x = args[0]
    if len(dims) == 1:
        return dispatch.composite(PROD_DIM, x, dims=shift(dims), keepdim=keepdim, dtype=dtype)
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
def prod(input, dim=None, keepdim=False, dtype=None, *, axis=None, keepdims=None):
    """Product over all elements, or over one int ``dim``: ``out = prod_i x_i`` (1 if empty).

    bool/int inputs give int64. Derivative: ``g * prod_{k != i} x_k``, exact when ``x`` has
    zeros (exclusive prefix/suffix products); under ``create_graph`` ``g * out / x`` when ``x``
    has no zeros, else a differentiable masked product.
    Records ``ProdBackward0`` (full) or ``ProdBackward1`` (with ``dim``).
    """
    dim, keepdim = numpy_keywords("prod", dim, keepdim, axis, keepdims)
    input = dispatch.tensor_operand(input, "prod")
    dims = reduced_dims("prod", dim, input.ndim, multi=False)
    op = PROD if dim is None else PROD_DIM
    if dim is None and keepdim:
        raise TypeError("prod(): keepdim=True needs an int 'dim'")
    return dispatch.composite(op, input, dims=dims, keepdim=bool(keepdim),
                              dtype=None if dtype is None else dtypes.to_dtype(dtype))


# --- var / std / logsumexp -----------------------------------------------------------------
def _var_fwd(ctx, x, dims, keepdim, correction, sqrt):
    shape = stash_reduction(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    if ctx.n - correction <= 0:
        warnings.warn(f"{'std' if sqrt else 'var'}(): degrees of freedom is <= 0. Correction should "
                      "be strictly less than the reduction factor (input numel divided by output "
                      "numel).", UserWarning, stacklevel=4)
    res = cpu_reduce.reduce_var(to3(x, dims), correction)
    if sqrt:
        np.sqrt(res, out=res)
    return finish(res, x, shape)


def _centered(ctx, x):
    """``(x - mean(x)) / (n - correction)``, by the raw divisor as PyTorch's backward (inf at 0,
    negative below)."""
    dof = ctx.n - ctx.correction
    mu = mean(x, ctx.dims if ctx.dims else None, keepdim=True)
    return (x - mu) * (1.0 / dof if dof != 0 else math.inf)


def _var_bwd(ctx, g, x):
    return (to_keepdim(ctx, g) * 2.0 * _centered(ctx, x),)


def _std_bwd(ctx, g, x, result):
    r = to_keepdim(ctx, result)
    zero = r == 0  # PyTorch masks the gradient to 0 where std is 0
    scaled = binary.where(zero, 0.0, to_keepdim(ctx, g) / binary.where(zero, 1.0, r))
    return (scaled * _centered(ctx, x),)


def _var_jvp(tangents, primals, outs, dims, keepdim, correction, sqrt):
    """var: ``sum(2 (x - mean) t) / (n - correction)``; std: that over ``2 std`` (0 where
    std is 0, as the backward)."""
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = JvpCtx(dims=dims, correction=correction, n=math.prod(x.shape[d] for d in dims))
    s = sum(t * _centered(ctx, x), dims, keepdim=keepdim)
    if not sqrt:
        return s * 2.0
    zero = result == 0
    return binary.where(zero, 0.0, s / binary.where(zero, 1.0, result))


VAR = def_composite("var", "VarBackward0", ("x",), _var_fwd, _var_bwd,
                    attrs=("dims", "keepdim", "correction", "sqrt"), save=("x",), jvp=_var_jvp,
                    batch_rule=dims_batch("var"), cuda_forward=reduce_cuda.var_forward,
                    method=True, export=True)
STD = def_composite("std", "StdBackward0", ("x",), _var_fwd, _std_bwd,
                    attrs=("dims", "keepdim", "correction", "sqrt"), save=("x", "result"),
                    jvp=_var_jvp, batch_rule=dims_batch("std"),
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
    return x, reduced_dims(op, dim, x.ndim), 1 if correction is None else correction


@public(VAR)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
        keepdims=None):
    """Variance over ``dim``: ``sum_i (x_i - mean)**2 / max(0, n - correction)`` (``correction``
    defaults to 1; ``unbiased=False`` means 0; PyTorch's positional ``(dim, unbiased, keepdim)``
    form works). inf (with a warning) when ``n <= correction``.
    Derivative: ``g * 2 (x - mean) / (n - correction)``. Records ``VarBackward0``.
    """
    dim, keepdim = numpy_keywords("var", dim, keepdim, axis, keepdims)
    input, dims, correction = _var_args("var", input, dim, correction, unbiased)
    return dispatch.composite(VAR, input, dims=dims, keepdim=bool(keepdim), correction=correction,
                              sqrt=False)


@public(STD)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
        keepdims=None):
    """Standard deviation ``sqrt(var(x, dim, correction))``. Derivative:
    ``g (x - mean) / ((n - correction) std)``, 0 where std is 0. Records ``StdBackward0``.
    """
    dim, keepdim = numpy_keywords("std", dim, keepdim, axis, keepdims)
    input, dims, correction = _var_args("std", input, dim, correction, unbiased)
    return dispatch.composite(STD, input, dims=dims, keepdim=bool(keepdim), correction=correction,
                              sqrt=True)


def _lse_fwd(ctx, x, dims, keepdim):
    shape = stash_reduction(ctx, x, dims, keepdim)
    return finish(cpu_reduce.reduce_logsumexp(to3(x, dims)), x, shape)


def _lse_bwd(ctx, g, x, result):
    return (to_keepdim(ctx, g) * (x - to_keepdim(ctx, result)).exp(),)


def _lse_jvp(tangents, primals, outs, dims, keepdim):
    (t,), (x,), (result,) = tangents, primals, outs
    ctx = JvpCtx(dims=dims, keep_shape=keep_shape(x.shape, dims))
    return sum(t * (x - to_keepdim(ctx, result)).exp(), dims, keepdim=keepdim)


LOGSUMEXP = def_composite("logsumexp", "LogsumexpBackward0", ("x",), _lse_fwd, _lse_bwd,
                          attrs=("dims", "keepdim"), save=("x", "result"), jvp=_lse_jvp,
                          batch_rule=dims_batch("logsumexp"),
                          cuda_forward=reduce_cuda.logsumexp_forward, method=True, export=True)


@public(LOGSUMEXP)
def logsumexp(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """``log(sum_{i in dim} exp(x_i))``, computed stably as ``m + log(sum exp(x_i - m))`` with
    ``m = max x_i``. Int inputs use the default float dtype. Derivative:
    ``g * exp(x - out)`` (the softmax). Records ``LogsumexpBackward0``.
    """
    dim, keepdim = numpy_keywords("logsumexp", dim, keepdim, axis, keepdims)
    if dim is None:
        raise TypeError("logsumexp() missing required argument 'dim' (or NumPy's 'axis')")
    input = dispatch.tensor_operand(input, "logsumexp")
    if not input.dtype.is_floating_point:
        input = unary.cast(input, dtypes.get_default_dtype())
    return dispatch.composite(LOGSUMEXP, input, dims=reduced_dims("logsumexp", dim, input.ndim),
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
