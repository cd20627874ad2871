"""The inverse-gamma distribution: the reciprocal of a gamma variable."""
from __future__ import annotations

import math

from .. import numpy as _jnp
from ..scipy import special
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    r""":math:`Y = 1/X` for :math:`X \sim \mathrm{Gamma}(\alpha, \beta)` (``concentration``
    :math:`\alpha`, ``rate`` :math:`\beta`):

    .. math:: \log p(y) = \alpha\log\beta - \log\Gamma(\alpha) - (\alpha+1)\log y - \beta/y.

    ``rsample`` is reparameterised through the gamma draw.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -_jnp.ones_like(base_dist.rate)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        """:math:`\\alpha`."""
        return self.base_dist.concentration

    @property
    def rate(self):
        """:math:`\\beta`."""
        return self.base_dist.rate

    @property
    def mean(self):
        r""":math:`\beta/(\alpha - 1)` for :math:`\alpha > 1`, else infinite."""
        a = self.concentration
        return _jnp.where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        r""":math:`\beta/(\alpha + 1)`."""
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        r""":math:`\beta^2/((\alpha-1)^2(\alpha-2))` for :math:`\alpha > 2`, else infinite."""
        a = self.concentration
        return _jnp.where(a > 2, self.rate.pow(2) / ((a - 1).pow(2) * (a - 2)), math.inf)

    def entropy(self):
        r""":math:`\alpha + \log\beta + \log\Gamma(\alpha) - (1 + \alpha)\psi(\alpha)`."""
        a = self.concentration
        return a + self.rate.log() + special.gammaln(a) - (1 + a) * special.digamma(a)
