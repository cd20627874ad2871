"""``jitgrad.scipy.stats.gamma``: the gamma distribution with shape ``a``, SciPy's signatures
(``z = (x - loc) / scale``, density ``z^(a-1) e^-z / (Gamma(a) scale)`` for ``z >= 0``).
``logpdf``/``pdf`` are differentiable in ``x``, ``a``, ``loc``, ``scale``; ``cdf``/``sf`` and
their logs (``gammainc``/``gammaincc``) in ``x``, ``loc``, ``scale`` (``a`` requiring grad
raises)."""
from __future__ import annotations

import math

from ...ops import unary as _unary_ops
from .. import special as _special
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def logpdf(x, a, loc=0.0, scale=1.0):
    """``(a-1) log z - z - gammaln(a) - log(scale)``; ``-inf`` for ``z < 0``."""
    a = _common.tensor(a)
    z, scale = _common.standardize(x, loc, scale)
    neg = z < 0
    zs = _common.where(neg, 1.0, z)
    out = _special.xlogy(a - 1.0, zs) - zs - _special.gammaln(a) - _common.log(scale)
    return _common.where(neg, -math.inf, out)


def pdf(x, a, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, a, loc, scale))


def _clipped(x, loc, scale):
    z, _ = _common.standardize(x, loc, scale)
    return _common.where(z < 0, 0.0, z)


def cdf(x, a, loc=0.0, scale=1.0):
    """``gammainc(a, z)`` (0 for ``z < 0``); ``d/dz = z^(a-1) e^-z / Gamma(a)``."""
    return _special.gammainc(a, _clipped(x, loc, scale))


def sf(x, a, loc=0.0, scale=1.0):
    """``gammaincc(a, z)`` (1 for ``z < 0``)."""
    return _special.gammaincc(a, _clipped(x, loc, scale))


def logcdf(x, a, loc=0.0, scale=1.0):
    """``log(cdf)``."""
    return _unary_ops.log(cdf(x, a, loc, scale))


def logsf(x, a, loc=0.0, scale=1.0):
    """``log(sf)``."""
    return _unary_ops.log(sf(x, a, loc, scale))


def ppf(q, a, loc=0.0, scale=1.0):
    """Quantile ``loc + scale gammaincinv(a, q)``; differentiable in ``q``, ``loc``, ``scale``
    (``a`` a constant)."""
    return _common.tensor(loc) + _common.tensor(scale) * _special.gammaincinv(a, q)


def isf(q, a, loc=0.0, scale=1.0):
    """Inverse survival function ``ppf(1 - q)``."""
    return ppf(1.0 - _common.tensor(q), a, loc, scale)


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
