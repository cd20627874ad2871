"""``jitgrad.scipy.special``: ``erf erfc gammaln digamma polygamma expit logit logsumexp xlogy
xlog1py ndtr log_ndtr_naive`` as differentiable Tensor functions (float64 kept)."""
from __future__ import annotations

import math

import numpy as _np

from ..ops import binary as _binary_ops
from ..ops import reduce as _reduce_ops
from ..ops import special as _special_ops
from ..ops import unary as _unary_ops
from ..tensor import Tensor

__all__ = ["erf", "erfc", "gammaln", "digamma", "psi", "polygamma", "expit", "logit",
           "logsumexp", "xlogy", "xlog1py", "ndtr", "gamma", "beta", "betaln"]


def _t(x):
    return x if isinstance(x, Tensor) else Tensor._make(_np.asarray(x, dtype=_np.result_type(x, 0.0)))


def erf(x):
    """``2/sqrt(pi) int_0^x exp(-t^2) dt``; derivative ``2/sqrt(pi) exp(-x^2)``."""
    return _unary_ops.erf(_t(x))


def erfc(x):
    """``1 - erf(x)``."""
    return 1.0 - _unary_ops.erf(_t(x))


def gammaln(x):
    """``log|Gamma(x)|``; derivative ``digamma(x)``."""
    return _special_ops.gammaln(_t(x))


def gamma(x):
    """``Gamma(x) = exp(gammaln(x))`` for positive ``x``."""
    x = _t(x)
    if (x._data <= 0).any():
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


def logit(p):
    """``log(p / (1 - p))``; derivative ``1 / (p (1 - p))``."""
    p = _t(p)
    return _unary_ops.log(p) - _unary_ops.log1p(-p)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log sum_i b_i exp(a_i)`` over ``axis``, stabilised by the (constant) maximum; the
    gradient is ``g b exp(a - out)`` (softmax weights)."""
    if return_sign:
        raise NotImplementedError("jitgrad.scipy.special.logsumexp: return_sign is not supported")
    a = _t(a)
    dims = tuple(range(a.ndim)) if axis is None else tuple(
        int(d) % a.ndim for d in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    m = _np.amax(a._data, axis=dims, keepdims=True) if a.ndim else a._data
    m = _np.where(_np.isfinite(m), m, 0.0)
    mt = Tensor._make(_np.asarray(m))
    e = _unary_ops.exp(a - mt)
    if b is not None:
        e = e * _t(b)
    s = _reduce_ops.sum(e, dim=dims, keepdim=True) if a.ndim else e
    out = _unary_ops.log(s) + mt
    if not keepdims and a.ndim:
        out = _reduce_ops.sum(out, dim=dims)  # drops the size-1 reduced dims (a sum of one element)
    return out


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
    """Standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``."""
    return 0.5 * (1.0 + _unary_ops.erf(_t(x) * (1.0 / math.sqrt(2.0))))


def __getattr__(name):
    import scipy.special

    if hasattr(scipy.special, name):
        raise AttributeError(f"jitgrad.scipy.special has no '{name}': scipy.special.{name} is not "
                             "covered (no derivative rule); see docs/numpy.md")
    raise AttributeError(f"module 'jitgrad.scipy.special' has no attribute '{name}'")
