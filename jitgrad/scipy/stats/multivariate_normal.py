"""``jitgrad.scipy.stats.multivariate_normal``: N(mean, cov) with SciPy's signatures
(``cov`` a matrix, a vector of variances or a scalar variance). ``logpdf``/``pdf`` are
differentiable in ``x``, ``mean`` and ``cov``; ``cdf``/``logcdf`` in ``x`` and ``mean`` (``cov``
requiring grad raises; see ``jitgrad.scipy._mvn_cdf``)."""
from __future__ import annotations

import math

import numpy as _np

from ...autograd import forward_ad as _forward_ad
from ...ops import nplinalg as _nplinalg_ops
from ...ops import reduce as _reduce_ops
from ...ops import unary as _unary_ops
from ...ops.shape import diagonal as _diagonal, transpose as _transpose
from ...tensor import Tensor
from . import _common

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "entropy"]
_LOG2PI = math.log(2.0 * math.pi)


def _cov_matrix(cov, d):
    cov = _common.tensor(cov)
    if cov.ndim == 0:
        return cov * Tensor._make(_np.eye(d))
    if cov.ndim == 1:  # variances: diag(cov)
        return cov.unsqueeze(0) * Tensor._make(_np.eye(d))
    return cov


def logpdf(x, mean=None, cov=1.0, allow_singular=False):
    """``-(d log 2pi + log det cov + (x-mean)^T cov^-1 (x-mean)) / 2`` via the Cholesky
    factor ``L`` (``log det cov = 2 sum log diag L``, the quadratic form ``|L^-1 (x-mean)|^2``);
    ``x`` is ``(d,)`` or ``(..., d)`` (one value per row; the result has shape ``...``)."""
    if allow_singular:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular=True is not "
                                  "supported (a singular cov has no Cholesky factor)")
    x = _common.tensor(x)
    d = x.shape[-1]
    cov = _cov_matrix(cov, d)
    diff = x - (0.0 if mean is None else _common.tensor(mean))
    L = _nplinalg_ops.cholesky(cov)
    if diff.ndim == 1:
        maha = _reduce_ops.sum(_nplinalg_ops.solve(L, diff) ** 2)  # |L^-1 (x - mean)|^2
    else:
        lead = tuple(diff.shape[:-1])
        rows = diff.reshape(-1, d)
        maha = _reduce_ops.sum(_nplinalg_ops.solve(L, _transpose(rows, 0, 1)) ** 2, dim=0)
        maha = maha.reshape(lead)
    logdet = 2.0 * _reduce_ops.sum(_unary_ops.log(_diagonal(L, 0, -2, -1)))
    return -0.5 * (d * _LOG2PI + logdet + maha)


def pdf(x, mean=None, cov=1.0, allow_singular=False):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, mean, cov, allow_singular))


def cdf(x, mean=None, cov=1.0, allow_singular=False, *, abseps=1e-5, releps=1e-5,
        maxpts=None):
    """``F(x) = P(X <= x)`` componentwise for ``X ~ N(mean, cov)``; ``x`` is ``(d,)`` or
    ``(n, d)`` (one value per row). Forward by SciPy (Genz: exact for ``d <= 2``, seeded
    quasi-Monte Carlo to ``abseps`` for ``d >= 3``). Gradient
    ``dF/dx_i = phi(x_i - mean_i; cov_ii) F_{d-1}(conditional of the rest given x_i)``,
    ``dF/dmean = -dF/dx``; ``cov`` is a constant (``NotImplementedError`` if it requires
    grad), and second derivatives raise."""
    from .._mvn_cdf import mvn_cdf

    x = _common.tensor(x)
    d = x.shape[-1]
    if isinstance(cov, Tensor):
        if _forward_ad.needs_derivative(cov):
            raise NotImplementedError("multivariate_normal.cdf: the derivative with respect "
                                      "to cov is not implemented; pass cov without "
                                      "requires_grad (or detach it)")
        cov = cov._host("jitgrad.scipy.stats.multivariate_normal.cdf")
    cov = _np.asarray(cov, dtype=_np.float64)
    if cov.ndim == 0:
        cov = cov * _np.eye(d)
    elif cov.ndim == 1:
        cov = _np.diag(cov)
    diff = x - (0.0 if mean is None else _common.tensor(mean))
    if diff.ndim == 1:
        return mvn_cdf(diff.reshape(1, d), cov, abseps, releps, maxpts).reshape(())
    if diff.ndim != 2:
        raise ValueError("multivariate_normal.cdf: x must be (d,) or (n, d)")
    return mvn_cdf(diff, cov, abseps, releps, maxpts)


def logcdf(x, mean=None, cov=1.0, allow_singular=False, *, abseps=1e-5, releps=1e-5,
           maxpts=None):
    """``log(cdf)`` (same differentiability as ``cdf``)."""
    return _unary_ops.log(cdf(x, mean, cov, allow_singular, abseps=abseps, releps=releps,
                              maxpts=maxpts))


@_common.params_only
def entropy(mean=None, cov=1.0, allow_singular=False):
    """``(d (1 + log 2pi) + log det cov) / 2``; ``d`` from ``cov`` (or from ``mean`` when
    ``cov`` is a scalar)."""
    cov_t = _common.tensor(cov)
    d = cov_t.shape[-1] if cov_t.ndim else _common.tensor(mean).shape[-1]
    L = _nplinalg_ops.cholesky(_cov_matrix(cov_t, d))
    logdet = 2.0 * _reduce_ops.sum(_unary_ops.log(_diagonal(L, 0, -2, -1)))
    return 0.5 * (d * (1.0 + _LOG2PI) + logdet)


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
