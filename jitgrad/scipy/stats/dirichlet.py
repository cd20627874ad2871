"""``jitgrad.scipy.stats.dirichlet``: the Dirichlet distribution with concentrations
``alpha`` (``K`` of them), SciPy's signatures and layout: ``x`` is ``(K,)`` or ``(K, N)`` (the
components on the FIRST axis, ``N`` points), or has ``K - 1`` components (the last one is then
``1 - sum``). Differentiable in ``x`` and ``alpha``."""
from __future__ import annotations

from ...ops import reduce as _reduce_ops
from ...ops import unary as _unary_ops
from .. import special as _special
from . import _common

__all__ = ["logpdf", "pdf", "mean", "var", "entropy"]


def _check(x, alpha):
    alpha = _common.tensor(alpha)
    if alpha.ndim != 1:
        raise ValueError("dirichlet: alpha must be a 1-D array of concentrations")
    x = _common.tensor(x)
    k = alpha.shape[0]
    if x.shape[0] == k - 1:  # the last component implied
        from ...ops.shape import cat

        last = 1.0 - _reduce_ops.sum(x, dim=0, keepdim=True)
        x = cat([x, last], 0)
    elif x.shape[0] != k:
        raise ValueError(f"dirichlet: x has {x.shape[0]} components on its first axis, alpha "
                         f"has {k}")
    return x, alpha


def _lnB(alpha):
    return _reduce_ops.sum(_special.gammaln(alpha)) - _special.gammaln(_reduce_ops.sum(alpha))


def logpdf(x, alpha):
    """``sum_i (alpha_i - 1) log x_i - log B(alpha)``,
    ``log B(alpha) = sum_i gammaln(alpha_i) - gammaln(sum_i alpha_i)``."""
    x, alpha = _check(x, alpha)
    am1 = alpha - 1.0
    if x.ndim == 2:
        am1 = am1.unsqueeze(1)
    return _reduce_ops.sum(_special.xlogy(am1, x), dim=0) - _lnB(alpha)


def pdf(x, alpha):
    """``exp(logpdf)``."""
    return _unary_ops.exp(logpdf(x, alpha))


@_common.params_only
def mean(alpha):
    """``alpha / sum(alpha)``."""
    alpha = _common.tensor(alpha)
    return alpha / _reduce_ops.sum(alpha)


@_common.params_only
def var(alpha):
    """``a_i (a0 - a_i) / (a0^2 (a0 + 1))`` with ``a0 = sum(alpha)``."""
    alpha = _common.tensor(alpha)
    a0 = _reduce_ops.sum(alpha)
    return alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1.0))


@_common.params_only
def entropy(alpha):
    """``log B(alpha) + (a0 - K) digamma(a0) - sum_i (alpha_i - 1) digamma(alpha_i)``."""
    alpha = _common.tensor(alpha)
    a0 = _reduce_ops.sum(alpha)
    k = alpha.shape[0]
    return (_lnB(alpha) + (a0 - k) * _special.digamma(a0)
            - _reduce_ops.sum((alpha - 1.0) * _special.digamma(alpha)))


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
