"""Matrix products: ``matmul`` with NumPy's rank rules, and the ``dot``/``mm`` aliases.

Forward is ``np.matmul`` (BLAS for float inputs; it releases the GIL). The backward rules are
written with ``matmul`` itself (plus transposes and unsqueezes for the 1-d cases), so double
backward records its own graph. Gradients over broadcast batch dims are summed to each input's
shape by the engine (Note [broadcast reduction]).

Complex operands (Note [complex support]) follow PyTorch's conjugate-Wirtinger convention:
``ga = g @ conj(b)^T`` and ``gb = conj(a)^T @ g`` (a real operand keeps the real part).

Node names follow PyTorch: 1-d @ 1-d DotBackward0, 2-d @ 1-d MvBackward0, 1-d @ 2-d and
2-d @ 2-d MmBackward0, anything with a batch dim BmmBackward0.
"""
from __future__ import annotations

import numpy as np

from ..kernels.cpu import pool
from .core import dispatch
from . import linalg_cuda
from .complex import conj
from .core.registry import def_composite
from .shape import reshape, squeeze, transpose, unsqueeze


def _fmt(shape) -> str:
    return "x".join(str(s) for s in shape)


def _matmul_fwd(ctx, a, b):
    if a.ndim >= 2 and b.ndim >= 2 and a.dtype == b.dtype and a.dtype.kind == "f":
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
        if a.shape[-1] == b.shape[-2]:  # else let NumPy raise its own shape error
            return np.matmul(a, b, out=pool.empty(shape, a.dtype))
    return np.matmul(a, b)


def _matmul_back(ctx, g, a, b):
    """Gradients of ``out = a @ b``: ``ga = g @ b^T``, ``gb = a^T @ g``, with 1-d operands
    promoted to matrices (a as a row ``1xk``, b as a column ``kx1``) and the added dim removed.
    Complex: the saved operands are conjugated first (``ga = g @ b^H``, ``gb = a^H @ g``)."""
    need_a, need_b = ctx.needs_input_grad
    if a.is_complex() or b.is_complex():
        a, b = (conj(x) if x.is_complex() else x for x in (a, b))
    ga = gb = None
    if a.ndim == 1 and b.ndim == 1:  # out = sum_k a_k b_k
        ga = g * b if need_a else None
        gb = g * a if need_b else None
    elif b.ndim == 1:  # out[..., n] = sum_k a[..., n, k] b[k]
        if need_a:
            ga = matmul(unsqueeze(g, -1), unsqueeze(b, 0))  # outer product g b^T: (..., n, k)
        if need_b:
            gb = squeeze(matmul(unsqueeze(g, -2), a), -2)  # g^T a: (..., k), summed by the engine
    elif a.ndim == 1:  # out[..., m] = sum_k a[k] b[..., k, m]
        if need_a:
            ga = squeeze(matmul(b, unsqueeze(g, -1)), -1)  # b g: (..., k)
        if need_b:
            gb = matmul(unsqueeze(a, -1), unsqueeze(g, -2))  # outer product a g^T: (..., k, m)
    else:
        if need_a:
            ga = matmul(g, transpose(b, -1, -2))
        if need_b:
            gb = matmul(transpose(a, -1, -2), g)
    return ga, gb


def _matmul_jvp(tangents, primals, outs):
    """``t_out = t_a @ b + a @ t_b``."""
    (ta, tb), (a, b) = tangents, primals
    out = None if ta is None else matmul(ta, b)
    if tb is not None:
        out = matmul(a, tb) if out is None else out + matmul(a, tb)
    return out


def _matmul_batch(args, batched):
    """vmap: 1-d operands become matrices (as matmul's own rule), then the batched operand
    gets 1s after its batch dim so that matmul's batch broadcasting lines the examples up."""
    (a, b), (ba, bb) = args, batched
    a_vec, b_vec = a.ndim - ba == 1, b.ndim - bb == 1
    if a_vec:
        a = unsqueeze(a, -2)
    if b_vec:
        b = unsqueeze(b, -1)
    nd = max(a.ndim - ba, b.ndim - bb)
    if ba and a.ndim - 1 < nd:
        a = reshape(a, (a.shape[0],) + (1,) * (nd - a.ndim + 1) + tuple(a.shape[1:]))
    if bb and b.ndim - 1 < nd:
        b = reshape(b, (b.shape[0],) + (1,) * (nd - b.ndim + 1) + tuple(b.shape[1:]))
    out = matmul(a, b)
    if b_vec:
        out = squeeze(out, -1)
    if a_vec:
        out = squeeze(out, -1 if b_vec else -2)
    return out


_NODES = {"dot": "DotBackward0", "mv": "MvBackward0", "mm": "MmBackward0", "bmm": "BmmBackward0"}
MATMUL = {kind: def_composite(f"matmul_{kind}", node, ("a", "b"), _matmul_fwd, _matmul_back,
                              save=("a", "b"), jvp=_matmul_jvp, batch_rule=_matmul_batch,
                              cuda_forward=linalg_cuda.matmul_forward, complex_ok=True)
          for kind, node in _NODES.items()}


def matmul(a, b):
    """Matrix product with NumPy's rules: 1-d @ 1-d is the dot product (0-d), a 1-d left
    operand is a row vector and a 1-d right operand a column vector (the added dim is removed),
    and leading batch dims broadcast.

    ``out[..., n, m] = sum_k a[..., n, k] b[..., k, m]``; derivatives ``ga = g @ b^T`` and
    ``gb = a^T @ g`` (summed over broadcast batch dims).
    """
    a, b = dispatch.tensor_operand(a, "matmul"), dispatch.tensor_operand(b, "matmul")
    na, nb = a.ndim, b.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    ka = a.shape[-1]
    kb = b.shape[0] if nb == 1 else b.shape[-2]
    if na == 1 and nb == 1:
        if ka != kb:
            raise RuntimeError(f"matmul: inconsistent tensor size, expected tensor [{ka}] and src "
                               f"[{kb}] to have the same number of elements, but got {ka} and "
                               f"{kb} elements respectively")
        kind = "dot"
    else:
        if ka != kb:
            sa = (1, ka) if na == 1 else a.shape
            sb = (kb, 1) if nb == 1 else b.shape
            raise RuntimeError(f"matmul: mat1 and mat2 shapes cannot be multiplied "
                               f"({_fmt(sa)} and {_fmt(sb)})")
        dispatch.broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
        if na <= 2 and nb <= 2:
            kind = "mv" if nb == 1 else "mm"
        else:
            kind = "bmm"
    return dispatch.composite(MATMUL[kind], a, b)


def dot(a, b):
    """Inner product of two 1-d tensors: ``out = sum_k a_k b_k``; derivatives ``g b`` and
    ``g a``."""
    a, b = dispatch.tensor_operand(a, "dot"), dispatch.tensor_operand(b, "dot")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"dot: 1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return matmul(a, b)


def mm(a, b):
    """Product of two matrices: ``out[n, m] = sum_k a[n, k] b[k, m]``; derivatives
    ``g @ b^T`` and ``a^T @ g``."""
    a, b = dispatch.tensor_operand(a, "mm"), dispatch.tensor_operand(b, "mm")
    if a.ndim != 2:
        raise RuntimeError(f"mm: self must be a matrix, got a {a.ndim}D tensor")
    if b.ndim != 2:
        raise RuntimeError(f"mm: mat2 must be a matrix, got a {b.ndim}D tensor")
    return matmul(a, b)
