"""CUDA scalar bodies and kernels for the ``jitgrad.numpy`` composite rows (``ops.npfuncs``):
``round``, the gamma family, ``stdtr`` and the scans (the elementwise rows of
``ops.elementwise_np`` compile their own scalar bodies).

The scalar bodies below are applied by ``device.cuda.elementwise`` (one generated grid-stride
kernel per body and operand layout). They reproduce NumPy's and SciPy's results, special values
included: domain errors give nan, poles give NumPy's/SciPy's infinities, rounding is
round-half-even (``rint``) and keeps the sign of zero. Each body also runs as plain Python
under Numba's simulator, where ``math.*`` raises on domain/overflow errors (``math.lgamma(0)``,
``math.pow`` overflowing) where the GPU returns nan/inf: hence the explicit guards before every such
call (they give the GPU's answer, so both targets agree).

Note [cuda special functions]: digamma is Cephes' ``psi`` (reflection, exact harmonic sums for
integers <= 10, recurrence into [1, 2] with Boost's rational approximation there, the asymptotic
Bernoulli series above 10) plus SciPy's Taylor series about the negative root; polygamma is
SciPy's ``(-1)^(n+1) n! zeta(n+1, x)`` with Cephes' Hurwitz zeta (Euler-Maclaurin summation with
Bernoulli-number corrections); so both follow SciPy's algorithms step by step and agree with it
to rounding. ``stdtr`` is ``I_{df/(df+t^2)}(df/2, 1/2) / 2`` (regularized incomplete beta by its
continued fraction, modified Lentz), computed in float64.

``scan_kernel`` is the cumulative sum/product: one thread per row along the axis, sequential in
NumPy's order, so results equal ``np.cumsum``/``np.cumprod`` bitwise.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda

from . import cuda as cuda_backend
from . import vmath

NAN = math.nan
INF = math.inf
EULER = 0.5772156649015329
MACHEP = 1.11022302462515654042e-16
BIG = 4503599627370496.0  # 2**52: every float64 (and float32) of this size is an integer


# ---- rounding ----------------------------------------------------------------------------------
#: round half to even, keeping the sign of zero (the scalar form ops.smath compiles for the CPU)
rint_d = cuda.jit(device=True)(vmath.rint_scalar)


def rint_(x):
    """rint(x): round half to even."""
    return rint_d(x)


def round_pos(x, f):
    """NumPy's round for decimals >= 0: rint(x * f) / f, f = 10**decimals (in x's dtype)."""
    return rint_d(x * f) / f


def round_neg(x, f):
    """NumPy's round for decimals < 0: rint(x / f) * f, f = 10**-decimals."""
    return rint_d(x / f) * f


# ---- gamma family -----------------------------------------------------------------------------
def gammaln_(x):
    """log|Gamma(x)|: +inf at the poles (x a non-positive integer), x at +-inf (SciPy's
    gammaln(-inf) is -inf), +inf past Cephes' overflow bound."""
    if math.isinf(x):
        return x
    if x <= 0 and x == math.floor(x):
        return INF
    if x > 2.556348e305:
        return INF
    return math.lgamma(x)


@cuda.jit(device=True)
def powm_d(a, s):
    """a ** -s for the Hurwitz zeta sums (s an integer when a < 0): +-inf on overflow (the
    simulator's math.pow raises there, the GPU gives inf)."""
    if a != 0 and -s * math.log(abs(a)) > 709.0:
        if a < 0 and math.fmod(s, 2.0) != 0:
            return -INF
        return INF
    return math.pow(a, -s)


#: (2j+2)! / B_{2j+2}: the Euler-Maclaurin denominators of Cephes' zeta
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


@cuda.jit(device=True)
def zeta_d(x, q):
    """Hurwitz zeta sum_{k>=0} (k + q)^-x (Cephes zeta as in SciPy): the first terms summed
    until k + q > 9, then Euler-Maclaurin: the integral w^(1-x)/(x-1), -w^-x/2 and the
    Bernoulli terms B_2j/(2j)! x(x+1)...(x+2j-2) w^(-x-2j+1) (12 of them)."""
    if x == 1.0:
        return INF
    if x < 1.0 or x != x:
        return NAN
    if q <= 0.0:
        if q == -INF or q == math.floor(q):
            return INF
        if x != math.floor(x):
            return NAN  # q^-x undefined
    if q > 1e8:  # asymptotic expansion (DLMF 25.11.43)
        return (1.0 / (x - 1.0) + 1.0 / (2.0 * q)) * math.pow(q, 1.0 - x)
    s = powm_d(q, x)
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = powm_d(a, x)
        s += b
        if s != 0 and abs(b / s) < MACHEP:  # (s == 0: b / s is +-inf in C, no stop)
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for j in range(12):
        a *= x + k
        b /= w
        t = a * b / _ZETA_A[j]
        s = s + t
        if s != 0 and abs(t / s) < MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


_ROOT1 = 1569415565.0 / 1073741824.0
_ROOT2 = (381566830.0 / 1073741824.0) / 1073741824.0
_ROOT3 = 0.9016312093258695918615325266959189453125e-19
_Y12 = float(np.float32(0.99558162689208984))  # a float constant in Boost/Cephes


@cuda.jit(device=True)
def _digamma_1_2(x):
    """digamma on [1, 2]: (x - root) (Y + P(x-1)/Q(x-1)) (Boost's rational approximation,
    root = the positive zero in three parts)."""
    g = x - _ROOT1
    g -= _ROOT2
    g -= _ROOT3
    z = x - 1.0
    p = -0.0020713321167745952
    p = p * z - 0.045251321448739056
    p = p * z - 0.28919126444774784
    p = p * z - 0.65031853770896507
    p = p * z - 0.32555031186804491
    p = p * z + 0.25479851061131551
    q = -0.55789841321675513e-6
    q = q * z + 0.0021284987017821144
    q = q * z + 0.054151797245674225
    q = q * z + 0.43593529692665969
    q = q * z + 1.4606242909763515
    q = q * z + 2.0767117023730469
    q = q * z + 1.0
    return g * _Y12 + g * (p / q)


@cuda.jit(device=True)
def psi_d(x):
    """Cephes psi: reflection psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0 (nan at the
    negative integers, -+inf at +-0), harmonic sums for integers <= 10, recurrence into [1, 2]
    below 10, else log x - 1/(2x) - sum B_2k / (2k x^2k)."""
    y = 0.0
    if x != x or x == INF:
        return x
    if x == -INF:
        return NAN
    if x == 0:
        return math.copysign(INF, -x)
    if x < 0.0:
        r = x + math.floor(-x)  # the fractional part (modf), exact
        if r == 0.0:
            return NAN
        y = -math.pi / math.tan(math.pi * r)
        x = 1.0 - x
    if x <= 10.0 and x == math.floor(x):
        n = int(x)
        for i in range(1, n):
            y += 1.0 / i
        return y - EULER
    if x < 1.0:
        y -= 1.0 / x
        x += 1.0
    elif x < 10.0:
        while x > 2.0:
            x -= 1.0
            y += 1.0 / x
    if 1.0 <= x <= 2.0:
        return y + _digamma_1_2(x)
    a = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        a = 8.33333333333333333333e-2
        a = a * z - 2.10927960927960927961e-2
        a = a * z + 7.57575757575757575758e-3
        a = a * z - 4.16666666666666666667e-3
        a = a * z + 3.96825396825396825397e-3
        a = a * z - 8.33333333333333333333e-3
        a = a * z + 8.33333333333333333333e-2
        a = z * a
    return y + (math.log(x) - 0.5 / x - a)


NEGROOT = -0.504083008264455409
NEGROOTVAL = 7.2897639029768949e-17


def digamma_(x):
    """psi(x) = d/dx log Gamma(x) (SciPy's digamma): Cephes psi, except within 0.3 of the
    negative zero x0 where the Taylor series x0val + sum_n (-1)^(n+1) zeta(n+1, x0) (x - x0)^n
    keeps the relative accuracy near the zero."""
    if abs(x - NEGROOT) < 0.3:
        res = NEGROOTVAL
        coeff = -1.0
        z = x - NEGROOT
        for n in range(1, 100):
            coeff *= -z
            term = coeff * zeta_d(n + 1.0, NEGROOT)
            res += term
            if abs(term) < 2.220446049250313e-16 * abs(res):
                break
        return res
    return psi_d(x)


def polygamma_(x, n):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x) for n >= 1 (SciPy's polygamma); ``n`` a
    float64 holding an integer."""
    fac = 1.0
    k = 2.0
    while k <= n:
        fac *= k
        k += 1.0
    sign = 1.0 if math.fmod(n, 2.0) != 0 else -1.0
    return sign * fac * zeta_d(n + 1.0, x)


# ---- Student t CDF ----------------------------------------------------------------------------
@cuda.jit(device=True)
def _stirling_d(z):
    """log Gamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) for z >= 8 (Bernoulli series)."""
    w = 1.0 / (z * z)
    s = 1.0 / 156.0
    s = s * w - 691.0 / 360360.0
    s = s * w + 1.0 / 1188.0
    s = s * w - 1.0 / 1680.0
    s = s * w + 1.0 / 1260.0
    s = s * w - 1.0 / 360.0
    s = s * w + 1.0 / 12.0
    return s / z


@cuda.jit(device=True)
def _lbeta_half_d(a):
    """log B(a, 1/2) = lgamma(a) + log(sqrt(pi)) - lgamma(a + 1/2); for a >= 8 by Stirling
    differences (lgamma(a) - lgamma(a + 1/2) is small next to the lgammas: no cancellation)."""
    if a < 8.0:
        return math.lgamma(a) + 0.5723649429247001 - math.lgamma(a + 0.5)
    d = -0.5 * math.log(a) - a * math.log1p(0.5 / a) + 0.5
    return d + _stirling_d(a) - _stirling_d(a + 0.5) + 0.5723649429247001


@cuda.jit(device=True)
def _betacf_d(a, b, x):
    """The continued fraction of I_x(a, b) (x < (a+1)/(a+b+2)), modified Lentz."""
    tiny = 1e-300
    qab = a + b
    qap = a + 1.0
    qam = a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 20000):
        fm = float(m)
        m2 = 2.0 * fm
        c, d = _lentz_step(fm * (b - fm) * x / ((qam + m2) * (a + m2)), c, d, tiny)
        h *= d * c
        c, d = _lentz_step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2)), c, d, tiny)
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-16:
            break
    return h


@cuda.jit(device=True)
def _lentz_step(aa, c, d, tiny):
    """One step of the modified Lentz method for the next partial numerator ``aa``: the new
    ``(c, d)`` (``d`` already inverted), each kept off zero by ``tiny``."""
    d = 1.0 + aa * d
    if abs(d) < tiny:
        d = tiny
    c = 1.0 + aa / c
    if abs(c) < tiny:
        c = tiny
    return c, 1.0 / d


@cuda.jit(device=True)
def _ibeta_t_d(a, x, xc, lx, lxc):
    """I_x(a, 1/2) with xc = 1 - x and their logs given accurately: the continued fraction
    directly or through I_x(a, b) = 1 - I_{1-x}(b, a)."""
    lb = _lbeta_half_d(a)
    front = math.exp(a * lx + 0.5 * lxc - lb)
    if x < (a + 1.0) / (a + 2.5):
        return front * _betacf_d(a, 0.5, x) / a
    return 1.0 - front * _betacf_d(0.5, a, xc) / 0.5


def stdtr_(t, df):
    """Student t CDF with df degrees of freedom (scipy.special.stdtr(df, t)):
    I_{df/(df+t^2)}(df/2, 1/2) / 2 for t < 0, one minus that for t > 0; the normal CDF for
    df = inf; nan for df <= 0 or nan input."""
    if not df > 0 or t != t:
        return NAN
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if math.isinf(df):
        x = t * 0.7071067811865476
        z = abs(x)
        if z < 0.7071067811865476:
            return 0.5 + 0.5 * math.erf(x)
        y = 0.5 * math.erfc(z)
        return 1.0 - y if x > 0 else y
    if t == 0:
        return 0.5
    tt = t * t
    s = df + tt
    x = df / s
    xc = tt / s
    lx = math.log(x) if x < 0.5 else math.log1p(-xc)
    lxc = math.log(xc) if xc < 0.5 else math.log1p(-x)
    p = 0.5 * _ibeta_t_d(0.5 * df, x, xc, lx, lxc)
    return p if t < 0 else 1.0 - p


# ---- scans ------------------------------------------------------------------------------------
@cuda.jit
def scan_kernel(x, x_off, rshape, xrst, orst, n_rows, length, xst, ost, out, prod, ident):
    """out[row, i] = x[row, 0] op x[row, 1] op ... op x[row, i] (op: + or * when ``prod``),
    started from ``ident`` in the output dtype. One thread per row (the rows are unravelled
    over ``rshape`` with strides ``xrst``/``orst``), sequential along the axis in NumPy's order,
    so the results are bitwise NumPy's."""
    r = cuda.grid(1)
    step = cuda.gridsize(1)
    while r < n_rows:
        px = x_off
        po = 0
        rem = r
        for d in range(len(rshape) - 1, -1, -1):
            j = rem % rshape[d]
            rem = rem // rshape[d]
            px += j * xrst[d]
            po += j * orst[d]
        acc = ident
        for i in range(length):
            if prod:
                acc = acc * x[px + i * xst]
            else:
                acc = acc + x[px + i * xst]
            out[po + i * ost] = acc
        r += step


def scan(x, axis: int, out_dtype, prod: bool):
    """Cumulative sum (``prod`` False) or product of CudaArray ``x`` along ``axis`` into a new
    contiguous array of ``out_dtype`` (``x`` cast to it first, as NumPy accumulates in it)."""
    out_dtype = np.dtype(out_dtype)
    if x.dtype != out_dtype:
        x = x.astype(out_dtype)
    out = cuda_backend.empty(x.shape, out_dtype, x.index)
    if out.size == 0:
        return out
    if x.ndim == 0:
        cuda_backend.copy_into(out, x)
        return out
    keep = [d for d in range(x.ndim) if d != axis]
    rshape = tuple(x.shape[d] for d in keep) or (1,)
    xrst = tuple(x.elem_strides[d] for d in keep) or (0,)
    orst = tuple(out.elem_strides[d] for d in keep) or (0,)
    n_rows = out.size // x.shape[axis]
    blocks, threads = cuda_backend._launch_config(n_rows)
    with cuda.gpus[x.index]:
        scan_kernel[blocks, threads](x.buffer, x.offset, rshape, xrst, orst, n_rows,
                                     x.shape[axis], x.elem_strides[axis],
                                     out.elem_strides[axis], out.buffer, int(prod),
                                     out_dtype.type(1 if prod else 0))
    return out
