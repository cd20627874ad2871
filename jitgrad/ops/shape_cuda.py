"""The CUDA forwards of the ``ops.shape`` rows (their ``cuda_forward=``): the same views and
joins over ``kernels.cuda.backend.CudaArray`` operands (Note [cuda storage] in kernels/cuda/backend.py), with the
kernels of ``kernels.cuda.index`` (reached lazily: Note [lazy cuda]).
"""
from __future__ import annotations

import numpy as np

from .core import dispatch


def _ci():
    return dispatch.cuda_kernels("index")


def view_forward(ctx, a, shape):
    ctx.input_shape = a.shape
    out = _ci().reshape_view(a, shape)
    return out if out is not None else a.copy().reshape(shape)


def reshape_copy_forward(ctx, a, shape):
    ctx.input_shape = a.shape
    return a.copy().reshape(shape)


def squeeze_forward(ctx, a, dims):
    ctx.input_shape = a.shape
    return _ci().squeeze(a, dims)


def unsqueeze_forward(ctx, a, dim):
    ctx.input_shape = a.shape
    return _ci().expand_dims(a, dim)


def expand_forward(ctx, a, shape):
    ctx.input_shape = a.shape
    return a.broadcast_to(shape)


def transpose_forward(ctx, a, dim0, dim1):
    if not a.ndim:
        return _ci().alias(a)
    axes = list(range(a.ndim))
    axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
    return a.transpose(axes)


def _join_into(out, arrays, dim, sizes) -> None:
    """Copy each array into its slice of ``out`` along ``dim`` (strided device copies)."""
    be = dispatch.cuda_backend()
    lead, start = (slice(None),) * dim, 0
    for a, n in zip(arrays, sizes):
        be.copy_into(out[lead + (slice(start, start + n),)], a)
        start += n


def cat_forward(ctx, *arrays, dim, ndim):
    ctx.sizes = tuple(None if a.shape == (0,) and ndim != 1 else a.shape[dim] for a in arrays)
    kept = [a for a, s in zip(arrays, ctx.sizes) if s is not None]
    sizes = [a.shape[dim] for a in kept]
    shape = kept[0].shape[:dim] + (sum(sizes),) + kept[0].shape[dim + 1:]
    out = dispatch.cuda_backend().empty(shape, np.result_type(*(a.dtype for a in kept)),
                                        kept[0].index)
    _join_into(out, kept, dim, sizes)
    return out


def stack_forward(ctx, *arrays, dim):
    shape = arrays[0].shape[:dim] + (len(arrays),) + arrays[0].shape[dim:]
    out = dispatch.cuda_backend().empty(shape, np.result_type(*(a.dtype for a in arrays)),
                                        arrays[0].index)
    # entry i goes to the size-1 slice i:i+1 of a view with the new dim in place
    _join_into(out, [_ci().expand_dims(a, dim) for a in arrays], dim, [1] * len(arrays))
    return out


def diagonal_forward(ctx, a, offset, dim1, dim2):
    ctx.input_shape = a.shape
    return _ci().diagonal(a, offset, dim1, dim2)


def diagonal_backward_forward(ctx, g, shape, offset, dim1, dim2):
    be = dispatch.cuda_backend()
    out = be.zeros(shape, g.dtype, g.index)
    be.copy_into(_ci().diagonal(out, offset, dim1, dim2), g)
    return out


def permute_forward(ctx, a, dims):
    return a.transpose(dims)


def t_forward(ctx, a):
    return a.T


def roll_forward(ctx, a, shifts, dims):
    """``roll`` over CUDA arrays: per rolled dim, the two pieces ``[n - s:]`` and ``[:n - s]``
    copied into their places of a fresh array (``dims=None``: the flattened array)."""
    be = dispatch.cuda_backend()
    shape = a.shape
    if dims is None or a.ndim == 0:  # (a 0-d tensor rolls as its one element)
        a = view_forward(ctx, a, (a.size,))
        dims, shifts = (0,), shifts[:1]
    for s, d in zip(shifts, dims):
        n = a.shape[d]
        s = s % n if n else 0
        out = be.empty(a.shape, a.dtype, a.index)
        if s == 0:
            be.copy_into(out, a)
        else:
            lead = (slice(None),) * d
            be.copy_into(out[lead + (slice(0, s),)], a[lead + (slice(n - s, n),)])
            be.copy_into(out[lead + (slice(s, n),)], a[lead + (slice(0, n - s),)])
        a = out
    return a if a.shape == shape else view_forward(ctx, a, shape)
