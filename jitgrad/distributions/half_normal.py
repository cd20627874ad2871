"""The half-normal distribution: the absolute value of a centred normal variable."""
from __future__ import annotations

import math

from .. import numpy as _jnp
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


def folded_log_prob(dist, value):
    r""":math:`\log 2 + \log p_X(y)` for :math:`y \ge 0`, :math:`-\infty` below: the density of
    :math:`|X|` for :math:`X` symmetric about 0 (``dist.base_dist``)."""
    if dist._validate_args:
        dist._validate_sample(value)
    log_prob = dist.base_dist.log_prob(value) + math.log(2)
    return _jnp.where(value >= 0, log_prob, -math.inf)


class HalfNormal(TransformedDistribution):
    r""":math:`Y = |X|` for :math:`X \sim \mathcal{N}(0, \sigma^2)` (``scale`` :math:`\sigma`):
    :math:`p(y) = \frac{\sqrt 2}{\sigma\sqrt\pi} e^{-y^2/(2\sigma^2)}` for :math:`y \ge 0`.
    ``rsample`` is :math:`\sigma|\varepsilon|` (reparameterised)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """:math:`\\sigma`."""
        return self.base_dist.scale

    @property
    def mean(self):
        r""":math:`\sigma\sqrt{2/\pi}`."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        """0."""
        return _jnp.zeros_like(self.scale)

    @property
    def variance(self):
        r""":math:`\sigma^2 (1 - 2/\pi)`."""
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        r""":math:`\log 2 + \log \mathcal{N}(y; 0, \sigma^2)` for :math:`y \ge 0`, else
        :math:`-\infty`."""
        return folded_log_prob(self, value)

    def cdf(self, value):
        r""":math:`2\Phi(y/\sigma) - 1`."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        r""":math:`\sigma\Phi^{-1}((q + 1)/2)`."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        r""":math:`H[\mathcal{N}(0, \sigma^2)] - \log 2`."""
        return self.base_dist.entropy() - math.log(2)
