r"""Closed-form KL divergences involving the transformed distributions (TransformedDistribution,
HalfNormal, Gumbel, Pareto) and the continuous Bernoulli, registered with ``register_kl``; a pair
whose supports do not nest gives :math:`\infty`."""
from __future__ import annotations

import math

from ..ops import binary
from ..scipy import special
from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .kl import infinite_like, kl_divergence, register_kl
from .kl_cross import (exponential_cross_entropy, gamma_cross_entropy, infinite_kl,
                       normal_cross_entropy)
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import euler, sum_rightmost

__all__ = []


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """The base distributions' KL (one bijection applied to both leaves KL unchanged), summed
    over the event dims the transforms add."""
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "transforms is not implemented")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different event "
                                  "shapes is not implemented")
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    r""":math:`\tfrac12(r - 1 - \log r)`, :math:`r = \sigma_p^2/\sigma_q^2` (the KL of the
    normals folded)."""
    ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (ratio - 1 - ratio.log())


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    r""":math:`\log\frac{\beta_q}{\beta_p} + \frac{\mu_p-\mu_q}{\beta_q}
    + \gamma(\frac{\beta_p}{\beta_q} - 1) + e^{(\mu_q-\mu_p)/\beta_q}\Gamma(1+\beta_p/\beta_q)
    - 1`."""
    ratio = p.scale / q.scale
    d = (p.loc - q.loc) / q.scale
    return (-ratio.log() + d + euler * (ratio - 1)
            + (special.gammaln(1 + ratio) - d).exp() - 1)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    r""":math:`\alpha_q\log\frac{x_p}{x_q} + \log\frac{\alpha_p}{\alpha_q}
    + \frac{\alpha_q}{\alpha_p} - 1` where :math:`x_p \ge x_q`, else :math:`\infty`."""
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return binary.where(p.scale < q.scale, math.inf, result)


def _gumbel_cross_entropy(mean, mean_exp_neg, q):
    r""":math:`-\mathbb{E}_p[\log q(X)]` for Gumbel :math:`q`:
    :math:`\log\beta + (\mathbb{E}X - \mu)/\beta + \mathbb{E}e^{-(X-\mu)/\beta}`, from
    :math:`\mathbb{E}X` and ``mean_exp_neg`` :math:`= \mathbb{E}e^{-X/\beta}`."""
    return q.scale.log() + (mean - q.loc) / q.scale + (q.loc / q.scale).exp() * mean_exp_neg


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    r""":math:`-H(p)` plus the Gumbel cross entropy, with
    :math:`\mathbb{E}e^{-X/\beta} = e^{-\mu/\beta + \sigma^2/2\beta^2}`."""
    mgf = (-p.loc / q.scale + 0.5 * (p.scale / q.scale).pow(2)).exp()
    return -p.entropy() + _gumbel_cross_entropy(p.loc, mgf, q)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    r""":math:`-H(p)` plus the Gumbel cross entropy, with
    :math:`\mathbb{E}e^{-X/\beta} = \lambda/(\lambda + 1/\beta)`."""
    mgf = p.rate / (p.rate + q.scale.reciprocal())
    return -p.entropy() + _gumbel_cross_entropy(p.rate.reciprocal(), mgf, q)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    r""":math:`-H(p)` plus the Gumbel cross entropy, with
    :math:`\mathbb{E}e^{-X/\beta} = (1 + 1/(\beta r))^{-\alpha}`."""
    mgf = (-p.concentration * (1 / (q.scale * p.rate)).log1p()).exp()
    return -p.entropy() + _gumbel_cross_entropy(p.mean, mgf, q)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    r""":math:`-H(p)` plus the Gumbel cross entropy, with
    :math:`\mathbb{E}e^{-X/\beta} = \beta(e^{-a/\beta} - e^{-b/\beta})/(b-a)`."""
    mgf = q.scale * ((-p.low / q.scale).exp() - (-p.high / q.scale).exp()) / (p.high - p.low)
    return -p.entropy() + _gumbel_cross_entropy(p.mean, mgf, q)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    r""":math:`-H(p)` plus the normal cross entropy, with :math:`\mathbb{E}X = \mu + \gamma\beta`,
    :math:`\mathrm{Var}X = \pi^2\beta^2/6`."""
    mean = p.loc + euler * p.scale
    second = (math.pi * p.scale).pow(2) / 6 + mean.pow(2)
    return -p.entropy() + normal_cross_entropy(mean, second, q)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    r""":math:`-H(p)` plus the exponential cross entropy (:math:`\infty` where
    :math:`\alpha \le 1`: the mean diverges)."""
    mean = p.alpha * p.scale / (p.alpha - 1)
    result = -p.entropy() + exponential_cross_entropy(mean, q)
    return binary.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    r""":math:`-H(p)` plus the gamma cross entropy, with
    :math:`\mathbb{E}\log X = \log x_m + 1/\alpha` (:math:`\infty` where :math:`\alpha \le 1`)."""
    mean = p.alpha * p.scale / (p.alpha - 1)
    result = -p.entropy() + gamma_cross_entropy(mean, p.scale.log() + p.alpha.reciprocal(), q)
    return binary.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    r""":math:`-H(p)` plus the normal cross entropy, with
    :math:`\mathbb{E}X^2 = \alpha x_m^2/(\alpha-2)` (:math:`\infty` where :math:`\alpha \le 2`)."""
    mean = p.alpha * p.scale / (p.alpha - 1)
    second = p.alpha * p.scale.pow(2) / (p.alpha - 2)
    result = -p.entropy() + normal_cross_entropy(mean, second, q)
    return binary.where(p.alpha <= 2, math.inf, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    r""":math:`-H(p) - \log\alpha - \alpha\log x_m + (\alpha+1)\mathbb{E}\log X` where
    :math:`a \ge x_m`, else :math:`\infty`."""
    mean_log = (special.xlogy(p.high, p.high) - special.xlogy(p.low, p.low)) / (
        p.high - p.low) - 1
    result = (-p.entropy() - q.alpha.log() - q.alpha * q.scale.log()
              + (q.alpha + 1) * mean_log)
    return binary.where(p.low < q.scale, math.inf, result)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    r""":math:`\mathbb{E}_p[X](\ell_p - \ell_q) + \log C_p + \log(1-\lambda_p) - \log C_q
    - \log(1-\lambda_q)`."""
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + (-p.probs).log1p()
            - q._cont_bern_log_norm() - (-q.probs).log1p())


def _cb_cross_entropy(mean, q):
    r""":math:`-\mathbb{E}_p[\log q(X)] = -\mathbb{E}X\,\ell - \log(1-\lambda) - \log C(\lambda)`
    for continuous Bernoulli :math:`q`."""
    return -mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p, q):
    """:math:`-H(p)` plus the continuous Bernoulli cross entropy."""
    return -p.entropy() + _cb_cross_entropy(p.mean, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p, q):
    """:math:`-H(p)` plus the continuous Bernoulli cross entropy inside :math:`[0, 1]`, else
    :math:`\\infty`."""
    result = -p.entropy() + _cb_cross_entropy(p.mean, q)
    return binary.where((p.low < 0) | (p.high > 1), math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p, q):
    """:math:`-H(p)` plus the exponential cross entropy."""
    return -p.entropy() + exponential_cross_entropy(p.mean, q)


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p, q):
    """:math:`-H(p)` plus the normal cross entropy."""
    second = p.variance + p.mean.pow(2)
    return -p.entropy() + normal_cross_entropy(p.mean, second, q)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p, q):
    """:math:`-H(p) + \\log(b-a)` where :math:`[0,1] \\subseteq [a,b]`, else :math:`\\infty`."""
    result = -p.entropy() + (q.high - q.low).log()
    return binary.where((q.low > 0) | (q.high < 1), math.inf, result)


def _infinite_like_probs(p, q):
    """:math:`\\infty`: the support of p is not inside that of q."""
    return infinite_like(p.probs)


register_kl(ContinuousBernoulli, Pareto)(_infinite_like_probs)
for _p, _attr, _qs in ((Normal, "loc", (ContinuousBernoulli, Pareto)),
                       (Laplace, "loc", (ContinuousBernoulli, Pareto)),
                       (Exponential, "rate", (ContinuousBernoulli, Pareto)),
                       (Gamma, "concentration", (ContinuousBernoulli, Pareto)),
                       (Beta, "concentration0", (Pareto,)),
                       (Gumbel, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto,
                                        Uniform)),
                       (Pareto, "scale", (Beta, ContinuousBernoulli, Uniform))):
    for _q in _qs:
        register_kl(_p, _q)(infinite_kl(_attr))
