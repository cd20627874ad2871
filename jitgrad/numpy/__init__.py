"""``import jitgrad.numpy as np``: the NumPy API with derivatives.

NumPy's names and argument conventions (``axis``, ``keepdims``, ``ddof``), returning Tensors
that record the graph. The same functions serve NumPy's own entry points: ``numpy.sin(t)`` on
a Tensor goes through ``Tensor.__array_ufunc__`` / ``__array_function__`` (``jitgrad._protocols``)
and lands in the table built at the bottom of this module (``UFUNCS``, ``FUNCTIONS``), so the
protocol path and the namespace path record identical graphs.

A call none of whose arguments holds a Tensor returns NumPy's own result (a 0-d one is an
immutable NumPy scalar), except the array constructors, which return Tensors: Note [plain
inputs] in ``_plain.py``, applied at the bottom of this module.

Names NumPy has and this module lacks raise ``AttributeError`` at lookup (``__getattr__``),
naming the function. Non-differentiable functions (``argmax``, ``shape``, ``isnan``...) run on
the data and return integer/bool Tensors or Python values. See docs/numpy.md.
"""
from __future__ import annotations

import builtins as _builtins
import math as _math

import numpy as _np

from ..ops import binary as _binary_ops
from ..autograd import forward_ad as _forward_ad
from ..ops.core import registry as _registry
from ..ops import complex as _complex_ops
from ..ops import creation as _creation
from ..ops import linalg as _linalg_ops
from ..ops import npfuncs as _npfuncs
from ..ops import reduce as _reduce_ops
from ..ops import roll as _roll_ops
from ..ops import shape as _shape_ops
from ..ops import unary as _unary_ops
from ..ops import scatter as _scatter_ops
from ..ops.core import upper as _upper
from ..tensor import Tensor
from .. import dtypes as _dtypes
from . import _plain
from ._passthrough import mark as _mark_passthrough

ndarray = Tensor
bool = _np.bool_  # noqa: A001 - the Array API's dtype name
pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, None, _np.euler_gamma
(float64, float32, float16, int64, int32, int16, int8, uint8, bool_, complex128, double, single,
 intp, integer, floating, number, dtype, finfo, iinfo) = (
    _np.float64, _np.float32, _np.float16, _np.int64, _np.int32, _np.int16, _np.int8, _np.uint8,
    _np.bool_, _np.complex128, _np.double, _np.single, _np.intp, _np.integer, _np.floating,
    _np.number, _np.dtype, _np.finfo, _np.iinfo)
complex64, complexfloating = _np.complex64, _np.complexfloating


def _cast(x, dtype):
    """``x`` cast to the NumPy ``dtype`` (recorded: the gradient is cast back)."""
    return _unary_ops.cast(x, _dtypes.to_dtype(_np.dtype(dtype)))


def _t(x, dtype=None):
    """A Tensor for ``x`` (Tensors pass through; arrays, lists and numbers are wrapped as
    constants keeping NumPy's dtype: Python floats are float64). Containers holding Tensors at
    any depth are stacked level by level, recording the graph (``creation.stack_nested``)."""
    if isinstance(x, Tensor):
        out = x
    elif _creation.holds_tensor(x):
        out = _creation.stack_nested(x, _constant)
    else:
        return _constant(x, dtype)
    return out if dtype is None or out.dtype.np == _np.dtype(dtype) else _cast(out, dtype)


@_upper.constant_maker
def _constant(x, dtype=None):
    """A constant Tensor holding a copy of the Tensor-free data ``x`` (NumPy's conversion)."""
    return Tensor._make(_creation.checked(_np.array(x, dtype=dtype), "jitgrad.numpy.array()", x))


@_upper.constant_maker
def _constant_array(array, like=None):
    """A constant Tensor of ``array``, an ndarray computed from shapes and Python values only
    (a mask, a grid), on ``like``'s device."""
    t = Tensor._make(array)
    return t if like is None or not like.is_cuda else t.to(like.device)


def _data(x, what):
    """``x``'s values for NumPy (a Tensor's through ``Tensor._host``, which jitgrad.compile
    watches: Note [compile tracing]); ``what`` names the reader."""
    return x._host(what) if isinstance(x, Tensor) else x


def _wrap(r):
    if isinstance(r, _np.ndarray) or isinstance(r, _np.generic):
        return Tensor._make(_np.asarray(r))
    if isinstance(r, tuple):
        return tuple(_wrap(v) for v in r)
    if isinstance(r, list):
        return [_wrap(v) for v in r]
    return r


# --- creation -------------------------------------------------------------------------------
def array(obj, dtype=None, copy=True, ndmin=0):
    """A constant Tensor holding a copy of ``obj`` (a Tensor keeps its graph; lists of Tensors
    are stacked, recording the graph)."""
    t = _t(obj, dtype)
    while t.ndim < ndmin:
        t = _shape_ops.unsqueeze(t, 0)
    return t


def _check_device(device):
    """The Array API ``device=`` argument: None, ``'cpu'`` or a CPU device are accepted."""
    if device is not None and str(getattr(device, "type", device)) != "cpu":
        raise ValueError(f"jitgrad.numpy: device {device!r} is not supported here (only 'cpu')")


def asarray(obj, dtype=None, *, device=None, copy=None):
    """Like ``array`` without copying a Tensor (``obj`` itself is returned). ``copy=True``
    always copies (recorded: the gradient flows through the copy), ``copy=False`` raises if a
    copy would be needed (the Array API's rule); ``device`` must be the CPU."""
    _check_device(device)
    if copy is False and not (isinstance(obj, Tensor) and
                              (dtype is None or obj.dtype.np == _np.dtype(dtype))):
        raise ValueError("jitgrad.numpy.asarray: copy=False but a copy is needed")
    out = _t(obj, dtype)
    return _unary_ops.clone(out) if copy and out is obj else out


def _shaped_like(x):
    """A stand-in for a ``*_like`` function's first argument: its shape and dtype, no values
    (a zero-strided view of one element: reading a Tensor's values would be a host read)."""
    if not isinstance(x, Tensor):
        return x
    return _np.broadcast_to(_np.zeros((), dtype=x.dtype.np), tuple(x.shape))


def _creator(fn):
    name = f"jitgrad.numpy.{fn.__name__}"
    like = fn.__name__.endswith("_like")

    @_upper.constant_maker
    def make(*args, **kwargs):
        _check_device(kwargs.pop("device", None))
        # the values of a ``*_like`` function's first argument do not matter; any other Tensor
        # (a fill value, a linspace end) would be read as a constant, silently cutting its graph
        valued = list(args[1:] if like else args) + list(kwargs.values())
        _creation.refuse_graph_cut(valued, f"{name}()")
        if like and args:
            args = (_shaped_like(args[0]),) + tuple(args[1:])
        return Tensor._make(_np.asarray(fn(*(_data(a, name) for a in args),
                                           **{k: _data(v, name) for k, v in kwargs.items()})))

    make.__name__ = fn.__name__
    make.__doc__ = f"``numpy.{fn.__name__}`` as a constant Tensor (no gradient flows through it)."
    return _mark_passthrough(make)


zeros, ones, empty, full, eye, identity, arange, linspace, logspace, zeros_like, ones_like, \
    empty_like, full_like, tri = (_creator(f) for f in (
        _np.zeros, _np.ones, _np.empty, _np.full, _np.eye, _np.identity, _np.arange, _np.linspace,
        _np.logspace, _np.zeros_like, _np.ones_like, _np.empty_like, _np.full_like, _np.tri))
# constant grids and window functions (issue 19): their arguments are sizes and shape parameters
geomspace, hanning, hamming, blackman, bartlett, kaiser = (_creator(f) for f in (
    _np.geomspace, _np.hanning, _np.hamming, _np.blackman, _np.bartlett, _np.kaiser))


# --- elementwise ----------------------------------------------------------------------------
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


@_plain.checks_itself
def matmul(a, b):
    """Matrix product with NumPy's rules (``@``)."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor) and _plain.plain_call((a, b)):
        return _np.matmul(a, b)  # Note [plain inputs]
    if not isinstance(a, Tensor) and isinstance(b, Tensor):
        return Tensor.__rmatmul__(b, a)
    return _linalg_ops.matmul(_t(a), b)


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


# --- non-differentiable: run on the data --------------------------------------------------------
def _host_tree(x, what):
    """The values of ``x`` for NumPy (Tensors at any depth of lists/tuples, read through
    ``Tensor._host``: CUDA tensors are copied to the host), and the device they came from."""
    if isinstance(x, Tensor):
        return x._host(what), (x.device if x.is_cuda else None)
    if isinstance(x, (list, tuple)):
        pairs = [_host_tree(v, what) for v in x]
        return type(x)(p[0] for p in pairs), next((p[1] for p in pairs if p[1]), None)
    return x, None


def _on(r, device):
    """Wrapped results moved to ``device`` (None: left on the host)."""
    if device is None:
        return r
    if isinstance(r, Tensor):
        return r.to(device)
    if isinstance(r, (tuple, list)):
        return type(r)(_on(v, device) for v in r)
    return r


def _nodiff(fn, name=None, wrap=True):
    name = name or fn.__name__
    what = f"jitgrad.numpy.{name}"

    def f(*args, **kwargs):
        # NumPy runs on host data: CUDA operands are copied to the host (a device sync) and
        # array results go back to their device; no gradient flows here either way
        args, device = _host_tree(args, what)
        kw = {}
        for k, v in kwargs.items():
            kw[k], dev = _host_tree(v, what)
            device = device or dev
        r = fn(*args, **kw)
        return _on(_wrap(r), device) if wrap else r

    f.__name__ = name
    f.__doc__ = (f"``numpy.{name}`` on the data (not differentiable: no gradient flows through "
                 "its integer/bool result).")
    return _mark_passthrough(f)


_NODIFF_WRAP = ("argmax argmin argsort argpartition nonzero argwhere flatnonzero isnan isinf "
                "isfinite isneginf isposinf signbit logical_and logical_or logical_not "
                "logical_xor isclose any all count_nonzero searchsorted digitize tril_indices triu_indices diag_indices indices unravel_index "
                "ravel_multi_index floor_divide_int bitwise_and bitwise_or bitwise_xor invert "
                "left_shift right_shift gcd lcm heaviside iscomplex isreal").split()
_NODIFF_RAW = ("shape ndim size allclose array_equal array_equiv result_type can_cast "
               "broadcast_shapes iscomplexobj isrealobj isscalar issubdtype promote_types "
               "min_scalar_type").split()
for _n in _NODIFF_WRAP:
    if hasattr(_np, _n):
        globals()[_n] = _nodiff(getattr(_np, _n))
for _n in _NODIFF_RAW:
    if hasattr(_np, _n):
        globals()[_n] = _nodiff(getattr(_np, _n), wrap=False)
isnan, nonzero = _nodiff(_np.isnan), _nodiff(_np.nonzero)  # (also made above; named for linters)


def _refusing_grad(fn, why):
    """``_nodiff(fn)`` raising when an argument requires grad: its result holds values of the
    inputs (``unique``'s values, ``histogram``'s edges), so running it would cut the graph."""
    run = _nodiff(fn)

    def f(*args, **kwargs):
        from .. import autograd

        if autograd.is_grad_enabled() and _builtins.any(
                _forward_ad.needs_derivative(v) for v in list(args) + list(kwargs.values())):
            raise TypeError(f"jitgrad.numpy.{fn.__name__} is not differentiable ({why}); call "
                            "it on x.detach() if no gradient is needed")
        return run(*args, **kwargs)

    f.__name__ = fn.__name__
    f.__doc__ = (f"``numpy.{fn.__name__}`` on the data (a pass-through; an input that requires "
                 f"grad raises: {why}).")
    return _mark_passthrough(f)


unique = _refusing_grad(_np.unique, "its output shape depends on which values are equal")
histogram = _refusing_grad(_np.histogram, "its counts are piecewise constant and its bin edges "
                                          "have no derivative rule here")


def bincount(x, weights=None, minlength=0):
    """Counts of each non-negative integer in ``x`` (no gradient), or with ``weights``
    ``out[k] = sum_{i: x_i = k} w_i``, a scatter-add: the gradient of ``w_i`` is ``g[x_i]``."""
    xs = _np.asarray(_data(x, "jitgrad.numpy.bincount"))
    if weights is None or not _forward_ad.needs_derivative(weights):
        return _nodiff(_np.bincount)(xs, weights, minlength)
    from ..ops import indexing as _indexing

    w = _t(weights)
    if not w.dtype.is_floating_point:
        w = _cast(w, _np.float64)
    n = _builtins.max(int(xs.max()) + 1 if xs.size else 0, int(minlength))
    base = _constant_array(_np.zeros(n, dtype=_np.result_type(w.dtype.np, _np.float64)), w)
    return _indexing.put_flat(base, xs.ravel().astype(_np.intp), ravel(_cast(w, base.dtype.np))
                              if w.dtype.np != base.dtype.np else ravel(w), accumulate=True)


# --- reductions -----------------------------------------------------------------------------
def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(int(a) % _builtins.max(ndim, 1) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))


def _cast_for(x, dtype):
    return x if dtype is None else _cast(x, _np.dtype(dtype))


@_plain.checks_itself
def sum(a, axis=None, dtype=None, keepdims=False):  # noqa: A001
    """Sum over ``axis`` (None: all; int or tuple); gradient ``g`` broadcast back."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)  # Note [plain inputs]
    a = _cast_for(_t(a), dtype)
    if a.dtype.np == _np.bool_:
        a = _cast(a, _np.int64)
    return _reduce_ops.sum(a, dim=axis, keepdim=keepdims) if axis is not None or keepdims else _reduce_ops.sum(a)


@_plain.checks_itself
def mean(a, axis=None, dtype=None, keepdims=False):
    """Mean over ``axis``; gradient ``g / n`` broadcast back. Integer inputs give float64."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)  # Note [plain inputs]
    a = _t(a)
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    return _reduce_ops.mean(a, dim=axis, keepdim=keepdims) if axis is not None or keepdims else _reduce_ops.mean(a)


@_plain.checks_itself
def prod(a, axis=None, dtype=None, keepdims=False):
    """Product over ``axis`` (int, tuple or None); exact gradient also with zeros."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.prod(a, axis=axis, dtype=dtype, keepdims=keepdims)  # Note [plain inputs]
    a = _cast_for(_t(a), dtype)
    if axis is None and not keepdims:
        return _reduce_ops.prod(a)
    out = a
    for ax in sorted(_axes(axis, a.ndim), reverse=True):
        out = _reduce_ops.prod(out, dim=ax, keepdim=keepdims)
    return out


@_plain.leaf
def var(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """Variance ``sum (x - mean)^2 / (n - ddof)``; gradient ``2 g (x - mean) / (n - ddof)``.
    ``correction`` is the Array API's (and NumPy 2's) name for ``ddof``."""
    a = _t(a)
    ddof = ddof if correction is None else correction
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    return _reduce_ops.var(a, axis, keepdim=keepdims, correction=ddof)


@_plain.leaf
def std(a, axis=None, dtype=None, ddof=0, keepdims=False, *, correction=None):
    """Standard deviation ``sqrt(var)``; gradient ``g (x - mean) / ((n - ddof) std)``.
    ``correction`` is the Array API's (and NumPy 2's) name for ``ddof``."""
    a = _t(a)
    ddof = ddof if correction is None else correction
    if dtype is not None or not a.dtype.is_floating_point:
        a = _cast(a, _np.dtype(dtype or _np.float64))
    return _reduce_ops.std(a, axis, keepdim=keepdims, correction=ddof)


@_plain.checks_itself
def max(a, axis=None, keepdims=False):  # noqa: A001
    """Maximum over ``axis``; ties share the gradient evenly (PyTorch's ``amax`` rule)."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.max(a, axis=axis, keepdims=keepdims)  # Note [plain inputs]
    a = _t(a)
    if axis is None and not keepdims:
        return _reduce_ops.max(a)
    return _reduce_ops.amax(a, dim=_axes(axis, a.ndim), keepdim=keepdims)


@_plain.checks_itself
def min(a, axis=None, keepdims=False):  # noqa: A001
    """Minimum over ``axis``; ties share the gradient evenly."""
    if not isinstance(a, Tensor) and _plain.plain_call((a,)):
        return _np.min(a, axis=axis, keepdims=keepdims)  # Note [plain inputs]
    a = _t(a)
    if axis is None and not keepdims:
        return _reduce_ops.min(a)
    return _reduce_ops.amin(a, dim=_axes(axis, a.ndim), keepdim=keepdims)


amax, amin = max, min


def ptp(a, axis=None, keepdims=False):
    """``max - min`` over ``axis``."""
    return max(a, axis, keepdims) - min(a, axis, keepdims)


def average(a, axis=None, weights=None, keepdims=False):
    """Weighted mean ``sum(w x) / sum(w)`` over ``axis`` (plain mean without weights)."""
    if weights is None:
        return mean(a, axis, keepdims=keepdims)
    a, w = _t(a), _t(weights)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise TypeError("average: 1D weights expected when shapes of a and weights differ")
        ax = int(axis) % a.ndim
        w = _shape_ops.reshape(w, tuple(w.shape[0] if i == ax else 1 for i in range(a.ndim)))
    return sum(a * w, axis, keepdims=keepdims) / sum(w + a * 0, axis, keepdims=keepdims)


def cumsum(a, axis=None, dtype=None):
    """Cumulative sum (flattened when ``axis`` is None); gradient: reversed cumulative sum."""
    a = _cast_for(_t(a), dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return _npfuncs.cumsum(a, axis)


def cumprod(a, axis=None, dtype=None):
    """Cumulative product (flattened when ``axis`` is None); exact gradient also with zeros."""
    a = _cast_for(_t(a), dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return _npfuncs.cumprod(a, axis)


# --- shape ----------------------------------------------------------------------------------
def reshape(a, shape, order="C", *, copy=None):
    """Reshape (C order); gradient reshaped back. ``copy=True`` (Array API) returns a copy."""
    if order != "C":
        raise NotImplementedError("jitgrad.numpy.reshape: only order='C' is supported")
    if copy:
        return _unary_ops.clone(reshape(a, shape))
    return _shape_ops.reshape(_t(a), tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),))


def ravel(a, order="C"):
    """Flatten to 1-d (C order)."""
    return reshape(a, (-1,), order)


@_plain.leaf
def transpose(a, axes=None):
    """Permute the axes (reversed when ``axes`` is None)."""
    a = _t(a)
    axes = tuple(range(a.ndim - 1, -1, -1)) if axes is None else tuple(axes)
    return _shape_ops.permute(a, axes)


permute_dims = transpose


def moveaxis(a, source, destination):
    """Move axes to new positions (the others keep their order)."""
    a = _t(a)
    return _shape_ops.permute(a, tuple(_perm_moveaxis(a.ndim, source, destination)))


def _perm_moveaxis(ndim, source, destination):
    src = [int(s) % ndim for s in _np.atleast_1d(source)]
    dst = [int(d) % ndim for d in _np.atleast_1d(destination)]
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return order


def swapaxes(a, axis1, axis2):
    """Exchange two axes."""
    return _shape_ops.transpose(_t(a), axis1, axis2)


def expand_dims(a, axis):
    """Insert length-1 axes at ``axis`` (int or tuple, positions in the result)."""
    a = _t(a)
    axes = sorted(int(x) % (a.ndim + len(_np.atleast_1d(axis))) for x in _np.atleast_1d(axis))
    for ax in axes:
        a = _shape_ops.unsqueeze(a, ax)
    return a


def squeeze(a, axis=None):
    """Remove length-1 axes (all, or those in ``axis``)."""
    a = _t(a)
    if axis is None:
        return _shape_ops.squeeze(a)
    for ax in sorted(_axes(axis, a.ndim), reverse=True):
        if a.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        a = _shape_ops.squeeze(a, ax)
    return a


def broadcast_to(a, shape):
    """Broadcast to ``shape``; gradient summed back."""
    return _shape_ops.expand(_t(a), tuple(shape))


def atleast_1d(*arys):
    """Views with at least one dimension."""
    out = [reshape(_t(a), (1,)) if _t(a).ndim == 0 else _t(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Views with at least two dimensions (1-d ``(N,)`` becomes ``(1, N)``)."""
    out = []
    for a in arys:
        a = _t(a)
        out.append(reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """At least three dimensions (``(N,)`` -> ``(1, N, 1)``, ``(M, N)`` -> ``(M, N, 1)``)."""
    out = []
    for a in arys:
        a = _t(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = reshape(a, tuple(a.shape) + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def concatenate(arrays, axis=0):
    """Join along an existing axis (``axis=None``: flatten first)."""
    ts = [_t(a) for a in arrays]
    if axis is None:
        ts, axis = [ravel(t) for t in ts], 0
    return _shape_ops.cat(ts, int(axis))


concat = concatenate


def stack(arrays, axis=0):
    """Join along a new axis."""
    return _shape_ops.stack([_t(a) for a in arrays], int(axis))


def hstack(tup):
    """Stack column-wise (1-d inputs are concatenated)."""
    ts = atleast_1d(*tup) if len(tup) > 1 else [atleast_1d(tup[0])]
    return concatenate(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tup):
    """Stack row-wise (1-d ``(N,)`` inputs become rows)."""
    ts = atleast_2d(*tup) if len(tup) > 1 else [atleast_2d(tup[0])]
    return concatenate(ts, 0)


row_stack = vstack


def dstack(tup):
    """Stack along the third axis."""
    ts = atleast_3d(*tup) if len(tup) > 1 else [atleast_3d(tup[0])]
    return concatenate(ts, 2)


def column_stack(tup):
    """1-d inputs become columns; 2-d are stacked horizontally."""
    return concatenate([reshape(_t(a), (-1, 1)) if _t(a).ndim < 2 else _t(a) for a in tup], 1)


def _slice_axis(a, axis, start, stop):
    return a[(slice(None),) * axis + (slice(start, stop),)]


def array_split(ary, indices_or_sections, axis=0):
    """Split into sub-arrays (sections may differ in size by one)."""
    a = _t(ary)
    axis = int(axis) % a.ndim
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        q, r = _builtins.divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return [_slice_axis(a, axis, bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (or at the given indices)."""
    a = _t(ary)
    if isinstance(indices_or_sections, (int, _np.integer)) and \
            a.shape[int(axis) % a.ndim] % int(indices_or_sections):
        raise ValueError("array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-d)."""
    return split(ary, indices_or_sections, 1 if _t(ary).ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """Split along axis 0."""
    return split(ary, indices_or_sections, 0)


def _take_axis(a, idx, axis):
    return a[(slice(None),) * axis + (_np.asarray(idx, dtype=_np.intp),)]


def take(a, indices, axis=None):
    """Elements at ``indices`` (along ``axis``, or of the flattened array); the gradient is
    scattered back (summing repeats)."""
    a = _t(a)
    idx = _np.asarray(_data(indices, "jitgrad.numpy.take"))
    if axis is None:
        return ravel(a)[idx] if idx.ndim else ravel(a)[int(idx)]
    return _take_axis(a, idx, int(axis) % a.ndim)


def take_along_axis(arr, indices, axis):
    """``numpy.take_along_axis`` (gradient scattered back)."""
    a = _t(arr)
    idx = _np.asarray(_data(indices, "jitgrad.numpy.take_along_axis"))
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    idx = _np.broadcast_to(idx, tuple(i if d == axis else s for d, (s, i) in
                                      enumerate(zip(a.shape, idx.shape))))
    return _scatter_ops.gather(a, axis, Tensor._make(_np.ascontiguousarray(idx, dtype=_np.int64)))


def flip(m, axis=None):
    """Reverse the order along ``axis`` (all when None)."""
    return _npfuncs.flip(_t(m), axis)


def fliplr(m):
    """Reverse along axis 1."""
    return flip(m, 1)


def flipud(m):
    """Reverse along axis 0."""
    return flip(m, 0)


def roll(a, shift, axis=None):
    """Roll elements along ``axis`` (flattened when None; ``shift`` and ``axis`` broadcast, a
    repeated axis adds its shifts): the ``roll`` row (RollBackward0), whose gradient is ``g``
    rolled back."""
    a = _t(a)
    if axis is None:
        return _roll_ops.roll(a, int(_np.sum(_np.atleast_1d(shift))))
    shifts, axes = _np.broadcast_arrays(_np.atleast_1d(shift), _np.atleast_1d(axis))
    return _roll_ops.roll(a, tuple(int(s) for s in shifts), tuple(int(x) for x in axes))


def repeat(a, repeats, axis=None):
    """Repeat elements (of the flattened array when ``axis`` is None); gradient sums the
    copies."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    return _take_axis(a, _np.repeat(_np.arange(a.shape[axis]), _data(repeats, "jitgrad.numpy.repeat")), axis)


def tile(A, reps):
    """Repeat the whole array ``reps`` times per axis; gradient sums the tiles."""
    a = _t(A)
    reps = tuple(_np.atleast_1d(reps).tolist())
    nd = _builtins.max(a.ndim, len(reps))
    a = reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    reps = (1,) * (nd - len(reps)) + reps
    for ax, r in enumerate(reps):
        if r != 1:
            a = _take_axis(a, _np.tile(_np.arange(a.shape[ax]), r), ax)
    return a


def pad(array, pad_width, mode="constant", constant_values=0):
    """Pad; ``constant`` pads with a value (gradient: the inner slice), ``edge``, ``reflect``,
    ``symmetric`` and ``wrap`` are index selections (gradient scattered back)."""
    a = _t(array)
    pw = _np.broadcast_to(_np.asarray(pad_width, dtype=_np.intp), (a.ndim, 2))
    if mode == "constant":
        if _np.ndim(constant_values):
            raise NotImplementedError("jitgrad.numpy.pad: constant_values must be one number")
        return _npfuncs.pad_constant(a, pw, float(_data(constant_values, "jitgrad.numpy.pad")))
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"jitgrad.numpy.pad: mode={mode!r} is not supported (constant, "
                                  "edge, reflect, symmetric, wrap are)")
    for ax in range(a.ndim):
        if pw[ax].any():
            a = _take_axis(a, _np.pad(_np.arange(a.shape[ax]), tuple(pw[ax]), mode=mode), ax)
    return a


def diff(a, n=1, axis=-1):
    """``n``-th discrete difference along ``axis``."""
    a = _t(a)
    axis = int(axis) % a.ndim
    for _ in range(n):
        m = a.shape[axis]
        a = _slice_axis(a, axis, 1, m) - _slice_axis(a, axis, 0, m - 1)
    return a


def triu(m, k=0):
    """Upper triangle (zeros below diagonal ``k``); gradient masked the same way."""
    m = _t(m)
    return m * _constant_array(_np.triu(_np.ones(m.shape[-2:], dtype=m.dtype.np), k), m)


def tril(m, k=0):
    """Lower triangle (zeros above diagonal ``k``); gradient masked the same way."""
    m = _t(m)
    return m * _constant_array(_np.tril(_np.ones(m.shape[-2:], dtype=m.dtype.np), k), m)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal over ``axis1``/``axis2`` (moved last)."""
    return _shape_ops.diagonal(_t(a), offset, axis1, axis2)


def diag(v, k=0):
    """1-d ``v``: a matrix with ``v`` on diagonal ``k``; 2-d: its ``k``-th diagonal."""
    v = _t(v)
    if v.ndim == 1:
        return _npfuncs.diag_embed(v, k)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


def trace(a, offset=0, axis1=0, axis2=1):
    """Sum of a diagonal."""
    return sum(diagonal(a, offset, axis1, axis2), -1)


# --- products -------------------------------------------------------------------------------
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _explicit_spec(spec, shapes):
    spec = spec.replace(" ", "")
    if "->" in spec:
        ins, out = spec.split("->")
    else:
        ins, out = spec, None
    subs = ins.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"einsum: {len(subs)} operand subscripts for {len(shapes)} operands")
    used = set(c for c in spec if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ell_n = 0
    for s, sh in zip(subs, shapes):
        if "..." in s:
            ell_n = _builtins.max(ell_n, len(sh) - (len(s) - 3))
    ell = "".join(free[:ell_n])
    new = []
    for s, sh in zip(subs, shapes):
        if "..." in s:
            k = len(sh) - (len(s) - 3)
            s = s.replace("...", ell[ell_n - k:] if k else "")
        new.append(s)
    if out is None:
        counts = {}
        for s in new:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    # broadcast size-1 ellipsis dims are fine for np.einsum; gradients are summed by the engine
    return ",".join(new) + "->" + out


def einsum(subscripts, *operands, optimize=False):
    """Einstein summation (``'ij,jk->ik'``, implicit output, ``...``); the gradient of each
    operand is an einsum of ``g`` with the others."""
    ops = [_t(o) for o in operands]
    spec = _explicit_spec(subscripts, [o.shape for o in ops])
    return _npfuncs.einsum_explicit(spec, *ops)


def tensordot(a, b, axes=2):
    """Sum products over ``axes`` (int: last ``axes`` of ``a`` with first of ``b``)."""
    a, b = _t(a), _t(b)
    if isinstance(axes, (int, _np.integer)):
        ax_a = list(range(a.ndim - int(axes), a.ndim))
        ax_b = list(range(int(axes)))
    else:
        ax_a, ax_b = [list(_np.atleast_1d(x)) for x in axes]
    ax_a = [int(x) % a.ndim for x in ax_a]
    ax_b = [int(x) % b.ndim for x in ax_b]
    la, lb = list(_LETTERS[:a.ndim]), list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in ax_a] + [c for k, c in enumerate(lb)
                                                            if k not in ax_b]
    return _npfuncs.einsum_explicit("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b)


@_plain.checks_itself
def dot(a, b):
    """NumPy's ``dot``: scalars multiply, 1-d/2-d is ``matmul``, N-d sums the last axis of
    ``a`` with the second-to-last of ``b``."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor) and _plain.plain_call((a, b)):
        return _np.dot(a, b)  # Note [plain inputs]
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return _linalg_ops.matmul(a, b)
    return tensordot(a, b, ([-1], [-2 if b.ndim > 1 else -1]))


def vdot(a, b):
    """Dot product of the flattened arrays."""
    return _linalg_ops.matmul(ravel(a), ravel(b))


def inner(a, b):
    """Sum over the last axes of ``a`` and ``b``."""
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    """``out[i, j] = a_i b_j`` of the flattened inputs."""
    return _shape_ops.unsqueeze(ravel(a), 1) * _shape_ops.unsqueeze(ravel(b), 0)


def kron(a, b):
    """Kronecker product: blocks ``a[i, j] * b``."""
    a, b = _t(a), _t(b)
    nd = _builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    b = reshape(b, (1,) * (nd - b.ndim) + tuple(b.shape))
    ia = tuple(s for d in range(nd) for s in (a.shape[d], 1))
    ib = tuple(s for d in range(nd) for s in (1, b.shape[d]))
    out = reshape(a, ia) * reshape(b, ib)
    return reshape(out, tuple(a.shape[d] * b.shape[d] for d in range(nd)))


def cross(a, b, axis=-1):
    """Cross product of 3-vectors along ``axis``."""
    a, b = moveaxis(_t(a), axis, -1), moveaxis(_t(b), axis, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError("jitgrad.numpy.cross: only 3-vectors are supported")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return moveaxis(stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1), -1, axis)


# --- sorting --------------------------------------------------------------------------------
def _argsort_data(d, axis, kind, descending):
    if not descending:
        return _np.argsort(d, axis=axis, kind=kind or "stable")
    # stable descending: ties keep their original order (n - 1 - reversed stable argsort)
    n = d.shape[axis]
    rev = _np.flip(_np.argsort(_np.flip(d, axis), axis=axis, kind="stable"), axis)
    return n - 1 - rev


def sort(a, axis=-1, kind=None, *, stable=None, descending=False):
    """Sort along ``axis`` (flattened when None): a gather by ``argsort``, so the gradient is
    scattered back to the original positions (``descending``/``stable``: the Array API's)."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    idx = _argsort_data(a._host("jitgrad.numpy.sort"), axis, kind, descending)
    return _scatter_ops.gather(a, axis, _on(Tensor._make(idx.astype(_np.int64)),
                                            a.device if a.is_cuda else None))


def partition(a, kth, axis=-1):
    """``numpy.partition`` as a gather by ``argpartition`` (gradient scattered back)."""
    a = _t(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = int(axis) % a.ndim
    idx = _np.argpartition(a._host("jitgrad.numpy.partition"), kth, axis=axis)
    return _scatter_ops.gather(a, axis, _on(Tensor._make(idx.astype(_np.int64)),
                                            a.device if a.is_cuda else None))


# --- misc -----------------------------------------------------------------------------------
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


def matrix_transpose(x):
    """Swap the last two axes."""
    return _shape_ops.transpose(_t(x), -1, -2)


def vecdot(x1, x2, /, *, axis=-1):
    """``sum(x1 * x2, axis)`` with broadcasting (real inputs)."""
    return sum(_t(x1) * _t(x2), axis=axis)


def dsplit(ary, indices_or_sections):
    """Split along axis 2."""
    return split(ary, indices_or_sections, 2)


def rollaxis(a, axis, start=0):
    """Roll ``axis`` backwards until it lies before ``start`` (NumPy's older ``moveaxis``)."""
    a = _t(a)
    axis = int(axis) % a.ndim
    start = int(start) + a.ndim if start < 0 else int(start)
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start) if axis != start else a


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (flips and a transpose)."""
    m = _t(m)
    k %= 4
    a0, a1 = axes
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _shape_ops.permute(flip(m, a1), tuple(perm))
    return flip(_shape_ops.permute(m, tuple(perm)), a1)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +-inf -> large finite numbers; the gradient passes where ``x`` was
    finite and is zero at the replaced elements."""
    x = _t(x)
    if not x.dtype.is_floating_point:
        return x
    fi = _np.finfo(x.dtype.np)
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
    return _complex_ops.angle(_t(z), deg)


def gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient``: second-order central differences inside, one-sided at the edges
    (``edge_order=1``), uniform scalar spacings; a linear map of ``f``, so it is differentiable."""
    f = _t(f)
    if edge_order != 1:
        raise NotImplementedError("jitgrad.numpy.gradient: only edge_order=1 is supported")
    axes = list(range(f.ndim)) if axis is None else list(_axes(axis, f.ndim))
    if len(varargs) == 0:
        hs = [1.0] * len(axes)
    elif len(varargs) == 1:
        hs = [varargs[0]] * len(axes)
    else:
        hs = list(varargs)
    if len(hs) != len(axes) or _builtins.any(_np.ndim(h) for h in hs):
        raise NotImplementedError("jitgrad.numpy.gradient: give one scalar spacing per axis")
    outs = []
    for ax, h in zip(axes, hs):
        n = f.shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        first = (_slice_axis(f, ax, 1, 2) - _slice_axis(f, ax, 0, 1)) / h
        last = (_slice_axis(f, ax, n - 1, n) - _slice_axis(f, ax, n - 2, n - 1)) / h
        parts = [first]
        if n > 2:
            parts.append((_slice_axis(f, ax, 2, n) - _slice_axis(f, ax, 0, n - 2)) / (2.0 * h))
        parts.append(last)
        outs.append(_shape_ops.cat(parts, ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


__array_api_version__ = "2023.12"


@_mark_passthrough
def isdtype(dtype, kind):
    """Array API ``isdtype`` for NumPy dtypes (and jitgrad dtypes)."""
    dtype = _np.dtype(getattr(dtype, "np", dtype))
    kinds = kind if isinstance(kind, tuple) else (kind,)
    table = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
             "real floating": "f", "complex floating": "c", "numeric": "iufc"}
    for k in kinds:
        if isinstance(k, str):
            if dtype.kind in table[k]:
                return True
        elif dtype == _np.dtype(getattr(k, "np", k)):
            return True
    return False


from . import fft, linalg, random  # noqa: E402,F401  (they use the functions above)
from ._array_api import *  # noqa: E402,F401,F403  (Array API names; they use the functions above)
from ._array_api import __array_namespace_info__, _missing_message  # noqa: E402,F401
# issue 19: NumPy functions composed of the above (each module's docstring has the math)
from ._math_more import *  # noqa: E402,F401,F403
from ._stats import *  # noqa: E402,F401,F403
from ._poly import *  # noqa: E402,F401,F403
from ._assemble import *  # noqa: E402,F401,F403
from ._passthrough import *  # noqa: E402,F401,F403  (non-differentiable utilities)

__all__ = sorted(n for n in globals() if not n.startswith("_"))

# --- plain inputs get NumPy's result (Note [plain inputs] in _plain.py) ----------------------
_plain.install(globals(), _np, "numpy")
_plain.install(linalg.__dict__, _np.linalg, "numpy.linalg")
_plain.install(fft.__dict__, _np.fft, "numpy.fft")

# --- the one table: NumPy object -> implementation (used by jitgrad._protocols) ---------------
UFUNCS: dict = {}
FUNCTIONS: dict = {}
_SKIP = {"ndarray", "pi", "e", "inf", "nan", "newaxis", "euler_gamma", "linalg", "random", "fft",
         "Tensor", "fix", "isdtype", "astype"}
for _n, _v in list(globals().items()):
    if _n.startswith("_") or _n in _SKIP or not callable(_v) or isinstance(_v, type):
        continue
    _obj = getattr(_np, _n, None)
    if _obj is None or isinstance(_obj, type):
        continue
    if isinstance(_obj, _np.ufunc):
        UFUNCS[_obj] = _plain.enter(_v)
    elif callable(_obj):
        FUNCTIONS[_obj] = _plain.enter(_v)
for _name in ("linalg", "fft"):
    _mod = globals()[_name]
    for _n in getattr(_mod, "__all__", ()):
        _obj = getattr(getattr(_np, _name), _n, None)  # (NumPy 1.x lacks the Array API names)
        if _obj is not None:
            FUNCTIONS[_obj] = _plain.enter(getattr(_mod, _n))
FUNCTIONS[_np.fix] = _plain.enter(fix)


def __getattr__(name):
    msg = _missing_message(name)
    if msg:
        raise AttributeError(msg)
    if hasattr(_np, name):
        raise AttributeError(
            f"jitgrad.numpy has no '{name}': numpy.{name} is not covered (no derivative rule). "
            f"Run numpy.{name} on the data (tensor.numpy()) if no gradient is needed; "
            "see docs/numpy.md for what is covered")
    raise AttributeError(f"module 'jitgrad.numpy' has no attribute '{name}'")
