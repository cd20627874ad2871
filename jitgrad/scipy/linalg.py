"""``jitgrad.scipy.linalg``: ``solve_triangular cho_factor cho_solve cholesky expm expm_frechet
sqrtm solve_sylvester solve_continuous_lyapunov inv det solve``, differentiable (built on
``jitgrad.ops.nplinalg`` and ``jitgrad.ops.scipy_linalg``)."""
from __future__ import annotations

import numpy as _np

from ..ops import nplinalg as _nplinalg_ops
from ..ops import scipy_linalg as _scipy_linalg_ops
from ..ops.core import upper as _upper
from ..ops.shape import cat as _cat, squeeze as _squeeze, transpose as _transpose
from ..ops.shape import unsqueeze as _unsqueeze
from ..tensor import Tensor

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "cholesky", "expm", "inv", "det",
           "solve", "expm_frechet", "sqrtm", "solve_sylvester", "solve_continuous_lyapunov"]


@_upper.constant_maker
def _as_tensor(x):
    """A constant float Tensor of the Tensor-free data ``x``."""
    x = _np.asarray(x)
    return Tensor._make(_np.asarray(x, dtype=_np.result_type(x, 0.0)))


@_upper.constant_maker
def _const(array, like):
    """A constant Tensor of ``array`` (a mask or an identity computed from shapes only), on
    ``like``'s device."""
    t = Tensor._make(array)
    return t.to(like.device) if like.is_cuda else t


def _t(x):
    return x if isinstance(x, Tensor) else _as_tensor(x)


def _vector_solve(solve, b):
    """``solve(B)`` with a 1-d ``b`` (``n``) taken as one column, as SciPy (the result ``(..., n)``
    for every matrix of a stack, as ``numpy.linalg.solve``)."""
    if b.ndim == 1:
        return _squeeze(solve(_unsqueeze(b, -1)), -1)
    return solve(b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    """Solve ``op(A) x = b`` reading only ``A``'s lower (``lower=True``) or upper triangle;
    ``op`` is the identity (``trans=0``/``'N'``) or the transpose (``1``/``'T'``). BLAS
    ``trsm`` (``jitgrad.ops.scipy_linalg.solve_triangular``); the gradient reaches only that
    triangle."""
    a, b = _t(a), _t(b)
    if trans in (1, "T", 2, "C"):  # op(T) = T^T: the other triangle of A^T
        a, upper = _transpose(a, -1, -2), lower
    elif trans in (0, "N"):
        upper = not lower
    else:
        raise ValueError(f"solve_triangular: invalid trans {trans!r}")
    return _vector_solve(lambda m: _scipy_linalg_ops.solve_triangular(a, m, upper, unit_diagonal),
                         b)


def cholesky(a, lower=False):
    """Cholesky factor: upper ``U`` (``A = U^T U``, SciPy's default) or lower ``L``."""
    L = _nplinalg_ops.cholesky(_t(a))
    return L if lower else _transpose(L, -1, -2)


def cho_factor(a, lower=False):
    """``(c, lower)`` for ``cho_solve``; ``c`` is the triangular factor (zeros elsewhere)."""
    return cholesky(a, lower), lower


def cho_solve(c_and_lower, b):
    """Solve ``A x = b`` given ``cho_factor(A)``."""
    c, lower = c_and_lower
    c = _t(c)
    ct = _transpose(c, -1, -2)
    L, U = (c, ct) if lower else (ct, c)  # A = L L^T, L = U^T: two triangular solves

    def solve(m):
        st = _scipy_linalg_ops.solve_triangular
        return st(U, st(L, m, upper=False), upper=True)

    return _vector_solve(solve, _t(b))


def inv(a):
    """Matrix inverse."""
    return _nplinalg_ops.inv(_t(a))


def det(a):
    """Determinant."""
    return _nplinalg_ops.det(_t(a))


def solve(a, b):
    """``A^-1 b``."""
    return _nplinalg_ops.solve(_t(a), _t(b))


def expm(A):
    """Matrix exponential (``scipy.linalg.expm``: scaling and squaring with Pade approximants),
    batched over leading dims; differentiable to every order through the Frechet derivative
    (``jitgrad.ops.scipy_linalg.matrix_exp``)."""
    return _scipy_linalg_ops.matrix_exp(_t(A))


def expm_frechet(A, E, method=None, compute_expm=True):
    """The Frechet derivative ``L(A, E) = d/dh expm(A + h E)`` at ``h = 0``, by the
    block-triangular identity ``expm([[A, E], [0, A]]) = [[expm(A), L], [0, expm(A)]]``;
    returns ``(expm(A), L)`` (``L`` alone with ``compute_expm=False``), differentiable in
    ``A`` and ``E``. ``method`` is accepted for SciPy compatibility."""
    A, E = _t(A), _t(E)
    n = A.shape[-1]
    zeros = _const(_np.zeros((n, n), dtype=A.dtype.np), A)
    big = expm(_cat([_cat([A, E], 1), _cat([zeros, A], 1)], 0))
    L = big[:n, n:]
    return (big[:n, :n], L) if compute_expm else L


def sqrtm(A, disp=True, blocksize=64):
    """Principal matrix square root ``X`` (``X X = A``) of a real matrix with a real root
    (``scipy.linalg.sqrtm``); the gradient solves the Sylvester equation
    ``X^T M + M X^T = dL/dX`` (``M = dL/dA``). A complex root raises ``ValueError``."""
    return _scipy_linalg_ops.sqrtm(_t(A))


def solve_sylvester(a, b, q):
    """``X`` with ``A X + X B = Q`` (``scipy.linalg.solve_sylvester``); gradients
    ``dL/dQ = Y``, ``dL/dA = -Y X^T``, ``dL/dB = -X^T Y`` with ``A^T Y + Y B^T = dL/dX``."""
    return _scipy_linalg_ops.sylvester(_t(a), _t(b), _t(q))


def solve_continuous_lyapunov(a, q):
    """``X`` with ``A X + X A^H = Q`` (``scipy.linalg.solve_continuous_lyapunov``): a Sylvester
    equation with ``B = A^T`` (real ``A``)."""
    a = _t(a)
    return _scipy_linalg_ops.sylvester(a, _transpose(a, -1, -2), _t(q))
