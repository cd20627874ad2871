"""The Bernoulli distribution."""
from __future__ import annotations

import math

from ..ops import binary, creation
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (BinaryProbsLogits, broadcast_all, from_numpy, host, one_of_probs_logits, rng,
                    softplus)

__all__ = ["Bernoulli"]


class Bernoulli(BinaryProbsLogits, ExponentialFamily):
    r"""The Bernoulli distribution on :math:`\{0, 1\}`, given by ``probs`` :math:`p` or ``logits``
    :math:`\ell = \log p - \log(1-p)` (exactly one):

    .. math:: \log p(x) = x\ell - \log(1 + e^\ell).
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, param = one_of_probs_logits("Bernoulli", probs, logits)
        param, = broadcast_all(param)
        setattr(self, name, param)
        self._param = param
        super().__init__(tuple(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Bernoulli, batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        """1 where :math:`p > 1/2`, 0 where :math:`p < 1/2`, nan at :math:`p = 1/2`."""
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return binary.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = host(self.probs.expand(*shape), "Bernoulli.sample")
        return from_numpy(rng().random(shape) < p, self._param)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return value * logits - softplus(logits)

    def entropy(self):
        r""":math:`\log(1+e^\ell) - p\ell`."""
        return softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand=True):
        values = creation.arange(2, dtype=self._param.dtype)
        values = values.reshape(-1, *((1,) * len(self._batch_shape)))
        return values.expand(2, *self._batch_shape) if expand else values

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return softplus(x)
