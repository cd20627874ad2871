"""The Laplace distribution."""
from __future__ import annotations

import math

import numpy as np

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["Laplace"]


class Laplace(Distribution):
    r"""The Laplace distribution with ``loc`` :math:`\mu` and ``scale`` :math:`b`:
    :math:`\log p(x) = -\log 2b - |x-\mu|/b`.

    ``rsample`` is :math:`\mu - b\,\mathrm{sign}(u)\log(1-|u|)`, :math:`u \sim U(-1, 1)`.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Laplace, batch_shape, _instance)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        tiny = np.finfo(self.loc.dtype.np).eps
        u = from_numpy(rng().uniform(tiny - 1.0, 1.0, self._extended_shape(sample_shape)),
                       self.loc)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        r""":math:`\tfrac12 - \tfrac12\,\mathrm{sign}(x-\mu)\,(e^{-|x-\mu|/b} - 1)`."""
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        r""":math:`\mu - b\,\mathrm{sign}(q-\tfrac12)\log(1 - 2|q-\tfrac12|)`."""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        r""":math:`1 + \log 2b`."""
        return 1 + (2 * self.scale).log()
