"""``Independent``: reinterpret batch dims of a distribution as event dims."""
from __future__ import annotations

from . import constraints
from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    r"""Reinterpret the ``reinterpreted_batch_ndims`` rightmost batch dims of
    ``base_distribution`` as event dims: ``log_prob`` and ``entropy`` sum over them,
    :math:`\log p(x) = \sum_{i} \log p_{\text{base}}(x_i)`.

    E.g. ``Independent(Normal(loc, scale), 1)`` with ``loc`` of shape ``(B, D)`` is a diagonal
    multivariate normal with batch shape ``(B,)`` and event shape ``(D,)``.
    """

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = int(reinterpreted_batch_ndims)
        batch = tuple(base_distribution.batch_shape)
        if n > len(batch) or n < 0:
            raise ValueError("Independent: expected 0 <= reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape) = {len(batch)}, got {n}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(batch[:len(batch) - n],
                         batch[len(batch) - n:] + tuple(base_distribution.event_shape),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = tuple(batch_shape)
        n = self.reinterpreted_batch_ndims
        new.base_dist = self.base_dist.expand(
            batch_shape + tuple(self.event_shape[:n]))
        new.reinterpreted_batch_ndims = n
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Independent.enumerate_support: enumeration over a "
                                      "cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return (f"{type(self).__name__}({self.base_dist}, "
                f"{self.reinterpreted_batch_ndims})")
