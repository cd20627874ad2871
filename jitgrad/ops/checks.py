"""Boolean reductions and value checks as rows, so that ``jitgrad.compile`` captures the
argument validation scientific code does (a distribution's ``validate_args``, PyTorch's
default).

``all`` / ``any`` reduce ``x != 0`` over dims (PyTorch's ``Tensor.all(dim)``): bool results, no
gradient. Eagerly ``torch.all`` keeps NumPy's direct path (``jitgrad.numpy.all``); while a
trace may run (``upper.tracing()``) it records these rows, so ``constraints.independent``'s
``check(x).all(-1)`` is part of the program instead of a read of a traced value.

Note [value checks]: ``check_all(ok, head, value)`` raises ``ValueError(head + str(value))``
unless every element of the bool tensor ``ok`` is true. Eagerly it reads ``ok`` in Python. While
a trace may run it is the ``check`` row (``check=True``): the trace records it like any op, and
a compiled program runs it at every call, never folded as a constant or dropped as dead
(``Program``), so a compiled call raises where the eager call raises, its message showing that
call's values. Like a random draw, a check inside a loop body or a cond branch stops the trace
(their steps are traced once and a branch not taken would check). In a native segment the check
is ``np.all`` of the flags; when it fails the segment raises ``kernel_cache.CheckFailed`` and
its step runs the segment's items one by one, where this row raises the error with the values
(``compile/native.py``), so checks cost no Python step (eight schools written with validated
distributions: one native call).
"""
from __future__ import annotations

import numpy as np

from ..kernels.cpu import reduce as cpu_reduce
from .core import dispatch, upper
from .core.registry import def_composite


def _bool_reduce_fwd(ctx, x, dims, keepdim, kind):
    """``all`` (``kind="all"``: every element nonzero) or ``any`` of ``x`` over ``dims``
    (every dim when None): over adjacent dims jitgrad's fold kernel (the one native segments
    call), else NumPy's."""
    reduced = tuple(range(x.ndim)) if dims is None else dims
    shape = tuple(1 if d in reduced else n for d, n in enumerate(x.shape) if keepdim
                  or d not in reduced)
    layout = cpu_reduce.fold_layout(x.shape, reduced)
    if layout is not None and (x.dtype.kind in "biu" or x.dtype in (np.float32, np.float64)):
        return cpu_reduce.reduce_bool(x.reshape(layout), kind == "all").reshape(shape)
    reduce = np.all if kind == "all" else np.any
    return np.asarray(reduce(x, axis=dims, keepdims=keepdim))


def _check_fwd(ctx, ok, value, head):
    """Nothing (an empty array) when every element of ``ok`` is true, else
    ``ValueError(head + str(value))`` (``value`` shown as a tensor)."""
    if not np.all(ok):
        raise ValueError(head + str(dispatch.Tensor._make(np.array(value))))
    return np.zeros(0, dtype=bool)


def _no_backward(ctx, g):
    raise AssertionError("a bool reduction or a check has no differentiable input")


def _no_tangent(tangents, primals, outs, **attrs):
    return None


def _bool_reduce_batch(args, batched, dims, keepdim, kind):
    """vmap: the example's dims shift by one past the batch dim (every example dim when
    ``dims`` is None)."""
    (x,) = args
    nd = x.ndim - 1
    moved = tuple(range(1, nd + 1)) if dims is None else tuple(d % nd + 1 for d in dims)
    return dispatch.composite(BOOL_REDUCE, x, dims=moved, keepdim=keepdim, kind=kind)


def _check_batch(args, batched, head):
    """vmap: every example's values checked at once (the message shows the whole batch)."""
    ok, value = args
    done = dispatch.composite(CHECK, ok, value, head=head)
    return done.unsqueeze(0).expand((ok.shape[0],) + tuple(done.shape))


BOOL_REDUCE = def_composite("bool_reduce", "BoolReduceBackward", ("x",), _bool_reduce_fwd,
                            _no_backward, attrs=("dims", "keepdim", "kind"), no_grad=("x",),
                            jvp=_no_tangent, batch_rule=_bool_reduce_batch)
CHECK = def_composite("check", "CheckBackward", ("ok", "value"), _check_fwd, _no_backward,
                      attrs=("head",), no_grad=("ok", "value"), jvp=_no_tangent,
                      batch_rule=_check_batch, check=True)


def bool_reduce(x, dim, keepdim: bool, kind: str):
    """``all``/``any`` of the CPU tensor ``x`` over ``dim`` (an int, a tuple or None) as the
    row."""
    dims = None if dim is None else tuple(int(d) % max(x.ndim, 1) for d in (
        dim if isinstance(dim, (tuple, list)) else (dim,)))
    return dispatch.composite(BOOL_REDUCE, x, dims=dims, keepdim=bool(keepdim), kind=kind)


def check_all(ok, head: str, value) -> None:
    """Note [value checks]: ``ValueError(head + str(value))`` unless every element of ``ok``
    (a bool tensor, or a Python bool) is true."""
    if not upper.tracing() or not isinstance(ok, dispatch.Tensor) or ok.is_cuda:
        if not bool(ok.all() if isinstance(ok, dispatch.Tensor) else np.all(ok)):
            raise ValueError(f"{head}{value}")
        return
    dispatch.composite(CHECK, ok, value, head=head)
