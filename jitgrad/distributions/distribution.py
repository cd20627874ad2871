"""``Distribution``: the base class of every distribution (PyTorch's
``torch.distributions.Distribution``)."""
from __future__ import annotations

import warnings

from ..graph.grad_mode import no_grad
from ..ops import checks
from ..tensor import Tensor
from . import constraints
from .utils import extended_shape, lazy_property

__all__ = ["Distribution"]


class Distribution:
    r"""A parameterised probability distribution.

    A distribution has a ``batch_shape`` (independent, not identically distributed copies) and an
    ``event_shape`` (the shape of one draw); ``sample(sample_shape)`` returns tensors of shape
    ``sample_shape + batch_shape + event_shape`` and ``log_prob(value)`` one log density per
    batch element. Subclasses set ``arg_constraints`` (parameter name -> constraint) and
    ``support``; with ``validate_args`` (on by default, as in PyTorch) the parameters are checked
    against their constraints at construction and the values given to ``log_prob`` against the
    support.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for every distribution made afterwards that is
        not given ``validate_args`` (PyTorch's default: on, unless Python runs with ``-O``)."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{type(self).__name__} does not define `arg_constraints`; define it "
                          "to validate its parameters (or pass validate_args=False)")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                         lazy_property):
                continue  # the other parameterisation (probs/logits) was given
            value = getattr(self, param)
            checks.check_all(  # (Note [value checks]: compiled programs check at each call)
                constraint.check(value),
                f"Expected parameter {param} ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                f"{constraint!r}, but found invalid values:\n", value)

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose batch shape is ``batch_shape`` (the parameters expanded, no
        copy), like ``Tensor.expand``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand")

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint each parameter satisfies (``{name: Constraint}``)."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the values of this distribution satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self):
        r"""The standard deviation, :math:`\sqrt{\mathrm{Var}}`."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """Draw samples of shape ``sample_shape + batch_shape + event_shape`` (no graph)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """Draw reparameterised samples: differentiable functions of the parameters."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample "
                                  "(has_rsample is False); use sample()")

    def sample_n(self, n):
        """``sample((n,))`` (deprecated in PyTorch)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample((n,))

    def log_prob(self, value):
        """The log of the density (or mass) at ``value``, one per batch element."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value):
        """The inverse cumulative distribution function (quantile) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand=True):
        """All the values of a discrete distribution's support along a new leading dim (of shape
        ``(cardinality,) + batch_shape + event_shape``, or with batch dims of size 1 when
        ``expand`` is False)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  "enumerate_support")

    def entropy(self):
        r"""The entropy :math:`-\mathbb{E}[\log p(X)]`, one per batch element."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self):
        r"""The perplexity :math:`\exp(H)`."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        return extended_shape(sample_shape, self._batch_shape, self._event_shape)

    def _validate_sample(self, value):
        """Check that ``value`` broadcasts with the batch and event shapes and lies in the
        support (raises ``ValueError`` naming the distribution otherwise)."""
        if not isinstance(value, Tensor):
            raise ValueError(f"{type(self).__name__}: the value must be a Tensor, got "
                             f"{type(value).__name__}")
        event_dim_start = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != self._event_shape:
            raise ValueError(f"{type(self).__name__}: the rightmost dims of the value "
                             f"{tuple(value.shape)} must equal the event shape "
                             f"{self._event_shape}")
        actual = tuple(value.shape[:event_dim_start])
        expected = self._batch_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"{type(self).__name__}: value of shape {tuple(value.shape)} "
                                 f"does not broadcast with batch shape {expected}")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self).__name__} does not define `support`; define it to "
                          "validate sample values (or pass validate_args=False)")
            return
        if support is None:
            return
        checks.check_all(support.check(value), "Expected value argument "
                         f"({type(value).__name__} of shape {tuple(value.shape)}) "
                         f"to be within the support ({support!r}) of the distribution "
                         f"{self!r}, but found invalid values:\n", value)

    def _expanded(self, cls, batch_shape, _instance=None):
        """The ``expand`` of a distribution whose state is its parameters: a new instance of
        ``cls`` with every parameter tensor it holds expanded to ``batch_shape`` (trailing event
        dims kept) and the same validation setting."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = tuple(int(s) for s in batch_shape)
        n = len(self._batch_shape)
        for name, value in self.__dict__.items():
            if name.startswith("_"):
                continue
            new.__dict__[name] = value.expand(*(batch_shape + tuple(value.shape[n:]))) \
                if isinstance(value, Tensor) else value
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {type(self).__name__} of {cls.__name__} that "
                                      "defines a custom __init__ method must also define a "
                                      "custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        parts = []
        for name in names:
            value = self.__dict__[name]
            shown = (value.item() if value.ndim == 0 else value) if value.numel() == 1 \
                else tuple(value.shape)
            parts.append(f"{name}: {shown}")
        return f"{type(self).__name__}({', '.join(parts)})"
