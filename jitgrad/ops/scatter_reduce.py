"""Scatter writes along a dim with PyTorch's semantics: ``scatter`` (a ``src`` tensor or a
number ``value``; the legacy ``reduce="add"/"multiply"``) and ``scatter_reduce`` (``"sum"``,
``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``, ``include_self``). ``gather``/``scatter_add``
are in ``scatter.py``.

For ``dim=0`` (likewise for other dims) the element ``src[i][j][k]`` goes to
``out[index[i][j][k]][j][k]``; ``index`` has ``x``'s rank, is no larger than ``src``, and no
larger than ``x`` outside ``dim``. On CUDA tensors the forwards run on the host (a copy down
and up: these rows have no kernels yet); the backward rules are device-agnostic Tensor ops.

Note [scatter repeats]: ``scatter`` with a repeated target is deterministic here, the last write
in C order of ``index`` wins (``indexing.winners``), and only the winning ``src`` elements get a
gradient. PyTorch leaves the winner unspecified and sends ``g`` to every write ("the gradient
will be incorrect", its docs): jitgrad's gradient is the derivative of the value it computes.
For ``amax``/``amin`` with ``include_self=False`` a ``self`` element equal to the result by
coincidence does not share the gradient (PyTorch's rule counts it and halves the ``src``
gradient); elsewhere the rules are PyTorch's ``scatter_reduce_backward``.
"""
from __future__ import annotations

import warnings

import numpy as np

from .core import dispatch, upper
from . import scatter_cuda
from .binary import div, mul, where
from .indexing import copy_array, positions, put_flat, winners, write_flat
from .core.registry import LINEAR, def_composite, public
from .scatter import (batch_all, box, check_scatter_index, gather, long_index, per_example,
                      scatter_add, scatter_add_args)
from .shape import wrap_dim

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
LEGACY = {"add": np.add, "multiply": np.multiply}  # scatter(..., reduce=)


def _targets(shape, dim: int, index: np.ndarray) -> np.ndarray:
    """The C-order flat position in an array of ``shape`` each element of ``index`` writes."""
    coords = [index if k == dim else
              np.arange(n, dtype=np.intp).reshape((1,) * k + (n,) + (1,) * (index.ndim - k - 1))
              for k, n in enumerate(index.shape)]
    return np.ravel_multi_index(np.broadcast_arrays(*coords), shape).astype(np.intp)


def _const(a, like):
    """A host array (mask, counts) as a constant tensor on ``like``'s device."""
    a = np.ascontiguousarray(a)
    return dispatch.Tensor._make(a if like.device == "cpu" else dispatch.move(a, like.device))


@upper.constant_maker
def _filled(shape, value, like):
    """``full(shape, value)`` in ``like``'s dtype and device: a constant of a traced program
    (a shape and a Python number only)."""
    return _const(np.full(shape, value, dtype=like.dtype.np), like)


def _to_src_shape(gs, src_shape, index_shape):
    """``gs`` (``index``'s shape) inside zeros of ``src``'s shape: src elements outside
    ``index``'s extent get no gradient."""
    if tuple(src_shape) == tuple(index_shape):
        return gs
    return put_flat(dispatch.zeros(src_shape, gs.dtype, gs.device),
                    positions(src_shape, box(index_shape)), gs, unique=True)


def _zero_targets(g, dim, index):
    """``g`` with 0 where ``index`` writes (``scatter(g, dim, index, 0)``)."""
    return dispatch.composite(SCATTER_VALUE, g, dim=dim, index=index, value=0)


def _index_checks(name: str, x, dim, index) -> tuple:
    """``(dim, index)`` for the ``value`` forms after PyTorch's checks."""
    idx = long_index(name, index)
    if x.ndim == 0:
        raise RuntimeError(f"{name}(): 0-d tensors are not supported here; reshape to 1-d first")
    d = wrap_dim(name, dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if any(k != d and idx.shape[k] > x.shape[k] for k in range(x.ndim)):
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                           f"{list(x.shape)} apart from dimension {d}")
    check_scatter_index(name, idx, d, x.shape[d])
    return d, idx


# --- scatter (src) ---------------------------------------------------------------------------
def _scatter_fwd(ctx, x, src, dim, index):
    out = copy_array(x)
    pos = _targets(x.shape, dim, index)
    ctx.keep = winners(pos)  # Note [scatter repeats]
    write_flat(out, pos, src[box(index.shape)], False, ctx.keep)
    return out


def _scatter_back(ctx, g):
    need_x, need_s = ctx.needs_input_grad
    gx = _zero_targets(g, ctx.dim, ctx.index) if need_x else None
    gs = None
    if need_s:
        gs = gather(g, ctx.dim, ctx.index)
        if ctx.keep is not None:
            gs = where(_const(ctx.keep, g), gs, 0.0)
        gs = _to_src_shape(gs, ctx._next_meta[1][0], ctx.index.shape)
    return gx, gs


def _scatter_batch(args, batched, dim, index):
    size, (x, src) = batch_all(args, batched)
    return dispatch.composite(SCATTER, x, src, dim=dim + 1, index=per_example(index, size))


# PyTorch's names: ScatterBackward0 (src), ScatterBackward1 (value). Forward mode: linear.
SCATTER = def_composite("scatter", "ScatterBackward0", ("x", "src"), _scatter_fwd, _scatter_back,
                        attrs=("dim", "index"), jvp=LINEAR, batch_rule=_scatter_batch,
                        cuda_forward=scatter_cuda.via_host(_scatter_fwd), method=True, export=True)


# --- scatter (value) -------------------------------------------------------------------------
def _scatter_value_fwd(ctx, x, dim, index, value):
    out = copy_array(x)
    write_flat(out, _targets(x.shape, dim, index), value, False)
    return out


def _scatter_value_back(ctx, g):
    return (_zero_targets(g, ctx.dim, ctx.index),)


def _scatter_value_jvp(tangents, primals, outs, dim, index, value):
    return _zero_targets(tangents[0], dim, index)  # the written value is a constant


def _scatter_value_batch(args, batched, dim, index, value):
    x = args[0]
    return dispatch.composite(SCATTER_VALUE, x, dim=dim + 1, index=per_example(index, x.shape[0]),
                              value=value)


SCATTER_VALUE = def_composite("scatter_value", "ScatterBackward1", ("x",), _scatter_value_fwd,
                              _scatter_value_back, attrs=("dim", "index", "value"),
                              jvp=_scatter_value_jvp, batch_rule=_scatter_value_batch,
                              cuda_forward=scatter_cuda.via_host(_scatter_value_fwd))


# --- scatter(..., reduce="add" / "multiply"): no derivative, as in PyTorch --------------------
def _legacy_fwd(ctx, x, src, dim, index, reduce):
    out = copy_array(x)
    LEGACY[reduce].at(out.reshape(-1), _targets(x.shape, dim, index), src[box(index.shape)])
    return out


def _no_derivative(reduce):
    return RuntimeError(f"derivative for aten::scatter is not implemented: scatter(..., "
                        f"reduce='{reduce}') is not differentiable (as in PyTorch); use "
                        "scatter_add, or scatter_reduce(dim, index, src, 'sum' or 'prod'), "
                        "which are")


def _legacy_back(ctx, g):
    raise _no_derivative(ctx.reduce)


def _legacy_jvp(tangents, primals, outs, dim, index, reduce):
    raise _no_derivative(reduce)


def _legacy_batch(args, batched, dim, index, reduce):
    size, (x, src) = batch_all(args, batched)
    return dispatch.composite(SCATTER_LEGACY, x, src, dim=dim + 1,
                              index=per_example(index, size), reduce=reduce)


# the node's name is PyTorch's (its grad_fn prints as NotImplemented)
SCATTER_LEGACY = def_composite("scatter_reduce_legacy", "NotImplemented", ("x", "src"),
                               _legacy_fwd, _legacy_back, attrs=("dim", "index", "reduce"),
                               jvp=_legacy_jvp, batch_rule=_legacy_batch,
                               cuda_forward=scatter_cuda.via_host(_legacy_fwd))


def _scatter_args(name, x, dim, index, src, value, reduce):
    if reduce is not None and reduce not in LEGACY:
        raise RuntimeError(f"{name}(): reduce argument must be either add or multiply, got "
                           f"{reduce!r} (scatter_reduce has sum, prod, mean, amax and amin)")
    if (src is None) == (value is None):
        raise TypeError(f"{name}(): pass exactly one of src (a tensor) and value (a number)")
    if src is not None and not isinstance(src, dispatch.Tensor):
        src, value = None, src  # Tensor.scatter(dim, index, 2.5): PyTorch's value overload
    if src is None:
        if isinstance(value, dispatch.Tensor) or not isinstance(value, (bool, int, float)):
            raise TypeError(f"{name}(): value must be a Python number, got "
                            f"{type(value).__name__} (a tensor goes in src)")
        d, idx = _index_checks(name, x, dim, index)
        if reduce is None:
            return SCATTER_VALUE, (), {"dim": d, "index": idx, "value": value}
        src = _filled(idx.shape, value, x)
        return SCATTER_LEGACY, (src,), {"dim": d, "index": idx, "reduce": reduce}
    src, attrs = scatter_add_args(name, x, dim, index, src)
    if reduce is None:
        return SCATTER, (src,), attrs
    warnings.warn("The reduce argument of scatter with Tensor src is deprecated (as in PyTorch): "
                  "use scatter_reduce for more reduction options", UserWarning, stacklevel=3)
    return SCATTER_LEGACY, (src,), {**attrs, "reduce": reduce}


@public(SCATTER)
def scatter(x, dim, index, src=None, *, value=None, reduce=None):
    """``out = x.clone(); out[index[i][j][k]][j][k] = src[i][j][k]`` for ``dim=0`` (likewise
    for other dims); ``src`` a tensor, or a number (``value``) written at every target.

    A repeated target takes the last write in C order of ``index`` (Note [scatter repeats]).
    ``reduce="add"`` / ``"multiply"`` accumulates into ``x`` instead (repeats too), like
    PyTorch's deprecated form; it has no derivative (the backward raises, as PyTorch's).
    Derivatives: ``g`` with zeros at the targets for ``x``; ``g.gather(dim, index)`` at the
    winning writes (0 elsewhere and outside ``index``'s extent) for ``src``.
    """
    x = dispatch.tensor_operand(x, "scatter")
    op, others, attrs = _scatter_args("scatter", x, dim, index, src, value, reduce)
    return dispatch.composite(op, x, *others, **attrs)


def scatter_args(name, x, dim, index, src=None, value=None, reduce=None):
    """``(op, others, attrs)`` of a ``scatter`` call (for ``Tensor.scatter_``)."""
    return _scatter_args(name, x, dim, index, src, value, reduce)


# --- scatter_reduce --------------------------------------------------------------------------
def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return -big if reduce == "amax" else big


_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum}


def _counts(shape, pos, include_self):
    """How many values each output element reduces (at least 1: the divisor of ``mean``)."""
    n = np.full(int(np.prod(shape)), 1 if include_self else 0, dtype=np.intp)
    np.add.at(n, pos.reshape(-1), 1)
    return np.maximum(n, 1).reshape(shape)


def _scatter_reduce_fwd(ctx, x, src, dim, index, reduce, include_self):
    out = copy_array(x)
    flat = out.reshape(-1)
    pos = _targets(x.shape, dim, index)
    if not include_self:
        flat[pos.reshape(-1)] = _identity(reduce, x.dtype)
    _UFUNCS[reduce].at(flat, pos.reshape(-1), src[box(index.shape)].reshape(-1))
    if reduce == "mean":
        n = _counts(x.shape, pos, include_self)
        out = (out / n).astype(x.dtype) if x.dtype.kind == "f" else out // n
    ctx.pos = pos
    return out


def _recorded() -> bool:
    """Whether a jitgrad.compile trace runs: the backward's masks and counts are then ops (the
    program computes them from each call's values); eager keeps NumPy on the host (fewer
    dispatches: about half the time of the ops for a small amax/amin backward)."""
    return upper.host_read_hook is not None


def _host(t) -> np.ndarray:
    """A tensor's values as a host array (copied down from a CUDA device)."""
    return dispatch.move(t._data, "cpu")


def _gather_np(a, dim, index):
    """``gather`` of an array (``index`` may be smaller than ``a`` outside ``dim``)."""
    part = tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(index.shape))
    return np.take_along_axis(a[part], index, axis=dim)


def _equal(a, b):
    """``a == b`` with NaN equal to NaN (a NaN result came from the NaN values), of arrays or
    of Tensors (a bool Tensor)."""
    if isinstance(a, np.ndarray):
        return (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b
    return (a == b) | ((a != a) & (b != b)) if a.dtype.is_floating_point else a == b


@upper.constant_maker
def _mean_counts(shape, pos, include_self, like):
    """``_counts`` as a constant in ``like``'s dtype: a function of the index (an attribute of
    the row) and the shape only."""
    return _const(_counts(shape, pos, include_self).astype(like.dtype.np), like)


def _extremum_hits(g, x, src, result, dim, index, pos, include_self):
    """For amax/amin: which values of ``x`` and of ``src`` (``index``'s shape) equal the result
    where they go (bool Tensors), and ``n``, how many hit each output element (at least 1)."""
    if _recorded():
        self_hit = _equal(x, result)
        if not include_self:
            self_hit = _zero_targets(self_hit, dim, index)
        src_hit = _equal(src, gather(result, dim, index))
        n = scatter_add(self_hit.to(g.dtype), dim, index, src_hit.to(g.dtype))
        return self_hit, src_hit, where(n == 0, 1.0, n)
    xd, rd, sd = _host(x), _host(result), _host(src)
    self_hit = _equal(xd, rd)
    if not include_self:
        self_hit.reshape(-1)[pos.reshape(-1)] = False
    src_hit = _equal(sd, _gather_np(rd, dim, index))
    n = self_hit.astype(xd.dtype)
    np.add.at(n.reshape(-1), pos.reshape(-1), src_hit.astype(xd.dtype).reshape(-1))
    return _const(self_hit, g), _const(src_hit, g), _const(np.maximum(n, 1), g)


def _partials(g, x, src, result, dim, index, pos, reduce, include_self):
    """PyTorch's ``scatter_reduce_backward``: the gradients for ``x`` and ``src`` (``index``'s
    shape) from ``g``, written with Tensor ops (so double backward works). Linear in ``g``."""
    src_box = src[box(index.shape)] if tuple(src.shape) != tuple(index.shape) else src
    if reduce == "sum":
        gx, gs = g, gather(g, dim, index)
    elif reduce == "mean":
        gn = div(g, _mean_counts(x.shape, pos, include_self, g))
        gx, gs = gn, gather(gn, dim, index)
    elif reduce == "prod":
        gx, gs = _prod_partials(g, x, src_box, result, dim, index, pos, include_self)
    else:  # amax / amin: g shared evenly by the values equal to the result
        self_hit, src_hit, n = _extremum_hits(g, x, src_box, result, dim, index, pos,
                                              include_self)
        gn = div(g, n)
        gx = where(self_hit, gn, 0.0)
        gs = where(src_hit, gather(gn, dim, index), 0.0)
    if not include_self:
        gx = _zero_targets(gx, dim, index)
    return gx, gs


def _zero_masks(g, x, src, dim, index, pos):
    """For prod: ``x == 0``, ``src == 0`` and, at each src position, how many zeros of src go
    to its element (Tensors); with ``many``: whether an element gets two or more (None when
    recorded: the ``_DELAYED`` row checks then)."""
    if _recorded():
        s_zero = src == 0
        n_zero = gather(scatter_add(dispatch.zeros(x.shape, g.dtype, g.device), dim, index,
                                    s_zero.to(g.dtype)), dim, index)
        return x == 0, s_zero, n_zero, None
    s_zero = _host(src) == 0
    zeros = np.zeros(x.shape, dtype=np.intp)
    np.add.at(zeros.reshape(-1), pos.reshape(-1), s_zero.reshape(-1).astype(np.intp))
    n_zero = _gather_np(zeros, dim, index)
    return (_const(_host(x) == 0, g), _const(s_zero, g), _const(n_zero.astype(g.dtype.np), g),
            bool((n_zero > 1).any()))


def _prod_partials(g, x, src, result, dim, index, pos, include_self):
    # the product of the others, without dividing by a zero: a zero of x or a lone zero among
    # the src values of an element is replaced by 1 and the product recomputed
    x_zero, s_zero, n_zero, many = _zero_masks(g, x, src, dim, index, pos)
    gx = div(mul(g, scatter_reduce(where(x_zero, 1.0, x), dim, index, src, "prod",
                                   include_self=include_self)),
             where(x_zero, 1.0, x))
    single = s_zero & (n_zero == 1)
    lone = scatter_reduce(x, dim, index, where(single, 1.0, src), "prod", include_self=include_self)
    gs = where(single, gather(mul(g, lone), dim, index),
               div(gather(mul(g, result), dim, index), where(s_zero, 1.0, src)))
    if gs.requires_grad and many is not False:
        # where two zeros or more meet the formula is exact to first order only: its derivative
        # raises there (PyTorch's DelayedError)
        gs = dispatch.composite(_DELAYED, gs, n_zero)
    return gx, gs


def _delayed_back(ctx, g, n_zero):
    """The identity's gradient, after raising if some element has more than one zero of src
    (``n_zero > 1``): a checking row (``nplinalg.checked``), so a compiled program raises too."""
    from .nplinalg import checked
    from .reduce import sum as _sum

    return checked(g, _sum(n_zero > 1), "scatter_reduce(): Double backward is unsupported for "
                   "src when more than one zero in src is scattered to the same position (as "
                   "in PyTorch)"), None


def _copy_fwd(ctx, t, n_zero):
    return np.array(t)


# ``t`` passed through; ``n_zero`` (no gradient) is read by the backward only
_DELAYED = def_composite("scatter_reduce_delayed_error", "DelayedError", ("t", "n_zero"),
                         _copy_fwd, _delayed_back, save=("n_zero",),
                         cuda_forward=scatter_cuda.via_host(_copy_fwd))


def _scatter_reduce_back(ctx, g, x, src, result):
    need_x, need_s = ctx.needs_input_grad
    gx, gs = _partials(g, x, src, result, ctx.dim, ctx.index, ctx.pos, ctx.reduce,
                       ctx.include_self)
    gs = _to_src_shape(gs, src.shape, ctx.index.shape) if need_s else None
    return (gx if need_x else None), gs


def _scatter_reduce_jvp(tangents, primals, outs, dim, index, reduce, include_self):
    # the output is elementwise in its inputs: dy = cx * tx + (sum of cs * ts at each target),
    # with the coefficients the gradients for g = 1
    tx, ts = tangents
    x, src = primals
    pos = _targets(x.shape, dim, index)
    ones = dispatch.full_like(outs[0], 1.0)
    cx, cs = _partials(ones, x, src, outs[0], dim, index, pos, reduce, include_self)
    out = mul(cx, tx) if tx is not None else dispatch.zeros(outs[0].shape, outs[0].dtype,
                                                            outs[0].device)
    if ts is not None:
        ts_box = ts[box(index.shape)] if tuple(ts.shape) != tuple(index.shape) else ts
        out = scatter_add(out, dim, index, mul(cs, ts_box))
    return out


def _scatter_reduce_batch(args, batched, dim, index, reduce, include_self):
    size, (x, src) = batch_all(args, batched)
    return dispatch.composite(SCATTER_REDUCE, x, src, dim=dim + 1,
                              index=per_example(index, size), reduce=reduce,
                              include_self=include_self)


SCATTER_REDUCE = def_composite("scatter_reduce", "ScatterReduceBackward0", ("x", "src"),
                               _scatter_reduce_fwd, _scatter_reduce_back,
                               attrs=("dim", "index", "reduce", "include_self"),
                               save=("x", "src", "result"), jvp=_scatter_reduce_jvp,
                               batch_rule=_scatter_reduce_batch,
                               cuda_forward=scatter_cuda.via_host(_scatter_reduce_fwd),
                               method=True, export=True)


def scatter_reduce_args(name, x, dim, index, src, reduce, include_self) -> tuple:
    """``(src, attrs)`` of a ``scatter_reduce`` call after PyTorch's checks."""
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"{name}(): reduce argument must be either sum, prod, mean, amax or "
                           f"amin, got {reduce!r}")
    src, attrs = scatter_add_args(name, x, dim, index, src)
    return src, {**attrs, "reduce": reduce, "include_self": bool(include_self)}


@public(SCATTER_REDUCE)
def scatter_reduce(x, dim, index, src, reduce, *, include_self=True):
    """Reduce the ``src`` values written to each element (``dim=0``:
    ``src[i][j][k]`` to ``out[index[i][j][k]][j][k]``) with ``reduce``: ``"sum"``, ``"prod"``,
    ``"mean"``, ``"amax"`` or ``"amin"``, together with ``x``'s own value (``include_self``;
    elements no index reaches keep ``x``'s value either way). Integer ``mean`` rounds down.

    Derivatives (PyTorch's): sum: ``g`` and ``g.gather``; mean: both divided by the count;
    prod: the product of the other values (computed without dividing by zero); amax/amin:
    ``g`` shared evenly among the values equal to the result. Without ``include_self`` the
    reached elements of ``x`` get 0. See Note [scatter repeats] for ``include_self=False``.
    """
    x = dispatch.tensor_operand(x, "scatter_reduce")
    src, attrs = scatter_reduce_args("scatter_reduce", x, dim, index, src, reduce, include_self)
    return dispatch.composite(SCATTER_REDUCE, x, src, **attrs)
