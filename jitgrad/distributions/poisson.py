"""The Poisson distribution."""
from __future__ import annotations

from ..scipy import special
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, from_numpy, host, rng

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    r"""The Poisson distribution with ``rate`` :math:`\lambda`:
    :math:`\log p(k) = k\log\lambda - \lambda - \log k!`."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Poisson, batch_shape, _instance)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rate = host(self.rate.expand(*shape), "Poisson.sample")
        return from_numpy(rng().poisson(rate), self.rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return special.xlogy(value, rate) - rate - special.gammaln(value + 1)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
