"""Rows for ``jitgrad.scipy.special`` functions whose forward is ``scipy.special``'s own:
``erfc erfinv erfcinv log_ndtr ndtri i0 i1 i0e i1e`` (unary), the regularized incomplete
gamma and beta functions ``gammainc gammaincc betainc``, their inverses in the probability
``gammaincinv betaincinv`` and the t quantile ``stdtrit``, and the Bessel functions
``jv yv iv ive`` (differentiable in ``x``; the order and shape parameters are constants).

Every row is a ``def_composite``: the forward calls SciPy on the arrays (accurate in the tails,
where ``1 - erf`` or ``log(ndtr)`` would underflow), the backward is written with Tensor ops and
with these rows themselves, so derivatives of every order work (``create_graph=True``). The
derivatives::

    d erfc(x)    = -2/sqrt(pi) exp(-x^2)
    d erfinv(x)  =  sqrt(pi)/2 exp(erfinv(x)^2)
    d erfcinv(x) = -sqrt(pi)/2 exp(erfcinv(x)^2)
    d log_ndtr(x) = exp(-x^2/2 - log(2 pi)/2 - log_ndtr(x))
    d ndtri(p)   =  sqrt(2 pi) exp(ndtri(p)^2 / 2)
    d i0(x) = i1(x);             d i1(x) = i0(x) - i1(x)/x        (1/2 at x = 0)
    d i0e(x) = i1e(x) - sign(x) i0e(x)
    d i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x)                    (1/2 at x = 0)
    d/dx gammainc(a, x)  =  exp((a-1) log x - x - gammaln(a))
    d/dx gammaincc(a, x) = -exp((a-1) log x - x - gammaln(a))
    d/dx betainc(a, b, x) = exp((a-1) log x + (b-1) log1p(-x) - betaln(a, b))
    d/dq gammaincinv(a, q), betaincinv(a, b, q), stdtrit(df, q) = 1 / density(result)
    d/dx jv(v, x) = (jv(v-1, x) - jv(v+1, x)) / 2       (yv the same)
    d/dx iv(v, x) = (iv(v-1, x) + iv(v+1, x)) / 2
    d/dx ive(v, x) = (ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) ive(v, x)

The shape parameters ``a``/``b`` and the orders ``v`` are constants (row attributes):
their derivatives are series without a closed form, and passing them with ``requires_grad``
raises ``NotImplementedError`` naming the function.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .core import dispatch, upper
from .core.registry import def_composite

_SQRT_PI_2 = math.sqrt(math.pi) / 2.0
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _sp(name):
    import scipy.special

    return getattr(scipy.special, name)


def _ops():
    from . import binary, unary

    return unary, binary


def _fwd(name):
    def forward(ctx, x):
        return np.asarray(_sp(name)(x), dtype=x.dtype)
    return forward


def _erfc_back(ctx, g, x):
    unary, _ = _ops()
    return (g * (-2.0 / math.sqrt(math.pi)) * unary.exp(-(x * x)),)


def _erfinv_back(ctx, g, result):
    unary, _ = _ops()
    return (g * _SQRT_PI_2 * unary.exp(result * result),)


def _erfcinv_back(ctx, g, result):
    unary, _ = _ops()
    return (g * -_SQRT_PI_2 * unary.exp(result * result),)


def _log_ndtr_back(ctx, g, x, result):
    unary, _ = _ops()
    return (g * unary.exp(-0.5 * (x * x) - _HALF_LOG_2PI - result),)


def _ndtri_back(ctx, g, result):
    unary, _ = _ops()
    return (g * math.sqrt(2.0 * math.pi) * unary.exp(0.5 * (result * result)),)


def _safe_inv(x):
    """``(1/x, x == 0)`` with 0 in place of ``1/x`` at zero (the callers supply the limit)."""
    _, binary = _ops()
    zero = x == 0
    return binary.where(zero, 0.0, 1.0 / binary.where(zero, 1.0, x)), zero


def _i0_back(ctx, g, x):
    return (g * unary_row(I1, x),)


def _i1_back(ctx, g, x):
    _, binary = _ops()
    inv, zero = _safe_inv(x)
    return (g * binary.where(zero, 0.5, unary_row(I0, x) - unary_row(I1, x) * inv),)


def _i0e_back(ctx, g, x):
    unary, _ = _ops()
    return (g * (unary_row(I1E, x) - unary.sign(x) * unary_row(I0E, x)),)


def _i1e_back(ctx, g, x):
    unary, binary = _ops()
    inv, zero = _safe_inv(x)
    d = unary_row(I0E, x) - unary_row(I1E, x) * (unary.sign(x) + inv)
    return (g * binary.where(zero, 0.5, d),)


def _row(name, node_name, forward, backward, save, attrs=()):
    """A row elementwise in ``x``: its jvp is the backward rule applied to the tangent (each
    derivative is a multiplier), and under vmap it runs on the batched tensor as it is (the
    attribute arrays broadcast against the trailing dims)."""
    rows = []

    def jvp(tangents, primals, outs, **attr_values):
        saved = {"x": primals[0], "result": outs[0]}
        return backward(SimpleNamespace(**attr_values), tangents[0],
                        **{k: saved[k] for k in save})[0]

    def batch_rule(args, batched, **attr_values):
        return dispatch.composite(rows[0], args[0], **attr_values)

    rows.append(def_composite(name, node_name, ("x",), forward, backward, attrs=attrs,
                              save=save, jvp=jvp, batch_rule=batch_rule))
    return rows[0]


ERFC = _row("scipy_erfc", "ErfcBackward0", _fwd("erfc"), _erfc_back, ("x",))
ERFINV = _row("scipy_erfinv", "ErfinvBackward0", _fwd("erfinv"), _erfinv_back, ("result",))
ERFCINV = _row("scipy_erfcinv", "ErfcinvBackward0", _fwd("erfcinv"), _erfcinv_back, ("result",))
LOG_NDTR = _row("scipy_log_ndtr", "LogNdtrBackward0", _fwd("log_ndtr"), _log_ndtr_back,
                ("x", "result"))
NDTRI = _row("scipy_ndtri", "NdtriBackward0", _fwd("ndtri"), _ndtri_back, ("result",))
I0 = _row("scipy_i0", "I0Backward0", _fwd("i0"), _i0_back, ("x",))
I1 = _row("scipy_i1", "I1Backward0", _fwd("i1"), _i1_back, ("x",))
I0E = _row("scipy_i0e", "I0eBackward0", _fwd("i0e"), _i0e_back, ("x",))
I1E = _row("scipy_i1e", "I1eBackward0", _fwd("i1e"), _i1e_back, ("x",))

UNARY = {"erfc": ERFC, "erfinv": ERFINV, "erfcinv": ERFCINV, "log_ndtr": LOG_NDTR,
         "ndtri": NDTRI, "i0": I0, "i1": I1, "i0e": I0E, "i1e": I1E}


def unary_row(op, x):
    """Apply one of the unary rows above (``UNARY``) to ``x`` (a Tensor or array-like)."""
    return dispatch.composite(op, dispatch.tensor_operand(x, op.name))


# --- the incomplete gamma and beta functions: differentiable in x --------------------------
def _incomplete_fwd(name):
    def forward(ctx, x, params):
        return np.asarray(_sp(name)(*params, x), dtype=x.dtype)
    return forward


def _gamma_density(x, a):
    """``x^(a-1) e^-x / Gamma(a)`` as Tensor ops of ``x`` (``a`` a constant array)."""
    unary, _ = _ops()
    logc = dispatch.Tensor._make(np.asarray(-_sp("gammaln")(a), dtype=x._data.dtype))
    at = dispatch.Tensor._make(np.asarray(a - 1.0, dtype=x._data.dtype))
    return unary.exp(_xlogy(at, x) - x + logc)


def _xlogy(c, x):
    """``c log x`` with 0 where ``c == 0`` (so ``a = 1`` at ``x = 0`` gives the density 1)."""
    unary, binary = _ops()
    zero = c == 0
    return binary.where(zero, 0.0, c * unary.log(binary.where(zero, 1.0, x)))


def _gammainc_back(ctx, g, x):
    return (g * _gamma_density(x, ctx.params[0]),)


def _gammaincc_back(ctx, g, x):
    return (-(g * _gamma_density(x, ctx.params[0])),)


def _betainc_back(ctx, g, x):
    unary, _ = _ops()
    a, b = ctx.params
    dt = x._data.dtype
    logc = dispatch.Tensor._make(np.asarray(-_sp("betaln")(a, b), dtype=dt))
    am1 = dispatch.Tensor._make(np.asarray(a - 1.0, dtype=dt))
    bm1 = dispatch.Tensor._make(np.asarray(b - 1.0, dtype=dt))
    return (g * unary.exp(_xlogy(am1, x) + _xlogy(bm1, 1.0 - x) + logc),)


GAMMAINC = _row("scipy_gammainc", "GammaincBackward0", _incomplete_fwd("gammainc"),
                _gammainc_back, ("x",), attrs=("params",))
GAMMAINCC = _row("scipy_gammaincc", "GammainccBackward0", _incomplete_fwd("gammaincc"),
                 _gammaincc_back, ("x",), attrs=("params",))
BETAINC = _row("scipy_betainc", "BetaincBackward0", _incomplete_fwd("betainc"), _betainc_back,
               ("x",), attrs=("params",))


# --- inverses in the probability: dx/dq = 1 / density(x) -----------------------------------
def _const(values, dtype):
    return dispatch.Tensor._make(np.asarray(values, dtype=dtype))


def _gammaincinv_back(ctx, g, result):
    unary, _ = _ops()
    (a,) = ctx.params
    dt = result._data.dtype
    log_density = (_xlogy(_const(a - 1.0, dt), result) - result
                   + _const(-_sp("gammaln")(a), dt))
    return (g * unary.exp(-log_density),)


def _betaincinv_back(ctx, g, result):
    unary, _ = _ops()
    a, b = ctx.params
    dt = result._data.dtype
    log_density = (_xlogy(_const(a - 1.0, dt), result) + _xlogy(_const(b - 1.0, dt), 1.0 - result)
                   + _const(-_sp("betaln")(a, b), dt))
    return (g * unary.exp(-log_density),)


def _stdtrit_back(ctx, g, result):
    unary, _ = _ops()
    (df,) = ctx.params
    dt = result._data.dtype
    logc = (_sp("gammaln")((df + 1.0) / 2.0) - _sp("gammaln")(df / 2.0)
            - 0.5 * np.log(df * np.pi))
    dft = _const(df, dt)
    log_density = _const(logc, dt) - (dft + 1.0) * 0.5 * unary.log1p(result * result / dft)
    return (g * unary.exp(-log_density),)


GAMMAINCINV = _row("scipy_gammaincinv", "GammaincinvBackward0", _incomplete_fwd("gammaincinv"),
                   _gammaincinv_back, ("result",), attrs=("params",))
BETAINCINV = _row("scipy_betaincinv", "BetaincinvBackward0", _incomplete_fwd("betaincinv"),
                  _betaincinv_back, ("result",), attrs=("params",))
STDTRIT = _row("scipy_stdtrit", "StdtritBackward0", _incomplete_fwd("stdtrit"), _stdtrit_back,
               ("result",), attrs=("params",))


# --- Bessel functions of real order v (a constant) ------------------------------------------
def _order(op, x, v):
    """``op`` at order ``v`` (an array of x's broadcast shape) for Tensor ``x``."""
    return dispatch.composite(op, x, params=(v,))


def _bessel_back(kind):
    def backward(ctx, g, x):
        unary, _ = _ops()
        (v,) = ctx.params
        op = BESSEL[kind]
        below, above = _order(op, x, v - 1.0), _order(op, x, v + 1.0)
        if kind in ("jv", "yv"):  # J'_v = (J_{v-1} - J_{v+1}) / 2, the same for Y
            return (g * ((below - above) * 0.5),)
        d = (below + above) * 0.5  # I'_v = (I_{v-1} + I_{v+1}) / 2
        if kind == "ive":  # ive = iv exp(-|x|)
            d = d - unary.sign(x) * _order(op, x, v)
        return (g * d,)
    return backward


BESSEL = {}
for _kind, _node in (("jv", "JvBackward0"), ("yv", "YvBackward0"), ("iv", "IvBackward0"),
                     ("ive", "IveBackward0")):
    BESSEL[_kind] = _row(f"scipy_{_kind}", _node, _incomplete_fwd(_kind), _bessel_back(_kind),
                         ("x",), attrs=("params",))


def _constant(p, fn, name):
    if isinstance(p, dispatch.Tensor):
        if p.requires_grad:
            raise NotImplementedError(
                f"{fn}: the derivative with respect to the shape parameter {name} is not "
                "implemented (no closed form); pass it without requires_grad (or detach it)")
        upper.host_read(p, f"{fn}'s parameter {name}")
        p = p._data
    return np.asarray(p, dtype=np.float64)


def incomplete(op, fn, x, **params):
    """``op`` (``GAMMAINC``, ``GAMMAINCC``, ``BETAINC``) at ``x`` for the constant shape
    parameters ``params`` (in SciPy's argument order), broadcast together."""
    x = dispatch.tensor_operand(x, fn)
    if x._data.dtype.kind not in "f":
        x = dispatch.Tensor._make(np.asarray(x._data, dtype=np.float64))
    values = [_constant(p, fn, name) for name, p in params.items()]
    shape = np.broadcast_shapes(x.shape, *(v.shape for v in values))
    if tuple(x.shape) != shape:
        x = dispatch.Tensor.expand(x, shape)
    values = tuple(np.broadcast_to(v, shape) for v in values)
    return dispatch.composite(op, x, params=values)
