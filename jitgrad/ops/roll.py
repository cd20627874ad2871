"""``roll``: a cyclic shift of a tensor's elements along dims (PyTorch's ``torch.roll``).

``y[..., (i + s) mod n, ...] = x[..., i, ...]`` along each rolled dim (size ``n``, shift
``s``); with ``dims=None`` the tensor is flattened, rolled and given its shape back. A roll is a
permutation of the elements, so it is linear and its derivative is the inverse permutation:
``g`` rolled by ``-s`` (over the same dims), which records a ``RollBackward0`` of its own for
double backward.
"""
from __future__ import annotations

import operator

import numpy as np

from ..kernels.cpu import shape as cpu_shape
from .core import dispatch
from . import shape_cuda
from .core.registry import LINEAR, def_composite, public
from .shape import wrap_dim


def _roll_fwd(ctx, a, shifts, dims):
    if dims is None or a.ndim == 0:  # (a 0-d tensor rolls as its one element)
        return _roll_flat(a, shifts[0])
    if a.ndim == 1 and len(shifts) == 1:
        return _roll_flat(a, shifts[0])
    return np.roll(a, shifts, axis=dims)


def _roll_flat(a, shift):
    """``np.roll(a, shift)`` (over the flattened array, shape kept) as two slice copies: the
    same elements in the same places, without np.roll's argument handling (Note [eager fast
    path] in ops/core/fastpath.py: it was most of a small roll's cost)."""
    if a.ndim == 1:  # the common call: one compiled copy (kernels/cpu/shape.py)
        out = cpu_shape.roll_flat(a, shift)
        if out is not None:
            return out
    n = a.size
    if n == 0:
        return np.roll(a, shift)
    shift %= n
    flat = a.reshape(-1)
    out = np.empty(n, a.dtype)
    out[shift:] = flat[:n - shift]
    out[:shift] = flat[n - shift:]
    return out if a.ndim == 1 else out.reshape(a.shape)


def _roll_back(ctx, g):
    back = tuple([-s for s in ctx.shifts])
    if dispatch.records_nothing(g):  # a plain backward: the same copy, unrecorded
        return (dispatch.Tensor._make(_roll_fwd(None, g._data, back, ctx.dims)),)
    return (roll(g, back, ctx.dims),)


def _roll_batch(args, batched, shifts, dims):
    x = args[0]
    if dims is None:  # flatten each example (not the batch), roll it, restore its shape
        from .shape import reshape

        flat = reshape(x, (x.shape[0], -1))
        out = dispatch.composite(ROLL, flat, shifts=shifts, dims=(1,))
        return reshape(out, tuple(x.shape))
    if x.ndim == 1:  # 0-d examples: a roll is the identity (here a roll by 0 of the batch)
        return dispatch.composite(ROLL, x, shifts=(0,), dims=(0,))
    return dispatch.composite(ROLL, x, shifts=shifts, dims=tuple(d + 1 for d in dims))


ROLL = def_composite("roll", "RollBackward0", ("x",), _roll_fwd, _roll_back,
                     attrs=("shifts", "dims"), jvp=LINEAR, batch_rule=_roll_batch,
                     cuda_forward=shape_cuda.roll_forward, method=True, export=True,
                     complex_ok=True)


def _ints(op: str, name: str, value) -> tuple:
    if type(value) is int:  # the common call
        return (value,)
    if isinstance(value, (tuple, list)):
        items = tuple(value)
    else:
        items = (value,)
    try:
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be an int or a tuple of ints, got "
                        f"{value!r}") from None


@public(ROLL)
def roll(x, shifts, dims=None):
    """Shift the elements of ``x`` cyclically by ``shifts`` along ``dims`` (ints or equally
    long tuples; ``dims=None``: along the flattened tensor, shape kept), as ``torch.roll``.

    ``y[..., (i + s) mod n, ...] = x[..., i, ...]``; derivative: ``g`` rolled by ``-shifts``.
    """
    if type(x) is not dispatch.Tensor:
        x = dispatch.tensor_operand(x, "roll")
    elif dims is None and type(shifts) is int and dispatch.transform_hook is None:
        out = cpu_shape.roll_flat(x._data, shifts)  # Note [eager fast path]: a 1-D CPU roll
        if out is not None:
            return dispatch.fresh_result(ROLL, x, out, {"shifts": (shifts,), "dims": None})
    shifts = _ints("roll", "shifts", shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                               "dims: 0 (with dims=None give a single shift)")
        return dispatch.composite(ROLL, x, shifts=shifts, dims=None)
    dims = _ints("roll", "dims", dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims: {len(dims)}")
    if not dims:
        raise RuntimeError("roll: `shifts` required")
    dims = tuple(wrap_dim("roll", d, x.ndim) for d in dims)
    return dispatch.composite(ROLL, x, shifts=shifts, dims=dims)
