"""The Kumaraswamy distribution on (0, 1)."""
from __future__ import annotations

import math

from .. import numpy as _jnp
from ..scipy import special
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    r""":math:`E[X^n] = b\,B(1 + n/a, b)` for :math:`X \sim \mathrm{Kumaraswamy}(a, b)`."""
    arg1 = 1 + n / a
    log_value = special.gammaln(arg1) + special.gammaln(b) - special.gammaln(arg1 + b)
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    r"""The Kumaraswamy distribution with ``concentration1`` :math:`a` and ``concentration0``
    :math:`b`:

    .. math:: p(x) = a b x^{a-1}(1 - x^a)^{b-1}, \quad 0 < x < 1,

    the law of :math:`(1 - U^{1/b})^{1/a}` for :math:`U \sim U(0, 1)` (the transforms that
    build it; ``rsample`` is reparameterised).
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(_jnp.zeros_like(self.concentration0),
                            _jnp.ones_like(self.concentration0), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(*batch_shape)
        new.concentration0 = self.concentration0.expand(*batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        r""":math:`b\,B(1 + 1/a, b)`."""
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        r""":math:`((a-1)/(ab-1))^{1/a}` for :math:`a, b \ge 1` (not both 1), else NaN.

        (PyTorch 2.13 returns NaN for every :math:`b > 1`: its formula takes
        :math:`\log(1 - b)`; this is the textbook mode.)"""
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        return _jnp.where((a < 1) | (b < 1), math.nan, log_mode.exp())

    @property
    def variance(self):
        r""":math:`E[X^2] - E[X]^2`."""
        return (_moments(self.concentration1, self.concentration0, 2)
                - self.mean.pow(2))

    def entropy(self):
        r""":math:`(1 - 1/b) + (1 - 1/a) H_b - \log(ab)`, :math:`H_b = \psi(b+1) + \gamma_E`
        the harmonic number."""
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        h0 = special.digamma(b + 1) + euler
        return t0 + t1 * h0 - a.log() - b.log()
