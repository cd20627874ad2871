"""``cond``: pick one of two functions by a predicate (JAX's ``lax.cond``).

Eager (and under ``jitgrad.func`` transforms) only the chosen branch runs, on the operands, and
records its own graph, so gradients of any order flow through it. Inside ``jitgrad.compile`` a
predicate known when tracing (a Python bool, or a value computed from constants) selects the
branch once for the program; a bool Tensor argument becomes a value guard (one program per
value, Note [value guards]); a predicate the function computes captures both branches and
the program picks one at each call (Note [compiled cond] in ``cond_capture.py``): the program
never bakes in a stale branch.
"""
from __future__ import annotations

from ..func._batching import is_batched
from ..func._pytree import tree_flatten, tree_unflatten
from ..ops.binary import where
from ..tensor import Tensor
from . import trace
from .cond_capture import captures, traced_cond
from .loop import describe_leaves


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    ``pred`` is a bool or a one-element Tensor; a branch returns a Tensor or a tuple / list /
    dict of Tensors. Only the branch taken runs."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise ValueError("cond: pred must be a bool or a one-element Tensor (got shape "
                             f"{tuple(pred.shape)})")
        if is_batched(pred):  # inside vmap, a predicate per example
            return _select(pred, true_fn, false_fn, operands)
        tracer = trace.current()
        if tracer is not None and not tracer.suspended and captures(tracer, pred):
            return traced_cond(tracer, pred, true_fn, false_fn, operands)
        # (inside a trace the host-read hook decides: a constant is read, a bool argument
        # becomes a value guard: one program per value)
        taken = bool(pred._host("cond's predicate").reshape(-1)[0])
    else:
        taken = bool(pred)
    out = (true_fn if taken else false_fn)(*operands)
    leaves, _ = tree_flatten(out)
    if not all(isinstance(t, Tensor) for t in leaves):
        raise TypeError("cond: a branch must return Tensors (or a tuple / list / dict of "
                        f"them); got {[type(t).__name__ for t in leaves]}")
    return out


def _select(pred, true_fn, false_fn, operands):
    """``cond`` under ``vmap`` with a predicate that differs between examples: both branches
    run on the whole batch and each example takes its branch's result, ``where(pred, t, f)``
    (as ``jax.lax.cond`` under ``vmap``). Gradients reach each branch through the examples
    that took it."""
    t_leaves, t_spec = tree_flatten(true_fn(*operands))
    f_leaves, f_spec = tree_flatten(false_fn(*operands))
    if t_spec != f_spec or any(not isinstance(a, Tensor) or not isinstance(b, Tensor)
                               or tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype
                               for a, b in zip(t_leaves, f_leaves)):
        raise ValueError("cond: under vmap with a batched predicate both branches run, and "
                         "must return the same structure, shapes and dtypes (got "
                         f"{describe_leaves(t_leaves)} and {describe_leaves(f_leaves)})")
    choose = pred.reshape(()).bool()
    return tree_unflatten([where(choose, a, b) for a, b in zip(t_leaves, f_leaves)], t_spec)

