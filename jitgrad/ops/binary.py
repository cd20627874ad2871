"""Elementwise binary and ternary ops with NumPy broadcasting.

Derivative bodies return the gradient at the broadcast output shape; the engine sums it down to
each input's shape (Note [broadcast reduction]).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes

from .core import dispatch
from .core import smath
from .core.bodies import negate, passthrough
from .core.registry import OPS, def_elementwise, public


# --- scalar bodies -------------------------------------------------------------------------
def _add(x, y):
    return x + y


def _sub(x, y):
    return x - y


def _mul(x, y):
    return x * y


def _mul_dx(g, y):
    return g * y


def _mul_dy(g, x):
    return g * x


def _div(x, y):
    return x / y


def _div_dx(g, y):
    return g / y


def _div_dy(g, x, y):
    # -x / y**2 as PyTorch evaluates it, (x / y) / y: y * y would overflow (inf / inf = nan at
    # x = inf, y = max) or underflow (0 / 0 = nan at x = 0, y = tiny) where the value is not
    return -g * ((x / y) / y)


def _pow(x, y):
    return x ** y


# Note [masked gradients]: a gradient is masked with ``where(cond, 0.0, ...)``, never by
# multiplying with 0 or a boolean, since an inf gradient times 0 would turn into nan where
# PyTorch gives 0 (e.g. relu followed by sqrt at 0).
def _pow_dx(g, x, y):
    # d/dx x**y = y x**(y-1); PyTorch defines it as 0 where y == 0 (also at x == 0)
    return smath.where(y == 0.0, 0.0, g * (y * x ** (y - 1.0)))


def _pow_dy(g, x, y, result):
    # d/dy x**y = x**y log x; PyTorch takes it as 0 where x == 0 and y >= 0 (the limit there)
    return g * smath.where((x == 0.0) * (y >= 0.0), 0.0, result * smath.log(x))


def _pow_scalar(x, exponent):
    return x ** exponent


def _pow_scalar_dx(g, x, exponent):
    # PyTorch: exponent * x.pow(exponent - 1), that pow being Tensor ** scalar again, which is
    # sqrt for 0.5 and 1 / sqrt for -0.5: these differ from C's pow at -inf (nan, not inf and
    # 0) and at -0 (-0 and -inf, not +0 and +inf). So the derivative of x**1.5 is nan at -inf,
    # that of x**0.5 nan at -inf and -inf at -0, as PyTorch's. (One body: the kernels' source
    # hash covers only the body, so no helper function.)
    e = exponent - 1.0
    # (sqrt outside the branches: Numba's SSA pass warns about smath.sqrt inlined in one)
    root = smath.sqrt(x)
    power = root if e == 0.5 else (1.0 / root if e == -0.5 else x ** e)
    return smath.where(exponent == 0.0, 0.0, g * (exponent * power))


# Note [small integer powers]: x**2 and x**3 are products, not libm ``pow`` calls, which do not
# vectorise and are many times slower (docs/design.md, 'Measurements behind the code'). x*x
# equals the correctly rounded pow(x, 2) exactly; x*x*x rounds twice (within 1 ulp), as
# PyTorch's own cube path does. Same node (PowBackward0).
def _square(x, exponent):
    return x * x


def _square_dx(g, x, exponent):
    return g * (x + x)


def _cube(x, exponent):
    return x * x * x


def _cube_dx(g, x, exponent):
    return g * (3.0 * (x * x))


def _root(x, exponent):
    # x**0.5 is sqrt(x), as NumPy and PyTorch compute it: nan at -inf (libm's pow gives +inf)
    # and -0.0 at -0.0; the derivative stays PowBackward0's (_pow_scalar_dx)
    return smath.sqrt(x)


def _rpow(x, base):
    return base ** x


def _rpow_dx(g, x, result, base):
    return g * smath.where((base == 0.0) * (x >= 0.0), 0.0, result * smath.log(base))


def _rsub(x, other):
    return other - x


def _maximum(x, y):
    if x != x or y != y:  # nan propagates, like NumPy and PyTorch
        return x + y
    return x if x >= y else y


def _maximum_dx(g, x, y):
    # PyTorch: split evenly on ties, 0 where x < y (nan compares false: the gradient passes)
    return smath.where(x < y, 0.0, smath.where(x == y, g * 0.5, g))


def _maximum_dy(g, x, y):
    return smath.where(x > y, 0.0, smath.where(x == y, g * 0.5, g))


def _minimum(x, y):
    if x != x or y != y:
        return x + y
    return x if x <= y else y


def _minimum_dx(g, x, y):
    return smath.where(x > y, 0.0, smath.where(x == y, g * 0.5, g))


def _minimum_dy(g, x, y):
    return smath.where(x < y, 0.0, smath.where(x == y, g * 0.5, g))


def _where(condition, x, y):
    return x if condition else y


def _where_dx(g, condition):
    return smath.where(condition, g, 0.0)


def _where_dy(g, condition):
    return smath.where(condition, 0.0, g)


def _clamp(x, min, max):  # noqa: A002 - PyTorch's argument names
    # min(max(x, min), max), as PyTorch and np.clip: ``max`` everywhere when min > max. The
    # bound itself, never ``min + 0 * x``: 0 * inf is nan, and clamp(inf, 0, 1) is 1
    if x < min:
        x = min
    if x > max:
        return max
    return x


def _clamp_dx(g, x, min, max):  # noqa: A002
    return smath.where((x >= min) * (x <= max), g, 0.0)


def _lt(x, y):
    return x < y


def _le(x, y):
    return x <= y


def _gt(x, y):
    return x > y


def _ge(x, y):
    return x >= y


def _eq(x, y):
    return x == y


def _ne(x, y):
    return x != y


def _logical_and(x, y):
    return bool(x) and bool(y)


def _logical_or(x, y):
    return bool(x) or bool(y)


# --- rows ----------------------------------------------------------------------------------
XY = ("x", "y")
# holomorphic=True: these also run on complex tensors, with PyTorch's conj(f'(z)) convention
# (Note [complex support] in ops/core/operands.py)
ADD = def_elementwise("add", "AddBackward0", XY, _add, {"x": passthrough, "y": passthrough},
                      holomorphic=True, method=True, inplace=True, export=True)
SUB = def_elementwise("sub", "SubBackward0", XY, _sub, {"x": passthrough, "y": negate},
                      holomorphic=True, method=("sub", "subtract"), inplace=True, export=("sub", "subtract"))
MUL = def_elementwise("mul", "MulBackward0", XY, _mul, {"x": _mul_dx, "y": _mul_dy},
                      holomorphic=True, method=("mul", "multiply"), inplace=True, export=("mul", "multiply"))
DIV = def_elementwise("div", "DivBackward0", XY, _div, {"x": _div_dx, "y": _div_dy},
                      dtype_rule="float", holomorphic=True,
                      method=("div", "divide", "true_divide"), inplace=True,
                      export=("div", "divide", "true_divide"))
POW = def_elementwise("pow", "PowBackward1", XY, _pow, {"x": _pow_dx, "y": _pow_dy},
                      method=True, export=True)
POW_SCALAR = def_elementwise("pow_scalar", "PowBackward0", ("x",), _pow_scalar,
                             {"x": _pow_scalar_dx}, attrs=("exponent",))
POW_SQUARE = def_elementwise("pow_square", "PowBackward0", ("x",), _square, {"x": _square_dx},
                             attrs=("exponent",), holomorphic=True)
POW_CUBE = def_elementwise("pow_cube", "PowBackward0", ("x",), _cube, {"x": _cube_dx},
                           attrs=("exponent",))
POW_ROOT = def_elementwise("pow_root", "PowBackward0", ("x",), _root, {"x": _pow_scalar_dx},
                           attrs=("exponent",))
_POW_BY_EXPONENT = {2: POW_SQUARE, 3: POW_CUBE, 0.5: POW_ROOT}
RPOW = def_elementwise("rpow", "PowBackward2", ("x",), _rpow, {"x": _rpow_dx}, attrs=("base",))
RSUB = def_elementwise("rsub", "RsubBackward1", ("x",), _rsub, {"x": negate}, attrs=("other",),
                       holomorphic=True)
MAXIMUM = def_elementwise("maximum", "MaximumBackward0", XY, _maximum,
                          {"x": _maximum_dx, "y": _maximum_dy},
                          method=True, inplace=True, export=True)
MINIMUM = def_elementwise("minimum", "MinimumBackward0", XY, _minimum,
                          {"x": _minimum_dx, "y": _minimum_dy},
                          method=True, inplace=True, export=True)
WHERE = def_elementwise("where", "WhereBackward0", ("condition", "x", "y"), _where,
                        {"x": _where_dx, "y": _where_dy}, export=True)
CLAMP = def_elementwise("clamp", "ClampBackward1", ("x",), _clamp, {"x": _clamp_dx},
                        attrs=("min", "max"), method=("clamp", "clip"), export=("clamp", "clip"))
# the comparisons' PyTorch names (Tensor methods, their in-place forms ``lt_``..., top-level
# functions); logical_and/logical_or are _torch_functions.py's
_TORCH_NAMES = {"lt": ("lt", "less"), "le": ("le", "less_equal"), "gt": ("gt", "greater"),
                "ge": ("ge", "greater_equal"), "eq": "eq", "ne": ("ne", "not_equal")}
COMPARISONS = {name: def_elementwise(name, name, XY, body, dtype_rule="bool",
                                     method=_TORCH_NAMES.get(name),
                                     inplace=True if name in _TORCH_NAMES else None,
                                     export=_TORCH_NAMES.get(name)) for name, body in (
    ("lt", _lt), ("le", _le), ("gt", _gt), ("ge", _ge), ("eq", _eq), ("ne", _ne),
    ("logical_and", _logical_and), ("logical_or", _logical_or))}


# --- public functions ----------------------------------------------------------------------
@public(ADD)
def add(input, other, alpha=1):
    """``x + alpha * y``. Derivatives: ``g`` and ``alpha * g``."""
    return dispatch.binary(ADD, input, other if alpha == 1 else mul(other, alpha))


@public(SUB)
def sub(input, other, alpha=1):
    """``x - alpha * y``. Derivatives: ``g`` and ``-alpha * g``."""
    return dispatch.binary(SUB, input, other if alpha == 1 else mul(other, alpha))


def rsub(x, other):
    """``other - x`` for a Python number ``other`` (what ``3 - x`` records, as PyTorch).
    Derivative: ``-g``."""
    return dispatch.elementwise(RSUB, x, other=other)


@public(MUL)
def mul(input, other):
    """``x * y``. Derivatives: ``g * y`` and ``g * x``."""
    return dispatch.binary(MUL, input, other)


@public(DIV)
def div(input, other, *, rounding_mode=None):
    """True division ``input / other``. Derivatives: ``g / other`` and ``-g input / other**2``.

    ``rounding_mode="trunc"`` / ``"floor"``: the quotient rounded towards zero / down (the
    ``trunc`` / ``floor`` row on the quotient: derivative 0, as PyTorch's), in the promoted
    dtype of the operands (integers stay integers)."""
    if rounding_mode is None:
        return dispatch.binary(DIV, input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    quotient = dispatch.elementwise(OPS[rounding_mode], dispatch.binary(DIV, input, other))
    dt = dtypes.result_type(*(v._data if isinstance(v, dispatch.Tensor) else v
                              for v in (input, other)))
    return quotient if dt.is_floating_point else dispatch.composite(OPS["cast"], quotient, dtype=dt)


@public(POW)
def pow(input, exponent):  # noqa: A001 - NumPy's and PyTorch's name
    """``x ** y`` for Tensor/scalar ``x`` and ``y``.

    Derivatives: ``g y x**(y-1)`` (0 where y == 0) and ``g x**y log x`` (0 where x == 0).
    Tensor**scalar records ``PowBackward0``, Tensor**Tensor ``PowBackward1`` and scalar**Tensor
    ``PowBackward2``, as PyTorch.
    """
    x_t, y_t = isinstance(input, dispatch.Tensor), isinstance(exponent, dispatch.Tensor)
    if (x_t and input._data.dtype.kind in "biu" and type(exponent) is int and exponent < 0):
        raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
    if x_t and not y_t and type(exponent) in (int, float):
        return dispatch.elementwise(_POW_BY_EXPONENT.get(exponent, POW_SCALAR), input,
                                    exponent=exponent)
    if y_t and not x_t and type(input) in (int, float):
        return dispatch.elementwise(RPOW, exponent, base=input)
    return dispatch.binary(POW, input, exponent)


@public(MAXIMUM)
def maximum(input, other):
    """Elementwise maximum (nan propagates). The gradient is split evenly on ties."""
    return dispatch.binary(MAXIMUM, input, other)


@public(MINIMUM)
def minimum(input, other):
    """Elementwise minimum (nan propagates). The gradient is split evenly on ties."""
    return dispatch.binary(MINIMUM, input, other)


@public(WHERE)
def where(condition, input, other):
    """``x`` where ``condition`` else ``y``. Derivatives: ``g`` masked by the condition."""
    return dispatch.elementwise(WHERE, condition, input, other)


@public(CLAMP)
def clamp(input, min=None, max=None):  # noqa: A002
    """Clamp into ``[min, max]`` (either may be None). Derivative: ``g`` inside, 0 outside.

    Tensor bounds are supported through ``maximum``/``minimum``.
    """
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, dispatch.Tensor) or isinstance(max, dispatch.Tensor):
        out = input if min is None else maximum(input, min)
        return out if max is None else minimum(out, max)
    if isinstance(input, dispatch.Tensor) and input._data.dtype.kind in "iu":
        info = np.iinfo(input._data.dtype)  # a missing bound must not promote an int tensor
        lo, hi = info.min, info.max
    else:
        lo, hi = -float("inf"), float("inf")
    return dispatch.elementwise(CLAMP, input, min=lo if min is None else min,
                                max=hi if max is None else max)


def compare(name, x, y):
    """Comparison / logical op ``name`` (lt le gt ge eq ne logical_and logical_or): bool."""
    return dispatch.elementwise(COMPARISONS[name], x, y)


_SYMBOLS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _comparison(name):
    """The public function of the comparison row ``name`` (bool result, no gradient)."""
    op = COMPARISONS[name]

    def comparison(input, other):
        return dispatch.elementwise(op, input, other)

    comparison.__name__ = comparison.__qualname__ = name
    comparison.__doc__ = (f"``input {_SYMBOLS[name]} other`` elementwise (broadcasting), a bool "
                          "tensor; not differentiable.")
    return public(op)(comparison)


lt, le, gt, ge, eq, ne = (_comparison(name) for name in ("lt", "le", "gt", "ge", "eq", "ne"))
