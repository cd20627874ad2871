"""The binomial distribution."""
from __future__ import annotations

import numpy as np

from ..ops import binary, creation
from ..scipy import special
from . import constraints
from .distribution import Distribution
from .utils import (BinaryProbsLogits, broadcast_all, from_numpy, host, one_of_probs_logits, rng,
                    softplus)

__all__ = ["Binomial"]


class Binomial(BinaryProbsLogits, Distribution):
    r"""The number of successes in ``total_count`` :math:`n` Bernoulli trials with success
    probability ``probs`` :math:`p` (or ``logits`` :math:`\ell`):

    .. math:: \log p(k) = \log\binom nk + k\ell - n\log(1+e^\ell).
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        name, param = one_of_probs_logits("Binomial", probs, logits)
        self.total_count, param = broadcast_all(total_count, param)
        setattr(self, name, param)
        self._param = param
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Binomial, batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return binary.minimum(((self.total_count + 1) * self.probs).floor(), self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        n = host(self.total_count.expand(*shape), "Binomial.sample").astype(np.int64)
        p = host(self.probs.expand(*shape), "Binomial.sample")
        return from_numpy(rng().binomial(n, p), self._param)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_binom = (special.gammaln(n + 1) - special.gammaln(value + 1)
                     - special.gammaln(n - value + 1))
        return log_binom + value * logits - n * softplus(logits)

    def entropy(self):
        r""":math:`-\sum_{k=0}^n p(k)\log p(k)` (one ``total_count`` for the whole batch)."""
        n = host(self.total_count, "Binomial.entropy")
        if n.size and n.min() != n.max():
            raise NotImplementedError("Binomial.entropy: an inhomogeneous total_count is not "
                                      "supported (every total_count must be equal)")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = host(self.total_count, "Binomial.enumerate_support")
        if n.size and n.min() != n.max():
            raise NotImplementedError("Binomial.enumerate_support: an inhomogeneous "
                                      "total_count is not supported")
        count = int(n.max()) if n.size else 0
        values = creation.arange(1 + count, dtype=self._param.dtype)
        values = values.reshape(-1, *((1,) * len(self._batch_shape)))
        return values.expand(count + 1, *self._batch_shape) if expand else values
