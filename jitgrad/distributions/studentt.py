"""Student's t distribution."""
from __future__ import annotations

import math

from ..ops import binary
from ..scipy import special
from . import constraints
from .distribution import Distribution
from .gamma import standard_gamma
from .utils import broadcast_all, from_numpy, rng

__all__ = ["StudentT"]


class StudentT(Distribution):
    r"""Student's t distribution with ``df`` :math:`\nu`, ``loc`` :math:`\mu` and ``scale``
    :math:`\sigma`: with :math:`y = (x-\mu)/\sigma`,

    .. math:: \log p(x) = -\tfrac{\nu+1}{2}\log(1 + y^2/\nu) - \log\sigma - \tfrac12\log\nu\pi
              - \log\Gamma(\tfrac\nu2) + \log\Gamma(\tfrac{\nu+1}2).

    ``rsample`` is :math:`\mu + \sigma Z/\sqrt{V/\nu}` with :math:`Z \sim \mathcal{N}(0,1)` and
    :math:`V \sim \chi^2_\nu` (implicitly reparameterised in :math:`\nu`).
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(StudentT, batch_shape, _instance)

    @property
    def mean(self):
        """:math:`\\mu` where :math:`\\nu > 1`, else nan."""
        return binary.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        r""":math:`\sigma^2\nu/(\nu-2)` for :math:`\nu>2`, :math:`\infty` for
        :math:`1<\nu\le2`, nan for :math:`\nu\le1`."""
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        var = binary.where(self.df > 2, finite, math.inf)
        return binary.where(self.df > 1, var, math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        z = from_numpy(rng().standard_normal(shape), self.df)
        chi2 = 2 * standard_gamma((0.5 * self.df).expand(*shape))
        return self.loc + self.scale * z * (self.df / chi2).sqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                + special.gammaln(0.5 * self.df) - special.gammaln(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - norm

    def entropy(self):
        r""":math:`\log\sigma + \tfrac{\nu+1}2(\psi(\tfrac{\nu+1}2) - \psi(\tfrac\nu2))
        + \tfrac12\log\nu + \log B(\tfrac\nu2, \tfrac12)`."""
        half = 0.5 * self.df
        half1 = 0.5 * (self.df + 1)
        lbeta = special.gammaln(half) + math.lgamma(0.5) - special.gammaln(half1)
        return (self.scale.log() + half1 * (special.digamma(half1) - special.digamma(half))
                + 0.5 * self.df.log() + lbeta)
