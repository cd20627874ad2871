"""The ``Transform`` protocol and the transforms that build on other transforms: inverse,
composition, independence and reshaping (``torch.distributions.transforms``' base).

A transform ``f`` is an invertible (or at least computable) map with a tractable
``log |det J_f(x)|``. ``TransformedDistribution`` pushes a base distribution through one:
``log p_Y(y) = log p_X(f^{-1}(y)) - log |det J_f(f^{-1}(y))|``. Everything is written with
jitgrad's differentiable ops, so ``rsample`` through a transform stays reparameterised.
"""
from __future__ import annotations

import functools
import operator
import weakref

import numpy as np

from .. import numpy as _jnp
from ..ops.core import dispatch as _dispatch
from ..tensor import Tensor
from . import constraints
from .utils import sum_rightmost

__all__ = ["Transform", "ComposeTransform", "IndependentTransform", "ReshapeTransform",
           "identity_transform", "zeros_batch", "finfo", "as_param"]


def zeros_batch(like, shape):
    """A zero tensor of ``shape`` in ``like``'s dtype (a log-det of 0 for volume-preserving
    maps)."""
    return _jnp.zeros(tuple(shape), dtype=like.dtype)


def finfo(x):
    """NumPy's ``finfo`` of tensor ``x``'s floating dtype."""
    return np.finfo(x.dtype.np)


class Transform:
    r"""An invertible transformation :math:`y = f(x)` with a computable log-Jacobian.

    Subclasses set ``domain`` and ``codomain`` (constraints), ``bijective``, and implement
    ``_call`` (forward), ``_inverse`` and ``log_abs_det_jacobian``
    (:math:`\log|\det \partial y / \partial x|`, summed over the event dimensions the transform
    couples).

    Parameters
    ----------
    cache_size : int
        0 (no cache) or 1: remember the last ``(x, y)`` pair, so ``t.inv(t(x))`` returns ``x``
        itself (the same object) without computing an inverse.
    """

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError(f"{type(self).__name__}: cache_size must be 0 or 1, got "
                             f"{cache_size!r}")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        if isinstance(state["_inv"], weakref.ref):  # (an _InverseTransform keeps its strong one)
            state["_inv"] = None
        return state

    @property
    def event_dim(self):
        """The transform's event dimension, when ``domain`` and ``codomain`` agree on it."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError(f"{type(self).__name__}: domain and codomain event_dim differ; "
                         "use .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform :math:`f^{-1}` (``t.inv.inv is t``)."""
        inv = None if self._inv is None else self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """The sign of the Jacobian determinant (+1 / -1), for bijective monotone maps."""
        raise NotImplementedError(f"{type(self).__name__}.sign is not defined")

    def with_cache(self, cache_size=1):
        """This transform with ``cache_size`` (a new object if it differs)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        """:math:`y = f(x)` (cached when ``cache_size == 1``)."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        """:math:`x = f^{-1}(y)` (cached when ``cache_size == 1``)."""
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} has no forward map")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} has no inverse; use cache_size=1 to "
                                  "invert values it produced")

    def log_abs_det_jacobian(self, x, y):
        r""":math:`\log|\det J_f(x)|` given ``x`` and ``y = f(x)``."""
        raise NotImplementedError(f"{type(self).__name__}.log_abs_det_jacobian is not defined")

    def forward_shape(self, shape):
        """The shape of ``f(x)`` for ``x`` of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The shape of ``f^{-1}(y)`` for ``y`` of ``shape``."""
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: forward is its ``_inverse`` and the log-det is negated,
    :math:`\\log|\\det J_{f^{-1}}(y)| = -\\log|\\det J_f(x)|`."""

    def __init__(self, transform: Transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv: Transform = transform  # a strong reference back to the forward transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


def _widen(constraint, event_dim):
    """``constraint`` read with at least ``event_dim`` event dimensions."""
    if event_dim > constraint.event_dim:
        return constraints.independent(constraint, event_dim - constraint.event_dim)
    return constraint


class ComposeTransform(Transform):
    r"""The composition :math:`f = f_n \circ \dots \circ f_1` of ``parts`` (applied left to
    right). Its log-det is the sum of the parts' log-dets, each summed over the event
    dimensions the later parts couple: :math:`\sum_k \log|\det J_{f_k}(x_{k-1})|`.
    ``ComposeTransform([])`` is the identity."""

    def __init__(self, parts, cache_size=0):
        parts = list(parts)
        if not all(isinstance(p, Transform) for p in parts):
            raise TypeError("ComposeTransform: every part must be a Transform, got "
                            + ", ".join(type(p).__name__ for p in parts))
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        return _widen(self.parts[0].domain, event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        return _widen(self.parts[-1].codomain, event_dim)

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        return functools.reduce(operator.mul, (p.sign for p in self.parts), 1)

    @property
    def inv(self):
        inv = None if self._inv is None else self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _jnp.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, xk, yk in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(xk, yk),
                                       event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


#: the identity map (an empty composition)
identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with its ``reinterpreted_batch_ndims`` rightmost batch dimensions read
    as event dimensions: same values, log-det summed over those dimensions."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        if not isinstance(base_transform, Transform):
            raise TypeError("IndependentTransform: expected a Transform, got "
                            f"{type(base_transform)}")
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.ndim < self.domain.event_dim:
            raise ValueError(f"IndependentTransform: input of shape {tuple(x.shape)} has fewer "
                             f"than {self.domain.event_dim} dimensions")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.ndim < self.codomain.event_dim:
            raise ValueError(f"IndependentTransform: input of shape {tuple(y.shape)} has fewer "
                             f"than {self.codomain.event_dim} dimensions")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def __repr__(self):
        name = self.__class__.__name__
        return f"{name}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dimensions of an event to ``out_shape`` (same number
    of elements). Volume preserving: the log-det is 0."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = tuple(int(s) for s in in_shape)
        self.out_shape = tuple(int(s) for s in out_shape)
        if int(np.prod(self.in_shape)) != int(np.prod(self.out_shape)):
            raise ValueError(f"ReshapeTransform: in_shape {self.in_shape} and out_shape "
                             f"{self.out_shape} have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(self._batch(x.shape, self.in_shape) + self.out_shape)

    def _inverse(self, y):
        return y.reshape(self._batch(y.shape, self.out_shape) + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return zeros_batch(x, self._batch(x.shape, self.in_shape))

    @staticmethod
    def _batch(shape, event):
        shape = tuple(shape)
        cut = len(shape) - len(event)
        if cut < 0 or shape[cut:] != event:
            raise ValueError(f"ReshapeTransform: shape {shape} does not end in the event shape "
                             f"{event}")
        return shape[:cut]

    def forward_shape(self, shape):
        return self._batch(shape, self.in_shape) + self.out_shape

    def inverse_shape(self, shape):
        return self._batch(shape, self.out_shape) + self.in_shape


def as_param(value, op):
    """A transform parameter: Python numbers stay numbers, everything else becomes a tensor."""
    if isinstance(value, (int, float)) or isinstance(value, Tensor):
        return value
    return _dispatch.tensor_operand(value, op)
