"""Elementwise unary ops: one row per op, scalar bodies for forward and derivative.

Each derivative body is written once: compiled into a fused backward kernel, and called on
Tensors under ``create_graph`` (see ``registry``). ``result`` is the op's output.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from ..kernels.cpu import pool
from .core import dispatch
from . import unary_cuda
from .core.bodies import negate
from .core.registry import LINEAR, OPS, def_composite, def_elementwise, public
from .core import smath


# --- scalar bodies -------------------------------------------------------------------------
def _neg(x):
    return -x


def _exp(x):
    return smath.exp(x)


def _exp_dx(g, result):
    return g * result


def _log(x):
    return smath.log(x)  # -inf at 0, nan below


def _log_dx(g, x):
    return g / x


def _sin(x):
    return smath.sin(x)


def _sin_dx(g, x):
    return g * smath.cos(x)


def _cos(x):
    return smath.cos(x)


def _cos_dx(g, x):
    return -(g * smath.sin(x))


def _tan(x):
    return smath.tan(x)


def _tan_dx(g, result):
    return g * (result * result + 1.0)


def _tanh(x):
    return smath.tanh(x)


def _tanh_dx(g, result):
    return g * (1.0 - result * result)


def _sinh(x):
    return smath.sinh(x)


def _sinh_dx(g, x):
    return g * smath.cosh(x)


def _cosh(x):
    return smath.cosh(x)


def _cosh_dx(g, x):
    return g * smath.sinh(x)


def _expm1(x):
    return smath.expm1(x)


def _expm1_dx(g, result):
    return g * (result + 1.0)


def _log1p(x):
    return smath.log1p(x)  # -inf at -1, nan below


def _log1p_dx(g, x):
    return g / (x + 1.0)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erf(x):
    return smath.erf(x)


def _erf_dx(g, x):
    return g * (_TWO_OVER_SQRT_PI * smath.exp(-(x * x)))


def _sigmoid(x):
    return smath.sigmoid(x)


def _sigmoid_dx(g, result):
    return g * (result * (1.0 - result))


def _relu(x):
    if x > 0 or x != x:  # relu(nan) is nan
        return x
    return 0 * (x > 0)  # +0 for -0 and -inf too (0 * x would give -0 and nan)


def _relu_dx(g, result):
    return smath.where(result <= 0, 0.0, g)  # Note [masked gradients]; nan passes, as PyTorch


def _abs(x):
    return builtins.abs(x)  # this module's public ``abs`` shadows the builtin


def _abs_dx(g, x):
    # PyTorch's g * sgn(x), whose sgn is 0 at nan (jitgrad's sign keeps NumPy's nan there)
    return g * smath.where(x != x, 0.0, smath.sign(x))


def _sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


def _sqrt_dx(g, result):
    return g / (result + result)


def _rsqrt(x):
    return 1.0 / math.sqrt(x) if x >= 0 else math.nan


def _rsqrt_dx(g, result):
    return g * (-0.5 * result * result * result)


def _sign(x):
    if x > 0:
        return 1  # not 1 + 0 * x: that is nan at +-inf
    if x < 0:
        return -1
    return x - x  # +0 for both zeros (as PyTorch), nan for nan


def _reciprocal(x):
    return 1.0 / x


def _reciprocal_dx(g, result):
    return -g * (result * result)  # PyTorch: -grad * (result * result), a Mul on top


def zero_dx(g):
    return smath.zero(g)  # not 0 * g: an inf gradient must give 0, not nan


# --- rows ----------------------------------------------------------------------------------
# holomorphic=True: complex tensors too (Note [complex support] in ops/core/operands.py)
NEG = def_elementwise("neg", "NegBackward0", ("x",), _neg, {"x": negate}, holomorphic=True,
                      method=("neg", "negative"), inplace=True, export=("neg", "negative"),
                      numpy="negative")
EXP = def_elementwise("exp", "ExpBackward0", ("x",), _exp, {"x": _exp_dx}, dtype_rule="float",
                      cpu_ufunc=np.exp, holomorphic=True,
                      method=True, inplace=True, export=True, numpy=True)
LOG = def_elementwise("log", "LogBackward0", ("x",), _log, {"x": _log_dx}, dtype_rule="float",
                      cpu_ufunc=np.log, holomorphic=True, method=True, inplace=True, export=True,
                      numpy=True)
SIN = def_elementwise("sin", "SinBackward0", ("x",), _sin, {"x": _sin_dx}, dtype_rule="float",
                      holomorphic=True, method=True, inplace=True, export=True, numpy=True)
COS = def_elementwise("cos", "CosBackward0", ("x",), _cos, {"x": _cos_dx}, dtype_rule="float",
                      holomorphic=True, method=True, inplace=True, export=True, numpy=True)
TAN = def_elementwise("tan", "TanBackward0", ("x",), _tan, {"x": _tan_dx}, dtype_rule="float",
                      method=True, inplace=True, export=True, numpy=True)
TANH = def_elementwise("tanh", "TanhBackward0", ("x",), _tanh, {"x": _tanh_dx}, dtype_rule="float",
                       cpu_ufunc=np.tanh, holomorphic=True, method=True, inplace=True, export=True,
                       numpy=True)
SINH = def_elementwise("sinh", "SinhBackward0", ("x",), _sinh, {"x": _sinh_dx}, dtype_rule="float",
                       holomorphic=True, method=True, inplace=True, export=True, numpy=True)
COSH = def_elementwise("cosh", "CoshBackward0", ("x",), _cosh, {"x": _cosh_dx}, dtype_rule="float",
                       holomorphic=True, method=True, inplace=True, export=True, numpy=True)
EXPM1 = def_elementwise("expm1", "Expm1Backward0", ("x",), _expm1, {"x": _expm1_dx},
                        dtype_rule="float", method=True, inplace=True, export=True, numpy=True)
LOG1P = def_elementwise("log1p", "Log1PBackward0", ("x",), _log1p, {"x": _log1p_dx},
                        dtype_rule="float", method=True, inplace=True, export=True, numpy=True)
ERF = def_elementwise("erf", "ErfBackward0", ("x",), _erf, {"x": _erf_dx}, dtype_rule="float",
                      method=True, inplace=True, export=True)
SIGMOID = def_elementwise("sigmoid", "SigmoidBackward0", ("x",), _sigmoid, {"x": _sigmoid_dx},
                          dtype_rule="float", method=True, inplace=True, export=True)
RELU = def_elementwise("relu", "ReluBackward0", ("x",), _relu, {"x": _relu_dx},
                       method=True, inplace=True, export=True)
ABS = def_elementwise("abs", "AbsBackward0", ("x",), _abs, {"x": _abs_dx},
                      method=("abs", "absolute"), inplace=True, export=("abs", "absolute"),
                      numpy=("absolute", "abs", "fabs"))
SQRT = def_elementwise("sqrt", "SqrtBackward0", ("x",), _sqrt, {"x": _sqrt_dx}, dtype_rule="float",
                       method=True, inplace=True, export=True, numpy=True)
RSQRT = def_elementwise("rsqrt", "RsqrtBackward0", ("x",), _rsqrt, {"x": _rsqrt_dx},
                        dtype_rule="float", method=True, inplace=True, export=True)
SIGN = def_elementwise("sign", "SignBackward0", ("x",), _sign, {"x": zero_dx},
                       method=True, inplace=True, export=True, numpy=True)
RECIPROCAL = def_elementwise("reciprocal", "ReciprocalBackward0", ("x",), _reciprocal,
                             {"x": _reciprocal_dx}, dtype_rule="float", holomorphic=True,
                             method=True, inplace=True, export=True, numpy=True)


# --- public functions ----------------------------------------------------------------------
@public(NEG)
def neg(input):
    """Negation, ``-x``. Derivative: ``-g``."""
    return dispatch.unary(NEG, input)


@public(EXP)
def exp(input):
    """``e**x``. Derivative: ``g * exp(x)`` (the saved result)."""
    return dispatch.unary(EXP, input)


@public(LOG)
def log(input):
    """Natural logarithm (``-inf`` at 0, ``nan`` below). Derivative: ``g / x``."""
    return dispatch.unary(LOG, input)


@public(SIN)
def sin(input):
    """Sine. Derivative: ``g * cos(x)``."""
    return dispatch.unary(SIN, input)


@public(COS)
def cos(input):
    """Cosine. Derivative: ``-g * sin(x)``."""
    return dispatch.unary(COS, input)


@public(TAN)
def tan(input):
    """Tangent. Derivative: ``g * (1 + tan(x)**2)``."""
    return dispatch.unary(TAN, input)


@public(TANH)
def tanh(input):
    """Hyperbolic tangent. Derivative: ``g * (1 - tanh(x)**2)``."""
    return dispatch.unary(TANH, input)


@public(SINH)
def sinh(input):
    """Hyperbolic sine. Derivative: ``g * cosh(x)``."""
    return dispatch.unary(SINH, input)


@public(COSH)
def cosh(input):
    """Hyperbolic cosine. Derivative: ``g * sinh(x)``."""
    return dispatch.unary(COSH, input)


@public(EXPM1)
def expm1(input):
    """``e**x - 1``, accurate near 0. Derivative: ``g * (result + 1)``."""
    return dispatch.unary(EXPM1, input)


@public(LOG1P)
def log1p(input):
    """``log(1 + x)``, accurate near 0 (``-inf`` at -1, ``nan`` below). Derivative: ``g / (1 + x)``."""
    return dispatch.unary(LOG1P, input)


@public(ERF)
def erf(input):
    """Error function ``2/sqrt(pi) * integral_0^x e**-t**2 dt``.
    Derivative: ``g * 2/sqrt(pi) * e**(-x**2)``."""
    return dispatch.unary(ERF, input)


@public(SIGMOID)
def sigmoid(input):
    """Logistic ``1 / (1 + e**-x)``, computed stably. Derivative: ``g * s * (1 - s)``."""
    return dispatch.unary(SIGMOID, input)


@public(RELU)
def relu(input):
    """``max(x, 0)`` (nan stays nan). Derivative: ``g`` where the output is positive, else 0."""
    return dispatch.unary(RELU, input)


@public(ABS)
def abs(input):  # noqa: A001 - NumPy's name
    """Absolute value. Derivative: ``g * sign(x)`` (0 at 0 and at nan, like PyTorch). Complex
    ``x``: the modulus, ``ops.complex.abs`` (derivative ``g z / |z|``)."""
    if isinstance(input, dispatch.Tensor) and input._data.dtype.kind == "c":
        # the modulus row of ops/complex.py (which builds on this module), from the registry
        return dispatch.composite(OPS["abs_complex"], input)
    return dispatch.unary(ABS, input)


@public(SQRT)
def sqrt(input):
    """Square root (nan below 0). Derivative: ``g / (2 sqrt(x))``."""
    return dispatch.unary(SQRT, input)


@public(RSQRT)
def rsqrt(input):
    """Reciprocal square root ``r = 1 / sqrt(x)`` (inf at 0, nan below 0). Derivative:
    ``-g r^3 / 2``."""
    return dispatch.unary(RSQRT, input)


@public(SIGN)
def sign(input):
    """-1, 0 or 1 by the sign of ``x`` (nan stays nan). Derivative: 0."""
    return dispatch.unary(SIGN, input)


@public(RECIPROCAL)
def reciprocal(input):
    """``1 / x``. Derivative: ``-g / x**2`` (``-g * result**2``)."""
    return dispatch.unary(RECIPROCAL, input)


# --- logit: the whole op in one place (bodies, row, public function) ---------------------------
def _logit(x, low, high):
    # clamped to [low, high] (the infinities when no eps is given: no clamp); nan stays nan
    z = low if x < low else (high if x > high else x)
    return smath.log(z / (1.0 - z))


def _logit_dx(g, x, result, low, high):
    # PyTorch's rule: nan where the value is (x outside [0, 1] without eps, or nan), 0 where
    # the input was clamped away, else g / (x (1 - x))
    inside = smath.where(x < low, 0.0, smath.where(x > high, 0.0, g / (x * (1.0 - x))))
    return smath.where(result != result, result, inside)


LOGIT = def_elementwise("logit", "LogitBackward0", ("x",), _logit, {"x": _logit_dx},
                        attrs=("low", "high"), dtype_rule="float", method=True, export=True)


@public(LOGIT)
def logit(input, eps=None):
    """Log-odds ``log(z / (1 - z))`` with ``z = clamp(x, eps, 1 - eps)`` (``z = x`` when ``eps``
    is None: nan outside [0, 1], -inf and inf at 0 and 1), as ``torch.logit``. Derivative:
    ``g / (x (1 - x))`` where ``eps <= x <= 1 - eps``, 0 where ``x`` was clamped (nan where
    the value is nan)."""
    if eps is None:
        return dispatch.elementwise(LOGIT, input, low=-math.inf, high=math.inf)
    eps = float(eps)
    return dispatch.elementwise(LOGIT, input, low=eps, high=1.0 - eps)


# --- copies and dtype conversion (composite rows) -------------------------------------------
def _clone_forward(ctx, x):
    return pool.copy(x)


def _clone_backward(ctx, g):
    return (g,)


def _cast_forward(ctx, x, dtype):
    if x.dtype.kind == "c" and dtype.np.kind != "c":
        # complex -> real keeps the real part (no ComplexWarning): this is also how a complex
        # gradient reaching a real input becomes real (Note [complex support], ops/core/operands.py)
        x = x.real
    return x.astype(dtype.np)


def _cast_backward(ctx, g):
    return (cast(g, ctx._next_meta[0][1]),)  # back to the input's recorded dtype


CLONE = def_composite("clone", "CloneBackward0", ("x",), _clone_forward, _clone_backward,
                      jvp=LINEAR, batch_rule=lambda args, batched: clone(args[0]),
                      cuda_forward=unary_cuda.clone_forward, export=True, complex_ok=True)
CAST = def_composite("cast", "ToCopyBackward0", ("x",), _cast_forward, _cast_backward,
                     attrs=("dtype",), jvp=LINEAR,
                     batch_rule=lambda args, batched, dtype: cast(args[0], dtype),
                     cuda_forward=_cast_forward, complex_ok=True)


def _to_device_forward(ctx, x, device):
    ctx.source = dispatch.device_of(x)
    return dispatch.move(x, device)


def _to_device_backward(ctx, g):
    return to_device(g, ctx.source)


TO_DEVICE = def_composite("to_device", "ToCopyBackward0", ("x",), _to_device_forward,
                          _to_device_backward, attrs=("device",), jvp=LINEAR,
                          cuda_forward=_to_device_forward, complex_ok=True)


def to_device(x, device):
    """``x`` copied to ``device`` (``"cpu"`` or ``"cuda:N"``); d/dx moves the gradient back."""
    return dispatch.composite(TO_DEVICE, x, device=str(device))


@public(CLONE)
def clone(input):
    """A copy with its own storage. Derivative: ``g``."""
    return dispatch.composite(CLONE, input)


def cast(x, dtype):
    """Convert to ``dtype`` (a copy; complex to real keeps the real part). Derivative: ``g``
    converted back to the input's dtype (the real part of ``g`` for a real input cast to
    complex, as PyTorch)."""
    if x.dtype is dtype:
        return x
    return dispatch.composite(CAST, x, dtype=dtype)
