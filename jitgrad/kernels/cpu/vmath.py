"""Vectorisable float32/float64 transcendental functions for Numba kernels.

Numba lowers ``math.exp`` and friends to scalar libm calls, so a loop calling them never
vectorises. The functions here are written as branch-free range reduction plus polynomial (the
approach of SLEEF and NumPy's SIMD loops), so that a simple ``@njit`` loop calling one of them over
an array compiles to packed AVX2/AVX-512 code. See ``docs/fastmath.md`` for the algorithms, the
measured accuracy (``MAX_ULP``) and the special values.

Use: call ``vmath.sin(x)`` inside ``@njit`` code on a float64 or float32 scalar; the result has the
argument's type (float32 arguments are computed with float32 polynomials, so float32 loops run
8 lanes wide on AVX2). Integer arguments are computed as float64. From plain Python the same names
accept a float (returning a float) or a NumPy array (returning an array of its float dtype; other
dtypes are computed as float64), for tests and benchmarks.

Note [vectorisable bodies]: the rules the implementations follow:
* no branches that survive to LLVM: ``a if cond else b`` on scalars becomes a ``select``;
* no calls except LLVM intrinsics that have packed forms (``llvm.fma``); divisions use ``_fdiv``
  so no zero-division check is emitted whatever the caller's ``error_model``;
* bit manipulation through same-width bitcasts (``_bits``/``_float``); conversions between floats
  and integers by the 1.5*2**52 (1.5*2**23) "magic number" trick, since AVX2 has no packed
  float64 <-> int64 conversion;
* float32 code keeps every constant float32 (module-level ``np.float32`` globals): a Python float
  would turn the computation into float64 (DESIGN-NUMBA.md). ``_fma``/``_fdiv`` refuse mixed types,
  which catches such slips at compile time.

Coefficients were fitted by a Remez exchange in mpmath (relative or absolute error, as noted at
each polynomial), then rounded to the working precision.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "pow",
           "sinh", "cosh", "FUNCTIONS", "MAX_ULP"]

# Stated error bounds in ulps, over the whole domain, for (function, dtype). Measured maxima
# (docs/fastmath.md has the table) are below these; tests/kernels/test_vmath.py asserts them.
MAX_ULP: dict = {
    ("exp", "float64"): 1.0, ("exp", "float32"): 1.0,
    ("expm1", "float64"): 1.5, ("expm1", "float32"): 1.0,
    ("log", "float64"): 1.0, ("log", "float32"): 1.0,
    ("log1p", "float64"): 1.0, ("log1p", "float32"): 1.0,
    ("sin", "float64"): 1.0, ("sin", "float32"): 1.0,
    ("cos", "float64"): 1.0, ("cos", "float32"): 1.0,
    ("tan", "float64"): 1.5, ("tan", "float32"): 1.5,
    ("tanh", "float64"): 1.5, ("tanh", "float32"): 1.0,
    ("sigmoid", "float64"): 1.0, ("sigmoid", "float32"): 1.0,
    ("erf", "float64"): 1.5, ("erf", "float32"): 1.5,
    ("sinh", "float64"): 1.0, ("sinh", "float32"): 1.0,
    ("cosh", "float64"): 1.0, ("cosh", "float32"): 1.0,
    ("pow", "float64"): 1.0, ("pow", "float32"): 1.0,
}

_f32 = np.float32
_i32 = np.int32


# ------------------------------------------------------------------------------------ primitives

def _lltype(t):
    return ir.DoubleType() if t.bitwidth == 64 else ir.FloatType()


def _call_intrinsic(builder, name, args):
    t = args[0].type
    fnty = ir.FunctionType(t, [a.type for a in args])
    return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), args)


@intrinsic
def _fma(typingctx, a, b, c):
    """a*b + c with one rounding (llvm.fma: vfmadd on FMA hardware)."""
    if isinstance(a, types.Float) and a == b and a == c:
        def codegen(context, builder, sig, args):
            suffix = "f64" if sig.return_type.bitwidth == 64 else "f32"
            return _call_intrinsic(builder, "llvm.fma." + suffix, args)
        return a(a, b, c), codegen
    return None


@intrinsic
def _fdiv(typingctx, a, b):
    """a / b as a plain IEEE division: no ZeroDivisionError check (keeps loops vectorisable)."""
    if isinstance(a, types.Float) and a == b:
        def codegen(context, builder, sig, args):
            return builder.fdiv(args[0], args[1])
        return a(a, b), codegen
    return None


def _rounding_intrinsic(llvm_name: str, doc: str):
    """An intrinsic calling ``llvm.<llvm_name>`` on a float, returning a float of the same
    width (vroundpd/vroundps: packed, unlike ``math.floor``, which returns an int)."""
    def typer(typingctx, x):
        if isinstance(x, types.Float):
            def codegen(context, builder, sig, args):
                suffix = "f64" if sig.return_type.bitwidth == 64 else "f32"
                return _call_intrinsic(builder, f"llvm.{llvm_name}.{suffix}", args)
            return x(x), codegen
        return None

    typer.__name__ = typer.__qualname__ = f"_{llvm_name}"
    typer.__doc__ = doc
    return intrinsic(typer)


_floor = _rounding_intrinsic("floor", "floor(x) as a float.")
_trunc = _rounding_intrinsic("trunc", "trunc(x) as a float.")
_rint = _rounding_intrinsic("rint", "x rounded to the nearest integer, ties to even, as a float "
                                    "(the default rounding mode; -0.0, +-inf and nan kept).")


#: exact rounding to integers in kernels, as floats (nan, +-inf and the sign of zero kept):
#: ``ops.smath``'s floor/ceil/trunc/rint in fast-math mode
floor, trunc, rint = _floor, _trunc, _rint


def rint_scalar(x):
    """Round half to even, keeping the sign of zero; nan, inf and values from 2**52 on (already
    integers) unchanged. A plain scalar form (libm ``floor``) for the CUDA device functions and
    JITGRAD_FAST_MATH=0; ``x - floor(x)`` is exact, so the tie test is exact."""
    if not abs(x) < 4503599627370496.0:
        return x
    r = math.floor(x)
    d = x - r
    if d > 0.5 or (d == 0.5 and math.floor(r * 0.5) * 2.0 != r):
        r = r + 1.0
    return math.copysign(r, x)


@njit(inline="always")
def _signbit(x):
    return _bits(x) < 0


@intrinsic
def _bits(typingctx, x):
    """The bit pattern of a float64 (float32) as int64 (int32)."""
    if isinstance(x, types.Float):
        ity = types.int64 if x.bitwidth == 64 else types.int32

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], ir.IntType(x.bitwidth))
        return ity(x), codegen
    return None


@intrinsic
def _float(typingctx, i):
    """The float64 (float32) with the bit pattern of an int64 (int32)."""
    if isinstance(i, types.Integer) and i.bitwidth in (32, 64):
        fty = types.float64 if i.bitwidth == 64 else types.float32

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], _lltype(fty))
        return fty(i), codegen
    return None


# The top-level implementation of each function and dtype (Note [inlining]).
_impl = njit(nogil=True, error_model="numpy")


# ------------------------------------------------------------------------------ exp and family
#
# x = n*ln2 + r, |r| <= ln2/2, n = round(x/ln2) by the magic-number trick (the integer lands in
# the low mantissa bits of x/ln2 + 1.5*2**52). fma(-n, LN2_HI, x) is exact (both terms are
# multiples of 2**-53 and the difference is below 1), so r = r_hi + r_lo to ~2**-106 relative.
# expm1(r) = r + r**2 * P(r), P fitted for relative error of expm1(r) on |r| <= ln2/2 (weighted
# Remez, max error 2**-58.4 in float64; 2**-31.8 for the float32 set; exp32 uses a shorter set
# fitted for exp's relative error, 2**-28.3). 2**n is built from bits in two halves, so results
# that overflow give inf and results in the subnormal range are rounded once.

_MAGIC = 6755399441055744.0                      # 1.5 * 2**52
_MAGIC_BITS = 0x4338000000000000
_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471805599453
_LN2_LO = 2.3190468138462996e-17
_EP = (0.5000000000000001, 0.1666666666666667, 0.0416666666666523, 0.008333333333326158,
       0.0013888888895593216, 0.00019841269874745592, 2.4801574543057954e-05, 2.75572554866194e-06,
       2.756792512760917e-07, 2.510518387762956e-08, 1.7687719558334215e-09)
_EP0, _EP1, _EP2, _EP3, _EP4, _EP5, _EP6, _EP7, _EP8, _EP9, _EP10 = _EP

_MAGIC_F = _f32(12582912.0)                      # 1.5 * 2**23
_MAGIC_BITS_F = 0x4B400000
_LOG2E_F = _f32(1.4426950216293335)
_LN2_HI_F = _f32(0.6931471824645996)
_LN2_LO_F = _f32(-1.9046542121259336e-09)
_EPF = tuple(_f32(c) for c in (0.5, 0.1666666716337204, 0.04166632890701294, 0.008333220146596432,
                                0.0013943198136985302, 0.00019962147052865475))
_EPF0, _EPF1, _EPF2, _EPF3, _EPF4, _EPF5 = _EPF
_XPF = tuple(_f32(c) for c in (0.4999999403953552, 0.1666652113199234, 0.04166838899254799,
                                0.008368715643882751, 0.0013814602280035615))
_XPF0, _XPF1, _XPF2, _XPF3, _XPF4 = _XPF
_ONE_F, _HALF_F, _TWO_F, _ZERO_F = _f32(1.0), _f32(0.5), _f32(2.0), _f32(0.0)
_INF, _NAN = math.inf, math.nan
_INF_F, _NAN_F = _f32(math.inf), _f32(math.nan)


@njit(inline="always")
def _reduce_ln2(x):
    """x = n*ln2 + r_hi + r_lo; returns (n as int64, n as float64, r_hi, r_lo). |x| < 2**51."""
    kd = _fma(x, _LOG2E, _MAGIC)
    n = _bits(kd) - _MAGIC_BITS
    kd = kd - _MAGIC
    rh = _fma(-kd, _LN2_HI, x)               # exact
    r = _fma(-kd, _LN2_LO, rh)
    rl = _fma(-kd, _LN2_LO, rh - r)          # rh - r is exact
    return n, kd, r, rl


@njit(inline="always")
def _expm1_poly(r, rl):
    """expm1(r + rl) - r as a small tail: the result is r + tail (|r| <= ln2/2)."""
    p = _fma(r, _EP10, _EP9)
    p = _fma(r, p, _EP8)
    p = _fma(r, p, _EP7)
    p = _fma(r, p, _EP6)
    p = _fma(r, p, _EP5)
    p = _fma(r, p, _EP4)
    p = _fma(r, p, _EP3)
    p = _fma(r, p, _EP2)
    p = _fma(r, p, _EP1)
    p = _fma(r, p, _EP0)
    return _fma(r * r, p, rl + r * rl)


@njit(inline="always")
def _scale2(p, n):
    """p * 2**n for |n| <= 2100 with a single rounding (two exact power-of-two factors)."""
    n1 = n >> 1
    s1 = _float((n1 + 1023) << 52)
    s2 = _float((n - n1 + 1023) << 52)
    return (p * s1) * s2


@_impl
def _exp64(x):
    x = 710.0 if x > 710.0 else x
    x = -746.0 if x < -746.0 else x
    n, kd, r, rl = _reduce_ln2(x)
    p = 1.0 + (r + _expm1_poly(r, rl))
    return _scale2(p, n)


@_impl
def _expm1_64(x):
    xc = 709.8 if x > 709.8 else x
    xc = -40.0 if xc < -40.0 else xc
    n, kd, r, rl = _reduce_ln2(xc)
    t = _expm1_poly(r, rl)
    # expm1(x) = 2**n * (r + t + 1) - 1 = 2 * (h*r + (h - 1/2) + h*t), h = 2**(n-1): h*r and
    # h - 1/2 are exact and |h - 1/2| >= |h*r| unless h = 1/2, so Fast2Sum keeps their sum exact
    # (for n > 53, h - 1/2 is inexact: the 1/2 joins the small tail instead)
    h = _float((n + 1022) << 52)
    big = n > 53
    a = h if big else h - 0.5
    b = h * r
    s = a + b
    tail = _fma(h, t, (a - s) + b)
    tail = tail - 0.5 if big else tail
    res = 2.0 * (s + tail)                      # overflows to inf exactly when expm1(x) does
    return x if abs(x) < 5.551115123125783e-17 else res      # |x| < 2**-54, also -0.0


@njit(inline="always")
def _reduce_ln2_f(x):
    kd = _fma(x, _LOG2E_F, _MAGIC_F)
    n = _bits(kd) - _MAGIC_BITS_F
    kd = kd - _MAGIC_F
    rh = _fma(-kd, _LN2_HI_F, x)             # exact
    r = _fma(-kd, _LN2_LO_F, rh)
    rl = _fma(-kd, _LN2_LO_F, rh - r)
    return n, kd, r, rl


@njit(inline="always")
def _scale2_f(p, n):
    n1 = n >> 1
    s1 = _float(_i32((n1 + 127) << 23))
    s2 = _float(_i32((n - n1 + 127) << 23))
    return (p * s1) * s2


@_impl
def _exp32(x):
    x = _f32(89.0) if x > _f32(89.0) else x
    x = _f32(-104.0) if x < _f32(-104.0) else x
    n, kd, r, rl = _reduce_ln2_f(x)
    p = _fma(r, _XPF4, _XPF3)
    p = _fma(r, p, _XPF2)
    p = _fma(r, p, _XPF1)
    p = _fma(r, p, _XPF0)
    p = _ONE_F + (r + _fma(r * r, p, rl))
    return _scale2_f(p, n)


@njit(inline="always")
def _expm1_poly_f(r, rl):
    p = _fma(r, _EPF5, _EPF4)
    p = _fma(r, p, _EPF3)
    p = _fma(r, p, _EPF2)
    p = _fma(r, p, _EPF1)
    p = _fma(r, p, _EPF0)
    return _fma(r * r, p, rl + r * rl)


@_impl
def _expm1_32(x):
    xc = _f32(88.8) if x > _f32(88.8) else x
    xc = _f32(-18.0) if xc < _f32(-18.0) else xc
    n, kd, r, rl = _reduce_ln2_f(xc)
    t = _expm1_poly_f(r, rl)
    h = _float(_i32((n + 126) << 23))
    big = n > 24
    a = h if big else h - _HALF_F
    b = h * r
    s = a + b
    tail = _fma(h, t, (a - s) + b)
    tail = tail - _HALF_F if big else tail
    res = _TWO_F * (s + tail)
    return x if abs(x) < _f32(2.9802322e-08) else res          # |x| < 2**-25


# ----------------------------------------------------------------------------- log and log1p
#
# x = 2**k * m with m in [sqrt(1/2), sqrt(2)) straight from the bits (subnormals are scaled by
# 2**54 first); f = m - 1 (exact), s = f/(2+f), log(1+f) = 2*atanh(s) = f - hfsq + s*(hfsq + R(s*s))
# with hfsq = f*f/2 (the arrangement of FreeBSD's e_log.c). R(z) = 2*atanh(s)/s - 2 is fitted
# for absolute error on z <= 0.1716**2 (2**-58.5 in float64 with 7 terms, 2**-29.2 in float32
# with 3). k*ln2 uses a short LN2_HI so k*LN2_HI is exact. k reaches the float unit through the
# magic number (no packed int64 -> float64 conversion on AVX2).

_LN2_HI42 = 0.6931471805598903                   # 42 significant bits
_LN2_LO42 = 5.497923018708371e-14
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD
_LR = (0.6666666666666734, 0.3999999999941438, 0.2857142874246002, 0.2222219856513655,
       0.1818356477468831, 0.15314038338773417, 0.14796078955260047)
_LR1, _LR2, _LR3, _LR4, _LR5, _LR6, _LR7 = _LR
_TWO54 = 18014398509481984.0
_LN2_HI16_F = _f32(0.693145751953125)            # 16 significant bits
_LN2_LO16_F = _f32(1.428606765330187e-06)
_SQRT_HALF_BITS_F = 0x3F3504F3
_LRF1, _LRF2, _LRF3 = (_f32(c) for c in (0.6666677594184875, 0.3997753858566284,
                                          0.2987183928489685))
_TWO25_F = _f32(33554432.0)
_TINY_NORMAL = 2.2250738585072014e-308
_TINY_NORMAL_F = _f32(1.1754943508222875e-38)


@njit(inline="always")
def _log_core(u, c):
    """log(u) + c for u > 0 normal or subnormal, finite; c a small correction."""
    sub = u < _TINY_NORMAL
    u = u * _TWO54 if sub else u
    bits = _bits(u)
    k = (bits - _SQRT_HALF_BITS) >> 52
    m = _float(bits - (k << 52))
    kd = _float(k + _MAGIC_BITS) - _MAGIC
    kd = kd - 54.0 if sub else kd
    f = m - 1.0
    hfsq = 0.5 * f * f
    s = _fdiv(f, 2.0 + f)
    z = s * s
    r = _fma(z, _LR7, _LR6)
    r = _fma(z, r, _LR5)
    r = _fma(z, r, _LR4)
    r = _fma(z, r, _LR3)
    r = _fma(z, r, _LR2)
    r = _fma(z, r, _LR1)
    r = r * z
    return _fma(kd, _LN2_HI42, -((hfsq - _fma(s, hfsq + r, _fma(kd, _LN2_LO42, c))) - f))


@_impl
def _log64(x):
    res = _log_core(x, 0.0)
    res = x if not x < _INF else res             # +inf, nan
    res = -_INF if x == 0.0 else res
    return _NAN if x < 0.0 else res


@_impl
def _log1p64(x):
    u = 1.0 + x
    # the rounding error of 1 + x (Fast2Sum with the larger operand first), divided by u
    err = x - (u - 1.0) if x < 1.0 else 1.0 - (u - x)
    res = _log_core(u, _fdiv(err, u))
    res = x if not x < _INF else res
    res = -_INF if x == -1.0 else res
    res = _NAN if x < -1.0 else res
    return x if abs(x) < 5.551115123125783e-17 else res      # |x| < 2**-54, also -0.0


@njit(inline="always")
def _log_core_f(u, c):
    sub = u < _TINY_NORMAL_F
    u = u * _TWO25_F if sub else u
    bits = _bits(u)
    k = (bits - _SQRT_HALF_BITS_F) >> 23
    m = _float(_i32(bits - (k << 23)))
    kd = _float(_i32(k + _MAGIC_BITS_F)) - _MAGIC_F
    kd = kd - _f32(25.0) if sub else kd
    f = m - _ONE_F
    hfsq = _HALF_F * f * f
    s = _fdiv(f, _TWO_F + f)
    z = s * s
    r = _fma(z, _LRF3, _LRF2)
    r = _fma(z, r, _LRF1)
    r = r * z
    return _fma(kd, _LN2_HI16_F, -((hfsq - _fma(s, hfsq + r, _fma(kd, _LN2_LO16_F, c))) - f))


@_impl
def _log32(x):
    res = _log_core_f(x, _ZERO_F)
    res = x if not x < _INF_F else res
    res = -_INF_F if x == _ZERO_F else res
    return _NAN_F if x < _ZERO_F else res


@_impl
def _log1p32(x):
    u = _ONE_F + x
    err = x - (u - _ONE_F) if x < _ONE_F else _ONE_F - (u - x)
    res = _log_core_f(u, _fdiv(err, u))
    res = x if not x < _INF_F else res
    res = -_INF_F if x == -_ONE_F else res
    res = _NAN_F if x < -_ONE_F else res
    return x if abs(x) < _f32(2.9802322e-08) else res          # |x| < 2**-25


# ------------------------------------------------------------- tanh, sigmoid, sinh and cosh
#
# All from the exp reduction above, keeping e**a = 2**n * (1 + r + t) unrounded so that no
# cancellation or intermediate rounding costs accuracy:
# tanh(|x|) = (1 - E)/(1 + E), E = e**(-2|x|): numerator and denominator are formed as exact
#   pairs (1 - 2**n is split by Fast2Sum) and divided with one correction step (_div2);
# sigmoid(x) = 1/(1 + E) for x >= 0, (E/2**n)/(1 + E) * 2**n for x < 0, E = e**(-|x|), so
#   results deep in the subnormal range are rounded once;
# cosh(x) = H + 1/(4H), sinh(x) = H - 1/(4H) with H = e**|x|/2 as a pair (scaled in two
#   halves, so cosh/sinh stay finite up to |x| = 710.47); sinh(x) = x + x**3*P(x*x) for |x| < 1
#   (relative Remez, 2**-63 in float64 with 7 terms, 2**-34 in float32 with 4).

_SH = (0.16666666666666669, 0.008333333333333148, 0.00019841269841431873, 2.755731915707187e-06,
       2.505212313672338e-08, 1.6057259768755445e-10, 7.758748798666065e-13)
_SH0, _SH1, _SH2, _SH3, _SH4, _SH5, _SH6 = _SH
_SHF0, _SHF1, _SHF2, _SHF3 = (_f32(c) for c in (0.1666666716337204, 0.008333349600434303,
                                               0.0001983615948120132, 2.8169511097075883e-06))
_TINY_HYP = 3.725290298461914e-09                # 2**-28: tanh(x) = sinh(x) = x below
_TINY_HYP_F = _f32(0.0001220703125)              # 2**-13
_QUARTER_F = _f32(0.25)


@njit(inline="always")
def _div2(nh, nl, dh, dl, one):
    """(nh + nl) / (dh + dl) with one residual correction: error ~2**-100 before rounding."""
    inv = _fdiv(one, dh + dl)
    t = (nh + nl) * inv
    return _fma(_fma(-t, dh, nh) + _fma(-t, dl, nl), inv, t)


@_impl
def _tanh64(x):
    a = abs(x)
    a = 19.5 if a > 19.5 else a                  # tanh(19.5) rounds to 1; nan stays nan
    n, kd, r, rl = _reduce_ln2(-2.0 * a)         # E = 2**n * (1 + r + t), n in [-57, 0]
    t = _expm1_poly(r, rl)
    sc = _float((n + 1023) << 52)
    b = sc * r
    c = sc * t
    a1 = 1.0 - sc
    a1l = (1.0 - a1) - sc
    nh = a1 - b                                  # |a1| >= |b| (or a1 = 0): Fast2Sum
    nl = (((a1 - nh) - b) - c) + a1l
    d1 = 1.0 + sc
    d1l = (1.0 - d1) + sc
    dh = d1 + b
    dl = (((d1 - dh) + b) + c) + d1l
    res = _div2(nh, nl, dh, dl, 1.0)
    res = -res if x < 0.0 else res
    return x if a < _TINY_HYP else res


@_impl
def _tanh32(x):
    a = abs(x)
    a = _f32(9.5) if a > _f32(9.5) else a
    n, kd, r, rl = _reduce_ln2_f(_f32(-2.0) * a)
    t = _expm1_poly_f(r, rl)
    sc = _float(_i32((n + 127) << 23))
    b = sc * r
    c = sc * t
    a1 = _ONE_F - sc
    a1l = (_ONE_F - a1) - sc
    nh = a1 - b
    nl = (((a1 - nh) - b) - c) + a1l
    d1 = _ONE_F + sc
    d1l = (_ONE_F - d1) + sc
    dh = d1 + b
    dl = (((d1 - dh) + b) + c) + d1l
    res = _div2(nh, nl, dh, dl, _ONE_F)
    res = -res if x < _ZERO_F else res
    return x if a < _TINY_HYP_F else res


@_impl
def _sigmoid64(x):
    a = abs(x)
    a = 746.0 if a > 746.0 else a
    n, kd, r, rl = _reduce_ln2(-a)               # E = 2**n * (1 + r + t)
    t = _expm1_poly(r, rl)
    nc = -60 if n < -60 else n                   # E < 2**-59 is negligible next to 1
    sc = _float((nc + 1023) << 52)
    b = sc * r
    d1 = 1.0 + sc
    dh = d1 + b
    dl = ((((d1 - dh) + b) + sc * t) + ((1.0 - d1) + sc))
    neg = x < 0.0
    u = 1.0 + r
    nh = u if neg else 1.0
    nl = (((1.0 - u) + r) + t) if neg else 0.0
    res = _div2(nh, nl, dh, dl, 1.0)
    return _scale2(res, n) if neg else res


@_impl
def _sigmoid32(x):
    a = abs(x)
    a = _f32(105.0) if a > _f32(105.0) else a
    n, kd, r, rl = _reduce_ln2_f(-a)
    t = _expm1_poly_f(r, rl)
    nc = -30 if n < -30 else n
    sc = _float(_i32((nc + 127) << 23))
    b = sc * r
    d1 = _ONE_F + sc
    dh = d1 + b
    dl = ((((d1 - dh) + b) + sc * t) + ((_ONE_F - d1) + sc))
    neg = x < _ZERO_F
    u = _ONE_F + r
    nh = u if neg else _ONE_F
    nl = (((_ONE_F - u) + r) + t) if neg else _ZERO_F
    res = _div2(nh, nl, dh, dl, _ONE_F)
    return _scale2_f(res, n) if neg else res


@njit(inline="always")
def _exp_half(a):
    """e**a / 2 = hh + hl for 0 <= a <= 711 (hh = inf past the overflow threshold)."""
    n, kd, r, rl = _reduce_ln2(a)
    t = _expm1_poly(r, rl)
    v = r + t
    u = 1.0 + v
    ul = ((1.0 - u) + v) + ((r - v) + t)         # two Fast2Sums: u + ul = 1 + r + t
    return _scale2(u, n - 1), _scale2(ul, n - 1)


@njit(inline="always")
def _exp_half_f(a):
    n, kd, r, rl = _reduce_ln2_f(a)
    t = _expm1_poly_f(r, rl)
    v = r + t
    u = _ONE_F + v
    ul = ((_ONE_F - u) + v) + ((r - v) + t)
    return _scale2_f(u, n - 1), _scale2_f(ul, n - 1)


@njit(inline="always")
def _hyp_sum(hh, hl, k, four):
    """hh + hl + k/(hh + hl) for k = +-1/4 (cosh, sinh), |k/hh| <= hh: ~0.5 ulp."""
    q = _fdiv(k, hh)
    ql = (_fma(-q, hh, k) - q * hl) * (four * q)                # k/(hh + hl) - q
    s = hh + q
    res = s + ((((hh - s) + q) + hl) + ql)
    return res if hh - hh == hh - hh else hh     # hh = inf: inf (not inf*0 = nan)


@_impl
def _cosh64(x):
    a = abs(x)
    a = 711.0 if a > 711.0 else a
    hh, hl = _exp_half(a)
    return _hyp_sum(hh, hl, 0.25, 4.0)


@_impl
def _cosh32(x):
    a = abs(x)
    a = _f32(90.0) if a > _f32(90.0) else a
    hh, hl = _exp_half_f(a)
    return _hyp_sum(hh, hl, _QUARTER_F, _f32(4.0))


@_impl
def _sinh64(x):
    a = abs(x)
    a = 711.0 if a > 711.0 else a
    hh, hl = _exp_half(a)
    big = _hyp_sum(hh, hl, -0.25, -4.0)
    z = a * a
    p = _fma(z, _SH6, _SH5)
    p = _fma(z, p, _SH4)
    p = _fma(z, p, _SH3)
    p = _fma(z, p, _SH2)
    p = _fma(z, p, _SH1)
    p = _fma(z, p, _SH0)
    res = _fma(a * z, p, a) if a < 1.0 else big
    res = -res if x < 0.0 else res
    return x if a < _TINY_HYP else res


@_impl
def _sinh32(x):
    a = abs(x)
    a = _f32(90.0) if a > _f32(90.0) else a
    hh, hl = _exp_half_f(a)
    big = _hyp_sum(hh, hl, -_QUARTER_F, _f32(-4.0))
    z = a * a
    p = _fma(z, _SHF3, _SHF2)
    p = _fma(z, p, _SHF1)
    p = _fma(z, p, _SHF0)
    res = _fma(a * z, p, a) if a < _ONE_F else big
    res = -res if x < _ZERO_F else res
    return x if a < _TINY_HYP_F else res


# ------------------------------------------------------------------------------------------- erf
#
# Table of erf(r) (as hi + lo) and erf'(r) = 2/sqrt(pi)*exp(-r*r) at r = i/64 (float64; i/32 in
# float32), then erf(r + d) = erf(r) + erf'(r) * sum_k c_k(r) d**k with r = floor(64|x|)/64,
# 0 <= d < 1/64 (both terms have the same sign: no cancellation) and the Taylor coefficients
# c_k(r) = (-1)**(k-1) H_(k-1)(r) / k! (Hermite polynomials) evaluated on the fly: up to d**8 in
# float64 (truncation below 2**-56 relative), d**5 in float32 (2**-35). The table lookups
# become gathers. erf(x) = +-1 from |x| = 6 (float64) / 4 (float32) on. The tables are computed
# once per process with the decimal module (45 digits) before the first compilation of erf.

_ERF64 = np.zeros((385, 3))                      # filled by _erf_tables()
_ERF32 = np.zeros((129, 3), np.float32)
_ERF_C = 0.1283791670955126                      # 2/sqrt(pi) - 1
_ERF_C_F = _f32(0.12837916612625122)
_ERF_S0_LO = 1.533545961316588e-17               # 2/sqrt(pi) - float64(2/sqrt(pi))
_ERF_S0_LO_F = _f32(-5.863538342219759e-08)
_TINY_ERF = 3.725290298461914e-09                # 2**-28: erf(x) = 2/sqrt(pi) * x below
_TINY_ERF_F = _f32(0.0001220703125)              # 2**-13
_THIRD, _SIXTH = 1.0 / 3.0, 1.0 / 6.0
_THIRD_F, _SIXTH_F, _TENTH_F = _f32(1.0 / 3.0), _f32(1.0 / 6.0), _f32(0.1)


def _erf_tables() -> None:
    """Fill _ERF64/_ERF32 (idempotent), in pure Python decimal arithmetic (once per process)."""
    if _ERF64[1, 0] != 0.0:
        return
    import decimal
    ctx = decimal.Context(prec=45)
    with decimal.localcontext(ctx):
        one = decimal.Decimal(1)

        def arctan_inv(k):                      # arctan(1/k) by its Taylor series
            x = one / k
            s = term = x
            i = 1
            while True:
                term = -term * x * x
                d = term / (2 * i + 1)
                if abs(d) < decimal.Decimal("1e-50"):
                    return s
                s += d
                i += 1
        pi = 4 * (4 * arctan_inv(5) - arctan_inv(239))      # Machin
        c = 2 / pi.sqrt()
        for i in range(_ERF64.shape[0]):
            x = decimal.Decimal(i) / 64
            x2 = x * x
            s = term = x                         # erf(x) = c*exp(-x*x)*sum 2**k x**(2k+1)/(2k+1)!!
            k = 0
            while True:
                k += 1
                term = term * 2 * x2 / (2 * k + 1)
                s += term
                if term <= s * decimal.Decimal("1e-44"):
                    break
            g = c * (-x2).exp()
            e = g * s
            hi = float(e)
            _ERF64[i] = (hi, float(e - decimal.Decimal(hi)), float(g))
            if i % 2 == 0 and i // 2 < _ERF32.shape[0]:
                hf = np.float32(e)
                _ERF32[i // 2] = (hf, np.float32(e - decimal.Decimal(float(hf))), np.float32(g))


@_impl
def _erf64(x):
    a = abs(x)
    a = 6.0 if not a < 6.0 else a                # also nan (the table index stays in range)
    fl = _floor(a * 64.0)                        # r = floor(64a)/64 <= a: d >= 0, so erf(r)
    i = _bits(fl + _MAGIC) - _MAGIC_BITS         # and the correction never cancel
    r = fl * 0.015625
    d = a - r                                    # exact, in [0, 1/64)
    hi = _ERF64[i, 0]
    lo = _ERF64[i, 1]
    sc = _ERF64[i, 2]
    r2 = r * r
    c8 = r * _fma(_fma(_fma(-1.0 / 315.0, r2, 1.0 / 30.0), r2, -1.0 / 12.0), r2, 1.0 / 24.0)
    c7 = _fma(_fma(_fma(4.0 / 315.0, r2, -2.0 / 21.0), r2, 1.0 / 7.0), r2, -1.0 / 42.0)
    c6 = r * _fma(_fma(-2.0 / 45.0, r2, 2.0 / 9.0), r2, -_SIXTH)
    c5 = _fma(_fma(2.0 / 15.0, r2, -0.4), r2, 0.1)
    c4 = r * _fma(-_THIRD, r2, 0.5)
    c3 = _fma(2.0 / 3.0, r2, -_THIRD)
    p = _fma(d, c8, c7)
    p = _fma(d, p, c6)
    p = _fma(d, p, c5)
    p = _fma(d, p, c4)
    p = _fma(d, p, c3)
    p = _fma(d, p, -r)
    slo = _ERF_S0_LO if i == 0 else 0.0
    res = hi + _fma(sc, d, _fma(sc, d * d * p, _fma(slo, d, lo)))
    res = -res if x < 0.0 else res
    res = _fma(x, _ERF_C, x) if a < _TINY_ERF else res
    return x if x != x else res


@_impl
def _erf32(x):
    a = abs(x)
    a = _f32(4.0) if not a < _f32(4.0) else a
    fl = _floor(a * _f32(32.0))
    i = _bits(fl + _MAGIC_F) - _MAGIC_BITS_F
    r = fl * _f32(0.03125)
    d = a - r
    hi = _ERF32[i, 0]
    lo = _ERF32[i, 1]
    sc = _ERF32[i, 2]
    r2 = r * r
    c5 = _fma(_fma(_f32(2.0 / 15.0), r2, _f32(-0.4)), r2, _TENTH_F)
    c4 = r * _fma(-_THIRD_F, r2, _HALF_F)
    c3 = _fma(_f32(2.0 / 3.0), r2, -_THIRD_F)
    p = _fma(d, c5, c4)
    p = _fma(d, p, c3)
    p = _fma(d, p, -r)
    slo = _ERF_S0_LO_F if i == 0 else _ZERO_F
    res = hi + _fma(sc, d, _fma(sc, d * d * p, _fma(slo, d, lo)))
    res = -res if x < _ZERO_F else res
    res = _fma(x, _ERF_C_F, x) if a < _TINY_ERF_F else res
    return x if x != x else res


# ------------------------------------------------------------------------------------------- pow
#
# pow(x, y) = exp(y * log|x|) with log|x| as a double-double (relative error ~2**-68; y*log|x|
# reaches +-745 before the result overflows, so log needs ~2**-64.5 for the product to be good to
# 2**-55): |x| = 2**k * m, m in [sqrt(1/2), sqrt(2)), then m = c * (1 + z) with c from a table of
# 129 buckets (the bucket around 1 has c = 1 exactly, so pow(1+eps, huge) loses nothing),
# z = m/c - 1 exact as a pair via an fma two-product with a stored 1/c, |z| <= 2**-8,
# log(1+z) = z - z*z/2 + z**3 * (1/3 - z/4 + ... - z**6/9 ... Taylor to z**8), and
# log|x| = k*ln2 + log(c) + log(1+z) summed with TwoSums. y*log|x| is split exactly by fma and
# exp of the pair reuses the exp kernel. The C99/NumPy special cases (zeros, infinities, nan,
# negative x with integer or non-integer y, pow(x, 0) = pow(1, y) = 1) are selects at the end.
# float32: in float64 with shorter log and exp polynomials (2**-36 is plenty for a float32
# result), rounded once.

_POW_BASE = 0x3FF0000000000000 - (1 << 44)       # bucket j covers [base + j*2**45, ...) shifted
_POW_OFF = 75                                    # index of the bucket centred on 1.0
_POWTAB = np.zeros((129, 3))                     # 1/c, log(c) hi, log(c) lo; by _pow_table()


def _pow_table() -> None:
    """Fill _POWTAB (idempotent): c = bucket centre, except exactly 1 for the bucket at 1."""
    if _POWTAB[0, 0] != 0.0:
        return
    import decimal
    with decimal.localcontext(decimal.Context(prec=45)):
        for j in range(_POWTAB.shape[0]):
            lo_bits = _POW_BASE + ((j - _POW_OFF) << 45)
            centre = lo_bits + (1 << 44)
            c = 1.0 if j == _POW_OFF else float(np.int64(centre).view(np.float64))
            invc = 1.0 / c
            lc = -decimal.Decimal(invc).ln()     # log(c) exactly as used: -log(stored 1/c)
            hi = float(lc)
            _POWTAB[j] = (invc, hi, float(lc - decimal.Decimal(hi)))


@njit(inline="always")
def _log_dd(ax):
    """log(ax) = lh + ll for finite ax > 0 (relative error ~2**-68)."""
    sub = ax < _TINY_NORMAL
    ax = ax * _TWO54 if sub else ax
    bits = _bits(ax)
    k = (bits - _SQRT_HALF_BITS) >> 52
    mb = bits - (k << 52)
    m = _float(mb)
    kd = _float(k + _MAGIC_BITS) - _MAGIC
    kd = kd - 54.0 if sub else kd
    j = ((mb - _POW_BASE) >> 45) + _POW_OFF
    invc = _POWTAB[j, 0]
    lch = _POWTAB[j, 1]
    lcl = _POWTAB[j, 2]
    pr = m * invc
    pe = _fma(m, invc, -pr)
    zh = pr - 1.0                                # exact; z = zh + pe
    z2 = zh * zh
    z2e = _fma(zh, zh, -z2)
    hz2 = 0.5 * z2
    hz2l = _fma(0.5, z2e, zh * pe)
    p = _fma(zh, -0.125, 1.0 / 7.0)
    p = _fma(zh, p, -_SIXTH)
    p = _fma(zh, p, 0.2)
    p = _fma(zh, p, -0.25)
    p = _fma(zh, p, _THIRD)
    tail = _fma(zh * z2, p, pe * z2)
    a1 = kd * _LN2_HI42                          # exact
    s1 = a1 + lch                                # Fast2Sum (|a1| >= |lch| unless a1 = 0)
    e1 = (a1 - s1) + lch
    s2 = s1 + zh                                 # TwoSum
    bv = s2 - s1
    e2 = (s1 - (s2 - bv)) + (zh - bv)
    s3 = s2 - hz2                                # Fast2Sum
    e3 = (s2 - s3) - hz2
    lo = ((e1 + e2) + e3) + (_fma(kd, _LN2_LO42, lcl) + ((pe - hz2l) + tail))
    lh = s3 + lo
    return lh, (s3 - lh) + lo


@njit(inline="always")
def _exp_dd(yh, yl):
    """exp(yh + yl), yl tiny next to yh."""
    big = yh > 1030.0
    yh = 1030.0 if big else yh
    small = yh < -1080.0
    yh = -1080.0 if small else yh
    yl = 0.0 if big | small else yl
    n, kd, r, rl = _reduce_ln2(yh)
    c = rl + yl                                  # |yl| <= 2**-43: fold it into r first, since
    r2 = r + c                                   # _expm1_poly is first order in its rl
    p = 1.0 + (r2 + _expm1_poly(r2, (r - r2) + c))
    return _scale2(p, n)


@njit(inline="always")
def _pow_fix(x, y, mag):
    """Apply the C99 special cases of pow (float64) to ``mag`` = exp(y*log|x|)."""
    ax = abs(x)
    yint = _trunc(y) == y                        # also +-inf
    h = 0.5 * y
    yodd = yint & (_trunc(h) != h)               # |y| >= 2**53 is even
    mag = (_INF if y < 0.0 else 0.0) if ax == 0.0 else mag
    mag = (0.0 if y < 0.0 else _INF) if ax == _INF else mag
    mag = (0.0 if ax < 1.0 else _INF) if y == _INF else mag
    mag = (_INF if ax < 1.0 else 0.0) if y == -_INF else mag
    mag = 1.0 if (ax == 1.0) & (abs(y) == _INF) else mag
    res = -mag if _signbit(x) & yodd else mag
    res = _NAN if (x < 0.0) & (x > -_INF) & (not yint) else res
    res = _NAN if (x != x) | (y != y) else res
    return 1.0 if (y == 0.0) | (x == 1.0) else res


@_impl
def _pow64(x, y):
    ax = abs(x)
    ax = 1.0 if (not ax < _INF) | (ax == 0.0) else ax   # specials are fixed by _pow_fix
    lh, ll = _log_dd(ax)
    yh = y * lh
    yl = _fma(y, lh, -yh) + y * ll
    return _pow_fix(x, y, _exp_dd(yh, yl))


# float32 pow in float64 needs only ~2**-36 in log and exp: shorter polynomials than log/exp
_LRP = (0.6666666564511154, 0.4000033527614117, 0.285373027162367, 0.23582268987925314)
_LRP1, _LRP2, _LRP3, _LRP4 = _LRP                # 2**-36.6 absolute
_EPP = (0.5000000000426816, 0.16666666784443793, 0.04166666440505234, 0.008333281807514933,
        0.0013889197132262564, 0.00019908939314679504, 2.470828872653355e-05)
_EPP0, _EPP1, _EPP2, _EPP3, _EPP4, _EPP5, _EPP6 = _EPP   # 2**-39.7 relative


@_impl
def _pow32(x, y):
    xd = np.float64(x)
    yd = np.float64(y)
    ax = abs(xd)
    ax = 1.0 if (not ax < _INF) | (ax == 0.0) else ax
    bits = _bits(ax)                             # a float32 is a normal float64
    k = (bits - _SQRT_HALF_BITS) >> 52
    m = _float(bits - (k << 52))
    kd = _float(k + _MAGIC_BITS) - _MAGIC
    f = m - 1.0
    hfsq = 0.5 * f * f
    s = _fdiv(f, 2.0 + f)
    z = s * s
    r = _fma(z, _fma(z, _fma(z, _LRP4, _LRP3), _LRP2), _LRP1) * z
    lg = _fma(kd, _LN2_HI42, -((hfsq - _fma(s, hfsq + r, kd * _LN2_LO42)) - f))
    v = yd * lg
    v = 1030.0 if v > 1030.0 else v
    v = -1080.0 if v < -1080.0 else v
    n, kd2, r2, rl2 = _reduce_ln2(v)
    p = _fma(r2, _EPP6, _EPP5)
    p = _fma(r2, p, _EPP4)
    p = _fma(r2, p, _EPP3)
    p = _fma(r2, p, _EPP2)
    p = _fma(r2, p, _EPP1)
    p = _fma(r2, p, _EPP0)
    mag = _scale2(1.0 + (r2 + r2 * r2 * p), n)
    return np.float32(_pow_fix(xd, yd, mag))


# ------------------------------------------- huge trig arguments: a masked scalar fallback
#
# Note [huge trig arguments]: The vectorised reduction is exact enough only for |x| below
# _TRIG_BIG (2**40 in float64, 2**28 in float32). A branch-free Payne-Hanek reduction for the rest
# would run for every lane (SIMD cannot skip it) and double the cost of sin; a plain conditional
# `math.sin(x)` is either speculated for every lane (llvm.sin is speculatable, and a libm call
# per lane is slow) or stops the loop vectorising. Instead the huge lanes call a scalar function
# that carries a "vector-function-abi-variant" attribute naming *masked* vector variants
# (jg_vm_sin_f64_big_m4(<4 x double>, <4 x i1>) ...). LLVM's loop vectorizer (LLVM >= 17) then
# widens the conditional call into one call per vector of lanes; the variant returns at once
# when no lane is huge, and otherwise calls the exact scalar path (_rem_pio2_big below, compiled
# as a C-ABI cfunc and linked into the kernel) for each huge lane; float32 lanes go through it in
# float64. Not libm: glibc's sin/cos are off by up to 1.4e5 ulp on the hardest huge arguments.
# Cost when no lane is huge: one call per vector iteration; a huge element costs a scalar
# reduction (both measured: docs/design.md, 'Measurements behind the code'). On an older LLVM
# the loop does not vectorise but stays correct.

try:
    import llvmlite.binding as _llb
    _LLVM_MAJOR = _llb.llvm_version_info[0]
except Exception:                               # pragma: no cover
    _LLVM_MAJOR = 0

_BIG_FUNCS = ("sin", "cos", "tan")
_VFS = {"f64": (2, 4, 8, 16), "f32": (4, 8, 16, 32)}


def _big_ir(fname: str, suf: str, target: str) -> str:
    """LLVM IR of jg_vm_{fname}_{suf}_big (calling the C function ``target``, the exact
    float64 evaluation) and its masked vector variants."""
    mem = "memory(none)" if _LLVM_MAJOR >= 16 else "readnone"
    ty = "double" if suf == "f64" else "float"
    base = f"jg_vm_{fname}_{suf}_big"
    variants = ",".join(f"_ZGV_LLVM_M{vf}v_{base}({base}_m{vf})" for vf in _VFS[suf])
    body = ([f'  %r = call double @"{target}"(double %x)', "  ret double %r"] if suf == "f64" else
            ["  %d = fpext float %x to double", f'  %r = call double @"{target}"(double %d)',
             "  %t = fptrunc double %r to float", "  ret float %t"])
    out = [f'declare double @"{target}"(double) nounwind',
           f"define {ty} @{base}({ty} %x) #0 {{"] + body + ["}"]
    for vf in _VFS[suf]:
        vt = f"<{vf} x {ty}>"
        # a lane loop (kept rolled: the variant is only entered when some lane is huge)
        out += [f"define weak_odr {vt} @{base}_m{vf}({vt} %x, <{vf} x i1> %m) #1 {{",
                "entry:", f"  %mi = bitcast <{vf} x i1> %m to i{vf}",
                f"  %none = icmp eq i{vf} %mi, 0", "  br i1 %none, label %done, label %loop",
                "loop:", "  %i = phi i32 [ 0, %entry ], [ %i1, %next ]",
                f"  %v = phi {vt} [ %x, %entry ], [ %v1, %next ]",
                f"  %b = extractelement <{vf} x i1> %m, i32 %i",
                "  br i1 %b, label %call, label %next",
                "call:", f"  %e = extractelement {vt} %x, i32 %i",
                f"  %s = call {ty} @{base}({ty} %e)",
                f"  %w = insertelement {vt} %v, {ty} %s, i32 %i", "  br label %next",
                "next:", f"  %v1 = phi {vt} [ %v, %loop ], [ %w, %call ]",
                "  %i1 = add i32 %i, 1", f"  %end = icmp eq i32 %i1, {vf}",
                "  br i1 %end, label %done, label %loop, !llvm.loop !0",
                "done:", f"  %res = phi {vt} [ %x, %entry ], [ %v1, %next ]", f"  ret {vt} %res",
                "}"]
    out += [f'attributes #0 = {{ noinline nounwind willreturn {mem} '
            f'"vector-function-abi-variant"="{variants}" }}',
            f"attributes #1 = {{ noinline nounwind willreturn {mem} }}",
            '!0 = distinct !{!0, !1}', '!1 = !{!"llvm.loop.unroll.disable"}']
    return "\n".join(out) + "\n"


_big_libs: dict = {}


_big_cfuncs: dict = {}


def _big_cfunc(fname):
    """The exact scalar float64 sin/cos/tan for huge arguments as a C-ABI function."""
    cf = _big_cfuncs.get(fname)
    if cf is None:
        from numba import cfunc
        _g_words()
        cf = cfunc("float64(float64)", nogil=True, error_model="numpy")(
            _big_py(_BIG_FUNCS.index(fname)))
        _big_cfuncs[fname] = cf
    return cf


def _big_libraries(context, fname, suf):
    key = (id(context.codegen()), fname, suf)
    libs = _big_libs.get(key)
    if libs is None:
        cf = _big_cfunc(fname)
        lib = context.codegen().create_library(f"jitgrad_vmath_{fname}_{suf}_big")
        mod = _llb.parse_assembly(_big_ir(fname, suf, cf.native_name))
        mod.verify()
        lib.add_llvm_module(mod)
        lib.finalize()
        libs = _big_libs[key] = (lib, cf._library)
    return libs


def _make_big_intrinsic(fname):
    @intrinsic
    def _big(typingctx, x):
        if isinstance(x, types.Float):
            suf = "f64" if x.bitwidth == 64 else "f32"

            def codegen(context, builder, sig, args):
                for lib in _big_libraries(context, fname, suf):
                    context.active_code_library.add_linking_library(lib)
                t = args[0].type
                fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t]),
                                                    f"jg_vm_{fname}_{suf}_big")
                return builder.call(fn, args)
            return x(x), codegen
        return None
    return _big


_sin_big = _make_big_intrinsic("sin")
_cos_big = _make_big_intrinsic("cos")
_tan_big = _make_big_intrinsic("tan")


# ------------------------------------------------------------------------------ sin, cos, tan
#
# x = q*pi/2 + r, q = round(x*2/pi) (magic number), |r| <= pi/4. pi/2 = P1 + P2 + P3 (three
# doubles, 159 bits): u = fma(-q, P1, x) is exact (x and q*P1 are multiples of 2**-52 and
# |u| < 2), q*P2 is split exactly by fma, and a TwoSum keeps r = r_hi + r_lo to about 2**-106
# relative plus q*2**-159 absolute. Doubles closest to a multiple of pi/2 have |r| > 2**-61, so
# this holds to 2**-55 relative for |q| < 2**43; above _TRIG_BIG = 2**40 the masked scalar
# path takes over (Note [huge trig arguments]).
# sin(r) = r + r**3*S(r*r) (relative Remez, 2**-57.9), cos(r) = 1 - r*r/2 + r**4*C(r*r) (2**-64),
# both carrying r_lo; cos keeps 1 - r*r/2 as an exact sum. tan = sin/cos or -cos/sin with the
# quotient corrected by one residual step (both operands as unevaluated pairs), so the division
# adds no error beyond the final rounding.
# float32: the reduction runs in float64 (x is exact in float64; two terms of pi/2 suffice:
# error <= 2**-53*|r| + q*2**-106) and r is rounded to float32 for 3-term float32 polynomials;
# above _TRIG_BIG_F = 2**28 the fallback computes the exact float64 sin/cos/tan and rounds.

_TWO_OVER_PI = 0.6366197723675814
_P1 = 1.5707963267948966
_P2 = 6.123233995736766e-17
_P3 = -1.4973849048591698e-33
_TRIG_BIG = 1099511627776.0                      # 2**40
_SS = (-0.1666666666666663, 0.008333333333322118, -0.00019841269829589542, 2.7557313621386697e-06,
       -2.5050747762976563e-08, 1.5896230163210962e-10)
_SS0, _SS1, _SS2, _SS3, _SS4, _SS5 = _SS
_CC = (0.041666666666666595, -0.0013888888888873056, 2.4801587288851707e-05,
       -2.7557314179297825e-07, 2.087570084211075e-09, -1.1358536528009278e-11)
_CC0, _CC1, _CC2, _CC3, _CC4, _CC5 = _CC
_TINY_TRIG = 7.450580596923828e-09               # 2**-27: sin(x) = tan(x) = x below


@njit(inline="always")
def _reduce_pio2(x):
    """x = q*pi/2 + r + rl for |x| < 2**40: (q as int64, r, rl)."""
    qd = _fma(x, _TWO_OVER_PI, _MAGIC)
    q = _bits(qd) - _MAGIC_BITS
    qd = qd - _MAGIC
    u = _fma(-qd, _P1, x)                        # exact
    h = qd * _P2
    hl = _fma(qd, _P2, -h)                       # q*P2 = h + hl exactly
    rh = u - h                                   # TwoSum(u, -h)
    bv = rh - u
    e = (u - (rh - bv)) - (h + bv)
    rl = _fma(-qd, _P3, e - hl)
    r = rh + rl                                  # renormalise (Fast2Sum)
    rl = rl - (r - rh)
    return q, r, rl


@njit(inline="always")
def _sincos_poly(r, rl):
    """(sin tail, cos hi, cos lo): sin(r+rl) = r + st, cos(r+rl) = ch + cl."""
    z = r * r
    ze = _fma(r, r, -z)
    s = _fma(z, _SS5, _SS4)
    s = _fma(z, s, _SS3)
    s = _fma(z, s, _SS2)
    s = _fma(z, s, _SS1)
    s = _fma(z, s, _SS0)
    st = _fma(r * z, s, _fma(-0.5 * z, rl, rl))
    c = _fma(z, _CC5, _CC4)
    c = _fma(z, c, _CC3)
    c = _fma(z, c, _CC2)
    c = _fma(z, c, _CC1)
    c = _fma(z, c, _CC0)
    hz = 0.5 * z
    ch = 1.0 - hz
    cl = ((1.0 - ch) - hz) + _fma(z * z, c, -_fma(r, rl, 0.5 * ze))
    return st, ch, cl


@njit(inline="always")
def _sin_q(q, r, rl):
    """sin(q*pi/2 + r + rl), |r| <= pi/4 (float64)."""
    st, ch, cl = _sincos_poly(r, rl)
    res = (ch + cl) if q & 1 else (r + st)
    return -res if q & 2 else res


@njit(inline="always")
def _cos_q(q, r, rl):
    st, ch, cl = _sincos_poly(r, rl)
    res = (r + st) if q & 1 else (ch + cl)
    return -res if (q + 1) & 2 else res


@njit(inline="always")
def _tan_q(q, r, rl):
    st, ch, cl = _sincos_poly(r, rl)
    odd = (q & 1) != 0
    # tan = (r + st)/(ch + cl) for even q, -(ch + cl)/(r + st) for odd q
    nh = -ch if odd else r
    nl = -cl if odd else st
    dh = r if odd else ch
    dl = st if odd else cl
    inv = _fdiv(1.0, dh + dl)
    t = (nh + nl) * inv
    return _fma(_fma(-t, dh, nh) + _fma(-t, dl, nl), inv, t)


@_impl
def _sin64(x):
    q, r, rl = _reduce_pio2(x)
    res = _sin_q(q, r, rl)
    res = x if abs(x) < _TINY_TRIG else res
    return _sin_big(x) if (abs(x) >= _TRIG_BIG) & (abs(x) < _INF) else res


@_impl
def _cos64(x):
    q, r, rl = _reduce_pio2(x)
    res = _cos_q(q, r, rl)
    return _cos_big(x) if (abs(x) >= _TRIG_BIG) & (abs(x) < _INF) else res


@_impl
def _tan64(x):
    q, r, rl = _reduce_pio2(x)
    res = _tan_q(q, r, rl)
    res = x if abs(x) < _TINY_TRIG else res
    return _tan_big(x) if (abs(x) >= _TRIG_BIG) & (abs(x) < _INF) else res


# The scalar huge-argument path (Note [huge trig arguments]): Payne-Hanek with exact integer
# arithmetic. x = M * 2**E (M < 2**53); x*2/pi mod 4 needs the bits of 2/pi from about 2**-(E-2)
# on: seven 32-bit words of 2/pi times M, accumulated exactly in 32-bit limbs, keep the two
# integer bits (q mod 4) and 128 fraction bits (the dropped tail is below 2**-138, while the
# fraction of a double is never closer to an integer than ~2**-62), so r = frac * pi/2 as a
# double-double is good to ~2**-104 relative.

_G_WORDS = np.zeros(40, np.uint64)               # 2/pi in 32-bit words; by _g_words()
_U32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def _pi_fixed(bits: int) -> int:
    """floor(pi * 2**bits) (Machin's formula in integers; a few ulps low at most)."""
    guard = 32
    one = 1 << (bits + guard)

    def atan_inv(k):
        s = t = one // k
        n, k2, sign = 1, k * k, 1
        while t:
            t //= k2
            n += 2
            sign = -sign
            s += sign * (t // n)
        return s
    return (4 * (4 * atan_inv(5) - atan_inv(239))) >> guard


def _g_words() -> None:
    if _G_WORDS[0] != 0:
        return
    k = 1600
    g = (1 << (k + 1 + 32 * 40)) // _pi_fixed(k)   # floor(2/pi * 2**1280), to the last bit
    for i in range(40):
        _G_WORDS[i] = (g >> (32 * (39 - i))) & 0xFFFFFFFF


@njit(inline="always")
def _chunk(limbs, p):
    """Bits p .. p+31 of the integer held in 32-bit limbs (least significant first)."""
    i = p // 32
    o = np.uint64(p % 32)
    return ((limbs[i] >> o) | (limbs[i + 1] << (_S32 - o))) & _U32


@njit(nogil=True, error_model="numpy")
def _rem_pio2_big(x):
    """x = q*pi/2 + r + rl for finite |x| >= 2**40 (exact Payne-Hanek; scalar)."""
    bits = _bits(abs(x))
    e = ((bits >> 52) & 0x7FF) - 1075
    m = np.uint64((bits & 0xFFFFFFFFFFFFF) | 0x10000000000000)
    k0 = (e - 34) // 32 + 1                      # first word whose product is not 0 mod 4
    k0 = 0 if k0 < 0 else k0
    ml = m & _U32
    mh = m >> _S32
    limbs = np.zeros(11, np.uint64)
    for j in range(7):
        w = _G_WORDS[k0 + j]
        plo = ml * w
        phi = mh * w
        i = 6 - j
        limbs[i] += plo & _U32
        limbs[i + 1] += (plo >> _S32) + (phi & _U32)
        limbs[i + 2] += phi >> _S32
    carry = np.uint64(0)
    for i in range(11):
        v = limbs[i] + carry
        limbs[i] = v & _U32
        carry = v >> _S32
    b = 32 * (k0 + 7) - e                        # x*2/pi = limbs / 2**b (mod 4)
    q = np.int64(_chunk(limbs, b) & np.uint64(3))
    f3 = _chunk(limbs, b - 32)
    f2 = _chunk(limbs, b - 64)
    f1 = _chunk(limbs, b - 96)
    f0 = _chunk(limbs, b - 128)
    neg = f3 >= np.uint64(0x80000000)            # fraction >= 1/2: round q up
    if neg:
        q += 1
        f0 = (~f0 + np.uint64(1)) & _U32         # 2**128 - fraction bits
        c = np.uint64(1) if f0 == np.uint64(0) else np.uint64(0)
        f1 = (~f1 + c) & _U32
        c = c if f1 == np.uint64(0) else np.uint64(0)
        f2 = (~f2 + c) & _U32
        c = c if f2 == np.uint64(0) else np.uint64(0)
        f3 = (~f3 + c) & _U32
    h = float(f3) * 2.0 ** -32                   # the fraction as a double-double (exact terms)
    lo = 0.0
    for t in (float(f2) * 2.0 ** -64, float(f1) * 2.0 ** -96, float(f0) * 2.0 ** -128):
        s = h + t
        bv = s - h
        lo += (h - (s - bv)) + (t - bv)
        h = s
    fh = h + lo
    fl = (h - fh) + lo
    if neg:
        fh, fl = -fh, -fl
    rh = fh * _P1
    rl = _fma(fh, _P1, -rh) + _fma(fh, _P2, fl * _P1)
    r = rh + rl
    rl = rl - (r - rh)
    if x < 0.0:
        return -q, -r, -rl
    return q, r, rl


def _big_py(kind):
    def f(x):
        q, r, rl = _rem_pio2_big(x)
        if kind == 0:
            return _sin_q(q, r, rl)
        if kind == 1:
            return _cos_q(q, r, rl)
        return _tan_q(q, r, rl)
    # Note [distinct symbol names]: Numba names the compiled function after its qualname plus a
    # per-process counter, and a kernel loaded from the on-disk cache carries a copy of this
    # function under that name. Two cached kernels built in different processes could then name
    # sin's and tan's reductions alike, and the loader would bind both to the first one (tan of
    # huge arguments came out with sin's quadrant). The function's name says which it is.
    f.__name__ = f"{_BIG_FUNCS[kind]}_huge_argument"
    f.__qualname__ = f"_big_py.<locals>.{f.__name__}"
    return f


_TRIG_BIG_F = 268435456.0                        # 2**28 (compared in float64)
_SSF0, _SSF1, _SSF2 = (_f32(c) for c in (-0.16666655242443085, 0.00833216030150652,
                                          -0.00019515282474458218))
_CCF0, _CCF1, _CCF2 = (_f32(c) for c in (0.04166664555668831, -0.0013887316454201937,
                                          2.44331567955669e-05))
_TINY_TRIG_F = _f32(0.000244140625)              # 2**-12


@njit(inline="always")
def _reduce_pio2_f(x):
    """float32 x = q*pi/2 + r + rl (reduction in float64): (q, r, rl) with r, rl float32."""
    xd = np.float64(x)
    qd = _fma(xd, _TWO_OVER_PI, _MAGIC)
    q = _bits(qd) - _MAGIC_BITS
    qd = qd - _MAGIC
    rd = _fma(-qd, _P2, _fma(-qd, _P1, xd))      # the inner fma is exact
    r = np.float32(rd)
    rl = np.float32(rd - np.float64(r))
    return q, r, rl


@njit(inline="always")
def _sincos_poly_f(r, rl):
    z = r * r
    ze = _fma(r, r, -z)
    s = _fma(z, _SSF2, _SSF1)
    s = _fma(z, s, _SSF0)
    st = _fma(r * z, s, _fma(-_HALF_F * z, rl, rl))
    c = _fma(z, _CCF2, _CCF1)
    c = _fma(z, c, _CCF0)
    hz = _HALF_F * z
    ch = _ONE_F - hz
    cl = ((_ONE_F - ch) - hz) + _fma(z * z, c, -_fma(r, rl, _HALF_F * ze))
    return st, ch, cl


@_impl
def _sin32(x):
    q, r, rl = _reduce_pio2_f(x)
    st, ch, cl = _sincos_poly_f(r, rl)
    res = (ch + cl) if q & 1 else (r + st)
    res = -res if q & 2 else res
    res = x if abs(x) < _TINY_TRIG_F else res
    return _sin_big(x) if (abs(x) >= _TRIG_BIG_F) & (abs(x) < _INF_F) else res


@_impl
def _cos32(x):
    q, r, rl = _reduce_pio2_f(x)
    st, ch, cl = _sincos_poly_f(r, rl)
    res = (r + st) if q & 1 else (ch + cl)
    res = -res if (q + 1) & 2 else res
    return _cos_big(x) if (abs(x) >= _TRIG_BIG_F) & (abs(x) < _INF_F) else res


@_impl
def _tan32(x):
    q, r, rl = _reduce_pio2_f(x)
    st, ch, cl = _sincos_poly_f(r, rl)
    odd = (q & 1) != 0
    nh = -ch if odd else r
    nl = -cl if odd else st
    dh = r if odd else ch
    dl = st if odd else cl
    inv = _fdiv(_ONE_F, dh + dl)
    t = (nh + nl) * inv
    res = _fma(_fma(-t, dh, nh) + _fma(-t, dl, nl), inv, t)
    res = x if abs(x) < _TINY_TRIG_F else res
    return _tan_big(x) if (abs(x) >= _TRIG_BIG_F) & (abs(x) < _INF_F) else res


# --------------------------------------------------------------------------- public functions
#
# Each public name is a plain Python function (for use from Python) with a Numba overload (for use
# inside @njit code) that calls the float64 or float32 implementation, picked from the argument
# type at compile time. Note [inlining]: an implementation is compiled once per process and dtype
# (its helpers are inlined into it at the Numba IR level), and its LLVM function is then marked
# ``alwaysinline``, so every loop calling it gets the body inlined and can vectorise it. Inlining
# at the Numba IR level into every kernel instead costs a lot of type inference per kernel
# (docs/design.md, 'Measurements behind the code'); LLVM's own inliner leaves bodies as large
# as sin's as calls, which do not vectorise.

FUNCTIONS = ("exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "erf",
             "sinh", "cosh", "pow")
_IMPL1: dict = {}                                 # name -> (float64 impl, float32 impl)
_marked: set = set()


def _always_inline(disp, argtypes) -> None:
    """Compile ``disp`` for ``argtypes`` and mark its LLVM function ``alwaysinline`` before any
    kernel links it. Uses Numba internals; if they change, kernels stay correct but may not
    vectorise (tests/kernels/test_vmath.py checks the packed instructions)."""
    key = (disp, argtypes)
    if key in _marked:
        return
    disp.compile(argtypes)
    cres = disp.overloads[argtypes]
    try:
        lib = cres.library
        for mod in (lib._final_module, getattr(lib, "_shared_module", None)):
            if mod is not None:
                mod.get_function(cres.fndesc.llvm_func_name).add_function_attribute(
                    "alwaysinline")
    except Exception:                           # pragma: no cover - Numba internals moved
        pass
    _marked.add(key)


def _unary_overload(fn, impl64, impl32, setup=None):
    _IMPL1[fn.__name__] = (impl64, impl32)

    @overload(fn, inline="always")
    def _ol(x):
        if setup is not None:
            setup()                             # globals the implementation freezes
        if isinstance(x, types.Float):
            impl = impl32 if x.bitwidth == 32 else impl64
            _always_inline(impl, (x,))
            return lambda x: impl(x)
        if isinstance(x, (types.Integer, types.Boolean)):
            _always_inline(impl64, (types.float64,))
            return lambda x: impl64(np.float64(x))
        return None
    return fn


def _binary_overload(fn, impl64, impl32, setup=None):
    @overload(fn, inline="always")
    def _ol(x, y):
        ok = (types.Float, types.Integer, types.Boolean)
        if not (isinstance(x, ok) and isinstance(y, ok)):
            return None
        if setup is not None:
            setup()
        if x == types.float32 and y == types.float32:
            _always_inline(impl32, (x, y))
            return lambda x, y: impl32(x, y)
        _always_inline(impl64, (types.float64, types.float64))
        return lambda x, y: impl64(np.float64(x), np.float64(y))
    return fn


_py_scalar: dict = {}
_py_array: dict = {}


def _call1(name, x):
    """Evaluate function ``name`` from Python on a scalar or an array."""
    if isinstance(x, np.ndarray):
        kern = _py_array.get(name)
        if kern is None:
            kern = _py_array[name] = _make_array_kernel(globals()[name])
        a = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
        a = np.ascontiguousarray(a)
        out = np.empty(a.shape, a.dtype)
        kern(out.reshape(-1), a.reshape(-1))
        return out
    f = _py_scalar.get(name)
    if f is None:
        g = globals()[name]
        f = _py_scalar[name] = njit(error_model="numpy")(lambda v: g(v))
    return f(x)


def _call2(name, x, y):
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        kern = _py_array.get(name)
        if kern is None:
            kern = _py_array[name] = _make_array_kernel2(globals()[name])
        x, y = np.asarray(x), np.asarray(y)
        dt = np.result_type(x, y)
        dt = dt if dt in (np.float32, np.float64) else np.dtype(np.float64)
        a, b = (np.ascontiguousarray(np.broadcast_to(v, np.broadcast_shapes(x.shape, y.shape)),
                                     dtype=dt) for v in (x, y))
        out = np.empty(a.shape, dt)
        kern(out.reshape(-1), a.reshape(-1), b.reshape(-1))
        return out
    f = _py_scalar.get(name)
    if f is None:
        g = globals()[name]
        f = _py_scalar[name] = njit(error_model="numpy")(lambda u, v: g(u, v))
    return f(x, y)


def _make_array_kernel2(fn):
    @njit(nogil=True, error_model="numpy")
    def kernel(out, a, b):
        for i in range(a.size):
            out[i] = fn(a[i], b[i])
    return kernel


def _make_array_kernel(fn):
    @njit(nogil=True, error_model="numpy")
    def kernel(out, a):
        for i in range(a.size):
            out[i] = fn(a[i])
    return kernel


def exp(x):
    """e**x."""
    return _call1("exp", x)


def expm1(x):
    """e**x - 1, accurate near 0."""
    return _call1("expm1", x)


def log(x):
    """Natural logarithm; log(0) = -inf, log(x < 0) = nan."""
    return _call1("log", x)


def log1p(x):
    """log(1 + x), accurate near 0; log1p(-1) = -inf, log1p(x < -1) = nan."""
    return _call1("log1p", x)




def sin(x):
    """Sine (radians); correct for all finite x, nan for +-inf."""
    return _call1("sin", x)


def cos(x):
    """Cosine (radians); correct for all finite x, nan for +-inf."""
    return _call1("cos", x)


def tan(x):
    """Tangent (radians); correct for all finite x, nan for +-inf."""
    return _call1("tan", x)



def tanh(x):
    """Hyperbolic tangent."""
    return _call1("tanh", x)


def sigmoid(x):
    """The logistic function 1/(1 + e**-x)."""
    return _call1("sigmoid", x)


def sinh(x):
    """Hyperbolic sine."""
    return _call1("sinh", x)


def cosh(x):
    """Hyperbolic cosine."""
    return _call1("cosh", x)



def erf(x):
    """The error function."""
    return _call1("erf", x)



def pow(x, y):
    """x**y with the C99/NumPy special cases. Two float32 arguments give float32; any other
    combination of floats and integers is computed in float64."""
    return _call2("pow", x, y)


_unary_overload(exp, _exp64, _exp32)
_unary_overload(expm1, _expm1_64, _expm1_32)
_unary_overload(log, _log64, _log32)
_unary_overload(log1p, _log1p64, _log1p32)
_unary_overload(sin, _sin64, _sin32)
_unary_overload(cos, _cos64, _cos32)
_unary_overload(tan, _tan64, _tan32)
_unary_overload(tanh, _tanh64, _tanh32)
_unary_overload(sigmoid, _sigmoid64, _sigmoid32)
_unary_overload(sinh, _sinh64, _sinh32)
_unary_overload(cosh, _cosh64, _cosh32)
_unary_overload(erf, _erf64, _erf32, setup=_erf_tables)
_binary_overload(pow, _pow64, _pow32, setup=_pow_table)
