"""The von Mises distribution on the circle."""
from __future__ import annotations

import math

import numpy as np

from ..scipy import special
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, host, rng

__all__ = ["VonMises"]


class VonMises(Distribution):
    r"""The von Mises (circular normal) distribution with ``loc`` :math:`\mu` and
    ``concentration`` :math:`\kappa`:

    .. math:: \log p(x) = \kappa\cos(x-\mu) - \log 2\pi - \log I_0(\kappa),

    computed with the scaled Bessel function :math:`\log I_0(\kappa) = \log(e^{-\kappa}I_0(\kappa))
    + \kappa`. ``sample`` returns angles in :math:`[-\pi, \pi)` (not reparameterised).
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(VonMises, batch_shape, _instance)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return (k * (value - self.loc).cos() - math.log(2 * math.pi)
                - (special.i0e(k).log() + k))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        mu = host(self.loc.expand(*shape), "VonMises.sample")
        kappa = host(self.concentration.expand(*shape), "VonMises.sample")
        x = rng().vonmises(0.0, kappa) + mu
        return from_numpy(np.mod(x + np.pi, 2 * np.pi) - np.pi, self.loc)

    @property
    def mean(self):
        """The circular mean :math:`\\mu`."""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        r"""The circular variance :math:`1 - I_1(\kappa)/I_0(\kappa)`."""
        k = self.concentration
        return 1 - special.i1e(k) / special.i0e(k)

    def entropy(self):
        r""":math:`\log 2\pi I_0(\kappa) - \kappa I_1(\kappa)/I_0(\kappa)`."""
        k = self.concentration
        ratio = special.i1e(k) / special.i0e(k)
        return math.log(2 * math.pi) + special.i0e(k).log() + k - k * ratio
