"""The exponential distribution."""
from __future__ import annotations

from ..ops import creation
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    r"""The exponential distribution with ``rate`` :math:`\lambda`:
    :math:`\log p(x) = \log\lambda - \lambda x` on :math:`x \ge 0`.

    ``rsample`` is :math:`E/\lambda` with :math:`E` a standard exponential draw.
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Exponential, batch_shape, _instance)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return creation.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        e = from_numpy(rng().standard_exponential(self._extended_shape(sample_shape)), self.rate)
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        r""":math:`1 - e^{-\lambda x}`."""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        r""":math:`-\log(1-q)/\lambda`."""
        return -(-value).log1p() / self.rate

    def entropy(self):
        r""":math:`1 - \log\lambda`."""
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
