"""``jitgrad.scipy.stats.expon``: the exponential distribution, SciPy's signatures
(``z = (x - loc) / scale``, density ``e^-z / scale`` for ``z >= 0``), differentiable in ``x``,
``loc`` and ``scale``."""
from __future__ import annotations

import math

from ...ops import unary as _unary_ops
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _z(x, loc, scale):
    z, scale = _common.standardize(x, loc, scale)
    neg = z < 0
    return _common.where(neg, 0.0, z), neg, scale


def logpdf(x, loc=0.0, scale=1.0):
    """``-z - log(scale)``; ``-inf`` for ``z < 0``."""
    z, neg, scale = _z(x, loc, scale)
    return _common.where(neg, -math.inf, -z - _common.log(scale))


def pdf(x, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """``1 - e^-z = -expm1(-z)`` (0 for ``z < 0``)."""
    z, _, _ = _z(x, loc, scale)
    return -_unary_ops.expm1(-z)


def sf(x, loc=0.0, scale=1.0):
    """``e^-z`` (1 for ``z < 0``)."""
    z, _, _ = _z(x, loc, scale)
    return _unary_ops.exp(-z)


def logcdf(x, loc=0.0, scale=1.0):
    """``log(-expm1(-z))``."""
    return _common.log(cdf(x, loc, scale))


def logsf(x, loc=0.0, scale=1.0):
    """``-z`` (0 for ``z < 0``)."""
    z, _, _ = _z(x, loc, scale)
    return -z


def ppf(q, loc=0.0, scale=1.0):
    """``loc - scale log1p(-q)``."""
    return _common.tensor(loc) - _common.tensor(scale) * _unary_ops.log1p(-_common.tensor(q))


def isf(q, loc=0.0, scale=1.0):
    """``loc - scale log(q)``."""
    return _common.tensor(loc) - _common.tensor(scale) * _common.log(_common.tensor(q))


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
