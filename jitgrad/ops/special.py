"""Elementwise rows of the gamma family: ``gammaln``, ``digamma`` and ``polygamma(n, x)``
(``jitgrad.scipy.special``).

Ordinary elementwise rows (``registry.def_elementwise``): the scalar math is
``kernels/special_scalar.py``'s, reached through ``ops.smath`` (compiled with njit for the CPU
kernels and with cuda.jit for CUDA: Note [gamma family scalars]), so each row gets the CPU
kernels, CUDA, fused backward, ``create_graph``, jvp and vmap from the one mechanism. Each
derivative is the next function of the family::

    d/dx gammaln(x) = digamma(x)
    d/dx digamma(x) = polygamma(1, x)
    d/dx polygamma(n, x) = polygamma(n + 1, x)

so derivatives of every order work (``polygamma``'s order ``n`` is a row attribute).

Result dtypes are SciPy's as jitgrad gave them so far: ``gammaln``/``digamma`` keep float32 and
give float64 for every other real dtype; ``polygamma`` is float64 always (SciPy's polygamma
goes through a float64 zeta). The math is float64 inside (SciPy's float32 loops compute in
float64 too); float32 results are rounded from it.
"""
from __future__ import annotations

from .. import dtypes
from .core import dispatch
from .core import smath
from .core.registry import def_elementwise, public


def _dtype_rule(keeps_float32):
    """A row's dtype rule: float64, or float32 for float32 operands when ``keeps_float32``;
    complex dtypes are returned as they are, for the row's complex check to reject."""
    def rule(dt):
        if dt.is_complex or (keeps_float32 and dt == dtypes.float32):
            return dt
        return dtypes.float64
    return rule


def _gammaln(x):
    return smath.gammaln(x)


def _gammaln_dx(g, x):
    return g * smath.digamma(x)


def _digamma(x):
    return smath.digamma(x)


def _digamma_dx(g, x):
    return g * smath.polygamma(1, x)


def _polygamma(x, n):
    return smath.polygamma(n, x)


def _polygamma_dx(g, x, n):
    return g * smath.polygamma(n + 1, x)


GAMMALN = def_elementwise("gammaln", "LgammaBackward0", ("x",), _gammaln, {"x": _gammaln_dx},
                          dtype_rule=_dtype_rule(True))
DIGAMMA = def_elementwise("digamma", "DigammaBackward0", ("x",), _digamma, {"x": _digamma_dx},
                          dtype_rule=_dtype_rule(True))
POLYGAMMA = def_elementwise("polygamma", "PolygammaBackward0", ("x",), _polygamma,
                            {"x": _polygamma_dx}, attrs=("n",), dtype_rule=_dtype_rule(False))


@public(GAMMALN)
def gammaln(x):
    """``log|Gamma(x)|`` (+inf at the poles, the non-positive integers); derivative
    ``digamma(x)``."""
    return dispatch.elementwise(GAMMALN, dispatch.tensor_operand(x, "gammaln"))


@public(DIGAMMA)
def digamma(x):
    """``psi(x) = d/dx log Gamma(x)`` (nan at the negative integers, -+inf at +-0); derivative
    ``polygamma(1, x)``."""
    return dispatch.elementwise(DIGAMMA, dispatch.tensor_operand(x, "digamma"))


@public(POLYGAMMA)
def polygamma(n, x):
    """``psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x)``, the n-th derivative of digamma
    (``n == 0``: ``digamma``); derivative ``polygamma(n + 1, x)``."""
    n = int(n)
    if n == 0:
        return digamma(x)
    return dispatch.elementwise(POLYGAMMA, dispatch.tensor_operand(x, "polygamma"), n=n)
