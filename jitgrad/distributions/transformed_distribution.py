"""``TransformedDistribution``: a base distribution pushed through a sequence of transforms."""
from __future__ import annotations

from ..graph.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms_base import ComposeTransform, Transform
from .utils import sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    r"""The distribution of :math:`Y = f_n(\dots f_1(X))` for :math:`X` drawn from
    ``base_distribution`` and ``transforms`` :math:`[f_1, \dots, f_n]` (a ``Transform`` or a
    list of them).

    By the change of variables,

    .. math:: \log p_Y(y) = \log p_X(x) - \sum_k \log|\det J_{f_k}(x_{k-1})|,
              \quad x = f^{-1}(y),

    each log-det summed over the event dimensions. ``rsample`` is reparameterised when the base
    distribution's is (the transforms are differentiable jitgrad ops); ``cdf``/``icdf`` go
    through the base distribution's when every transform is monotone (``sign`` known).

    When the transforms couple more dimensions than the base distribution's event (e.g. a
    ``StickBreakingTransform`` over a batch of ``Normal``), the extra batch dimensions of the
    base are reinterpreted as event dimensions (``Independent``).
    """

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, (list, tuple)):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("TransformedDistribution: transforms must be a Transform or a "
                                 "list of Transforms, got "
                                 + ", ".join(type(t).__name__ for t in transforms))
            self.transforms = list(transforms)
        else:
            raise ValueError("TransformedDistribution: transforms must be a Transform or a "
                             f"list of Transforms, got {type(transforms).__name__}")

        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"TransformedDistribution: base_distribution needs a shape of at "
                             f"least {transform.domain.event_dim} dimensions, got {base_shape}")
        forward_shape = tuple(transform.forward_shape(base_shape))
        expanded_base_shape = tuple(transform.inverse_shape(forward_shape))
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution

        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with batch shape ``batch_shape``: the base distribution is expanded
        to the matching (inverse-transformed) batch shape."""
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = tuple(int(s) for s in batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch_shape = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        """The last transform's codomain (widened to the event shape)."""
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        """A base draw pushed through the transforms (no graph)."""
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=()):
        """A reparameterised base draw pushed through the transforms."""
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        r""":math:`\log p_X(f^{-1}(y)) - \sum_k \log|\det J_{f_k}|` (change of variables)."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """``value`` or ``1 - value``: the transforms' combined monotonicity decides whether
        :math:`P(Y \\le y)` is the base CDF or its complement."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        r""":math:`F_X(f^{-1}(y))`, or :math:`1 - F_X(f^{-1}(y))` for a decreasing :math:`f`."""
        for transform in reversed(self.transforms):
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        r""":math:`f(F_X^{-1}(q))` (with :math:`1 - q` for a decreasing :math:`f`)."""
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value
