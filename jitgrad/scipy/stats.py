"""``jitgrad.scipy.stats``: ``norm`` (logpdf pdf cdf logcdf), ``t`` (logpdf pdf cdf) and
``multivariate_normal`` (logpdf pdf cdf), differentiable in every argument (except ``t.cdf`` in
``df`` and ``multivariate_normal.cdf`` in ``cov``, which raise if those require grad)."""
from __future__ import annotations

import math

import numpy as _np

from ..ops import nplinalg as _nplinalg_ops
from ..ops import npfuncs as _npfuncs
from ..ops import reduce as _reduce_ops
from ..ops import unary as _unary_ops
from ..ops.shape import diagonal as _diagonal, transpose as _transpose
from ..tensor import Tensor
from . import special as _special

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
        return -0.5 * z * z - _unary_ops.log(scale) - 0.5 * _LOG2PI

    @staticmethod
    def pdf(x, loc=0.0, scale=1.0):
        """``exp(logpdf)``."""
        return _unary_ops.exp(norm.logpdf(x, loc, scale))

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0):
        """``ndtr((x - loc) / scale)``."""
        return _special.ndtr((_t(x) - loc) / _t(scale))

    @staticmethod
    def logcdf(x, loc=0.0, scale=1.0):
        """``log(cdf)`` (computed directly: loses precision below about -37 sigma)."""
        return _unary_ops.log(norm.cdf(x, loc, scale))


class t:
    """Student's t distribution with ``df`` degrees of freedom."""

    @staticmethod
    def logpdf(x, df, loc=0.0, scale=1.0):
        """``gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2 - log(scale)
        - (df+1)/2 log1p(z^2/df)``."""
        df, scale = _t(df), _t(scale)
        z = (_t(x) - loc) / scale
        return (_special.gammaln((df + 1.0) * 0.5) - _special.gammaln(df * 0.5)
                - 0.5 * _unary_ops.log(df * math.pi) - _unary_ops.log(scale)
                - (df + 1.0) * 0.5 * _unary_ops.log1p(z * z / df))

    @staticmethod
    def pdf(x, df, loc=0.0, scale=1.0):
        """``exp(logpdf)``."""
        return _unary_ops.exp(t.logpdf(x, df, loc, scale))

    @staticmethod
    def cdf(x, df, loc=0.0, scale=1.0):
        """``F(z; df)`` with ``z = (x - loc) / scale`` and ``F`` the standard t CDF
        (``1 - I_{df/(df+z^2)}(df/2, 1/2) / 2`` for ``z > 0``, via ``scipy.special.stdtr``).
        ``dF/dx = pdf(x) = f(z) / scale``, ``dF/dloc = -f(z) / scale``,
        ``dF/dscale = -z f(z) / scale``; the derivative in ``df`` is not implemented
        (``NotImplementedError`` if ``df`` requires grad)."""
        scale = _t(scale)
        z = (_t(x) - loc) / scale
        return _npfuncs.stdtr(df, z)


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
        L = _nplinalg_ops.cholesky(cov)
        if diff.ndim == 1:
            maha = _reduce_ops.sum(_nplinalg_ops.solve(L, diff) ** 2)  # |L^-1 (x - mean)|^2
        elif diff.ndim == 2:
            maha = _reduce_ops.sum(_nplinalg_ops.solve(L, _transpose(diff, 0, 1)) ** 2, dim=0)
        else:
            raise ValueError("multivariate_normal.logpdf: x must be (d,) or (n, d)")
        logdet = 2.0 * _reduce_ops.sum(_unary_ops.log(_diagonal(L, 0, -2, -1)))
        return -0.5 * (d * _LOG2PI + logdet + maha)

    @staticmethod
    def pdf(x, mean=None, cov=1.0):
        """``exp(logpdf)``."""
        return _unary_ops.exp(multivariate_normal.logpdf(x, mean, cov))

    @staticmethod
    def cdf(x, mean=None, cov=1.0, *, abseps=1e-5, releps=1e-5, maxpts=None):
        """``F(x) = P(X <= x)`` componentwise for ``X ~ N(mean, cov)``; ``x`` is ``(d,)`` or
        ``(n, d)`` (one value per row). Forward by SciPy (Genz: exact for ``d <= 2``, seeded
        quasi-Monte Carlo to ``abseps`` for ``d >= 3``). Gradient
        ``dF/dx_i = phi(x_i - mean_i; cov_ii) F_{d-1}(conditional of the rest given x_i)``,
        ``dF/dmean = -dF/dx``; ``cov`` is a constant (``NotImplementedError`` if it requires
        grad), and second derivatives raise."""
        from ._mvn_cdf import mvn_cdf

        x = _t(x)
        d = x.shape[-1]
        if isinstance(cov, Tensor):
            if cov.requires_grad:
                raise NotImplementedError("multivariate_normal.cdf: the derivative with respect "
                                          "to cov is not implemented; pass cov without "
                                          "requires_grad (or detach it)")
            cov = cov._data
        cov = _np.asarray(cov, dtype=_np.float64)
        if cov.ndim == 0:
            cov = cov * _np.eye(d)
        elif cov.ndim == 1:
            cov = _np.diag(cov)
        diff = x - (0.0 if mean is None else _t(mean))
        if diff.ndim == 1:
            return mvn_cdf(diff.reshape(1, d), cov, abseps, releps, maxpts).reshape(())
        if diff.ndim != 2:
            raise ValueError("multivariate_normal.cdf: x must be (d,) or (n, d)")
        return mvn_cdf(diff, cov, abseps, releps, maxpts)
