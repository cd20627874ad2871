"""Transforms (``torch.distributions.transforms``): invertible maps with a tractable
log-Jacobian, used to build distributions (``TransformedDistribution``) and to map
unconstrained parameters onto constrained sets (``biject_to`` / ``transform_to``).

This module holds the elementwise transforms and re-exports the rest: the protocol and
composition (``transforms_base``) and the transforms that couple the entries of an event
(``transforms_vector``: softmax, stick breaking, Cholesky factors, cat/stack).
"""
from __future__ import annotations

import math
import numbers

from .. import numpy as _jnp
from ..nn import functional as _F
from . import constraints
from .transforms_base import (ComposeTransform, IndependentTransform, ReshapeTransform,
                              Transform, as_param, finfo, identity_transform)
from .transforms_vector import (CatTransform, CorrCholeskyTransform, LowerCholeskyTransform,
                                PositiveDefiniteTransform, SoftmaxTransform, StackTransform,
                                StickBreakingTransform, clipped_sigmoid)
from .utils import broadcast_all

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
    "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
    "Transform", "identity_transform",
]


class ExpTransform(Transform):
    r""":math:`y = e^x`, from the reals onto :math:`(0, \infty)`;
    :math:`\log|dy/dx| = x`."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    r""":math:`y = x^{a}` on :math:`(0, \infty)` for an exponent :math:`a` (number or tensor);
    :math:`\log|dy/dx| = \log|a y / x|`."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return bool((self.exponent == other.exponent).all())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _jnp.broadcast_shapes(tuple(shape), tuple(self.exponent.shape))

    def inverse_shape(self, shape):
        return _jnp.broadcast_shapes(tuple(shape), tuple(self.exponent.shape))


class SigmoidTransform(Transform):
    r""":math:`y = \sigma(x) = 1 / (1 + e^{-x})`, from the reals onto :math:`(0, 1)` (clamped
    to ``[tiny, 1 - eps]`` so the inverse stays finite);
    :math:`\log|dy/dx| = -\mathrm{softplus}(-x) - \mathrm{softplus}(x)`."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return clipped_sigmoid(x)

    def _inverse(self, y):
        fi = finfo(y)
        y = y.clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -_F.softplus(-x) - _F.softplus(x)


class SoftplusTransform(Transform):
    r""":math:`y = \log(1 + e^x)`, from the reals onto :math:`(0, \infty)`; inverse
    :math:`x = y + \log(1 - e^{-y})`; :math:`\log|dy/dx| = -\mathrm{softplus}(-x)`."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _F.softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y

    def log_abs_det_jacobian(self, x, y):
        return -_F.softplus(-x)


class TanhTransform(Transform):
    r""":math:`y = \tanh x`, from the reals onto :math:`(-1, 1)`;
    :math:`\log|dy/dx| = \log(1 - \tanh^2 x) = 2(\log 2 - x - \mathrm{softplus}(-2x))`
    (the stable form)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - _F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """:math:`y = |x|` (not injective: the inverse returns the nonnegative preimage ``y``)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


def _same(a, b):
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    if isinstance(a, numbers.Number) or isinstance(b, numbers.Number):
        return False
    return tuple(a.shape) == tuple(b.shape) and bool((a == b).all())


class AffineTransform(Transform):
    r""":math:`y = \mathrm{loc} + \mathrm{scale} \cdot x` (numbers or tensors, broadcast);
    :math:`\log|dy/dx| = \log|\mathrm{scale}|`, summed over the ``event_dim`` rightmost
    dimensions (``event_dim=1`` for a vector-valued affine map)."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = as_param(loc, "AffineTransform")
        self.scale = as_param(scale, "AffineTransform")
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        return (isinstance(other, AffineTransform) and _same(self.loc, other.loc)
                and _same(self.scale, other.scale))

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = _jnp.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:result.ndim - self.event_dim]) + (-1,))
            result = result.sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(*shape)

    def forward_shape(self, shape):
        return _jnp.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                     tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


class CumulativeDistributionTransform(Transform):
    r""":math:`y = F(x)`, the CDF of ``distribution``, from its support onto :math:`(0, 1)`;
    inverse the ``icdf``; :math:`\log|dy/dx| = \log p(x)` (the density)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
