"""PyTorch's linear algebra on the top level and on ``Tensor`` (``torch.det``, ``torch.svd``,
``Tensor.cholesky_solve``...): the older spellings of ``torch.linalg``'s functions, with their
own conventions (``svd`` returns ``V``, not ``Vh``; ``qr(some=)``; ``cholesky(upper=)``;
``triangular_solve(b, A)`` returns the solution and a copy of ``A``), written on
``jitgrad.linalg``, so their gradients are its (declared in Tensor's method table: Note [tensor
methods])."""
from __future__ import annotations

from collections import namedtuple

from . import linalg
from .ops import creation, scipy_linalg
from .ops.core import methods

qr_result = namedtuple("qr", ["Q", "R"])
svd_result = namedtuple("svd", ["U", "S", "V"])
slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])
triangular_solve_result = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
lu_unpack_result = namedtuple("lu_unpack", ["P", "L", "U"])


def det(input):
    """``det(A)`` (``torch.linalg.det``)."""
    return linalg.det(input)


def inverse(input):
    """``A^{-1}`` (``torch.linalg.inv``)."""
    return linalg.inv(input)


def slogdet(input):
    """``(sign, log|det A|)`` (``torch.linalg.slogdet``)."""
    return slogdet_result(*linalg.slogdet(input))


def pinverse(input, rcond=1e-15):
    """The pseudo-inverse, singular values below ``rcond * max(S)`` taken as zero."""
    return linalg.pinv(input, rtol=rcond)


def matrix_exp(A):
    """``exp(A)`` (``torch.linalg.matrix_exp``)."""
    return linalg.matrix_exp(A)


def matrix_power(input, n):
    """``A^n`` for an integer ``n`` (``torch.linalg.matrix_power``)."""
    return linalg.matrix_power(input, n)


def qr(input, some=True):
    """``A = QR``; ``some=False`` gives the complete ``Q`` (``linalg.qr(mode="complete")``)."""
    return qr_result(*linalg.qr(input, mode="reduced" if some else "complete"))


def svd(input, some=True, compute_uv=True):
    """``A = U diag(S) V^H`` with ``V`` (not ``V^H``, as ``linalg.svd`` gives); ``some=False``
    gives the full ``U`` and ``V``; ``compute_uv=False`` gives zero ``U`` and ``V`` of those
    shapes, as PyTorch's."""
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    if not compute_uv:
        return svd_result(creation.zeros_like(U), S, creation.zeros_like(Vh.mH))
    return svd_result(U, S, Vh.mH)


def cholesky(input, upper=False):
    """The Cholesky factor: ``A = L L^H`` (``upper=True``: ``A = U^H U``, ``U = L^H``)."""
    L = linalg.cholesky(input)
    return L.mH if upper else L


def cholesky_solve(B, L, upper=False):
    """``X`` with ``A X = B`` for ``A = L L^H``, ``L`` its Cholesky factor (``upper=True``:
    ``A = U^H U``, ``U = L``): two triangular solves."""
    lower = L.mH if upper else L
    y = linalg.solve_triangular(lower, B, upper=False)
    return linalg.solve_triangular(lower.mH, y, upper=True)


def cholesky_inverse(L, upper=False):
    """``A^{-1}`` from the Cholesky factor ``L`` of ``A`` (``upper`` as ``cholesky_solve``)."""
    n = L.shape[-1]
    eye = creation.eye(n, dtype=L.dtype, device=L.device)
    return cholesky_solve(eye.expand(*L.shape), L, upper)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """``X`` with ``op(A) X = b`` (``op(A) = A^T`` when ``transpose``), and a copy of ``A``
    (PyTorch's deprecated form of ``linalg.solve_triangular``)."""
    op = A.mT if transpose else A
    solution = linalg.solve_triangular(op, b, upper=upper != transpose,
                                       unitriangular=unitriangular)
    return triangular_solve_result(solution, A.clone())


def lu_solve(b, LU_data, LU_pivots):
    """``X`` with ``A X = b`` from ``A``'s LU factorisation (``linalg.lu_solve``)."""
    return linalg.lu_solve(LU_data, LU_pivots, b)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` with ``A = P L U`` from ``lu_factor``'s packed ``LU`` and 1-based pivots
    (row ``i`` was swapped with row ``pivots[i] - 1``, in order); ``L`` and ``U`` are
    differentiable in ``LU``, ``P`` is constant. An unpacked part not asked for is empty."""
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + creation.eye(m, k, dtype=LU_data.dtype)
        U = LU_data[..., :k, :].triu()
    else:
        L = U = creation.empty(0, dtype=LU_data.dtype)
    if not unpack_pivots:
        return lu_unpack_result(creation.empty(0, dtype=LU_data.dtype), L, U)
    # a row of the pivots (not read on the host), so a compiled program unpacks each call's
    P = scipy_linalg.permutation(LU_pivots, m, LU_data)
    return lu_unpack_result(P, L, U)


def lu(input, pivot=True, get_infos=False):
    """``(LU, pivots)`` (and ``infos`` with ``get_infos``): ``linalg.lu_factor``'s packed
    factorisation (PyTorch's ``Tensor.lu``)."""
    if get_infos:
        return tuple(linalg.lu_factor_ex(input, pivot=pivot))
    return tuple(linalg.lu_factor(input, pivot=pivot))


#: the functions PyTorch gives ``out=``
WITH_OUT = {"inverse", "pinverse", "matrix_power", "qr", "svd", "cholesky", "cholesky_solve",
            "cholesky_inverse", "triangular_solve", "lu_solve", "lu_unpack"}
FUNCTIONS = (det, inverse, slogdet, pinverse, matrix_exp, matrix_power, qr, svd, cholesky,
             cholesky_solve, cholesky_inverse, triangular_solve, lu_solve, lu_unpack)
methods.declare({fn.__name__: fn for fn in FUNCTIONS + (lu,) if fn is not lu_unpack}, __name__)
