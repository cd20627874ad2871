"""The half-normal distribution: the absolute value of a centred normal variable."""
from __future__ import annotations

import math

from .. import numpy as _jnp
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class Folded(TransformedDistribution):
    r"""The law of :math:`Y = |X|` for :math:`X` from ``base_cls(0, scale)``, symmetric about 0
    (``HalfNormal``, ``HalfCauchy``): :math:`\log p(y) = \log 2 + \log p_X(y)` for
    :math:`y \ge 0`, :math:`F(y) = 2F_X(y) - 1`, :math:`H = H_X - \log 2`, mode 0. ``rsample``
    is reparameterised."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_cls = None  # the centred, symmetric distribution folded

    def __init__(self, scale, validate_args=None):
        base_dist = self.base_cls(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """The base distribution's scale."""
        return self.base_dist.scale

    @property
    def mode(self):
        """0."""
        return _jnp.zeros_like(self.scale)

    def log_prob(self, value):
        r""":math:`\log 2 + \log p_X(y)` for :math:`y \ge 0`, :math:`-\infty` below."""
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _jnp.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        r""":math:`2F_X(y) - 1`."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        r""":math:`F_X^{-1}((q + 1)/2)`."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        r""":math:`H_X - \log 2`."""
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(Folded):
    r""":math:`Y = |X|` for :math:`X \sim \mathcal{N}(0, \sigma^2)` (``scale`` :math:`\sigma`):
    :math:`p(y) = \frac{\sqrt 2}{\sigma\sqrt\pi} e^{-y^2/(2\sigma^2)}` for :math:`y \ge 0`,
    :math:`F(y) = 2\Phi(y/\sigma) - 1`. ``rsample`` is :math:`\sigma|\varepsilon|`
    (reparameterised)."""

    base_cls = Normal

    @property
    def mean(self):
        r""":math:`\sigma\sqrt{2/\pi}`."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        r""":math:`\sigma^2 (1 - 2/\pi)`."""
        return self.scale.pow(2) * (1 - 2 / math.pi)
