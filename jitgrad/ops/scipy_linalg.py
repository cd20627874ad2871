"""The Sylvester-equation row behind ``jitgrad.scipy.linalg.solve_sylvester`` and ``sqrtm``,
the triangular solve and the LU factorization (``jitgrad.linalg.solve_triangular`` /
``lu_factor``, ``jitgrad.scipy.linalg.solve_triangular``).

``X = solve_sylvester(A, B, Q)`` solves ``A X + X B = Q`` (``scipy.linalg.solve_sylvester``,
Bartels-Stewart). Differentiating, ``A dX + dX B = dQ - dA X - X dB``; with ``Y`` the solution
of the adjoint equation ``A^T Y + Y B^T = G`` (``G = dL/dX``)::

    dL/dQ = Y,    dL/dA = -Y X^T,    dL/dB = -X^T Y

``Y`` is this row again, so derivatives of every order work.
"""
from __future__ import annotations

import numpy as np

from ..kernels.cpu import blas_pool
from .core import dispatch
from .core import upper as _upper
from . import torch_cuda
from .core.registry import def_composite
from .linalg import matmul
from .reduce import sum_to_shape


def _fwd(ctx, a, b, q):
    import scipy.linalg

    return np.asarray(scipy.linalg.solve_sylvester(a, b, q)).astype(np.result_type(a, b, q))


def _mT(x):
    return dispatch.Tensor.transpose(x, -1, -2)


def _back(ctx, g, a, b, result):
    from .linalg import matmul

    y = sylvester(_mT(a), _mT(b), g)
    need = ctx.needs_input_grad
    ga = -matmul(y, _mT(result)) if need[0] else None
    gb = -matmul(_mT(result), y) if need[1] else None
    return ga, gb, y


def _jvp(tangents, primals, outs):
    from .linalg import matmul

    (ta, tb, tq), (a, b, _), x = tangents, primals, outs[0]
    rhs = tq if tq is not None else None
    for term in (None if ta is None else -matmul(ta, x), None if tb is None else -matmul(x, tb)):
        if term is not None:
            rhs = term if rhs is None else rhs + term
    return sylvester(a, b, rhs)  # A dX + dX B = dQ - dA X - X dB


SYLVESTER = def_composite("scipy_solve_sylvester", "SolveSylvesterBackward0", ("a", "b", "q"),
                          _fwd, _back, save=("a", "b", "result"), jvp=_jvp)


def sylvester(a, b, q):
    """``X`` with ``A X + X B = Q`` for square ``A`` (m, m), ``B`` (n, n) and ``Q`` (m, n)."""
    a, b, q = (dispatch.tensor_operand(v, "solve_sylvester") for v in (a, b, q))
    if a.ndim != 2 or b.ndim != 2 or q.ndim != 2 or a.shape[0] != a.shape[1] \
            or b.shape[0] != b.shape[1] or tuple(q.shape) != (a.shape[0], b.shape[0]):
        raise ValueError(f"solve_sylvester: need square a (m, m), square b (n, n) and q (m, n); "
                         f"got {tuple(a.shape)}, {tuple(b.shape)}, {tuple(q.shape)}")
    return dispatch.composite(SYLVESTER, a, b, q)


# --- sqrtm: X X = A, so X dX + dX X = dA and dL/dA = solve_sylvester(X^T, X^T, G) ----------
def _sqrtm_fwd(ctx, a):
    import scipy.linalg

    x = scipy.linalg.sqrtm(a)
    x = x[0] if isinstance(x, tuple) else x
    x = np.asarray(x)
    if x.dtype.kind == "c":
        if np.abs(x.imag).max(initial=0.0) > 1e-12 * max(np.abs(x.real).max(initial=0.0), 1.0):
            raise ValueError("sqrtm: the principal square root of this matrix is complex (it has "
                             "negative real eigenvalues); complex results are not supported")
        x = x.real
    return np.ascontiguousarray(x).astype(a.dtype)


def _sqrtm_back(ctx, g, result):
    xt = _mT(result)
    return (sylvester(xt, xt, g),)


SQRTM = def_composite("scipy_sqrtm", "SqrtmBackward0", ("a",), _sqrtm_fwd, _sqrtm_back,
                      save=("result",),
                      jvp=lambda tangents, primals, outs: sylvester(outs[0], outs[0], tangents[0]))


def sqrtm(a):
    """The principal square root ``X`` (``X X = A``, eigenvalues in the right half plane) of a
    square real ``A`` whose root is real; ``dL/dA`` solves ``X^T M + M X^T = dL/dX``."""
    a = dispatch.tensor_operand(a, "sqrtm")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"sqrtm: need a square matrix, got shape {tuple(a.shape)}")
    return dispatch.composite(SQRTM, a)


# --- triangular solves and LU ----------------------------------------------------------------
@_upper.constant_maker
def _const(arr, like):
    """A constant Tensor (mask, identity, zeros) on ``like``'s device and in its dtype; ``arr``
    depends on shapes only (a compile trace bakes it in)."""
    arr = np.asarray(arr, dtype=like.dtype.np)
    device = dispatch.device_of(like._data)
    return dispatch.Tensor._make(arr if device == "cpu" else dispatch.move(arr, device))


def triangle(a, upper, unitriangular=False, strict=False):
    """The upper (``upper=True``) or lower triangle of the matrices ``a`` (the rest zero), with
    the diagonal dropped (``strict``) or replaced by ones (``unitriangular``); differentiable (the
    gradient reaches the kept entries only)."""
    n, m = a.shape[-2], a.shape[-1]
    keep = np.triu(np.ones((n, m)), 1 if strict or unitriangular else 0) if upper else \
        np.tril(np.ones((n, m)), -1 if strict or unitriangular else 0)
    out = a * _const(keep, a)
    return out + _const(np.eye(n, m), a) if unitriangular else out


_TRSM: dict = {}  # dtype -> BLAS trsm (looked up on first use: SciPy loads lazily)


def _trsm_fn(dt):
    fn = _TRSM.get(dt)
    if fn is None:
        from scipy.linalg import blas

        fn = _TRSM[dt] = blas.get_blas_funcs("trsm", dtype=dt)
    return fn


def _trsm_one(fn, a, b, upper, left, unit):
    """One ``T X = B`` (``left``) or ``X T = B`` by BLAS ``trsm`` (column-major): both are
    solved transposed, ``X^T T^T = B^T`` / ``T^T X^T = B^T``, so that the C-ordered ``a``, ``b``
    and the result are the transposed column-major matrices (no copies). A Fortran-ordered ``a``
    (a transposed view) is read as it is, through ``trans_a``."""
    if a.flags.f_contiguous and not a.flags.c_contiguous:
        a_, lower, trans = a, not upper, 1      # op(a) = a^T; T^T from a's own triangle
    else:
        a_, lower, trans = a.T, upper, 0        # a^T's (lower if upper) triangle is T^T
    with blas_pool.small_call(a.shape[-1]):
        x = fn(1.0, a_, b.T, side=int(left), lower=int(lower), trans_a=trans, diag=int(unit))
    return x.T


def _trsm_fwd(ctx, a, b, upper, left, unitriangular):
    dt = np.result_type(a.dtype, b.dtype)
    if dt.kind in "biu":
        dt = np.dtype(np.float64)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"solve_triangular: array type {dt} is unsupported in linalg")
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise ValueError(f"solve_triangular: the {'rows' if left else 'columns'} of B "
                         f"({tuple(b.shape)}) do not match A ({tuple(a.shape)})")
    if not unitriangular:  # (trsm would divide by the zero)
        diag = np.diagonal(a, 0, -2, -1)
        if not diag.all():
            k = np.flatnonzero((diag == 0).reshape(-1, n).any(0))[0]
            raise np.linalg.LinAlgError(f"solve_triangular: singular matrix: the diagonal "
                                        f"element {k} is zero")
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    fn = _trsm_fn(dt)
    if a.ndim == 2 and b.ndim == 2:
        if b.size == 0:
            return np.zeros(b.shape, dt)
        return _trsm_one(fn, a, b, upper, left, unitriangular)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out = np.zeros(batch + b.shape[-2:], dt)
    if out.size:
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
        for i in np.ndindex(batch):
            out[i] = _trsm_one(fn, a[i], b[i], upper, left, unitriangular)
    return out


def _trsm_back(ctx, g, a, result):
    """``left``: ``X = T^-1 B``, ``gB = T^-T g``, ``gA = -gB X^T``; right: ``X = B T^-1``,
    ``gB = g T^-T``, ``gA = -X^T gB``; ``gA`` restricted to the triangle read (without the
    diagonal when unit), both summed over broadcast batch dims."""
    upper, left, unit = ctx.upper, ctx.left, ctx.unitriangular
    na, nb = ctx.needs_input_grad
    gb = solve_triangular(_mT(a), g, not upper, unit, left)
    ga = None
    if na:
        ga = -(matmul(gb, _mT(result)) if left else matmul(_mT(result), gb))
        ga = sum_to_shape(triangle(ga, upper, strict=unit), a.shape)
    return ga, sum_to_shape(gb, ctx.b_shape) if nb else None


def _trsm_jvp(tangents, primals, outs, upper, left, unitriangular):
    """``left``: ``dX = T^-1 (dB - dT X)``; right: ``dX = (dB - X dT) T^-1``, ``dT`` the
    triangle of ``dA`` that is read."""
    (ta, tb), (a, _), x = tangents, primals, outs[0]
    rhs = tb
    if ta is not None:
        dt = triangle(ta, upper, strict=unitriangular)
        term = matmul(dt, x) if left else matmul(x, dt)
        rhs = -term if rhs is None else rhs - term
    return solve_triangular(a, rhs, upper, unitriangular, left)


def _trsm_batch(args, batched, upper, left, unitriangular):
    """vmap: each batched operand gets 1s after its batch dim up to the other's example rank,
    so that the stacks' batch dims line up (as ``solve``'s rule)."""
    (a, b), (ba, bb) = args, batched
    nd = max(a.ndim - ba, b.ndim - bb)
    a, b = (x.reshape((x.shape[0],) + (1,) * (nd - x.ndim + 1) + tuple(x.shape[1:]))
            if flag and x.ndim - 1 < nd else x for x, flag in ((a, ba), (b, bb)))
    return solve_triangular(a, b, upper, unitriangular, left)


def _trsm_fwd_saving(ctx, a, b, upper, left, unitriangular):
    ctx.b_shape = b.shape
    return _trsm_fwd(ctx, a, b, upper, left, unitriangular)


# The triangular solve (BLAS trsm): one row for eager calls and compiled programs, used by
# ``solve_triangular``, ``cholesky_solve``, ``cho_solve``, the LU and Cholesky backwards; O(n^2 k)
# where a general ``solve`` on the masked triangle would factor it (O(n^3))
SOLVE_TRIANGULAR = def_composite(
    "solve_triangular", "LinalgSolveTriangularBackward0", ("a", "b"), _trsm_fwd_saving,
    _trsm_back, attrs=("upper", "left", "unitriangular"), save=("a", "result"), jvp=_trsm_jvp,
    batch_rule=_trsm_batch, cuda_forward=torch_cuda.host_forward(_trsm_fwd_saving))


def solve_triangular(a, b, upper, unitriangular=False, left=True):
    """``X`` with ``T X = B`` (``left=False``: ``X T = B``), ``T`` the upper or lower triangle
    of ``A`` (unit diagonal when ``unitriangular``: the diagonal is not read), ``B`` a
    ``(..., n, k)`` (right: ``(..., k, n)``) stack broadcast against ``A``'s batch. Only the
    triangle is read (BLAS ``trsm``); an exactly zero diagonal element raises ``LinAlgError``.
    Gradients (of every order, through this row): ``left``: ``gB = T^-T g``,
    ``gA = -gB X^T``; right: ``gB = g T^-T``, ``gA = -X^T gB``; ``gA`` restricted to the
    triangle (the diagonal excluded when unit)."""
    a = dispatch.tensor_operand(a, "solve_triangular")
    b = dispatch.tensor_operand(b, "solve_triangular")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(f"solve_triangular: last 2 dimensions of A must be square, "
                                    f"got shape {tuple(a.shape)}")
    if b.ndim < 2:
        raise ValueError(f"solve_triangular: B must be at least 2-d, got shape {tuple(b.shape)}")
    return dispatch.composite(SOLVE_TRIANGULAR, a, b, upper=bool(upper), left=bool(left),
                              unitriangular=bool(unitriangular))


def getrf(a):
    """LAPACK ``getrf`` over a stack: the packed ``LU``, 1-based ``int32`` pivots and the
    ``info`` codes (``k > 0``: ``U[k-1, k-1]`` is exactly zero)."""
    from scipy.linalg import lapack

    fn, = lapack.get_lapack_funcs(("getrf",), (a,))
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    lu = np.empty_like(flat)
    piv = np.empty((flat.shape[0], min(a.shape[-2:])), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    with blas_pool.small_call(a.shape[-1]):
        for i, m in enumerate(flat):
            lu[i], p, info[i] = fn(m)
            piv[i] = p + 1
    return (lu.reshape(a.shape), piv.reshape(batch + (piv.shape[-1],)),
            info.reshape(batch))


def pivots_to_permutation(pivots, n):
    """The permutation matrices ``P`` (``A = P L U``) of 1-based LAPACK ``pivots`` (row ``i``
    swapped with row ``pivots[i] - 1`` in turn), as a NumPy array ``(..., n, n)``."""
    piv = np.asarray(pivots).reshape(-1, pivots.shape[-1]) - 1
    out = np.zeros((piv.shape[0], n, n))
    for b, row in enumerate(piv):
        perm = np.arange(n)
        for i, j in enumerate(row):
            perm[i], perm[j] = perm[j], perm[i]
        out[b, perm, np.arange(n)] = 1.0
    return out.reshape(tuple(pivots.shape[:-1]) + (n, n))


def _perm_fwd(ctx, pivots, n, dtype):
    return pivots_to_permutation(pivots, n).astype(dtype)


# the permutation matrices of LU pivots as a row (no derivative: ``dtype_rule="bool"``), so that
# the LU backward and jvp read them as a value of the graph, never on the host (a compiled
# program computes them from each call's pivots)
PIVOT_PERMUTATION = def_composite(
    "lu_pivot_permutation", "LuPivotPermutationBackward0", ("pivots",), _perm_fwd, None,
    attrs=("n", "dtype"), dtype_rule="bool",
    batch_rule=lambda args, batched, **attrs: dispatch.composite(PIVOT_PERMUTATION, args[0],
                                                                 **attrs),
    cuda_forward=torch_cuda.host_forward(_perm_fwd))


def permutation(pivots, n, like):
    """The permutation matrices ``P`` (``A = P L U``, ``(..., n, n)``) of 1-based LAPACK
    ``pivots``, in ``like``'s dtype and on its device (not differentiable)."""
    return dispatch.composite(PIVOT_PERMUTATION, pivots, n=int(n), dtype=like.dtype.np.name)


def _lu_fwd(ctx, a):
    return getrf(a)


def _lu_back(ctx, g_lu, g_piv, g_info, a):
    """``A = P L U``, ``X = L^-1 P^T dA U^-1``: ``dL = L tril_-1(X)``, ``dU = triu(X) U``, so
    ``gA = P L^-T (tril_-1(L^T gL) + triu(gU U^T)) U^-T`` with ``gL``, ``gU`` the strict lower
    and upper parts of the packed gradient."""
    lu, piv, _ = lu_factor(a)
    n = a.shape[-1]
    L, U = triangle(lu, False, unitriangular=True), triangle(lu, True)
    gx = (triangle(matmul(_mT(L), triangle(g_lu, False, strict=True)), False, strict=True)
          + triangle(matmul(triangle(g_lu, True), _mT(U)), True))
    y = solve_triangular(_mT(L), gx, True, unitriangular=True)  # L^-T gX
    z = _mT(solve_triangular(U, _mT(y), True))                    # (L^-T gX) U^-T
    p = permutation(piv, n, a)
    return (matmul(p, z),)


def _lu_jvp(tangents, primals, outs):
    """``dLU = L tril_-1(X) + triu(X) U`` with ``X = L^-1 P^T dA U^-1`` (the pivots and info
    have no tangent)."""
    lu, piv = outs[0], outs[1]
    n = lu.shape[-1]
    L, U = triangle(lu, False, unitriangular=True), triangle(lu, True)
    p = permutation(piv, n, lu)
    y = solve_triangular(L, matmul(_mT(p), tangents[0]), False, unitriangular=True)
    x = _mT(solve_triangular(_mT(U), _mT(y), False))  # L^-1 P^T dA U^-1
    return (matmul(L, triangle(x, False, strict=True)) + matmul(triangle(x, True), U),
            None, None)


LU_FACTOR = def_composite("lu_factor", "LinalgLuFactorExBackward0", ("a",), _lu_fwd, _lu_back,
                          save=("a",), n_outputs=3, dtype_rule="float", jvp=_lu_jvp,
                          batch_rule=lambda args, batched: lu_factor(args[0]),
                          cuda_forward=torch_cuda.host_forward(_lu_fwd))


def lu_factor(a):
    """``(LU, pivots, info)`` of square matrices (``A = P L U``, partial pivoting): ``LU`` packs
    the unit lower ``L`` below the diagonal and ``U`` on and above it, ``pivots`` are LAPACK's
    1-based row swaps (int32) and ``info`` the codes (``k > 0``: ``U[k-1, k-1] == 0``). Only
    ``LU`` is differentiable (see ``_lu_back``)."""
    a = dispatch.tensor_operand(a, "lu_factor")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise NotImplementedError(f"linalg.lu_factor: only square matrices are supported here, "
                                  f"got shape {tuple(a.shape)}")
    if a.dtype.np.kind not in "f":
        raise TypeError(f"linalg.lu_factor: expected a floating point tensor, got {a.dtype}")
    return dispatch.composite(LU_FACTOR, a)


def potrf_info(a):
    """LAPACK ``potrf``'s ``info`` over a stack of symmetric matrices (read from the lower
    triangle): 0, or the order ``k`` of the first leading minor that is not positive definite."""
    from scipy.linalg import lapack

    fn, = lapack.get_lapack_funcs(("potrf",), (a,))
    flat = a.reshape((-1,) + a.shape[-2:])
    with blas_pool.small_call(a.shape[-1]):
        info = [fn(m, lower=1)[1] for m in flat]
    return np.array(info, np.int32).reshape(a.shape[:-2])


def _stack_lapack(name, a, *extra, **kwargs):
    """Run the LAPACK routine ``name`` (the prefix from ``a``'s dtype) on each matrix of the
    stack ``a`` (with the matching matrices of ``extra``); returns the per-matrix results."""
    from scipy.linalg import lapack

    fn, = lapack.get_lapack_funcs((name,), (a,))
    flat = a.reshape((-1,) + a.shape[-2:])
    rest = [e.reshape((flat.shape[0],) + e.shape[-2:]) for e in extra]
    with blas_pool.small_call(a.shape[-1]):
        return [fn(m, *(r[i] for r in rest), **kwargs) for i, m in enumerate(flat)]


def sytrf(a, hermitian=False):
    """LAPACK's Bunch-Kaufman ``A = L D L^T`` (``L D L^H`` when ``hermitian``) of a stack of
    symmetric matrices, read from the lower triangle: ``(LD, pivots, info)`` in LAPACK's
    compact form (``LD`` lower triangular, 1-based int32 pivots, negative for 2x2 blocks)."""
    runs = _stack_lapack("hetrf" if hermitian and a.dtype.kind == "c" else "sytrf", a, lower=1)
    batch = a.shape[:-2]
    ld = np.tril(np.stack([r[0] for r in runs])).reshape(a.shape)
    piv = np.stack([r[1] for r in runs]).astype(np.int32).reshape(batch + (a.shape[-1],))
    info = np.array([r[2] for r in runs], np.int32).reshape(batch)
    return ld, piv, info


def sytrs(ld, pivots, b, hermitian=False):
    """``X`` with ``A X = B`` given ``sytrf``'s ``(LD, pivots)`` (LAPACK ``sytrs``/``hetrs``),
    over broadcast stacks."""
    from scipy.linalg import lapack

    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + ld.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    piv = np.broadcast_to(pivots, batch + pivots.shape[-1:])
    dtype = np.result_type(ld, b)
    fn, = lapack.get_lapack_funcs(("hetrs" if hermitian and dtype.kind == "c" else "sytrs",),
                                  (ld.astype(dtype),))
    flat = [x.reshape((-1,) + x.shape[len(batch):]) for x in (ld, piv, b)]
    out = np.stack([fn(m.astype(dtype), p, r.astype(dtype), lower=1)[0]
                    for m, p, r in zip(*flat)]) if flat[0].shape[0] else np.empty((0,) + b.shape)
    return out.reshape(batch + b.shape[-2:])


# --- the matrix exponential ----------------------------------------------------------------------
def _expm_fwd(ctx, a):
    import scipy.linalg

    return np.ascontiguousarray(scipy.linalg.expm(a)).astype(a.dtype, copy=False)


def _frechet(a, e):
    """The Frechet derivative ``L(A, E) = d/dh exp(A + h E)`` at 0: the top-right block of
    ``exp([[A, E], [0, A]])`` (Mathias 1996), through this row again (any order)."""
    from .shape import cat

    n = a.shape[-1]
    zero = _const(np.zeros(tuple(a.shape)), a)
    big = cat([cat([a, e], -1), cat([zero, a], -1)], -2)
    return matrix_exp(big)[..., :n, n:]


def _expm_back(ctx, g, a):
    """``gA = L(A^H, g)``: the adjoint of the Frechet derivative is the derivative at ``A^H``."""
    at = _mT(a)
    if at.is_complex():
        from .complex import conj

        at = conj(at)
    return (_frechet(at, g),)


EXPM = def_composite("matrix_exp", "LinalgMatrixExpBackward0", ("a",), _expm_fwd, _expm_back,
                     save=("a",), complex_ok=True,
                     jvp=lambda tangents, primals, outs: _frechet(primals[0], tangents[0]),
                     batch_rule=lambda args, batched: matrix_exp(args[0]),
                     cuda_forward=torch_cuda.host_forward(_expm_fwd))


def matrix_exp(a):
    """``exp(A) = sum_k A^k / k!`` of square matrices ``(..., n, n)`` (SciPy's scaling and
    squaring Pade forward); ``gA = L(A^H, g)``, the top-right block of
    ``exp([[A^H, g], [0, A^H]])``, and the jvp ``L(A, dA)``: every order, through this row."""
    a = dispatch.tensor_operand(a, "matrix_exp")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, got shape "
                           f"{tuple(a.shape)}")
    return dispatch.composite(EXPM, a)
