"""The CUDA forwards of the ``ops.nplinalg`` rows (their ``cuda_forward=``) over the batched
small-matrix kernels of ``kernels.cuda.solver`` and ``kernels.cuda.jacobi`` (reached lazily:
Note [lazy cuda]).

Each mirrors its CPU forward (``numpy.linalg``): same result dtypes (integer input computes in
float64, float16 raises NumPy's TypeError), shapes, NumPy 2's ``solve`` broadcasting and the
same ``LinAlgError`` messages. The backward rules are the rows' Tensor-level ones.
"""
from __future__ import annotations

import numpy as np

from .core import dispatch


def _k():
    return dispatch.cuda_kernels("solver")


def _jacobi():
    return dispatch.cuda_kernels("jacobi")


def _float(*arrays):
    """The arrays in NumPy linalg's compute dtype (float32 or float64)."""
    dt = np.result_type(*[a.dtype for a in arrays])
    if dt == np.float16:
        raise TypeError("array type float16 is unsupported in linalg")
    if dt.kind in "biu":
        dt = np.dtype(np.float64)
    return [a if a.dtype == dt else a.astype(dt) for a in arrays]


def inv_forward(ctx, a):
    return _k().inv(*_float(a))


def det_forward(ctx, a):
    return _k().det(*_float(a))


def slogdet_forward(ctx, a):
    return _k().slogdet(*_float(a))


def solve_forward(ctx, a, b):
    ctx.b_shape = b.shape
    a, b = _float(a, b)
    n = a.shape[-1]
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ValueError("solve1: Input operand 1 has a mismatch in its core dimension 0, with "
                             f"gufunc signature (m,m),(m)->(m) (size {b.shape[0]} is different "
                             f"from {n})")
    elif b.shape[-2] != n:
        raise ValueError("solve: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature (m,m),(m,n)->(m,n) (size {b.shape[-2]} is different "
                         f"from {n})")
    return _k().solve(a, b)


def cholesky_forward(ctx, a):
    return _k().cholesky(*_float(a))


def eigh_forward(ctx, a, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return _jacobi().eigh(*_float(a), lower=UPLO == "L")


def pinv_forward(ctx, a, rcond):
    return _jacobi().pinv(*_float(a), rcond)


def svd_forward(ctx, a):
    return _jacobi().svd(*_float(a))


def svdvals_forward(ctx, a):
    return _jacobi().svd(*_float(a), compute_uv=False)


def qr_forward(ctx, a):
    return _k().qr(*_float(a))
