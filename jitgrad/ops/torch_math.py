"""PyTorch's arithmetic and special functions that jitgrad lacked (issue 35): ``addcmul``,
``addcdiv``, ``frac``, ``xlogy``, ``fmax``/``fmin``, ``ldexp``, ``frexp``, ``deg2rad`` ... as
rows, and the functions PyTorch composes of other ops (``float_power``, ``addmv``, ``lgamma``,
``logdet``, ``trapezoid`` ...) as compositions (Note [pointwise rows] in ops/torch_common.py).

Integer-valued functions (``gcd``, ``lcm``, ``bitwise_*``, ``signbit``, ``heaviside``,
``nextafter``) have no derivative (PyTorch's raise at backward or are integral): they return
constant tensors computed on the host.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from . import complex as complex_ops
from . import binary, linalg, nplinalg, reduce as _reduce, scipy_special, special, unary
from . import shape as _shape
from . import torch_cuda
from .core import dispatch, methods
from .core.registry import def_composite, public
from .torch_reduce import frexp_result
from .torch_common import (Mask, constant, def_pointwise, floating, host_arrays,
                           result_dtype, tensor)


# --- addcmul / addcdiv ---------------------------------------------------------------------
def _addcmul_fwd(ctx, input, tensor1, tensor2, value):
    dt = np.result_type(input, tensor1, tensor2)
    return np.asarray(input + value * (tensor1 * tensor2)).astype(dt, copy=False)


def _addcdiv_fwd(ctx, input, tensor1, tensor2, value):
    dt = result_dtype(input, tensor1, tensor2)
    return np.asarray(input + value * (tensor1 / tensor2)).astype(dt, copy=False)


ADDCMUL = def_pointwise("addcmul", "AddcmulBackward0", ("input", "tensor1", "tensor2"),
                        _addcmul_fwd,
                        lambda tensor1, tensor2, value: (1.0, value * tensor2, value * tensor1),
                        save=("tensor1", "tensor2"), attrs=("value",))
ADDCDIV = def_pointwise("addcdiv", "AddcdivBackward0", ("input", "tensor1", "tensor2"),
                        _addcdiv_fwd,
                        lambda tensor1, tensor2, value: (
                            1.0, value / tensor2, -value * tensor1 / (tensor2 * tensor2)),
                        save=("tensor1", "tensor2"), attrs=("value",))


@public(ADDCMUL)
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (broadcast). Derivatives: ``g``,
    ``value * tensor2 * g``, ``value * tensor1 * g``."""
    return dispatch.composite(ADDCMUL, tensor(input, "addcmul"), tensor(tensor1, "addcmul"),
                              tensor(tensor2, "addcmul"), value=value)


@public(ADDCDIV)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` (broadcast; true division). Derivatives: ``g``,
    ``value g / tensor2``, ``-value g tensor1 / tensor2^2``."""
    ts = [tensor(a, "addcdiv") for a in (input, tensor1, tensor2)]
    if not any(t.dtype.is_floating_point or t.dtype.is_complex for t in ts[1:]):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. Use addcdiv with float tensors (or torch.div).")
    return dispatch.composite(ADDCDIV, *ts, value=value)


# --- simple pointwise rows -----------------------------------------------------------------
def _frac_fwd(ctx, input):
    input = floating(input)
    return input - np.trunc(input)


FRAC = def_pointwise("frac", "FracBackward0", ("input",), _frac_fwd, lambda: (1.0,), save=())


@public(FRAC)
def frac(input):
    """The fractional part ``x - trunc(x)`` (keeps the sign of ``x``). Derivative: 1."""
    return dispatch.composite(FRAC, tensor(input, "frac"))


_DEG = math.pi / 180.0
DEG2RAD = def_pointwise("deg2rad", "Deg2RadBackward0", ("input",),
                        lambda ctx, input: floating(input) * floating(input).dtype.type(_DEG),
                        lambda: (_DEG,), save=())
RAD2DEG = def_pointwise("rad2deg", "Rad2DegBackward0", ("input",),
                        lambda ctx, input: floating(input) * floating(input).dtype.type(1 / _DEG),
                        lambda: (1 / _DEG,), save=())


@public(DEG2RAD)
def deg2rad(input):
    """Degrees to radians: ``x * pi / 180``. Derivative: ``pi / 180``."""
    return dispatch.composite(DEG2RAD, tensor(input, "deg2rad"))


@public(RAD2DEG)
def rad2deg(input):
    """Radians to degrees: ``x * 180 / pi``. Derivative: ``180 / pi``."""
    return dispatch.composite(RAD2DEG, tensor(input, "rad2deg"))


def _xlogy_fwd(ctx, input, other):
    dt = result_dtype(input, other)
    x, y = input.astype(dt, copy=False), other.astype(dt, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), dt.type(0), out).astype(dt, copy=False)


def _xlogy_partials(input, other):
    # d/dx = log(y) where x != 0 (0 where x == 0, as PyTorch's xlogy(x != 0, y)); d/dy = x / y
    return binary.where(input == 0, 0.0, unary.log(other)), input / other


XLOGY = def_pointwise("xlogy", "XlogyBackward0", ("input", "other"), _xlogy_fwd, _xlogy_partials,
                      save=("input", "other"))


@public(XLOGY)
def xlogy(input, other):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN). Derivatives:
    ``log(y) g`` (0 where ``x == 0``) and ``x g / y``."""
    return dispatch.composite(XLOGY, tensor(input, "xlogy"), tensor(other, "xlogy"))


def _fmax_partials(input, other, kind):
    # the gradient goes to the input that was picked: x where x >= y (fmin: <=) or y is NaN
    keep = binary.compare("ge" if kind == "max" else "le", input, other)
    first = binary.compare("logical_or", keep, binary.compare("ne", other, other))
    return Mask(first), Mask(binary.compare("eq", first, False))


def _fmax_fwd(ctx, input, other, kind):
    return (np.fmax if kind == "max" else np.fmin)(input, other)


FMAX = def_pointwise("fmax", "FmaxBackward0", ("input", "other"), _fmax_fwd, _fmax_partials,
                     save=("input", "other"), attrs=("kind",))
FMIN = def_pointwise("fmin", "FminBackward0", ("input", "other"), _fmax_fwd, _fmax_partials,
                     save=("input", "other"), attrs=("kind",))


@public(FMAX)
def fmax(input, other):
    """Elementwise maximum that ignores NaN (NaN only where both are NaN). Derivative: ``g``
    to the picked input (``input`` on ties)."""
    return dispatch.composite(FMAX, tensor(input, "fmax"), tensor(other, "fmax"), kind="max")


@public(FMIN)
def fmin(input, other):
    """Elementwise minimum that ignores NaN (NaN only where both are NaN). Derivative: ``g``
    to the picked input (``input`` on ties)."""
    return dispatch.composite(FMIN, tensor(input, "fmin"), tensor(other, "fmin"), kind="min")


def _ldexp_fwd(ctx, input, other):
    dt = result_dtype(input, other)
    return (input * np.exp2(other.astype(dt, copy=False))).astype(dt, copy=False)


LDEXP = def_pointwise("ldexp", "LdexpBackward0", ("input", "other"), _ldexp_fwd,
                      lambda input, other, result: (binary.pow(2.0, other), result * math.log(2)),
                      save=("input", "other", "result"))


@public(LDEXP)
def ldexp(input, other):
    """``input * 2**other``. Derivatives: ``2**other g`` and ``log(2) out g``."""
    return dispatch.composite(LDEXP, tensor(input, "ldexp"), tensor(other, "ldexp"))


# --- frexp: (mantissa, exponent) -------------------------------------------------------------
def _frexp_fwd(ctx, input):
    if input.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(input)
    return mantissa, exponent.astype(np.int32)


def _frexp_scale(input, result):
    """``2**-exponent`` as ``mantissa / input`` (exact: a power-of-two scaling), 1 at 0."""
    zero = input == 0
    return binary.where(zero, 1.0, result / binary.where(zero, 1.0, input))


def _frexp_back(ctx, g, g_exponent, input, result):
    return (g * _frexp_scale(input, result),)


def _frexp_jvp(tangents, primals, outs):
    return tangents[0] * _frexp_scale(primals[0], outs[0]), None


FREXP = def_composite("frexp", "FrexpBackward0", ("input",), _frexp_fwd, _frexp_back,
                      save=("input", "result"), n_outputs=2, jvp=_frexp_jvp,
                      cuda_forward=torch_cuda.host_forward(_frexp_fwd),
                      batch_rule=lambda args, batched: dispatch.composite(FREXP, args[0]),
                      method=True, export=True)


@public(FREXP)
def frexp(input):
    """``(mantissa, exponent)`` with ``input = mantissa * 2**exponent`` and ``0.5 <= |mantissa|
    < 1`` (int32 exponent). Derivative of the mantissa: ``g / 2**exponent``."""
    return frexp_result(*dispatch.composite(FREXP, tensor(input, "frexp")))


# --- functions without a derivative: constants computed on the host -------------------------
def _integers(name, kinds, *operands):
    """The operands' values on the host, checked to be of the integer (or bool) ``kinds``."""
    arrays = host_arrays(name, *operands)
    for a in arrays:
        if a.dtype.kind not in kinds:
            raise RuntimeError(f"\"{name}_cpu\" not implemented for "
                               f"'{dispatch.scalar_type_name(a.dtype)}' (expected integral "
                               "or bool tensors)")
    return arrays


def _integral(name, fn, doc, kinds="biu", unary_op=False):
    """The public function ``name`` computing ``fn`` of integer operands on the host."""
    if unary_op:
        def function(input):
            return constant(fn(*_integers(name, kinds, input)), input)
    else:
        def function(input, other):
            return constant(fn(*_integers(name, kinds, input, other)), input)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


gcd = _integral("gcd", np.gcd, "The greatest common divisor, elementwise (integers; no "
                "gradient); ``gcd(0, 0) = 0``.", kinds="iu")
lcm = _integral("lcm", np.lcm, "The least common multiple, elementwise (integers; no "
                "gradient).", kinds="iu")
bitwise_and = _integral("bitwise_and", np.bitwise_and, "Bitwise AND of integer or bool "
                        "tensors (logical AND for bool; no gradient).")
bitwise_or = _integral("bitwise_or", np.bitwise_or, "Bitwise OR of integer or bool tensors "
                       "(no gradient).")
bitwise_xor = _integral("bitwise_xor", np.bitwise_xor, "Bitwise XOR of integer or bool "
                        "tensors (no gradient).")
bitwise_not = _integral("bitwise_not", np.invert, "Bitwise NOT of an integer or bool tensor "
                        "(logical NOT for bool; no gradient).", unary_op=True)
bitwise_left_shift = _integral("bitwise_left_shift", np.left_shift,
                               "``input << other`` of integer tensors (no gradient).", kinds="iu")
bitwise_right_shift = _integral("bitwise_right_shift", np.right_shift,
                                "``input >> other`` (arithmetic shift; no gradient).", kinds="iu")


def signbit(input):
    """Whether the sign bit is set (True for -0.0 and negative numbers; bool, no gradient)."""
    (a,) = host_arrays("signbit", input)
    return constant(np.signbit(a), input)


def heaviside(input, values):
    """The step function: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where
    ``input > 0`` (no gradient: PyTorch's derivative is not implemented)."""
    x, v = host_arrays("heaviside", input, values)
    if x.dtype != v.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes: {dispatch.scalar_type_name(x.dtype)} and "
                           f"{dispatch.scalar_type_name(v.dtype)}")
    return constant(np.heaviside(x, v).astype(x.dtype), input)


def nextafter(input, other):
    """The next float after ``input`` towards ``other`` (no gradient: PyTorch's derivative
    is not implemented)."""
    x, y = host_arrays("nextafter", input, other)
    return constant(np.nextafter(x, y), input)


# --- compositions --------------------------------------------------------------------------
def float_power(input, exponent):
    """``input ** exponent`` computed in double precision (complex128 if either is complex),
    as the ``pow`` row (derivatives ``y x^(y-1) g`` and ``log(x) x^y g``)."""
    x = tensor(input, "float_power")
    complex_ = x.dtype.is_complex or (isinstance(exponent, builtins.complex) or (
        isinstance(exponent, dispatch.Tensor) and exponent.dtype.is_complex))
    target = "complex128" if complex_ else "float64"
    from ..dtypes import to_dtype

    x = unary.cast(x, to_dtype(target)) if str(x.dtype) != target else x
    if isinstance(exponent, dispatch.Tensor) and str(exponent.dtype) != target:
        exponent = unary.cast(exponent, to_dtype(target))
    return binary.pow(x, exponent)


def sgn(input):
    """The sign: ``sign(x)`` for real tensors, ``z / |z|`` (0 at 0) for complex ones.
    Derivative: 0 for real tensors."""
    x = tensor(input, "sgn")
    if not x.dtype.is_complex:
        return unary.sign(x)
    magnitude = unary.abs(x)
    return binary.where(magnitude == 0, 0.0, x / magnitude)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``. Derivatives: ``-alpha g`` and ``g``."""
    return binary.sub(tensor(other, "rsub"), input, alpha=alpha)


def lgamma(input):
    """``log|Gamma(x)|`` (the ``gammaln`` row). Derivative: ``digamma(x)``."""
    return special.gammaln(input)


def digamma(input):
    """``psi(x) = d/dx log Gamma(x)`` (the ``digamma`` row). Derivative: ``polygamma(1, x)``."""
    return special.digamma(input)


def polygamma(n, input):
    """The ``n``-th derivative of ``digamma`` (the ``polygamma`` row). Derivative:
    ``polygamma(n + 1, x)``."""
    return special.polygamma(n, input)


def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_{i=0}^{p-1} lgamma(x - i / 2)``, NaN where an element is
    not greater than ``(p - 1) / 2`` (PyTorch raises there; a NaN needs no host read).
    Derivative: ``sum_i digamma(x - i / 2)``."""
    x = tensor(input, "mvlgamma")
    out = special.gammaln(x)
    for i in range(1, int(p)):
        out = out + special.gammaln(x - i / 2)
    out = out + p * (p - 1) / 4 * math.log(math.pi)
    return binary.where(x > (p - 1) / 2, out, math.nan)


def erfc(input):
    """``1 - erf(x)`` (SciPy's, accurate in the tail). Derivative: ``-2 / sqrt(pi) e^{-x^2}``."""
    return scipy_special.unary_row(scipy_special.ERFC, input)


def erfinv(input):
    """The inverse of ``erf`` on (-1, 1). Derivative: ``sqrt(pi) / 2 e^{erfinv(x)^2}``."""
    return scipy_special.unary_row(scipy_special.ERFINV, input)


def i0(input):
    """The modified Bessel function of the first kind, order 0. Derivative: ``i1(x)``."""
    return scipy_special.unary_row(scipy_special.I0, input)


def igamma(input, other):
    """The regularized lower incomplete gamma function ``P(input, other)``. Derivative in
    ``other``: ``other^(a-1) e^-other / Gamma(a)``; none in ``input`` (as PyTorch)."""
    return scipy_special.incomplete(scipy_special.GAMMAINC, "igamma", other, input=input)


def igammac(input, other):
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P``.
    Derivative in ``other``: ``-other^(a-1) e^-other / Gamma(a)``; none in ``input``."""
    return scipy_special.incomplete(scipy_special.GAMMAINCC, "igammac", other, input=input)


def logdet(input):
    """``log det(A)`` (batched): NaN for a negative determinant, -inf for a singular matrix.
    Derivative: ``g A^-T`` (through ``slogdet``)."""
    sign, logabs = nplinalg.slogdet(tensor(input, "logdet"))
    return binary.where(sign < 0, math.nan, logabs)


def _scaled(t, factor):
    return t if factor == 1 else t * factor


def _add_product(name, input, product, beta, alpha):
    """``beta * input + alpha * product``; with ``beta == 0`` the input is ignored (NaN too),
    as PyTorch."""
    if beta == 0:
        out = _scaled(product, alpha)
        shape = np.broadcast_shapes(tuple(tensor(input, name).shape), tuple(out.shape))
        return out if tuple(out.shape) == shape else _shape.expand(out, shape)
    return _scaled(tensor(input, name), beta) + _scaled(product, alpha)


def _check_dims(name, **tensors):
    for arg, (t, ndim) in tensors.items():
        if t.ndim != ndim:
            raise RuntimeError(f"{name}: {arg} must be a {ndim}-D tensor, got {t.ndim}-D "
                               f"(shape {tuple(t.shape)})")


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` (``mat`` 2-D, ``vec`` 1-D). Derivatives: those
    of ``matmul`` and the scaled sum."""
    mat, vec = tensor(mat, "addmv"), tensor(vec, "addmv")
    _check_dims("addmv", mat=(mat, 2), vec=(vec, 1))
    return _add_product("addmv", input, linalg.matmul(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (1-D vectors)."""
    vec1, vec2 = tensor(vec1, "addr"), tensor(vec2, "addr")
    _check_dims("addr", vec1=(vec1, 1), vec2=(vec2, 1))
    outer = _shape.unsqueeze(vec1, 1) * _shape.unsqueeze(vec2, 0)
    return _add_product("addr", input, outer, beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` per batch (3-D ``batch1``, ``batch2``)."""
    b1, b2 = tensor(batch1, "baddbmm"), tensor(batch2, "baddbmm")
    _check_dims("baddbmm", batch1=(b1, 3), batch2=(b2, 3))
    return _add_product("baddbmm", input, linalg.matmul(b1, b2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]`` (3-D batches, 2-D result)."""
    b1, b2 = tensor(batch1, "addbmm"), tensor(batch2, "addbmm")
    _check_dims("addbmm", batch1=(b1, 3), batch2=(b2, 3))
    return _add_product("addbmm", input, _reduce.sum(linalg.matmul(b1, b2), 0), beta, alpha)


def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` rescaled so its ``p``-norm is at most ``maxnorm``: slices with
    a larger norm are multiplied by ``maxnorm / (norm + 1e-7)``, the others kept. The
    gradient flows through the norm as PyTorch's."""
    x = tensor(input, "renorm")
    d = _shape.wrap_dim("renorm", dim, x.ndim)
    others = tuple(i for i in range(x.ndim) if i != d)
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (got p={p})")
    norm = _reduce.sum(unary.abs(x) ** p, others, keepdim=True) ** (1.0 / p)
    factor = binary.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return x * factor


def _trapezoid_dx(y, x, dx, dim):
    d = _shape.wrap_dim("trapezoid", dim, y.ndim)
    n = y.shape[d]
    lo = _shape.narrow(y, d, 0, n - 1)
    hi = _shape.narrow(y, d, 1, n - 1)
    if x is None:
        return (lo + hi) * (0.5 * dx), d
    x = tensor(x, "trapezoid")
    if x.ndim == 1:
        spacing = x[1:] - x[:-1]
        spacing = _shape.reshape(spacing, (-1,) + (1,) * (y.ndim - d - 1))
    else:
        xd = _shape.wrap_dim("trapezoid", dim, x.ndim)
        spacing = (_shape.narrow(x, xd, 1, x.shape[xd] - 1)
                   - _shape.narrow(x, xd, 0, x.shape[xd] - 1))
    return (lo + hi) * spacing * 0.5, d


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: ``sum_i (y_i + y_{i+1}) / 2 * (x_{i+1} - x_i)``
    (spacing ``dx``, default 1, when ``x`` is not given). Linear in ``y``."""
    y = tensor(y, "trapezoid")
    if x is not None and dx is not None:
        raise TypeError("trapezoid: pass either x or dx, not both")
    pieces, d = _trapezoid_dx(y, x, 1.0 if dx is None else dx, dim)
    return _reduce.sum(pieces, d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid`` (NumPy's older name, kept by PyTorch)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along ``dim`` (one element shorter than ``y`` there):
    ``cumsum`` of the trapezoids. Linear in ``y``."""
    from .npfuncs import cumsum

    y = tensor(y, "cumulative_trapezoid")
    pieces, d = _trapezoid_dx(y, x, 1.0 if dx is None else dx, dim)
    return cumsum(pieces, d)


# --- complex numbers (the rows of ops/complex.py) -------------------------------------------
def real(input):
    """The real part (a real tensor itself for real input). Derivative: ``g`` as the real part."""
    return complex_ops.real(input)


def imag(input):
    """The imaginary part of a complex tensor. Derivative: ``i g``."""
    return complex_ops.imag(input)


def conj(input):
    """The complex conjugate (the input itself when real)."""
    return complex_ops.conj(input)


def conj_physical(input):
    """The complex conjugate, computed (``conj``; jitgrad has no lazy conjugate bit)."""
    return complex_ops.conj(input)


def angle(input):
    """The argument ``atan2(imag, real)`` (``pi`` for negative reals, 0 otherwise)."""
    return complex_ops.angle(input)


def complex(real, imag):  # noqa: A001 - PyTorch's name
    """``real + i imag`` of two real tensors of the same float dtype (complex64 from
    float32, complex128 from float64). Derivatives: ``Re g`` and ``Im g``."""
    re, im = tensor(real, "complex"), tensor(imag, "complex")
    if re.dtype != im.dtype or not re.dtype.is_floating_point:
        raise RuntimeError(f"complex(): expected both inputs to be the same floating dtype, "
                           f"got {re.dtype} and {im.dtype}")
    return re + im * 1j


def polar(abs, angle):  # noqa: A002 - PyTorch's names
    """``abs (cos angle + i sin angle)``. Derivatives through ``cos`` and ``sin``."""
    r, theta = tensor(abs, "polar"), tensor(angle, "polar")
    return complex(r * unary.cos(theta), r * unary.sin(theta))


FUNCTIONS = (real, imag, conj, conj_physical, angle, complex, polar, gcd, lcm, bitwise_and,
             bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift, bitwise_right_shift,
             signbit, heaviside, nextafter, float_power, sgn, rsub, lgamma, digamma, polygamma,
             mvlgamma, erfc, erfinv, i0, igamma, igammac, logdet, addmv, addr, baddbmm, addbmm,
             renorm, trapezoid, trapz, cumulative_trapezoid)
_NOT_METHODS = (real, imag, conj, angle, complex, polar, rsub, trapezoid, trapz,
                cumulative_trapezoid)


def _polygamma_method(self, n):
    """``Tensor.polygamma(n)``: ``polygamma(n, self)``."""
    return polygamma(n, self)


methods.declare({**{fn.__name__: fn for fn in FUNCTIONS if fn not in _NOT_METHODS},
                 "polygamma": _polygamma_method}, __name__)
