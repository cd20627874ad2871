"""Order statistics, NaN-aware reductions, covariance (issue 19), composed of existing rows.

* ``quantile``/``percentile``/``median`` (and their ``nan*`` forms): the values sorted along the
  reduced axis (a gather: the gradient goes back to where each value came from), then NumPy's
  interpolation between the two order statistics around the virtual index
  ``q (n - 1)``: ``v_lo + (v_hi - v_lo) frac``, so the gradient splits ``g (1 - frac)`` /
  ``g frac`` between them. ``nan*`` forms use, per slice, the number of non-NaN values.
* ``nansum``/``nanmean``/``nanvar``/``nanstd``/``nanprod``/``nanmax``/``nanmin``/``nancumsum``/
  ``nancumprod``: the NaNs replaced by the operation's identity with ``where`` (so they get a
  zero gradient, never ``0 * nan``), then the plain reduction; an all-NaN slice gives NaN where
  NumPy does.
* ``cov``/``corrcoef``: NumPy's formulas (weights, ``ddof``, ``bias``) written with the rows.
"""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ..ops import binary as _binary_ops
from ..ops import extrema as _extrema
from ..autograd import forward_ad as _forward_ad
from ..ops.core import upper as _upper
from ..tensor import Tensor
from . import _elementwise, _join, _matrix, _reductions, _shape, _sorting
from ._common import cast as _cast, to_tensor as _t

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "nansum", "nanmean", "nanvar", "nanstd", "nanprod", "nanmax", "nanmin", "nancumsum",
           "nancumprod", "cov", "corrcoef"]

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _const(values, like):
    return Tensor._make(_np.asarray(values)).to(like.device)


def _to_last(a, axis):
    """``a`` with the reduced ``axis`` (int, tuple or None) as one last axis, and the axes."""
    if axis is None:
        return _shape.reshape(a, (-1,)), tuple(range(a.ndim))
    axes = tuple(sorted(int(x) % _builtins.max(a.ndim, 1)
                        for x in (axis if isinstance(axis, (tuple, list)) else (axis,))))
    rest = [d for d in range(a.ndim) if d not in axes]
    moved = _shape.transpose(a, rest + list(axes))
    return _shape.reshape(moved, tuple(a.shape[d] for d in rest) + (-1,)), axes


def _index(pos):
    """Integral float positions as int64 indices (an ndarray, or a Tensor while tracing)."""
    return _cast(pos, _np.int64) if isinstance(pos, Tensor) else pos.astype(_np.int64)


def _take_last(s, index):
    """``s[..., index]`` per slice along the last axis: a gather whose gradient goes back to
    the picked element (the index a Tensor row input while tracing)."""
    if isinstance(index, Tensor):
        picked = _extrema.take_along_dim(s, _shape.expand_dims(index, -1), s.ndim - 1)
    else:
        picked = _shape.take_along_axis(s, index[..., None], -1)
    return picked[..., 0]


def _keep(out, axes, ndim, qdims):
    """Reinsert the reduced axes as length 1 (after ``qdims`` leading q dims)."""
    for ax in sorted(axes):
        out = _shape.expand_dims(out, qdims + ax)
    return out


def _order_stat(name, a, q, axis, method, keepdims, skip_nan):
    if method not in _METHODS:
        raise NotImplementedError(f"jitgrad.numpy.{name}: method={method!r} is not supported "
                                  f"(one of {', '.join(_METHODS)})")
    a = _t(a)
    if not a.dtype.is_floating_point:
        a = _cast(a, _np.float64)
    what = f"jitgrad.numpy.{name}"
    qs = _np.asarray(q._host(what) if isinstance(q, Tensor) else q, dtype=_np.float64)
    if _forward_ad.needs_derivative(q):
        raise TypeError(f"jitgrad.numpy.{name}: the gradient with respect to q is not "
                        "covered (pass q as a constant)")
    if _np.any((qs < 0) | (qs > 1)):
        raise ValueError("Quantiles must be in the range [0, 1]")
    flat, axes = _to_last(a, axis)
    size = flat.shape[-1]
    s = _sorting.sort(flat, axis=-1)  # NaN sorts last
    if _tracing():  # the NaN counts as rows: a compiled program counts each call's NaNs
        nan = flat != flat
        nan_count = _reductions.sum(_cast(nan, _np.float64), -1)
        n = size - nan_count if skip_nan else _np.full(flat.shape[:-1], float(size))
        bad = (n == 0) if skip_nan else nan_count > 0
        xp = _elementwise  # floor/ceil/around/maximum/minimum/where on Tensors
    else:
        nan = _np.isnan(flat._host(what))
        n = (size - nan.sum(-1)) if skip_nan else _np.full(nan.shape[:-1], size)
        bad = (n == 0) if skip_nan else nan.any(-1)
        bad = _const(bad, a) if _np.any(bad) else None
        xp = _np
    outs = []
    for qv in qs.reshape(-1):
        pos = qv * (n - 1.0)
        lo = xp.floor(pos)
        if method == "nearest":
            lo = hi = xp.around(pos)
        elif method == "lower":
            hi = lo
        elif method == "higher":
            lo = hi = xp.ceil(pos)
        elif method == "midpoint":  # NumPy: the element itself at an integral index
            hi = xp.ceil(pos)
        else:
            hi = lo + 1
        frac = 0.5 if method == "midpoint" else pos - lo
        last = xp.maximum(n - 1, 0)
        lo_i = _index(xp.minimum(xp.maximum(lo, 0), last))
        hi_i = _index(xp.minimum(xp.maximum(hi, 0), last))
        v_lo = _take_last(s, lo_i)
        v_hi = _take_last(s, hi_i)
        if method == "midpoint":
            frac = xp.where(lo_i == hi_i, 0.0, 0.5)
        if isinstance(frac, Tensor):
            frac = _cast(frac, a.dtype.np) if frac.dtype != a.dtype else frac
        else:
            frac = _const(_np.asarray(frac, dtype=a.dtype.np) * _np.ones(v_lo.shape, a.dtype.np),
                          a)
        out = v_lo + (v_hi - v_lo) * frac
        if bad is not None:
            out = _binary_ops.where(bad, _t(_np.nan, a.dtype.np).to(a.device), out)
        outs.append(out)
    out = outs[0] if qs.ndim == 0 else _shape.reshape(_join.stack(outs, 0),
                                                      qs.shape + tuple(outs[0].shape))
    return _keep(out, axes, a.ndim, qs.ndim) if keepdims else out


def _no_out(name, out, overwrite_input=False, weights=None):
    if out is not None:
        raise NotImplementedError(f"jitgrad.numpy.{name}: out= is not supported")
    if weights is not None:
        raise NotImplementedError(f"jitgrad.numpy.{name}: weights= is not supported")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-quantiles (``q`` in [0, 1], a number or an array: its dims lead) over ``axis``
    (int, tuple, None: all). ``method``: ``linear`` (``v_lo + (v_hi - v_lo) frac`` at the
    virtual index ``q (n - 1)``), ``lower``, ``higher``, ``nearest``, ``midpoint``. Gradient:
    ``g (1 - frac)`` to the lower and ``g frac`` to the upper order statistic; a slice with a
    NaN gives NaN (zero gradient)."""
    _no_out("quantile", out, weights=weights)
    return _order_stat("quantile", a, q, axis, interpolation or method, keepdims, False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """``quantile(a, q / 100, ...)``."""
    _no_out("percentile", out, weights=weights)
    qs = _np.asarray(q._host() if isinstance(q, Tensor) else q, dtype=_np.float64) / 100.0
    return _order_stat("percentile", a, qs, axis, interpolation or method, keepdims, False)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``quantile(a, 0.5, axis)``: the middle order statistic, or the mean of the two middle
    ones (gradient ``g/2`` each)."""
    _no_out("median", out)
    return _order_stat("median", a, 0.5, axis, "linear", keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """``quantile`` of the non-NaN values of each slice (NaN for an all-NaN slice); the NaNs
    get a zero gradient."""
    _no_out("nanquantile", out, weights=weights)
    return _order_stat("nanquantile", a, q, axis, interpolation or method, keepdims, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """``nanquantile(a, q / 100, ...)``."""
    _no_out("nanpercentile", out, weights=weights)
    qs = _np.asarray(q._host() if isinstance(q, Tensor) else q, dtype=_np.float64) / 100.0
    return _order_stat("nanpercentile", a, qs, axis, interpolation or method, keepdims, True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``median`` of the non-NaN values of each slice."""
    _no_out("nanmedian", out)
    return _order_stat("nanmedian", a, 0.5, axis, "linear", keepdims, True)


# --- NaN-aware reductions ---------------------------------------------------------------------
def _tracing() -> bool:
    """Whether a jitgrad.compile trace runs: the NaN masks are then rows (``x != x``), not
    NumPy arrays read from the data (eager keeps NumPy: no kernel dispatch, and the ``where``
    skipped when there is no NaN)."""
    return _upper.host_read_hook is not None


def _filled(a, value):
    """``a`` with its NaNs replaced by ``value`` (``where``: the NaNs get a zero gradient), and
    the NaN mask (None for an integer input; a bool Tensor while tracing, else an ndarray)."""
    a = _t(a)
    if not a.dtype.is_floating_point:
        return a, None
    if _tracing():
        mask = a != a
        return _binary_ops.where(mask, _t(value, a.dtype.np).to(a.device), a), mask
    mask = _np.isnan(a._host())
    if not mask.any():
        return a, mask
    return _binary_ops.where(_const(mask, a), _const(_np.full(mask.shape, value, a.dtype.np), a),
                             a), mask


def _count(mask, axis, keepdims, like):
    """The number of non-NaN entries over ``axis``, as a Tensor of ``like``'s dtype."""
    if isinstance(mask, Tensor):
        return _reductions.sum(_cast(mask == False, like.dtype.np), axis, None,  # noqa: E712
                               keepdims)
    return _const(_np.sum(~mask, axis=None if axis is None else axis,
                          keepdims=keepdims).astype(like.dtype.np), like)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``sum`` with NaNs counted as 0 (gradient ``g`` to the non-NaN entries, 0 to NaNs)."""
    _no_where("nansum", out, initial, where)
    filled, _ = _filled(a, 0.0)
    return _reductions.sum(filled, axis, dtype, keepdims)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``prod`` with NaNs counted as 1 (exact gradient also with zeros; 0 to NaNs)."""
    _no_where("nanprod", out, initial, where)
    filled, _ = _filled(a, 1.0)
    return _reductions.prod(filled, axis, dtype, keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """``nansum / count`` of the non-NaN entries: gradient ``g / count`` to each (NaN for an
    all-NaN slice, as NumPy)."""
    _no_where("nanmean", out, None, where)
    a = _t(a)
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    filled, mask = _filled(a, 0.0)
    cnt = _count(mask, _tuple_axis(axis), keepdims, a)
    with _np.errstate(divide="ignore", invalid="ignore"):
        return _reductions.sum(filled, axis, None, keepdims) / cnt


def _tuple_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    """``sum((x - nanmean)^2) / (count - ddof)`` over the non-NaN entries; gradient
    ``2 g (x - mean) / (count - ddof)`` to each, 0 to NaNs."""
    _no_where("nanvar", out, None, where)
    if mean is not None:
        raise NotImplementedError("jitgrad.numpy.nanvar: mean= is not supported")
    ddof = ddof if correction is None else correction
    a = _t(a)
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    filled, mask = _filled(a, 0.0)
    ax = _tuple_axis(axis)
    m = _reductions.sum(filled, ax, None, True) / _count(mask, ax, True, a)
    dev, _ = _filled(a - m, 0.0)
    denom = _binary_ops.maximum(_count(mask, ax, keepdims, a) - ddof,
                                _t(0, a.dtype.np).to(a.device))
    return _reductions.sum(dev * dev, ax, None, keepdims) / denom


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None, correction=None):
    """``sqrt(nanvar)``; gradient ``g (x - mean) / ((count - ddof) std)``."""
    return _elementwise.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where,
                                    mean=mean, correction=correction))


def _nan_extreme(name, a, axis, keepdims, fill):
    filled, mask = _filled(a, fill)
    out = getattr(_reductions, name)(filled, axis, keepdims=keepdims)
    if isinstance(mask, Tensor):  # (tracing) NaN where every entry of the slice is NaN
        allnan = _count(mask, _tuple_axis(axis), keepdims, out) == 0
        return _binary_ops.where(allnan, _t(_np.nan, out.dtype.np).to(out.device), out)
    if mask is not None and mask.any():
        allnan = _np.all(mask, axis=_tuple_axis(axis), keepdims=keepdims)
        if allnan.any():
            out = _binary_ops.where(_const(allnan, out),
                                    _const(_np.full(allnan.shape, _np.nan, out.dtype.np), out), out)
    return out


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``max`` ignoring NaNs (NaN for an all-NaN slice); ties share the gradient evenly."""
    _no_where("nanmax", out, initial, where)
    return _nan_extreme("max", a, axis, keepdims, -_np.inf)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``min`` ignoring NaNs (NaN for an all-NaN slice); ties share the gradient evenly."""
    _no_where("nanmin", out, initial, where)
    return _nan_extreme("min", a, axis, keepdims, _np.inf)


def nancumsum(a, axis=None, dtype=None, out=None):
    """``cumsum`` with NaNs counted as 0."""
    _no_where("nancumsum", out, None, None)
    return _reductions.cumsum(_filled(a, 0.0)[0], axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``cumprod`` with NaNs counted as 1."""
    _no_where("nancumprod", out, None, None)
    return _reductions.cumprod(_filled(a, 1.0)[0], axis, dtype)


def _no_where(name, out, initial, where):
    if out is not None or initial is not None or where is not None:
        raise NotImplementedError(f"jitgrad.numpy.{name}: out=, initial= and where= are not "
                                  "supported")


# --- covariance -------------------------------------------------------------------------------
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """NumPy's covariance: ``X`` the variables (rows when ``rowvar``) of ``m`` (and ``y``),
    ``w = fweights * aweights``, ``avg = sum(X w) / sum(w)``,
    ``C = (X - avg) w (X - avg)^T / fact`` with ``fact = sum(w) - ddof`` (``- ddof
    sum(w aweights) / sum(w)`` with ``aweights``); a composition, so the gradient flows to
    ``m``, ``y`` and the weights."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    X = _shape.atleast_2d(_t(m))
    if not X.dtype.is_floating_point or dtype is not None:
        X = _cast(X, _np.dtype(dtype or _np.float64))
    if not rowvar and X.shape[0] != 1:
        X = _shape.transpose(X)
    if y is not None:
        Y = _shape.atleast_2d(_t(y))
        if not rowvar and Y.shape[0] != 1:
            Y = _shape.transpose(Y)
        X = _join.concatenate([X, _cast(Y, X.dtype.np) if Y.dtype != X.dtype else Y], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        fw = _np.asarray(fweights._host() if isinstance(fweights, Tensor) else fweights)
        if _np.any(fw != _np.around(fw)):
            raise TypeError("fweights must be integer")
        w = _t(fweights) * 1.0
    if aweights is not None:
        aw = _t(aweights)
        w = aw if w is None else w * aw
    n = X.shape[1]
    if w is None:
        avg = _reductions.mean(X, axis=1, keepdims=True)
        fact = float(n - ddof)
        Xc = X - avg
        c = _matrix.matmul(Xc, _shape.transpose(Xc)) / fact
    else:
        v1 = _reductions.sum(w)
        avg = _reductions.sum(X * w, axis=1, keepdims=True) / v1
        if ddof == 0:
            fact = v1
        elif aweights is None:
            fact = v1 - ddof
        else:
            fact = v1 - ddof * _reductions.sum(w * _t(aweights)) / v1
        Xc = X - avg
        c = _matrix.matmul(Xc * w, _shape.transpose(Xc)) / fact
    return _shape.squeeze(c)


def corrcoef(x, y=None, rowvar=True, bias=None, ddof=None, *, dtype=None):
    """Pearson coefficients ``R_ij = C_ij / sqrt(C_ii C_jj)`` of ``cov(x, y, rowvar)``
    (NumPy's ``bias``/``ddof`` cancel and are deprecated; NumPy also clips to [-1, 1], which
    changes values by rounding only, so it is not applied: the gradient stays smooth)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _elementwise.sqrt(_matrix.diagonal(c))
    return c / _shape.expand_dims(d, 1) / _shape.expand_dims(d, 0)
