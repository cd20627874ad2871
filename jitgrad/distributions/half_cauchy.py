"""The half-Cauchy distribution: the absolute value of a centred Cauchy variable."""
from __future__ import annotations

import math

from .. import numpy as _jnp
from .cauchy import Cauchy
from .half_normal import Folded

__all__ = ["HalfCauchy"]


class HalfCauchy(Folded):
    r""":math:`Y = |X|` for :math:`X \sim \mathrm{Cauchy}(0, \gamma)` (``scale`` :math:`\gamma`):
    :math:`p(y) = \frac{2}{\pi\gamma(1 + y^2/\gamma^2)}` for :math:`y \ge 0`,
    :math:`F(y) = \tfrac{2}{\pi}\arctan(y/\gamma)`, entropy :math:`\log(2\pi\gamma)`. Its mean
    and variance are infinite. ``rsample`` is reparameterised."""

    base_cls = Cauchy

    @property
    def mean(self):
        """Infinite."""
        return _jnp.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        """Infinite."""
        return _jnp.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)
