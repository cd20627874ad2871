"""Shared helpers of the torch_* families (PyTorch's functions that jitgrad lacked, issue 35).

Note [pointwise rows]: a broadcasting op whose derivative in each input is a factor (``d out /
d x_i``) is declared by its forward over arrays and one ``partials`` function written with
Tensor ops: its backward is ``g * d_i`` per input (``Mask(m)``: ``where(m, g, 0)``, Note [masked
gradients] in ops/binary.py; ``None``: a zero gradient), its jvp ``sum_i t_i * d_i``, its vmap
rule the op on the batched operands lined up behind the batch dim. Because ``partials`` is
Tensor code, the backward records its own graph: double backward needs nothing more.

Functions that PyTorch implements as a composition (``hstack`` is ``cat`` of ``atleast_1d``s,
its ``grad_fn`` a ``CatBackward0``) are compositions here too: each family lists them in its
``FUNCTIONS`` (exported as top-level ``jitgrad`` names) and declares their Tensor methods with
``methods.declare``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from . import torch_cuda
from .core import dispatch
from .core.registry import OPS, def_composite


class Mask:
    """A partial derivative that is 1 where ``mask`` holds and 0 elsewhere (a ``where``)."""

    __slots__ = ("mask",)

    def __init__(self, mask):
        self.mask = mask


def tensor(x, op: str):
    """``x`` as a Tensor operand of ``op`` (numbers and arrays become constant tensors)."""
    return dispatch.tensor_operand(x, op)


def floating(a: np.ndarray) -> np.ndarray:
    """``a`` itself when floating or complex, else ``a`` in the default float dtype (PyTorch
    computes integer inputs of a float function in it)."""
    if a.dtype.kind in "fc":
        return a
    return a.astype(dtypes.get_default_dtype().np)


def result_dtype(*arrays) -> np.dtype:
    """The float dtype of a float function of ``arrays`` (promoted; integers: the default)."""
    dt = np.result_type(*arrays)
    return dt if dt.kind in "fc" else dtypes.get_default_dtype().np


def _times(g, d):
    from .binary import where

    if isinstance(d, Mask):
        return where(d.mask, g, 0.0)
    return g * d


def _zeros(g):
    return dispatch.zeros(g.shape, g.dtype, g.device)


def aligned(args, batched) -> list:
    """The operands of a broadcasting op under vmap: each batched one reshaped so its batch dim
    lines up in front of every operand's example dims (unbatched ones broadcast as they are)."""
    from .shape import reshape

    ndim = max(a.ndim - int(b) for a, b in zip(args, batched))
    out = []
    for a, b in zip(args, batched):
        if b and a.ndim - 1 < ndim:
            a = reshape(a, (a.shape[0],) + (1,) * (ndim - a.ndim + 1) + tuple(a.shape[1:]))
        out.append(a)
    return out


def def_pointwise(name, node_name, inputs, forward, partials, save, attrs=(), method=True,
                  export=True):
    """A broadcasting row from ``forward(ctx, *arrays, **attrs)`` and ``partials(**saved,
    **attrs)`` (Note [pointwise rows]); ``save`` names what ``partials`` reads (inputs,
    ``"result"``)."""
    def backward(ctx, g, **saved):
        ds = partials(**saved, **{a: getattr(ctx, a) for a in attrs})
        return tuple((_zeros(g) if d is None else _times(g, d)) if need else None
                     for need, d in zip(ctx.needs_input_grad, ds))

    def jvp(tangents, primals, outs, **attr_values):
        env = dict(zip(inputs, primals), result=outs[0])
        ds = partials(**{k: env[k] for k in save}, **attr_values)
        total = None
        for t, d in zip(tangents, ds):
            if t is None:
                continue
            c = _zeros(t) if d is None else _times(t, d)
            total = c if total is None else total + c
        return total

    def batch_rule(args, batched, **attr_values):
        return dispatch.composite(OPS[name], *aligned(args, batched), **attr_values)

    def array_forward(ctx, *arrays, **attr_values):  # (a 0-d result stays an array)
        return np.asarray(forward(ctx, *arrays, **attr_values))

    return def_composite(name, node_name, inputs, array_forward, backward, attrs=attrs, save=save,
                         jvp=jvp, batch_rule=batch_rule,
                         cuda_forward=torch_cuda.host_forward(array_forward), method=method,
                         export=export)


def host_arrays(op: str, *tensors) -> list:
    """The values of ``tensors`` on the host, for a function that is not differentiable (an
    integer or boolean result, a count, a sample): each read is reported to the tracer."""
    out = []
    for t in tensors:
        if isinstance(t, dispatch.Tensor):
            out.append(t._host(f"{op}() reads its input's values"))
        else:
            out.append(np.asarray(t))
    return out


def constant(array, like=None):
    """A tensor over the computed ``array`` (no gradient), on ``like``'s device."""
    out = dispatch.Tensor._make(np.array(array, order="C"))  # (a 0-d array stays 0-d)
    if like is not None and isinstance(like, dispatch.Tensor) and like.is_cuda:
        out = out.to(like.device)
    return out
