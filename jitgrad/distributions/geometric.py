"""The geometric distribution (failures before the first success)."""
from __future__ import annotations

from ..ops import binary, creation
from . import constraints
from .distribution import Distribution
from .utils import (BinaryProbsLogits, broadcast_all, from_numpy, host, one_of_probs_logits, rng,
                    softplus)

__all__ = ["Geometric"]


class Geometric(BinaryProbsLogits, Distribution):
    r"""The number of failures before the first success of Bernoulli trials with success
    probability ``probs`` :math:`p` (or ``logits``):
    :math:`\log p(k) = k\log(1-p) + \log p`, :math:`k = 0, 1, \dots`"""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, param = one_of_probs_logits("Geometric", probs, logits)
        param, = broadcast_all(param)
        setattr(self, name, param)
        self._param = param
        super().__init__(tuple(param.shape), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError("Geometric: expected parameter probs to satisfy 0 < probs <= 1, "
                             f"but found invalid values:\n{self.probs}")

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Geometric, batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return creation.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = host(self.probs.expand(*shape), "Geometric.sample")
        return from_numpy(rng().geometric(p) - 1, self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 log 0 = 0 where p = 1 and k = 0
        safe = binary.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self):
        r""":math:`(\log(1+e^\ell) - p\ell)/p`."""
        return (softplus(self.logits) - self.probs * self.logits) / self.probs
