"""``jitgrad.scipy.stats``: ``norm`` (logpdf pdf cdf logcdf), ``t`` (logpdf pdf) and
``multivariate_normal`` (logpdf pdf), differentiable in every argument."""
from __future__ import annotations

import math

import numpy as _np

from ..ops import nplinalg as _la
from ..ops import reduce as _r
from ..ops import unary as _u
from ..ops.shape import diagonal as _diagonal, transpose as _transpose
from ..tensor import Tensor
from . import special as _sp

__all__ = ["norm", "t", "multivariate_normal"]
_LOG2PI = math.log(2.0 * math.pi)


def _t(x):
    return x if isinstance(x, Tensor) else Tensor._make(_np.asarray(x, dtype=_np.result_type(x, 0.0)))


class norm:
    """Normal distribution N(loc, scale^2)."""

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0):
        """``-z^2/2 - log(scale) - log(2 pi)/2`` with ``z = (x - loc) / scale``."""
        scale = _t(scale)
        z = (_t(x) - loc) / scale
        return -0.5 * z * z - _u.log(scale) - 0.5 * _LOG2PI

    @staticmethod
    def pdf(x, loc=0.0, scale=1.0):
        """``exp(logpdf)``."""
        return _u.exp(norm.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        """``ndtr((x - loc) / scale)``."""
        return _sp.ndtr((_t(x) - loc) / _t(scale))

    @staticmethod
    def logcdf(x, loc=0.0, scale=1.0):
        """``log(cdf)`` (computed directly: loses precision below about -37 sigma)."""
        return _u.log(norm.cdf(x, loc, scale))


class t:
    """Student's t distribution with ``df`` degrees of freedom."""

    @staticmethod
    def logpdf(x, df, loc=0.0, scale=1.0):
        """``gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log(scale)
        - (df+1)/2 log1p(z^2/df)``."""
        df, scale = _t(df), _t(scale)
        z = (_t(x) - loc) / scale
        return (_sp.gammaln((df + 1.0) * 0.5) - _sp.gammaln(df * 0.5)
                - 0.5 * _u.log(df * math.pi) - _u.log(scale)
                - (df + 1.0) * 0.5 * _u.log1p(z * z / df))

    @staticmethod
    def pdf(x, df, loc=0.0, scale=1.0):
        """``exp(logpdf)``."""
        return _u.exp(t.logpdf(x, df, loc, scale))


class multivariate_normal:
    """Multivariate normal N(mean, cov)."""

    @staticmethod
    def logpdf(x, mean=None, cov=1.0):
        """``-(d log 2pi + log det cov + (x-mean)^T cov^-1 (x-mean)) / 2`` via the Cholesky
        factor; ``x`` is ``(d,)`` or ``(n, d)`` (one value per row)."""
        x = _t(x)
        d = x.shape[-1]
        cov = _t(cov)
        if cov.ndim == 0:
            cov = cov * Tensor._make(_np.eye(d))
        diff = x - (0.0 if mean is None else _t(mean))
        L = _la.cholesky(cov)
        if diff.ndim == 1:
            maha = _r.sum(_la.solve(L, diff) ** 2)  # |L^-1 (x - mean)|^2
        elif diff.ndim == 2:
            maha = _r.sum(_la.solve(L, _transpose(diff, 0, 1)) ** 2, dim=0)
        else:
            raise ValueError("multivariate_normal.logpdf: x must be (d,) or (n, d)")
        logdet = 2.0 * _r.sum(_u.log(_diagonal(L, 0, -2, -1)))
        return -0.5 * (d * _LOG2PI + logdet + maha)

    @staticmethod
    def pdf(x, mean=None, cov=1.0):
        """``exp(logpdf)``."""
        return _u.exp(multivariate_normal.logpdf(x, mean, cov))
