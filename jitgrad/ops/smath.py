"""Scalar math usable in derivative bodies, on numbers inside Numba kernels AND on Tensors.

A backward body such as ``def _sin_dx(g, x): return g * cos(x)`` is compiled into a kernel (Numba
sees ``cos`` through the ``@overload`` below) and, for ``create_graph``, called on Tensors (the
Python function dispatches to the registry op, recording the graph). One formula, both paths.

Inside kernels the transcendentals are jitgrad's vectorisable implementations
(``device/vmath.py``, <= 1.5 ulp, NumPy's special values) unless ``JITGRAD_FAST_MATH=0`` asks for
libm through Numba's ``math`` module (docs/fastmath.md). Every op body calls these functions, never
``math.*`` directly, so the switch is made here, in one place.
"""
from __future__ import annotations

import cmath
import math

import numpy as np
from numba import types
from numba.extending import overload

from .. import _config
from ..device import vmath
from .registry import OPS


def _is_tensor(x) -> bool:
    from . import dispatch

    return isinstance(x, dispatch.Tensor)


#: (function, scalar implementation for the CUDA target): registered by ``register_cuda``
_CUDA_IMPLS: list = []


def _unary(name: str, scalar_impl, np_impl, fast=None, complex_impl=None):
    """Build the dual-use function ``name`` and register its Numba overload: ``fast`` (a vmath
    function) in fast-math mode when given, else ``scalar_impl`` (libm); for a complex argument
    ``complex_impl`` (cmath: vmath and the libm forms are real-only), when given."""
    libm_impl = scalar_impl
    if fast is not None and _config.FAST_MATH:
        def scalar_impl(x):
            return fast(x)

    def fn(x):
        if _is_tensor(x):
            from . import dispatch

            return dispatch.elementwise(OPS[name], x)
        with np.errstate(all="ignore"):  # log(0) is -inf here, as in the kernels
            return np_impl(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}`` of a number (in kernels) or of a Tensor (recorded)."

    @overload(fn, inline="always")
    def _ov(x):
        if isinstance(x, types.Complex):
            return complex_impl  # None (no implementation) for the real-only functions
        return scalar_impl

    # on CUDA the libm forms compile to the device's own math library (libdevice)
    _CUDA_IMPLS.append((fn, libm_impl))
    return fn


def register_cuda() -> None:
    """Give the scalar functions their CUDA-target overloads (called once, when the first CUDA
    tensor is made). The simulator runs kernels as Python, where the functions work as they are."""
    from numba import config

    if config.ENABLE_CUDASIM or not _CUDA_IMPLS:
        return
    # numba-cuda keeps its own typing registry: overloads for it go through its own
    # ``overload`` (numba.extending's target="cuda" is not seen by it)
    from numba.cuda.extending import overload as cuda_overload

    impls, _CUDA_IMPLS[:] = list(_CUDA_IMPLS), []
    for fn, impl in impls:
        cuda_overload(fn, target="cuda", inline="always")(_typer1(impl))
    cuda_overload(zero, target="cuda", inline="always")(_zero_ov)
    cuda_overload(where, target="cuda", inline="always")(_where_ov)


def _typer1(impl):
    """A Numba typing function for a one-argument scalar function (Numba checks that the
    typing function's parameters match the implementation's)."""
    def typer(x):
        return impl
    return typer


def _sigmoid_scalar(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _sign_scalar(x):
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return 0.0 * x  # keeps nan as nan and the sign of zero


exp = _unary("exp", lambda x: math.exp(x), np.exp, vmath.exp, lambda x: cmath.exp(x))
expm1 = _unary("expm1", lambda x: math.expm1(x), np.expm1, vmath.expm1)
log = _unary("log", lambda x: math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan), np.log,
             vmath.log)
log1p = _unary("log1p", lambda x: math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan),
               np.log1p, vmath.log1p)
sin = _unary("sin", lambda x: math.sin(x), np.sin, vmath.sin)
cos = _unary("cos", lambda x: math.cos(x), np.cos, vmath.cos)
tan = _unary("tan", lambda x: math.tan(x), np.tan, vmath.tan)
tanh = _unary("tanh", lambda x: math.tanh(x), np.tanh, vmath.tanh)
sinh = _unary("sinh", lambda x: math.sinh(x) if abs(x) < 711.0 else x * math.inf, np.sinh, vmath.sinh)
cosh = _unary("cosh", lambda x: math.cosh(x) if abs(x) < 711.0 else abs(x) * math.inf, np.cosh,
              vmath.cosh)
erf = _unary("erf", lambda x: math.erf(x), np.vectorize(math.erf, otypes=[float]), vmath.erf)
sqrt = _unary("sqrt", lambda x: math.sqrt(x) if x >= 0 else math.nan, np.sqrt)
sigmoid = _unary("sigmoid", _sigmoid_scalar, lambda x: 1.0 / (1.0 + np.exp(-x)), vmath.sigmoid)
sign = _unary("sign", _sign_scalar, np.sign)


def zero(g):
    """A zero gradient shaped like ``g`` (``0 * g`` would be nan where ``g`` is inf)."""
    if _is_tensor(g):
        from . import dispatch

        return dispatch.zeros(g.shape, g.dtype, g.device)
    return 0.0


@overload(zero)
def _zero_ov(g):
    return lambda g: 0.0


def where(cond, a, b):
    """``a`` where ``cond`` else ``b``; a Tensor in any position records a ``where`` op.

    A scalar ``cond`` (e.g. ``exponent == 0`` for a Python exponent) just picks a branch, so the
    recorded graph is the branch's own (``MulBackward0`` for ``x**3``'s derivative, as PyTorch).
    """
    if not _is_tensor(cond) and np.ndim(cond) == 0 and (_is_tensor(a) or _is_tensor(b)):
        return a if cond else b
    if _is_tensor(cond) or _is_tensor(a) or _is_tensor(b):
        from . import dispatch

        return dispatch.elementwise(OPS["where"], cond, a, b)
    return np.where(cond, a, b)[()]


@overload(where)
def _where_ov(cond, a, b):
    return lambda cond, a, b: a if cond else b
