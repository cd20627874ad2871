"""The multinomial distribution."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..ops import binary, creation
from ..scipy import special
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import CategoricalParams, from_numpy, host, rng

__all__ = ["Multinomial"]


class Multinomial(CategoricalParams, Distribution):
    r"""Counts of ``total_count`` :math:`n` draws from a categorical distribution with ``probs``
    or ``logits`` (event shape ``(K,)``):

    .. math:: \log p(x) = \log n! - \sum_k\log x_k! + \sum_k x_k\log p_k.

    ``total_count`` need not be given for ``log_prob`` (it is read from the value), but
    ``sample`` needs it.
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, numbers.Integral):
            raise NotImplementedError("Multinomial: inhomogeneous total_count is not supported "
                                      f"(expected an int, got {type(total_count).__name__})")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs=probs, logits=logits)
        param = self._categorical._param
        super().__init__(tuple(param.shape[:-1]), tuple(param.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = host(self.probs, "Multinomial.sample")
        probs = np.broadcast_to(probs / probs.sum(-1, keepdims=True), shape)
        counts = rng().multinomial(self.total_count, probs.reshape(-1, shape[-1]))
        return from_numpy(counts.reshape(shape), self._param)

    def entropy(self):
        r""":math:`-\log n! - n\sum_k p_k\log p_k + \sum_k\mathbb{E}[\log X_k!]`, the last
        expectation over the binomial marginals :math:`X_k \sim \mathrm{Bin}(n, p_k)`."""
        n = self.total_count
        support = creation.arange(n + 1, dtype=self._param.dtype).reshape(
            -1, *((1,) * (len(self._batch_shape) + 1)))
        marginals = Binomial(n, probs=self.probs, validate_args=False)
        expected_log_fact = (marginals.log_prob(support).exp()
                             * special.gammaln(support + 1)).sum(0).sum(-1)
        return (n * self._categorical.entropy() - math.lgamma(n + 1) + expected_log_fact)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        batch = np.broadcast_shapes(tuple(value.shape), tuple(logits.shape))
        logits = logits.expand(*batch)
        # 0 * log 0 = 0 for categories of probability 0 that were never drawn
        logits = binary.where((value == 0) & (logits == -np.inf), 0.0, logits)
        log_factorial_n = special.gammaln(value.sum(-1) + 1)
        log_factorial_xs = special.gammaln(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
