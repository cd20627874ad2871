"""Triangular and LU solves and the ``*_ex`` variants of ``jitgrad.linalg`` (``torch.linalg``'s
signatures and ``torch.return_types`` field names)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..ops import nplinalg, scipy_linalg, shape
from ..ops.core import dispatch
from ..ops.linalg import matmul
from ..tensor import Tensor
from ._basic import cholesky, inv, solve
from ._out import with_out

__all__ = ["LinAlgError", "solve_triangular", "lu_factor", "lu_factor_ex", "lu", "lu_solve",
           "inv_ex", "cholesky_ex", "solve_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve"]

#: the error of singular / non positive definite inputs (``torch.linalg.LinAlgError``): NumPy's,
#: so that it also catches the errors of the NumPy-backed forwards
LinAlgError = np.linalg.LinAlgError

lu_factor_result = namedtuple("linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex_result = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_result = namedtuple("linalg_lu", ["P", "L", "U"])
inv_ex_result = namedtuple("linalg_inv_ex", ["inverse", "info"])
cholesky_ex_result = namedtuple("linalg_cholesky_ex", ["L", "info"])
solve_ex_result = namedtuple("linalg_solve_ex", ["result", "info"])
ldl_factor_result = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
ldl_factor_ex_result = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _t(x, op):
    return dispatch.tensor_operand(x, f"linalg.{op}")


def _mT(x):
    return shape.transpose(x, -2, -1)


def _square(op, A):
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim > 1 else A.numel()} by "
                           f"{A.shape[-1] if A.ndim else 1} matrices (shape {tuple(A.shape)})")


def _info_tensor(info):
    return Tensor._make(np.asarray(info, np.int32))


def _raise_info(op, info, what):
    """PyTorch's ``check_errors`` message for the first failing batch element."""
    info = info.numpy() if isinstance(info, Tensor) else info
    bad = np.flatnonzero(np.asarray(info).reshape(-1))
    if bad.size:
        k = int(np.asarray(info).reshape(-1)[bad[0]])
        where = f"(Batch element {bad[0]}): " if np.ndim(info) else ""
        raise LinAlgError(f"linalg.{op}: {where}{what.format(k=k)}")


_SINGULAR = ("The diagonal element {k} is zero, the inversion could not be completed because "
             "the input matrix is singular.")


@with_out
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """``X`` with ``T X = B`` (``left=False``: ``X T = B``), ``T`` the upper (``upper=True``) or
    lower triangle of ``A`` (its diagonal taken as ones when ``unitriangular``); batched over
    ``(..., n, n)`` and ``(..., n, k)``. Gradients ``gB = T^-H g`` and
    ``gA = -gB X^H`` restricted to the triangle that is read (of every order)."""
    A, B = _t(A, "solve_triangular"), _t(B, "solve_triangular")
    _square("solve_triangular", A)
    if B.ndim < 2:
        raise RuntimeError(f"linalg.solve_triangular: The input tensor B must have at least 2 "
                           f"dimensions, got shape {tuple(B.shape)}")
    return scipy_linalg.solve_triangular(A, B, upper, unitriangular, left)


def _lu_checked(op, A, pivot):
    A = _t(A, op)
    if not pivot:
        raise RuntimeError(f"linalg.{op}: LU without pivoting is not implemented on the CPU")
    _square(op, A)
    return A


@with_out
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``(LU, pivots, info)``: the LU factorization with partial pivoting ``A = P L U`` of
    square matrices (LAPACK ``getrf``): ``LU`` packs the unit lower ``L`` (below the diagonal)
    and ``U``; ``pivots`` are the 1-based int32 row swaps; ``info[k] > 0`` marks an exactly
    singular ``U`` (raised when ``check_errors``). ``LU`` is differentiable:
    with ``X = L^-1 P^T dA U^-1``, ``dL = L tril_-1(X)`` and ``dU = triu(X) U``."""
    A = _lu_checked("lu_factor_ex", A, pivot)
    lu_, piv, info = scipy_linalg.lu_factor(A)
    if check_errors:
        _raise_info("lu_factor_ex", info, "The factorization could not be completed because "
                    "the input is not invertible (U[{k},{k}] is zero).")
    return lu_factor_ex_result(lu_, piv, info)


@with_out
def lu_factor(A, *, pivot=True):
    """``(LU, pivots)`` of ``lu_factor_ex``; a singular ``A`` raises (``U[k, k]`` zero: use
    ``lu_factor_ex`` or ``lu`` to factor it anyway)."""
    lu_, piv, info = lu_factor_ex(A, pivot=pivot)
    msg = ("linalg.lu_factor: U[{k},{k}] is zero and using it on lu_solve would result in a "
           "division by zero. If you still want to perform the factorization, consider calling "
           "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    if dispatch.transform_hook is not None:  # vmap, a compile trace: the check as a row
        return lu_factor_result(nplinalg.checked(lu_, info, msg, linalg_error=True), piv)
    bad = info.numpy().reshape(-1)
    if bad.any():
        k = int(bad[bad > 0][0])
        raise LinAlgError(msg.format(k=k))
    return lu_factor_result(lu_, piv)


def _permutation(pivots, n, like):
    """The permutation matrices ``P`` of ``pivots``, in ``like``'s dtype (no derivative; a row,
    so a compiled program computes it from each call's pivots)."""
    return scipy_linalg.permutation(pivots, n, like)


@with_out
def lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U``: ``P`` a permutation, ``L`` unit lower and ``U`` upper
    triangular (square ``A``); ``L`` and ``U`` are differentiable (through ``lu_factor_ex``)."""
    lu_, piv, _ = lu_factor_ex(A, pivot=pivot)
    return lu_result(_permutation(piv, lu_.shape[-1], lu_),
                     scipy_linalg.triangle(lu_, False, unitriangular=True),
                     scipy_linalg.triangle(lu_, True))


@with_out
def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """``X`` with ``A X = B`` given ``(LU, pivots) = lu_factor(A)`` (``adjoint``: ``A^H X = B``;
    ``left=False``: ``X A = B`` / ``X A^H = B``): ``X = U^-1 L^-1 P^T B``. Differentiable in
    ``LU`` (its triangles) and ``B``."""
    LU, B = _t(LU, "lu_solve"), _t(B, "lu_solve")
    pivots = _t(pivots, "lu_solve")
    _square("lu_solve", LU)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _mT(lu_solve(LU, pivots, _mT(B), adjoint=not adjoint))
    P = _permutation(pivots, LU.shape[-1], LU)
    if adjoint:  # A^T = U^T L^T P^T:  X = P L^-T U^-T B
        y = scipy_linalg.solve_triangular(_mT(LU), B, False)
        y = scipy_linalg.solve_triangular(_mT(LU), y, True, unitriangular=True)
        return matmul(P, y)
    y = scipy_linalg.solve_triangular(LU, matmul(_mT(P), B), False, unitriangular=True)
    return scipy_linalg.solve_triangular(LU, y, True)


def _inverse_or_nan(A, info):
    """``inv(A)`` where every matrix is invertible (differentiable); otherwise NaN for the
    singular matrices and their inverses elsewhere (not differentiable)."""
    if not np.asarray(info).any():
        return inv(A)
    a = A.detach().numpy()
    out = np.full_like(a, np.nan)
    ok = np.asarray(info) == 0
    out[ok] = np.linalg.inv(a[ok])
    return Tensor._make(out)


@with_out
def inv_ex(A, *, check_errors=False):
    """``(inverse, info)``: the inverse of square matrices with LAPACK's ``info`` (``k > 0``:
    singular, ``U[k-1, k-1] == 0``; its inverse is NaN here). ``check_errors`` raises instead.
    Gradient as ``inv``: ``gA = -B^H g B^H``."""
    A = _t(A, "inv_ex")
    _square("inv_ex", A)
    info = scipy_linalg.getrf(A.detach().numpy())[2]
    if check_errors:
        _raise_info("inv_ex", info, _SINGULAR)
    return inv_ex_result(_inverse_or_nan(A, info), _info_tensor(info))


@with_out
def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: the Cholesky factor (``upper``: ``L^H``) with LAPACK's ``info``
    (``k > 0``: the leading minor of order ``k`` is not positive definite; ``L`` is then NaN
    for that matrix). Gradient as ``cholesky``."""
    A = _t(A, "cholesky_ex")
    _square("cholesky_ex", A)
    info = scipy_linalg.potrf_info(A.detach().numpy())
    if check_errors:
        _raise_info("cholesky_ex", info, "The factorization could not be completed because the "
                    "input is not positive-definite (the leading minor of order {k} is not "
                    "positive-definite).")
    if not info.any():
        return cholesky_ex_result(cholesky(A, upper=upper), _info_tensor(info))
    a = A.detach().numpy()
    out = np.full_like(a, np.nan)
    ok = info == 0
    out[ok] = np.linalg.cholesky(a[ok])
    out = np.swapaxes(out, -1, -2).copy() if upper else out
    return cholesky_ex_result(Tensor._make(out), _info_tensor(info))


@with_out
def solve_ex(A, B, *, left=True, check_errors=False):
    """``(result, info)``: ``solve(A, B, left=left)`` with LAPACK's ``info`` for ``A``
    (``k > 0``: singular; the whole result is then NaN, not differentiable). Gradients as
    ``solve``."""
    A, B = _t(A, "solve_ex"), _t(B, "solve_ex")
    _square("solve_ex", A)
    info = scipy_linalg.getrf(A.detach().numpy())[2]
    if check_errors:
        _raise_info("solve_ex", info, "The solver failed because the input matrix is singular.")
    if not info.any():
        return solve_ex_result(solve(A, B, left=left), _info_tensor(info))
    eye = Tensor._make(np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype.np), A.shape).copy())
    nan = solve(eye, B.detach(), left=left) * float("nan")
    return solve_ex_result(nan, _info_tensor(info))


def _not_differentiable(op, *tensors):
    """``ldl_factor`` / ``ldl_solve`` have no derivative (as in PyTorch): refuse inputs that
    require grad instead of returning a result that silently has no gradient."""
    from ..graph.grad_mode import is_grad_enabled

    if is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"linalg.{op}: the derivative is not implemented (as in PyTorch); "
                           "detach() the inputs, or use cholesky / solve for a gradient")


@with_out
def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)``: the Bunch-Kaufman factorization ``A = L D L^T`` (``L D L^H``
    when ``hermitian``) of symmetric matrices read from their lower triangle (LAPACK
    ``sytrf``): ``LD`` holds ``L`` below the diagonal and the 1x1/2x2 blocks of ``D``,
    ``pivots`` LAPACK's 1-based interchanges (negative for 2x2 blocks), ``info[k] > 0`` an
    exactly singular ``D``. Not differentiable (as PyTorch)."""
    A = _t(A, "ldl_factor_ex")
    _square("ldl_factor_ex", A)
    _not_differentiable("ldl_factor_ex", A)
    ld, piv, info = scipy_linalg.sytrf(A.detach().numpy(), hermitian)
    if check_errors:
        _raise_info("ldl_factor_ex", info, "The factorization could not be completed because "
                    "the input is singular (D[{k},{k}] is zero).")
    return ldl_factor_ex_result(Tensor._make(ld), Tensor._make(piv), _info_tensor(info))


@with_out
def ldl_factor(A, *, hermitian=False):
    """``(LD, pivots)`` of ``ldl_factor_ex`` (a singular ``D`` raises)."""
    ld, piv, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return ldl_factor_result(ld, piv)


@with_out
def ldl_solve(LD, pivots, B, *, hermitian=False):
    """``X`` with ``A X = B`` given ``(LD, pivots) = ldl_factor(A)`` (LAPACK ``sytrs``),
    batched and broadcast. Not differentiable (as PyTorch)."""
    LD, pivots, B = (_t(x, "ldl_solve") for x in (LD, pivots, B))
    _square("ldl_solve", LD)
    _not_differentiable("ldl_solve", LD, B)
    if B.ndim < 2:
        raise RuntimeError(f"linalg.ldl_solve: B must have at least 2 dimensions, got shape "
                           f"{tuple(B.shape)}")
    return Tensor._make(scipy_linalg.sytrs(LD.detach().numpy(), pivots.numpy(),
                                           B.detach().numpy(), hermitian))
