"""The beta distribution."""
from __future__ import annotations

from ..ops import binary
from ..scipy import special
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    r"""The beta distribution with ``concentration1`` :math:`a` and ``concentration0``
    :math:`b`:

    .. math:: \log p(x) = (a-1)\log x + (b-1)\log(1-x) - \log B(a, b).

    ``rsample`` is :math:`X/(X+Y)` with :math:`X \sim \mathrm{Gamma}(a)`,
    :math:`Y \sim \mathrm{Gamma}(b)` drawn by implicit reparameterisation.
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(tuple(self.concentration1.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Beta, batch_shape, _instance)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        r""":math:`(a-1)/(a+b-2)` with :math:`a-1` and :math:`b-1` clamped at 0; where both
        :math:`a, b < 1` the end of the larger (as the Dirichlet mode)."""
        a, b = self.concentration1, self.concentration0
        am1, bm1 = binary.clamp(a - 1, min=0.0), binary.clamp(b - 1, min=0.0)
        mode = am1 / (am1 + bm1)
        return binary.where((a < 1) & (b < 1), (a >= b).to(a.dtype), mode)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration1.expand(*shape))
        y = standard_gamma(self.concentration0.expand(*shape))
        return x / (x + y)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (special.xlogy(a - 1, value) + special.xlog1py(b - 1, -value)
                - special.betaln(a, b))

    def entropy(self):
        r""":math:`\log B(a,b) - (a-1)\psi(a) - (b-1)\psi(b) + (a+b-2)\psi(a+b)`."""
        a, b = self.concentration1, self.concentration0
        return (special.betaln(a, b) - (a - 1) * special.digamma(a)
                - (b - 1) * special.digamma(b) + (a + b - 2) * special.digamma(a + b))

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return special.gammaln(x) + special.gammaln(y) - special.gammaln(x + y)
