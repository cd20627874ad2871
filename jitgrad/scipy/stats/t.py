"""``jitgrad.scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom, SciPy's
signatures. ``logpdf``/``pdf`` are differentiable in ``x``, ``df``, ``loc``, ``scale``; ``cdf``,
``sf`` and their logs in ``x``, ``loc``, ``scale`` (``df`` requiring grad raises: the derivative
of the incomplete beta in its parameters has no closed form)."""
from __future__ import annotations

import math

from ...ops import npfuncs as _npfuncs
from ...ops import unary as _unary_ops
from .. import special as _special
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def logpdf(x, df, loc=0.0, scale=1.0):
    """``gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log(scale)
    - (df+1)/2 log1p(z^2/df)``."""
    df = _common.tensor(df)
    z, scale = _common.standardize(x, loc, scale)
    return (_special.gammaln((df + 1.0) * 0.5) - _special.gammaln(df * 0.5)
            - 0.5 * _unary_ops.log(df * math.pi) - _unary_ops.log(scale)
            - (df + 1.0) * 0.5 * _unary_ops.log1p(z * z / df))


def pdf(x, df, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0.0, scale=1.0):
    """``F(z; df)``, the standard t CDF (``scipy.special.stdtr``); ``dF/dx = f(z) / scale``,
    ``dF/dloc = -f(z) / scale``, ``dF/dscale = -z f(z) / scale``."""
    z, _ = _common.standardize(x, loc, scale)
    return _npfuncs.stdtr(df, z)


def sf(x, df, loc=0.0, scale=1.0):
    """``1 - cdf = F(-z; df)`` (the t distribution is symmetric)."""
    z, _ = _common.standardize(x, loc, scale)
    return _npfuncs.stdtr(df, -z)


def logcdf(x, df, loc=0.0, scale=1.0):
    """``log(cdf)``."""
    return _unary_ops.log(cdf(x, df, loc, scale))


def logsf(x, df, loc=0.0, scale=1.0):
    """``log(sf)``."""
    return _unary_ops.log(sf(x, df, loc, scale))


def ppf(q, df, loc=0.0, scale=1.0):
    """Quantile ``loc + scale stdtrit(df, q)``; ``d/dq = scale / f(z)``; differentiable in
    ``q``, ``loc``, ``scale`` (``df`` a constant)."""
    return _common.tensor(loc) + _common.tensor(scale) * _special.stdtrit(df, q)


def isf(q, df, loc=0.0, scale=1.0):
    """Inverse survival function ``loc - scale stdtrit(df, q)`` (symmetric)."""
    return _common.tensor(loc) - _common.tensor(scale) * _special.stdtrit(df, q)


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
