"""The Gumbel (type-I extreme value) distribution."""
from __future__ import annotations

import math
import numbers

from .. import numpy as _jnp
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .transforms_base import finfo
from .uniform import Uniform
from .utils import broadcast_all, euler

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    r"""The Gumbel distribution with ``loc`` :math:`\mu` and ``scale`` :math:`\beta`:

    .. math:: \log p(x) = -z - e^{-z} - \log\beta, \qquad z = (x - \mu)/\beta,

    the law of :math:`\mu - \beta\log(-\log U)` for :math:`U \sim U(0, 1)` (the transforms
    that build it; ``rsample`` is reparameterised). CDF :math:`\exp(-e^{-z})`.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        fi = finfo(self.loc)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base_dist = Uniform(float(fi.tiny), 1 - float(fi.eps), validate_args=validate_args)
        else:
            base_dist = Uniform(_jnp.full_like(self.loc, float(fi.tiny)),
                                _jnp.full_like(self.loc, 1 - float(fi.eps)),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-1),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(*batch_shape)
        new.scale = self.scale.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        r""":math:`-z - e^{-z} - \log\beta`."""
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        r""":math:`\mu + \beta\gamma_E` (Euler's constant)."""
        return self.loc + self.scale * euler

    @property
    def mode(self):
        r""":math:`\mu`."""
        return self.loc

    @property
    def stddev(self):
        r""":math:`\pi\beta/\sqrt 6`."""
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        r""":math:`\pi^2\beta^2/6`."""
        return self.stddev.pow(2)

    def entropy(self):
        r""":math:`\log\beta + 1 + \gamma_E`."""
        return self.scale.log() + (1 + euler)
