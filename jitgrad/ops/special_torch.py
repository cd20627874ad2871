"""Rows for torch.special's functions that ``jitgrad.scipy.special`` lacks, and ``write_result``,
the ``out=`` of the torch-style public functions (``jitgrad.special``, ``jitgrad.fft``).

Every row is a ``def_composite`` elementwise in its one tensor input ``x``: the forward is
SciPy's (accurate in the tails) or, for the orthogonal polynomials, a NumPy three-term
recurrence; the backward is written with Tensor ops and these rows, so derivatives of every
order work (``create_graph=True``). The derivatives::

    K0' = -K1                  K1' = -K0 - K1 / x
    K0e' = K0e - K1e           K1e' = K1e (1 - 1/x) - K0e           (Ke(x) = exp(x) K(x))
    Ai' = Ai'(x) (its own row)            Ai''(x) = x Ai(x)
    j_n' = (n j_{n-1} - (n + 1) j_{n+1}) / (2n + 1)                 (spherical; j_0' = -j_1)
    erfcx' = 2 x erfcx(x) - 2/sqrt(pi)
    entr' = -(1 + log x)                                            (entr = -x log x)
    d/dq zeta(s, q) = -s zeta(s + 1, q)                             (s a constant)
    d^k/dx^k P_n: the k-th derivative of the polynomials' recurrence (Note [polynomial
    derivatives])

Note [polynomial derivatives]: every family is ``P_0 = 1``, ``P_1 = alpha t + beta`` and
``P_{j+1} = (a_j t + b_j) P_j - c_j P_{j-1}`` in ``t = x`` (``t = 2x - 1`` for the shifted
Chebyshev polynomials). Differentiating the recurrence ``m`` times (Leibniz) gives
``P_{j+1}^(m) = (a_j t + b_j) P_j^(m) + m a_j P_j^(m-1) - c_j P_{j-1}^(m)``, so one pass computes
the derivatives of orders ``0..k`` together; a shift multiplies the k-th by ``2^k``. The row's
attribute ``order`` is ``k``; its backward is the row at ``k + 1``. As in torch, the degree
``n`` (a tensor or a number, broadcast with ``x``) is truncated to an integer and a negative
(or nan) degree gives 0; ``n`` gets no gradient.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .. import dtypes
from .core import dispatch, upper
from .core.registry import def_composite

__all__ = ["write_result", "unary_row", "POLYNOMIALS", "polynomial", "spherical_jn", "ZETA",
           "K0", "K1", "K0E", "K1E", "AIRY_AI", "AIRY_AIP", "ERFCX", "ENTR"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def write_result(name: str, result, out):
    """``result``, or, with ``out`` given, ``result`` copied into the Tensor ``out`` (PyTorch's
    ``out=``: resized to the result's shape if needed, cast when NumPy's same-kind rule allows,
    no autograd) and ``out`` returned."""
    if out is None:
        return result
    if not isinstance(out, dispatch.Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    dispatch.write_out(name, out, result._data)
    return out


def _sp(name):
    import scipy.special

    return getattr(scipy.special, name)


def _ops():
    from . import binary, unary

    return unary, binary


def _row(name, node_name, forward, backward, save, attrs=()):
    """A row elementwise in ``x``: its jvp is the backward rule applied to the tangent (each
    derivative is a multiplier), and under vmap it runs on the batched tensor as it is (array
    attributes broadcast against the trailing dims)."""
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


def _float_operand(x, name):
    """``x`` as a float Tensor (integers and bools become the default float dtype)."""
    x = dispatch.tensor_operand(x, name)
    if x._data.dtype.kind != "f":
        if x._data.dtype.kind == "c":
            raise TypeError(f"{name}: complex input is not supported (got {x.dtype.name}); pass "
                            "a real tensor")
        x = dispatch.Tensor._make(np.asarray(x._data, dtype=dtypes.get_default_dtype().np))
    return x


def unary_row(op, x):
    """Apply one of the one-input rows here (``K0`` ... ``ENTR``) to ``x``."""
    return dispatch.composite(op, _float_operand(x, op.name))


def _scipy_fwd(name, output=None):
    def forward(ctx, x):
        y = _sp(name)(x)
        return np.asarray(y if output is None else y[output], dtype=x.dtype)
    return forward


# --- Bessel K, Airy, erfcx, entr -------------------------------------------------------------
def _k0_back(ctx, g, x):
    return (-(g * unary_row(K1, x)),)


def _k1_back(ctx, g, x):
    return (-(g * (unary_row(K0, x) + unary_row(K1, x) / x)),)


def _k0e_back(ctx, g, x):
    return (g * (unary_row(K0E, x) - unary_row(K1E, x)),)


def _k1e_back(ctx, g, x):
    return (g * (unary_row(K1E, x) * (1.0 - 1.0 / x) - unary_row(K0E, x)),)


def _airy_ai_back(ctx, g, x):
    return (g * unary_row(AIRY_AIP, x),)


def _airy_aip_back(ctx, g, x):
    return (g * (x * unary_row(AIRY_AI, x)),)


def _erfcx_back(ctx, g, x, result):
    return (g * (2.0 * x * result - _TWO_OVER_SQRT_PI),)


def _entr_back(ctx, g, x):
    unary, _ = _ops()
    return (-(g * (1.0 + unary.log(x))),)


K0 = _row("special_k0", "SpecialModifiedBesselK0Backward0", _scipy_fwd("k0"), _k0_back, ("x",))
K1 = _row("special_k1", "SpecialModifiedBesselK1Backward0", _scipy_fwd("k1"), _k1_back, ("x",))
K0E = _row("special_k0e", "SpecialScaledModifiedBesselK0Backward0", _scipy_fwd("k0e"),
           _k0e_back, ("x",))
K1E = _row("special_k1e", "SpecialScaledModifiedBesselK1Backward0", _scipy_fwd("k1e"),
           _k1e_back, ("x",))
AIRY_AI = _row("special_airy_ai", "SpecialAiryAiBackward0", _scipy_fwd("airy", 0),
               _airy_ai_back, ("x",))
AIRY_AIP = _row("special_airy_aip", "SpecialAiryAipBackward0", _scipy_fwd("airy", 1),
                _airy_aip_back, ("x",))
ERFCX = _row("special_erfcx", "SpecialErfcxBackward0", _scipy_fwd("erfcx"), _erfcx_back,
             ("x", "result"))
ENTR = _row("special_entr", "SpecialEntrBackward0", _scipy_fwd("entr"), _entr_back, ("x",))


# --- spherical Bessel functions of the first kind, integer order -----------------------------
def _spherical_fwd(ctx, x, order):
    return np.asarray(_sp("spherical_jn")(order, x), dtype=x.dtype)


def _spherical_back(ctx, g, x):
    n = ctx.order
    above = dispatch.composite(SPHERICAL_JN, x, order=n + 1)
    if n == 0:
        return (-(g * above),)
    below = dispatch.composite(SPHERICAL_JN, x, order=n - 1)
    return (g * ((n * below - (n + 1) * above) / (2 * n + 1)),)


SPHERICAL_JN = _row("special_spherical_jn", "SpecialSphericalBesselJBackward0", _spherical_fwd,
                    _spherical_back, ("x",), attrs=("order",))


def spherical_jn(x, order: int):
    """The spherical Bessel function ``j_order(x)`` (``j_0 = sin(x)/x``); derivative
    ``(n j_{n-1} - (n + 1) j_{n+1}) / (2n + 1)``."""
    return dispatch.composite(SPHERICAL_JN, _float_operand(x, "spherical_bessel_j0"),
                              order=int(order))


# --- Hurwitz zeta, differentiable in q ---------------------------------------------------------
def _zeta_fwd(ctx, x, params):
    return np.asarray(_sp("zeta")(params[0], x), dtype=x.dtype)


def _zeta_back(ctx, g, x):
    (s,) = ctx.params
    dt = x._data.dtype
    up = dispatch.composite(ZETA, x, params=(s + 1.0,))
    return (-(g * dispatch.Tensor._make(np.asarray(s, dtype=dt)) * up),)


#: ``zeta(s, q)`` with ``x`` = q and ``params`` = (s,) (``scipy_special.incomplete``'s form)
ZETA = _row("special_zeta", "SpecialZetaBackward0", _zeta_fwd, _zeta_back, ("x",),
            attrs=("params",))


# --- orthogonal polynomials (Note [polynomial derivatives]) ----------------------------------
#: family -> (alpha, beta of P_1, coefficients (a_j, b_j, c_j) of step j, shifted)
_FAMILIES = {
    "chebyshev_t": (1.0, 0.0, lambda j: (2.0, 0.0, 1.0), False),
    "chebyshev_u": (2.0, 0.0, lambda j: (2.0, 0.0, 1.0), False),
    "chebyshev_v": (2.0, -1.0, lambda j: (2.0, 0.0, 1.0), False),
    "chebyshev_w": (2.0, 1.0, lambda j: (2.0, 0.0, 1.0), False),
    "hermite_h": (2.0, 0.0, lambda j: (2.0, 0.0, 2.0 * j), False),
    "hermite_he": (1.0, 0.0, lambda j: (1.0, 0.0, float(j)), False),
    "laguerre_l": (-1.0, 1.0, lambda j: (-1.0 / (j + 1), (2 * j + 1) / (j + 1), j / (j + 1)),
                   False),
    "legendre_p": (1.0, 0.0, lambda j: ((2 * j + 1) / (j + 1), 0.0, j / (j + 1)), False),
}
for _kind in "tuvw":
    _alpha, _beta, _coef, _ = _FAMILIES[f"chebyshev_{_kind}"]
    _FAMILIES[f"shifted_chebyshev_{_kind}"] = (_alpha, _beta, _coef, True)
POLYNOMIALS = tuple(_FAMILIES)


def _polynomial_fwd(ctx, x, kind, n, order):
    alpha, beta, coef, shifted = _FAMILIES[kind]
    with np.errstate(all="ignore"):
        t = 2.0 * x - 1.0 if shifted else x
        prev = [np.ones_like(t)] + [np.zeros_like(t)] * order  # P_0 and its derivatives
        cur = [alpha * t + beta] + [np.full_like(t, alpha)] + [np.zeros_like(t)] * (order - 1)
        cur = cur[:order + 1]
        out = np.where(n == 0, prev[order], 0.0)
        out = np.where(n == 1, cur[order], out)
        for j in range(1, int(n.max(initial=0))):
            a, b, c = coef(j)
            step = a * t + b
            nxt = [step * cur[0] - c * prev[0]]
            nxt += [step * cur[m] + m * a * cur[m - 1] - c * prev[m] for m in range(1, order + 1)]
            prev, cur = cur, nxt
            out = np.where(n == j + 1, cur[order], out)
        if shifted and order:
            out = out * 2.0 ** order
    return np.asarray(out, dtype=x.dtype)


def _polynomial_back(ctx, g, x):
    return (g * dispatch.composite(POLYNOMIAL, x, kind=ctx.kind, n=ctx.n, order=ctx.order + 1),)


POLYNOMIAL = _row("special_orthogonal_polynomial", "SpecialOrthogonalPolynomialBackward0",
                  _polynomial_fwd, _polynomial_back, ("x",), attrs=("kind", "n", "order"))


def _degree(n, name) -> np.ndarray:
    """``n`` as int64 degrees: truncated, negative where it is negative or not finite."""
    if isinstance(n, dispatch.Tensor):
        if n.requires_grad:
            raise NotImplementedError(f"{name}: the derivative with respect to the degree n is "
                                      "not defined; pass n without requires_grad (or detach it)")
        upper.host_read(n, f"{name}'s degree n")
        n = n._data
    n = np.asarray(n, dtype=np.float64)
    return np.where(np.isfinite(n), np.trunc(n), -1.0).astype(np.int64)


def polynomial(kind, x, n, name):
    """The orthogonal polynomial ``kind`` (``POLYNOMIALS``) of degree ``n`` at ``x``, broadcast
    together; differentiable in ``x`` (Note [polynomial derivatives])."""
    x = _float_operand(x, name)
    degrees = _degree(n, name)
    shape = np.broadcast_shapes(x.shape, degrees.shape)
    if tuple(x.shape) != shape:
        x = dispatch.Tensor.expand(x, shape)
    degrees = np.broadcast_to(degrees, shape)
    return dispatch.composite(POLYNOMIAL, x, kind=kind, n=degrees, order=0)
