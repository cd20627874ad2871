"""Elementwise rows of the NumPy namespace: inverse trig and hyperbolic functions, exp2/log2/log10,
cbrt, sinc, rounding (floor ceil trunc rint), and arctan2 hypot logaddexp logaddexp2 remainder
fmod copysign.

Ordinary elementwise rows (``registry.def_elementwise``): scalar forward and derivative bodies,
so each gets the CPU kernels, CUDA, fused backward, ``create_graph`` (the derivative bodies run
on Tensors), jvp and vmap from the one mechanism. The scalar math goes through ``ops.smath``.

Result dtypes are NumPy's own (``_numpy_dtype``): ``floor`` of an integer stays an integer,
``arcsin`` of an int8 is float16 and of an int64 float64, ``sinc`` of any integer float64,
``remainder``/``fmod`` of integers are integer operations.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..kernels.cpu import elementwise as cpu
from .core import dispatch
from .core import smath
from .core.bodies import passthrough
from .core.registry import def_elementwise, public
from .unary import zero_dx

LN2 = math.log(2.0)
LN10 = math.log(10.0)
LOG2E = 1.0 / LN2


def _numpy_dtype(np_fn, n_args):
    """A row's dtype rule: the dtype NumPy's ``np_fn`` gives for operands of the (promoted)
    dtype, asked once per dtype. Complex dtypes are returned as they are, for the row's
    complex check to reject."""
    cache = {}

    def rule(dt):
        found = cache.get(dt)
        if found is None:
            if dt.is_complex:
                return dt
            with np.errstate(all="ignore"):
                res = np.asarray(np_fn(*[np.ones(1, dt.np)] * n_args))
            found = cache[dt] = dtypes.to_dtype(res.dtype)
        return found

    return rule


# --- unary bodies --------------------------------------------------------------------------
def _arcsin(x):
    return smath.arcsin(x)  # nan outside [-1, 1]


def _arcsin_dx(g, x):
    return g / smath.sqrt(1.0 - x * x)


def _arccos(x):
    return smath.arccos(x)


def _arccos_dx(g, x):
    return -g / smath.sqrt(1.0 - x * x)


def _arctan(x):
    return smath.arctan(x)


def _arctan_dx(g, x):
    return g / (1.0 + x * x)


def _arcsinh(x):
    return smath.arcsinh(x)


def _arcsinh_dx(g, x):
    return g / smath.sqrt(x * x + 1.0)


def _arccosh(x):
    return smath.arccosh(x)  # nan below 1


def _arccosh_dx(g, x):
    return g / smath.sqrt(x * x - 1.0)


def _arctanh(x):
    return smath.arctanh(x)  # +-inf at +-1, nan outside


def _arctanh_dx(g, x):
    return g / (1.0 - x * x)


def _exp2(x):
    return smath.exp2(x)


def _exp2_dx(g, result):
    return g * (result * LN2)


def _log2(x):
    return smath.log2(x)


def _log2_dx(g, x):
    return g / (x * LN2)


def _log10(x):
    return smath.log10(x)


def _log10_dx(g, x):
    return g / (x * LN10)


def _cbrt(x):
    return smath.cbrt(x)


def _cbrt_dx(g, result):
    return g / (3.0 * result * result)


def _sinc(x):
    # NumPy's sinc: sin(pi x) / (pi x), 1 at 0 (nan at +-inf: sin(inf) is nan)
    if x == 0:
        return 1.0
    y = smath.pi_times(x)  # in x's precision, as NumPy
    return smath.sin(y) / y


def _sinc_dx(g, x, result):
    # d/dx sinc(x) = (cos(pi x) - sinc(x)) / x, 0 at x = 0; the division reads a safe x there
    # so that neither branch (nor its derivative, under create_graph) divides by zero
    safe = smath.where(x == 0, 1.0, x)
    return smath.where(x == 0, 0.0, g * ((smath.cos(safe * math.pi) - result) / safe))


def _floor(x):
    return smath.floor(x)


def _ceil(x):
    return smath.ceil(x)


def _trunc(x):
    return smath.trunc(x)


def _rint(x):
    return smath.rint(x)  # ties to even


# --- binary bodies -------------------------------------------------------------------------
def _arctan2(y, x):
    return smath.arctan2(y, x)


# x / (x^2 + y^2) as (x / r) / r with r = hypot(y, x): x^2 + y^2 underflows to 0 below 1e-154
# and overflows above 1e154, r does neither. 0 at y = x = 0, as PyTorch (where its x^2 + y^2
# underflows for nonzero operands it gives 0 or nan, the true value is finite: this one)
def _arctan2_dy(g, y, x):
    r = smath.hypot(y, x)
    inv = 1.0 / smath.where(r == 0, 1.0, r)
    return smath.where(r == 0, 0.0, g * ((x * inv) * inv))


def _arctan2_dx(g, y, x):
    r = smath.hypot(y, x)
    inv = 1.0 / smath.where(r == 0, 1.0, r)
    return smath.where(r == 0, 0.0, -(g * ((y * inv) * inv)))


def _hypot(x, y):
    return smath.hypot(x, y)  # inf if either is inf, even with a nan


def _hypot_dx(g, x, result):
    return g * x / result


def _hypot_dy(g, y, result):
    return g * y / result


def _logaddexp(x, y):
    # NumPy's npy_logaddexp: around the larger operand; equal ones (equal infinities too) give
    # x + log 2
    if x == y:
        return x + LN2
    t = x - y
    if t > 0:
        return x + smath.log1p(smath.exp(-t))
    if t <= 0:
        return y + smath.log1p(smath.exp(t))
    return t  # nan


def _logaddexp_dx(g, x, y):
    # PyTorch's 1 / (1 + e^(y - x)): 1 at x = inf (e^(x - result) is e^(inf - inf) = nan) and
    # 1/2 at x = y = max (the rounded result is x there)
    return g / (1.0 + smath.exp(y - x))


def _logaddexp_dy(g, x, y):
    return g / (1.0 + smath.exp(x - y))


def _logaddexp2(x, y):
    # NumPy's npy_logaddexp2
    if x == y:
        return x + 1.0
    t = x - y
    if t > 0:
        return x + LOG2E * smath.log1p(smath.exp2(-t))
    if t <= 0:
        return y + LOG2E * smath.log1p(smath.exp2(t))
    return t


def _logaddexp2_dx(g, x, y):
    return g / (1.0 + smath.exp2(y - x))  # as logaddexp's


def _logaddexp2_dy(g, x, y):
    return g / (1.0 + smath.exp2(x - y))


def _remainder(x, y):
    # NumPy's npy_divmod: C's fmod, moved by y where its sign differs from y's; a zero
    # remainder takes y's sign. Integers: the same steps in integers (0 where y == 0)
    mod = smath.fmod(x, y)
    if y == 0:
        return mod
    if mod != 0:  # (nan too)
        if (y < 0) != (mod < 0):
            mod = mod + y
        return mod
    return smath.copysign(mod, y)


def _remainder_dy(g, x, y):
    # x mod y = x - (x // y) y, with NumPy's floor division (npy_divmod), which PyTorch's
    # derivative uses too: (x - fmod(x, y)) / y, one less where the remainder's sign differs
    # from y's, snapped to an integer; nan where fmod is (x infinite), x / y where y is 0.
    # (floor(x / y) would be inf at x = inf, and -0 at x = max, y = -inf where x // y is -1.)
    mod = smath.fmod(x, y)
    div = (x - mod) / y
    div = smath.where((mod != 0) * ((y < 0) != (mod < 0)), div - 1.0, div)
    quotient = smath.floor(div)
    quotient = smath.where(div - quotient > 0.5, quotient + 1.0, quotient)
    return -(g * smath.where(y == 0, x / y, quotient))


def _fmod(x, y):
    return smath.fmod(x, y)


def _fmod_dy(g, x, y):
    # fmod(x, y) = x - trunc(x / y) y
    return -(g * smath.trunc(x / y))


def _copysign(x, y):
    return smath.copysign(x, y)


def _copysign_dx(g, x, result):
    # 1 where the signs of x and the result agree, -1 where the sign flipped
    return g * (smath.sign(result) * smath.sign(x))


# --- rows ----------------------------------------------------------------------------------
def _row(name, node, inputs, forward, backward, np_fn, ufunc=None, numpy=True, doc="",
         torch=None):
    """The row, and its public function (``jitgrad.numpy.<name>`` and the ``numpy=`` aliases;
    ``torch``: PyTorch's names for it, top-level ``jitgrad`` functions and Tensor methods:
    Note [derived surface] in ops/core/registry.py) with the docstring ``doc``."""
    row = def_elementwise(name, node, inputs, forward, backward,
                          dtype_rule=_numpy_dtype(np_fn, len(inputs)), cpu_ufunc=ufunc,
                          numpy=numpy, export=torch, method=torch)
    if len(inputs) == 1:  # (PyTorch's parameter names: torch.atan2(input, other))
        def function(input):
            return dispatch.elementwise(row, dispatch.tensor_operand(input, name))
    else:
        def function(input, other):
            x, y = dispatch.tensor_operand(input, name), dispatch.tensor_operand(other, name)
            return dispatch.elementwise(row, x, y)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    public(row)(function)
    return row


def _unary_row(name, node, forward, backward, libm=False, numpy=True, doc="", torch=None):
    """``libm``: the forward's smath function has no vmath form (a scalar libm call per
    element), so NumPy's SIMD loop computes large forwards in fast-math mode too (Note [NumPy
    forward] in kernels/cpu/elementwise.py)."""
    np_fn = getattr(np, name)
    ufunc = np_fn if isinstance(np_fn, np.ufunc) else None
    if libm:
        cpu.UFUNCS_WITHOUT_VMATH.add(ufunc)
    return _row(name, node, ("x",), forward, {"x": backward}, np_fn, ufunc, numpy, doc, torch)


UNARY = {row.name: row for row in (
    _unary_row("arcsin", "AsinBackward0", _arcsin, _arcsin_dx, libm=True,
               numpy=("arcsin", "asin"),
               torch=("asin", "arcsin"),
               doc="Inverse sine (nan outside [-1, 1]). Derivative: ``g / sqrt(1 - x^2)``."),
    _unary_row("arccos", "AcosBackward0", _arccos, _arccos_dx, libm=True,
               numpy=("arccos", "acos"),
               torch=("acos", "arccos"),
               doc="Inverse cosine (nan outside [-1, 1]). Derivative: ``-g / sqrt(1 - x^2)``."),
    _unary_row("arctan", "AtanBackward0", _arctan, _arctan_dx, libm=True,
               numpy=("arctan", "atan"),
               torch=("atan", "arctan"),
               doc="Inverse tangent. Derivative: ``g / (1 + x^2)``."),
    _unary_row("arcsinh", "AsinhBackward0", _arcsinh, _arcsinh_dx, libm=True,
               numpy=("arcsinh", "asinh"),
               torch=("asinh", "arcsinh"),
               doc="Inverse hyperbolic sine. Derivative: ``g / sqrt(x^2 + 1)``."),
    _unary_row("arccosh", "AcoshBackward0", _arccosh, _arccosh_dx, libm=True,
               numpy=("arccosh", "acosh"),
               torch=("acosh", "arccosh"),
               doc="Inverse hyperbolic cosine (nan below 1). Derivative: ``g / sqrt(x^2 - 1)``."),
    _unary_row("arctanh", "AtanhBackward0", _arctanh, _arctanh_dx, libm=True,
               numpy=("arctanh", "atanh"),
               torch=("atanh", "arctanh"),
               doc="Inverse hyperbolic tangent (+-inf at +-1). Derivative: ``g / (1 - x^2)``."),
    _unary_row("exp2", "Exp2Backward0", _exp2, _exp2_dx, libm=True,
               torch=True,
               doc="``2**x``. Derivative: ``g 2^x ln 2``."),
    _unary_row("log2", "Log2Backward0", _log2, _log2_dx, libm=True,
               torch=True,
               doc="Base-2 logarithm. Derivative: ``g / (x ln 2)``."),
    _unary_row("log10", "Log10Backward0", _log10, _log10_dx, libm=True,
               torch=True,
               doc="Base-10 logarithm. Derivative: ``g / (x ln 10)``."),
    _unary_row("cbrt", "CbrtBackward0", _cbrt, _cbrt_dx, libm=True,
               doc="Real cube root. Derivative: ``g / (3 cbrt(x)^2)``."),
    _unary_row("sinc", "SincBackward0", _sinc, _sinc_dx,
               torch=True,
               doc="``sin(pi x) / (pi x)`` (1 at 0). Derivative: ``g (cos(pi x) - sinc(x)) / x``, "
                   "0 at 0."),
    # piecewise constant: zero gradients (an inf gradient gives 0, not nan)
    _unary_row("floor", "FloorBackward0", _floor, zero_dx,
               torch=True,
               doc="The largest integer <= x (integers stay integers). Derivative: 0."),
    _unary_row("ceil", "CeilBackward0", _ceil, zero_dx,
               torch=True,
               doc="The smallest integer >= x (integers stay integers). Derivative: 0."),
    _unary_row("trunc", "TruncBackward0", _trunc, zero_dx, numpy=("trunc", "fix"),
               torch=("trunc", "fix"),
               doc="``x`` rounded towards zero (integers stay integers). Derivative: 0."),
    _unary_row("rint", "RoundBackward0", _rint, zero_dx,
               doc="``x`` rounded to the nearest integer, halves to even. Derivative: 0."),
)}

BINARY = {row.name: row for row in (
    # arctan2(y, x): NumPy's argument order
    _row("arctan2", "Atan2Backward0", ("y", "x"), _arctan2,
         {"y": _arctan2_dy, "x": _arctan2_dx}, np.arctan2, numpy=("arctan2", "atan2"),
         torch=("atan2", "arctan2"),
         doc="The angle of the point ``(x, y)``, ``arctan2(y, x)``. Derivatives: "
             "``g x / (x^2 + y^2)`` in y, ``-g y / (x^2 + y^2)`` in x."),
    _row("hypot", "HypotBackward0", ("x", "y"), _hypot, {"x": _hypot_dx, "y": _hypot_dy},
         np.hypot, torch=True,
         doc="``r = sqrt(x^2 + y^2)`` without overflow. Derivatives: ``g x / r``, "
             "``g y / r``."),
    _row("logaddexp", "LogaddexpBackward0", ("x", "y"), _logaddexp,
         {"x": _logaddexp_dx, "y": _logaddexp_dy}, np.logaddexp,
         torch=True,
         doc="``r = log(e^x + e^y)``, computed stably. Derivatives: ``g e^(x - r)``, "
             "``g e^(y - r)``."),
    _row("logaddexp2", "Logaddexp2Backward0", ("x", "y"), _logaddexp2,
         {"x": _logaddexp2_dx, "y": _logaddexp2_dy}, np.logaddexp2,
         torch=True,
         doc="``r = log2(2^x + 2^y)``, computed stably. Derivatives: ``g 2^(x - r)``, "
             "``g 2^(y - r)``."),
    _row("remainder", "RemainderBackward1", ("x", "y"), _remainder,
         {"x": passthrough, "y": _remainder_dy}, np.remainder, numpy=("remainder", "mod"),
         torch=True,
         doc="``x - floor(x / y) y`` (the sign of y, as NumPy). Derivatives: ``g`` in x, "
             "``-g floor(x / y)`` in y."),
    _row("fmod", "FmodBackward1", ("x", "y"), _fmod, {"x": passthrough, "y": _fmod_dy},
         np.fmod, torch=True,
         doc="``x - trunc(x / y) y`` (the sign of x, as C). Derivatives: ``g`` in x, "
             "``-g trunc(x / y)`` in y."),
    _row("copysign", "CopysignBackward0", ("x", "y"), _copysign,
         {"x": _copysign_dx, "y": zero_dx}, np.copysign,
         torch=True,
         doc="``|x|`` with the sign of y. Derivatives: ``g sign(r) sign(x)`` in x, 0 in y."),
)}


# --- public functions ----------------------------------------------------------------------
def unary(name, x):
    """The unary row ``name`` (a key of ``UNARY``) applied to ``x``. Derivatives:
    ``arcsin``/``arccos`` ``+-g / sqrt(1 - x^2)``, ``arctan`` ``g / (1 + x^2)``, ``arcsinh``
    ``g / sqrt(x^2 + 1)``, ``arccosh`` ``g / sqrt(x^2 - 1)``, ``arctanh`` ``g / (1 - x^2)``,
    ``exp2`` ``g 2^x ln 2``, ``log2``/``log10`` ``g / (x ln b)``, ``cbrt`` ``g / (3 cbrt(x)^2)``,
    ``sinc`` ``g (cos(pi x) - sinc(x)) / x`` (0 at 0), rounding 0."""
    return dispatch.elementwise(UNARY[name], dispatch.tensor_operand(x, name))


def binary(name, x, y):
    """The binary row ``name`` (a key of ``BINARY``) applied to ``x`` and ``y`` (broadcasting).
    Derivatives: ``arctan2(y, x)`` ``g x / (x^2 + y^2)`` and ``-g y / (x^2 + y^2)``; ``hypot``
    ``g x / r`` and ``g y / r``; ``logaddexp`` ``g e^(x - r)``; ``logaddexp2`` ``g 2^(x - r)``;
    ``remainder`` (``x - floor(x / y) y``) ``g`` and ``-g floor(x / y)``; ``fmod`` ``g`` and
    ``-g trunc(x / y)``; ``copysign`` ``g sign(r) sign(x)`` and 0."""
    x, y = dispatch.tensor_operand(x, name), dispatch.tensor_operand(y, name)
    return dispatch.elementwise(BINARY[name], x, y)
