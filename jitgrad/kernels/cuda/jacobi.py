"""Batched small-matrix Jacobi methods on CUDA: cyclic Jacobi for ``eigh``, one-sided
(Hestenes) Jacobi for ``svd``/``svdvals``/``pinv`` (Note [cuda solver layout] in
``kernels.cuda.solver``: one thread per matrix, scratch in device buffers, status flags read back
once to raise NumPy's ``LinAlgError``)."""
from __future__ import annotations

import math

import numpy as np
from numba import cuda

from . import backend as cuda_backend
from .solver import MAX_SWEEPS, _check, _launch, _mat, _off, _tol, load_matrix


@cuda.jit(device=True)
def _rotate(A, a0, step, pj, pk, count, c, sn):
    """The plane rotation (x, y) <- (c x - sn y, sn x + c y) of the two strided vectors
    x_i = A[a0 + pj + i step], y_i = A[a0 + pk + i step], i < count (two columns or two rows
    of a matrix), in float64."""
    for i in range(count):
        x = float(A[a0 + pj + i * step])
        y = float(A[a0 + pk + i * step])
        A[a0 + pj + i * step] = c * x - sn * y
        A[a0 + pk + i * step] = sn * x + c * y


@cuda.jit(device=True)
def _swap(A, a0, step, pj, pk, count):
    """Swap the strided vectors A[a0 + pj + i step] and A[a0 + pk + i step], i < count."""
    for i in range(count):
        tmp = A[a0 + pj + i * step]
        A[a0 + pj + i * step] = A[a0 + pk + i * step]
        A[a0 + pk + i * step] = tmp

@cuda.jit(device=True)
def _jacobi_svd(W, w0, w_rs, w_cs, V, v0, v_rs, v_cs, p, q, tol, want_v, s, s0):
    """One-sided (Hestenes) Jacobi on the p x q (p >= q) matrix W: rotate column pairs (j, k)
    by the angle zeroing their inner product gamma, t = sign(z) / (|z| + sqrt(1 + z^2)),
    z = (beta - alpha) / (2 gamma) (alpha, beta the squared column norms), accumulating the
    rotations in V (q x q, from I) when ``want_v``. Converged: no pair with
    |gamma| > tol sqrt(alpha beta) among columns not negligible (norm^2 > (tol ||W||_F)^2).
    Then s_j = ||W_:j||, W_:j /= s_j, sorted descending (columns of W and V swapped along).
    Returns 1 when converged, 0 when not or when W holds a NaN/inf (LAPACK then fails)."""
    fro = 0.0
    for i in range(p):
        for j in range(q):
            x = float(W[w0 + i * w_rs + j * w_cs])
            fro += x * x
    if not math.isfinite(fro):
        return 0
    floor = tol * tol * fro
    if want_v:
        for i in range(q):
            for j in range(q):
                V[v0 + i * v_rs + j * v_cs] = 1.0 if i == j else 0.0
    ok = 0
    for sweep in range(MAX_SWEEPS):
        rotated = False
        for j in range(q - 1):
            for k in range(j + 1, q):
                alpha = 0.0
                beta = 0.0
                gamma = 0.0
                for i in range(p):
                    x = float(W[w0 + i * w_rs + j * w_cs])
                    y = float(W[w0 + i * w_rs + k * w_cs])
                    alpha += x * x
                    beta += y * y
                    gamma += x * y
                if alpha <= floor or beta <= floor or abs(gamma) <= tol * math.sqrt(alpha * beta):
                    continue
                rotated = True
                z = (beta - alpha) / (2.0 * gamma)
                if abs(z) > 1e150:
                    t = 0.5 / z
                else:
                    t = math.copysign(1.0, z) / (abs(z) + math.sqrt(1.0 + z * z))
                c = 1.0 / math.sqrt(1.0 + t * t)
                sn = c * t
                _rotate(W, w0, w_rs, j * w_cs, k * w_cs, p, c, sn)
                if want_v:
                    _rotate(V, v0, v_rs, j * v_cs, k * v_cs, q, c, sn)
        if not rotated:
            ok = 1
            break
    for j in range(q):
        nrm = 0.0
        for i in range(p):
            x = float(W[w0 + i * w_rs + j * w_cs])
            nrm += x * x
        nrm = math.sqrt(nrm)
        s[s0 + j] = nrm
        if nrm > 0.0:
            for i in range(p):
                W[w0 + i * w_rs + j * w_cs] = W[w0 + i * w_rs + j * w_cs] / nrm
    for j in range(q - 1):  # selection sort, descending
        best = j
        for k in range(j + 1, q):
            if s[s0 + k] > s[s0 + best]:
                best = k
        if best != j:
            tmp = s[s0 + j]
            s[s0 + j] = s[s0 + best]
            s[s0 + best] = tmp
            _swap(W, w0, w_rs, j * w_cs, best * w_cs, p)
            if want_v:
                _swap(V, v0, v_rs, j * v_cs, best * v_cs, q)
    if want_v:
        _complete_columns(W, w0, w_rs, w_cs, p, q, s, s0, math.sqrt(floor))
    return ok


@cuda.jit(device=True)
def _complete_columns(W, w0, w_rs, w_cs, p, q, s, s0, negligible):
    """Columns of W whose singular value is negligible (at most ``negligible``: a
    rank-deficient input) are zero or rounding noise after the normalisation, never rotated
    against the others; LAPACK returns orthonormal columns there, so replace each with the
    unit vector e_r that keeps the most length after removing its components along the columns
    before it (Gram-Schmidt, twice for accuracy), normalised. The singular values stay."""
    for j in range(q):
        if s[s0 + j] > negligible:
            continue
        best_r = 0
        best_n = -1.0
        for r in range(p):  # residual norm^2 of e_r: 1 - sum_l W[r, l]^2
            acc = 1.0
            for l in range(j):
                x = float(W[w0 + r * w_rs + l * w_cs])
                acc -= x * x
            if acc > best_n:
                best_n = acc
                best_r = r
        for i in range(p):
            W[w0 + i * w_rs + j * w_cs] = 1.0 if i == best_r else 0.0
        for _ in range(2):
            for l in range(j):
                dot = 0.0
                for i in range(p):
                    dot += float(W[w0 + i * w_rs + l * w_cs]) * float(W[w0 + i * w_rs + j * w_cs])
                for i in range(p):
                    W[w0 + i * w_rs + j * w_cs] = (float(W[w0 + i * w_rs + j * w_cs])
                                                   - dot * float(W[w0 + i * w_rs + l * w_cs]))
            nrm = 0.0
            for i in range(p):
                x = float(W[w0 + i * w_rs + j * w_cs])
                nrm += x * x
            nrm = math.sqrt(nrm)
            for i in range(p):
                W[w0 + i * w_rs + j * w_cs] = W[w0 + i * w_rs + j * w_cs] / nrm


@cuda.jit
def _eigh_kernel(a, a_off, bshape, a_bst, a_rs, a_cs, n, nbatch, lower, tol, work, w, v, status):
    """A = V diag(w) V^T for the symmetric A taken from its lower (``lower``) or upper triangle,
    by cyclic Jacobi: for each pair p < q, the rotation J (c = 1 / sqrt(1 + t^2), s = t c,
    t = sign(th) / (|th| + sqrt(th^2 + 1)), th = (A_qq - A_pp) / (2 A_pq)) makes A' = J^T A J
    zero at (p, q); V accumulates J. Rotations are skipped where |A_pq| <= tol ||A||_F; a sweep
    with none converges (else status[t] = 1 after MAX_SWEEPS). w = diag(A) ascending, V's
    columns sorted with it. A NaN/inf input gives NaN everywhere, as LAPACK."""
    t = cuda.grid(1)
    while t < nbatch:
        base = a_off + _off(t, bshape, a_bst)
        o = t * n * n
        fro = 0.0
        for i in range(n):
            for j in range(n):
                if (i >= j) == (lower == 1):
                    x = a[base + i * a_rs + j * a_cs]
                else:
                    x = a[base + j * a_rs + i * a_cs]
                work[o + i * n + j] = x
                v[o + i * n + j] = 1.0 if i == j else 0.0
                fro += float(x) * float(x)
        status[t] = 0
        if not math.isfinite(fro):
            for i in range(n):
                w[t * n + i] = math.nan
                for j in range(n):
                    v[o + i * n + j] = math.nan
            t += cuda.gridsize(1)
            continue
        thresh = tol * math.sqrt(fro)
        ok = False
        for sweep in range(MAX_SWEEPS):
            rotated = False
            for p in range(n - 1):
                for q in range(p + 1, n):
                    apq = float(work[o + p * n + q])
                    if abs(apq) <= thresh:
                        continue
                    rotated = True
                    th = (float(work[o + q * n + q]) - float(work[o + p * n + p])) / (2.0 * apq)
                    if abs(th) > 1e150:
                        tt = 0.5 / th
                    else:
                        tt = math.copysign(1.0, th) / (abs(th) + math.sqrt(th * th + 1.0))
                    c = 1.0 / math.sqrt(tt * tt + 1.0)
                    s = tt * c
                    _rotate(work, o, n, p, q, n, c, s)  # A J (columns p, q)
                    _rotate(work, o, 1, p * n, q * n, n, c, s)  # J^T (A J) (rows p, q)
                    work[o + p * n + q] = 0.0
                    work[o + q * n + p] = 0.0
                    _rotate(v, o, n, p, q, n, c, s)  # V J
            if not rotated:
                ok = True
                break
        if not ok:
            status[t] = 1
        for i in range(n):
            w[t * n + i] = work[o + i * n + i]
        for j in range(n - 1):  # selection sort, ascending
            best = j
            for k in range(j + 1, n):
                if w[t * n + k] < w[t * n + best]:
                    best = k
            if best != j:
                tmp = w[t * n + j]
                w[t * n + j] = w[t * n + best]
                w[t * n + best] = tmp
                _swap(v, o, n, j, best, n)
        t += cuda.gridsize(1)


@cuda.jit
def _svd_kernel(a, a_off, bshape, a_bst, a_rs, a_cs, p, q, nbatch, tol, wbuf, w_rs, w_cs, vbuf,
                v_rs, v_cs, want_v, s, status):
    """A = W diag(s) V^T for the p x q (p >= q) matrix read through (a_rs, a_cs) (a wide input
    is passed transposed): W (at t p q, element strides w_rs, w_cs) starts as A, then
    ``_jacobi_svd``. The caller picks the strides so W and V land as U and V^T (or V^T and U
    for a transposed input). status[t] = 1: not converged or not finite."""
    t = cuda.grid(1)
    while t < nbatch:
        base = a_off + _off(t, bshape, a_bst)
        w0 = t * p * q
        load_matrix(a, base, a_rs, a_cs, p, q, wbuf, w0, w_rs, w_cs)
        ok = _jacobi_svd(wbuf, w0, w_rs, w_cs, vbuf, t * q * q, v_rs, v_cs, p, q, tol, want_v,
                         s, t * q)
        status[t] = 1 - ok
        t += cuda.gridsize(1)


@cuda.jit(device=True)
def _scaled_product(X, x0, rows, Y, y0, cols, s, s0, k, out, o):
    """out = X diag(s) Y^T: out[i, j] = sum_kk X[i, kk] s[kk] Y[j, kk] for the rows x k matrix X
    at ``x0`` and the cols x k matrix Y at ``y0`` (both C order), into rows x cols ``out`` at
    ``o`` (the pseudo-inverse from the SVD's factors)."""
    for i in range(rows):
        for j in range(cols):
            acc = 0.0
            for kk in range(k):
                acc += X[x0 + i * k + kk] * s[s0 + kk] * Y[y0 + j * k + kk]
            out[o + i * cols + j] = acc


@cuda.jit
def _pinv_kernel(a, a_off, bshape, a_bst, a_rs, a_cs, p, q, nbatch, tol, rcond, wide, wbuf,
                 vbuf, s, out, status):
    """P = A^+ through the SVD A = W S V^T (``_jacobi_svd`` on A, or on A^T when ``wide``):
    s_k kept where s_k > rcond max(s), P = V S^+ W^T (n x m), or W S^+ V^T for A^T."""
    t = cuda.grid(1)
    while t < nbatch:
        base = a_off + _off(t, bshape, a_bst)
        w0 = t * p * q
        v0 = t * q * q
        load_matrix(a, base, a_rs, a_cs, p, q, wbuf, w0, q, 1)
        ok = _jacobi_svd(wbuf, w0, q, 1, vbuf, v0, q, 1, p, q, tol, 1, s, t * q)
        status[t] = 1 - ok
        cutoff = rcond * s[t * q] if q > 0 else 0.0
        for k in range(q):
            x = s[t * q + k]
            s[t * q + k] = 1.0 / x if x > cutoff else 0.0
        o = t * p * q
        if wide:  # A^T = W S V^T: P = W S^+ V^T, p x q (= n x m)
            _scaled_product(wbuf, w0, p, vbuf, v0, q, s, t * q, q, out, o)
        else:  # A = W S V^T: P = V S^+ W^T, q x p (= n x m)
            _scaled_product(vbuf, v0, q, wbuf, w0, p, s, t * q, q, out, o)
        t += cuda.gridsize(1)


def eigh(a, lower=True):
    """(w ascending, V) of the symmetric stack (from its lower or upper triangle)."""
    bshape = tuple(a.shape[:-2])
    n = a.shape[-1]
    w = cuda_backend.empty(bshape + (n,), a.dtype, a.index)
    v = cuda_backend.empty(a.shape, a.dtype, a.index)
    nb = math.prod(bshape)
    if v.size == 0:
        return w, v
    work = cuda_backend.empty((nb * n * n,), a.dtype, a.index)
    status = cuda_backend.empty((nb,), np.int64, a.index)
    _launch(_eigh_kernel, nb, a.index, *_mat(a, bshape), n, nb, 1 if lower else 0,
            _tol(a.dtype, n), work.buffer, w.buffer, v.buffer, status.buffer)
    _check(status, "Eigenvalues did not converge")
    return w, v


def svd(a, compute_uv=True):
    """Reduced SVD (U, s, Vh) of the (..., m, n) stack, s descending; s alone when not
    ``compute_uv``. A wide matrix is factored as A^T = W S V^T, so U = V and Vh = W^T: the
    kernel writes W and V straight into Vh's and U's buffers through transposed strides."""
    bshape = tuple(a.shape[:-2])
    m, n = a.shape[-2:]
    k = min(m, n)
    tall = m >= n
    p, q = (m, n) if tall else (n, m)
    dt, idx = a.dtype, a.index
    nb = math.prod(bshape)
    s = cuda_backend.empty(bshape + (k,), dt, idx)
    if compute_uv:
        u = cuda_backend.empty(bshape + (m, k), dt, idx)
        vh = cuda_backend.empty(bshape + (k, n), dt, idx)
    if nb == 0 or k == 0:
        if compute_uv:
            return cuda_backend.zeros(u.shape, dt, idx), s, cuda_backend.zeros(vh.shape, dt, idx)
        return s
    status = cuda_backend.empty((nb,), np.int64, idx)
    if not compute_uv:
        wbuf = cuda_backend.empty((nb * p * q,), dt, idx)
        _launch(_svd_kernel, nb, idx, *_mat(a, bshape, not tall), p, q, nb, _tol(dt, p),
                wbuf.buffer, q, 1, wbuf.buffer, q, 1, 0, s.buffer, status.buffer)
        _check(status, "SVD did not converge")
        return s
    if tall:  # W = U (m x n, rows of q), V = Vh^T
        wargs = (u.buffer, q, 1, vh.buffer, 1, q)
    else:     # W = Vh^T (n x m, Vh's rows of p), V = U
        wargs = (vh.buffer, 1, p, u.buffer, q, 1)
    _launch(_svd_kernel, nb, idx, *_mat(a, bshape, not tall), p, q, nb, _tol(dt, p), *wargs,
            1, s.buffer, status.buffer)
    _check(status, "SVD did not converge")
    return u, s, vh


def pinv(a, rcond):
    """Moore-Penrose pseudo-inverse by the SVD, NumPy's rule: singular values
    s > rcond * max(s) inverted, the rest dropped."""
    bshape = tuple(a.shape[:-2])
    m, n = a.shape[-2:]
    tall = m >= n
    p, q = (m, n) if tall else (n, m)
    dt, idx = a.dtype, a.index
    nb = math.prod(bshape)
    out = cuda_backend.empty(bshape + (n, m), dt, idx)
    if out.size == 0 or nb == 0:
        return cuda_backend.zeros(out.shape, dt, idx)
    wbuf = cuda_backend.empty((nb * p * q,), dt, idx)
    vbuf = cuda_backend.empty((nb * q * q,), dt, idx)
    s = cuda_backend.empty((nb * q,), dt, idx)
    status = cuda_backend.empty((nb,), np.int64, idx)
    _launch(_pinv_kernel, nb, idx, *_mat(a, bshape, not tall), p, q, nb, _tol(dt, p),
            float(rcond), 0 if tall else 1, wbuf.buffer, vbuf.buffer, s.buffer, out.buffer,
            status.buffer)
    _check(status, "SVD did not converge")
    return out
