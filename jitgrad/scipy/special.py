"""``jitgrad.scipy.special``: differentiable ``erf erfc erfinv erfcinv gammaln gamma digamma/psi
polygamma multigammaln rgamma gammasgn beta betaln expit logit log_expit logsumexp softmax
log_softmax xlogy xlog1py ndtr log_ndtr ndtri i0 i1 i0e i1e j0 j1 jn jv y0 y1 yn yv iv ive
gammainc gammaincc betainc gammaincinv betaincinv stdtr stdtrit`` (float64 kept).

The incomplete functions ``gammainc gammaincc betainc`` and the Bessel functions of order ``v``
are differentiable in ``x`` only (their shape parameters and orders are constants;
``requires_grad`` on them raises)."""
from __future__ import annotations

import math

import numpy as _np

from ..ops import binary as _binary_ops
from ..ops import nn as _nn_ops
from ..ops import reduce as _reduce_ops
from ..ops import scipy_special as _scipy_ops
from ..ops import special as _special_ops
from ..ops import shape as _shape_ops
from ..ops import unary as _unary_ops
from ..ops.core import upper as _upper
from ..tensor import Tensor

__all__ = ["erf", "erfc", "gammaln", "digamma", "psi", "polygamma", "expit", "logit",
           "logsumexp", "xlogy", "xlog1py", "ndtr", "gamma", "beta", "betaln", "erfinv",
           "erfcinv", "log_ndtr", "ndtri", "i0", "i1", "i0e", "i1e", "gammainc", "gammaincc",
           "betainc", "softmax", "log_softmax", "log_expit", "multigammaln", "jv", "jn", "yv",
           "yn", "j0", "j1", "y0", "y1", "iv", "ive", "rgamma", "gammasgn", "gammaincinv",
           "betaincinv", "stdtr", "stdtrit"]


@_upper.constant_maker
def _as_tensor(x):
    """A constant float Tensor of the Tensor-free data ``x``."""
    x = _np.asarray(x)
    return Tensor._make(_np.asarray(x, dtype=_np.result_type(x, 0.0)))


def _t(x):
    return x if isinstance(x, Tensor) else _as_tensor(x)


def erf(x):
    """``2/sqrt(pi) int_0^x exp(-t^2) dt``; derivative ``2/sqrt(pi) exp(-x^2)``."""
    return _unary_ops.erf(_t(x))


def erfc(x):
    """``1 - erf(x)``, computed directly (accurate where ``erf(x)`` rounds to 1); derivative
    ``-2/sqrt(pi) exp(-x^2)``. On CUDA (no device kernel for SciPy's erfc) it is ``1 - erf``,
    accurate to about 1e-16 absolute only."""
    x = _t(x)
    if x.is_cuda:
        return 1.0 - _unary_ops.erf(x)
    return _scipy_ops.unary_row(_scipy_ops.ERFC, x)


def erfinv(x):
    """Inverse of ``erf`` on ``(-1, 1)``; derivative ``sqrt(pi)/2 exp(erfinv(x)^2)``."""
    return _scipy_ops.unary_row(_scipy_ops.ERFINV, _t(x))


def erfcinv(x):
    """Inverse of ``erfc`` on ``(0, 2)``; derivative ``-sqrt(pi)/2 exp(erfcinv(x)^2)``."""
    return _scipy_ops.unary_row(_scipy_ops.ERFCINV, _t(x))


def log_ndtr(x):
    """``log(ndtr(x))``, accurate far into the left tail; derivative
    ``phi(x) / ndtr(x) = exp(-x^2/2 - log(2 pi)/2 - log_ndtr(x))``. On CUDA it is
    ``log(ndtr(x))`` (no device kernel; finite only above about -37)."""
    x = _t(x)
    if x.is_cuda:
        return _unary_ops.log(ndtr(x))
    return _scipy_ops.unary_row(_scipy_ops.LOG_NDTR, x)


def ndtri(p):
    """Inverse of ``ndtr`` (the standard normal quantile); derivative
    ``1 / phi(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2)``."""
    return _scipy_ops.unary_row(_scipy_ops.NDTRI, _t(p))


def i0(x):
    """Modified Bessel function of the first kind, order 0; derivative ``i1(x)``."""
    return _scipy_ops.unary_row(_scipy_ops.I0, _t(x))


def i1(x):
    """Modified Bessel function of the first kind, order 1; derivative ``i0(x) - i1(x)/x``
    (1/2 at 0)."""
    return _scipy_ops.unary_row(_scipy_ops.I1, _t(x))


def i0e(x):
    """Exponentially scaled ``i0``: ``exp(-|x|) i0(x)``; derivative
    ``i1e(x) - sign(x) i0e(x)``."""
    return _scipy_ops.unary_row(_scipy_ops.I0E, _t(x))


def i1e(x):
    """Exponentially scaled ``i1``: ``exp(-|x|) i1(x)``; derivative
    ``i0e(x) - i1e(x) (sign(x) + 1/x)`` (1/2 at 0)."""
    return _scipy_ops.unary_row(_scipy_ops.I1E, _t(x))


def gammainc(a, x):
    """Regularized lower incomplete gamma ``P(a, x) = gamma(a, x) / Gamma(a)``; derivative in
    ``x``: ``x^(a-1) e^-x / Gamma(a)``. ``a`` is a constant (``NotImplementedError`` if it
    requires grad)."""
    return _scipy_ops.incomplete(_scipy_ops.GAMMAINC, "gammainc", x, a=a)


def gammaincc(a, x):
    """Regularized upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``; derivative in ``x``:
    ``-x^(a-1) e^-x / Gamma(a)``; ``a`` a constant."""
    return _scipy_ops.incomplete(_scipy_ops.GAMMAINCC, "gammaincc", x, a=a)


def betainc(a, b, x):
    """Regularized incomplete beta ``I_x(a, b)``; derivative in ``x``:
    ``x^(a-1) (1-x)^(b-1) / B(a, b)``; ``a`` and ``b`` are constants."""
    return _scipy_ops.incomplete(_scipy_ops.BETAINC, "betainc", x, a=a, b=b)


def _bessel(kind, fn, v, x):
    return _scipy_ops.incomplete(_scipy_ops.BESSEL[kind], fn, x, v=v)


def jv(v, x):
    """Bessel function of the first kind of real order ``v``; derivative in ``x``
    ``(jv(v-1, x) - jv(v+1, x)) / 2``. ``v`` is a constant (``NotImplementedError`` if it
    requires grad)."""
    return _bessel("jv", "jv", v, x)


def jn(n, x):
    """``jv`` at integer order ``n``."""
    return _bessel("jv", "jn", n, x)


def yv(v, x):
    """Bessel function of the second kind of real order ``v`` (``x > 0``); derivative
    ``(yv(v-1, x) - yv(v+1, x)) / 2``."""
    return _bessel("yv", "yv", v, x)


def yn(n, x):
    """``yv`` at integer order ``n``."""
    return _bessel("yv", "yn", n, x)


def j0(x):
    """``jv(0, x)``; derivative ``-j1(x)``."""
    return _bessel("jv", "j0", 0.0, x)


def j1(x):
    """``jv(1, x)``; derivative ``(j0(x) - jv(2, x)) / 2``."""
    return _bessel("jv", "j1", 1.0, x)


def y0(x):
    """``yv(0, x)``; derivative ``-y1(x)``."""
    return _bessel("yv", "y0", 0.0, x)


def y1(x):
    """``yv(1, x)``."""
    return _bessel("yv", "y1", 1.0, x)


def iv(v, x):
    """Modified Bessel function of the first kind of real order ``v``; derivative
    ``(iv(v-1, x) + iv(v+1, x)) / 2``."""
    return _bessel("iv", "iv", v, x)


def ive(v, x):
    """Exponentially scaled ``iv``: ``iv(v, x) exp(-|x|)``; derivative
    ``(ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x)``."""
    return _bessel("ive", "ive", v, x)


def rgamma(x):
    """``1 / Gamma(x)`` for positive ``x``: ``exp(-gammaln(x))``; derivative
    ``-digamma(x) rgamma(x)``."""
    x = _t(x)
    if (x._host("jitgrad.scipy.special.rgamma") <= 0).any():
        raise ValueError("jitgrad.scipy.special.rgamma: only positive arguments are supported")
    return _unary_ops.exp(-gammaln(x))


def gammasgn(x):
    """Sign of ``Gamma(x)``: piecewise constant, so its gradient is zero."""
    import scipy.special

    x = _t(x)
    sign = scipy.special.gammasgn(x._host("jitgrad.scipy.special.gammasgn"))
    return x * 0.0 + Tensor._make(_np.asarray(sign, dtype=x._data.dtype)).to(x.device)


def gammaincinv(a, q):
    """``x`` with ``gammainc(a, x) = q``; derivative in ``q``: ``Gamma(a) x^(1-a) e^x`` (one
    over the density); ``a`` is a constant."""
    return _scipy_ops.incomplete(_scipy_ops.GAMMAINCINV, "gammaincinv", q, a=a)


def betaincinv(a, b, q):
    """``x`` with ``betainc(a, b, x) = q``; derivative in ``q``:
    ``B(a, b) x^(1-a) (1-x)^(1-b)``; ``a`` and ``b`` are constants."""
    return _scipy_ops.incomplete(_scipy_ops.BETAINCINV, "betaincinv", q, a=a, b=b)


def stdtr(df, t):
    """Student t CDF with ``df`` degrees of freedom (``df`` a constant); derivative the t
    density."""
    from ..ops import npfuncs

    return npfuncs.stdtr(df, _t(t))


def stdtrit(df, q):
    """Student t quantile: ``t`` with ``stdtr(df, t) = q``; derivative in ``q`` one over the t
    density at ``t``; ``df`` is a constant."""
    return _scipy_ops.incomplete(_scipy_ops.STDTRIT, "stdtrit", q, df=df)


def multigammaln(a, d):
    """Multivariate log-gamma ``d(d-1)/4 log(pi) + sum_{j=1..d} gammaln(a + (1 - j)/2)``
    (every ``a > (d - 1)/2``); derivative ``sum_j digamma(a + (1 - j)/2)``."""
    a = _t(a)
    d = int(d)
    if (a._host("jitgrad.scipy.special.multigammaln") <= (d - 1) / 2.0).any():
        raise ValueError("jitgrad.scipy.special.multigammaln: condition a > (d-1)/2 not met")
    out = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(1, d + 1):
        out = out + gammaln(a + (1 - j) / 2.0)
    return out


def gammaln(x):
    """``log|Gamma(x)|``; derivative ``digamma(x)``."""
    return _special_ops.gammaln(_t(x))


def gamma(x):
    """``Gamma(x) = exp(gammaln(x))`` for positive ``x``."""
    x = _t(x)
    if (x._host("jitgrad.scipy.special.gamma") <= 0).any():
        raise ValueError("jitgrad.scipy.special.gamma: only positive arguments are supported")
    return _unary_ops.exp(gammaln(x))


def betaln(a, b):
    """``log B(a, b) = gammaln(a) + gammaln(b) - gammaln(a + b)``."""
    a, b = _t(a), _t(b)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def beta(a, b):
    """``B(a, b) = exp(betaln(a, b))`` for positive arguments."""
    return _unary_ops.exp(betaln(a, b))


def digamma(x):
    """``psi(x)``; derivative ``polygamma(1, x)``."""
    return _special_ops.digamma(_t(x))


psi = digamma


def polygamma(n, x):
    """``psi^(n)(x)``; derivative ``polygamma(n + 1, x)``."""
    return _special_ops.polygamma(n, _t(x))


def expit(x):
    """``1 / (1 + exp(-x))``; derivative ``s (1 - s)``."""
    return _unary_ops.sigmoid(_t(x))


def log_expit(x):
    """``log(expit(x)) = -softplus(-x)``, stable for large ``|x|``; derivative
    ``1 - expit(x)``."""
    # softplus(u) is u itself above the threshold: at 40, log1p(exp(-40)) < 1e-17 relative
    return -_nn_ops.softplus(-_t(x), 1.0, 40.0)


def logit(p):
    """``log(p / (1 - p))``; derivative ``1 / (p (1 - p))``."""
    p = _t(p)
    return _unary_ops.log(p) - _unary_ops.log1p(-p)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log sum_i b_i exp(a_i)`` over ``axis``, stabilised by the (constant) maximum; the
    gradient is ``g b exp(a - out)`` (softmax weights)."""
    a = _t(a)
    dims = tuple(range(a.ndim)) if axis is None else tuple(
        int(d) % a.ndim for d in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    # the shift: the detached maximum (0 where it is not finite), computed by the ops so that
    # no value leaves the graph (jitgrad.compile records it)
    m = a.detach()
    if a.ndim:
        m = _reduce_ops.amax(m, dims, keepdim=True)
    mt = _binary_ops.where(_binary_ops.compare("eq", m - m, 0), m,
                           _as_tensor(_np.zeros((), m.dtype.np)).to(a.device))
    e = _unary_ops.exp(a - mt)
    if b is not None:
        e = e * _t(b)
    s = _reduce_ops.sum(e, dim=dims, keepdim=True) if a.ndim else e
    sign = None
    if return_sign:  # log|s| and sign(s): a negative weighted sum is allowed
        sign = _unary_ops.sign(s.detach())
        s = _unary_ops.abs(s)
    out = _unary_ops.log(s) + mt
    if not keepdims and a.ndim:
        out = _reduce_ops.sum(out, dim=dims)  # drops the size-1 reduced dims (a sum of one element)
        if sign is not None:
            sign = _shape_ops.reshape(sign, tuple(out.shape))
    return (out, sign) if return_sign else out


def _axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    return tuple(int(d) % x.ndim for d in (axis if isinstance(axis, (tuple, list)) else (axis,)))


def log_softmax(x, axis=None):
    """``x - logsumexp(x, axis, keepdims=True)`` (all elements when ``axis`` is None)."""
    x = _t(x)
    if isinstance(axis, int) or (x.ndim == 1 and axis is None):
        return _nn_ops.log_softmax(x, 0 if axis is None else axis)
    return x - logsumexp(x, axis=_axes(x, axis), keepdims=True)


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x), axis)`` (all elements when ``axis`` is None); the gradient is
    ``s (g - sum(g s, axis))``."""
    x = _t(x)
    if isinstance(axis, int) or (x.ndim == 1 and axis is None):
        return _nn_ops.softmax(x, 0 if axis is None else axis)
    return _unary_ops.exp(log_softmax(x, axis))


def xlogy(x, y):
    """``x log(y)``, 0 where ``x == 0`` unless y is nan (as SciPy and PyTorch).

    Gradients ``log y`` and ``x / y``, as PyTorch's: at ``x == 0`` the x-gradient is still
    ``log y`` where ``0 < y < inf`` (x log y is smooth there). Only where ``log y`` is not a
    finite number (``y <= 0`` or ``y = inf``, with ``x == 0``) is the value set to 0 by a mask,
    and there both gradients are 0 (PyTorch's y-gradient ``0 / 0`` is nan at ``y = 0``)."""
    x, y = _t(x), _t(y)
    zero = (x == 0) * ((y <= 0) + (y == math.inf))
    ys = _binary_ops.where(zero, 1.0, y)
    return _binary_ops.where(zero, 0.0, x * _unary_ops.log(ys))


def xlog1py(x, y):
    """``x log1p(y)``, 0 where ``x == 0`` unless y is nan; gradients ``log1p y`` and
    ``x / (1 + y)`` (masked as ``xlogy``'s where ``x == 0`` and ``y <= -1`` or ``y = inf``)."""
    x, y = _t(x), _t(y)
    zero = (x == 0) * ((y <= -1) + (y == math.inf))
    ys = _binary_ops.where(zero, 0.0, y)
    return _binary_ops.where(zero, 0.0, x * _unary_ops.log1p(ys))


def ndtr(x):
    """Standard normal CDF ``erfc(-x / sqrt 2) / 2`` (accurate in the left tail, where
    ``(1 + erf(x / sqrt 2)) / 2`` cancels); derivative ``exp(-x^2/2) / sqrt(2 pi)``."""
    return 0.5 * erfc(_t(x) * (-1.0 / math.sqrt(2.0)))


def __getattr__(name):
    import scipy.special

    if hasattr(scipy.special, name):
        raise AttributeError(f"jitgrad.scipy.special has no '{name}': scipy.special.{name} is not "
                             "covered (no derivative rule); see docs/scipy.md")
    raise AttributeError(f"module 'jitgrad.scipy.special' has no attribute '{name}'")
