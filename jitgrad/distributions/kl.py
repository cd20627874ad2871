"""Kullback-Leibler divergences: ``kl_divergence(p, q)``, ``register_kl`` and the closed forms
between two distributions of one family (those across families are in ``kl_cross.py``)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..autograd.api import grad
from ..graph.grad_mode import enable_grad
from ..ops import binary, creation
from ..scipy import special
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, tril_solve
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform
from .utils import softplus, sum_rightmost

__all__ = ["kl_divergence", "register_kl", "infinite_like"]

_KL_REGISTRY = {}  # (type_p, type_q) -> function
_KL_MEMOIZE = {}   # (type_p, type_q) -> the function dispatch chose


def register_kl(type_p, type_q):
    """Decorator registering a pairwise function as ``kl_divergence(p, q)`` for ``p`` an instance
    of ``type_p`` and ``q`` of ``type_q``::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            ...

    Lookup picks the most specific registered pair by the classes' method resolution order
    (first in ``p``'s, then in ``q``'s); when two pairs are each more specific in one argument a
    ``RuntimeWarning`` names the ambiguity (register the exact pair to settle it).
    """
    for t, name in ((type_p, "type_p"), (type_q, "type_q")):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"register_kl: expected {name} to be a subclass of Distribution, "
                            f"got {t!r}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    by_p = min(matches, key=lambda m: (mro_p.index(m[0]), mro_q.index(m[1])))
    by_q = min(matches, key=lambda m: (mro_q.index(m[1]), mro_p.index(m[0])))
    if _KL_REGISTRY[by_p] is not _KL_REGISTRY[by_q]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({by_p[0].__name__}, {by_q[1].__name__})", RuntimeWarning)
    return _KL_REGISTRY[by_p]


def kl_divergence(p, q):
    r"""The Kullback-Leibler divergence
    :math:`KL(p\,\|\,q) = \int p(x)\log\frac{p(x)}{q(x)}\,dx`, one per batch element, from the
    closed form registered for the pair of types (see ``register_kl``).

    Raises
    ------
    NotImplementedError
        if no form is registered for the two types.
    """
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


def infinite_like(tensor):
    """A tensor of ``inf`` of ``tensor``'s shape and dtype (KL between distributions whose
    supports do not nest)."""
    return creation.full(tuple(tensor.shape), math.inf, dtype=tensor.dtype)


# same family -------------------------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    r""":math:`p\log\frac pq + (1-p)\log\frac{1-p}{1-q}`, with :math:`0\log0 = 0`."""
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = binary.where(q.probs == 0, math.inf, t1)
    t1 = binary.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = binary.where(q.probs == 1, math.inf, t2)
    t2 = binary.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    r""":math:`\log\frac{B(a_q,b_q)}{B(a_p,b_p)} + (a_p-a_q)\psi(a_p) + (b_p-b_q)\psi(b_p)
    + (a_q+b_q-a_p-b_p)\psi(a_p+b_p)`."""
    ap, bp, aq, bq = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    return (special.betaln(aq, bq) - special.betaln(ap, bp) + (ap - aq) * special.digamma(ap)
            + (bp - bq) * special.digamma(bp) + (aq + bq - ap - bp) * special.digamma(ap + bp))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    r""":math:`n\,(p\log\frac pq + (1-p)\log\frac{1-p}{1-q})` for equal counts, :math:`\infty`
    where :math:`n_p > n_q` (:math:`n_p < n_q` is not implemented, as in PyTorch)."""
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return binary.where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    r""":math:`\sum_k p_k(\log p_k - \log q_k)` (:math:`\infty` where :math:`q_k = 0 < p_k`)."""
    t = p.probs * (p.logits - q.logits)
    t = binary.where(q.probs == 0, math.inf, t)
    t = binary.where(p.probs == 0, 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    """The KL of the underlying categorical distributions."""
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    r""":math:`\log\frac{(\gamma_p+\gamma_q)^2 + (x_p-x_q)^2}{4\gamma_p\gamma_q}`
    (Chyzak & Nielsen, 2019)."""
    num = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (num / (4 * p.scale * q.scale)).log()


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    r""":math:`\log\Gamma(\alpha_0) - \log\Gamma(\beta_0) - \sum_k(\log\Gamma(\alpha_k)
    - \log\Gamma(\beta_k)) + \sum_k(\alpha_k-\beta_k)(\psi(\alpha_k) - \psi(\alpha_0))`."""
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    t1 = special.gammaln(a0) - special.gammaln(b0)
    t2 = (special.gammaln(a) - special.gammaln(b)).sum(-1)
    t4 = special.digamma(a) - special.digamma(a0).unsqueeze(-1)
    return t1 - t2 + ((a - b) * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    r""":math:`\log\frac{\lambda_p}{\lambda_q} + \frac{\lambda_q}{\lambda_p} - 1`."""
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    r"""The Bregman divergence of the log normaliser :math:`F` between the natural parameters:
    :math:`F(\theta_q) - F(\theta_p) - \langle\theta_q-\theta_p, \nabla F(\theta_p)\rangle`
    (two members of one family only)."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    with enable_grad():
        p_params = [t if t.requires_grad else t.detach().requires_grad_()
                    for t in p._natural_params]
        lg_normal = p._log_normalizer(*p_params)
        gradients = grad(lg_normal.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q._natural_params) - lg_normal
    for pnp, qnp, g in zip(p_params, q._natural_params, gradients):
        result = result - sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    r""":math:`\alpha_q\log\frac{\beta_p}{\beta_q} + \log\frac{\Gamma(\alpha_q)}{\Gamma(\alpha_p)}
    + (\alpha_p-\alpha_q)\psi(\alpha_p) + (\beta_q-\beta_p)\frac{\alpha_p}{\beta_p}`."""
    ap, bp, aq, bq = p.concentration, p.rate, q.concentration, q.rate
    return (aq * (bp / bq).log() + special.gammaln(aq) - special.gammaln(ap)
            + (ap - aq) * special.digamma(ap) + (bq - bp) * (ap / bp))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    r""":math:`-H(p) - \frac{\log(1-q)}{p} - \ell_q` (with the mean :math:`1/p - 1`)."""
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    """The base distributions' KL summed over the reinterpreted dims."""
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different "
                                  "reinterpreted_batch_ndims is not implemented")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    r""":math:`\log\frac{b_q}{b_p} + \frac{|\mu_p-\mu_q|}{b_q}
    + \frac{b_p}{b_q}e^{-|\mu_p-\mu_q|/b_p} - 1`."""
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -ratio.log() + diff / q.scale + ratio * (-diff / p.scale).exp() - 1


def _mvn_parts(d):
    """``(loc, lower Cholesky factor of the covariance)`` of a (low-rank) multivariate
    normal."""
    if isinstance(d, MultivariateNormal):
        return d.loc, d._unbroadcasted_scale_tril
    return d.loc, d.scale_tril


@register_kl(MultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_mvn(p, q):
    r""":math:`\tfrac12(\mathrm{tr}(\Sigma_q^{-1}\Sigma_p) + (\mu_q-\mu_p)^T\Sigma_q^{-1}
    (\mu_q-\mu_p) - k + \log\frac{|\Sigma_q|}{|\Sigma_p|})`, with
    :math:`\mathrm{tr}(\Sigma_q^{-1}\Sigma_p) = \|L_q^{-1}L_p\|_F^2` (low-rank covariances go
    through their dense Cholesky factor)."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         f"shapes cannot be computed: {p.event_shape} and {q.event_shape}")
    loc_p, Lp = _mvn_parts(p)
    loc_q, Lq = _mvn_parts(q)
    n = p.event_shape[0]
    half_term1 = (Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    term2 = tril_solve(Lq, Lp).pow(2).sum((-2, -1))
    term3 = tril_solve(Lq, (loc_q - loc_p).unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)
    kl = half_term1 + 0.5 * (term2 + term3 - n)
    batch = np.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    return kl.expand(*batch) if batch else kl


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    r""":math:`\tfrac12\big(r + ((\mu_p-\mu_q)/\sigma_q)^2 - 1 - \log r\big)`,
    :math:`r = \sigma_p^2/\sigma_q^2`."""
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    r""":math:`\lambda_p\log\frac{\lambda_p}{\lambda_q} - (\lambda_p - \lambda_q)`."""
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    r""":math:`\log\frac{b_q-a_q}{b_p-a_p}` where :math:`[a_p,b_p] \subseteq [a_q,b_q]`, else
    :math:`\infty`."""
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return binary.where((q.low > p.low) | (q.high < p.high), math.inf, result)
