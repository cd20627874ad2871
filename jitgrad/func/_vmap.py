"""``vmap``: map a function over a batch dim of its inputs, running each op once on the whole
batch (Note [batched tensors] in ``_batching.py``)."""
from __future__ import annotations

import functools
import operator

import numpy as np

from ..ops import shape as _shape
from ..tensor import Tensor
from . import _batching as batching
from ._common import from_numpy_tree, numpy_mode, to_tensor
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a dimension of its inputs (PyTorch's ``torch.func.vmap``).

    ``vmap(f)(X)`` equals ``stack([f(x) for x in X])`` but runs every op once on the batch:
    elementwise ops by broadcasting, other ops through their batching rule (``dim`` shifted,
    batched ``matmul``, indices extended...). An op without a rule raises
    ``BatchingRuleError`` naming it; so does reading tensor values inside ``f`` (``item()``,
    ``numpy()``, Python ``if`` on a tensor).

    Parameters
    ----------
    func : callable
        Takes tensors (pytrees of tuples/lists/dicts of tensors) and returns tensors.
    in_dims : int, None or a tuple with one entry per positional argument
        Which dim of each input is mapped (None: not mapped, passed to every call). An entry
        may itself be a pytree matching the argument's structure.
    out_dims : int or tuple
        Where the batch dim goes in each output.
    randomness : str
        Accepted for PyTorch compatibility; jitgrad's random functions are not batched (a
        random tensor made inside ``func`` is the same for every example).
    chunk_size : int, optional
        Run at most this many examples at once (less memory, more calls).

    Plain NumPy arrays may be passed instead of tensors; then the outputs are NumPy arrays.
    Keyword arguments are passed through unmapped. Nested vmaps batch over several dims.
    """
    if not callable(func):
        raise TypeError(f"vmap(func): expected func to be callable, got {type(func).__name__}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or a positive int, got {chunk_size!r}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat, spec = tree_flatten(args)
        to_np = numpy_mode(flat)
        flat = [to_tensor(x, "vmap") if isinstance(x, (np.ndarray, np.generic)) else x
                for x in flat]
        dims = _in_dims(in_dims, args)
        size = _batch_size(flat, dims)
        if chunk_size is not None and size > chunk_size:
            out = _chunked(func, flat, dims, spec, kwargs, out_dims, size, chunk_size)
        else:
            out = _vmap_call(func, flat, dims, spec, kwargs, out_dims, size)
        return from_numpy_tree(out) if to_np else out

    return wrapped


def _in_dims(in_dims, args) -> list:
    if in_dims is None or isinstance(in_dims, int):
        return [in_dims] * tree_flatten(args)[1].n_leaves
    if not isinstance(in_dims, (tuple, list)):
        raise ValueError(f"vmap: in_dims must be an int, None or a tuple, got "
                         f"{type(in_dims).__name__}")
    if len(in_dims) != len(args):
        raise ValueError(f"vmap: in_dims is not compatible with the structure of the inputs: "
                         f"{len(in_dims)} in_dims for {len(args)} positional arguments")
    return broadcast_prefix(tuple(in_dims), tuple(args), "vmap in_dims")


def _batch_size(flat, dims) -> int:
    sizes = []
    for i, (x, d) in enumerate(zip(flat, dims)):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"vmap: in_dims entries must be ints or None, got {d!r}")
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap: input {i} is mapped (in_dim={d}) but is a "
                             f"{type(x).__name__}, not a Tensor; use in_dims=None for it")
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"vmap: input {i} has {x.ndim} dims, so in_dim={d} is out of "
                             f"range [{-x.ndim}, {x.ndim - 1}]")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: at least one input must be a Tensor being mapped over "
                         "(all in_dims are None)")
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _vmap_call(func, flat, dims, spec, kwargs, out_dims, size):
    level = batching.push_level(size)
    try:
        new = [batching.wrap(batching.movedim(x, d, 0), level) if d is not None else x
               for x, d in zip(flat, dims)]
        out = func(*tree_unflatten(new, spec), **kwargs)
        out_flat, out_spec = tree_flatten(out)
        if isinstance(out_dims, (tuple, list)):
            if not isinstance(out, (tuple, list)) or len(out_dims) != len(out):
                raise ValueError("vmap: out_dims is not compatible with the structure of the "
                                 "outputs")
            odims = broadcast_prefix(tuple(out_dims), tuple(out), "vmap out_dims")
        else:
            odims = [out_dims] * len(out_flat)
        results = [_unbatch(o, level, size, d) for o, d in zip(out_flat, odims)]
    finally:
        batching.pop_level(level)
    return tree_unflatten(results, out_spec)


def _unbatch(o, level, size, out_dim):
    if not isinstance(o, Tensor):
        if isinstance(o, (bool, int, float, np.ndarray, np.generic)):
            o = to_tensor(o, "vmap")
        else:
            raise ValueError(f"vmap: the function must return Tensors, got a "
                             f"{type(o).__name__}")
    batched = type(o) is batching.BatchedTensor and o._bt_level == level
    if type(o) is batching.BatchedTensor and o._bt_level > level:
        raise batching.BatchingRuleError("vmap: a batched tensor of an inner vmap escaped it")
    if out_dim is None:
        if batched:
            raise ValueError("vmap: out_dims=None but the output is batched (it depends on a "
                             "mapped input)")
        return o
    inner = o._bt_inner if batched else batching._add_batch(o, size)
    d = operator.index(out_dim)
    if not -inner.ndim <= d < inner.ndim:
        raise ValueError(f"vmap: out_dim={d} is out of range for an output with "
                         f"{inner.ndim - 1} dims")
    return batching.movedim(inner, 0, d)


def _chunked(func, flat, dims, spec, kwargs, out_dims, size, chunk):
    outs = []
    for start in range(0, size, chunk):
        stop = min(start + chunk, size)
        part = [x if d is None else x[(slice(None),) * (d % x.ndim) + (slice(start, stop),)]
                for x, d in zip(flat, dims)]
        outs.append(_vmap_call(func, part, dims, spec, kwargs, out_dims, stop - start))
    leaves0, out_spec = tree_flatten(outs[0])
    per = [tree_flatten(o)[0] for o in outs]
    if isinstance(out_dims, (tuple, list)):
        odims = broadcast_prefix(tuple(out_dims), tuple(outs[0]), "vmap out_dims")
    else:
        odims = [out_dims] * len(leaves0)
    joined = [leaves0[i] if odims[i] is None else _shape.cat([p[i] for p in per], dim=odims[i])
              for i in range(len(leaves0))]
    return tree_unflatten(joined, out_spec)
