"""``jitgrad.numpy.linalg``: ``inv det slogdet solve cholesky eigh eigvalsh svd svdvals pinv qr
lstsq norm matrix_power multi_dot``, the Array API's ``vector_norm matrix_norm matrix_transpose
vecdot cross diagonal trace outer tensordot matmul matrix_rank``, differentiable (rules in
``jitgrad.ops.nplinalg``).

``eig`` and ``eigvals`` (complex results) are not covered: looking them up raises
``AttributeError`` naming them."""
from __future__ import annotations

import math as _math

import numpy as _np

from collections import namedtuple as _namedtuple

from ..ops import nplinalg as _nplinalg_ops
from ..ops import reduce as _reduce_ops
from ..ops import unary as _unary_ops
from ..ops.core import dispatch as _dispatch
from ..ops.core import upper as _upper
from ..ops.linalg import matmul as _matmul
from ..tensor import Tensor
from ._passthrough import mark as _mark
from .. import dtypes as _dtypes
from . import _reductions, _shape
from ._common import to_tensor as _np_t
from ._elementwise import astype as _astype
from ._matrix import (cross as _cross, diagonal as _diag, outer as _outer, tensordot as _td,
                      vecdot as _vecdot)
from ._reductions import sum as _sum

__all__ = ["inv", "det", "slogdet", "solve", "cholesky", "eigh", "eigvalsh", "norm",
           "matrix_power", "multi_dot", "pinv", "svd", "svdvals", "vector_norm", "matrix_norm",
           "matrix_transpose", "qr", "lstsq", "vecdot", "cross", "diagonal", "trace", "outer",
           "tensordot", "matmul", "matrix_rank", "cond", "tensorinv", "tensorsolve"]
LinAlgError = _np.linalg.LinAlgError
# NumPy's (and the Array API's) named result tuples: ``res.Q``, ``res.eigenvalues``...
QRResult = _namedtuple("QRResult", ["Q", "R"])
EighResult = _namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SlogdetResult = _namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = _namedtuple("SVDResult", ["U", "S", "Vh"])


def _t(x):
    return x if isinstance(x, Tensor) else _constant(x)


@_upper.constant_maker
def _constant(x, like=None):
    """A constant Tensor of the Tensor-free data ``x`` (an identity computed from a shape: on
    ``like``'s device)."""
    t = Tensor._make(_np.asarray(x))
    return t.to(like.device) if like is not None and like.is_cuda else t


def inv(a):
    """Matrix inverse ``B``; ``gA = -B^T g B^T``."""
    return _nplinalg_ops.inv(_t(a))


def det(a):
    """Determinant; ``gA = g det(A) A^-T``."""
    return _nplinalg_ops.det(_t(a))


def slogdet(a):
    """``(sign, logabsdet)``; ``gA = g_logabsdet A^-T``."""
    return SlogdetResult(*_nplinalg_ops.slogdet(_t(a)))


def solve(a, b):
    """``x = A^-1 b``; ``gb = A^-T g``, ``gA = -gb x^T``."""
    return _nplinalg_ops.solve(_t(a), _t(b))


def cholesky(a):
    """Lower Cholesky factor of a symmetric positive definite matrix."""
    return _nplinalg_ops.cholesky(_t(a))


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix ``A = V diag(w) V^T``;
    ``gA = V (diag(gw) + (V^T gV) / E) V^T``, ``E_ij = w_j - w_i`` (distinct eigenvalues)."""
    return EighResult(*_nplinalg_ops.eigh(_t(a), UPLO))


def eigvalsh(a, UPLO="L"):
    """Eigenvalues of a symmetric matrix; ``gA = V diag(gw) V^T``."""
    return _nplinalg_ops.eigh(_t(a), UPLO)[0]


def svd(a, full_matrices=True, compute_uv=True):
    """SVD. Differentiable in its reduced form: pass ``full_matrices=False`` (the full form's
    extra singular vectors are not unique); ``compute_uv=False`` gives the singular values."""
    a = _t(a)
    if not compute_uv:
        return _nplinalg_ops.svdvals(a)
    if full_matrices and a.shape[-1] != a.shape[-2]:
        raise NotImplementedError("jitgrad.numpy.linalg.svd: use full_matrices=False for "
                                  "non-square input (the full factors are not unique)")
    return SVDResult(*_nplinalg_ops.svd(a))


def svdvals(x):
    """Singular values; ``gA = U diag(gs) V^T``."""
    return _nplinalg_ops.svdvals(_t(x))


def pinv(a, rcond=None):
    """Moore-Penrose pseudo-inverse (gradient where the rank is locally constant)."""
    return _nplinalg_ops.pinv(_t(a), rcond)


def matrix_power(a, n):
    """``A^n`` by repeated squaring (negative ``n`` inverts first)."""
    a = _t(a)
    n = int(n)
    if n < 0:
        a, n = _nplinalg_ops.inv(a), -n
    if n == 0:
        return _constant(_np.broadcast_to(_np.eye(a.shape[-1], dtype=a.dtype.np), a.shape).copy(), a)
    result = None
    while n:
        if n & 1:
            result = a if result is None else _matmul(result, a)
        n >>= 1
        if n:
            a = _matmul(a, a)
    return result


def multi_dot(arrays):
    """Chained matrix product (left to right)."""
    out = _t(arrays[0])
    for a in arrays[1:]:
        out = _matmul(out, _t(a))
    return out


def _abs_pow_sum(x, p, axis, keepdims):
    return _reduce_ops.sum(_unary_ops.abs(x) ** p, dim=axis, keepdim=keepdims) ** (1.0 / p)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms (``ord`` None/2, 1, inf, -inf, 0, any p) and the Frobenius, 1, inf matrix
    norms, with NumPy's ``axis`` rules. The 2-norm's gradient is ``g x / ||x||`` (nan at 0,
    as NumPy's formula). ``ord='nuc'`` and matrix ``ord=2`` need an SVD and are not covered."""
    x = _t(x)
    if axis is None:
        if ord is None:
            return _unary_ops.sqrt(_reduce_ops.sum(x * x, dim=tuple(range(x.ndim)), keepdim=keepdims))
        axis = tuple(range(x.ndim))
    axis = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    axis = tuple(int(a) % x.ndim for a in axis)
    if len(axis) == 1:
        if ord is None or ord == 2:
            return _unary_ops.sqrt(_reduce_ops.sum(x * x, dim=axis, keepdim=keepdims))
        if ord == _np.inf:
            return _reduce_ops.amax(_unary_ops.abs(x), dim=axis, keepdim=keepdims)
        if ord == -_np.inf:
            return _reduce_ops.amin(_unary_ops.abs(x), dim=axis, keepdim=keepdims)
        if ord == 0:
            return _reduce_ops.sum(_unary_ops.cast(x != 0, _dtypes.to_dtype(x.dtype.np)), dim=axis, keepdim=keepdims)
        if ord == 1:
            return _reduce_ops.sum(_unary_ops.abs(x), dim=axis, keepdim=keepdims)
        return _abs_pow_sum(x, float(ord), axis, keepdims)
    if len(axis) == 2:
        r, c = axis
        if ord is None or ord == "fro":
            return _unary_ops.sqrt(_reduce_ops.sum(x * x, dim=axis, keepdim=keepdims))
        if ord in (1, -1, _np.inf, -_np.inf):
            inner, outer = (r, c) if ord in (1, -1) else (c, r)
            s = _reduce_ops.sum(_unary_ops.abs(x), dim=inner, keepdim=True)
            red = _reduce_ops.amax if ord in (1, _np.inf) else _reduce_ops.amin
            out = red(s, dim=outer, keepdim=True)
            if not keepdims:
                out = _reduce_ops.sum(out, dim=axis)  # drop the two size-1 dims
            return out
        if ord in (2, -2, "nuc"):
            from ..ops.shape import permute

            rest = [d for d in range(x.ndim) if d not in axis]
            s = _nplinalg_ops.svdvals(permute(x, tuple(rest) + (r, c)))
            out = _reduce_ops.sum(s, dim=-1) if ord == "nuc" else (
                _reduce_ops.amax(s, dim=-1) if ord == 2 else _reduce_ops.amin(s, dim=-1))
            if keepdims:
                from ..ops.shape import unsqueeze

                for d in sorted(axis):
                    out = unsqueeze(out, d)
            return out
        raise ValueError(f"Invalid norm order {ord!r} for matrices.")
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Array API ``vector_norm``: ``(sum |x|^p)^(1/p)`` over ``axis`` (all elements when None;
    several axes are flattened into one), with ``ord`` inf/-inf (max/min ``|x|``) and 0 (count
    of nonzeros). Gradient ``g |x|^(p-1) sign(x) / ||x||^(p-1)`` (ties of inf-norms share it)."""
    from ..ops.shape import permute

    x = _t(x)
    if x.ndim == 0:
        x = x.reshape(1)
        out = norm(x, ord=ord, axis=0)
        return out
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis))
    axes = tuple(int(a) % x.ndim for a in axes)
    if len(axes) == 1:
        return norm(x, ord=ord, axis=axes[0], keepdims=keepdims)
    rest = [d for d in range(x.ndim) if d not in axes]
    y = permute(x, tuple(rest) + axes)
    y = y.reshape(tuple(x.shape[d] for d in rest) + (-1,))
    out = norm(y, ord=ord, axis=-1)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
    return out


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Array API ``matrix_norm`` over the last two axes (``fro``, 1, -1, inf, -inf)."""
    return norm(_t(x), ord=ord, axis=(-2, -1), keepdims=keepdims)


def matrix_transpose(x):
    """Swap the last two axes."""
    from ..ops.shape import transpose

    return transpose(_t(x), -1, -2)


def qr(a, mode="reduced"):
    """QR factorisation ``A = Q R`` of ``(..., M, N)`` input, ``K = min(M, N)``.

    ``mode='reduced'``: ``Q`` ``(..., M, K)`` with orthonormal columns, ``R`` ``(..., K, N)``
    upper triangular (a ``QRResult``); ``'complete'`` is the same when ``M <= N`` (for
    ``M > N`` the extra columns of ``Q`` are not unique and it raises); ``'r'``: ``R`` only.
    Gradient (full rank): for ``M >= N``, ``M_ = R gR^T - gQ^T Q`` and
    ``gA = (gQ + Q copyltu(M_)) R^-T`` with ``copyltu(X)_ij = X_max(i,j),min(i,j)``; for
    ``M < N``, ``A = [X | Y]``: ``X`` takes that rule with ``gQ + Y gR2^T`` and ``gY = Q gR2``.
    """
    a = _t(a)
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(f"jitgrad.numpy.linalg.qr: mode={mode!r} is not covered "
                                  "(use 'reduced', 'complete' or 'r')")
    if mode == "complete" and a.ndim >= 2 and a.shape[-2] > a.shape[-1]:
        raise NotImplementedError(
            f"jitgrad.numpy.linalg.qr: mode='complete' for a tall matrix (shape {tuple(a.shape)}) "
            "is not covered: the extra columns of Q are not unique; use mode='reduced'")
    q, r = _nplinalg_ops.qr(a)
    return r if mode == "r" else QRResult(q, r)


def lstsq(a, b, rcond=None):
    """Least squares ``x = argmin ||b - A x||_2`` (minimum norm), as ``numpy.linalg.lstsq``:
    ``(x, residuals, rank, s)``.

    ``x = pinv(A, rcond) b`` (singular values below ``rcond * s_max`` dropped; ``rcond=None``
    is ``eps * max(M, N)``), so ``gb = P^T g`` and ``gA`` is the pseudo-inverse's
    (Golub-Pereyra) rule, valid where the rank is locally constant. ``residuals`` is
    ``sum((b - A x)^2, axis=0)`` when the rank is ``N < M`` (else empty); ``s`` the singular
    values of ``A`` (``gA = U diag(gs) V^T``); ``rank`` an int."""
    a, b = _t(a), _t(b)
    if a.ndim != 2:
        raise _np.linalg.LinAlgError(f"lstsq: a must be 2-d, got shape {tuple(a.shape)}")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise _np.linalg.LinAlgError(f"lstsq: incompatible shapes a {tuple(a.shape)} and "
                                     f"b {tuple(b.shape)}")
    m, n = a.shape
    if rcond is None:
        rcond = _np.finfo(a.dtype.np if a.dtype.is_floating_point else _np.float64).eps * max(m, n)
    s = _nplinalg_ops.svdvals(a)
    sv = s._host("jitgrad.numpy.linalg.lstsq")  # (the rank: a Python number)
    rank = int((sv > rcond * sv.max()).sum()) if sv.size else 0
    x = _matmul(_nplinalg_ops.pinv(a, rcond), b)
    if rank == n and m > n:
        r = b - _matmul(a, x)
        res = _reduce_ops.sum(r * r, dim=0)
        if b.ndim == 1:
            res = res.reshape(1)
    else:
        res = Tensor._make(_np.zeros((0,), dtype=a.dtype.np))
    return x, res, rank, s


@_mark
def matrix_rank(x, /, tol=None, hermitian=False, *, rtol=None):
    """Number of singular values above the tolerance (an integer Tensor; no gradient)."""
    x = _t(x)
    if (_dispatch.transform_hook is not None and x.ndim >= 2 and x.dtype.is_floating_point
            and all(v is None or isinstance(v, (int, float)) for v in (tol, rtol))):
        # vmap, a compile trace: the same count with rows, not from host values
        if rtol is None and tol is None:
            rtol = max(x.shape[-2:]) * _np.finfo(x.dtype.np).eps
        return _nplinalg_ops.rank_count(x, 0.0 if rtol is not None else tol,
                                        0.0 if rtol is None else rtol, hermitian)
    kw = {"rtol": rtol} if rtol is not None else {"tol": tol}
    return Tensor._make(_np.asarray(_np.linalg.matrix_rank(
        x._host("jitgrad.numpy.linalg.matrix_rank"), hermitian=hermitian, **kw)))


def vecdot(x1, x2, /, *, axis=-1):
    """Array API ``linalg.vecdot``: ``sum(x1 * x2, axis)`` with broadcasting (real input);
    ``g1 = g x2``, ``g2 = g x1`` (summed over broadcast dims)."""
    return _vecdot(x1, x2, axis=axis)


def cross(x1, x2, /, *, axis=-1):
    """Array API ``linalg.cross`` of 3-vectors along ``axis``; ``g1 = x2 x g``, ``g2 = g x x1``."""
    return _cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """Array API ``linalg.diagonal``: the ``offset`` diagonal of the last two axes (gradient
    scattered back onto that diagonal)."""
    return _diag(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """Array API ``linalg.trace``: the sum of the ``offset`` diagonal of the last two axes;
    ``gX = g`` on that diagonal, 0 elsewhere."""
    out = _sum(diagonal(x, offset=offset), axis=-1)
    return out if dtype is None else _astype(out, dtype, copy=False)


def outer(x1, x2, /):
    """Outer product of two vectors ``x1_i x2_j``; ``g1 = g x2``, ``g2 = g^T x1``."""
    return _outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """``numpy.tensordot`` (contraction over ``axes``); gradients are the transposed
    contractions."""
    return _td(x1, x2, axes=axes)


def matmul(x1, x2, /):
    """``x1 @ x2``; ``g1 = g x2^T``, ``g2 = x1^T g``."""
    return _matmul(_t(x1), _t(x2))


# --- composed of the above (issue 19): gradients those of svd/norm/inv/solve ----------------
def cond(x, p=None):
    """The condition number: ``s_max / s_min`` of the singular values for ``p`` None or 2
    (``s_min / s_max`` for -2; gradient through ``svdvals``, distinct singular values needed),
    else ``norm(x, p) norm(inv(x), p)`` for ``'fro'``, ``'nuc'``, +-1, +-inf (square ``x``)."""
    x = _np_t(x)
    if x.ndim < 2:
        raise _np.linalg.LinAlgError(f"{x.ndim}-dimensional array given. Array must be at "
                                     "least two-dimensional")
    if p is None or p in (2, -2):
        s = svd(x, compute_uv=False)
        hi, lo = _reductions.max(s, axis=-1), _reductions.min(s, axis=-1)
        return lo / hi if p == -2 else hi / lo
    if x.shape[-1] != x.shape[-2]:
        raise _np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def tensorinv(a, ind=2):
    """The inverse under ``tensordot(., ., ind)``: ``a`` reshaped to a square matrix
    (``prod(shape[:ind])`` rows), inverted, reshaped to ``shape[ind:] + shape[:ind]``;
    gradient through ``inv``."""
    a = _np_t(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    old = tuple(a.shape)
    rows = _math.prod(old[:ind])
    inverse = inv(_shape.reshape(a, (rows, -1)))
    return _shape.reshape(inverse, old[ind:] + old[:ind])


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) = b`` (NumPy's algorithm: ``axes`` moved last,
    ``a`` reshaped to a square matrix, ``solve``); gradients through ``solve``."""
    a, b = _np_t(a), _np_t(b)
    if axes is not None:
        allaxes = list(range(a.ndim))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(a.ndim, k)
        a = _shape.transpose(a, allaxes)
    oldshape = tuple(a.shape[-(a.ndim - b.ndim):])
    prod = _math.prod(oldshape)
    if _math.prod(a.shape) != prod ** 2:
        raise _np.linalg.LinAlgError("Input arrays must satisfy the requirement "
                                     "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = solve(_shape.reshape(a, (prod, prod)), _shape.reshape(b, (prod,)))
    return _shape.reshape(x, oldshape)


def __getattr__(name):
    if name in ("eig", "eigvals"):
        raise AttributeError(
            f"jitgrad.numpy.linalg has no '{name}': the eigenvalues of a non-symmetric matrix are "
            "complex and jitgrad has no complex dtype; use eigh/eigvalsh for symmetric input")
    if hasattr(_np.linalg, name):
        raise AttributeError(
            f"jitgrad.numpy.linalg has no '{name}': numpy.linalg.{name} is not covered (no "
            "derivative rule); see docs/numpy.md")
    raise AttributeError(f"module 'jitgrad.numpy.linalg' has no attribute '{name}'")
