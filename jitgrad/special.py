"""``jitgrad.special``: torch.special's functions, with torch's names and arguments (``input``,
``other``, ``n``, ``dim``, ``out=``), differentiable in ``input`` (float64 default).

Most are the functions of ``jitgrad.scipy.special`` and of the top-level namespace under
torch's names; the Bessel K and Airy functions, ``erfcx``, ``entr``, ``zeta``,
``spherical_bessel_j0`` and the orthogonal polynomials are rows of
``jitgrad/ops/special_torch.py`` (derivatives of every order; PyTorch gives none for the
polynomials, jitgrad gives the derivative in ``input``, none in the degree ``n``). Integer
inputs are computed in the default float dtype. ``out=`` writes the result into a Tensor
without autograd.
"""
from __future__ import annotations

from . import dtypes as _dtypes
from .ops import creation as _creation
from .ops import elementwise_np as _elementwise_np
from .ops import nn as _nn_ops
from .ops import npfuncs as _npfuncs
from .ops import reduce as _reduce_ops
from .ops import scipy_special as _scipy_rows
from .ops import special_torch as _rows
from .ops import unary as _unary_ops
from .scipy import special as _sps
from .tensor import Tensor

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta"]


def _float(x):
    """``x`` as a float (or complex) Tensor: integers and bools in the default float dtype."""
    x = x if isinstance(x, Tensor) else _creation.as_tensor(x)
    if x.is_floating_point() or x.is_complex():
        return x
    return x.to(_dtypes.get_default_dtype())


def _unary(name, impl, doc):
    """The torch.special function ``name(input, *, out=None)`` computing ``impl(float input)``."""
    def fn(input, *, out=None):
        return _rows.write_result(f"special_{name}", impl(_float(input)), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary(name, impl, doc):
    """The torch.special function ``name(input, other, *, out=None)``."""
    def fn(input, other, *, out=None):
        return _rows.write_result(f"special_{name}", impl(_float(input), _float(other)), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _polynomial(name, kind, doc):
    """The torch.special polynomial ``name(input, n, *, out=None)`` of family ``kind``."""
    def fn(input, n, *, out=None):
        return _rows.write_result(f"special_{name}", _rows.polynomial(kind, input, n, name), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + """

    ``n`` (a tensor or a number, broadcast with ``input``) is truncated to an integer; a
    negative degree gives 0. Derivative in ``input``: the polynomial's derivative (the
    differentiated recurrence); none in ``n``."""
    return fn


# --- the error function family and the normal distribution -----------------------------------
erf = _unary("erf", _unary_ops.erf, """``erf(x) = 2/sqrt(pi) int_0^x exp(-t^2) dt``;
derivative ``2/sqrt(pi) exp(-x^2)``.""")
erfc = _unary("erfc", _sps.erfc, """``erfc(x) = 1 - erf(x)``, accurate where ``erf`` rounds to
1; derivative ``-2/sqrt(pi) exp(-x^2)``.""")
erfcx = _unary("erfcx", lambda x: _rows.unary_row(_rows.ERFCX, x), """Scaled complementary
error function ``exp(x^2) erfc(x)``; derivative ``2 x erfcx(x) - 2/sqrt(pi)``.""")
erfinv = _unary("erfinv", _sps.erfinv, """Inverse of ``erf`` on ``(-1, 1)``; derivative
``sqrt(pi)/2 exp(erfinv(x)^2)``.""")
ndtr = _unary("ndtr", _sps.ndtr, """Standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``;
derivative ``exp(-x^2/2) / sqrt(2 pi)``.""")
log_ndtr = _unary("log_ndtr", _sps.log_ndtr, """``log(ndtr(x))``, accurate in the left tail;
derivative ``exp(-x^2/2) / sqrt(2 pi) / ndtr(x)``.""")
ndtri = _unary("ndtri", _sps.ndtri, """Inverse of ``ndtr`` (the standard normal quantile);
derivative ``sqrt(2 pi) exp(ndtri(p)^2 / 2)``.""")

# --- exponentials, logarithms, logistic --------------------------------------------------------
exp2 = _unary("exp2", lambda x: _elementwise_np.unary("exp2", x), """``2^x``; derivative ``log(2) 2^x``.""")
expm1 = _unary("expm1", _unary_ops.expm1, """``exp(x) - 1``, accurate near 0; derivative
``exp(x)``.""")
log1p = _unary("log1p", _unary_ops.log1p, """``log(1 + x)``, accurate near 0; derivative
``1 / (1 + x)``.""")
expit = _unary("expit", _unary_ops.sigmoid, """Logistic sigmoid ``1 / (1 + exp(-x))``;
derivative ``s (1 - s)``.""")
entr = _unary("entr", lambda x: _rows.unary_row(_rows.ENTR, x), """Elementwise entropy
``-x log(x)`` (0 at 0, ``-inf`` for ``x < 0``); derivative ``-(1 + log x)``.""")
sinc = _unary("sinc", lambda x: _elementwise_np.unary("sinc", x), """Normalised sinc ``sin(pi x) / (pi x)`` (1 at
0); derivative ``(cos(pi x) - sinc(x)) / x`` (0 at 0).""")


def logit(input, eps=None, *, out=None):
    """``log(p / (1 - p))`` of ``p`` = ``input`` clamped to ``[eps, 1 - eps]`` when ``eps`` is
    given; derivative ``1 / (p (1 - p))`` (0 outside the clamp)."""
    return _rows.write_result("special_logit", _unary_ops.logit(_float(input), eps), out)


def xlogy(input, other, *, out=None):
    """``x log(y)``, 0 where ``x == 0`` (unless ``y`` is nan); derivatives ``log y`` and
    ``x / y``. Either argument may be a number."""
    return _rows.write_result("special_xlogy", _sps.xlogy(_float(input), _float(other)), out)


def xlog1py(input, other, *, out=None):
    """``x log(1 + y)``, 0 where ``x == 0`` (unless ``y`` is nan); derivatives ``log1p y`` and
    ``x / (1 + y)``."""
    return _rows.write_result("special_xlog1py", _sps.xlog1py(_float(input), _float(other)),
                              out)


def round(input, *, decimals=0, out=None):  # noqa: A001 - torch's name
    """Round half to even to ``decimals`` decimal places; derivative 0."""
    x = input if isinstance(input, Tensor) else _creation.as_tensor(input)
    result = (_elementwise_np.unary("rint", x) if decimals == 0
              else _npfuncs.round_(x, decimals))
    return _rows.write_result("special_round", result, out)


# --- softmax and logsumexp --------------------------------------------------------------------
def softmax(input, dim, *, dtype=None):
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim`` (computed stably; ``dtype`` casts first);
    derivative ``y (g - sum_j g_j y_j)``."""
    return _nn_ops.softmax(_float(input), dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """``x_i - log sum_j exp(x_j)`` along ``dim`` (stable; ``dtype`` casts first); derivative
    ``g - exp(y) sum_j g_j``."""
    return _nn_ops.log_softmax(_float(input), dim, dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log sum_i exp(x_i)`` over ``dim`` (an int or a tuple), stabilised by the maximum;
    derivative the softmax weights ``exp(x - result)``."""
    return _rows.write_result("special_logsumexp",
                              _reduce_ops.logsumexp(_float(input), dim, keepdim), out)


# --- the gamma family -------------------------------------------------------------------------
gammaln = _unary("gammaln", _sps.gammaln, """``log |Gamma(x)|``; derivative ``digamma(x)``.""")
digamma = _unary("digamma", _sps.digamma, """``psi(x) = d/dx log Gamma(x)``; derivative
``polygamma(1, x)``.""")
psi = _unary("psi", _sps.digamma, """Alias of ``digamma``: ``d/dx log Gamma(x)``; derivative
``polygamma(1, x)``.""")


def polygamma(n, input, *, out=None):
    """``psi^(n)(x)``, the ``n``-th derivative of ``digamma`` (``n = 0``: ``digamma``);
    derivative ``polygamma(n + 1, x)``."""
    return _rows.write_result("special_polygamma", _sps.polygamma(n, _float(input)), out)


def multigammaln(input, p, *, out=None):
    """Multivariate log-gamma ``p(p-1)/4 log(pi) + sum_{j=1..p} gammaln(a + (1 - j)/2)`` (every
    element ``> (p - 1)/2``); derivative ``sum_j digamma(a + (1 - j)/2)``."""
    return _rows.write_result("special_multigammaln", _sps.multigammaln(_float(input), p), out)


gammainc = _binary("gammainc", _sps.gammainc, """Regularized lower incomplete gamma
``P(a, x) = 1/Gamma(a) int_0^x t^(a-1) e^-t dt`` of ``a`` = ``input``, ``x`` = ``other``;
derivative in ``x``: ``x^(a-1) e^-x / Gamma(a)`` (none in ``a``, as torch).""")
gammaincc = _binary("gammaincc", _sps.gammaincc, """Regularized upper incomplete gamma
``Q(a, x) = 1 - P(a, x)`` of ``a`` = ``input``, ``x`` = ``other``; derivative in ``x``:
``-x^(a-1) e^-x / Gamma(a)`` (none in ``a``).""")


def zeta(input, other, *, out=None):
    """Hurwitz zeta ``zeta(s, q) = sum_{k>=0} (k + q)^-s`` of ``s`` = ``input``, ``q`` =
    ``other``; derivative in ``q``: ``-s zeta(s + 1, q)`` (none in ``s``, as torch: ``s``
    must not require grad)."""
    result = _scipy_rows.incomplete(_rows.ZETA, "zeta", _float(other), s=_float(input))
    return _rows.write_result("special_zeta", result, out)


# --- Bessel and Airy functions ----------------------------------------------------------------
bessel_j0 = _unary("bessel_j0", _sps.j0, """Bessel function of the first kind of order 0,
``J_0``; derivative ``-J_1(x)``.""")
bessel_j1 = _unary("bessel_j1", _sps.j1, """Bessel function of the first kind of order 1,
``J_1``; derivative ``(J_0(x) - J_2(x)) / 2``.""")
bessel_y0 = _unary("bessel_y0", _sps.y0, """Bessel function of the second kind of order 0,
``Y_0`` (``x > 0``); derivative ``-Y_1(x)``.""")
bessel_y1 = _unary("bessel_y1", _sps.y1, """Bessel function of the second kind of order 1,
``Y_1`` (``x > 0``); derivative ``(Y_0(x) - Y_2(x)) / 2``.""")
i0 = _unary("i0", _sps.i0, """Modified Bessel function of the first kind of order 0, ``I_0``;
derivative ``I_1(x)``.""")
i1 = _unary("i1", _sps.i1, """Modified Bessel function of the first kind of order 1, ``I_1``;
derivative ``I_0(x) - I_1(x)/x`` (1/2 at 0).""")
i0e = _unary("i0e", _sps.i0e, """Exponentially scaled ``exp(-|x|) I_0(x)``; derivative
``i1e(x) - sign(x) i0e(x)``.""")
i1e = _unary("i1e", _sps.i1e, """Exponentially scaled ``exp(-|x|) I_1(x)``; derivative
``i0e(x) - i1e(x) (sign(x) + 1/x)`` (1/2 at 0).""")
modified_bessel_i0 = _unary("modified_bessel_i0", _sps.i0, """Modified Bessel function of the
first kind of order 0, ``I_0`` (as ``i0``); derivative ``I_1(x)``.""")
modified_bessel_i1 = _unary("modified_bessel_i1", _sps.i1, """Modified Bessel function of the
first kind of order 1, ``I_1`` (as ``i1``); derivative ``I_0(x) - I_1(x)/x``.""")
modified_bessel_k0 = _unary("modified_bessel_k0", lambda x: _rows.unary_row(_rows.K0, x),
                            """Modified Bessel function of the second kind of order 0, ``K_0``
(``x > 0``); derivative ``-K_1(x)``.""")
modified_bessel_k1 = _unary("modified_bessel_k1", lambda x: _rows.unary_row(_rows.K1, x),
                            """Modified Bessel function of the second kind of order 1, ``K_1``
(``x > 0``); derivative ``-K_0(x) - K_1(x)/x``.""")
scaled_modified_bessel_k0 = _unary(
    "scaled_modified_bessel_k0", lambda x: _rows.unary_row(_rows.K0E, x),
    """Exponentially scaled ``exp(x) K_0(x)``; derivative ``k0e(x) - k1e(x)``.""")
scaled_modified_bessel_k1 = _unary(
    "scaled_modified_bessel_k1", lambda x: _rows.unary_row(_rows.K1E, x),
    """Exponentially scaled ``exp(x) K_1(x)``; derivative ``k1e(x) (1 - 1/x) - k0e(x)``.""")
spherical_bessel_j0 = _unary("spherical_bessel_j0", lambda x: _rows.spherical_jn(x, 0),
                             """Spherical Bessel function of the first kind of order 0,
``j_0(x) = sin(x) / x`` (1 at 0); derivative ``-j_1(x)``.""")
airy_ai = _unary("airy_ai", lambda x: _rows.unary_row(_rows.AIRY_AI, x), """Airy function
``Ai(x)``, the solution of ``y'' = x y`` decaying as ``x -> inf``; derivative ``Ai'(x)`` (whose
derivative is ``x Ai(x)``).""")

# --- orthogonal polynomials -------------------------------------------------------------------
chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "chebyshev_t", """Chebyshev
polynomial of the first kind: ``T_0 = 1``, ``T_1 = x``, ``T_{k+1} = 2x T_k - T_{k-1}``
(``T_n(cos t) = cos(n t)``).""")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "chebyshev_u", """Chebyshev
polynomial of the second kind: ``U_0 = 1``, ``U_1 = 2x``, ``U_{k+1} = 2x U_k - U_{k-1}``.""")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "chebyshev_v", """Chebyshev
polynomial of the third kind: ``V_0 = 1``, ``V_1 = 2x - 1``, ``V_{k+1} = 2x V_k - V_{k-1}``.""")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "chebyshev_w", """Chebyshev
polynomial of the fourth kind: ``W_0 = 1``, ``W_1 = 2x + 1``, ``W_{k+1} = 2x W_k - W_{k-1}``.""")
shifted_chebyshev_polynomial_t = _polynomial(
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_t",
    """Shifted Chebyshev polynomial of the first kind ``T*_n(x) = T_n(2x - 1)`` (on [0, 1]).""")
shifted_chebyshev_polynomial_u = _polynomial(
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_u",
    """Shifted Chebyshev polynomial of the second kind ``U*_n(x) = U_n(2x - 1)``.""")
shifted_chebyshev_polynomial_v = _polynomial(
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_v",
    """Shifted Chebyshev polynomial of the third kind ``V*_n(x) = V_n(2x - 1)``.""")
shifted_chebyshev_polynomial_w = _polynomial(
    "shifted_chebyshev_polynomial_w", "shifted_chebyshev_w",
    """Shifted Chebyshev polynomial of the fourth kind ``W*_n(x) = W_n(2x - 1)``.""")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "hermite_h", """Physicists' Hermite
polynomial: ``H_0 = 1``, ``H_1 = 2x``, ``H_{k+1} = 2x H_k - 2k H_{k-1}``.""")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "hermite_he", """Probabilists'
Hermite polynomial: ``He_0 = 1``, ``He_1 = x``, ``He_{k+1} = x He_k - k He_{k-1}``.""")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "laguerre_l", """Laguerre
polynomial: ``L_0 = 1``, ``L_1 = 1 - x``, ``(k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}``.""")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "legendre_p", """Legendre
polynomial: ``P_0 = 1``, ``P_1 = x``, ``(k+1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}``.""")
