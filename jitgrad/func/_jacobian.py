"""Jacobians and Hessians: ``jacrev`` (vmap over vjp), ``jacfwd`` (vmap over jvp) and
``hessian`` (``jacfwd(jacrev(f))``).

Both Jacobians batch over the rows (columns) of an identity matrix with ``vmap``, so the whole
Jacobian costs one batched backward (forward) pass instead of one pass per row (column). When an
op in ``f`` has no batching rule, ``jacrev`` falls back to one backward pass per output element
(with a warning naming the op); ``jacfwd`` raises.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..ops import creation
from ..tensor import Tensor
from ..ops import shape as _shape
from . import _batching as batching
from ._api import _VJP, jvp
from ._common import (argnums_tuple, check_real_outputs, diff_input, from_numpy_tree,
                      numpy_mode)
from ._pytree import tree_flatten, tree_unflatten
from ._vmap import vmap


def _basis(sizes, shapes, dtypes):
    """Rows of the identity split by block: block ``k`` is ``(N, *shapes[k])``."""
    n = sum(sizes)
    out, off = [], 0
    for size, shp, dt in zip(sizes, shapes, dtypes):
        eye = np.zeros((n, size), dtype=dt.np)
        eye[np.arange(off, off + size), np.arange(size)] = 1
        out.append(creation.tensor(eye.reshape((n,) + tuple(shp))))
        off += size
    return out


def _assemble(blocks_by_out, out_spec, in_spec, as_tuple):
    """``blocks_by_out[j][k]``: the Jacobian of output ``j`` w.r.t. input ``k`` -> the
    output structure, each leaf holding the inputs' structure (a tuple for tuple argnums)."""
    per_out = []
    for blocks in blocks_by_out:
        trees = tree_unflatten(blocks, in_spec)
        per_out.append(trees if as_tuple else trees[0])
    return tree_unflatten(per_out, out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` by reverse mode (PyTorch's ``torch.func.jacrev``).

    ``jacrev(f)(x)`` has shape ``f(x).shape + x.shape``: ``J[i..., j...] = d f_i / d x_j``.
    One evaluation of ``f``, then all the vector-Jacobian products with the rows of the
    identity at once (``vmap`` over ``vjp``). ``argnums``, pytree inputs and outputs as for
    ``grad``: the result has the output's structure, each leaf holding the inputs' structure.
    ``has_aux``: ``(jacobian, aux)``. ``chunk_size``: at most that many rows per batched pass.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        to_np = numpy_mode(tree_flatten(args)[0])
        state = _VJP(func, args, kwargs, argnums, has_aux, "jacrev")
        out, aux = state.outputs()
        outs = state.out_flat
        check_real_outputs(outs, "jacrev")  # Note [complex transforms]
        sizes = [o.numel() for o in outs]
        total = sum(sizes)
        basis = _basis(sizes, [o.shape for o in outs], [o.dtype for o in outs])

        def pull(*cts):
            return tuple(state.pullback(tree_unflatten(list(cts), state.out_spec)))

        try:
            rows = vmap(pull, chunk_size=chunk_size)(*basis) if total else None
        except batching.BatchingRuleError as e:
            warnings.warn(f"jacrev: {e} -- computing the Jacobian one row at a time instead",
                          UserWarning, stacklevel=2)
            rows = _rows_loop(pull, basis, total)
        blocks_by_out, off = [], 0
        for o, m in zip(outs, sizes):
            blocks = []
            for x, g in zip(state.primals, rows if rows is not None else [None] * len(
                    state.primals)):
                shp = tuple(o.shape) + tuple(x.shape)
                blocks.append(creation.zeros(shp, dtype=x.dtype) if g is None else
                              _shape.reshape(g[off:off + m], shp))
            blocks_by_out.append(blocks)
            off += m
        jac = _assemble(blocks_by_out, state.out_spec, state.in_spec, state.as_tuple)
        res = (jac, aux) if has_aux else jac
        return from_numpy_tree(res) if to_np else res

    return wrapper


def _rows_loop(pull, basis, total):
    """The fallback of ``jacrev``: one pullback per basis row, stacked."""
    per_row = [pull(*[b[m] for b in basis]) for m in range(total)]
    return tuple(_shape.stack([r[k] for r in per_row]) for k in range(len(per_row[0])))


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` by forward mode (PyTorch's ``torch.func.jacfwd``).

    Same result and conventions as ``jacrev``; computed as ``vmap`` over ``jvp`` with the
    columns of the identity as tangents: the primal computation runs once and every op's
    tangent rule runs once on the batch of tangents. Better than ``jacrev`` when ``f`` has more
    outputs than inputs. ``randomness`` is accepted for PyTorch compatibility.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        to_np = numpy_mode(tree_flatten(args)[0])
        nums, as_tuple = argnums_tuple(argnums, len(args), "jacfwd")
        flat, in_spec = tree_flatten(tuple(args[i] for i in nums))
        primals = [diff_input(x, "jacfwd", allow_complex=False) for x in flat]
        sizes = [p.numel() for p in primals]
        basis = _basis(sizes, [p.shape for p in primals], [p.dtype for p in primals])

        def f_flat(*ps):
            new = list(args)
            for i, tree in zip(nums, tree_unflatten(list(ps), in_spec)):
                new[i] = tree
            return func(*new, **kwargs)

        def push(*ts):
            res = jvp(f_flat, tuple(primals), tuple(ts), has_aux=has_aux)
            return res[1:]  # (tangents,) or (tangents, aux)

        res = vmap(push)(*basis)
        t_flat, out_spec = tree_flatten(res[0])
        blocks_by_out = []
        for t in t_flat:  # (N, *out_shape)
            cols = batching.movedim(t, 0, -1)
            blocks, off = [], 0
            for p, n in zip(primals, sizes):
                blocks.append(_shape.reshape(cols[..., off:off + n],
                                             tuple(t.shape[1:]) + tuple(p.shape)))
                off += n
            blocks_by_out.append(blocks)
        jac = _assemble(blocks_by_out, out_spec, in_spec, as_tuple)
        if has_aux:  # vmap broadcast the (unbatched) aux over the basis: take one copy
            aux_flat, aux_spec = tree_flatten(res[1])
            jac = (jac, tree_unflatten([a[0] if isinstance(a, Tensor) else a for a in aux_flat],
                                       aux_spec))
        return from_numpy_tree(jac) if to_np else jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func, argnums), argnums)``
    (forward-over-reverse, as PyTorch's ``torch.func.hessian``). For ``f`` of an ``(m, n)``
    matrix the result is ``(m, n, m, n)``; for a vector-valued ``f`` it is
    ``f(x).shape + x.shape + x.shape``."""
    return jacfwd(jacrev(func, argnums), argnums)
