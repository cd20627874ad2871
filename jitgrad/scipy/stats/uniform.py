"""``jitgrad.scipy.stats.uniform``: the uniform distribution on ``[loc, loc + scale]``, SciPy's
signatures, differentiable in ``x``, ``loc`` and ``scale`` (inside the support)."""
from __future__ import annotations

import math

from ...ops import unary as _unary_ops
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf"]


def logpdf(x, loc=0.0, scale=1.0):
    """``-log(scale)`` on the support, ``-inf`` outside; ``x`` enters only through the support
    (its gradient is zero)."""
    z, scale = _common.standardize(x, loc, scale)
    inside = (z >= 0) & (z <= 1)
    return _common.where(inside, -_common.log(scale) + 0.0 * z, -math.inf)


def pdf(x, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0):
    """``z`` clipped to ``[0, 1]``."""
    z, _ = _common.standardize(x, loc, scale)
    return _common.where(z < 0, 0.0, _common.where(z > 1, 1.0, z))


def sf(x, loc=0.0, scale=1.0):
    """``1 - cdf``."""
    return 1.0 - cdf(x, loc, scale)


def ppf(q, loc=0.0, scale=1.0):
    """``loc + scale q``."""
    return _common.tensor(loc) + _common.tensor(scale) * _common.tensor(q)


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
