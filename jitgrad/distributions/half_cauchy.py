"""The half-Cauchy distribution: the absolute value of a centred Cauchy variable."""
from __future__ import annotations

import math

from .. import numpy as _jnp
from . import constraints
from .cauchy import Cauchy
from .half_normal import folded_log_prob
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    r""":math:`Y = |X|` for :math:`X \sim \mathrm{Cauchy}(0, \gamma)` (``scale`` :math:`\gamma`):
    :math:`p(y) = \frac{2}{\pi\gamma(1 + y^2/\gamma^2)}` for :math:`y \ge 0`. Its mean and
    variance are infinite. ``rsample`` is reparameterised."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """:math:`\\gamma`."""
        return self.base_dist.scale

    @property
    def mean(self):
        """Infinite."""
        return _jnp.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self):
        """0."""
        return _jnp.zeros_like(self.scale)

    @property
    def variance(self):
        """Infinite."""
        return _jnp.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    def log_prob(self, value):
        r""":math:`\log 2 + \log \mathrm{Cauchy}(y; 0, \gamma)` for :math:`y \ge 0`, else
        :math:`-\infty`."""
        return folded_log_prob(self, value)

    def cdf(self, value):
        r""":math:`\tfrac{2}{\pi}\arctan(y/\gamma)`."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        r""":math:`\gamma\tan(\pi q / 2)`."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        r""":math:`H[\mathrm{Cauchy}(0, \gamma)] - \log 2 = \log(2\pi\gamma)`."""
        return self.base_dist.entropy() - math.log(2)
