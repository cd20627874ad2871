"""The normal (Gaussian) distribution."""
from __future__ import annotations

import math

from ..scipy import special
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, draw

__all__ = ["Normal"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(ExponentialFamily):
    r"""The normal distribution :math:`\mathcal{N}(\mu, \sigma^2)` with ``loc`` :math:`\mu` and
    ``scale`` :math:`\sigma`:

    .. math:: \log p(x) = -\frac{(x-\mu)^2}{2\sigma^2} - \log\sigma - \tfrac12\log 2\pi.

    ``rsample`` is :math:`\mu + \sigma\varepsilon`, :math:`\varepsilon \sim \mathcal{N}(0, 1)`.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Normal, batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = draw(shape, "normal", self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - _LOG_SQRT_2PI

    def cdf(self, value):
        r""":math:`\tfrac12\,(1 + \mathrm{erf}((x-\mu)/(\sigma\sqrt2)))`."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + special.erf((value - self.loc) * self.scale.reciprocal()
                                      / math.sqrt(2)))

    def icdf(self, value):
        r""":math:`\mu + \sigma\sqrt2\,\mathrm{erf}^{-1}(2q-1)`."""
        return self.loc + self.scale * special.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        r""":math:`\tfrac12 + \tfrac12\log 2\pi + \log\sigma`."""
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
