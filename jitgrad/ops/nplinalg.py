"""Differentiable linear algebra for ``jitgrad.numpy.linalg``: inverse, determinants, solve,
Cholesky, the symmetric eigendecomposition, pinv, SVD and QR, batched over leading dims like
NumPy, with their backward and forward-mode (jvp) rules.

Forwards are ``numpy.linalg``; backwards use Tensor ops (``matmul``, transposes and these rows
themselves), so double backward works. Derivative formulas (Giles 2008, Murray 2016):

* ``inv``:      ``gA = -B^T g B^T`` with ``B = A^-1``
* ``det``:      ``gA = g det(A) A^-T``
* ``slogdet``:  ``gA = g_logabsdet A^-T`` (the sign is piecewise constant)
* ``solve``:    ``x = A^-1 b``: ``gb = A^-T g``, ``gA = -gb x^T``
* ``cholesky``: ``A = L L^T``: ``gA = sym(L^-T Phi(L^T gL) L^-1)``, ``Phi`` = lower triangle with
  the diagonal halved, ``sym(X) = (X + X^T) / 2``
* ``eigh``:     ``A = V diag(w) V^T``: ``gA = V (diag(gw) + (V^T gV) / E) V^T``,
  ``E_ij = w_j - w_i`` (off-diagonal), for symmetric ``A``

On CUDA the forwards are ``kernels.cuda.solver``'s batched kernels (``ops.nplinalg_cuda``); the
backwards are the same Tensor-level rules, their constants (masks, identities) made on the
input's device.

Forward mode. Each rule is ``rule(tangents, primals, outs, **attrs)`` (Note [jvp rules] in
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

from ..graph.grad_mode import is_grad_enabled
from .core import dispatch
from .core import upper as _upper
from . import nplinalg_cuda, torch_cuda
from .linalg import matmul
from .core.registry import OPS, def_composite
from .reduce import sum as _sum, sum_to_shape
from .shape import cat, squeeze, transpose, unsqueeze


def _recorded() -> bool:
    """Whether this backward runs as recorded Tensor ops (create_graph, or a transform)."""
    return is_grad_enabled() or dispatch.transform_hook is not None


def _check_square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(
            f"{name}: last 2 dimensions of the array must be square, got shape {tuple(a.shape)}")


def _fwd(fn):
    def forward(ctx, *arrays):
        return fn(*arrays)

    return forward


# --- Tensor helpers of the backward and jvp rules ------------------------------------------
def _T(x):
    """``x`` with its last two dims swapped (the matrix transpose of a stack)."""
    return transpose(x, -1, -2)


@_upper.constant_maker
def _const(arr, like):
    """A constant Tensor (mask, identity) on ``like``'s device: uploaded there, never read
    back. ``arr`` depends on shapes and dtypes only (a compile trace bakes it in)."""
    device = dispatch.device_of(like._data)
    return dispatch.Tensor._make(arr if device == "cpu" else dispatch.move(arr, device))


def _check_fwd(ctx, x, bad, msg, linalg_error):
    flat = np.asarray(bad).reshape(-1)
    if flat.any():
        k = flat[np.flatnonzero(flat)[0]].item()
        raise (np.linalg.LinAlgError if linalg_error else RuntimeError)(msg.format(k=k))
    return x.copy()


# ``x`` passed through, after raising ``msg`` if any of ``bad`` is nonzero: a data-dependent
# error check as a row, for the recorded rules (create_graph, vmap, a compile trace), where
# reading ``bad`` on the host would refuse the transform (vmap, compile) or stop a capture; a
# compiled program then raises as eager does, at each call
CHECK = def_composite(
    "linalg_check", "LinalgCheckBackward0", ("x", "bad"), _check_fwd,
    lambda ctx, g: (g, None), attrs=("msg", "linalg_error"),
    jvp=lambda tangents, primals, outs, msg, linalg_error: tangents[0],
    batch_rule=lambda args, batched, **attrs: _check_batch(args, batched, attrs),
    cuda_forward=torch_cuda.host_forward(_check_fwd))


def _check_batch(args, batched, attrs):
    """vmap: the check sees every example's ``bad``; ``x`` gets the batch dim if it lacks it
    (the output is batched at 0)."""
    x, bad = args
    if batched[1] and not batched[0]:
        x = dispatch.Tensor.expand(unsqueeze(x, 0), (bad.shape[0],) + tuple(x.shape))
    return checked(x, bad, **attrs)


def checked(x, bad, msg, linalg_error=False):
    """``x``, after raising ``msg`` (``RuntimeError``, or ``LinAlgError``) if ``bad`` (a
    Tensor: a count, flags or LAPACK ``info`` codes of the failing cases) has a nonzero
    element, whose value fills ``{k}`` in ``msg``; differentiable in ``x`` (the identity)."""
    return dispatch.composite(CHECK, x, bad, msg=msg, linalg_error=bool(linalg_error))


def _inv_gaps(e, msg, extra=None):
    """``F_ij = 1 / e_ij`` off the diagonal, 0 on it, for the gap matrices ``e``, as Tensor
    ops (the gaps depend on ``A``, so a double backward or a tangent flows through ``F``).
    Equal gaps (or ``extra`` > 0) raise ``msg``: eagerly one number read back to the host;
    when recorded, the ``checked`` row (a compiled program raises at each call)."""
    n = e.shape[-1]
    dt = e.dtype.np
    off = _const((~np.eye(n, dtype=bool)).astype(dt), e)
    zero = (e == 0) * off
    bad = _sum(zero)
    if extra is not None:
        bad = bad + extra
    if _recorded():  # (a zero gap divides by 1 here: the check raises before F is used)
        return checked(off / (e + _const(np.eye(n, dtype=dt), e) + zero), bad, msg)
    if bad.item() > 0:
        raise RuntimeError(msg)
    return off / (e + _const(np.eye(n, dtype=dt), e))


def _eye(n, like):
    return _const(np.eye(n, dtype=like.dtype.np), like)


def _trace_of_inv_times(a, ta):
    """``tr(A^-1 dA) = sum_ij (A^-1)_ji dA_ij`` over a stack of matrices."""
    return _sum(_T(inv(a)) * ta, (-2, -1))


def _stacked(name):
    """The vmap rule of a one-input row whose forward works on stacks ``(..., m, n)``: the
    vmap batch is one more leading dim, so the row runs as it is (the rule looks the row up
    when it runs)."""
    def rule(args, batched, **attrs):
        return dispatch.composite(OPS[name], args[0], **attrs)
    return rule


# --- the rows ------------------------------------------------------------------------------
def _inv_jvp(tangents, primals, outs):
    b = outs[0]
    return -matmul(b, matmul(tangents[0], b))


INV = def_composite("inv", "LinalgInvExBackward0", ("a",), _fwd(np.linalg.inv),
                    lambda ctx, g, result: (-matmul(_T(result), matmul(g, _T(result))),),
                    save=("result",), jvp=_inv_jvp, batch_rule=_stacked("inv"),
                    cuda_forward=nplinalg_cuda.inv_forward)


def inv(a):
    """Matrix inverse ``B = A^-1``; ``gA = -B^T g B^T``."""
    a = dispatch.tensor_operand(a, "inv")
    _check_square("inv", a)
    return dispatch.composite(INV, a)


def _det_back(ctx, g, a, result):
    scale = unsqueeze(unsqueeze(g * result, -1), -1)
    return (scale * _T(inv(a)),)


def _det_jvp(tangents, primals, outs):
    return outs[0] * _trace_of_inv_times(primals[0], tangents[0])


DET = def_composite("det", "LinalgDetBackward0", ("a",), _fwd(np.linalg.det), _det_back,
                    save=("a", "result"), jvp=_det_jvp, batch_rule=_stacked("det"),
                    cuda_forward=nplinalg_cuda.det_forward)


def det(a):
    """Determinant; ``gA = g det(A) A^-T`` (needs an invertible ``A`` for the gradient)."""
    a = dispatch.tensor_operand(a, "det")
    _check_square("det", a)
    return dispatch.composite(DET, a)


def _slogdet_fwd(ctx, a):
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabs)


def _slogdet_back(ctx, g_sign, g_logabs, a):
    return (unsqueeze(unsqueeze(g_logabs, -1), -1) * _T(inv(a)),)


def _slogdet_jvp(tangents, primals, outs):
    sign = outs[0]
    return (dispatch.zeros(sign.shape, sign.dtype, sign.device),
            _trace_of_inv_times(primals[0], tangents[0]))


SLOGDET = def_composite("slogdet", "LinalgSlogdetBackward0", ("a",), _slogdet_fwd, _slogdet_back,
                        save=("a",), n_outputs=2, jvp=_slogdet_jvp,
                        batch_rule=_stacked("slogdet"),
                        cuda_forward=nplinalg_cuda.slogdet_forward)


def slogdet(a):
    """``(sign, log|det A|)``; ``gA = g_logabsdet A^-T`` (the sign has zero gradient)."""
    a = dispatch.tensor_operand(a, "slogdet")
    _check_square("slogdet", a)
    return dispatch.composite(SLOGDET, a)


def _solve_fwd(ctx, a, b):
    ctx.b_shape = b.shape
    return np.linalg.solve(a, b)


def _solve_back(ctx, g, a, result):
    # NumPy 2: a 1-d b is one vector (x: (..., M)), else b and x are (..., M, K) stacks; a and
    # b may broadcast, so the gradients are summed back to their shapes
    na, nb = ctx.needs_input_grad
    vec = len(ctx.b_shape) == 1
    if vec:
        gb = solve(_T(a), unsqueeze(g, -1))
        ga = -matmul(gb, unsqueeze(result, -2)) if na else None
        gb = squeeze(gb, -1)
    else:
        gb = solve(_T(a), g)
        ga = -matmul(gb, _T(result)) if na else None
    return (sum_to_shape(ga, a.shape) if na else None,
            sum_to_shape(gb, ctx.b_shape) if nb else None)


def _solve_jvp(tangents, primals, outs):
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


def _solve_batch(args, batched):
    """vmap: a per-example vector ``b`` becomes a column (NumPy 2's rule), then each batched
    operand gets 1s after its batch dim up to the other's example rank, so that the stacks'
    batch dims line up (as matmul's rule)."""
    (a, b), (ba, bb) = args, batched
    vec = b.ndim - bb == 1
    if vec:
        b = unsqueeze(b, -1)
    nd = max(a.ndim - ba, b.ndim - bb)
    a, b = (x.reshape((x.shape[0],) + (1,) * (nd - x.ndim + 1) + tuple(x.shape[1:]))
            if flag and x.ndim - 1 < nd else x for x, flag in ((a, ba), (b, bb)))
    out = solve(a, b)
    return squeeze(out, -1) if vec else out


SOLVE = def_composite("solve", "LinalgSolveExBackward0", ("a", "b"), _solve_fwd,
                      _solve_back, save=("a", "result"), jvp=_solve_jvp, batch_rule=_solve_batch,
                      cuda_forward=nplinalg_cuda.solve_forward)


def solve(a, b):
    """``x = A^-1 b`` as NumPy 2: a 1-d ``b`` (``M``) is one vector for every matrix (result
    ``(..., M)``), else ``b`` is a ``(..., M, K)`` stack broadcast against ``a``'s batch;
    ``gb = A^-T g``, ``gA = -gb x^T`` (summed over broadcast dims)."""
    a, b = dispatch.tensor_operand(a, "solve"), dispatch.tensor_operand(b, "solve")
    _check_square("solve", a)
    if b.ndim == 0:
        raise ValueError(f"solve: b must be at least 1-d; got a of shape {tuple(a.shape)} and "
                         f"b of shape {tuple(b.shape)}")
    return dispatch.composite(SOLVE, a, b)


def _cholesky_back(ctx, g, result):
    # L^-T Phi L^-1 as two triangular solves (O(n^3) each, as the matmul; no inverse)
    from .scipy_linalg import solve_triangular

    L = result
    n = L.shape[-1]
    dt = L.dtype.np
    mask = _const(np.tril(np.ones((n, n), dt)), L)
    half = _const((np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(dt), L)
    phi = matmul(_T(L), g * mask) * half
    s = solve_triangular(L, solve_triangular(_T(L), phi, upper=True), upper=False, left=False)
    return ((s + _T(s)) * 0.5,)


def _cholesky_jvp(tangents, primals, outs):
    from .scipy_linalg import solve_triangular

    L, ta = outs[0], tangents[0]
    n = L.shape[-1]
    half = _const((np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(L.dtype.np), L)
    y = solve_triangular(L, (ta + _T(ta)) * 0.5, upper=False)      # L^-1 sym(dA)
    x = solve_triangular(_T(L), y, upper=True, left=False)          # ... L^-T
    return matmul(L, x * half)


CHOLESKY = def_composite("cholesky", "LinalgCholeskyExBackward0", ("a",),
                         _fwd(np.linalg.cholesky), _cholesky_back, save=("result",),
                         jvp=_cholesky_jvp, batch_rule=_stacked("cholesky"),
                         cuda_forward=nplinalg_cuda.cholesky_forward)


def cholesky(a):
    """Lower Cholesky factor ``L`` of a symmetric positive definite ``A``;
    ``gA = sym(L^-T Phi(L^T tril(gL)) L^-1)`` (one matmul and two triangular solves)."""
    a = dispatch.tensor_operand(a, "cholesky")
    _check_square("cholesky", a)
    return dispatch.composite(CHOLESKY, a)


def _eigh_fwd(ctx, a, UPLO):
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, v


def _eigh_back(ctx, gw, gv, a):
    # recompute w, V with Tensor ops available: they are the outputs, unpacked from a fresh call
    w, v = eigh(a, ctx.UPLO) if ctx.needs_input_grad[0] else (None, None)
    n = a.shape[-1]
    wd = w._data
    msg = "eigh: the gradient of eigenvectors is not defined for repeated eigenvalues"
    if dispatch.device_of(wd) != "cpu" or _recorded():
        F = _inv_gaps(unsqueeze(w, -2) - unsqueeze(w, -1), msg)
    else:
        e = wd[..., None, :] - wd[..., :, None]  # E_ij = w_j - w_i
        off = ~np.eye(n, dtype=bool)
        with np.errstate(divide="ignore"):
            f = np.where(off, 1.0 / np.where(off, e, 1.0), 0.0)
        if (np.abs(e[..., off]) == 0).any():
            raise RuntimeError(msg)
        F = dispatch.Tensor._make(f.astype(a._data.dtype))
    inner = matmul(_T(v), gv) * F
    eye = _const(np.eye(n, dtype=a.dtype.np), a)
    inner = inner + unsqueeze(gw, -2) * eye
    return (matmul(v, matmul(inner, _T(v))),)


def _eigh_jvp(tangents, primals, outs, UPLO):
    w, v = outs
    av = matmul(tangents[0], v)
    m = matmul(_T(v), av)  # V^T dA V
    dw = _sum(v * av, -2)  # its diagonal
    f = _inv_gaps(unsqueeze(w, -2) - unsqueeze(w, -1),
                  "eigh: the tangent of eigenvectors is not defined for repeated eigenvalues")
    return dw, matmul(v, f * m)


EIGH = def_composite("eigh", "LinalgEighBackward0", ("a",), _eigh_fwd, _eigh_back, save=("a",),
                     attrs=("UPLO",), n_outputs=2, jvp=_eigh_jvp, batch_rule=_stacked("eigh"),
                     cuda_forward=nplinalg_cuda.eigh_forward)


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of a symmetric matrix;
    ``gA = V (diag(gw) + (V^T gV) / E) V^T`` with ``E_ij = w_j - w_i`` (distinct eigenvalues)."""
    a = dispatch.tensor_operand(a, "eigh")
    _check_square("eigh", a)
    return dispatch.composite(EIGH, a, UPLO=UPLO)


def _pinv_back(ctx, g, a, result):
    # dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P (Golub & Pereyra 1973; valid
    # where the rank is locally constant), whose adjoint is
    # gA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)
    P = result
    m, n = a.shape[-2], a.shape[-1]
    Im = _const(np.eye(m, dtype=a.dtype.np), a)
    In = _const(np.eye(n, dtype=a.dtype.np), a)
    PT, gT = _T(P), _T(g)
    return (-matmul(PT, matmul(g, PT))
            + matmul(Im - matmul(a, P), matmul(gT, matmul(P, PT)))
            + matmul(matmul(PT, P), matmul(gT, In - matmul(P, a))),)


def _pinv_fwd(ctx, a, rcond):
    return np.linalg.pinv(a, rcond=rcond)


def _pinv_jvp(tangents, primals, outs, rcond):
    (ta,), (a,), p = tangents, primals, outs[0]
    m, n = a.shape[-2], a.shape[-1]
    pt, tat = _T(p), _T(ta)
    return (-matmul(p, matmul(ta, p))
            + matmul(matmul(p, pt), matmul(tat, _eye(m, a) - matmul(a, p)))
            + matmul(_eye(n, a) - matmul(p, a), matmul(tat, matmul(pt, p))))


PINV = def_composite("pinv", "LinalgPinvBackward0", ("a",), _pinv_fwd, _pinv_back,
                     attrs=("rcond",), save=("a", "result"), jvp=_pinv_jvp,
                     batch_rule=_stacked("pinv"), cuda_forward=nplinalg_cuda.pinv_forward)


def pinv(a, rcond=None):
    """Moore-Penrose pseudo-inverse ``P``; the gradient (Golub-Pereyra) holds where the rank is
    locally constant, which a small perturbation can break for rank-deficient input."""
    a = dispatch.tensor_operand(a, "pinv")
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"pinv: expected a matrix, got shape {tuple(a.shape)}")
    if rcond is None:
        rcond = max(a.shape[-2:]) * np.finfo(a._data.dtype).eps if a._data.dtype.kind == "f" \
            else 1e-15
    return dispatch.composite(PINV, a, rcond=float(rcond))


def _svd_fwd(ctx, a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u, s, vh


def _svd_back(ctx, gu, gs, gvh, a):
    """Townsend (2016), real reduced SVD ``A = U diag(s) V^T`` with distinct nonzero ``s``:
    ``gA = U [(F o (U^T gU - gU^T U)) S + diag(gs) + S (F o (V^T gV - gV^T V))] V^T
    + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)``, ``F_ij = 1 / (s_j^2 - s_i^2)``."""
    u, s, vh = svd(a)
    v, gv = _T(vh), _T(gvh)
    m, n = a.shape[-2], a.shape[-1]
    k = s.shape[-1]
    sd = s._data
    msg = ("svd: the gradient of singular vectors is not defined for repeated or zero singular "
           "values")
    if dispatch.device_of(sd) != "cpu" or _recorded():
        F = _inv_gaps(unsqueeze(s, -2) ** 2 - unsqueeze(s, -1) ** 2, msg,
                      extra=_sum(s == 0) if k else None)
    else:
        diff = sd[..., None, :] ** 2 - sd[..., :, None] ** 2
        off = ~np.eye(k, dtype=bool)
        if (np.abs(diff[..., off]) == 0).any() or (sd == 0).any():
            raise RuntimeError(msg)
        F = dispatch.Tensor._make(np.where(off, 1.0 / np.where(off, diff, 1.0), 0.0)
                                  .astype(sd.dtype))
    eye_k = _const(np.eye(k, dtype=s.dtype.np), s)
    S = unsqueeze(s, -2) * eye_k  # diag(s)
    Sinv = unsqueeze(1.0 / s, -2) * eye_k
    utgu = matmul(_T(u), gu)
    vtgv = matmul(_T(v), gv)
    inner = (matmul(F * (utgu - _T(utgu)), S) + unsqueeze(gs, -2) * eye_k
             + matmul(S, F * (vtgv - _T(vtgv))))
    ga = matmul(u, matmul(inner, vh))
    if m > k:
        Im = _const(np.eye(m, dtype=s.dtype.np), s)
        ga = ga + matmul(Im - matmul(u, _T(u)), matmul(gu, matmul(Sinv, vh)))
    if n > k:
        In = _const(np.eye(n, dtype=s.dtype.np), s)
        ga = ga + matmul(u, matmul(Sinv, matmul(_T(gv), In - matmul(v, vh))))
    return (ga,)


def _svd_jvp(tangents, primals, outs):
    (ta,), (a,), (u, s, vh) = tangents, primals, outs
    m, n = a.shape[-2], a.shape[-1]
    k = s.shape[-1]
    v = _T(vh)
    eye_k = _eye(k, s)
    S = unsqueeze(s, -2) * eye_k
    av = matmul(ta, v)  # dA V
    atu = matmul(_T(ta), u)  # dA^T U
    p = matmul(_T(u), av)  # U^T dA V
    ds = _sum(p * eye_k, -1)
    f = _inv_gaps(unsqueeze(s, -2) ** 2 - unsqueeze(s, -1) ** 2,
                  "svd: the tangent of singular vectors is not defined for repeated or zero "
                  "singular values", extra=_sum(s == 0) if k else None)
    du = matmul(u, f * (matmul(p, S) + matmul(S, _T(p))))
    dv = matmul(v, f * (matmul(S, p) + matmul(_T(p), S)))
    sinv = unsqueeze(1.0 / s, -2)  # columns scaled by 1 / s
    if m > k:
        du = du + (av - matmul(u, matmul(_T(u), av))) * sinv
    if n > k:
        dv = dv + (atu - matmul(v, matmul(vh, atu))) * sinv
    return du, ds, _T(dv)


def _svdvals_jvp(tangents, primals, outs):
    u, _, vh = svd(primals[0])
    return _sum(matmul(_T(u), tangents[0]) * vh, -1)


SVD = def_composite("svd", "LinalgSvdBackward0", ("a",), _svd_fwd, _svd_back, save=("a",),
                    n_outputs=3, jvp=_svd_jvp, batch_rule=_stacked("svd"),
                    cuda_forward=nplinalg_cuda.svd_forward)
SVDVALS = def_composite("svdvals", "LinalgSvdBackward1", ("a",),
                        lambda ctx, a: np.linalg.svd(a, compute_uv=False),
                        lambda ctx, gs, a: _svdvals_back(gs, a), save=("a",), jvp=_svdvals_jvp,
                        batch_rule=_stacked("svdvals"),
                        cuda_forward=nplinalg_cuda.svdvals_forward)


def _svdvals_back(gs, a):
    # ds_i = u_i^T dA v_i, so gA = U diag(gs) V^T (defined also for repeated values)
    u, s, vh = svd(a)
    k = s.shape[-1]
    eye_k = _const(np.eye(k, dtype=s.dtype.np), s)
    return (matmul(u, matmul(unsqueeze(gs, -2) * eye_k, vh)),)


def svd(a):
    """Reduced SVD ``(U, s, Vh)`` (``full_matrices=False``); gradient by Townsend's formula
    (distinct, nonzero singular values)."""
    a = dispatch.tensor_operand(a, "svd")
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"svd: expected a matrix, got shape {tuple(a.shape)}")
    return dispatch.composite(SVD, a)


def svdvals(a):
    """Singular values; ``gA = U diag(gs) V^T``."""
    a = dispatch.tensor_operand(a, "svdvals")
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"svdvals: expected a matrix, got shape {tuple(a.shape)}")
    return dispatch.composite(SVDVALS, a)


def _copyltu(m):
    """The symmetric matrix from the lower triangle of ``m``: ``X_ij = m_max(i,j),min(i,j)``."""
    n = m.shape[-1]
    low = _const(np.tril(np.ones((n, n)), -1).astype(m.dtype.np), m)
    eye = _const(np.eye(n, dtype=m.dtype.np), m)
    lower = m * low
    return lower + _T(lower) + m * eye


def _qr_fwd(ctx, a):
    q, r = np.linalg.qr(a, mode="reduced")
    return q, r


def _qr_square_back(gq, gr, q, r):
    # m >= n (Walter & Lehmann 2018; Liao et al. 2019): M = R gR^T - gQ^T Q,
    # gA = (gQ + Q copyltu(M)) R^-T: a triangular solve from the right (X R^T = ...)
    from .scipy_linalg import solve_triangular

    m_ = matmul(r, _T(gr)) - matmul(_T(gq), q)
    b = gq + matmul(q, _copyltu(m_))
    return solve_triangular(_T(r), b, upper=False, left=False)


def _qr_back(ctx, gq, gr, a):
    q, r = qr(a)
    m, n = a.shape[-2], a.shape[-1]
    if m >= n:
        return (_qr_square_back(gq, gr, q, r),)
    # wide: A = [X | Y] with X = Q R1 (m x m), Y = Q R2; then gY = Q gR2 and X sees
    # gQ' = gQ + Y gR2^T (Liao et al. 2019, section 3.2)
    r1 = r[..., :, :m]
    gr1, gr2 = gr[..., :, :m], gr[..., :, m:]
    y = a[..., :, m:]
    gx = _qr_square_back(gq + matmul(y, _T(gr2)), gr1, q, r1)
    return (cat([gx, matmul(q, gr2)], -1),)


def _qr_square_jvp(ta, q, r):
    """``m >= n``: ``(dQ, dR)`` of ``A = Q R`` along ``dA``."""
    from .scipy_linalg import solve_triangular

    n = r.shape[-1]
    upper = _const(np.triu(np.ones((n, n))).astype(r.dtype.np), r)
    strict = _const(np.tril(np.ones((n, n)), -1).astype(r.dtype.np), r)
    a_rinv = solve_triangular(r, ta, upper=True, left=False)  # dA R^-1
    x = matmul(_T(q), a_rinv)
    dr = matmul(x * upper + _T(x * strict), r)
    dq = a_rinv - matmul(q, solve_triangular(r, dr, upper=True, left=False))  # (dA - Q dR) R^-1
    return dq, dr


def _qr_jvp(tangents, primals, outs):
    (ta,), (a,), (q, r) = tangents, primals, outs
    m, n = a.shape[-2], a.shape[-1]
    if m >= n:
        return _qr_square_jvp(ta, q, r)
    dq, dr1 = _qr_square_jvp(ta[..., :, :m], q, r[..., :, :m])
    dr2 = matmul(_T(q), ta[..., :, m:] - matmul(dq, r[..., :, m:]))
    return dq, cat([dr1, dr2], -1)


QR = def_composite("qr", "LinalgQrBackward0", ("a",), _qr_fwd, _qr_back, save=("a",),
                   n_outputs=2, jvp=_qr_jvp, batch_rule=_stacked("qr"),
                   cuda_forward=nplinalg_cuda.qr_forward)


def qr(a):
    """Reduced QR ``A = Q R`` (``Q`` with orthonormal columns, ``R`` upper triangular, both from
    LAPACK via ``numpy.linalg.qr``). For ``m >= n`` (full column rank):
    ``M = R gR^T - gQ^T Q``, ``gA = (gQ + Q copyltu(M)) R^-T``; for ``m < n`` the leading square
    block takes that rule with ``gQ + Y gR2^T`` and the trailing columns ``Y`` get ``Q gR2``."""
    a = dispatch.tensor_operand(a, "qr")
    if a.ndim < 2:
        raise np.linalg.LinAlgError(f"qr: expected a matrix, got shape {tuple(a.shape)}")
    return dispatch.composite(QR, a)


def rank_count(a, atol, rtol, hermitian=False):
    """The rank of the matrices ``a``: how many singular values ``s`` (``hermitian``: absolute
    eigenvalues) exceed ``max(atol, rtol * max(s))``, an int64 Tensor without a derivative,
    written with rows (so a transform or a compiled program computes it from each call's
    values). ``atol`` and ``rtol`` are Python numbers (``atol`` 0: none)."""
    from .. import dtypes
    from . import binary, unary
    from .extrema import amax

    s = unary.abs(eigh(a)[0]) if hermitian else svdvals(a)
    if s.shape[-1] == 0:  # no singular values: rank 0
        return unary.cast(_sum(s > 0.0, -1), dtypes.int64)
    tol = amax(s, -1, keepdim=True) * float(rtol)
    if atol:
        tol = binary.maximum(tol, float(atol))
    return unary.cast(_sum(s > tol, -1), dtypes.int64)
