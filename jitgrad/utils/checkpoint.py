"""Activation checkpointing: trade compute for memory (PyTorch's
``torch.utils.checkpoint``).

``checkpoint(fn, *args)`` runs ``fn`` without recording its graph, so none of its intermediate
results stay alive until backward; the backward runs ``fn`` again (with grad mode on) and
differentiates that recomputation. Peak memory of a deep network drops from "every activation"
to "the segment boundaries plus one segment".

Note [checkpoint inputs]: the checkpoint node's inputs are not only the tensor arguments but
every tensor that requires grad which ``fn`` uses (parameters it closes over included): they
are collected while ``fn`` runs (the dispatch hook sees every op's operands; under no_grad
nothing ``fn`` makes requires grad, so each such operand comes from outside). The backward
then asks ``autograd.grad`` for exactly those, so ``.backward()``, ``autograd.grad(...,
inputs)``, closed-over parameters and double backward all behave as without checkpointing.
The random generator state is saved and restored for the recomputation
(``preserve_rng_state``), so dropout-like randomness is replayed identically.
"""
from __future__ import annotations

from ..autograd import Function, transforms
from ..autograd import grad as autograd_grad
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..ops import creation
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


def _flatten_outputs(out):
    return (out, True) if isinstance(out, tuple) else ((out,), False)


class _Checkpoint(Function):
    """The node standing for a whole checkpointed segment (Note [checkpoint inputs])."""

    @staticmethod
    def forward(ctx, run, outputs, *inputs):
        ctx.run = run
        ctx.n_inputs = len(inputs)
        return tuple(o.detach() if isinstance(o, Tensor) else o for o in outputs)

    @staticmethod
    def backward(ctx, *grads):
        # the recomputation sees stand-ins for the inputs (Note [checkpoint inputs]), so that
        # autograd.grad returns the partial derivative for each input, not a total derivative
        # through another input's history; recorded views of the inputs under create_graph
        inputs = ctx.run.inputs
        if is_grad_enabled():
            stand_ins = [_alias(x) for x in inputs]
        else:
            stand_ins = [x.detach().requires_grad_() for x in inputs]
        transforms.push_substitutes({id(x): s for x, s in zip(inputs, stand_ins)})
        try:
            with enable_grad():
                outs = ctx.run.recompute()
        finally:
            transforms.pop_substitutes()
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            return (None, None) + (None,) * ctx.n_inputs
        got = autograd_grad([o for o, _ in pairs], stand_ins, [g for _, g in pairs],
                            create_graph=is_grad_enabled(), allow_unused=True)
        return (None, None) + tuple(got)


def _alias(x):
    from ..ops.core import dispatch
    from ..ops import shape

    return dispatch.composite(shape.VIEW, x, shape=tuple(x.shape))


class _Run:
    """What the recomputation needs: the function, its arguments and the random state."""

    def __init__(self, function, args, kwargs, preserve_rng_state):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = (creation._rng.bit_generator.state if preserve_rng_state else None)
        self.inputs = ()

    def recompute(self):
        if self.rng_state is not None:
            saved = creation._rng.bit_generator.state
            creation._rng.bit_generator.state = self.rng_state
        try:
            out = self.function(*self.args, **self.kwargs)
        finally:
            if self.rng_state is not None:
                creation._rng.bit_generator.state = saved
        return _flatten_outputs(out)[0]


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Run ``function(*args, **kwargs)`` without keeping its intermediate results; recompute
    them during backward (Note [checkpoint inputs]).

    Gradients are identical to the unchekpointed call's. ``function`` must compute the same
    thing when run again (random draws from jitgrad's generator are replayed when
    ``preserve_rng_state``); it may return a Tensor or a tuple. ``use_reentrant``,
    ``context_fn``, ``determinism_check`` and ``debug`` are accepted for PyTorch
    compatibility: there is one implementation, which works with ``backward()`` and
    ``autograd.grad`` alike.
    """
    if context_fn is not None:
        raise ValueError("checkpoint: context_fn is not supported")
    if not is_grad_enabled():
        return function(*args, **kwargs)
    run = _Run(function, args, kwargs, preserve_rng_state)
    used: dict = {}
    transforms.push_collector(used)
    try:
        with no_grad():
            out = function(*args, **kwargs)
    finally:
        transforms.pop_collector()
    for a in args:  # tensor arguments that need grad count even when used only through views
        if isinstance(a, Tensor) and a.requires_grad:
            used.setdefault(id(a), a)
    inputs = tuple(used.values())
    run.inputs = inputs
    outs, is_tuple = _flatten_outputs(out)
    if not inputs:
        return out
    res = _Checkpoint.apply(run, outs, *inputs)
    return res if is_tuple else res[0]


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list, or a module sequence) one after another on ``input``, in
    ``segments`` checkpointed chunks; the last chunk is not checkpointed (its activations are
    needed at once by the backward)."""
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    if segments < 1:
        raise ValueError("checkpoint_sequential: segments must be >= 1")
    size = max(len(functions) // segments, 1)

    def run(start, end):
        def forward(x):
            for f in functions[start:end]:
                x = f(x)
            return x
        return forward

    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(start, end), input, **kwargs)
    return run(end, len(functions))(input)


class _CallableModule(__import__("types").ModuleType):
    """``jitgrad.utils.checkpoint`` is this module (PyTorch's layout:
    ``jitgrad.utils.checkpoint.checkpoint(fn, x)``) and can also be called directly:
    ``jitgrad.utils.checkpoint(fn, x)``."""

    def __call__(self, function, *args, **kwargs):
        return checkpoint(function, *args, **kwargs)


__import__("sys").modules[__name__].__class__ = _CallableModule
