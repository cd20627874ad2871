"""Forward-mode (jvp) rules of the ``ops.nplinalg`` rows, and the Tensor helpers both share.

Each rule is ``rule(tangents, primals, outs, **attrs)`` (Note [jvp rules] in
autograd/forward_ad.py) written with registry ops on Tensors, so it records a graph under grad
mode (reverse over forward) and carries the tangents of enclosing dual levels (forward over
forward, forward over reverse). ``tangents`` holds None for an input without one. Formulas
(Giles 2008, Murray 2016, Townsend 2016, Walter & Lehmann 2018), ``dA`` the input's tangent:

* ``inv``:      ``dB = -B dA B`` with ``B = A^-1``
* ``det``:      ``d det = det(A) tr(A^-1 dA)``
* ``slogdet``:  ``d log|det A| = tr(A^-1 dA)``; the sign's tangent is 0
* ``solve``:    ``X = A^-1 B``: ``dX = A^-1 (dB - dA X)``
* ``cholesky``: ``A = L L^T``: ``dL = L Phi(L^-1 sym(dA) L^-T)``, ``Phi`` the lower triangle with
  the diagonal halved (``sym``: as the backward, which reads a symmetric ``A``)
* ``eigh``:     ``A = V diag(w) V^T``, ``M = V^T dA V``: ``dw = diag(M)``, ``dV = V (F o M)``,
  ``F_ij = 1 / (w_j - w_i)`` off the diagonal (distinct eigenvalues)
* ``svdvals``:  ``ds_i = u_i^T dA v_i``
* ``svd``:      reduced ``A = U S V^T``, ``P = U^T dA V``: ``dS = diag(P)``,
  ``dU = U (F o (P S + S P^T)) + (I - U U^T) dA V S^-1``,
  ``dV = V (F o (S P + P^T S)) + (I - V V^T) dA^T U S^-1``, ``F_ij = 1 / (s_j^2 - s_i^2)``
  (distinct nonzero singular values)
* ``pinv``:     ``dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P`` (locally
  constant rank, Golub & Pereyra 1973)
* ``qr``:       ``m >= n``: ``X = Q^T dA R^-1``, ``dR = (triu(X) + tril(X, -1)^T) R``,
  ``dQ = (dA - Q dR) R^-1``; ``m < n``: ``A = [Y | Z]``, the square rule on ``Y`` gives
  ``dQ`` and ``dR1``, and ``dR2 = Q^T (dZ - dQ R2)``
"""
from __future__ import annotations

import numpy as np

from .core import dispatch
from .linalg import matmul
from .shape import squeeze, transpose, unsqueeze


def mT(x):
    """``x`` with its last two dims swapped (the matrix transpose of a stack)."""
    return transpose(x, -1, -2)


def constant_like(arr, like):
    """A constant Tensor (mask, identity) on ``like``'s device: uploaded there, never read
    back."""
    device = dispatch.device_of(like._data)
    return dispatch.Tensor._make(arr if device == "cpu" else dispatch.move(arr, device))


def inverse_gaps(e, msg, extra=None):
    """``F_ij = 1 / e_ij`` off the diagonal, 0 on it, for the gap matrices ``e``, as Tensor
    ops (the gaps depend on ``A``, so a double backward or a tangent flows through ``F``).
    Equal gaps (or ``extra`` > 0) raise ``msg``: this reads one number back to the host (a
    data-dependent error)."""
    from .reduce import sum as _sum

    n = e.shape[-1]
    dt = e.dtype.np
    off = constant_like((~np.eye(n, dtype=bool)).astype(dt), e)
    bad = _sum((e == 0) * off)
    if extra is not None:
        bad = bad + extra
    if bad.item() > 0:
        raise RuntimeError(msg)
    return off / (e + constant_like(np.eye(n, dtype=dt), e))


def _eye(n, like):
    return constant_like(np.eye(n, dtype=like.dtype.np), like)


def _trace_of_inv_times(a, ta):
    """``tr(A^-1 dA) = sum_ij (A^-1)_ji dA_ij`` over a stack of matrices."""
    from .nplinalg import inv
    from .reduce import sum as _sum

    return _sum(mT(inv(a)) * ta, (-2, -1))


def inv_jvp(tangents, primals, outs):
    b = outs[0]
    return -matmul(b, matmul(tangents[0], b))


def det_jvp(tangents, primals, outs):
    return outs[0] * _trace_of_inv_times(primals[0], tangents[0])


def slogdet_jvp(tangents, primals, outs):
    sign = outs[0]
    return (dispatch.zeros(sign.shape, sign.dtype, sign.device),
            _trace_of_inv_times(primals[0], tangents[0]))


def solve_jvp(tangents, primals, outs):
    from .nplinalg import solve

    (ta, tb), (a, b), x = tangents, primals, outs[0]
    vec = b.ndim == 1  # NumPy 2: one vector (x: (..., M)); else (..., M, K) stacks
    if vec:
        x = unsqueeze(x, -1)
        tb = None if tb is None else unsqueeze(tb, -1)
    rhs = tb
    if ta is not None:
        rhs = -matmul(ta, x) if rhs is None else rhs - matmul(ta, x)
    dx = solve(a, rhs)
    return squeeze(dx, -1) if vec else dx


def cholesky_jvp(tangents, primals, outs):
    from .nplinalg import inv

    L, ta = outs[0], tangents[0]
    n = L.shape[-1]
    half = constant_like((np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(L.dtype.np), L)
    linv = inv(L)
    x = matmul(linv, matmul((ta + mT(ta)) * 0.5, mT(linv)))
    return matmul(L, x * half)


def eigh_jvp(tangents, primals, outs, UPLO):
    from .reduce import sum as _sum

    w, v = outs
    av = matmul(tangents[0], v)
    m = matmul(mT(v), av)  # V^T dA V
    dw = _sum(v * av, -2)  # its diagonal
    f = inverse_gaps(unsqueeze(w, -2) - unsqueeze(w, -1),
                     "eigh: the tangent of eigenvectors is not defined for repeated eigenvalues")
    return dw, matmul(v, f * m)


def svdvals_jvp(tangents, primals, outs):
    from .nplinalg import svd
    from .reduce import sum as _sum

    u, _, vh = svd(primals[0])
    return _sum(matmul(mT(u), tangents[0]) * vh, -1)


def svd_jvp(tangents, primals, outs):
    from .reduce import sum as _sum

    (ta,), (a,), (u, s, vh) = tangents, primals, outs
    m, n = a.shape[-2], a.shape[-1]
    k = s.shape[-1]
    v = mT(vh)
    eye_k = _eye(k, s)
    S = unsqueeze(s, -2) * eye_k
    av = matmul(ta, v)  # dA V
    atu = matmul(mT(ta), u)  # dA^T U
    p = matmul(mT(u), av)  # U^T dA V
    ds = _sum(p * eye_k, -1)
    f = inverse_gaps(unsqueeze(s, -2) ** 2 - unsqueeze(s, -1) ** 2,
                     "svd: the tangent of singular vectors is not defined for repeated or zero "
                     "singular values", extra=_sum(s == 0) if k else None)
    du = matmul(u, f * (matmul(p, S) + matmul(S, mT(p))))
    dv = matmul(v, f * (matmul(S, p) + matmul(mT(p), S)))
    sinv = unsqueeze(1.0 / s, -2)  # columns scaled by 1 / s
    if m > k:
        du = du + (av - matmul(u, matmul(mT(u), av))) * sinv
    if n > k:
        dv = dv + (atu - matmul(v, matmul(vh, atu))) * sinv
    return du, ds, mT(dv)


def pinv_jvp(tangents, primals, outs, rcond):
    (ta,), (a,), p = tangents, primals, outs[0]
    m, n = a.shape[-2], a.shape[-1]
    pt, tat = mT(p), mT(ta)
    return (-matmul(p, matmul(ta, p))
            + matmul(matmul(p, pt), matmul(tat, _eye(m, a) - matmul(a, p)))
            + matmul(_eye(n, a) - matmul(p, a), matmul(tat, matmul(pt, p))))


def _qr_square_jvp(ta, q, r):
    """``m >= n``: ``(dQ, dR)`` of ``A = Q R`` along ``dA``."""
    from .nplinalg import solve

    n = r.shape[-1]
    upper = constant_like(np.triu(np.ones((n, n))).astype(r.dtype.np), r)
    strict = constant_like(np.tril(np.ones((n, n)), -1).astype(r.dtype.np), r)
    a_rinv = mT(solve(mT(r), mT(ta)))  # dA R^-1
    x = matmul(mT(q), a_rinv)
    dr = matmul(x * upper + mT(x * strict), r)
    dq = a_rinv - matmul(q, mT(solve(mT(r), mT(dr))))  # (dA - Q dR) R^-1
    return dq, dr


def qr_jvp(tangents, primals, outs):
    from .shape import cat

    (ta,), (a,), (q, r) = tangents, primals, outs
    m, n = a.shape[-2], a.shape[-1]
    if m >= n:
        return _qr_square_jvp(ta, q, r)
    dq, dr1 = _qr_square_jvp(ta[..., :, :m], q, r[..., :, :m])
    dr2 = matmul(mT(q), ta[..., :, m:] - matmul(dq, r[..., :, m:]))
    return dq, cat([dr1, dr2], -1)
