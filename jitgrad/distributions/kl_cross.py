r"""Closed-form KL divergences between distributions of different families, registered with
``register_kl``; a pair whose supports do not nest (:math:`q` has no mass where :math:`p` has)
gives :math:`\infty`."""
from __future__ import annotations

import math

from ..ops import binary
from ..scipy import special
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .exponential import Exponential
from .gamma import Gamma
from .kl import infinite_like, register_kl
from .laplace import Laplace
from .normal import Normal
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler

__all__ = ["infinite_kl", "normal_cross_entropy", "gamma_cross_entropy",
           "exponential_cross_entropy"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def infinite_kl(loc_attr):
    """A KL that is :math:`\\infty` for every batch element (shaped like ``p.<loc_attr>``)."""
    def kl(p, q):
        return infinite_like(getattr(p, loc_attr))
    kl.__doc__ = ":math:`\\infty`: the support of p is not inside that of q."
    return kl


for _p, _attr, _qs in ((Normal, "loc", (Beta, Exponential, Gamma, Uniform)),
                       (Laplace, "loc", (Beta, Exponential, Gamma, Uniform)),
                       (Exponential, "rate", (Beta, Uniform)),
                       (Gamma, "concentration", (Beta, Uniform)),
                       (Poisson, "rate", (Bernoulli, Binomial))):
    for _q in _qs:
        register_kl(_p, _q)(infinite_kl(_attr))


def normal_cross_entropy(mean, second_moment, q):
    r""":math:`-\mathbb{E}_p[\log q(X)]` for normal :math:`q`, from :math:`\mathbb{E}X` and
    :math:`\mathbb{E}X^2`:
    :math:`\tfrac12\log 2\pi\sigma_q^2 + \mathbb{E}(X-\mu_q)^2/2\sigma_q^2`."""
    var_q = q.scale.pow(2)
    expected_sq = second_moment - 2 * q.loc * mean + q.loc.pow(2)
    return _HALF_LOG_2PI + q.scale.log() + 0.5 * expected_sq / var_q


def gamma_cross_entropy(mean, mean_log, q):
    r""":math:`-\mathbb{E}_p[\log q(X)]` for gamma :math:`q`:
    :math:`\log\Gamma(\alpha_q) - \alpha_q\log\beta_q - (\alpha_q-1)\mathbb{E}\log X
    + \beta_q\mathbb{E}X`."""
    a, b = q.concentration, q.rate
    return special.gammaln(a) - a * b.log() - (a - 1) * mean_log + b * mean


def exponential_cross_entropy(mean, q):
    r""":math:`-\mathbb{E}_p[\log q(X)] = -\log\lambda_q + \lambda_q\mathbb{E}X`."""
    return -q.rate.log() + q.rate * mean


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    r""":math:`-H(p) - (p\log\lambda - \lambda)` (:math:`\log x! = 0` on :math:`\{0, 1\}`)."""
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    """:math:`-H(p)` plus the exponential cross entropy at the beta mean."""
    return -p.entropy() + exponential_cross_entropy(p.mean, q)


def _beta_mean_log(p):
    return special.digamma(p.concentration1) - special.digamma(p.concentration1
                                                               + p.concentration0)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    r""":math:`-H(p)` plus the gamma cross entropy, with
    :math:`\mathbb{E}\log X = \psi(a) - \psi(a+b)`."""
    return -p.entropy() + gamma_cross_entropy(p.mean, _beta_mean_log(p), q)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    r""":math:`-H(p)` plus the normal cross entropy, with
    :math:`\mathbb{E}X^2 = \mathrm{Var}X + (\mathbb{E}X)^2`."""
    mean = p.mean
    return -p.entropy() + normal_cross_entropy(mean, p.variance + mean.pow(2), q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    r""":math:`-H(p) + \log(b-a)` where :math:`[0,1] \subseteq [a,b]`, else :math:`\infty`."""
    result = -p.entropy() + (q.high - q.low).log()
    return binary.where((q.low > 0) | (q.high < 1), math.inf, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    r""":math:`-H(p)` plus the gamma cross entropy, with
    :math:`\mathbb{E}\log X = -\gamma - \log\lambda` (:math:`\gamma` Euler's constant)."""
    mean_log = -euler - p.rate.log()
    return -p.entropy() + gamma_cross_entropy(p.rate.reciprocal(), mean_log, q)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    r""":math:`-H(p)` plus the normal cross entropy, with :math:`\mathbb{E}X^2 = 2/\lambda^2`."""
    return -p.entropy() + normal_cross_entropy(p.rate.reciprocal(), 2 * p.rate.pow(-2), q)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    """:math:`-H(p)` plus the exponential cross entropy at the gamma mean."""
    return -p.entropy() + exponential_cross_entropy(p.mean, q)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    r""":math:`-H(p)` plus the normal cross entropy, with
    :math:`\mathbb{E}X^2 = \alpha(\alpha+1)/\beta^2`."""
    a, b = p.concentration, p.rate
    return -p.entropy() + normal_cross_entropy(a / b, a * (a + 1) / b.pow(2), q)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    r""":math:`-H(p)` plus the normal cross entropy, with :math:`\mathbb{E}X^2 = \mu^2 + 2b^2`."""
    return -p.entropy() + normal_cross_entropy(p.loc, p.loc.pow(2) + 2 * p.scale.pow(2), q)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    r""":math:`-H(p) + \log 2b + \mathbb{E}|X-\mu_q|/b`, with the folded-normal mean
    :math:`\mathbb{E}|X-\mu_q| = \sigma\sqrt{2/\pi}\,e^{-d^2/2\sigma^2}
    + d\,\mathrm{erf}(d/\sigma\sqrt2)`, :math:`d = \mu_p-\mu_q`."""
    d = p.loc - q.loc
    folded = (p.scale * math.sqrt(2 / math.pi) * (-0.5 * (d / p.scale).pow(2)).exp()
              + d * special.erf(d / (p.scale * math.sqrt(2))))
    return -p.entropy() + (2 * q.scale).log() + folded / q.scale


def _uniform_mean_xlogx(low, high):
    r""":math:`\frac{1}{b-a}\int_a^b\log x\,dx = \frac{b\log b - a\log a}{b-a} - 1`."""
    return (special.xlogy(high, high) - special.xlogy(low, low)) / (high - low) - 1


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    r""":math:`-H(p) + \log B(\alpha,\beta) - (\alpha-1)\mathbb{E}\log X
    - (\beta-1)\mathbb{E}\log(1-X)` inside :math:`[0,1]`, else :math:`\infty`."""
    a, b = q.concentration1, q.concentration0
    mean_log = _uniform_mean_xlogx(p.low, p.high)
    mean_log1m = _uniform_mean_xlogx(1 - p.high, 1 - p.low)
    result = (-p.entropy() + special.betaln(a, b) - (a - 1) * mean_log
              - (b - 1) * mean_log1m)
    return binary.where((p.low < 0) | (p.high > 1), math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    r""":math:`-H(p)` plus the exponential cross entropy; :math:`\infty` where :math:`a < 0`."""
    result = -p.entropy() + exponential_cross_entropy(p.mean, q)
    return binary.where(p.low < 0, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    r""":math:`-H(p)` plus the gamma cross entropy; :math:`\infty` where :math:`a < 0`."""
    result = -p.entropy() + gamma_cross_entropy(p.mean, _uniform_mean_xlogx(p.low, p.high), q)
    return binary.where(p.low < 0, math.inf, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    r""":math:`-H(p)` plus the normal cross entropy, with
    :math:`\mathbb{E}X^2 = (a^2 + ab + b^2)/3`."""
    second = (p.low.pow(2) + p.low * p.high + p.high.pow(2)) / 3
    return -p.entropy() + normal_cross_entropy(p.mean, second, q)
