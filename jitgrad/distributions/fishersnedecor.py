"""The Fisher-Snedecor (F) distribution."""
from __future__ import annotations

import math

import numpy as np

from ..ops import binary
from ..scipy import special
from . import constraints
from .distribution import Distribution
from .gamma import standard_gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    r"""The F distribution with ``df1`` :math:`d_1` and ``df2`` :math:`d_2`: with
    :math:`a = d_1/2`, :math:`b = d_2/2`,

    .. math:: \log p(x) = a\log\tfrac{d_1}{d_2} + (a-1)\log x - (a+b)\log(1 + \tfrac{d_1}{d_2}x)
              - \log B(a, b).

    ``rsample`` is :math:`(X_1/d_1)/(X_2/d_2)` with :math:`X_i \sim \chi^2_{d_i}` (implicitly
    reparameterised).
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(tuple(self.df1.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(FisherSnedecor, batch_shape, _instance)

    @property
    def mean(self):
        """:math:`d_2/(d_2-2)` for :math:`d_2 > 2`, else nan."""
        return binary.where(self.df2 > 2, self.df2 / (self.df2 - 2), math.nan)

    @property
    def mode(self):
        """:math:`\\frac{d_1-2}{d_1}\\frac{d_2}{d_2+2}` for :math:`d_1 > 2`, else nan."""
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return binary.where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self):
        r""":math:`\frac{2d_2^2(d_1+d_2-2)}{d_1(d_2-2)^2(d_2-4)}` for :math:`d_2 > 4`, else
        nan."""
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return binary.where(d2 > 4, var, math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x1 = standard_gamma((0.5 * self.df1).expand(*shape)) / self.df1
        x2 = standard_gamma((0.5 * self.df2).expand(*shape)) / self.df2
        tiny = float(np.finfo(x1.dtype.np).tiny)
        return binary.clamp(x1 / x2, min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = 0.5 * self.df1, 0.5 * self.df2
        ratio = self.df1 / self.df2
        return (a * ratio.log() + special.xlogy(a - 1, value) - (a + b) * (ratio * value).log1p()
                - special.betaln(a, b))
