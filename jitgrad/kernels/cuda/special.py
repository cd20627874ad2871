"""CUDA scalar bodies and kernels for the ``jitgrad.numpy`` composite rows (``ops.npfuncs``):
``round``, ``stdtr`` and the scans, and the gamma family's device functions for the elementwise
rows of ``ops.special`` (the other elementwise rows compile their own scalar bodies).

The scalar bodies below are applied by ``kernels.cuda.backend.elementwise`` (one generated grid-stride
kernel per body and operand layout). They reproduce NumPy's and SciPy's results, special values
included: domain errors give nan, poles give NumPy's/SciPy's infinities, rounding is
round-half-even (``rint``) and keeps the sign of zero. Each body also runs as plain Python
under Numba's simulator, where ``math.*`` raises on domain/overflow errors (``math.lgamma(0)``,
``math.pow`` overflowing) where the GPU returns nan/inf: hence the explicit guards before every such
call (they give the GPU's answer, so both targets agree).

The gamma family: Note [gamma family scalars] (kernels/special_scalar.py). ``stdtr`` is
``I_{df/(df+t^2)}(df/2, 1/2) / 2`` (regularized incomplete beta by its continued fraction,
modified Lentz), computed in float64.

``scan_kernel`` is the cumulative sum/product: one thread per row along the axis, sequential in
NumPy's order, so results equal ``np.cumsum``/``np.cumprod`` bitwise.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda

from . import backend as cuda_backend
from .. import special_scalar
from ..cpu import vmath

NAN = math.nan


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
#: gammaln, digamma, polygamma(n, x) as device functions: kernels/special_scalar.py's scalar code
#: (the CPU kernels compile the same code: Note [gamma family scalars])
SPECIAL = special_scalar.build(cuda.jit(device=True))


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
