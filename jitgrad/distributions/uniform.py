"""The continuous uniform distribution."""
from __future__ import annotations

import math

from ..ops import binary, creation
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, draw

__all__ = ["Uniform"]


class Uniform(Distribution):
    r"""The uniform distribution on the half-open interval :math:`[a, b)` (``low``, ``high``):
    :math:`\log p(x) = -\log(b-a)` inside, :math:`-\infty` outside.

    ``rsample`` is :math:`a + (b-a)u`, :math:`u \sim U(0, 1)`.
    """

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)

    @property
    def arg_constraints(self):
        """``low < high`` elementwise."""
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Uniform, batch_shape, _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return creation.full(self._extended_shape(), math.nan, dtype=self.low.dtype)

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        u = draw(self._extended_shape(sample_shape), "uniform", self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (self.high > value)
        return binary.where(inside, 0.0, -math.inf) - (self.high - self.low).log()

    def cdf(self, value):
        r""":math:`\mathrm{clamp}((x-a)/(b-a), 0, 1)`."""
        if self._validate_args:
            self._validate_sample(value)
        return binary.clamp((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        r""":math:`a + q(b-a)`."""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        r""":math:`\log(b-a)`."""
        return (self.high - self.low).log()
