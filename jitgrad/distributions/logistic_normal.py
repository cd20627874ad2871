"""The logistic-normal distribution on the simplex."""
from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    r"""The stick-breaking image of a normal vector: :math:`Y = \mathrm{SB}(X)` for
    :math:`X_i \sim \mathcal{N}(\mu_i, \sigma_i^2)` independent, a distribution on the
    :math:`K`-simplex for :math:`K-1` normal coordinates (``loc``/``scale`` of last size
    :math:`K-1`). ``rsample`` is reparameterised.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """The means of the normal coordinates."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        """The standard deviations of the normal coordinates."""
        return self.base_dist.base_dist.scale
