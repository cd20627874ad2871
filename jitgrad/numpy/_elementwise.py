"""Elementwise functions of ``jitgrad.numpy``: the registry rows' NumPy names (``sin``, ``exp``,
``arctan2``...: one wrapper per row, Note [derived surface] in ops/core/registry.py), the
arithmetic and comparison operators (``add``, ``less``...: the Tensor operators), ``maximum``/
``minimum``/``fmax``/``fmin``, ``clip``, ``where``, rounding, complex parts (``real``, ``imag``,
``angle``, ``conj``), ``astype`` and ``nan_to_num``. Python scalars next to a Tensor follow
NumPy 2's weak-scalar rule (``_weak_pair``)."""
from __future__ import annotations

import builtins as _builtins
import math as _math

import numpy as _np

from ..ops import binary as _binary_ops
from ..ops import complex as _complex_ops
from ..ops import npfuncs as _npfuncs
from ..ops import unary as _unary_ops
from ..ops.core import registry as _registry
from ..ops.core import upper as _upper
from ..tensor import Tensor
from . import _plain
from ._common import cast as _cast, on_device as _on, to_tensor as _t
from ._nodiff import isnan, nonzero

# (and the rows' names, appended by the loop below)
__all__ = ["positive", "square", "deg2rad", "rad2deg", "radians", "degrees", "round", "around",
           "add", "subtract", "multiply", "divide", "true_divide", "power", "pow", "less",
           "less_equal", "greater", "greater_equal", "equal", "not_equal", "float_power",
           "maximum", "minimum", "fmax", "fmin", "floor_divide", "clip", "where", "real", "conj",
           "conjugate", "astype", "nan_to_num", "real_if_close", "imag", "angle"]


def _unary(fn, name):
    numpy_fn = getattr(_np, name, None)
    if numpy_fn is None:  # (no NumPy counterpart: _plain's wrapper converts the result)
        @_plain.leaf
        def f(x):
            return fn(_t(x))
    else:
        @_plain.checks_itself
        def f(x):
            if not isinstance(x, Tensor) and _plain.plain_call((x,)):
                return numpy_fn(x)  # Note [plain inputs]
            return fn(_t(x))

    f.__name__ = name
    f.__doc__ = f"``numpy.{name}`` elementwise, differentiable: {fn.__doc__}"
    return f


def _weak_pair(x, y):
    """Tensors for a binary function's operands with NumPy 2's rule for Python scalars: a
    Python ``int``/``float``/``complex`` next to a Tensor takes the Tensor's dtype when its
    kind fits (``float32 % 2.0`` stays float32; a float with an integer Tensor is float64)."""
    def weak(v, other):
        if isinstance(v, (_builtins.bool, _np.generic)) or not isinstance(other, Tensor):
            return _t(v)
        kind = other.dtype.np.kind
        if (isinstance(v, int) and kind in "iufc") or (isinstance(v, float) and kind in "fc") \
                or (isinstance(v, complex) and kind == "c"):
            return _t(v, other.dtype.np).to(other.device)
        return _t(v)

    if isinstance(x, (int, float, complex)) and isinstance(y, Tensor):
        return weak(x, y), y
    if isinstance(y, (int, float, complex)) and isinstance(x, Tensor):
        return x, weak(y, x)
    return _t(x), _t(y)


def _binary(fn, name):
    numpy_fn = getattr(_np, name, None)
    if numpy_fn is None:  # (no NumPy counterpart: _plain's wrapper converts the result)
        @_plain.leaf
        def f(x, y):
            return fn(*_weak_pair(x, y))
    else:
        @_plain.checks_itself
        def f(x, y):
            if (not isinstance(x, Tensor) and not isinstance(y, Tensor)
                    and _plain.plain_call((x, y))):
                return numpy_fn(x, y)  # Note [plain inputs]
            return fn(*_weak_pair(x, y))

    f.__name__ = name
    f.__doc__ = f"``numpy.{name}`` elementwise with broadcasting, differentiable: {fn.__doc__}"
    return f


# the rows' NumPy names (``numpy=``, Note [derived surface] in ops/core/registry.py): sin, cos, tan,
# tanh, sinh, cosh, exp, log, sqrt, expm1, log1p, negative, sign, reciprocal, absolute (= abs,
# fabs); one wrapper per row, named by its first name
for _names, _fn, _op in _registry.surface("numpy"):
    _f = (_unary if len(_op.inputs) == 1 else _binary)(_fn, _names[0])
    for _n in _names:
        globals()[_n] = _f
        __all__.append(_n)
del _names, _fn, _op, _f, _n, _registry


@_plain.leaf
def positive(x):
    """``+x`` (a copy; gradient ``g``)."""
    return _unary_ops.clone(_t(x))


@_plain.leaf
def square(x):
    """``x**2``; gradient ``2 x g``."""
    return _t(x) ** 2


def deg2rad(x):
    """``x * pi / 180``."""
    return _t(x) * (_math.pi / 180.0)


def rad2deg(x):
    """``x * 180 / pi``."""
    return _t(x) * (180.0 / _math.pi)


radians, degrees = deg2rad, rad2deg


def round(a, decimals=0):  # noqa: A001 - NumPy's name
    """Round to ``decimals``; zero gradient."""
    return _npfuncs.round_(_t(a), decimals)


around = round


def _binop(dunder, rdunder, name):
    fwd, rev = getattr(Tensor, dunder), getattr(Tensor, rdunder)

    @_plain.leaf
    def f(x, y):
        if isinstance(x, Tensor):
            return fwd(x, y)
        if isinstance(y, Tensor):
            return rev(y, x)
        return fwd(_t(x), y)

    f.__name__ = name
    f.__doc__ = f"``numpy.{name}`` with broadcasting, as the Tensor operator ``{dunder}``."
    return f


add = _binop("__add__", "__radd__", "add")
subtract = _binop("__sub__", "__rsub__", "subtract")
multiply = _binop("__mul__", "__rmul__", "multiply")
divide = true_divide = _binop("__truediv__", "__rtruediv__", "divide")
power = pow = _binop("__pow__", "__rpow__", "power")  # noqa: A001
less = _binop("__lt__", "__gt__", "less")
less_equal = _binop("__le__", "__ge__", "less_equal")
greater = _binop("__gt__", "__lt__", "greater")
greater_equal = _binop("__ge__", "__le__", "greater_equal")
equal = _binop("__eq__", "__eq__", "equal")
not_equal = _binop("__ne__", "__ne__", "not_equal")


def float_power(x, y):
    """``x**y`` computed in float64."""
    return power(_t(x, _np.float64), y if not isinstance(y, Tensor) else _t(y, _np.float64))


@_plain.checks_itself
def maximum(x, y):
    """Elementwise maximum (NaN propagates); ties split the gradient evenly, as PyTorch."""
    if not isinstance(x, Tensor) and not isinstance(y, Tensor) and _plain.plain_call((x, y)):
        return _np.maximum(x, y)  # Note [plain inputs]
    return _binary_ops.maximum(_t(x), _t(y))


@_plain.checks_itself
def minimum(x, y):
    """Elementwise minimum (NaN propagates); ties split the gradient evenly, as PyTorch."""
    if not isinstance(x, Tensor) and not isinstance(y, Tensor) and _plain.plain_call((x, y)):
        return _np.minimum(x, y)  # Note [plain inputs]
    return _binary_ops.minimum(_t(x), _t(y))


def fmax(x, y):
    """Elementwise maximum ignoring NaNs (the non-NaN operand wins)."""
    x, y = _t(x), _t(y)
    return _binary_ops.where(isnan(y), x, _binary_ops.where(isnan(x), y, _binary_ops.maximum(x, y)))


def fmin(x, y):
    """Elementwise minimum ignoring NaNs (the non-NaN operand wins)."""
    x, y = _t(x), _t(y)
    return _binary_ops.where(isnan(y), x, _binary_ops.where(isnan(x), y, _binary_ops.minimum(x, y)))


def floor_divide(x, y):
    """``floor(x / y)``; zero gradient (piecewise constant)."""
    x, y = _weak_pair(x, y)
    if not (x.dtype.is_floating_point or y.dtype.is_floating_point):
        what = "jitgrad.numpy.floor_divide"
        return _on(Tensor._make(_np.asarray(_np.floor_divide(x._host(what), y._host(what)))),
                   x.device if x.is_cuda else None)
    return _npfuncs.unary("floor", x / y)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002
    """``a`` limited to ``[a_min, a_max]`` (scalars or arrays; ``min``/``max`` are the Array
    API's spellings); gradient ``g`` inside, 0 outside."""
    a = _t(a)
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if isinstance(a_min, Tensor) or isinstance(a_max, Tensor) or _np.ndim(a_min) or _np.ndim(a_max):
        out = a
        if a_min is not None:
            out = _binary_ops.maximum(out, _t(a_min))
        if a_max is not None:
            out = _binary_ops.minimum(out, _t(a_max))
        return out
    return _binary_ops.clamp(a, a_min, a_max)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` else ``y`` (gradients to the chosen operand); one-argument
    ``where(condition)`` is ``nonzero``."""
    if x is None and y is None:
        return nonzero(condition)
    cond = _t(condition)
    if cond.dtype.np != _np.bool_:
        cond = cond != 0
    return _binary_ops.where(cond, x if isinstance(x, Tensor) else _t(x), y if isinstance(y, Tensor) else _t(y))


def real(val):
    """The real part ``x`` of ``x + iy`` (the array itself for real input).
    Derivative: ``grad_z = g + 0i`` (``ops/complex.py``)."""
    return _complex_ops.real(_t(val))


def conj(x):
    """Complex conjugate ``x - iy`` (the array itself for real input).
    Derivative: ``conj(g)``."""
    return _complex_ops.conj(_t(x))


conjugate = conj


def astype(x, dtype, /, *, copy=True):
    """``x`` cast to ``dtype`` (recorded: the gradient is cast back)."""
    x = _t(x)
    if x.dtype.np == _np.dtype(dtype):
        return _unary_ops.clone(x) if copy else x
    return _cast(x, dtype)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +-inf -> large finite numbers; the gradient passes where ``x`` was
    finite and is zero at the replaced elements."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        return x
    fi = _np.finfo(x.dtype.np)
    if _upper.host_read_hook is not None:  # a jitgrad.compile trace: the masks as rows
        big = fi.max if posinf is None else posinf
        small = fi.min if neginf is None else neginf
        inf = float("inf")
        out = _binary_ops.where(x != x, _t(nan, x.dtype.np).to(x.device), x)
        out = _binary_ops.where(x == inf, _t(big, x.dtype.np).to(x.device), out)
        return _binary_ops.where(x == -inf, _t(small, x.dtype.np).to(x.device), out)
    d = x._host("jitgrad.numpy.nan_to_num")  # (CUDA: to the host for the masks, then back)
    repl = _np.where(_np.isnan(d), nan, _np.where(d > 0, fi.max if posinf is None else posinf,
                                                   fi.min if neginf is None else neginf))
    return _binary_ops.where(Tensor._make(_np.isfinite(d)).to(x.device), x,
                    Tensor._make(repl.astype(d.dtype)).to(x.device))


def real_if_close(a, tol=100):
    """The real part when every imaginary part is within ``tol`` machine epsilons of 0 (as
    NumPy; ``tol <= 1`` is an absolute tolerance), else ``a`` itself."""
    a = _t(a)
    if a.dtype.np.kind != "c":
        return a
    if tol > 1:
        tol = _np.finfo(a.dtype.np).eps * tol
    return real(a) if _np.all(_np.abs(a._host("jitgrad.numpy.real_if_close").imag) < tol) else a


def imag(val):
    """The imaginary part ``y`` of ``x + iy``; derivative ``grad_z = i g``. Real input: zeros
    (a constant)."""
    return _complex_ops.imag(_t(val))


def angle(z, deg=False):
    """Argument ``atan2(y, x)`` (degrees with ``deg``); derivative ``i g z / |z|^2`` (0 at 0).
    Real input: 0 for ``z >= 0``, pi for ``z < 0`` (a constant, zero gradient)."""
    z = _t(z)
    if _upper.host_read_hook is not None and z.dtype.np.kind in "iuf":
        # a compile trace: NumPy's own ``arctan2(0, z)`` as the row (computed from each call's
        # data; no gradient, as eager's constant)
        from ..graph.grad_mode import no_grad

        with no_grad():
            a = arctan2(_t(_np.zeros((), _np.result_type(z.dtype.np, 0.0))), z)  # noqa: F821
            return a * (180.0 / _np.pi) if deg else a
    return _complex_ops.angle(z, deg)
