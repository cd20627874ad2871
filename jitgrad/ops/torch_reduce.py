"""PyTorch's reductions and scans that jitgrad lacked (issue 35): ``cummax``/``cummin``,
``kthvalue``, ``mode``, ``nanmedian`` (rows that pick elements: the gradient goes to the picked
ones), ``logcumsumexp`` (a row), and the compositions ``aminmax``, ``nansum``, ``nanmean``,
``std_mean``, ``var_mean``, ``cov``, ``corrcoef``; the counting functions ``count_nonzero``,
``bincount``, ``histc``, ``histogram``, ``bucketize``, ``searchsorted``, ``isin`` have no
derivative and return constant tensors. Results with several parts are PyTorch's named tuples
(``torch.return_types``).
"""
from __future__ import annotations

import builtins
import math
from collections import namedtuple

import numpy as np

from .. import dtypes
from . import binary, extrema, linalg, reduce as _reduce, scatter, unary
from . import shape as _shape
from . import torch_cuda
from .core import dispatch, methods
from .core.registry import OPS, def_composite, public
from .torch_common import constant, host_arrays, tensor

aminmax_result = namedtuple("aminmax", ["min", "max"])
cummax_result = namedtuple("cummax", ["values", "indices"])
cummin_result = namedtuple("cummin", ["values", "indices"])
kthvalue_result = namedtuple("kthvalue", ["values", "indices"])
mode_result = namedtuple("mode", ["values", "indices"])
nanmedian_result = namedtuple("nanmedian", ["values", "indices"])
frexp_result = namedtuple("frexp", ["mantissa", "exponent"])
histogram_result = namedtuple("histogram", ["hist", "bin_edges"])


# --- rows that pick one element per output position -----------------------------------------
def _cummax_pick(a, dim, kind):
    """The index of the running max (min) along ``dim``: the latest of ties; a NaN is kept
    from where it appears (PyTorch's)."""
    acc = (np.maximum if kind == "max" else np.minimum).accumulate(a, dim)
    shape = [1] * a.ndim
    shape[dim] = a.shape[dim]
    pos = np.arange(a.shape[dim]).reshape(shape)
    hit = (a == acc) | np.isnan(a)
    return np.maximum.accumulate(np.where(hit, pos, 0), axis=dim)


def _kth_pick(a, dim, k):
    return np.take(np.argsort(a, axis=dim, kind="stable"), [k - 1], axis=dim)


def _mode_pick(a, dim, _):
    """The most frequent value (the smallest of equally frequent ones), at its last index."""
    moved = np.moveaxis(a, dim, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    out = np.empty(flat.shape[0], dtype=np.int64)
    for r, row in enumerate(flat):
        values, counts = np.unique(row, return_counts=True)
        best = values[np.argmax(counts)]  # (unique sorts: the smallest wins ties)
        out[r] = np.flatnonzero((row == best) | (np.isnan(best) & np.isnan(row)))[-1]
    return np.expand_dims(out.reshape(moved.shape[:-1]), dim)


def _nanmedian_pick(a, dim, _):
    """The lower median of the non-NaN elements (a NaN where all are NaN)."""
    order = np.argsort(a, axis=dim, kind="stable")  # NaN sorts last
    count = np.sum(~np.isnan(a), axis=dim, keepdims=True)
    at = np.maximum(count - 1, 0) // 2
    return np.take_along_axis(order, at, axis=dim)


_PICKS = {"cummax": _cummax_pick, "cummin": _cummax_pick, "kthvalue": _kth_pick,
          "mode": _mode_pick, "nanmedian": _nanmedian_pick}


def _pick_fwd(ctx, input, dim, keepdim, param, name):
    index = _PICKS[name](input, dim, param).astype(np.int64)
    ctx.index, ctx.in_shape = index, input.shape
    values = np.take_along_axis(input, index, axis=dim)
    if not keepdim:
        values, index = np.squeeze(values, dim), np.squeeze(index, dim)
    return values, index


def _pick_back(ctx, g, g_index):
    if not ctx.keepdim:
        g = _shape.unsqueeze(g, ctx.dim)
    zeros = dispatch.zeros(ctx.in_shape, g.dtype, g.device)
    return (scatter.scatter_add(zeros, ctx.dim, ctx.index, g),)


def _pick_jvp(tangents, primals, outs, dim, keepdim, param, name):
    index = outs[1] if keepdim else _shape.unsqueeze(outs[1], dim)
    picked = scatter.gather(tangents[0], dim, index)
    return (picked if keepdim else _shape.squeeze(picked, dim)), None


def _pick_batch(args, batched, dim, keepdim, param, name):
    return dispatch.composite(OPS[name], args[0], dim=dim + 1, keepdim=keepdim, param=param,
                              name=name)


def _pick_row(name, node_name):
    return def_composite(name, node_name, ("input",), _pick_fwd, _pick_back,
                         attrs=("dim", "keepdim", "param", "name"), n_outputs=2, jvp=_pick_jvp,
                         batch_rule=_pick_batch, cuda_forward=torch_cuda.host_forward(_pick_fwd),
                         method=True, export=True)


CUMMAX = _pick_row("cummax", "CummaxBackward0")
CUMMIN = _pick_row("cummin", "CumminBackward0")
KTHVALUE = _pick_row("kthvalue", "KthvalueBackward0")
MODE = _pick_row("mode", "ModeBackward0")
NANMEDIAN = _pick_row("nanmedian", "NanmedianBackward0")


def _picked(row, result, input, dim, keepdim, param):
    x = tensor(input, row.name)
    if x.ndim == 0:  # a 0-d input is its own single slice
        values, indices = dispatch.composite(row, _shape.reshape(x, (1,)), dim=0, keepdim=False,
                                             param=param, name=row.name)
        return result(_shape.reshape(values, ()), _shape.reshape(indices, ()))
    d = _shape.wrap_dim(row.name, dim, x.ndim)
    if x.shape[d] == 0:
        raise IndexError(f"{row.name}(): Expected reduction dim {d} to have non-zero size.")
    return result(*dispatch.composite(row, x, dim=d, keepdim=bool(keepdim), param=param,
                                      name=row.name))


@public(CUMMAX)
def cummax(input, dim):
    """``(values, indices)``: the running maximum along ``dim`` and where it was reached (the
    latest of ties; NaN propagates). Derivative: ``g`` scatter-added at ``indices``."""
    return _picked(CUMMAX, cummax_result, input, dim, True, "max")


@public(CUMMIN)
def cummin(input, dim):
    """``(values, indices)``: the running minimum along ``dim`` (as ``cummax``)."""
    return _picked(CUMMIN, cummin_result, input, dim, True, "min")


@public(KTHVALUE)
def kthvalue(input, k, dim=-1, keepdim=False):
    """``(values, indices)``: the ``k``-th smallest element along ``dim`` (1-based ``k``).
    Derivative: ``g`` at the picked element."""
    x = tensor(input, "kthvalue")
    n = x.shape[_shape.wrap_dim("kthvalue", dim, x.ndim)] if x.ndim else 1
    if not 1 <= int(k) <= n:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {dim} "
                         f"(k={k}, size {n})")
    return _picked(KTHVALUE, kthvalue_result, x, dim, keepdim, int(k))


@public(MODE)
def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest of equally
    frequent ones) and its last index. Derivative: ``g`` at that index."""
    return _picked(MODE, mode_result, input, dim, keepdim, None)


@public(NANMEDIAN)
def nanmedian(input, dim=None, keepdim=False):
    """The median ignoring NaN (the lower of the two middle values). Without ``dim``: a 0-d
    tensor; with it, ``(values, indices)``. Derivative: ``g`` at the picked element."""
    x = tensor(input, "nanmedian")
    if dim is None:
        return _picked(NANMEDIAN, nanmedian_result, _shape.reshape(x, (-1,)), 0, False,
                       None).values
    return _picked(NANMEDIAN, nanmedian_result, x, dim, keepdim, None)


# --- logcumsumexp ----------------------------------------------------------------------------
def _logcumsumexp_fwd(ctx, input, dim):
    a = input if input.dtype.kind in "fc" else input.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.logaddexp.accumulate(a, axis=dim)


def _reverse_lcse(t, dim):
    from .npfuncs import flip

    return flip(logcumsumexp(flip(t, (dim,)), dim), (dim,))


def _log_terms(mask, magnitude, result):
    """``log(magnitude) - result`` where ``mask`` holds, -inf elsewhere: both branches are
    ``where``s, so no NaN (``log 0 - (-inf)``) reaches a gradient of any order."""
    safe = binary.where(mask, magnitude, 1.0)
    return binary.where(mask, unary.log(safe) - result, -math.inf)


def _logcumsumexp_back(ctx, g, input, result):
    # gx_j = sum_{i >= j} g_i exp(x_j - out_i), split by the sign of g so every term is a
    # logcumsumexp of logs (no overflow): exp(x_j + rlcse(log g+ - out)_j) - (same for g-)
    d = ctx.dim
    up = unary.exp(input + _reverse_lcse(_log_terms(g > 0, g, result), d))
    down = unary.exp(input + _reverse_lcse(_log_terms(g < 0, -g, result), d))
    return (up - down,)


def _logcumsumexp_jvp(tangents, primals, outs, dim):
    # d out_i = sum_{j <= i} exp(x_j - out_i) t_j: a cumsum weighted by the softmax prefix,
    # shifted by the (finite) max for range; 0 where out_i = -inf (every x_j = -inf)
    from .npfuncs import cumsum

    x, out = primals[0], outs[0]
    top = extrema.amax(x, dim, keepdim=True).detach()
    shift = binary.where(binary.compare("eq", top - top, 0.0), top, 0.0)
    scale = unary.exp(out - shift)
    return cumsum(unary.exp(x - shift) * tangents[0], dim) / binary.where(scale > 0, scale, 1.0)


LOGCUMSUMEXP = def_composite("logcumsumexp", "LogcumsumexpBackward0", ("input",),
                             _logcumsumexp_fwd, _logcumsumexp_back, attrs=("dim",),
                             save=("input", "result"), jvp=_logcumsumexp_jvp,
                             batch_rule=lambda args, batched, dim: dispatch.composite(
                                 LOGCUMSUMEXP, args[0], dim=dim + 1),
                             cuda_forward=torch_cuda.host_forward(_logcumsumexp_fwd),
                             method=True, export=True)


@public(LOGCUMSUMEXP)
def logcumsumexp(input, dim):
    """``out_i = log sum_{j <= i} exp(x_j)`` along ``dim``. Derivative:
    ``gx_j = sum_{i >= j} g_i exp(x_j - out_i)`` (computed as logcumsumexps: no overflow)."""
    x = tensor(input, "logcumsumexp")
    if x.ndim == 0:
        return _shape.reshape(logcumsumexp(_shape.reshape(x, (1,)), 0), ())
    return dispatch.composite(LOGCUMSUMEXP, x, dim=_shape.wrap_dim("logcumsumexp", dim, x.ndim))


# --- compositions ----------------------------------------------------------------------------
def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (all elements when None), as ``amin`` and ``amax`` (ties
    share the gradient evenly)."""
    x = tensor(input, "aminmax")
    dims = () if dim is None else dim
    return aminmax_result(extrema.amin(x, dims, keepdim), extrema.amax(x, dims, keepdim))


def _not_nan(x):
    return binary.compare("eq", x, x)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum treating NaN as 0. Derivative: ``g`` where ``x`` is not NaN, 0 at NaN."""
    x = tensor(input, "nansum")
    if x.dtype.is_floating_point:
        x = binary.where(_not_nan(x), x, 0.0)
    return _reduce.sum(x, dim, keepdim, dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements (NaN where all are NaN): ``nansum / count``."""
    x = tensor(input, "nanmean")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {x.dtype}")
    count = _reduce.sum(unary.cast(_not_nan(x), x.dtype), dim, keepdim)
    return nansum(x, dim, keepdim, dtype=dtype) / count


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)`` over ``dim`` (``correction`` as in ``var``; a plain tuple)."""
    x = tensor(input, "var_mean")
    return (_reduce.var(x, dim, unbiased, keepdim, correction=correction),
            _reduce.mean(x, dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)`` over ``dim`` (``correction`` as in ``std``; a plain tuple)."""
    x = tensor(input, "std_mean")
    return (_reduce.std(x, dim, unbiased, keepdim, correction=correction),
            _reduce.mean(x, dim, keepdim))


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns; a 1-D input is one variable: a 0-d result), with integer frequency weights
    ``fweights`` and observation weights ``aweights``: ``sum_k w_k (x_ik - m_i)(x_jk - m_j) /
    (sum w - correction * sum(w a) / sum w)``."""
    x = tensor(input, "cov")
    if x.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {x.ndim} dimensions")
    x2 = _shape.reshape(x, (1, -1)) if x.ndim < 2 else x
    if not x2.dtype.is_floating_point and not x2.dtype.is_complex:
        x2 = unary.cast(x2, dtypes.get_default_dtype())
    n = x2.shape[1]
    w = None
    if fweights is not None:
        w = tensor(fweights, "cov")
    if aweights is not None:
        a = tensor(aweights, "cov")
        w = a if w is None else w * a
    if w is None:
        total = float(n)
        mean = _reduce.mean(x2, 1, keepdim=True)
        fact = total - correction
    else:
        total = _reduce.sum(w)
        mean = _reduce.sum(x2 * w, 1, keepdim=True) / total
        fact = (total - correction if aweights is None
                else total - correction * _reduce.sum(w * tensor(aweights, "cov")) / total)
    centred = x2 - mean
    weighted = centred if w is None else centred * w
    product = linalg.matmul(weighted, _shape.transpose(centred, 0, 1))
    if isinstance(fact, float):
        out = product / builtins.max(fact, 0.0)
    else:
        out = product / binary.clamp(fact, min=0.0)
    return _shape.reshape(out, ()) if x.ndim < 2 else out


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``: ``cov / (s_i s_j)``, clipped
    to [-1, 1] (as PyTorch)."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = unary.sqrt(_shape.diagonal(c))
    c = c / _shape.unsqueeze(std, 1) / _shape.unsqueeze(std, 0)
    return binary.clamp(c, -1.0, 1.0)


# --- counting functions (no derivative) -------------------------------------------------------
def count_nonzero(input, dim=None):
    """The number of nonzero elements over ``dim`` (an int or a tuple; all when None), int64."""
    (a,) = host_arrays("count_nonzero", input)
    axis = None if dim is None else _dims(dim, a.ndim)
    return constant(np.asarray(np.count_nonzero(a, axis=axis), dtype=np.int64), input)


def bincount(input, weights=None, minlength=0):
    """Counts of each value in the 1-D non-negative integer ``input`` (``weights``: their
    sums instead; length ``max(input) + 1`` at least ``minlength``). No gradient."""
    arrays = host_arrays("bincount", input, *(() if weights is None else (weights,)))
    a = arrays[0]
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs (got "
                           f"{a.ndim}-d {dispatch.scalar_type_name(a.dtype)})")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return constant(np.bincount(a, minlength=minlength).astype(np.int64), input)
    w = arrays[1]
    out_dtype = w.dtype if w.dtype.kind == "f" else np.float64
    return constant(np.bincount(a, w, minlength=minlength).astype(out_dtype), input)


def histc(input, bins=100, min=0, max=0):  # noqa: A002 - PyTorch's names
    """A histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both are
    0); elements outside are ignored. No gradient."""
    (a,) = host_arrays("histc", input)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    hist, _ = np.histogram(a, bins=int(bins), range=(lo, hi))
    return constant(hist.astype(a.dtype if a.dtype.kind == "f" else np.float64), input)


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """``(hist, bin_edges)`` of ``input`` with ``bins`` equal bins (over ``range`` or the
    data's) or the given edges (a tensor); ``weight``: per-element weights. No gradient."""
    arrays = host_arrays("histogram", input, *(() if weight is None else (weight,)))
    edges = host_arrays("histogram", bins)[0] if isinstance(bins, dispatch.Tensor) else int(bins)
    hist, out_edges = np.histogram(arrays[0].reshape(-1), bins=edges, range=range,
                                   weights=None if weight is None else arrays[1].reshape(-1),
                                   density=density)
    dt = arrays[0].dtype
    return histogram_result(constant(hist.astype(dt), input), constant(out_edges.astype(dt), input))


def _int_result(index, out_int32):
    return index.astype(np.int32 if out_int32 else np.int64)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each of ``values``, the index where it would go in the last dim of
    ``sorted_sequence`` to keep it sorted (``right``/``side="right"``: after equal values).
    No gradient."""
    if side is not None:
        right = side == "right"
    seq = host_arrays("searchsorted", sorted_sequence)[0]
    holder = values if isinstance(values, dispatch.Tensor) else sorted_sequence
    values = host_arrays("searchsorted", values)[0]
    if sorter is not None:
        seq = np.take_along_axis(seq, host_arrays("searchsorted", sorter)[0], axis=-1)
    how = "right" if right else "left"
    if seq.ndim <= 1:
        out = np.searchsorted(seq, values, side=how)
    else:
        if seq.shape[:-1] != values.shape[:-1]:
            raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension "
                               f"or the first N-1 dimensions of boundaries tensor and input "
                               f"value tensor must match, but we got boundaries tensor "
                               f"{list(seq.shape)} and input value tensor {list(values.shape)}")
        flat_seq = seq.reshape(-1, seq.shape[-1])
        flat_val = values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(flat_seq, flat_val)])
        out = out.reshape(values.shape)
    return constant(_int_result(np.asarray(out), out_int32), holder)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The index of the bucket of each value of ``input`` among the 1-D sorted
    ``boundaries`` (``right``: ``boundaries[i-1] <= x < boundaries[i]``). No gradient."""
    b = host_arrays("bucketize", boundaries)[0]
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (bool; no gradient)."""
    a, b = host_arrays("isin", elements, test_elements)
    holder = elements if isinstance(elements, dispatch.Tensor) else test_elements
    return constant(np.isin(a, b, assume_unique=assume_unique, invert=invert), holder)


FUNCTIONS = (aminmax, nansum, nanmean, var_mean, std_mean, cov, corrcoef, count_nonzero,
             bincount, histc, histogram, searchsorted, bucketize, isin)
methods.declare({fn.__name__: fn for fn in FUNCTIONS
                 if fn not in (var_mean, std_mean, searchsorted, bucketize, isin)}, __name__)
