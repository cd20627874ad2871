"""The norms and decompositions of ``jitgrad.linalg``, on the ``ops.nplinalg`` rows (the same rows as ``jitgrad.numpy.linalg``; see its docstrings and
ops/nplinalg.py for each derivative). Node names follow the rows: ``LinalgInvExBackward0``,
``LinalgDetBackward0``, ``LinalgSlogdetBackward0``, ``LinalgSolveExBackward0``,
``LinalgCholeskyExBackward0``, ``LinalgQrBackward0``, ``LinalgSvdBackward0``,
``LinalgEighBackward0``, ``LinalgPinvBackward0``, as PyTorch's.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import dtypes
from ..ops.core import dispatch, upper
from ..ops.linalg import matmul as _matmul
from ..ops import binary, nplinalg, reduce, shape, unary
from ..tensor import Tensor
from ._out import with_out

__all__ = ["norm", "vector_norm", "matrix_norm", "solve", "inv", "det", "slogdet", "cholesky",
           "qr", "svd", "svdvals", "eigh", "eigvalsh", "lstsq", "pinv"]

#: ``torch.return_types.linalg_*``
slogdet_result = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
qr_result = namedtuple("linalg_qr", ["Q", "R"])
svd_result = namedtuple("linalg_svd", ["U", "S", "Vh"])
eigh_result = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
lstsq_result = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _npl():
    import jitgrad.numpy.linalg as npl  # (above ops: imported on first use)

    return npl


def _t(x, op):
    return dispatch.tensor_operand(x, f"linalg.{op}")


def _cast(x, dtype):
    return x if dtype is None or dtypes.to_dtype(dtype) == x.dtype else \
        unary.cast(x, dtypes.to_dtype(dtype))


def _mT(x):
    return shape.transpose(x, -2, -1)


@upper.constant_maker
def _empty(dtype):
    """An empty 1-d Tensor of ``dtype`` (a result PyTorch leaves empty; a constant)."""
    return Tensor._make(np.zeros((0,), dtype))


@with_out
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """``(sum |x|^p)^(1/p)`` over ``dim`` (all elements when None; an int or a tuple), ``ord``
    inf / -inf the max / min of ``|x|``, 0 the count of nonzeros. Gradient
    ``g |x|^(p-1) sign(x) / ||x||^(p-1)``."""
    x = _cast(_t(x, "vector_norm"), dtype)
    if ord == 2 and x.dtype.is_floating_point and x.ndim:
        # PyTorch's gradient at x = 0 is 0, not NumPy's 0/0: sqrt's infinite derivative at a
        # zero sum is masked by the where (Note [masked gradients] in ops/binary.py)
        dims = tuple(range(x.ndim)) if dim is None else (dim,) if isinstance(dim, int) else dim
        s = reduce.sum(x * x, dim=tuple(dims), keepdim=keepdim)
        return unary.sqrt(binary.where(s == 0, 0.0, s))
    return _npl().vector_norm(x, axis=dim, keepdims=keepdim, ord=ord)


@with_out
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):  # noqa: A002
    """The matrix norm over the two dims ``dim``: ``'fro'``, ``'nuc'`` (sum of the singular
    values), 2 / -2 (the largest / smallest singular value), 1 / -1 / inf / -inf (max / min
    absolute column / row sum). The singular-value norms differentiate through ``svdvals``."""
    A = _cast(_t(A, "matrix_norm"), dtype)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions, got {A.ndim}")
    d0, d1 = (shape.wrap_dim("linalg.matrix_norm", d, A.ndim) for d in dim)
    if ord in ("nuc", 2, -2):
        moved = _npl_moveaxis(A, (d0, d1))
        s = nplinalg.svdvals(moved)
        out = reduce.sum(s, dim=-1) if ord == "nuc" else (
            reduce.amax(s, dim=-1) if ord == 2 else reduce.amin(s, dim=-1))
        if keepdim:
            out = shape.unsqueeze(shape.unsqueeze(out, min(d0, d1)), max(d0, d1))
        return out
    return _npl().norm(A, ord=ord, axis=(d0, d1), keepdims=keepdim)


def _npl_moveaxis(A, dims):
    rest = [d for d in range(A.ndim) if d not in dims]
    return shape.permute(A, tuple(rest) + tuple(dims))


@with_out
def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """``torch.linalg.norm``: with ``dim`` an int (or ``input`` 1-d) a vector norm, with two dims
    (or ``input`` 2-d and ``ord`` given) a matrix norm; ``ord=None`` and ``dim=None``: the
    2-norm of all elements."""
    A = _cast(_t(input, "norm"), dtype)
    if dim is None and ord is None:
        return vector_norm(A, 2, None, keepdim)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = (0,) if A.ndim == 1 else (-2, -1)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 1:
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim)
    return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim)


@with_out
def inv(A):
    """Matrix inverse ``B``; ``gA = -B^H g B^H``."""
    return nplinalg.inv(_t(A, "inv"))


@with_out
def det(A):
    """Determinant; ``gA = g det(A) A^-H``."""
    return nplinalg.det(_t(A, "det"))


@with_out
def slogdet(A):
    """``(sign, logabsdet)`` (``torch.return_types.linalg_slogdet``); ``gA = g A^-H``."""
    return slogdet_result(*nplinalg.slogdet(_t(A, "slogdet")))


@with_out
def solve(A, B, *, left=True):
    """``X = A^-1 B`` (``left=False``: ``X = B A^-1``). ``B`` is a batch of vectors when 1-d
    or of shape ``A.shape[:-1]``; ``gB = A^-H g``, ``gA = -gB X^H``."""
    A, B = _t(A, "solve"), _t(B, "solve")
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    if B.ndim > 1 and tuple(B.shape) == tuple(A.shape[:-1]):  # a batch of vectors
        return shape.squeeze(nplinalg.solve(A, shape.unsqueeze(B, -1)), -1)
    return nplinalg.solve(A, B)


@with_out
def cholesky(A, *, upper=False):
    """The lower Cholesky factor ``L`` of a symmetric positive definite ``A = L L^H``
    (``upper``: ``L^H``)."""
    L = nplinalg.cholesky(_t(A, "cholesky"))
    return _mT(L) if upper else L


@with_out
def qr(A, mode="reduced"):
    """``(Q, R)`` (``torch.return_types.linalg_qr``); ``mode='r'``: ``Q`` empty."""
    if mode == "r":
        r = _npl().qr(_t(A, "qr"), mode="r")
        return qr_result(_empty(r.dtype.np), r)
    return qr_result(*_npl().qr(_t(A, "qr"), mode=mode))


@with_out
def svd(A, full_matrices=True, *, driver=None):
    """``(U, S, Vh)`` (``torch.return_types.linalg_svd``), ``A = U diag(S) Vh``; differentiable
    in the reduced form (``full_matrices=False``, or square input)."""
    A = _t(A, "svd")
    return svd_result(*_npl().svd(A, full_matrices=full_matrices and A.shape[-1] != A.shape[-2]))


@with_out
def svdvals(A, *, driver=None):
    """The singular values (descending); ``gA = U diag(gS) Vh``."""
    return nplinalg.svdvals(_t(A, "svdvals"))


@with_out
def eigh(A, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of a symmetric matrix (ascending eigenvalues;
    ``torch.return_types.linalg_eigh``)."""
    return eigh_result(*nplinalg.eigh(_t(A, "eigh"), UPLO))


@with_out
def eigvalsh(A, UPLO="L"):
    """The eigenvalues of a symmetric matrix (ascending)."""
    return nplinalg.eigh(_t(A, "eigvalsh"), UPLO)[0]


@with_out
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse (singular values below ``rtol * s_max`` dropped;
    default ``eps * max(M, N)``); the gradient holds where the rank is locally constant."""
    if atol is not None:
        raise NotImplementedError("linalg.pinv: atol= is not supported; pass rtol=")
    return nplinalg.pinv(_t(A, "pinv"), rtol)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` (minimum norm), as PyTorch's CPU default
    driver ``'gelsy'``: ``(solution, residuals, rank, singular_values)`` with residuals and
    singular values empty (``driver='gelsd'`` / ``'gelss'``: both filled in). Gradient: that
    of ``pinv(A) B``."""
    A, B = _t(A, "lstsq"), _t(B, "lstsq")
    if A.ndim != 2 or B.ndim not in (1, 2):
        raise NotImplementedError("linalg.lstsq: only a single 2-d A (and a 1-d or 2-d B) is "
                                  f"supported here; got {A.ndim}-d and {B.ndim}-d")
    empty = _empty(A.dtype.np)
    if (dispatch.transform_hook is not None and driver not in ("gelsd", "gelss")
            and A.dtype.is_floating_point and (rcond is None or isinstance(rcond, (int, float)))):
        # vmap, a compile trace: numpy.linalg.lstsq's x and rank with rows (its rank is a
        # Python int read on the host; the residuals it returns are not needed here)
        if rcond is None:
            rcond = np.finfo(A.dtype.np).eps * max(A.shape)
        return lstsq_result(_matmul(nplinalg.pinv(A, rcond), B), empty,
                            nplinalg.rank_count(A, 0.0, rcond), empty)
    x, res, rank, s = _npl().lstsq(A, B, rcond)
    rank = Tensor._make(np.asarray(rank, np.int64))
    if driver in ("gelsd", "gelss"):
        return lstsq_result(x, res, rank, s)
    return lstsq_result(x, empty, rank, empty)
