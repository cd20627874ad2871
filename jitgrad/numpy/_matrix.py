"""Products and matrix functions of ``jitgrad.numpy``'s main namespace: ``matmul``, ``dot``,
``vdot``, ``inner``, ``outer``, ``kron``, ``cross``, ``vecdot``, ``tensordot`` and ``einsum``
(explicit, implicit and ``...`` forms: the gradient of each operand is an einsum of ``g`` with
the others), and the diagonal and triangle functions ``diagonal``, ``diag``, ``trace``,
``triu``, ``tril``. ``jitgrad.numpy.linalg`` holds the decompositions and solvers."""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ..ops import linalg as _linalg_ops
from ..ops import npfuncs as _npfuncs
from ..ops import shape as _shape_ops
from ..tensor import Tensor
from . import _plain
from ._common import constant_array as _constant_array, to_tensor as _t
from ._join import stack
from ._reductions import sum
from ._shape import moveaxis, ravel, reshape

__all__ = ["matmul", "triu", "tril", "diagonal", "diag", "trace", "einsum", "tensordot", "dot",
           "vdot", "inner", "outer", "kron", "cross", "vecdot"]


@_plain.checks_itself
def matmul(a, b):
    """Matrix product with NumPy's rules (``@``)."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor) and _plain.plain_call((a, b)):
        return _np.matmul(a, b)  # Note [plain inputs]
    if not isinstance(a, Tensor) and isinstance(b, Tensor):
        return Tensor.__rmatmul__(b, a)
    return _linalg_ops.matmul(_t(a), b)


def triu(m, k=0):
    """Upper triangle (zeros below diagonal ``k``); gradient masked the same way."""
    m = _t(m)
    return m * _constant_array(_np.triu(_np.ones(m.shape[-2:], dtype=m.dtype.np), k), m)


def tril(m, k=0):
    """Lower triangle (zeros above diagonal ``k``); gradient masked the same way."""
    m = _t(m)
    return m * _constant_array(_np.tril(_np.ones(m.shape[-2:], dtype=m.dtype.np), k), m)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal over ``axis1``/``axis2`` (moved last)."""
    return _shape_ops.diagonal(_t(a), offset, axis1, axis2)


def diag(v, k=0):
    """1-d ``v``: a matrix with ``v`` on diagonal ``k``; 2-d: its ``k``-th diagonal."""
    v = _t(v)
    if v.ndim == 1:
        return _npfuncs.diag_embed(v, k)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("Input must be 1- or 2-d.")


def trace(a, offset=0, axis1=0, axis2=1):
    """Sum of a diagonal."""
    return sum(diagonal(a, offset, axis1, axis2), -1)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _explicit_spec(spec, shapes):
    spec = spec.replace(" ", "")
    if "->" in spec:
        ins, out = spec.split("->")
    else:
        ins, out = spec, None
    subs = ins.split(",")
    if len(subs) != len(shapes):
        raise ValueError(f"einsum: {len(subs)} operand subscripts for {len(shapes)} operands")
    used = set(c for c in spec if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ell_n = 0
    for s, sh in zip(subs, shapes):
        if "..." in s:
            ell_n = _builtins.max(ell_n, len(sh) - (len(s) - 3))
    ell = "".join(free[:ell_n])
    new = []
    for s, sh in zip(subs, shapes):
        if "..." in s:
            k = len(sh) - (len(s) - 3)
            s = s.replace("...", ell[ell_n - k:] if k else "")
        new.append(s)
    if out is None:
        counts = {}
        for s in new:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    # broadcast size-1 ellipsis dims are fine for np.einsum; gradients are summed by the engine
    return ",".join(new) + "->" + out


def einsum(subscripts, *operands, optimize=False):
    """Einstein summation (``'ij,jk->ik'``, implicit output, ``...``); the gradient of each
    operand is an einsum of ``g`` with the others."""
    ops = [_t(o) for o in operands]
    spec = _explicit_spec(subscripts, [o.shape for o in ops])
    return _npfuncs.einsum_explicit(spec, *ops)


def tensordot(a, b, axes=2):
    """Sum products over ``axes`` (int: last ``axes`` of ``a`` with first of ``b``)."""
    a, b = _t(a), _t(b)
    if isinstance(axes, (int, _np.integer)):
        ax_a = list(range(a.ndim - int(axes), a.ndim))
        ax_b = list(range(int(axes)))
    else:
        ax_a, ax_b = [list(_np.atleast_1d(x)) for x in axes]
    ax_a = [int(x) % a.ndim for x in ax_a]
    ax_b = [int(x) % b.ndim for x in ax_b]
    la, lb = list(_LETTERS[:a.ndim]), list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in ax_a] + [c for k, c in enumerate(lb)
                                                            if k not in ax_b]
    return _npfuncs.einsum_explicit("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b)


@_plain.checks_itself
def dot(a, b):
    """NumPy's ``dot``: scalars multiply, 1-d/2-d is ``matmul``, N-d sums the last axis of
    ``a`` with the second-to-last of ``b``."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor) and _plain.plain_call((a, b)):
        return _np.dot(a, b)  # Note [plain inputs]
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim <= 2 and b.ndim <= 2:
        return _linalg_ops.matmul(a, b)
    return tensordot(a, b, ([-1], [-2 if b.ndim > 1 else -1]))


def vdot(a, b):
    """Dot product of the flattened arrays."""
    return _linalg_ops.matmul(ravel(a), ravel(b))


def inner(a, b):
    """Sum over the last axes of ``a`` and ``b``."""
    a, b = _t(a), _t(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    """``out[i, j] = a_i b_j`` of the flattened inputs."""
    return _shape_ops.unsqueeze(ravel(a), 1) * _shape_ops.unsqueeze(ravel(b), 0)


def kron(a, b):
    """Kronecker product: blocks ``a[i, j] * b``."""
    a, b = _t(a), _t(b)
    nd = _builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    b = reshape(b, (1,) * (nd - b.ndim) + tuple(b.shape))
    ia = tuple(s for d in range(nd) for s in (a.shape[d], 1))
    ib = tuple(s for d in range(nd) for s in (1, b.shape[d]))
    out = reshape(a, ia) * reshape(b, ib)
    return reshape(out, tuple(a.shape[d] * b.shape[d] for d in range(nd)))


def cross(a, b, axis=-1):
    """Cross product of 3-vectors along ``axis``."""
    a, b = moveaxis(_t(a), axis, -1), moveaxis(_t(b), axis, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError("jitgrad.numpy.cross: only 3-vectors are supported")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return moveaxis(stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1), -1, axis)


def vecdot(x1, x2, /, *, axis=-1):
    """``sum(x1 * x2, axis)`` with broadcasting (real inputs)."""
    return sum(_t(x1) * _t(x2), axis=axis)
