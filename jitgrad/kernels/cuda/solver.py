"""Batched small-matrix solvers on CUDA: LU with partial pivoting (inv, det, slogdet, solve),
Cholesky and Householder QR here; cyclic Jacobi (eigh) and one-sided Jacobi (svd, svdvals,
pinv) in ``kernels.cuda.jacobi``, which shares this module's layout helpers.

Note [cuda solver layout]: one thread per matrix of the (broadcast) batch, grid-stride over the
batch. Inputs are strided CudaArrays read in place through their batch, row and column strides
(a broadcast batch dim has stride 0: nothing is materialised); each thread factors its matrix in
its own slice of a device scratch buffer (``nbatch * m * n`` elements) and writes contiguous
outputs. Nothing goes to the host, except the per-matrix status flags of the ops whose CPU path
raises ``LinAlgError`` (singular inv/solve, non-positive-definite Cholesky, non-converged
eigh/svd): the op reads them back once after the kernel to raise the same error eagerly, as
PyTorch's ``linalg_*_ex`` info checks do (the documented exception to "no host round trips").

Honest limits: a thread per matrix is fine for many small matrices (the batched case this is for)
and slow for one large matrix: an ``n x n`` LU is ``O(n^3)`` work in a single thread, and the
Jacobi methods cost a few ``O(n^3)`` sweeps each. The fast path for large matrices is cuSOLVER
(e.g. through nvmath-python), which numba-cuda does not bind. Iterations: at most
``MAX_SWEEPS`` sweeps with a convergence test (rotations skipped below ``tol`` relative to the
matrix's Frobenius norm), in float64 arithmetic for float64 and float32 storage alike.

Sign conventions: QR follows LAPACK's ``dgeqrf``/``dorgqr`` (``dlarfg``'s reflector,
``R_ii = -sign(alpha) * norm``), so Q and R equal NumPy's up to rounding. Jacobi's eigenvectors
and singular vectors are unique only up to sign (LAPACK's come from a different algorithm):
equal to NumPy's up to a sign per column (per pair ``u_i, v_i`` for the SVD).
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda

from . import backend as cuda_backend

#: the Jacobi methods' sweep limit (they converge quadratically: ~6-10 sweeps for small n)
MAX_SWEEPS = 60
_off = cuda_backend.strided_offset


# ---- device functions ----------------------------------------------------------------------
@cuda.jit(device=True)
def load_matrix(a, base, a_rs, a_cs, rows, cols, dst, d0, d_rs, d_cs):
    """dst[i, j] = a[i, j] for the rows x cols matrix at ``base`` of ``a`` (row and column
    strides a_rs, a_cs) into a thread's scratch at ``d0`` of ``dst`` (strides d_rs, d_cs)."""
    for i in range(rows):
        for j in range(cols):
            dst[d0 + i * d_rs + j * d_cs] = a[base + i * a_rs + j * a_cs]


@cuda.jit(device=True)
def _reflect_column(work, w0, n, i, m, tau, mat, m0, ld, j):
    """mat[i:m, j] -= tau v (v . mat[i:m, j]): the Householder reflector H_i = I - tau v v^T
    applied to column j of the matrix at ``m0`` of ``mat`` (row stride ``ld``), v = (1,
    work[i+1:m, i]) stored below the diagonal of the m x n ``work`` at ``w0`` (dgeqrf's layout)."""
    acc = mat[m0 + i * ld + j]
    for rr in range(i + 1, m):
        acc += work[w0 + rr * n + i] * mat[m0 + rr * ld + j]
    acc *= tau
    mat[m0 + i * ld + j] = mat[m0 + i * ld + j] - acc
    for rr in range(i + 1, m):
        mat[m0 + rr * ld + j] = mat[m0 + rr * ld + j] - acc * work[w0 + rr * n + i]


# ---- kernels -------------------------------------------------------------------------------
@cuda.jit
def _lu_kernel(a, a_off, bshape, a_bst, a_rs, a_cs, n, nbatch, b, b_off, b_bst, b_rs, b_cs,
               nrhs, mode, work, piv, out, out2, status):
    """Per matrix t: P A = L U by Doolittle elimination with partial pivoting (the largest
    |entry| of the column, first on ties; a zero pivot marks A singular and skips that column,
    as LAPACK's getrf), in ``work`` (n x n at t n^2), pivots in ``piv``. Then by ``mode``:
    0 slogdet: out = sign = (-1)^swaps prod sign(U_kk), out2 = sum log|U_kk| (0 and -inf when
    singular); 1 det: out = sign exp(logabs) (NumPy's det_from_slogdet); 2 solve: out (n x nrhs)
    = U^-1 L^-1 P b (b read through its strides); 3 inv: the same with b = I. Modes 2 and 3
    set status[t] = 1 for a singular A."""
    t = cuda.grid(1)
    while t < nbatch:
        base = a_off + _off(t, bshape, a_bst)
        w0 = t * n * n
        load_matrix(a, base, a_rs, a_cs, n, n, work, w0, n, 1)
        sign = 1.0
        logabs = 0.0
        singular = False
        for k in range(n):
            pk = k
            big = abs(work[w0 + k * n + k])
            for i in range(k + 1, n):
                v = abs(work[w0 + i * n + k])
                if v > big:
                    big = v
                    pk = i
            piv[t * n + k] = pk
            if pk != k:
                sign = -sign
                for j in range(n):
                    tmp = work[w0 + k * n + j]
                    work[w0 + k * n + j] = work[w0 + pk * n + j]
                    work[w0 + pk * n + j] = tmp
            d = work[w0 + k * n + k]
            if d == 0.0:
                singular = True
                continue
            if d < 0.0:
                sign = -sign
            logabs += math.log(abs(d))
            for i in range(k + 1, n):
                f = work[w0 + i * n + k] / d
                work[w0 + i * n + k] = f
                for j in range(k + 1, n):
                    work[w0 + i * n + j] = work[w0 + i * n + j] - f * work[w0 + k * n + j]
        if mode == 0 or mode == 1:
            if singular:
                sign = 0.0
                logabs = -math.inf
            if mode == 0:
                out[t] = sign
                out2[t] = logabs
            else:
                out[t] = sign * math.exp(logabs)
        else:
            status[t] = 1 if singular else 0
            if not singular:
                bb = b_off + _off(t, bshape, b_bst)
                o = t * n * nrhs
                for c in range(nrhs):
                    for i in range(n):
                        if mode == 3:
                            out[o + i * nrhs + c] = 1.0 if i == c else 0.0
                        else:
                            out[o + i * nrhs + c] = b[bb + i * b_rs + c * b_cs]
                    for k in range(n):  # x = P b
                        pk = piv[t * n + k]
                        if pk != k:
                            tmp = out[o + k * nrhs + c]
                            out[o + k * nrhs + c] = out[o + pk * nrhs + c]
                            out[o + pk * nrhs + c] = tmp
                    for i in range(n):  # L y = P b (unit diagonal)
                        acc = out[o + i * nrhs + c]
                        for j in range(i):
                            acc -= work[w0 + i * n + j] * out[o + j * nrhs + c]
                        out[o + i * nrhs + c] = acc
                    for i in range(n - 1, -1, -1):  # U x = y
                        acc = out[o + i * nrhs + c]
                        for j in range(i + 1, n):
                            acc -= work[w0 + i * n + j] * out[o + j * nrhs + c]
                        out[o + i * nrhs + c] = acc / work[w0 + i * n + i]
        t += cuda.gridsize(1)


@cuda.jit
def _cholesky_kernel(a, a_off, bshape, a_bst, a_rs, a_cs, n, nbatch, out, status):
    """A = L L^T from A's lower triangle (LAPACK potrf 'L'): column by column,
    L_jj = sqrt(A_jj - sum_k<j L_jk^2), L_ij = (A_ij - sum_k<j L_ik L_jk) / L_jj (i > j);
    the upper triangle of ``out`` is zero. A pivot <= 0 sets status[t] = 1 (not positive
    definite; a NaN pivot passes, as in NumPy)."""
    t = cuda.grid(1)
    while t < nbatch:
        base = a_off + _off(t, bshape, a_bst)
        o = t * n * n
        status[t] = 0
        for i in range(n):
            for j in range(i + 1, n):
                out[o + i * n + j] = 0.0
        for j in range(n):
            s = a[base + j * a_rs + j * a_cs]
            for k in range(j):
                x = out[o + j * n + k]
                s -= x * x
            if s <= 0.0:
                status[t] = 1
                break
            d = math.sqrt(s)
            out[o + j * n + j] = d
            for i in range(j + 1, n):
                s2 = a[base + i * a_rs + j * a_cs]
                for k in range(j):
                    s2 -= out[o + i * n + k] * out[o + j * n + k]
                out[o + i * n + j] = s2 / d
        t += cuda.gridsize(1)


@cuda.jit
def _qr_kernel(a, a_off, bshape, a_bst, a_rs, a_cs, m, n, nbatch, work, tau, q, r, want_q):
    """A = Q R by Householder reflections H_i = I - tau_i v v^T, LAPACK's dgeqrf + dorgqr:
    for column i < K = min(m, n), alpha = A_ii, x = A_i+1:m,i: x = 0 gives tau = 0 (H = I);
    else beta = -sign(alpha) hypot(alpha, ||x||), tau = (beta - alpha) / beta,
    v = (1, x / (alpha - beta)), R_ii = beta, and H_i is applied to the trailing columns.
    R (K x n) is the upper triangle; Q (m x K) = H_0 ... H_K-1 I[:, :K] accumulated backwards."""
    t = cuda.grid(1)
    K = min(m, n)
    while t < nbatch:
        base = a_off + _off(t, bshape, a_bst)
        w0 = t * m * n
        load_matrix(a, base, a_rs, a_cs, m, n, work, w0, n, 1)
        for i in range(K):
            alpha = float(work[w0 + i * n + i])
            xn = 0.0
            for rr in range(i + 1, m):
                x = float(work[w0 + rr * n + i])
                xn += x * x
            tv = 0.0
            if xn != 0.0:
                beta = -math.copysign(math.hypot(alpha, math.sqrt(xn)), alpha)
                tv = (beta - alpha) / beta
                scal = 1.0 / (alpha - beta)
                for rr in range(i + 1, m):
                    work[w0 + rr * n + i] = work[w0 + rr * n + i] * scal
                work[w0 + i * n + i] = beta
                for j in range(i + 1, n):
                    _reflect_column(work, w0, n, i, m, tv, work, w0, n, j)
            tau[t * K + i] = tv
        ro = t * K * n
        for i in range(K):
            for j in range(n):
                r[ro + i * n + j] = work[w0 + i * n + j] if j >= i else 0.0
        if want_q:
            qo = t * m * K
            for i in range(m):
                for j in range(K):
                    q[qo + i * K + j] = 1.0 if i == j else 0.0
            for i in range(K - 1, -1, -1):
                tv = tau[t * K + i]
                if tv == 0.0:
                    continue
                for j in range(i, K):
                    _reflect_column(work, w0, n, i, m, tv, q, qo, K, j)
        t += cuda.gridsize(1)


# ---- host side -----------------------------------------------------------------------------
def _mat(a, bshape, transposed=False):
    """Kernel arguments reading matrix stack ``a`` (broadcast to ``bshape``) in place."""
    rs, cs = a.elem_strides[-2], a.elem_strides[-1]
    if transposed:
        rs, cs = cs, rs
    return (a.buffer, a.offset, tuple(bshape) or (1,), cuda_backend.batch_strides(a, bshape), rs,
            cs)


def _launch(kern, nbatch, index, *args):
    blocks, threads = cuda_backend._launch_config(nbatch)
    with cuda.gpus[index]:
        kern[blocks, threads](*args)


def _check(status, msg):
    """Raise NumPy's LinAlgError when any matrix's status flag is set. This reads the flags back
    to the host: the one synchronising read these ops make (the documented exception, like
    PyTorch's ``linalg_*_ex`` info checks), so that the error is raised eagerly, as on the CPU."""
    if status.size and status.get().any():
        raise np.linalg.LinAlgError(msg)


def _tol(dt, n):
    """Jacobi's relative threshold: a few ulps of the storage dtype per row."""
    return float(np.finfo(dt).eps) * max(int(n), 1)


def _lu(a, mode, b=None, vec=False):
    bshape = tuple(a.shape[:-2])
    n = a.shape[-1]
    dt, idx = a.dtype, a.index
    if mode <= 1:
        out = cuda_backend.empty(bshape, dt, idx)
        out2 = cuda_backend.empty(bshape, dt, idx) if mode == 0 else out
        nb = out.size
        if nb == 0 or n == 0:
            if nb:
                cuda_backend.fill(out, 1)
                if mode == 0:
                    cuda_backend.fill(out2, 0)
            return (out, out2) if mode == 0 else out
        b_args = (a.buffer, a.offset, (0,), 0, 0, 0)
        status = cuda_backend.empty((1,), np.int64, idx)
    elif mode == 3:
        out = cuda_backend.empty(a.shape, dt, idx)
        nb = math.prod(bshape)
        b_args = (a.buffer, a.offset, (0,), 0, 0, n)
    else:
        if vec:  # b (n,) shared by every matrix of the batch (NumPy 2: 1-d b is one vector)
            out = cuda_backend.empty(bshape + (n,), dt, idx)
            b_args = (b.buffer, b.offset, (0,) * max(len(bshape), 1), b.elem_strides[0], 0, 1)
        else:
            bshape = tuple(np.broadcast_shapes(bshape, b.shape[:-2]))
            out = cuda_backend.empty(bshape + b.shape[-2:], dt, idx)
            b_args = (b.buffer, b.offset, cuda_backend.batch_strides(b, bshape), b.elem_strides[-2],
                      b.elem_strides[-1], b.shape[-1])
        nb = math.prod(bshape)
    if mode >= 2:
        if out.size == 0 or nb == 0:
            return out
        status = cuda_backend.empty((nb,), np.int64, idx)
    work = cuda_backend.empty((nb * n * n,), dt, idx)
    piv = cuda_backend.empty((nb * n,), np.int64, idx)
    _launch(_lu_kernel, nb, idx, *_mat(a, bshape), n, nb, *b_args, mode, work.buffer,
            piv.buffer, out.buffer, out2.buffer if mode == 0 else out.buffer, status.buffer)
    if mode == 0:
        return out, out2
    if mode >= 2:
        _check(status, "Singular matrix")
    return out


def slogdet(a):
    """(sign, log|det|) of the (..., n, n) stack: 0 and -inf for a singular matrix."""
    return _lu(a, 0)


def det(a):
    """det = sign exp(log|det|), as NumPy computes it."""
    return _lu(a, 1)


def inv(a):
    """A^-1 per matrix; LinAlgError('Singular matrix') when some A is singular."""
    return _lu(a, 3)


def solve(a, b):
    """x = A^-1 b with NumPy 2's rule: a 1-d b is one vector (result (..., n)), else b is a
    stack of (n, k) matrices broadcast against a's batch."""
    return _lu(a, 2, b, vec=b.ndim == 1)


def cholesky(a):
    """Lower Cholesky factors; LinAlgError when some matrix is not positive definite."""
    bshape = tuple(a.shape[:-2])
    n = a.shape[-1]
    out = cuda_backend.empty(a.shape, a.dtype, a.index)
    nb = math.prod(bshape)
    if out.size == 0:
        return out
    status = cuda_backend.empty((nb,), np.int64, a.index)
    _launch(_cholesky_kernel, nb, a.index, *_mat(a, bshape), n, nb, out.buffer, status.buffer)
    _check(status, "Matrix is not positive definite")
    return out


def qr(a):
    """Reduced QR: Q (..., m, K), R (..., K, n), K = min(m, n), LAPACK's signs."""
    bshape = tuple(a.shape[:-2])
    m, n = a.shape[-2:]
    K = min(m, n)
    dt, idx = a.dtype, a.index
    nb = math.prod(bshape)
    q = cuda_backend.empty(bshape + (m, K), dt, idx)
    r = cuda_backend.empty(bshape + (K, n), dt, idx)
    if nb == 0 or K == 0:
        return cuda_backend.zeros(q.shape, dt, idx), cuda_backend.zeros(r.shape, dt, idx)
    work = cuda_backend.empty((nb * m * n,), dt, idx)
    tau = cuda_backend.empty((nb * K,), dt, idx)
    _launch(_qr_kernel, nb, idx, *_mat(a, bshape), m, n, nb, work.buffer, tau.buffer, q.buffer,
            r.buffer, 1)
    return q, r
