"""``jitgrad.scipy.stats.beta``: the beta distribution with shapes ``a``, ``b``, SciPy's
signatures (``z = (x - loc) / scale``, density ``z^(a-1) (1-z)^(b-1) / (B(a, b) scale)`` on
``[0, 1]``). ``logpdf``/``pdf`` are differentiable in ``x``, ``a``, ``b``, ``loc``, ``scale``;
``cdf``/``sf`` and their logs (``betainc``) in ``x``, ``loc``, ``scale`` (``a``/``b`` requiring
grad raises)."""
from __future__ import annotations

import math

from ...ops import unary as _unary_ops
from .. import special as _special
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def logpdf(x, a, b, loc=0.0, scale=1.0):
    """``(a-1) log z + (b-1) log(1-z) - betaln(a, b) - log(scale)``; ``-inf`` outside
    ``[0, 1]``."""
    a, b = _common.tensor(a), _common.tensor(b)
    z, scale = _common.standardize(x, loc, scale)
    out_of = (z < 0) | (z > 1)
    zs = _common.where(out_of, 0.5, z)
    out = (_special.xlogy(a - 1.0, zs) + _special.xlog1py(b - 1.0, -zs) - _special.betaln(a, b)
           - _common.log(scale))
    return _common.where(out_of, -math.inf, out)


def pdf(x, a, b, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, a, b, loc, scale))


def _clipped(x, loc, scale):
    z, _ = _common.standardize(x, loc, scale)
    return _common.where(z < 0, 0.0, _common.where(z > 1, 1.0, z))


def cdf(x, a, b, loc=0.0, scale=1.0):
    """``betainc(a, b, z)`` (``z`` clipped to ``[0, 1]``); ``d/dz`` is the density."""
    return _special.betainc(a, b, _clipped(x, loc, scale))


def sf(x, a, b, loc=0.0, scale=1.0):
    """``betainc(b, a, 1 - z) = 1 - cdf`` (accurate near ``z = 1``)."""
    return _special.betainc(b, a, 1.0 - _clipped(x, loc, scale))


def logcdf(x, a, b, loc=0.0, scale=1.0):
    """``log(cdf)``."""
    return _unary_ops.log(cdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0.0, scale=1.0):
    """``log(sf)``."""
    return _unary_ops.log(sf(x, a, b, loc, scale))


def ppf(q, a, b, loc=0.0, scale=1.0):
    """Quantile ``loc + scale betaincinv(a, b, q)``; differentiable in ``q``, ``loc``,
    ``scale`` (``a``, ``b`` constants)."""
    return _common.tensor(loc) + _common.tensor(scale) * _special.betaincinv(a, b, q)


def isf(q, a, b, loc=0.0, scale=1.0):
    """Inverse survival function ``loc + scale (1 - betaincinv(b, a, q))``."""
    return (_common.tensor(loc)
            + _common.tensor(scale) * (1.0 - _special.betaincinv(b, a, q)))


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
