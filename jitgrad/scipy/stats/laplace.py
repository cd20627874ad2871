"""``jitgrad.scipy.stats.laplace``: the Laplace (double exponential) distribution, SciPy's
signatures (density ``e^-|z| / (2 scale)``), differentiable in ``x``, ``loc`` and ``scale``
(away from ``x = loc``, where the density has a kink)."""
from __future__ import annotations

import math

from ...ops import unary as _unary_ops
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf"]


def logpdf(x, loc=0.0, scale=1.0):
    """``-|z| - log(2 scale)``."""
    z, scale = _common.standardize(x, loc, scale)
    return -_unary_ops.abs(z) - _common.log(scale) - math.log(2.0)


def pdf(x, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, loc, scale))


def _cdf_z(z):
    # e^z / 2 below the median, 1 - e^-z / 2 above; each branch only sees its own half
    low = z < 0
    zl = _common.where(low, z, 0.0)
    zh = _common.where(low, 0.0, z)
    return _common.where(low, 0.5 * _unary_ops.exp(zl), 1.0 - 0.5 * _unary_ops.exp(-zh))


def cdf(x, loc=0.0, scale=1.0):
    """``e^z / 2`` for ``z < 0``, ``1 - e^-z / 2`` otherwise."""
    z, _ = _common.standardize(x, loc, scale)
    return _cdf_z(z)


def sf(x, loc=0.0, scale=1.0):
    """``cdf(-z)`` (symmetric)."""
    z, _ = _common.standardize(x, loc, scale)
    return _cdf_z(-z)


def logcdf(x, loc=0.0, scale=1.0):
    """``log(cdf)``."""
    return _common.log(cdf(x, loc, scale))


def logsf(x, loc=0.0, scale=1.0):
    """``log(sf)``."""
    return _common.log(sf(x, loc, scale))


def ppf(q, loc=0.0, scale=1.0):
    """``loc - scale sign(q - 1/2) log(1 - 2 |q - 1/2|)``."""
    d = _common.tensor(q) - 0.5
    return (_common.tensor(loc) - _common.tensor(scale) * _unary_ops.sign(d)
            * _unary_ops.log1p(-2.0 * _unary_ops.abs(d)))


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
