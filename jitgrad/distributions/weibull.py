"""The two-parameter Weibull distribution."""
from __future__ import annotations

from .. import numpy as _jnp
from ..scipy import special
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    r"""The Weibull distribution with ``scale`` :math:`\lambda` and ``concentration``
    :math:`k`:

    .. math:: \log p(x) = \log\frac{k}{\lambda} + (k-1)\log\frac{x}{\lambda}
              - (x/\lambda)^k, \quad x > 0,

    the law of :math:`\lambda E^{1/k}` for :math:`E \sim \mathrm{Exponential}(1)` (the
    transforms that build it; ``rsample`` is reparameterised).
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(_jnp.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(*batch_shape)
        new.concentration = self.concentration.expand(*batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        r""":math:`\lambda\,\Gamma(1 + 1/k)`."""
        return self.scale * special.gammaln(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        r""":math:`\lambda((k-1)/k)^{1/k}` for :math:`k > 1`, else 0."""
        k = self.concentration
        return self.scale * ((k - 1) / k).clamp(min=0) ** self.concentration_reciprocal

    @property
    def variance(self):
        r""":math:`\lambda^2[\Gamma(1 + 2/k) - \Gamma(1 + 1/k)^2]`."""
        inv_k = self.concentration_reciprocal
        return self.scale.pow(2) * (special.gammaln(1 + 2 * inv_k).exp()
                                    - special.gammaln(1 + inv_k).exp().pow(2))

    def entropy(self):
        r""":math:`\gamma_E(1 - 1/k) + \log(\lambda/k) + 1`."""
        return (euler * (1 - self.concentration_reciprocal)
                + (self.scale / self.concentration).log() + 1)
