"""``jitgrad.scipy.stats.chi2``: the chi-squared distribution with ``df`` degrees of freedom
(a gamma distribution with shape ``df/2`` and scale ``2 scale``), SciPy's signatures.
``logpdf``/``pdf`` are differentiable in ``x``, ``df``, ``loc``, ``scale``; ``cdf``/``sf`` and
their logs in ``x``, ``loc``, ``scale`` (``df`` requiring grad raises)."""
from __future__ import annotations

from ...autograd import forward_ad as _forward_ad
from . import _common
from . import gamma as _gamma

__all__ = ["logpdf", "pdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"]


def _shape(df, fn):
    if _forward_ad.needs_derivative(df) and fn in ("cdf", "sf"):
        raise NotImplementedError(f"chi2.{fn}: the derivative with respect to the shape "
                                  "parameter df is not implemented (no closed form); pass it "
                                  "without requires_grad (or detach it)")
    return _common.tensor(df) * 0.5


def logpdf(x, df, loc=0.0, scale=1.0):
    """``gamma.logpdf(x, df/2, loc, 2 scale)``."""
    return _gamma.logpdf(x, _shape(df, "logpdf"), loc, _common.tensor(scale) * 2.0)


def pdf(x, df, loc=0.0, scale=1.0):
    """``exp(logpdf)``."""
    return _gamma.pdf(x, _shape(df, "pdf"), loc, _common.tensor(scale) * 2.0)


def cdf(x, df, loc=0.0, scale=1.0):
    """``gammainc(df/2, z/2)``."""
    return _gamma.cdf(x, _shape(df, "cdf"), loc, _common.tensor(scale) * 2.0)


def sf(x, df, loc=0.0, scale=1.0):
    """``gammaincc(df/2, z/2)``."""
    return _gamma.sf(x, _shape(df, "sf"), loc, _common.tensor(scale) * 2.0)


def logcdf(x, df, loc=0.0, scale=1.0):
    """``log(cdf)``."""
    return _common.log(cdf(x, df, loc, scale))


def logsf(x, df, loc=0.0, scale=1.0):
    """``log(sf)``."""
    return _common.log(sf(x, df, loc, scale))


def ppf(q, df, loc=0.0, scale=1.0):
    """Quantile ``loc + 2 scale gammaincinv(df/2, q)``."""
    return _gamma.ppf(q, _shape(df, "cdf"), loc, _common.tensor(scale) * 2.0)


def isf(q, df, loc=0.0, scale=1.0):
    """Inverse survival function ``ppf(1 - q)``."""
    return _gamma.isf(q, _shape(df, "cdf"), loc, _common.tensor(scale) * 2.0)


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
