"""The categorical distribution over :math:`\\{0, \\dots, K-1\\}`."""
from __future__ import annotations

import math

import numpy as np

from ..ops import binary, creation, reduce, scatter
from . import constraints
from .distribution import Distribution
from .utils import (as_tensor, from_numpy, host, lazy_property, logits_to_probs,
                    one_of_probs_logits, probs_to_logits, rng)

__all__ = ["Categorical", "draw_categorical"]


def draw_categorical(probs, sample_shape):
    """Indices drawn from the (normalised) rows of ``probs`` (NumPy, shape ``(..., K)``): an
    int64 array of shape ``sample_shape + probs.shape[:-1]``, by inverse transform sampling."""
    cdf = np.cumsum(probs, axis=-1)
    cdf /= cdf[..., -1:]
    u = rng().random(tuple(sample_shape) + probs.shape[:-1])
    index = (np.broadcast_to(cdf, u.shape + probs.shape[-1:]) <= u[..., None]).sum(-1)
    return np.minimum(index, probs.shape[-1] - 1).astype(np.int64)


class Categorical(Distribution):
    r"""The categorical distribution over :math:`\{0,\dots,K-1\}` given by ``probs`` (normalised
    over the last dim) or ``logits`` (unnormalised log probabilities), exactly one:
    :math:`\log p(k) = \ell_k - \log\sum_j e^{\ell_j}`.

    The batch shape is the parameter's shape without its last dim.
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, param = one_of_probs_logits(type(self).__name__, probs, logits)
        param = as_tensor(param)
        if param.ndim < 1:
            raise ValueError(f"{type(self).__name__}: `{name}` must be at least one-dimensional "
                             "(the categories on its last dim)")
        if name == "probs":
            self.probs = param / param.sum(-1, keepdim=True)
        else:
            self.logits = param - reduce.logsumexp(param, -1, keepdim=True)
        self._param = self.probs if name == "probs" else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Categorical, batch_shape, _instance)
        new._param = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """Normalised log probabilities."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """Normalised probabilities."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """The shape of the parameter tensor."""
        return tuple(self._param.shape)

    @property
    def mean(self):
        return creation.full(self._extended_shape(), math.nan, dtype=self._param.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return creation.full(self._extended_shape(), math.nan, dtype=self._param.dtype)

    def sample(self, sample_shape=()):
        probs = host(self.probs, f"{type(self).__name__}.sample")
        shape = self._extended_shape(sample_shape)
        draws = draw_categorical(probs, shape[:len(shape) - len(self._batch_shape)])
        return from_numpy(draws, creation.tensor(0))

    def log_prob(self, value):
        r""":math:`\ell_{x}` (normalised logits), gathered at the integer values ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long()
        batch = np.broadcast_shapes(tuple(value.shape), self._batch_shape)
        logits = self.logits.expand(*batch, self._num_events)
        index = value.expand(*batch).unsqueeze(-1)
        return scatter.gather(logits, -1, index).squeeze(-1)

    def entropy(self):
        r""":math:`-\sum_k p_k\log p_k` (terms with :math:`p_k = 0` count 0)."""
        min_real = float(np.finfo(self.logits.dtype.np).min)
        logits = binary.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = creation.arange(self._num_events).reshape(
            -1, *((1,) * len(self._batch_shape)))
        return values.expand(self._num_events, *self._batch_shape) if expand else values
