"""The multivariate normal CDF as a differentiable op (in ``x`` and ``mean``) for
``jitgrad.scipy.stats.multivariate_normal.cdf``.

Forward: ``scipy.stats.multivariate_normal.cdf`` (Genz's algorithm: exact for d <= 2,
randomised quasi-Monte Carlo with a fixed seed, hence deterministic, for d >= 3, to about
``abseps``). Gradient (the standard identity, e.g. Genz & Bretz 2009, sec. 2.2):

    dF/dx_i = phi(x_i; 0, S_ii) * F_{d-1}(x_-i - S_-i,i x_i / S_ii; S_-i,-i - S_-i,i S_i,-i / S_ii)

for ``x`` already centred (``x - mean``), ``phi`` the univariate normal density and ``F_{d-1}``
the CDF of the conditional normal of the other coordinates given ``x_i``. The gradient is a
further op whose own backward raises (second derivatives are not implemented), so a Hessian
never silently comes out zero.
"""
from __future__ import annotations

import math

import numpy as np

from ..ops.core import dispatch
from ..ops.core.registry import def_composite


def _cdf(x, cov, abseps, releps, maxpts):
    import scipy.stats

    d = cov.shape[0]
    if d == 1:
        from scipy.special import ndtr

        return ndtr(x[..., 0] / math.sqrt(cov[0, 0]))
    kw = dict(mean=np.zeros(d), cov=cov, abseps=abseps, releps=releps, maxpts=maxpts)
    try:  # a fixed seed makes the d >= 3 estimate a deterministic (smooth) function of x
        return np.asarray(scipy.stats.multivariate_normal.cdf(x, rng=0, **kw))
    except TypeError:  # SciPy < 1.15 spells it random_state
        return np.asarray(scipy.stats.multivariate_normal.cdf(x, random_state=0, **kw))


def _grad(x, cov, abseps, releps, maxpts):
    """``dF/dx`` for centred ``x`` of shape ``(n, d)`` (an ``(n, d)`` array)."""
    n, d = x.shape
    out = np.empty_like(x)
    for i in range(d):
        s_ii = cov[i, i]
        phi = np.exp(-0.5 * x[:, i] ** 2 / s_ii) / math.sqrt(2.0 * math.pi * s_ii)
        if d == 1:
            out[:, i] = phi
            continue
        rest = [j for j in range(d) if j != i]
        c = cov[rest, i]
        cond_cov = cov[np.ix_(rest, rest)] - np.outer(c, c) / s_ii
        cond_x = x[:, rest] - np.outer(x[:, i], c) / s_ii
        f = _cdf(cond_x, cond_cov, abseps, releps, maxpts)
        out[:, i] = phi * np.reshape(f, (n,))
    return out


def _grad_back(ctx, g, x):
    raise NotImplementedError("multivariate_normal.cdf: second derivatives are not implemented")


MVN_CDF_GRAD = def_composite(
    "mvn_cdf_grad", "MvnCdfGradBackward0", ("x",),
    lambda ctx, x, cov, abseps, releps, maxpts: _grad(x, cov, abseps, releps, maxpts),
    _grad_back, attrs=("cov", "abseps", "releps", "maxpts"), save=("x",))


def _cdf_back(ctx, g, x):
    grad = dispatch.composite(MVN_CDF_GRAD, x, cov=ctx.cov, abseps=ctx.abseps,
                              releps=ctx.releps, maxpts=ctx.maxpts)
    return (dispatch.Tensor.unsqueeze(g, -1) * grad,)


MVN_CDF = def_composite(
    "mvn_cdf", "MvnCdfBackward0", ("x",),
    lambda ctx, x, cov, abseps, releps, maxpts: np.reshape(
        _cdf(x, cov, abseps, releps, maxpts), x.shape[:-1]).astype(x.dtype),
    _cdf_back, attrs=("cov", "abseps", "releps", "maxpts"), save=("x",))


def mvn_cdf(diff, cov, abseps=1e-5, releps=1e-5, maxpts=None):
    """``P(X <= diff)`` for ``X ~ N(0, cov)``, ``diff`` a ``(n, d)`` Tensor (one value per row);
    differentiable in ``diff`` (see the module docstring), ``cov`` a constant ndarray."""
    cov = np.asarray(cov, dtype=np.float64)
    if maxpts is None:
        maxpts = 1000000 * cov.shape[0]
    return dispatch.composite(MVN_CDF, diff, cov=cov, abseps=float(abseps), releps=float(releps),
                              maxpts=int(maxpts))
