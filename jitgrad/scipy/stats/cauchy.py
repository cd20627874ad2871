"""``jitgrad.scipy.stats.cauchy``: the Cauchy distribution, SciPy's signatures (density
``1 / (pi scale (1 + z^2))``), differentiable in ``x``, ``loc`` and ``scale``."""
from __future__ import annotations

import math

from ...ops import elementwise_np as _elementwise_np
from ...ops import unary as _unary_ops
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf"]


def logpdf(x, loc=0.0, scale=1.0):
    """``-log(pi) - log(scale) - log1p(z^2)``."""
    z, scale = _common.standardize(x, loc, scale)
    return -math.log(math.pi) - _common.log(scale) - _unary_ops.log1p(z * z)


def pdf(x, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """``1/2 + arctan(z) / pi``."""
    z, _ = _common.standardize(x, loc, scale)
    return 0.5 + _elementwise_np.unary("arctan", z) * (1.0 / math.pi)


def sf(x, loc=0.0, scale=1.0):
    """``1/2 - arctan(z) / pi``."""
    z, _ = _common.standardize(x, loc, scale)
    return 0.5 - _elementwise_np.unary("arctan", z) * (1.0 / math.pi)


def logcdf(x, loc=0.0, scale=1.0):
    """``log(cdf)``."""
    return _common.log(cdf(x, loc, scale))


def logsf(x, loc=0.0, scale=1.0):
    """``log(sf)``."""
    return _common.log(sf(x, loc, scale))


def ppf(q, loc=0.0, scale=1.0):
    """``loc + scale tan(pi (q - 1/2))``."""
    return (_common.tensor(loc)
            + _common.tensor(scale) * _unary_ops.tan(math.pi * (_common.tensor(q) - 0.5)))


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
