"""Scalar math usable in derivative bodies, on numbers inside Numba kernels AND on Tensors.

A backward body such as ``def _sin_dx(g, x): return g * cos(x)`` is compiled into a kernel (Numba
sees ``cos`` through the ``@overload`` below) and, for ``create_graph``, called on Tensors (the
Python function dispatches to the registry op, recording the graph). One formula, both paths.

Inside kernels the transcendentals are jitgrad's vectorisable implementations
(``kernels/cpu/vmath.py``, <= 1.5 ulp, NumPy's special values) unless ``JITGRAD_FAST_MATH=0`` asks for
libm through Numba's ``math`` module (docs/fastmath.md). Every op body calls these functions, never
``math.*`` directly, so the switch is made here, in one place.
"""
from __future__ import annotations

import cmath
import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ... import _config
from ...kernels import special_scalar
from ...kernels.cpu import vmath
from . import devices
from .registry import OPS


def _is_tensor(x) -> bool:
    from . import dispatch

    return isinstance(x, dispatch.Tensor)


#: (function, typer factory, scalar implementation or ``_cuda_only_impls`` name for the CUDA
#: target): registered by ``register_cuda``
_CUDA_IMPLS: list = []


def _unary(name: str, scalar_impl, np_impl, fast=None, complex_impl=None, int_impl=None,
           cuda_impl=None):
    """Build the dual-use function ``name`` and register its Numba overload: ``fast`` (a vmath
    function) in fast-math mode when given, else ``scalar_impl`` (libm); for a complex argument
    ``complex_impl`` (cmath: vmath and the libm forms are real-only), when given; for an integer
    or bool argument ``int_impl``, when given (``floor`` of an int is the int itself). On CUDA
    the libm form, or ``cuda_impl`` (a name in ``_cuda_only_impls``) where libm's is not there."""
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

    def pick(impl):
        def typer(x):
            if isinstance(x, types.Complex):
                return complex_impl  # None (no implementation) for the real-only functions
            if int_impl is not None and isinstance(x, (types.Integer, types.Boolean)):
                return int_impl
            return impl
        return typer

    overload(fn, inline="always")(pick(scalar_impl))
    # on CUDA the libm forms compile to the device's own math library (libdevice)
    _CUDA_IMPLS.append((fn, pick, cuda_impl or libm_impl))
    return fn


def _binary(name: str, scalar_impl, np_impl, int_impl=None, cuda_impl=None):
    """The two-argument form of ``_unary``: ``int_impl`` when both arguments are integers or
    bools, else ``scalar_impl`` (``cuda_impl`` on CUDA when given)."""
    def fn(x, y):
        if _is_tensor(x) or _is_tensor(y):
            from . import dispatch

            return dispatch.elementwise(OPS[name], x, y)
        with np.errstate(all="ignore"):
            return np_impl(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}`` of two numbers (in kernels) or Tensors (recorded)."

    def pick(impl):
        def typer(x, y):
            if isinstance(x, types.Complex) or isinstance(y, types.Complex):
                return None
            ints = (types.Integer, types.Boolean)
            if int_impl is not None and isinstance(x, ints) and isinstance(y, ints):
                return int_impl
            return impl
        return typer

    overload(fn, inline="always")(pick(scalar_impl))
    _CUDA_IMPLS.append((fn, pick, cuda_impl or scalar_impl))
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
    cuda_only = _cuda_only_impls()
    for fn, pick, impl in impls:
        impl = cuda_only[impl] if isinstance(impl, str) else impl
        cuda_overload(fn, target="cuda", inline="always")(pick(impl))
    cuda_overload(zero, target="cuda", inline="always")(_zero_ov)
    cuda_overload(where, target="cuda", inline="always")(_where_ov)


devices.on_cuda_load(register_cuda)


def _cuda_only_impls() -> dict:
    """Scalar forms for the CUDA target that Numba's CPU ``math`` lacks (built only when CUDA is
    first used: they name ``numba.cuda``)."""
    from numba import cuda

    def cbrt_impl(x):
        return cuda.cbrt(x)  # (the stub is typed as an attribute of cuda, not under an alias)

    def fmod_impl(x, y):
        if y == 0 or math.isinf(x) or x != x or y != y:  # C's fmod special values
            return math.nan
        return math.fmod(x, y)

    special = _cuda_special()  # (its functions bound to names: Numba types no namespace)
    gammaln_d, digamma_d, polygamma_d = special.gammaln, special.digamma, special.polygamma

    def gammaln_impl(x):
        return gammaln_d(float(x))

    def digamma_impl(x):
        return digamma_d(float(x))

    def polygamma_impl(n, x):
        return polygamma_d(float(n), float(x))

    return {"cbrt": cbrt_impl, "fmod": fmod_impl, "gammaln": gammaln_impl,
            "digamma": digamma_impl, "polygamma": polygamma_impl}


def _cuda_special():
    """The gamma-family device functions (``kernels.cuda.special``, compiled from
    ``device.special_scalar``)."""
    from ...kernels.cuda import special as cuda_special

    return cuda_special.SPECIAL


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
             vmath.log, lambda x: cmath.log(x))
log1p = _unary("log1p", lambda x: math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan),
               np.log1p, vmath.log1p)
sin = _unary("sin", lambda x: math.sin(x), np.sin, vmath.sin, lambda x: cmath.sin(x))
cos = _unary("cos", lambda x: math.cos(x), np.cos, vmath.cos, lambda x: cmath.cos(x))
tan = _unary("tan", lambda x: math.tan(x), np.tan, vmath.tan)
tanh = _unary("tanh", lambda x: math.tanh(x), np.tanh, vmath.tanh, lambda x: cmath.tanh(x))
sinh = _unary("sinh", lambda x: math.sinh(x) if abs(x) < 711.0 else x * math.inf, np.sinh, vmath.sinh,
              lambda x: cmath.sinh(x))
cosh = _unary("cosh", lambda x: math.cosh(x) if abs(x) < 711.0 else abs(x) * math.inf, np.cosh,
              vmath.cosh, lambda x: cmath.cosh(x))
erf = _unary("erf", lambda x: math.erf(x), np.vectorize(math.erf, otypes=[float]), vmath.erf)
sqrt = _unary("sqrt", lambda x: math.sqrt(x) if x >= 0 else math.nan, np.sqrt)
sigmoid = _unary("sigmoid", _sigmoid_scalar, lambda x: 1.0 / (1.0 + np.exp(-x)), vmath.sigmoid)
sign = _unary("sign", _sign_scalar, np.sign)


# --- the NumPy-namespace functions (ops/elementwise_np.py): libm through Numba's ``math`` (no
# vmath forms yet); the guards give NumPy's special values where a libm form would differ
_BIG = 4503599627370496.0  # 2**52: every float64 (and float32) this large is an integer


def _floor_scalar(x):
    if not abs(x) < _BIG:  # nan, +-inf, huge: already integral (math.floor gives an int)
        return x
    return math.copysign(math.floor(x), x)  # copysign keeps -0.0


def _ceil_scalar(x):
    if not abs(x) < _BIG:
        return x
    return math.copysign(-math.floor(-x), x)


def _trunc_scalar(x):
    if not abs(x) < _BIG:
        return x
    return math.copysign(math.floor(abs(x)), x)


_rint_scalar = vmath.rint_scalar  # (shared with the CUDA forward of round)


def _same(x):
    return x


@njit(inline="always")
def _ceil_fast(x):
    return -vmath.floor(-x)  # -0.0 on (-1, 0], as C's ceil


def _asin_scalar(x):
    if -1.0 <= x <= 1.0:
        return math.asin(x)
    return math.nan


def _acos_scalar(x):
    if -1.0 <= x <= 1.0:
        return math.acos(x)
    return math.nan


def _acosh_scalar(x):
    if x >= 1.0:
        return math.acosh(x)
    return math.nan


def _atanh_scalar(x):
    if -1.0 < x < 1.0:
        return math.atanh(x)
    if x == 1.0 or x == -1.0:
        return x * math.inf
    return math.nan


def _log2_scalar(x):
    if x > 0:
        return math.log2(x)
    if x == 0:
        return -math.inf
    return math.nan


def _log10_scalar(x):
    if x > 0:
        return math.log10(x)
    if x == 0:
        return -math.inf
    return math.nan


def _exp2_scalar(x):
    if x >= 1024.0:  # (not x < 1024: nan goes to exp2, which gives nan)
        return math.inf
    return math.exp2(x)


def _fmod_int(x, y):
    # C's truncated remainder (the sign of x); 0 for y == 0, as NumPy
    if y == 0:
        return y
    r = x % y
    if r != 0 and (r < 0) != (x < 0):
        r = r - y
    return r


def _copysign_int(x, y):
    return abs(x) if y >= 0 else -abs(x)


floor = _unary("floor", _floor_scalar, np.floor, vmath.floor, int_impl=_same)
ceil = _unary("ceil", _ceil_scalar, np.ceil, _ceil_fast, int_impl=_same)
trunc = _unary("trunc", _trunc_scalar, np.trunc, vmath.trunc, int_impl=_same)
rint = _unary("rint", _rint_scalar, np.rint, vmath.rint)
arcsin = _unary("arcsin", _asin_scalar, np.arcsin)
arccos = _unary("arccos", _acos_scalar, np.arccos)
arctan = _unary("arctan", lambda x: math.atan(x), np.arctan)
arcsinh = _unary("arcsinh", lambda x: math.asinh(x), np.arcsinh)
arccosh = _unary("arccosh", _acosh_scalar, np.arccosh)
arctanh = _unary("arctanh", _atanh_scalar, np.arctanh)
exp2 = _unary("exp2", _exp2_scalar, np.exp2)
log2 = _unary("log2", _log2_scalar, np.log2)
log10 = _unary("log10", _log10_scalar, np.log10)
cbrt = _unary("cbrt", lambda x: np.cbrt(x), np.cbrt, cuda_impl="cbrt")
arctan2 = _binary("arctan2", lambda x, y: math.atan2(x, y), np.arctan2)  # (y, x) in NumPy terms
hypot = _binary("hypot", lambda x, y: math.hypot(x, y), np.hypot)
copysign = _binary("copysign", lambda x, y: math.copysign(x, y), np.copysign,
                   int_impl=_copysign_int)
fmod = _binary("fmod", lambda x, y: np.fmod(x, y), np.fmod, int_impl=_fmod_int, cuda_impl="fmod")


# --- the gamma family (ops/special.py): kernels/special_scalar.py's scalar code, compiled with
# njit here and with cuda.jit for the device (Note [gamma family scalars]); float64 inside
_SPECIAL = special_scalar.build(njit)
_gammaln_cpu, _digamma_cpu, _polygamma_cpu = _SPECIAL.gammaln, _SPECIAL.digamma, _SPECIAL.polygamma


def _on_numbers(scalar_fn):
    """``scalar_fn`` over a number or an array of numbers (float64 results)."""
    vectorized = np.vectorize(scalar_fn, otypes=[np.float64])
    return lambda *args: vectorized(*args)[()]


def _gammaln_scalar(x):
    return _gammaln_cpu(float(x))


def _digamma_scalar(x):
    return _digamma_cpu(float(x))


gammaln = _unary("gammaln", _gammaln_scalar, _on_numbers(_gammaln_cpu), cuda_impl="gammaln")
digamma = _unary("digamma", _digamma_scalar, _on_numbers(_digamma_cpu), cuda_impl="digamma")
_polygamma_numbers = _on_numbers(_polygamma_cpu)


def polygamma(n, x):
    """``polygamma(n, x)`` of a number (in kernels) or of a Tensor (recorded; ``n`` a Python
    int, the row's attribute; ``n == 0`` is ``digamma``)."""
    if _is_tensor(x):
        if n == 0:
            return digamma(x)
        from . import dispatch

        return dispatch.elementwise(OPS["polygamma"], x, n=n)
    with np.errstate(all="ignore"):
        return _polygamma_numbers(float(n), x)


def _polygamma_scalar(n, x):
    return _polygamma_cpu(float(n), float(x))


def _polygamma_typer(impl):
    def typer(n, x):
        if isinstance(x, types.Complex):
            return None
        return impl
    return typer


overload(polygamma, inline="always")(_polygamma_typer(_polygamma_scalar))
_CUDA_IMPLS.append((polygamma, _polygamma_typer, "polygamma"))


_PI32 = np.float32(math.pi)


def pi_times(x):
    """``pi * x`` in ``x``'s precision (float32 stays float32, as NumPy's ``np.pi * x``; a
    Python ``math.pi`` in a kernel would make float32 math float64)."""
    return math.pi * x  # NumPy scalars and Tensors: the Python float is weak (NEP 50)


def _pi_times_typer(x):
    if isinstance(x, types.Float) and x.bitwidth == 32:
        return lambda x: _PI32 * x
    return lambda x: math.pi * x


overload(pi_times, inline="always")(_pi_times_typer)
_CUDA_IMPLS.append((pi_times, lambda impl: _pi_times_typer, None))


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
