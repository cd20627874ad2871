"""The generalized Pareto distribution."""
from __future__ import annotations

import math

from .. import numpy as _jnp
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, rng

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    r"""The generalized Pareto distribution with ``loc`` :math:`\mu`, ``scale`` :math:`\sigma`
    and ``concentration`` :math:`\xi`; with :math:`z = (x - \mu)/\sigma`,

    .. math:: \log p(x) = -(1 + 1/\xi)\log(1 + \xi z) - \log\sigma \quad (\xi \ne 0),
              \qquad -z - \log\sigma \quad (\xi = 0),

    on :math:`x \ge \mu` (and :math:`x \le \mu - \sigma/\xi` when :math:`\xi < 0`); survival
    function :math:`(1 + \xi z)^{-1/\xi}` (:math:`e^{-z}` at :math:`\xi = 0`). Special cases:
    Exponential (:math:`\mu = \xi = 0`), Pareto (:math:`\xi > 0, \mu = \sigma/\xi`), Uniform
    (:math:`\xi = -1`). ``rsample`` is the inverse CDF of a uniform draw (reparameterised).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance)

    def _safe_concentration(self):
        """:math:`\\xi`, with 1 where :math:`\\xi = 0` (so both branches stay finite)."""
        c = self.concentration
        return _jnp.where(c == 0, 1.0, c)

    def _z(self, value):
        return (value - self.loc) / self.scale

    def rsample(self, sample_shape=()):
        """``icdf`` of a uniform draw."""
        shape = self._extended_shape(sample_shape)
        u = from_numpy(rng().random(shape), self.loc)
        return self.icdf(u)

    def log_survival_function(self, value):
        r""":math:`\log P(X > x) = -\log(1 + \xi z)/\xi` (:math:`-z` at :math:`\xi = 0`)."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        c = self._safe_concentration()
        return _jnp.where(self.concentration == 0, -z, -(c * z).log1p() / c)

    def log_prob(self, value):
        """The log density (see the class); :math:`-\\infty` outside the support."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        c = self._safe_concentration()
        inside = (z >= 0) & ((self.concentration >= 0) | (c * z >= -1))
        log_scale = self.scale.log()
        lp = _jnp.where(self.concentration == 0, -z, -(1 + c.reciprocal()) * (c * z).log1p())
        return _jnp.where(inside, lp - log_scale, -math.inf)

    def log_cdf(self, value):
        r""":math:`\log(1 - S(x))`, computed as :math:`\log(-\mathrm{expm1}(\log S(x)))`."""
        return (-self.log_survival_function(value).expm1()).log()

    def cdf(self, value):
        r""":math:`1 - S(x)`."""
        return -self.log_survival_function(value).expm1()

    def icdf(self, value):
        r""":math:`\mu + \sigma\,\mathrm{expm1}(-\xi\log(1-q))/\xi` (:math:`-\log(1-q)` at
        :math:`\xi = 0`)."""
        c = self._safe_concentration()
        log1m = (-value).log1p()
        z = _jnp.where(self.concentration == 0, -log1m, (-c * log1m).expm1() / c)
        return self.loc + self.scale * z

    @property
    def mean(self):
        r""":math:`\mu + \sigma/(1 - \xi)` for :math:`\xi < 1`, else NaN (as PyTorch)."""
        c = self.concentration
        return _jnp.where(c < 1, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        r""":math:`\sigma^2/((1-\xi)^2(1-2\xi))` for :math:`\xi < 1/2`, else NaN (as PyTorch)."""
        c = self.concentration
        return _jnp.where(c < 0.5, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)), math.nan)

    @property
    def mode(self):
        r""":math:`\mu`."""
        return self.loc

    def entropy(self):
        r""":math:`\log\sigma + \xi + 1`."""
        return self.scale.log() + self.concentration + 1

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        r""":math:`[\mu, \infty)` for :math:`\xi \ge 0`, :math:`[\mu, \mu - \sigma/\xi]` for
        :math:`\xi < 0`."""
        upper = _jnp.where(self.concentration < 0,
                           self.loc - self.scale / self._safe_concentration(), math.inf)
        return constraints.interval(self.loc, upper)
