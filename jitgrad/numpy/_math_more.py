"""Elementwise NumPy functions composed of existing rows (issue 19): ``divmod``, ``modf``,
``frexp``, ``ldexp``, ``spacing``, ``i0``, ``copy``, ``matvec``, ``vecmat``.

Each states its forward and derivative; the gradients are those of the rows composed
(``remainder``, ``floor``, ``trunc``, ``mul``, ``where``...), so double backward works wherever the
rows' does.
"""
from __future__ import annotations

import math as _math

import numpy as _np

from ..ops import binary as _binary_ops
from ..ops import unary as _unary_ops
from ..tensor import Tensor
from . import _elementwise, _reductions, _shape
from ._common import cast as _cast, to_tensor as _t

__all__ = ["divmod", "modf", "frexp", "ldexp", "spacing", "i0", "copy", "matvec", "vecmat",
           "copyto"]


def _const_like(values, x):
    return Tensor._make(_np.asarray(values)).to(x.device)


def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    """``(floor(x1 / x2), x1 - floor(x1 / x2) x2)`` (``floor_divide``, ``remainder``).
    Derivatives: 0 for the quotient; ``g``, ``-g floor(x1 / x2)`` for the remainder."""
    return _elementwise.floor_divide(x1, x2), _elementwise.remainder(x1, x2)


def modf(x, /):
    """``(x - trunc(x), trunc(x))``: the fractional part (the sign of ``x``) and the integral
    part, both float. Derivatives: ``g`` for the fractional part, 0 for the integral part."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        x = _cast(x, _np.float64)
    whole = _elementwise.trunc(x)
    return x - whole, whole


def frexp(x, /):
    """``(m, e)`` with ``x = m 2^e``, ``0.5 <= |m| < 1`` (``e`` int32, a constant). ``m`` is
    ``x 2^-e`` (exact in binary floating point), so ``dm/dx = 2^-e``."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        x = _cast(x, _np.float64)
    mant, expo = _np.frexp(x._host("jitgrad.numpy.frexp"))
    # 2^-e in two factors: one would overflow for subnormal x (e < -1021)
    half = -expo // 2
    s1 = _np.ldexp(_np.ones_like(mant), half)
    s2 = _np.ldexp(_np.ones_like(mant), -expo - half)
    finite = _np.isfinite(x._host("jitgrad.numpy.frexp"))
    # inf/nan keep NumPy's mantissa (the value itself) with gradient g
    m = _binary_ops.where(_const_like(finite, x), x * _const_like(s1, x) * _const_like(s2, x), x)
    return m, _const_like(expo, x)


def ldexp(x1, x2, /):
    """``x1 2^x2`` for integer ``x2`` (a constant); ``d/dx1 = 2^x2``."""
    x1 = _t(x1)
    e = _np.asarray(x2._host("jitgrad.numpy.ldexp") if isinstance(x2, Tensor) else x2)
    if e.dtype.kind not in "iub":
        raise TypeError("jitgrad.numpy.ldexp: the exponent must be an integer array (NumPy's "
                        f"ufunc has no loop for {e.dtype}); x2 is not differentiable")
    if not x1.dtype.is_floating_point:
        x1 = _cast(x1, _np.float64)
    factor = _np.ldexp(_np.ones((), x1.dtype.np), e).astype(x1.dtype.np)
    return x1 * _const_like(factor, x1)


def spacing(x, /):
    """The distance from ``x`` to the next float away from zero (``numpy.spacing``), a
    piecewise-constant function of ``x``: the derivative is 0 (``where`` selects the constant,
    so ``x`` keeps a zero gradient path even at inf/nan)."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        x = _cast(x, _np.float64)
    sp = _np.spacing(x._host("jitgrad.numpy.spacing"))
    return _binary_ops.where(_const_like(_np.ones(sp.shape, bool), x), _const_like(sp, x), x)


def _i0_terms(a):
    """Series terms needed so ``sum_{k<=K} (x^2/4)^k / (k!)^2`` is exact to double precision
    for ``|x| <= a``: the terms peak near ``k = a / 2`` and then fall faster than
    geometrically."""
    return int(_math.ceil(a / 2 + 6 * _math.sqrt(a / 2 + 1) + 20))


def i0(x):
    """The modified Bessel function of the first kind, order 0:
    ``I0(x) = sum_k (x^2/4)^k / (k!)^2`` (every term positive, so the series evaluated by
    Horner's rule, ``1 + t/1^2 (1 + t/2^2 (1 + ...))``, is accurate for any finite ``x``).
    Derivative ``dI0/dx = I1(x)``; a composition of ``mul``/``add``, so all orders follow."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        x = _cast(x, _np.float64)
    d = _np.abs(x._host("jitgrad.numpy.i0"))
    amax = float(d[_np.isfinite(d)].max()) if _np.isfinite(d).any() else 0.0
    t = x * x * 0.25
    out = _const_like(_np.ones(x.shape, x.dtype.np), x)
    for k in range(_i0_terms(amax), 0, -1):
        out = out * t * (1.0 / (k * k)) + 1.0
    return out


def copy(a, order="K", subok=False):
    """A copy of ``a`` (``clone``); the gradient flows through it (``g``)."""
    if order not in ("K", "C", "A"):
        raise NotImplementedError("jitgrad.numpy.copy: only C order is supported")
    return _unary_ops.clone(_t(a))


def matvec(x1, x2, /):
    """``out[..., i] = sum_j x1[..., i, j] x2[..., j]`` (NumPy 2.2's ``matvec``, broadcasting
    the stack dims); gradients ``g_i x2_j`` and ``sum_i g_i x1_ij``."""
    x1, x2 = _t(x1), _t(x2)
    return _reductions.sum(x1 * _shape.expand_dims(x2, -2), axis=-1)


def vecmat(x1, x2, /):
    """``out[..., j] = sum_i conj(x1[..., i]) x2[..., i, j]`` (NumPy 2.2's ``vecmat``; real
    inputs here); gradients ``sum_j g_j x2_ij`` and ``x1_i g_j``."""
    x1, x2 = _t(x1), _t(x2)
    return _reductions.sum(_shape.expand_dims(_elementwise.conj(x1), -1) * x2, axis=-2)


def copyto(dst, src, casting="same_kind", where=True):
    """``dst[...] = src`` (broadcast; only where ``where``), in place: a Tensor ``dst`` records
    the write (the old values get a zero gradient where overwritten, ``src`` gets ``g`` there).
    Writing a ``src`` that requires grad into an ndarray raises (it would drop the gradient)."""
    if not isinstance(dst, Tensor):
        if isinstance(src, Tensor) and src.requires_grad:
            raise TypeError("jitgrad.numpy.copyto: writing a src that requires grad into a "
                            "NumPy array would drop its gradient; pass a Tensor dst")
        host = lambda v: v._host() if isinstance(v, Tensor) else v  # noqa: E731
        return _np.copyto(dst, host(src), casting=casting, where=host(where))
    s = _t(src)
    _np.can_cast(s.dtype.np, dst.dtype.np, casting) or _refuse_cast(s, dst, casting)
    s = s if s.dtype == dst.dtype else _cast(s, dst.dtype.np)
    mask = _np.asarray(where._host() if isinstance(where, Tensor) else where, dtype=bool)
    new = _shape.broadcast_to(s, dst.shape) if mask.all() else _elementwise.where(mask, s, dst)
    dst.copy_(new)


def _refuse_cast(src, dst, casting):
    raise TypeError(f"Cannot cast array data from dtype('{src.dtype.np}') to "
                    f"dtype('{dst.dtype.np}') according to the rule '{casting}'")
