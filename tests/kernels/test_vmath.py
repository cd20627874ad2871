"""Accuracy, special values and vectorisation of jitgrad.kernels.cpu.vmath.

Accuracy is measured in ulps against a float64 reference for float32 results and against an
80-bit ``np.longdouble`` reference (glibc's ``sinl``, ``expl``, ... are accurate to well below
a float64 ulp, also for huge trig arguments) for float64 results; erf and sigmoid have their own
longdouble references. Near the subnormal range the error is counted in ulps of the smallest
normal binade (an absolute error). Every sample is deterministic (fixed seeds).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from jitgrad.kernels.cpu import vmath as V

LD = np.longdouble
pytestmark = pytest.mark.skipif(np.finfo(LD).nmant < 63,
                                reason="needs an 80-bit long double reference (x86)")
PI_LD = LD("3.14159265358979323846264338327950288")
DTYPES = (np.float64, np.float32)
UNARY = ("exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "sinh",
         "cosh")


# ------------------------------------------------------------------------------ references

def erf_ld(x):
    """erf in long double: the positive series for |x| < 2.5, a continued fraction above."""
    x = np.asarray(x, LD)
    a = np.abs(x)
    out = np.ones_like(a)
    small = a < 2.5
    xs = a[small]
    x2 = xs * xs
    s = xs.copy()
    term = xs.copy()
    for k in range(1, 120):             # erf(x) = 2/sqrt(pi) e**-x*x sum 2**k x**(2k+1)/(2k+1)!!
        term = term * 2 * x2 / (2 * k + 1)
        s += term
    out[small] = 2 / np.sqrt(PI_LD) * np.exp(-x2) * s
    big = ~small & np.isfinite(a)
    xb = a[big]
    f = np.zeros_like(xb)
    for k in range(200, 0, -1):         # erfc(x) = e**-x*x/sqrt(pi) / (x + (1/2)/(x + 1/(x + ...)))
        f = (LD(k) / 2) / (xb + f)
    out[big] = 1 - np.exp(-xb * xb) / np.sqrt(PI_LD) / (xb + f)
    out[np.isnan(a)] = np.nan
    return np.copysign(out, x)


def sigmoid_ld(x):
    x = np.asarray(x, LD)
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


REF = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "sin": np.sin,
       "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sigmoid": sigmoid_ld, "erf": erf_ld,
       "sinh": np.sinh, "cosh": np.cosh}


def ulp_err(y, ref, dtype):
    """|y - ref| in ulps of ref in ``dtype``; inf where a special value differs."""
    info = np.finfo(dtype)
    y = np.asarray(y).astype(LD)
    ref = np.asarray(ref, LD)
    fin = np.isfinite(ref)
    refc = np.where(fin, ref, 1)
    _, e = np.frexp(refc)
    e = np.maximum(e - 1, info.minexp)
    ulp = np.ldexp(LD(1), (e - info.nmant).astype(np.int32))
    overflows = fin & (np.abs(refc) >= LD(info.max) * (1 + LD(2.0) ** (-info.nmant - 1)))
    with np.errstate(all="ignore"):
        err = np.where(fin & ~overflows, np.abs(y - refc) / ulp, 0)
    err = np.where(fin & ~overflows & ~np.isfinite(y), np.inf, err)
    err = np.where(overflows & ~(np.isinf(y) & (np.sign(y) == np.sign(refc))), np.inf, err)
    special_ok = (np.isnan(ref) & np.isnan(y)) | (np.isinf(ref) & (y == ref))
    err = np.where(~fin & ~special_ok, np.inf, err)
    return err.astype(np.float64)


# ------------------------------------------------------------------------------- inputs

def pi_fixed(bits):
    """floor(pi * 2**bits) (Machin's formula in integers)."""
    one = 1 << (bits + 32)

    def atan_inv(k):
        s = t = one // k
        n, sign = 1, 1
        while t:
            t //= k * k
            n += 2
            sign = -sign
            s += sign * (t // n)
        return s
    return (4 * (4 * atan_inv(5) - atan_inv(239))) >> 32


def hard_trig_args(p, emax):
    """Floats with p-bit significands closest to multiples of pi/2, a few per binade
    [2**e, 2**(e+1)), e < emax: continued-fraction convergents m/q of (pi/2) * 2**(p-1-e)."""
    big = 1400
    half_pi = pi_fixed(big) // 2                 # pi/2 * 2**big
    out = set()
    for e in range(-1, emax):
        sh = big - p + 1 + e
        num, den = (half_pi, 1 << sh) if sh >= 0 else (half_pi << -sh, 1)
        h0, h1 = 0, 1
        found = []
        while den:
            a = num // den
            h0, h1 = h1, a * h1 + h0
            num, den = den, num - a * den
            if h1 >= 1 << p:
                break
            if h1 >= 1 << (p - 1):
                found.append(h1)
        for m in found[-3:]:
            for t in (1, 2, 3):
                if m * t < 1 << p:
                    out.add(float(m * t) * 2.0 ** (e - p + 1))
    return np.array(sorted(out))


DOMAINS = {  # extra uniform ranges per function: (lo, hi)
    "exp": [(-1, 1), (-750, 710), (-104, 89)],
    "expm1": [(-1, 1), (-40, 710), (-1e-5, 1e-5)],
    "log": [(0, 3), (0.7, 1.42)],
    "log1p": [(-1, 1), (-1e-5, 1e-5), (-1, -0.9)],
    "sin": [(-10, 10), (-1e6, 1e6), (-2.0 ** 41, 2.0 ** 41), (-1e30, 1e30)],
    "tanh": [(-1, 1), (-20, 20), (-1e-5, 1e-5)],
    "sigmoid": [(-1, 1), (-750, 750), (-110, 110), (-40, 40)],
    "erf": [(-1, 1), (-6.5, 6.5), (-0.05, 0.05), (-4.5, 4.5)],
    "sinh": [(-1.5, 1.5), (-711, 711), (-91, 91)],
}
DOMAINS["cos"] = DOMAINS["tan"] = DOMAINS["sin"]
DOMAINS["cosh"] = DOMAINS["sinh"]


def sample(name, dtype, n=20000, seed=0):
    """Random bit patterns, log-uniform magnitudes of both signs over the whole finite range,
    uniform points in the function's interesting ranges, and for trig the hard cases."""
    rng = np.random.default_rng(seed + 7 * UNARY.index(name) + (dtype == np.float32))
    info = np.finfo(dtype)
    it = np.uint64 if dtype == np.float64 else np.uint32
    parts = [rng.integers(0, np.iinfo(it).max, n, dtype=it, endpoint=True).view(dtype)]
    mag = np.exp(rng.uniform(np.log(info.smallest_subnormal), np.log(info.max), n))
    parts += [mag.astype(dtype), -mag.astype(dtype)]
    parts += [rng.uniform(lo, hi, n).astype(dtype) for lo, hi in DOMAINS[name]]
    if name in ("sin", "cos", "tan"):
        h = hard_trig_args(53, 1024) if dtype == np.float64 else hard_trig_args(24, 128)
        h = h[h < info.max].astype(dtype)
        parts += [h, -h]
    x = np.concatenate(parts)
    return x[np.isfinite(x)]


def reference(name, x):
    with np.errstate(all="ignore"):
        r = REF[name](x.astype(LD))
    return r


# --------------------------------------------------------------------------------- accuracy

@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("name", UNARY)
def test_max_ulp(name, dtype):
    x = sample(name, dtype)
    y = getattr(V, name)(x)
    assert y.dtype == dtype
    err = ulp_err(y, reference(name, x), dtype)
    worst = int(np.argmax(err))
    bound = V.MAX_ULP[(name, np.dtype(dtype).name)]
    assert err[worst] <= bound, (name, x[worst], y[worst], err[worst])
    assert bound <= 2.0


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
def test_pow_max_ulp(dtype):
    rng = np.random.default_rng(11 + (dtype == np.float32))
    info = np.finfo(dtype)
    n = 20000
    it = np.uint64 if dtype == np.float64 else np.uint32
    bits = [rng.integers(0, np.iinfo(it).max, n, dtype=it, endpoint=True).view(dtype)
            for _ in range(2)]
    xa = np.exp(rng.uniform(np.log(info.tiny), np.log(info.max), n))
    ya = rng.uniform(-1.05, 1.05, n) * np.log(float(info.max)) / np.log(xa)  # span the range
    xn = 1 + rng.uniform(-1e-4, 1e-4, n)                                     # log|x| tiny, y huge
    yn = rng.uniform(-1, 1, n) * 7e6 * (0.05 if dtype == np.float32 else 1)
    xi = -rng.uniform(0, 10, n)                                              # negative x, integer y
    yi = np.round(rng.uniform(-300, 300, n))
    with np.errstate(invalid="ignore", over="ignore"):   # float64 bit patterns cast to float32
        xs = np.concatenate([bits[0], xa, xn, xi, rng.uniform(0, 4, n)]).astype(dtype)
        ys = np.concatenate([bits[1], ya, yn, yi, rng.uniform(-30, 30, n)]).astype(dtype)
    ok = np.isfinite(xs) & np.isfinite(ys)
    xs, ys = xs[ok], ys[ok]
    got = V.pow(xs, ys)
    assert got.dtype == dtype
    with np.errstate(all="ignore"):
        ref = np.power(xs.astype(LD), ys.astype(LD))
    err = ulp_err(got, ref, dtype)
    worst = int(np.argmax(err))
    assert err[worst] <= V.MAX_ULP[("pow", np.dtype(dtype).name)], (xs[worst], ys[worst],
                                                                      got[worst], err[worst])


def test_mixed_pow_dtypes():
    assert V.pow(np.array([2.0], np.float32), np.array([3.0])).dtype == np.float64
    assert V.pow(np.array([2.0], np.float32), np.array([3.0], np.float32)).dtype == np.float32
    assert V.pow(2, 10) == 1024.0


# --------------------------------------------------------------------------- special values

def special_inputs(dtype):
    info = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, info.smallest_subnormal,
                     -info.smallest_subnormal, info.tiny, -info.tiny, info.max, -info.max, 1.0,
                     -1.0, 0.5, -0.5, 1e-20, -1e-20, 20.0, -20.0, 88.7, 89.0, -104.0, 709.7, 710.0,
                     -745.0, -746.0, 1e30, -1e30], dtype)


def numpy_value(name, x, dtype):
    """NumPy's value (float64 math rounded to float32 for float32); erf from SciPy; sigmoid
    from long double (SciPy's expit flushes sigmoid(-745) to 0 where the value is 5e-324)."""
    import scipy.special as sp
    if name == "sigmoid":
        return sigmoid_ld(x).astype(dtype)
    wide = x.astype(np.float64)
    f = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "sin": np.sin,
         "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh,
         "erf": sp.erf}[name]
    with np.errstate(all="ignore"):
        return (f(wide) if dtype == np.float32 else f(x)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float64", "float32"])
@pytest.mark.parametrize("name", UNARY)
def test_special_values(name, dtype):
    x = special_inputs(dtype)
    got = getattr(V, name)(x)
    want = numpy_value(name, x, dtype)
    for xi, g, w in zip(x, got, want):
        if np.isnan(w) or np.isinf(w) or w == 0:
            same = (np.isnan(g) and np.isnan(w)) or (g == w and np.signbit(g) == np.signbit(w))
            assert same, (name, xi, g, w)
        else:
            assert abs(float(g) - float(w)) <= 2 * float(np.spacing(np.abs(w))), (name, xi, g, w)


def test_special_values_spelled_out():
    inf, nan = np.inf, np.nan

    class A:                                # V.f(x) on a one-element array: reuses the kernels
        def __getattr__(self, name):
            return lambda x: getattr(V, name)(np.array([x], np.float64))[0]
    a = A()
    assert a.log(0.0) == -inf and a.log(-0.0) == -inf and np.isnan(a.log(-1e-300))
    assert a.log1p(-1.0) == -inf and np.isnan(a.log1p(-1.5)) and a.log1p(inf) == inf
    assert np.signbit(a.log1p(-0.0)) and np.signbit(a.expm1(-0.0)) and np.signbit(a.sin(-0.0))
    assert np.signbit(a.tan(-0.0)) and np.signbit(a.tanh(-0.0)) and np.signbit(a.erf(-0.0))
    assert a.exp(710.0) == inf and a.exp(-746.0) == 0.0 and a.exp(-inf) == 0.0
    assert a.expm1(-inf) == -1.0 and a.expm1(inf) == inf
    assert np.isnan(a.sin(inf)) and np.isnan(a.cos(-inf)) and np.isnan(a.tan(inf))
    assert a.tanh(inf) == 1.0 and a.tanh(-inf) == -1.0 and a.erf(-inf) == -1.0
    assert a.sigmoid(-inf) == 0.0 and a.sigmoid(inf) == 1.0 and a.sigmoid(0.0) == 0.5
    assert a.sigmoid(-745.0) == 5e-324                        # subnormal result, not flushed
    assert a.cosh(710.4) < inf and a.cosh(710.5) == inf and a.sinh(-711.0) == -inf
    assert a.exp(-745.1) == 5e-324 and a.exp(-1.0) == np.exp(-1.0)
    assert np.isnan(a.exp(nan)) and np.isnan(a.erf(nan)) and np.isnan(a.sigmoid(nan))
    # the hardest huge trig arguments (glibc's sin/cos are off by 1e3-1e5 ulp on these)
    assert a.sin(1.2085420784183104e+44) == 6.2373485557199970e-17
    assert a.cos(1.5986289000543612e+74) == float(np.cos(LD(1.5986289000543612e+74)))


def test_pow_special_cases_match_numpy():
    for dtype in DTYPES:
        info = np.finfo(dtype)
        vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0,
                2.5, -2.5, info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max,
                2.0 ** 60, -(2.0 ** 60), 1e-3]
        x, y = (np.array(v, dtype) for v in zip(*[(a, b) for a in vals for b in vals]))
        got = V.pow(x, y)
        with np.errstate(all="ignore"):
            want = np.power(x, y)
        for xi, yi, g, w in zip(x, y, got, want):
            # finite results within an ulp (pow(2**60, -2.5) = 2**-150 is a float32 tie that
            # NumPy rounds to 0 and we, from float64, to the smallest subnormal: 0.5 ulp)
            same = ((np.isnan(g) and np.isnan(w)) or (g == w and np.signbit(g) == np.signbit(w))
                    or (np.isfinite(w) and np.isfinite(g) and np.signbit(g) == np.signbit(w)
                        and abs(g - w) <= np.spacing(abs(w))))
            assert same, (xi, yi, g, w)


def test_scalar_calls_from_python_and_njit():
    from numba import njit
    assert V.exp(1.0) == pytest.approx(np.e, rel=1e-16)
    assert isinstance(V.sin(1.0), float)

    @njit(error_model="numpy")
    def f(a, b):
        return V.sin(a), V.sin(b), V.pow(a, np.float64(2.0)), V.exp(3)
    s64, s32, p, e3 = f(1.0, np.float32(1.0))
    assert s64 == np.sin(1.0) and s32 == np.float32(np.sin(1.0))
    assert f.nopython_signatures[0].return_type.types[1] == V.types.float32
    assert p == 1.0 and e3 == pytest.approx(np.exp(3.0), rel=1e-16)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rounding_intrinsics_are_numpys(dtype):
    """floor, trunc and rint (llvm intrinsics, used by ops.smath in kernels) equal NumPy's
    bitwise: ties to even, -0.0, +-inf, nan and huge values kept."""
    from numba import njit

    @njit
    def rounded(x, out):
        for i in range(x.size):
            out[0, i], out[1, i], out[2, i] = V.floor(x[i]), V.trunc(x[i]), V.rint(x[i])

    x = np.array([-3.5, -2.5, -1.5, -0.5, -0.49999997, -0.0, 0.0, 0.3, 0.5, 0.7, 1.5, 2.5,
                  4503599627370495.5, 2.0 ** 60, -np.inf, np.inf, np.nan], dtype)
    out = np.empty((3, x.size), dtype)
    rounded(x, out)
    for got, want in zip(out, (np.floor(x), np.trunc(x), np.rint(x))):
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all()


# ----------------------------------------------------------------------------- vectorisation

def _host_has_avx2():
    try:
        import llvmlite.binding as llb
        return bool(llb.get_host_cpu_features().get("avx2"))
    except Exception:                       # pragma: no cover
        return False


@pytest.mark.skipif(not _host_has_avx2(), reason="host has no AVX2")
@pytest.mark.parametrize("name", UNARY + ("pow",))
def test_loops_vectorise(name):
    """The loop kernels built above compile to packed AVX2/AVX-512 code (ymm or zmm operands)
    with packed FMAs, for float64 and float32."""
    kern = V._py_array.get(name)
    if kern is None or len(kern.signatures) < 2:
        for dt in DTYPES:                   # also compiles the kernels when run alone
            x = np.linspace(0.5, 2.0, 64).astype(dt)
            getattr(V, name)(x, x) if name == "pow" else getattr(V, name)(x)
        kern = V._py_array[name]
    for sig in kern.signatures:
        asm = kern.inspect_asm(sig)
        body = re.findall(r"^\s+(v\w+)\s+[^\n]*%[yz]mm", asm, re.M)
        # float32 pow is computed in float64 (docs/fastmath.md): packed doubles
        suffix = "pd" if "float64" in str(sig[1]) or name == "pow" else "ps"
        packed_fma = [op for op in body if op.startswith("vfmadd") or op.startswith("vfmsub")
                      or op.startswith("vfnmadd") or op.startswith("vfnmsub")]
        assert any(op.endswith(suffix) for op in packed_fma), (name, sig, body[:20])
        assert len([op for op in body if op.endswith(suffix)]) >= 10, (name, sig)
