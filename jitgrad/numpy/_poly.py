"""Polynomials, convolution, interpolation and integration (issue 19), composed of rows.

``convolve``/``correlate`` gather the sliding windows of the zero-padded signal (one
``getitem``) and contract them with the kernel (one ``matmul``), so each gradient is the
correlation of ``g`` with the other operand. ``interp`` picks each point's interval on the data
(``searchsorted``: piecewise constant) and interpolates linearly with rows, so it is
differentiable in ``x``, ``xp`` and ``fp``. The ``poly*`` functions are NumPy's algorithms
written with rows (Horner's rule, convolutions, long division, least squares).
"""
from __future__ import annotations

import numpy as _np

from ..autograd import forward_ad as _forward_ad
from ..ops.core import upper as _upper
from ..tensor import Tensor
from . import _creation, _elementwise, _join, _matrix, _reductions, _shape, linalg
from ._common import cast as _cast, slice_axis as _slice_axis, to_tensor as _t

__all__ = ["convolve", "correlate", "interp", "trapezoid", "vander", "unwrap", "polyval",
           "polyadd", "polysub", "polymul", "polyder", "polyint", "polydiv", "polyfit", "poly",
           "roots"]


@_upper.constant_maker
def _const(arr, like):
    """A Tensor of ``arr`` (computed from shapes and Python numbers only: zeros, the powers
    ``n, ..., 1``) on ``like``'s device: a constant of a compiled program."""
    t = Tensor._make(arr)
    return t.to(like.device) if like.is_cuda else t


def _float(x):
    x = _t(x)
    return x if x.dtype.is_floating_point else _cast(x, _np.float64)


def _promote(*ts):
    dt = _np.result_type(*(t.dtype.np for t in ts))
    return [t if t.dtype.np == dt else _cast(t, dt) for t in ts]


def _full_convolution(a, v):
    """``out[k] = sum_i a[i] v[k - i]``, ``k < n + m - 1``: windows of the padded ``a`` times the
    reversed ``v``."""
    n, m = a.shape[0], v.shape[0]
    ap = _shape.pad(a, (m - 1, m - 1))
    windows = ap[_np.arange(n + m - 1)[:, None] + _np.arange(m)[None, :]]
    return _matrix.matmul(windows, _shape.flip(v, 0))


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-d sequences, ``(a * v)[k] = sum_i a[i] v[k - i]``;
    ``mode`` ``full`` (length ``n + m - 1``), ``same`` (``max(n, m)``, centred as NumPy) or
    ``valid`` (``max(n, m) - min(n, m) + 1``). Gradients: ``g`` correlated with ``v`` (for
    ``a``) and with ``a`` (for ``v``)."""
    a, v = _promote(_float(a), _float(v))
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    n, m = a.shape[0], v.shape[0]
    if n == 0 or m == 0:
        raise ValueError("a cannot be empty" if n == 0 else "v cannot be empty")
    full = _full_convolution(a, v)
    long, short = max(n, m), min(n, m)
    if mode == "full":
        return full
    if mode == "same":
        start = (short - 1) // 2
        return full[start:start + long]
    if mode == "valid":
        return full[short - 1:long]
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def correlate(a, v, mode="valid"):
    """Cross-correlation ``c[k] = sum_n a[n + k] v[n]`` (real inputs), NumPy's ``correlate``:
    the convolution of ``a`` with reversed ``v``, in the same modes (default ``valid``)."""
    a, v = _promote(_float(a), _float(v))
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    n, m = a.shape[0], v.shape[0]
    if m > n:  # NumPy swaps the operands and reverses the result
        return _shape.flip(correlate(v, a, mode), 0)
    return convolve(a, _shape.flip(v, 0), mode)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation: for ``xp[i] <= x <= xp[i+1]``,
    ``f = fp[i] + (x - xp[i]) (fp[i+1] - fp[i]) / (xp[i+1] - xp[i])``; ``left``/``right``
    (default ``fp[0]``/``fp[-1]``) outside. ``period``: ``x`` and ``xp`` taken modulo it.
    Gradients: the slope in ``x``, the interpolation weights in ``fp`` and the matching terms in
    ``xp`` (the interval choice is piecewise constant)."""
    x, xp, fp = _float(x), _float(xp), _float(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        x, xp = _elementwise.remainder(x, period), _elementwise.remainder(xp, period)
        order = _np.argsort(xp._host("jitgrad.numpy.interp"), kind="stable")
        xp, fp = xp[order], fp[order]
        xp = _join.concatenate([xp[-1:] - period, xp, xp[0:1] + period])
        fp = _join.concatenate([fp[-1:], fp, fp[0:1]])
        left = right = None
    xd, xpd = x._host("jitgrad.numpy.interp"), xp._host("jitgrad.numpy.interp")
    k = xp.shape[0]
    if k == 1:
        idx = _np.zeros(xd.shape, _np.int64)
        out = _shape.broadcast_to(fp[0], x.shape) + x * 0.0
    else:
        idx = _np.clip(_np.searchsorted(xpd, xd, side="right") - 1, 0, k - 2)
        x0, x1, f0, f1 = xp[idx], xp[idx + 1], fp[idx], fp[idx + 1]
        out = f0 + (x - x0) * (f1 - f0) / (x1 - x0)
        # x exactly at a sample point: NumPy returns fp there (no 0/0 for repeated xp)
        at = _np.isclose(xd, xpd[idx + 1], rtol=0, atol=0) if k > 1 else None
        if at is not None and at.any():
            out = _elementwise.where(at, f1, out)
    below, above = xd < xpd[0], xd > xpd[-1]
    if below.any():
        out = _elementwise.where(below, fp[0] if left is None else _t(left), out)
    if above.any():
        out = _elementwise.where(above, fp[-1] if right is None else _t(right), out)
    return out


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``sum_i (y[i] + y[i+1]) / 2 * d_i`` along ``axis``, ``d = diff(x)`` (or ``dx``);
    gradients ``g (d_{i-1} + d_i) / 2`` for ``y`` and ``g (y_i - y_{i+1}) / 2``-type terms for
    ``x``."""
    y = _float(y)
    axis = int(axis) % y.ndim
    n = y.shape[axis]
    lo = _slice_axis(y, axis, 0, n - 1)
    hi = _slice_axis(y, axis, 1, n)
    if x is None:
        d = dx
    else:
        x = _float(x)
        d = _reductions.diff(x, axis=-1 if x.ndim == 1 else axis)
        if x.ndim == 1:
            d = _shape.reshape(d, tuple(-1 if i == axis else 1 for i in range(y.ndim)))
    return _reductions.sum((lo + hi) * d / 2.0, axis=axis)


def vander(x, N=None, increasing=False):
    """Columns ``x^0, x^1, ..., x^(N-1)`` (reversed unless ``increasing``), built by repeated
    multiplication (so ``x = 0`` has the exact gradient ``k x^(k-1)``)."""
    x = _t(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = x.shape[0] if N is None else int(N)
    if N == 0:
        return Tensor._make(_np.zeros((x.shape[0], 0), x.dtype.np))
    cols = [_creation.ones_like(x) + x * 0]
    for _ in range(1, N):
        cols.append(cols[-1] * x)
    out = _join.stack(cols, 1)
    return out if increasing else _shape.flip(out, 1)


def unwrap(p, discont=None, axis=-1, *, period=2 * _np.pi):
    """NumPy's ``unwrap``: ``p`` plus multiples of ``period`` chosen from the data's jumps (a
    piecewise-constant correction), so the gradient is ``g``."""
    p = _float(p)
    if _upper.host_read_hook is not None and p.ndim:  # a compile trace: from each call's data
        return p + _unwrap_correction(p, discont, int(axis) % p.ndim, period)
    data = p._host("jitgrad.numpy.unwrap")
    corr = _np.unwrap(data, discont=discont, axis=axis, period=period) - data
    return p + Tensor._make(corr.astype(data.dtype)).to(p.device)


def _unwrap_correction(p, discont, axis, period):
    """``unwrap(p) - p`` as rows, NumPy's algorithm step by step (no gradient): the jumps
    ``d = diff(p)`` folded into ``[-period/2, period/2)`` (``period/2`` for a positive jump on
    the boundary), the difference accumulated along ``axis`` where ``|d| >= discont``."""
    from ..graph.grad_mode import no_grad

    half = period / 2
    discont = half if discont is None else discont
    n = p.shape[axis]
    with no_grad():
        dd = _reductions.diff(p, axis=axis)
        ddmod = _elementwise.remainder(dd + half, period) - half
        ddmod = _elementwise.where((ddmod == -half) & (dd > 0), half, ddmod)
        step = _elementwise.where(_elementwise.abs(dd) < discont, 0.0, ddmod - dd)
        tail = _slice_axis(p, axis, 1, n)
        corr = (tail + _reductions.cumsum(step, axis=axis)) - tail  # NumPy's up - p
        first = _creation.zeros_like(_slice_axis(p, axis, 0, 1))
        return _join.concatenate([first, corr.to(p.dtype)], axis=axis)


def polyval(p, x):
    """Horner's rule ``y = (...(p_0 x + p_1) x + ...) + p_n``; gradients ``x^(n-i)`` for
    ``p_i`` and ``p'(x)`` for ``x``."""
    p, x = _t(p), _t(x)
    y = _creation.zeros_like(x) + x * 0 if p.shape[0] else _creation.zeros_like(x)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def _pad_front(a, n):
    if n <= 0:
        return a
    return _join.concatenate([_const(_np.zeros(n, a.dtype.np), a), a])


def polyadd(a1, a2):
    """Sum of two coefficient vectors (highest power first; the shorter padded in front)."""
    a1, a2 = _promote(_t(a1), _t(a2))
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n - a1.shape[0]) + _pad_front(a2, n - a2.shape[0])


def polysub(a1, a2):
    """Difference of two coefficient vectors."""
    a1, a2 = _promote(_t(a1), _t(a2))
    n = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1, n - a1.shape[0]) - _pad_front(a2, n - a2.shape[0])


def polymul(a1, a2):
    """Product of two polynomials: ``convolve(a1, a2)``."""
    return convolve(a1, a2)


def polyder(p, m=1):
    """The ``m``-th derivative: ``p_i (n - i)`` for each power, ``m`` times."""
    p = _float(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    for _ in range(int(m)):
        n = p.shape[0] - 1
        p = p[:-1] * _const(_np.arange(n, 0, -1).astype(p.dtype.np), p)
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative: ``p_i / (n - i + 1)`` with the integration constants ``k``
    (0 by default) appended."""
    p = _float(p)
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    kt = _t(k) if isinstance(k, Tensor) else None
    if k is None:
        ks = [0.0] * m
    else:  # (a Tensor k: its length only, its values stay in the graph)
        ks = [None] * (1 if kt.ndim == 0 else kt.shape[0]) if kt is not None else \
            list(_np.atleast_1d(k))
        if len(ks) == 1 and m > 1:
            ks = ks * m
        if len(ks) < m:
            raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    for i in range(m):
        n = p.shape[0]
        c = _shape.reshape(kt if kt.ndim == 0 else kt[i], (1,)) if kt is not None else \
            _const(_np.asarray([ks[i]], p.dtype.np), p)
        p = _join.concatenate([p / _const(_np.arange(n, 0, -1).astype(p.dtype.np), p), c])
    return p


def polydiv(u, v):
    """Long division ``u = q v + r`` (NumPy's algorithm); quotient and remainder are rational
    functions of the coefficients, so both are differentiable in ``u`` and ``v``."""
    u, v = _promote(_float(u), _float(v))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    r = [u[i] for i in range(m + 1)]
    q = []
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q.append(d)
        for j in range(n + 1):
            r[k + j] = r[k + j] - d * v[j]
    qt = _join.stack(q) if q else Tensor._make(_np.zeros(1, u.dtype.np))
    rest = r[max(m - n + 1, 0):] if m >= n else r
    while len(rest) > 1 and _np.allclose(float(rest[0]._host()), 0, rtol=1e-14):
        rest = rest[1:]
    return qt, _join.stack(rest)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares fit of a degree-``deg`` polynomial (NumPy's scaled Vandermonde system,
    weights ``w``): ``c = lstsq(A / s, y)[0] / s``, ``A = vander(x, deg + 1)``, ``s`` the
    column norms; differentiable in ``x``, ``y`` and ``w`` where ``A`` has full rank."""
    if full or cov:
        raise NotImplementedError("jitgrad.numpy.polyfit: full=True and cov=True are not "
                                  "supported (the coefficients only)")
    x, y = _promote(_float(x), _float(y))
    deg = int(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError("expected 1D vector for x" if x.ndim != 1 else "expected non-empty vector for x")
    lhs = vander(x, deg + 1)
    rhs = y
    if w is not None:
        wt = _float(w)
        lhs = lhs * _shape.expand_dims(wt, 1)
        rhs = rhs * (wt if y.ndim == 1 else _shape.expand_dims(wt, 1))
    scale = _elementwise.sqrt(_reductions.sum(lhs * lhs, axis=0))
    sol = linalg.lstsq(lhs / scale, rhs, rcond=rcond)[0]
    return sol / scale if sol.ndim == 1 else sol / _shape.expand_dims(scale, 1)


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given (real) roots:
    ``prod_k (x - r_k)`` by repeated convolution; a square matrix's characteristic polynomial
    needs its eigenvalues (``linalg.eigvals``, not covered) and raises."""
    r = _float(seq_of_zeros)
    if r.ndim == 2 and r.shape[0] == r.shape[1] and r.shape[0] != 0:
        raise NotImplementedError("jitgrad.numpy.poly of a matrix needs linalg.eigvals, which "
                                  "is not covered; pass the roots (e.g. linalg.eigvalsh of a "
                                  "symmetric matrix)")
    if r.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    out = _const(_np.ones(1, r.dtype.np), r)
    for k in range(r.shape[0]):
        out = convolve(out, _join.stack([_const(_np.ones((), r.dtype.np), r), -r[k]]))
    return out


def roots(p):
    """The roots of ``p`` (NumPy's companion-matrix eigenvalues), differentiable where they are
    real and simple: from ``p(r) = 0``, ``dr/dp_i = -r^(n-i) / p'(r)`` (implicit function
    theorem). The backward is written with rows on ``p`` and the saved roots themselves, so
    second derivatives follow the roots' own graph. Complex or repeated roots of an input that
    requires grad raise (``linalg.eig`` is not covered)."""
    from .. import autograd

    p = _float(p)
    data = p._host("jitgrad.numpy.roots")
    rts = _np.roots(data)
    if not ((p.requires_grad and autograd.is_grad_enabled()) or _forward_ad.has_tangent(p)):
        return Tensor._make(_np.asarray(rts))
    if _np.iscomplexobj(rts) or len(_np.unique(rts)) != len(rts):
        raise TypeError("jitgrad.numpy.roots: the gradient is covered for real, simple roots "
                        f"only (got {rts}); call roots on p.detach() for the values")
    return _roots_function().apply(p)


_ROOTS = []


def _roots_function():
    if _ROOTS:
        return _ROOTS[0]
    from ..autograd import Function

    def powers_and_slope(p, r):
        """``powers[k, i] = r_k^(n-i)`` and ``p'(r_k)``: ``dr_k/dp_i = -powers[k, i] / p'(r_k)``.
        (Leading zeros of p, dropped by np.roots, get the terms of their powers.)"""
        n = p.shape[0] - 1
        cols = [_creation.ones_like(r)]
        for _ in range(n):
            cols.append(cols[-1] * r)
        return _shape.flip(_join.stack(cols, 1), 1), polyval(polyder(p), r)

    class RootsBackward(Function):
        """``r`` with ``p(r) = 0``; ``g_p[i] = -sum_k g_k r_k^(n-i) / p'(r_k)``; tangent
        ``t_r[k] = -sum_i t_i r_k^(n-i) / p'(r_k)``."""

        @staticmethod
        def forward(ctx, p):
            r = Tensor._make(_np.roots(p._host()).astype(p.dtype.np)).to(p.device)
            ctx.save_for_backward(p, r)
            ctx.polynomial_and_roots = (p, r)  # for jvp (saved tensors exist when recording)
            return r

        @staticmethod
        def backward(ctx, g):
            p, r = ctx.saved_tensors
            powers, slope = powers_and_slope(p, r)
            return -_reductions.sum(_shape.expand_dims(g / slope, 1) * powers, 0)

        @staticmethod
        def jvp(ctx, t):
            p, r = ctx.polynomial_and_roots
            powers, slope = powers_and_slope(p, r)
            return -_reductions.sum(powers * _shape.expand_dims(t, 0), 1) / slope

    _ROOTS.append(RootsBackward)
    return RootsBackward
