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

from ..func._pytree import tree_flatten
from ..tensor import Tensor
from . import trace
from .cond_capture import captures, traced_cond


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    ``pred`` is a bool or a one-element Tensor; a branch returns a Tensor or a tuple / list /
    dict of Tensors. Only the branch taken runs."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise ValueError("cond: pred must be a bool or a one-element Tensor (got shape "
                             f"{tuple(pred.shape)})")
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
