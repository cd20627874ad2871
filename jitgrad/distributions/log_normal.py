"""The log-normal distribution: the exponential of a normal variable."""
from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    r""":math:`Y = e^X` for :math:`X \sim \mathcal{N}(\mu, \sigma^2)` (``loc`` :math:`\mu`,
    ``scale`` :math:`\sigma`):

    .. math:: \log p(y) = -\frac{(\log y-\mu)^2}{2\sigma^2} - \log\sigma - \log y
              - \tfrac12\log 2\pi.

    ``rsample`` is :math:`\exp(\mu + \sigma\varepsilon)` (reparameterised).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """:math:`\\mu`, the mean of :math:`\\log Y`."""
        return self.base_dist.loc

    @property
    def scale(self):
        """:math:`\\sigma`, the standard deviation of :math:`\\log Y`."""
        return self.base_dist.scale

    @property
    def mean(self):
        r""":math:`e^{\mu + \sigma^2/2}`."""
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        r""":math:`e^{\mu - \sigma^2}`."""
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self):
        r""":math:`(e^{\sigma^2} - 1)\,e^{2\mu + \sigma^2}`."""
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        r""":math:`H[\mathcal{N}(\mu, \sigma^2)] + \mu`."""
        return self.base_dist.entropy() + self.loc
