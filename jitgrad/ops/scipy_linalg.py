"""The Sylvester-equation row behind ``jitgrad.scipy.linalg.solve_sylvester`` and ``sqrtm``.

``X = solve_sylvester(A, B, Q)`` solves ``A X + X B = Q`` (``scipy.linalg.solve_sylvester``,
Bartels-Stewart). Differentiating, ``A dX + dX B = dQ - dA X - X dB``; with ``Y`` the solution
of the adjoint equation ``A^T Y + Y B^T = G`` (``G = dL/dX``)::

    dL/dQ = Y,    dL/dA = -Y X^T,    dL/dB = -X^T Y

``Y`` is this row again, so derivatives of every order work.
"""
from __future__ import annotations

import numpy as np

from .core import dispatch
from .core.registry import def_composite


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
