"""``out=`` for the ``jitgrad.linalg`` functions (PyTorch's keyword-only argument)."""
from __future__ import annotations

import functools
import inspect

from ..graph.grad_mode import no_grad
from ..ops.core.writes import check_out_tensor, write_out
from ..tensor import Tensor


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def with_out(fn):
    """Add the keyword-only ``out=`` of ``torch.linalg`` to ``fn``: a Tensor (a tuple of
    Tensors for a tuple result) that receives the result, resized if needed, and is returned.
    As in PyTorch, ``out=`` is not recorded: no argument may require grad."""
    name = f"linalg.{fn.__name__}"

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        operands = list(_tensors(list(args) + list(kwargs.values())))
        for o in outs:
            check_out_tensor(name, o, operands)
        with no_grad():
            result = fn(*args, **kwargs)
        results = tuple(result) if isinstance(result, tuple) else (result,)
        if len(results) != len(outs):
            raise TypeError(f"{name}(): out= expects {len(results)} Tensor(s) for this result, "
                            f"got {len(outs)}")
        for o, r in zip(outs, results):
            write_out(name, o, r._data)  # device read: the computed result, copied into out
        if isinstance(result, tuple):
            return type(result)(*outs) if hasattr(result, "_fields") else outs
        return out

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    call.__signature__ = sig.replace(parameters=params)
    return call
