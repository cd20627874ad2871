"""``while_loop``: a loop with a trip count only the values decide, differentiable in reverse
mode under a memory cap.

JAX refuses reverse mode through ``lax.while_loop``: it would have to keep every step. Here the
forward keeps a tape of carries, thinned to stay under ``max_tape_bytes`` (Note [while tape]),
and the backward recomputes what it needs from the tape.

Note [while tape]: the forward runs the steps without recording a graph and keeps the carry
every ``stride`` steps (stride 1 at first). When the kept carries would pass the cap, every
other one is dropped and the stride doubles, so the tape holds at most ``cap`` bytes whatever
the trip count. The backward walks the segments between kept carries from the last: a segment
short enough to fit half the cap is recomputed step by step into a buffer, then walked back one
step at a time (the step re-run with grad mode on, and its vector-Jacobian product taken); a
longer one is halved (its middle carry recomputed) and each half done the same way, the second
first. Memory stays within about the cap plus one carry per halving; the steps are recomputed
O(log(n / segment)) times. The tensors the body reads that require grad (parameters it closes
over) are found while the forward runs, as ``checkpoint`` finds them (Note [checkpoint inputs]
in ``utils/checkpoint.py``), and their gradients are summed over the steps.
"""
from __future__ import annotations

from ..autograd import Function, forward_ad, transforms
from ..autograd import grad as autograd_grad
from ..func._batching import inner, is_batched
from ..func._pytree import tree_flatten, tree_unflatten
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..ops import creation
from ..ops.binary import where
from ..tensor import Tensor
from . import trace
from .while_capture import traced_while

#: the default cap on the bytes of carries the forward keeps for the backward
DEFAULT_TAPE_BYTES = 256 << 20


def while_loop(cond_fn, body_fn, carry, *, max_tape_bytes=DEFAULT_TAPE_BYTES):
    """``while cond_fn(carry): carry = body_fn(carry)``; returns the last carry.

    ``carry`` is a Tensor or a tuple / list / dict of Tensors; ``body_fn`` returns the same
    structure with the same shapes and dtypes; ``cond_fn`` returns a bool or a one-element
    Tensor. Differentiable in reverse mode with respect to the carry and the tensors the body
    reads, keeping at most ``max_tape_bytes`` of carries (Note [while tape]); the body must
    compute the same thing when run again (jitgrad's random draws are replayed). A second
    derivative through the loop raises: nest a ``fori_loop``/``scan`` or write the Python loop
    for that."""
    leaves, spec = tree_flatten(carry)
    if not leaves or not all(isinstance(t, Tensor) for t in leaves):
        raise TypeError("while_loop: carry must be a Tensor or a tuple / list / dict of Tensors "
                        f"(got {type(carry).__name__})")
    loop = _Loop(cond_fn, body_fn, spec, leaves, max_tape_bytes)
    if any(is_batched(t) for t in leaves):
        return tree_unflatten(_batched(loop, leaves), spec)
    tracer = trace.current()
    if tracer is not None and not tracer.suspended:
        return traced_while(tracer, loop, carry)
    if not is_grad_enabled() or forward_ad.levels_open():
        # (forward mode: plain ops carry the tangents, which need no tape; a reverse graph, if
        # wanted too, then holds every step)
        return tree_unflatten(loop.run_plain(leaves), spec)
    used: dict = {}
    transforms.push_collector(used)
    try:
        with no_grad():
            final = loop.forward(leaves)
    finally:
        transforms.pop_collector()
    for t in leaves:
        used.pop(id(t), None)
    loop.closures = [t for t in used.values() if t.dtype.is_floating_point]
    if not any(t.requires_grad for t in leaves) and not loop.closures:
        return tree_unflatten(final, spec)
    outs = _WhileLoop.apply(loop, final, *leaves, *loop.closures)
    return tree_unflatten(list(outs), spec)


def _batched(loop, state) -> list:
    """``while_loop`` under ``vmap`` (a carry batched over examples), as ``jax.lax.while_loop``
    under ``vmap``: the loop runs while some example's predicate holds, and an example whose
    predicate is false keeps its carry, ``where(pred, body(carry), carry)``. Each example gets
    its own loop's result and gradient; the steps are recorded as plain ops (reverse mode keeps
    every step: no tape cap under vmap), and the body also runs on finished examples, whose
    values it must not turn into NaN or inf (their gradient would be NaN)."""
    while True:
        c = loop.cond_fn(tree_unflatten(list(state), loop.spec))
        if not (isinstance(c, Tensor) and is_batched(c)):
            if not loop.decide(c):
                return state
            state = loop.step(state)
            continue
        if c.numel() != 1:
            raise ValueError("while_loop: cond_fn must return a bool or a one-element Tensor "
                             f"per example (got shape {tuple(c.shape)})")
        if not bool(inner(c).any()):  # (every example is done)
            return state
        keep_going = c.reshape(()).bool()
        state = [where(keep_going, new, old) for new, old in zip(loop.step(state), state)]


class _Loop:
    """One call's loop: the functions, the tape and the walk back over it."""

    def __init__(self, cond_fn, body_fn, spec, leaves, cap):
        self.cond_fn, self.body_fn, self.spec = cond_fn, body_fn, spec
        self.meta = [(tuple(t.shape), t.dtype) for t in leaves]
        self.carry_bytes = sum(t._data.nbytes for t in leaves)
        if cap < 2 * self.carry_bytes:
            raise ValueError(f"while_loop: max_tape_bytes={cap} holds fewer than two carries of "
                             f"{self.carry_bytes} bytes; raise it")
        self.cap = cap
        self.closures: list = []
        self.tape: list = []  # (step, carry leaves, random state): Note [while tape]
        self.stride, self.steps = 1, 0

    def holds(self, state) -> bool:
        return self.decide(self.cond_fn(tree_unflatten(list(state), self.spec)))

    @staticmethod
    def decide(c) -> bool:
        """``cond_fn``'s result as a Python bool."""
        if isinstance(c, Tensor):
            if c.numel() != 1:
                raise ValueError("while_loop: cond_fn must return a bool or a one-element Tensor "
                                 f"(got shape {tuple(c.shape)})")
            return bool(c._host("while_loop's condition").reshape(-1)[0])
        return bool(c)

    def step(self, state) -> list:
        out = self.body_fn(tree_unflatten(list(state), self.spec))
        leaves, spec = tree_flatten(out)
        if spec != self.spec or any(
                not isinstance(t, Tensor) or (tuple(t.shape), t.dtype) != m
                for t, m in zip(leaves, self.meta)):
            raise TypeError("while_loop: body_fn must return the carry's structure with the same "
                            f"shapes and dtypes (carry {self.meta}, body returned "
                            f"{[(tuple(t.shape), t.dtype) if isinstance(t, Tensor) else type(t).__name__ for t in leaves]})")
        return leaves

    def run_plain(self, state):
        while self.holds(state):
            state = self.step(state)
        return state

    def forward(self, state):
        """The loop without a graph, keeping the tape under the cap (Note [while tape])."""
        state = [t.detach() for t in state]
        self.tape = [(0, state, creation._rng.bit_generator.state)]
        while self.holds(state):
            state = [t.detach() for t in self.step(state)]
            self.steps += 1
            if self.steps % self.stride == 0:
                self.tape.append((self.steps, state, creation._rng.bit_generator.state))
                if len(self.tape) * self.carry_bytes > self.cap:
                    self.stride *= 2
                    self.tape = [e for e in self.tape if e[0] % self.stride == 0]
        return state

    def tape_bytes(self) -> int:
        return len(self.tape) * self.carry_bytes

    def backward(self, grads):
        """The gradients of the initial carry and the closures, from the final carry's."""
        g = [gr if gr is not None else creation.zeros(s, dtype=d)
             for gr, (s, d) in zip(grads, self.meta)]
        self.acc = [None] * len(self.closures)
        stand_ins = [t.detach().requires_grad_() for t in self.closures]
        transforms.push_substitutes({id(t): s for t, s in zip(self.closures, stand_ins)})
        self.stand_ins = stand_ins
        try:
            bounds = [e[0] for e in self.tape[1:]] + [self.steps]
            for (start, state, rng), end in reversed(list(zip(self.tape, bounds))):
                g = self._reverse(state, rng, start, end, g)
        finally:
            transforms.pop_substitutes()
        return g, self.acc

    def _advance(self, state, rng, steps):
        """The carry ``steps`` steps after ``state`` (and the random state then)."""
        saved = creation._rng.bit_generator.state
        creation._rng.bit_generator.state = rng
        try:
            with no_grad():
                for _ in range(steps):
                    state = [t.detach() for t in self.step(state)]
            return state, creation._rng.bit_generator.state
        finally:
            creation._rng.bit_generator.state = saved

    def _reverse(self, state, rng, start, end, g):
        """Walk back the steps ``start`` to ``end - 1``, the first from ``state``."""
        if end == start:
            return g
        if (end - start) * self.carry_bytes > self.cap // 2 and end - start > 1:
            middle = (start + end) // 2
            mid_state, mid_rng = self._advance(state, rng, middle - start)
            g = self._reverse(mid_state, mid_rng, middle, end, g)
            return self._reverse(state, rng, start, middle, g)
        states = [(state, rng)]
        for _ in range(end - start - 1):
            states.append(self._advance(*states[-1], 1))
        for state, rng in reversed(states):
            g = self._vjp(state, rng, g)
        return g

    def _vjp(self, state, rng, g):
        """One step walked back: the step re-run with grad mode on from ``state``."""
        ins = [t.detach().requires_grad_(t.dtype.is_floating_point) for t in state]
        saved = creation._rng.bit_generator.state
        creation._rng.bit_generator.state = rng
        try:
            with enable_grad():
                out = self.step(ins)
        finally:
            creation._rng.bit_generator.state = saved
        pairs = [(o, gr) for o, gr in zip(out, g) if o.requires_grad]
        targets = [t for t in ins if t.requires_grad] + self.stand_ins
        grads = list(autograd_grad([o for o, _ in pairs], targets, [gr for _, gr in pairs],
                                   allow_unused=True)) if pairs and targets else [None] * len(targets)
        new_g = []
        for t, (s, d) in zip(ins, self.meta):
            gr = grads.pop(0) if t.requires_grad else None
            new_g.append(gr.detach() if gr is not None else creation.zeros(s, dtype=d))
        for k, gr in enumerate(grads):
            if gr is not None:
                self.acc[k] = gr.detach() if self.acc[k] is None else self.acc[k] + gr.detach()
        return new_g


class _WhileLoop(Function):
    """The node standing for a whole ``while_loop`` (Note [while tape])."""

    @staticmethod
    def forward(ctx, loop, final, *inputs):
        ctx.loop, ctx.n_carry = loop, len(final)
        outs = tuple(t.detach().clone() for t in final)
        ctx.mark_non_differentiable(*[o for o in outs if not o.dtype.is_floating_point])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        if is_grad_enabled():
            raise RuntimeError("while_loop: a second derivative through the loop is not "
                               "supported (its tape is recomputed without a graph); use "
                               "fori_loop or scan, or a Python loop, for higher order")
        g, acc = ctx.loop.backward(list(grads))
        carry_grads = [gr if dtype.is_floating_point else None
                       for gr, (_, dtype) in zip(g, ctx.loop.meta)]
        return (None, None) + tuple(carry_grads) + tuple(acc)
