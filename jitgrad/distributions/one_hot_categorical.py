"""The one-hot categorical distribution and its straight-through variant."""
from __future__ import annotations

from ..ops import creation
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import CategoricalParams

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _one_hot(index, k, like):
    return (index.unsqueeze(-1) == creation.arange(k)).to(like.dtype)


class OneHotCategorical(CategoricalParams, Distribution):
    r"""A categorical distribution whose values are one-hot vectors of length :math:`K` (event
    shape ``(K,)``), given by ``probs`` or ``logits`` as :class:`Categorical`:
    :math:`\log p(x) = \ell_{\arg\max x}`."""

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(tuple(param.shape[:-1]), tuple(param.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _one_hot(probs.argmax(-1), self._event_shape[0], probs)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape=()):
        index = self._categorical.sample(sample_shape)
        return _one_hot(index, self._event_shape[0], self._categorical.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        r""":math:`-\sum_k p_k\log p_k`."""
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        k = self._event_shape[0]
        values = creation.eye(k, dtype=self._param.dtype)
        values = values.reshape(k, *((1,) * len(self._batch_shape)), k)
        return values.expand(k, *self._batch_shape, k) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    r""":class:`OneHotCategorical` with the straight-through gradient estimator: ``rsample``
    returns the one-hot draw :math:`x` as :math:`x + (p - \mathrm{sg}(p))`, whose gradient is
    that of the probabilities :math:`p` (Bengio et al., 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
