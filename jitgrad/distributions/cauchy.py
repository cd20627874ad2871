"""The Cauchy distribution."""
from __future__ import annotations

import math

from ..ops import creation
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    r"""The Cauchy (Lorentz) distribution with ``loc`` :math:`x_0` and ``scale`` :math:`\gamma`:
    :math:`\log p(x) = -\log\pi - \log\gamma - \log(1 + ((x-x_0)/\gamma)^2)`.

    ``rsample`` is :math:`x_0 + \gamma\tan(\pi(u - \tfrac12))`, :math:`u \sim U(0, 1)`; the mean
    is undefined (nan) and the variance infinite.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Cauchy, batch_shape, _instance)

    @property
    def mean(self):
        return creation.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return creation.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        eps = from_numpy(rng().standard_cauchy(self._extended_shape(sample_shape)), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        r""":math:`\tfrac12 + \arctan((x-x_0)/\gamma)/\pi`."""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        r""":math:`x_0 + \gamma\tan(\pi(q - \tfrac12))`."""
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        r""":math:`\log 4\pi\gamma`."""
        return math.log(4 * math.pi) + self.scale.log()
