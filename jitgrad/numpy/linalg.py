"""``jitgrad.numpy.linalg``: ``inv det slogdet solve cholesky eigh eigvalsh norm
matrix_power multi_dot``, differentiable (rules in ``jitgrad.ops.nplinalg``).

``qr``, ``eig`` and ``lstsq`` are not covered yet: looking them up raises
``AttributeError`` naming them."""
from __future__ import annotations

import numpy as _np

from ..ops import nplinalg as _la
from ..ops import reduce as _r
from ..ops import unary as _u
from ..ops.linalg import matmul as _matmul
from ..tensor import Tensor
from .. import dtypes as _dtypes

__all__ = ["inv", "det", "slogdet", "solve", "cholesky", "eigh", "eigvalsh", "norm",
           "matrix_power", "multi_dot", "pinv", "svd", "svdvals", "vector_norm", "matrix_norm", "matrix_transpose"]
LinAlgError = _np.linalg.LinAlgError


def _t(x):
    return x if isinstance(x, Tensor) else Tensor._make(_np.asarray(x))


def inv(a):
    """Matrix inverse ``B``; ``gA = -B^T g B^T``."""
    return _la.inv(_t(a))


def det(a):
    """Determinant; ``gA = g det(A) A^-T``."""
    return _la.det(_t(a))


def slogdet(a):
    """``(sign, logabsdet)``; ``gA = g_logabsdet A^-T``."""
    return _la.slogdet(_t(a))


def solve(a, b):
    """``x = A^-1 b``; ``gb = A^-T g``, ``gA = -gb x^T``."""
    return _la.solve(_t(a), _t(b))


def cholesky(a):
    """Lower Cholesky factor of a symmetric positive definite matrix."""
    return _la.cholesky(_t(a))


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix."""
    return _la.eigh(_t(a), UPLO)


def eigvalsh(a, UPLO="L"):
    """Eigenvalues of a symmetric matrix; ``gA = V diag(gw) V^T``."""
    return _la.eigh(_t(a), UPLO)[0]


def svd(a, full_matrices=True, compute_uv=True):
    """SVD. Differentiable in its reduced form: pass ``full_matrices=False`` (the full form's
    extra singular vectors are not unique); ``compute_uv=False`` gives the singular values."""
    a = _t(a)
    if not compute_uv:
        return _la.svdvals(a)
    if full_matrices and a.shape[-1] != a.shape[-2]:
        raise NotImplementedError("jitgrad.numpy.linalg.svd: use full_matrices=False for "
                                  "non-square input (the full factors are not unique)")
    return _la.svd(a)


def svdvals(x):
    """Singular values; ``gA = U diag(gs) V^T``."""
    return _la.svdvals(_t(x))


def pinv(a, rcond=None):
    """Moore-Penrose pseudo-inverse (gradient where the rank is locally constant)."""
    return _la.pinv(_t(a), rcond)


def matrix_power(a, n):
    """``A^n`` by repeated squaring (negative ``n`` inverts first)."""
    a = _t(a)
    n = int(n)
    if n < 0:
        a, n = _la.inv(a), -n
    if n == 0:
        return Tensor._make(_np.broadcast_to(_np.eye(a.shape[-1], dtype=a.dtype.np), a.shape).copy())
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
    return _r.sum(_u.abs(x) ** p, dim=axis, keepdim=keepdims) ** (1.0 / p)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms (``ord`` None/2, 1, inf, -inf, 0, any p) and the Frobenius, 1, inf matrix
    norms, with NumPy's ``axis`` rules. The 2-norm's gradient is ``g x / ||x||`` (nan at 0,
    as NumPy's formula). ``ord='nuc'`` and matrix ``ord=2`` need an SVD and are not covered."""
    x = _t(x)
    if axis is None:
        if ord is None:
            return _u.sqrt(_r.sum(x * x, dim=tuple(range(x.ndim)), keepdim=keepdims))
        axis = tuple(range(x.ndim))
    axis = (axis,) if isinstance(axis, (int, _np.integer)) else tuple(axis)
    axis = tuple(int(a) % x.ndim for a in axis)
    if len(axis) == 1:
        if ord is None or ord == 2:
            return _u.sqrt(_r.sum(x * x, dim=axis, keepdim=keepdims))
        if ord == _np.inf:
            return _r.amax(_u.abs(x), dim=axis, keepdim=keepdims)
        if ord == -_np.inf:
            return _r.amin(_u.abs(x), dim=axis, keepdim=keepdims)
        if ord == 0:
            return _r.sum(_u.cast(x != 0, _dtypes.to_dtype(x.dtype.np)), dim=axis, keepdim=keepdims)
        if ord == 1:
            return _r.sum(_u.abs(x), dim=axis, keepdim=keepdims)
        return _abs_pow_sum(x, float(ord), axis, keepdims)
    if len(axis) == 2:
        r, c = axis
        if ord is None or ord == "fro":
            return _u.sqrt(_r.sum(x * x, dim=axis, keepdim=keepdims))
        if ord in (1, -1, _np.inf, -_np.inf):
            inner, outer = (r, c) if ord in (1, -1) else (c, r)
            s = _r.sum(_u.abs(x), dim=inner, keepdim=True)
            red = _r.amax if ord in (1, _np.inf) else _r.amin
            out = red(s, dim=outer, keepdim=True)
            if not keepdims:
                out = _r.sum(out, dim=axis)  # drop the two size-1 dims
            return out
        if ord in (2, -2, "nuc"):
            from ..ops.shape import permute

            rest = [d for d in range(x.ndim) if d not in axis]
            s = _la.svdvals(permute(x, tuple(rest) + (r, c)))
            out = _r.sum(s, dim=-1) if ord == "nuc" else (
                _r.amax(s, dim=-1) if ord == 2 else _r.amin(s, dim=-1))
            if keepdims:
                from ..ops.shape import unsqueeze

                for d in sorted(axis):
                    out = unsqueeze(out, d)
            return out
        raise ValueError(f"Invalid norm order {ord!r} for matrices.")
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Array API ``vector_norm``: the ``ord``-norm over ``axis`` (all elements when None)."""
    x = _t(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
        if keepdims:
            raise NotImplementedError("vector_norm: keepdims with axis=None is not supported")
    if isinstance(axis, tuple) and len(axis) > 1:
        if ord != 2:
            raise NotImplementedError("vector_norm: several axes need ord=2")
        return _u.sqrt(_r.sum(x * x, dim=axis, keepdim=keepdims))
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Array API ``matrix_norm`` over the last two axes (``fro``, 1, -1, inf, -inf)."""
    return norm(_t(x), ord=ord, axis=(-2, -1), keepdims=keepdims)


def matrix_transpose(x):
    """Swap the last two axes."""
    from ..ops.shape import transpose

    return transpose(_t(x), -1, -2)


def __getattr__(name):
    if hasattr(_np.linalg, name):
        raise AttributeError(
            f"jitgrad.numpy.linalg has no '{name}': numpy.linalg.{name} is not covered (no "
            "derivative rule); see docs/numpy.md")
    raise AttributeError(f"module 'jitgrad.numpy.linalg' has no attribute '{name}'")
