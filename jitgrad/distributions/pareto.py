"""The Pareto (type I) distribution."""
from __future__ import annotations

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    r"""The Pareto distribution with ``scale`` :math:`x_m` and ``alpha`` :math:`\alpha`:

    .. math:: \log p(x) = \log\alpha + \alpha\log x_m - (\alpha + 1)\log x,
              \quad x \ge x_m,

    the law of :math:`x_m e^{E}` for :math:`E \sim \mathrm{Exponential}(\alpha)` (``rsample``
    is reparameterised).
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(*batch_shape)
        new.alpha = self.alpha.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        r""":math:`\alpha x_m / (\alpha - 1)` (infinite for :math:`\alpha \le 1`)."""
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        r""":math:`x_m`."""
        return self.scale

    @property
    def variance(self):
        r""":math:`x_m^2\alpha / ((\alpha-1)^2(\alpha-2))` (infinite for
        :math:`\alpha \le 2`)."""
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """:math:`[x_m, \\infty)`."""
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        r""":math:`\log(x_m/\alpha) + 1 + 1/\alpha`."""
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
