"""The continuous Bernoulli distribution (Loaiza-Ganem & Cunningham, 2019)."""
from __future__ import annotations

import math

from ..ops import binary, creation
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (BinaryProbsLogits, broadcast_all, clamp_probs, from_numpy, one_of_probs_logits,
                    rng, softplus)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(BinaryProbsLogits, ExponentialFamily):
    r"""The continuous Bernoulli distribution on :math:`[0, 1]` with ``probs`` :math:`\lambda`
    (or ``logits`` :math:`\ell`):

    .. math:: \log p(x) = x\log\lambda + (1-x)\log(1-\lambda) + \log C(\lambda), \qquad
              C(\lambda) = \frac{2\,\mathrm{artanh}(1-2\lambda)}{1-2\lambda}
              \;(C(\tfrac12) = 2).

    Inside ``lims`` (around :math:`\lambda = 1/2`, where the closed forms are 0/0) the
    normaliser, mean and variance are their Taylor expansions in :math:`\lambda - 1/2`.
    ``rsample`` is the inverse cdf of a uniform draw.
    """

    clamped = True
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        name, param = one_of_probs_logits("ContinuousBernoulli", probs, logits)
        param, = broadcast_all(param)
        if name == "probs" and validate_args is not False and self._validate_args \
                and not bool(constraints.unit_interval.check(param).all()):
            raise ValueError("ContinuousBernoulli: expected parameter probs to satisfy the "
                             f"constraint unit_interval, but found invalid values:\n{param}")
        if name == "probs":
            param = clamp_probs(param)
        setattr(self, name, param)
        self._param = param
        self._lims = lims
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        new._lims = self._lims
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """The probabilities with those inside ``lims`` moved to ``lims[0]``, so that the closed
        forms (selected away there) stay finite and so do their gradients."""
        return binary.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        r""":math:`\log C(\lambda) = \log|\log(1-\lambda) - \log\lambda| - \log|1-2\lambda|`;
        :math:`\log 2 + \tfrac43 x + \tfrac{104}{45}x^2`, :math:`x = (\lambda-\tfrac12)^2`,
        inside ``lims``."""
        cut = self._cut_probs()
        below = binary.where(cut <= 0.5, cut, 0.0)
        above = binary.where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - binary.where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return binary.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        r""":math:`\frac{\lambda}{2\lambda-1} + \frac{1}{2\,\mathrm{artanh}(1-2\lambda)}`."""
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return binary.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        r""":math:`\frac{\lambda(\lambda-1)}{(1-2\lambda)^2}
        + \frac{1}{(2\,\mathrm{artanh}(1-2\lambda))^2}`."""
        cut = self._cut_probs()
        var = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
               + 1.0 / ((-cut).log1p() - cut.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return binary.where(self._outside_unstable_region(), var, taylor)

    def rsample(self, sample_shape=()):
        u = from_numpy(rng().random(self._extended_shape(sample_shape)), self._param)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return value * logits - softplus(logits) + self._cont_bern_log_norm()

    def cdf(self, value):
        r""":math:`\frac{\lambda^x(1-\lambda)^{1-x} + \lambda - 1}{2\lambda - 1}` on
        :math:`[0, 1]` (:math:`x` inside ``lims``)."""
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = ((cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0)
                / (2.0 * cut - 1.0))
        unbounded = binary.where(self._outside_unstable_region(), cdfs, value)
        return binary.where(value <= 0.0, 0.0, binary.where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value):
        r""":math:`\frac{\log(1 - \lambda + u(2\lambda-1)) - \log(1-\lambda)}
        {\log\lambda - \log(1-\lambda)}` (:math:`u` inside ``lims``)."""
        cut = self._cut_probs()
        closed = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                  / (cut.log() - (-cut).log1p()))
        return binary.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        r""":math:`\mu(\log(1-\lambda) - \log\lambda) - \log C(\lambda) - \log(1-\lambda)`."""
        log_p0 = (-self.probs).log1p()
        log_p1 = self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        r""":math:`\log((e^x - 1)/x)`; :math:`x/2 + x^2/24 - x^4/2880` near 0."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = binary.where(outside, x, (self._lims[0] - 0.5) * creation.ones_like(x))
        log_norm = (cut.exp() - 1.0).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return binary.where(outside, log_norm, taylor)
