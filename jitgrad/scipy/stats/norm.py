"""``jitgrad.scipy.stats.norm``: the normal distribution N(loc, scale^2), differentiable in
``x``, ``loc`` and ``scale`` (every function), with SciPy's signatures. ``z = (x - loc) / scale``.
The tails use ``log_ndtr``/``erfc`` directly, so ``logcdf(-40)`` is finite and accurate."""
from __future__ import annotations

import math

from .. import special as _special
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "entropy"]
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def logpdf(x, loc=0.0, scale=1.0):
    """``-z^2/2 - log(scale) - log(2 pi)/2``."""
    z, scale = _common.standardize(x, loc, scale)
    return -0.5 * z * z - _common.log(scale) - _HALF_LOG_2PI


def pdf(x, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    from ...ops import unary

    return unary.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """``ndtr(z) = erfc(-z / sqrt 2) / 2``; ``d/dx = pdf``."""
    z, _ = _common.standardize(x, loc, scale)
    return _special.ndtr(z)


def logcdf(x, loc=0.0, scale=1.0):
    """``log_ndtr(z)``; ``d/dz = phi(z) / ndtr(z)``."""
    z, _ = _common.standardize(x, loc, scale)
    return _special.log_ndtr(z)


def sf(x, loc=0.0, scale=1.0):
    """Survival function ``1 - cdf = ndtr(-z)``."""
    z, _ = _common.standardize(x, loc, scale)
    return _special.ndtr(-z)


def logsf(x, loc=0.0, scale=1.0):
    """``log_ndtr(-z)``."""
    z, _ = _common.standardize(x, loc, scale)
    return _special.log_ndtr(-z)


def ppf(q, loc=0.0, scale=1.0):
    """Quantile ``loc + scale ndtri(q)``; ``d/dq = scale / phi(ndtri(q))``."""
    return _common.tensor(loc) + _common.tensor(scale) * _special.ndtri(q)


def isf(q, loc=0.0, scale=1.0):
    """Inverse survival function ``loc - scale ndtri(q)``."""
    return _common.tensor(loc) - _common.tensor(scale) * _special.ndtri(q)


@_common.params_only
def entropy(loc=0.0, scale=1.0):
    """``log(scale) + (1 + log(2 pi)) / 2`` (``loc`` does not enter)."""
    return _common.log(_common.tensor(scale)) + (0.5 + _HALF_LOG_2PI)


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
