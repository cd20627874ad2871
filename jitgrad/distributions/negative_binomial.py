"""The negative binomial distribution."""
from __future__ import annotations

import numpy as np

from ..ops import binary
from ..scipy import special
from . import constraints
from .distribution import Distribution
from .utils import (BinaryProbsLogits, broadcast_all, from_numpy, host, log_sigmoid,
                    one_of_probs_logits, rng)

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbsLogits, Distribution):
    r"""The number of successes before ``total_count`` :math:`r` failures of Bernoulli trials
    with success probability ``probs`` :math:`p` (or ``logits`` :math:`\ell`):

    .. math:: \log p(k) = \log\Gamma(k+r) - \log\Gamma(k+1) - \log\Gamma(r)
              + r\log\sigma(-\ell) + k\log\sigma(\ell).
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        name, param = one_of_probs_logits("NegativeBinomial", probs, logits)
        self.total_count, param = broadcast_all(total_count, param)
        setattr(self, name, param)
        self._param = param
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(NegativeBinomial, batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return binary.clamp(((self.total_count - 1) * self.logits.exp()).floor(), min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=()):
        """A gamma-Poisson mixture: :math:`k \\sim \\mathrm{Poisson}(\\lambda)`,
        :math:`\\lambda \\sim \\mathrm{Gamma}(r, e^{-\\ell})`."""
        shape = self._extended_shape(sample_shape)
        r = host(self.total_count.expand(*shape), "NegativeBinomial.sample")
        odds = host(self.logits.expand(*shape), "NegativeBinomial.sample")
        rate = rng().standard_gamma(r) * np.exp(odds)
        return from_numpy(rng().poisson(rate), self._param)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        log_unnormalized = r * log_sigmoid(-self.logits) + value * log_sigmoid(self.logits)
        log_norm = -special.gammaln(r + value) + special.gammaln(1.0 + value) + special.gammaln(r)
        # r + k = 0: the mass at 0 is 1 whatever the gammas say
        log_norm = binary.where(r + value == 0.0, 0.0, log_norm)
        return log_unnormalized - log_norm
