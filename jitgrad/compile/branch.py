"""``cond``: pick one of two functions by a predicate (JAX's ``lax.cond``).

Eager (and under ``jitgrad.func`` transforms) only the chosen branch runs, on the operands, and
records its own graph, so gradients of any order flow through it. Inside ``jitgrad.compile`` a
predicate known when tracing (a Python bool, or a value computed from constants) selects the
branch once for the program; a bool Tensor argument becomes a value guard (one program per
value, Note [value guards]); a predicate computed from float inputs makes the function run
eagerly, with the compile warning that names it: the program never bakes in a stale branch.
"""
from __future__ import annotations

from ..func._pytree import tree_flatten
from ..tensor import Tensor


def cond(pred, true_fn, false_fn, *operands):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    ``pred`` is a bool or a one-element Tensor; a branch returns a Tensor or a tuple / list /
    dict of Tensors. Only the branch taken runs."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise ValueError("cond: pred must be a bool or a one-element Tensor (got shape "
                             f"{tuple(pred.shape)})")
        # (inside a trace the host-read hook decides: a constant is read, a bool argument
        # becomes a value guard (one program per value), a computed value stops the capture)
        taken = bool(pred._host("cond's predicate").reshape(-1)[0])
    else:
        taken = bool(pred)
    out = (true_fn if taken else false_fn)(*operands)
    leaves, _ = tree_flatten(out)
    if not all(isinstance(t, Tensor) for t in leaves):
        raise TypeError("cond: a branch must return Tensors (or a tuple / list / dict of "
                        f"them); got {[type(t).__name__ for t in leaves]}")
    return out
