"""Matrix functions and products of ``jitgrad.linalg``: ``matrix_exp matrix_power matrix_rank
cond multi_dot vecdot vander cross diagonal matmul householder_product tensorinv tensorsolve``,
written with differentiable Tensor ops (so every derivative order works)."""
from __future__ import annotations

import math

import numpy as np

from ..autograd import Function
from ..graph.grad_mode import is_grad_enabled
from ..ops import complex as complex_ops, nplinalg, reduce, scipy_linalg, shape
from ..ops.core import dispatch, upper
from ..ops.linalg import matmul as _matmul
from ..tensor import Tensor
from ._basic import inv, matrix_norm, solve, svdvals
from ._out import with_out

__all__ = ["eigvals", "matrix_exp", "matrix_power", "matrix_rank", "cond", "multi_dot", "vecdot", "vander",
           "cross", "diagonal", "matmul", "householder_product", "tensorinv", "tensorsolve"]


def _t(x, op):
    return dispatch.tensor_operand(x, f"linalg.{op}")


def _square(op, A):
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, got shape "
                           f"{tuple(A.shape)}")


@upper.constant_maker
def _eye_like(A, n=None):
    """Identity matrices ``(..., n, n)`` (default ``n``: ``A``'s last dim) over ``A``'s batch,
    in its dtype and on its device (a constant)."""
    n = A.shape[-1] if n is None else n
    eye = np.broadcast_to(np.eye(n, dtype=A.dtype.np), tuple(A.shape[:-2]) + (n, n)).copy()
    t = Tensor._make(eye)
    return t.to(A.device) if A.is_cuda else t


class _Eigvals(Function):
    """``w = eigvals(A)`` with ``A = V diag(w) V^-1``: ``dw = diag(V^-1 dA V)``, so
    ``gA = V^-H diag(g) V^H`` (the real part for a real ``A``). ``V`` is kept as a constant,
    so only the first derivative is available."""

    @staticmethod
    def forward(ctx, A):
        a = A.detach().numpy()
        w, v = np.linalg.eig(a)
        ctype = np.result_type(a.dtype, np.complex64)
        ctx.v, ctx.real = v.astype(ctype), a.dtype.kind != "c"
        return Tensor._make(w.astype(ctype))

    @staticmethod
    def backward(ctx, g):
        if is_grad_enabled():
            raise NotImplementedError("linalg.eigvals: double backward (create_graph=True) is "
                                      "not supported; take first derivatives only")
        vh = np.conj(np.swapaxes(ctx.v, -1, -2))
        ga = np.linalg.solve(vh, g.numpy()[..., :, None] * vh)
        return Tensor._make(ga.real.copy() if ctx.real else ga)


@with_out
def eigvals(A):
    """The (complex) eigenvalues of square matrices ``(..., n, n)``, unordered (LAPACK
    ``geev``). First-order gradient ``gA = V^-H diag(g) V^H`` for distinct eigenvalues (real
    ``A``: its real part); double backward raises. Not available inside ``vmap``/``jvp``."""
    A = _t(A, "eigvals")
    _square("eigvals", A)
    return _Eigvals.apply(A)


@with_out
def matrix_exp(A):
    """``exp(A) = sum_k A^k / k!`` of square matrices ``(..., n, n)``: SciPy's scaling and
    squaring (Pade) forward; the gradient is the adjoint Frechet derivative ``L(A^H, g)``, the
    top-right block of ``exp([[A^H, g], [0, A^H]])`` (``ops.scipy_linalg.matrix_exp``: every
    derivative order, forward mode and vmap)."""
    return scipy_linalg.matrix_exp(_t(A, "matrix_exp"))


@with_out
def matrix_power(A, n):
    """``A^n`` for an integer ``n`` by repeated squaring (``A^0 = I``, ``A^-n = (A^-1)^n``);
    differentiable through ``matmul`` (and ``inv`` for ``n < 0``)."""
    A = _t(A, "matrix_power")
    _square("matrix_power", A)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else _matmul(result, base)
        n >>= 1
        if n:
            base = _matmul(base, base)
    return _eye_like(A) if result is None else result


def _tolerance(s, smax, m, n, atol, rtol, dtype):
    """``max(atol, rtol * smax)`` with PyTorch's defaults: ``rtol = eps * max(m, n)`` when
    neither is given, 0 when only ``atol`` is."""
    atol = 0.0 if atol is None else np.asarray(atol.numpy() if isinstance(atol, Tensor) else atol)
    if rtol is None:
        rtol = np.finfo(dtype).eps * max(m, n) if np.all(atol == 0) else 0.0
    rtol = np.asarray(rtol.numpy() if isinstance(rtol, Tensor) else rtol)
    return np.maximum(atol, rtol * smax)


@with_out
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    """The number of singular values (``hermitian``: absolute eigenvalues) above
    ``max(atol, rtol * sigma_max)`` (int64; not differentiable); ``tol`` is the deprecated
    ``atol``."""
    A = _t(A, "matrix_rank")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_rank: The input tensor A must have at least 2 "
                           f"dimensions, got shape {tuple(A.shape)}")
    if tol is not None:
        atol = tol
    if (dispatch.transform_hook is not None and A.dtype.is_floating_point
            and all(v is None or isinstance(v, (int, float)) for v in (atol, rtol))):
        # vmap, a compile trace: the same count with rows, not from host values
        if rtol is None:
            rtol = np.finfo(A.dtype.np).eps * max(A.shape[-2:]) if not atol else 0.0
        return nplinalg.rank_count(A, atol or 0.0, rtol, hermitian)
    a = A.detach().cpu().numpy()
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    smax = s.max(axis=-1, initial=0.0)
    tol_ = _tolerance(s, smax, a.shape[-2], a.shape[-1], atol, rtol, a.dtype)
    return Tensor._make((s > np.asarray(tol_)[..., None]).sum(-1).astype(np.int64))


@with_out
def cond(A, p=None):
    """The condition number ``||A||_p ||A^-1||_p``: for ``p`` None / 2 / -2 the ratio
    ``sigma_max / sigma_min`` (``-2``: its inverse) of ``svdvals`` (any shape); for ``'fro'``,
    ``'nuc'``, ``inf``, ``-inf``, 1, -1 the product of the two matrix norms (square ``A``).
    Differentiable through ``svdvals`` / ``matrix_norm`` and ``inv``."""
    A = _t(A, "cond")
    if p in (None, 2, -2):
        s = svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    if p not in ("fro", "nuc", math.inf, -math.inf, 1, -1):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    _square("cond", A)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def _chain_order(dims):
    """The optimal parenthesization of the matrix chain with shapes ``dims[i] x dims[i+1]``
    (dynamic programming, Cormen et al. 15.2): ``split[i][j]``."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


@with_out
def multi_dot(tensors):
    """The product ``A_1 A_2 ... A_k`` of two or more matrices in the cheapest order (matrix
    chain ordering); the first may be 1-d (a row vector) and the last 1-d (a column vector)."""
    ts = [_t(x, "multi_dot") for x in tensors]
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = shape.unsqueeze(ts[0], 0)
    if last_vec:
        ts[-1] = shape.unsqueeze(ts[-1], -1)
    for i, x in enumerate(ts):
        if x.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {x.ndim}D")
    for i in range(len(ts) - 1):
        if ts[i].shape[1] != ts[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{tuple(ts[i].shape)} and {tuple(ts[i + 1].shape)} cannot be "
                               "multiplied")
    split = _chain_order([ts[0].shape[0]] + [x.shape[1] for x in ts])

    def product(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return _matmul(product(i, k), product(k + 1, j))
    out = product(0, len(ts) - 1)
    if last_vec:
        out = shape.squeeze(out, -1)
    if first_vec:
        out = shape.squeeze(out, 0)
    return out


@with_out
def vecdot(x, y, *, dim=-1):
    """``sum_i conj(x_i) y_i`` along ``dim`` (broadcasting); gradients ``g y`` and
    ``conj(g) x`` summed to the shapes (the conjugate-Wirtinger convention for complex)."""
    x, y = _t(x, "vecdot"), _t(y, "vecdot")
    if x.is_complex():
        x = complex_ops.conj(x)
    return reduce.sum(x * y, dim=dim)


def vander(x, N=None):
    """The Vandermonde matrix ``V[..., i, j] = x_i^j`` for ``j < N`` (default ``len(x)``),
    increasing powers as PyTorch; built by repeated multiplication (exact gradient at 0)."""
    x = _t(x, "vander")
    if x.ndim == 0:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 0:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {n}")
    powers = [x * 0 + 1]
    for _ in range(1, n):
        powers.append(powers[-1] * x)
    return shape.stack(powers, -1)


@with_out
def cross(input, other, *, dim=-1):  # noqa: A002 - PyTorch's name
    """The cross product of 3-vectors along ``dim`` (broadcasting):
    ``(a2 b3 - a3 b2, a3 b1 - a1 b3, a1 b2 - a2 b1)``."""
    a, b = _t(input, "cross"), _t(other, "cross")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{a.shape[dim]} and {b.shape[dim]}")
    a, b = (t.movedim(dim, -1) for t in (a, b))
    c = [a[..., (i + 1) % 3] * b[..., (i + 2) % 3] - a[..., (i + 2) % 3] * b[..., (i + 1) % 3]
         for i in range(3)]
    return shape.stack(c, -1).movedim(-1, dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal (``offset`` above it when positive) of the matrices over ``dim1, dim2``
    (a view)."""
    return shape.diagonal(_t(A, "diagonal"), offset, dim1, dim2)


@with_out
def matmul(input, other):  # noqa: A002 - PyTorch's name
    """``jitgrad.matmul`` (NumPy's rank rules; see ``jitgrad.ops.linalg.matmul``)."""
    return _matmul(input, other)


@with_out
def householder_product(A, tau):
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T`` with ``v_i``
    the ``i``-th column of ``A`` below the diagonal and 1 on it (LAPACK ``orgqr``; ``A``
    ``(..., m, n)``, ``tau`` ``(..., k)``, ``k <= n <= m``). Differentiable in ``A`` and
    ``tau``."""
    A, tau = _t(A, "householder_product"), _t(tau, "householder_product")
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    if not k <= n <= m:
        raise RuntimeError(f"linalg.householder_product: need tau.shape[-1] <= A.shape[-1] <= "
                           f"A.shape[-2], got A {tuple(A.shape)} and tau {tuple(tau.shape)}")
    if A.is_complex() or tau.is_complex():
        raise NotImplementedError("linalg.householder_product: complex inputs are not "
                                  "supported here")
    V = scipy_linalg.triangle(A, False, unitriangular=True)
    Q = _eye_like(A, m)
    for i in range(k):
        v = V[..., :, i:i + 1]
        Q = Q - _matmul(_matmul(Q, v), shape.transpose(v, -1, -2)) * \
            shape.unsqueeze(shape.unsqueeze(tau[..., i], -1), -1)
    return Q[..., :, :n]


@with_out
def tensorinv(A, ind=2):
    """The inverse of ``A`` seen as a map from its last dims to its first ``ind`` dims:
    ``tensorinv(A)`` has shape ``A.shape[ind:] + A.shape[:ind]``."""
    A = _t(A, "tensorinv")
    if ind <= 0:
        raise RuntimeError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', "
                           f"but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    p, q = math.prod(rows), math.prod(cols)
    if p != q:
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got {q} != "
                           f"{p}")
    return shape.reshape(inv(shape.reshape(A, (p, q))), cols + rows)


@with_out
def tensorsolve(A, B, dims=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B``: ``A``'s dims ``dims`` are first moved to the
    end, then ``A`` is read as a ``(B.numel(), X.numel())`` matrix; ``X`` has shape
    ``A.shape[B.ndim:]``."""
    A, B = _t(A, "tensorsolve"), _t(B, "tensorsolve")
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = shape.permute(A, *([d for d in range(A.ndim) if d not in dims] + dims))
    x_shape = tuple(A.shape[B.ndim:])
    p, q = B.numel(), math.prod(x_shape)
    if p != q or tuple(A.shape[:B.ndim]) != tuple(B.shape):
        raise RuntimeError(f"linalg.tensorsolve: Expected self to satisfy the requirement "
                           f"prod(result.shape) == prod(B.shape) with A.shape[:B.ndim] == "
                           f"B.shape; got A {tuple(A.shape)} and B {tuple(B.shape)}")
    x = solve(shape.reshape(A, (p, q)), shape.reshape(B, (p,)))
    return shape.reshape(x, x_shape)
