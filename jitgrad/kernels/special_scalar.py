"""Scalar gamma-family functions written once as plain Python math, compiled for both targets.

``build(jit)`` compiles them with the given decorator: ``numba.njit`` for the CPU kernels
(``ops.smath`` uses them as Numba overload implementations) and ``cuda.jit(device=True)`` for
CUDA (``kernels.cuda.special``). This module imports nothing CUDA. Every function takes and
returns float64 (float32 callers convert first: SciPy computes these in float64 too).

Under Numba's CUDA simulator the bodies run as plain Python, where ``math.*`` raises on
domain/overflow errors (``math.lgamma(0)``, ``math.pow`` overflowing) where compiled code
returns nan/inf: hence the explicit guards before every such call (they give the compiled
answer, so all targets agree).

Note [gamma family scalars]: ``gammaln`` is libm's ``lgamma`` with SciPy's special values;
``digamma`` is Cephes' ``psi`` (reflection, exact harmonic sums for integers <= 10, recurrence
into [1, 2] with Boost's rational approximation there, the asymptotic Bernoulli series above
10) plus SciPy's Taylor series about the negative root; ``polygamma`` is SciPy's
``(-1)^(n+1) n! zeta(n+1, x)`` with Cephes' Hurwitz zeta (Euler-Maclaurin summation with
Bernoulli-number corrections). So digamma and polygamma follow SciPy's algorithms step by step
and agree with it to rounding.
"""
from __future__ import annotations

import math
import types

NAN = math.nan
INF = math.inf
EULER = 0.5772156649015329
MACHEP = 1.11022302462515654042e-16
BIG = 4503599627370496.0  # 2**52: every float64 this large is an integer
#: Cephes' lgamma overflow bound: above it gammaln is +inf
LGAMMA_MAX = 2.556348e305
#: (2j+2)! / B_{2j+2}: the Euler-Maclaurin denominators of Cephes' zeta
ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
          7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
          -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
#: the positive zero of digamma, in three parts (Boost)
ROOT1 = 1569415565.0 / 1073741824.0
ROOT2 = (381566830.0 / 1073741824.0) / 1073741824.0
ROOT3 = 0.9016312093258695918615325266959189453125e-19
Y12 = 0.99558162689208984375  # float32(0.99558162689208984): a float constant in Boost/Cephes
#: the negative zero of digamma near -0.5 and digamma's value there (SciPy)
NEGROOT = -0.504083008264455409
NEGROOTVAL = 7.2897639029768949e-17


def floor(x):
    """``floor`` as a float (Numba's ``math.floor`` gives an int64, which overflows for large
    ``x``); nan, +-inf and values from 2**52 on are already integers."""
    if not abs(x) < BIG:
        return x
    return float(math.floor(x))


def _is_odd(n):
    """Whether the integer-valued float ``n`` is odd (Numba's CPU ``math`` has no ``fmod``)."""
    half = n * 0.5
    return float(math.floor(half)) != half if abs(half) < BIG else False


def build(jit):
    """The functions compiled with ``jit``: a namespace with ``gammaln``, ``digamma``,
    ``polygamma(n, x)`` (float64 ``n`` holding an integer >= 0) and ``zeta(s, q)``."""

    def powm(a, s):
        """a ** -s for the Hurwitz zeta sums (s an integer when a < 0): +-inf on overflow."""
        if a != 0 and -s * math.log(abs(a)) > 709.0:
            if a < 0 and _odd(s):
                return -INF
            return INF
        return math.pow(a, -s)

    _floor = jit(floor)
    _odd = jit(_is_odd)
    powm = jit(powm)

    def zeta(x, q):
        """Hurwitz zeta sum_{k>=0} (k + q)^-x (Cephes zeta as in SciPy): the first terms
        summed until k + q > 9, then Euler-Maclaurin: the integral w^(1-x)/(x-1), -w^-x/2 and
        the Bernoulli terms B_2j/(2j)! x(x+1)...(x+2j-2) w^(-x-2j+1) (12 of them)."""
        if x == 1.0:
            return INF
        if x < 1.0 or x != x:
            return NAN
        if q <= 0.0:
            if q == -INF or q == _floor(q):
                return INF
            if x != _floor(x):
                return NAN  # q^-x undefined
        if q > 1e8:  # asymptotic expansion (DLMF 25.11.43)
            return (1.0 / (x - 1.0) + 1.0 / (2.0 * q)) * math.pow(q, 1.0 - x)
        s = powm(q, x)
        a = q
        i = 0
        b = 0.0
        while i < 9 or a <= 9.0:
            i += 1
            a += 1.0
            b = powm(a, x)
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
            t = a * b / ZETA_A[j]
            s = s + t
            if s != 0 and abs(t / s) < MACHEP:
                return s
            k += 1.0
            a *= x + k
            b /= w
            k += 1.0
        return s

    zeta = jit(zeta)

    def digamma_1_2(x):
        """digamma on [1, 2]: (x - root) (Y + P(x-1)/Q(x-1)) (Boost's rational approximation)."""
        g = x - ROOT1
        g -= ROOT2
        g -= ROOT3
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
        return g * Y12 + g * (p / q)

    digamma_1_2 = jit(digamma_1_2)

    def psi(x):
        """Cephes psi: reflection psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0 (nan at the
        negative integers, -+inf at +-0), harmonic sums for integers <= 10, recurrence into
        [1, 2] below 10, else log x - 1/(2x) - sum B_2k / (2k x^2k)."""
        y = 0.0
        if x != x or x == INF:
            return x
        if x == -INF:
            return NAN
        if x == 0:
            return math.copysign(INF, -x)
        if x < 0.0:
            r = x + _floor(-x)  # the fractional part (modf), exact
            if r == 0.0:
                return NAN
            y = -math.pi / math.tan(math.pi * r)
            x = 1.0 - x
        if x <= 10.0 and x == _floor(x):
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
            return y + digamma_1_2(x)
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

    psi = jit(psi)

    def digamma(x):
        """psi(x) = d/dx log Gamma(x) (SciPy's digamma): Cephes psi, except within 0.3 of the
        negative zero x0 where the Taylor series x0val + sum_n (-1)^(n+1) zeta(n+1, x0)
        (x - x0)^n keeps the relative accuracy near the zero."""
        if abs(x - NEGROOT) < 0.3:
            res = NEGROOTVAL
            coeff = -1.0
            z = x - NEGROOT
            for n in range(1, 100):
                coeff *= -z
                term = coeff * zeta(n + 1.0, NEGROOT)
                res += term
                if abs(term) < 2.220446049250313e-16 * abs(res):
                    break
            return res
        return psi(x)

    digamma = jit(digamma)

    def polygamma(n, x):
        """psi^(n)(x): digamma for n = 0, else (-1)^(n+1) n! zeta(n+1, x) (SciPy's
        polygamma); ``n`` a float64 holding an integer."""
        if n == 0:
            return digamma(x)
        fac = 1.0
        k = 2.0
        while k <= n:
            fac *= k
            k += 1.0
        sign = 1.0 if _odd(n) else -1.0
        return sign * fac * zeta(n + 1.0, x)

    def gammaln(x):
        """log|Gamma(x)|: +inf at the poles (x a non-positive integer), x at +-inf (SciPy's
        gammaln(-inf) is -inf), +inf past Cephes' overflow bounds, nan for nan."""
        if math.isinf(x):
            return x
        if x <= 0 and x == _floor(x):
            return INF
        # past Cephes' overflow bound, and where Cephes' first step 1/x overflows (|x| below
        # 1/DBL_MAX: SciPy's +inf there, not log(1/|x|))
        if x > LGAMMA_MAX or math.isinf(1.0 / x):
            return INF
        return math.lgamma(x)

    return types.SimpleNamespace(gammaln=jit(gammaln), digamma=digamma,
                                 polygamma=jit(polygamma), zeta=zeta)
