"""``fori_loop``: a loop that a compiled function captures as ONE loop node, never unrolled.

Eager, ``fori_loop(n, body, carry)`` is a Python loop. Inside a ``jitgrad.compile`` trace the
body is traced once, on placeholder carries, into a graph of its own (and its backward with
it: the body's rules, traced with ``create_graph=True``); the outer graph gets one
``LoopNode`` (run the body's steps ``n`` times, keeping each step's carry on a tape) and, in
its backward, one ``LoopBackwardNode`` (walk the tape backwards: per step, recompute the body
and run its backward from the step's carry: Note [loop tape]). The trace run itself computes
the loop eagerly without a graph and joins its result to the eager graph through
``ForiLoopBackward``, whose eager backward is the same walk over the tape.

Note [loop tape]: the tape holds the n + 1 carries (references to arrays the body made: no
copies); everything else a step's backward needs is recomputed from its carry, so the memory
is n carries, not n times the body's intermediates.

Note [carries requiring grad]: eager, a carry requires grad at a step when it is computed
from a tensor requiring grad; rules that check it (an argument without a derivative raises,
an in-place write of a tensor requiring grad raises, a float ``where`` condition is
differentiated) see exactly that. The traced body sees the same: its placeholders require
grad for the carries that require grad at some step of the eager loop, and only those. Which
ones is read from the traced body (``_step_rule``: per result, the carries and captured
values it is computed from through values requiring grad) and walked over the n steps
(``_GradFlow``); a carry found requiring grad later (a velocity at rest, after one step) has
the body traced again with it. The same walk gives the results' ``requires_grad`` after step
n (eager's: no grad_fn where nothing requiring grad reaches them) and which inputs a gradient
reaches (the others get no edge: ``allow_unused`` gives None, as eager).
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..autograd import api as autograd_api
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..graph.node import Node
from ..func._pytree import tree_flatten, tree_unflatten
from ..ops.core.recording import record_node
from ..tensor import Tensor
from . import codegen, segment, trace


def fori_loop(n, body, carry):
    """``carry = body(carry)``, ``n`` times; returns the last carry.

    ``carry`` is a Tensor or a tuple / list / dict of Tensors; ``body`` returns the same
    structure, with the same shapes and dtypes. ``n`` is a Python int. Eager this is a Python
    loop; inside ``jitgrad.compile`` it is one loop in the program, forward and backward, so
    compile time does not grow with ``n``."""
    n = _check_count(n)
    tracer = trace.current()
    if tracer is None or tracer.suspended or n == 0:
        for _ in range(n):
            carry = _checked(body(carry), carry)
        return carry
    return _traced(tracer, n, body, carry)


def _check_count(n) -> int:
    if isinstance(n, Tensor) or not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"fori_loop: n must be a Python int (got {type(n).__name__}); the "
                        "number of steps is part of the program")
    if n < 0:
        raise ValueError(f"fori_loop: n must be >= 0 (got {n})")
    return int(n)


def _same_tensor(a, b) -> bool:
    return (type(a) is Tensor and type(b) is Tensor and a._data.shape == b._data.shape
            and a._data.dtype == b._data.dtype)


def _checked(new, old):
    # the common carries (a Tensor, a tuple of Tensors) without flattening them per step
    if type(new) is Tensor:
        if _same_tensor(new, old):
            return new
    elif type(new) is tuple and type(old) is tuple and len(new) == len(old):
        for a, b in zip(new, old):
            if not _same_tensor(a, b):
                break
        else:
            return new
    new_leaves, new_spec = tree_flatten(new)
    old_leaves, old_spec = tree_flatten(old)
    if new_spec != old_spec or any(
            not isinstance(a, Tensor) or a.shape != b.shape or a.dtype != b.dtype
            for a, b in zip(new_leaves, old_leaves)):
        raise TypeError("fori_loop: body must return the carry's structure with the same "
                        f"shapes and dtypes (carry {_describe(old_leaves)}, body returned "
                        f"{_describe(new_leaves)})")
    return new


def _describe(leaves) -> str:
    return "[" + ", ".join(f"{t.dtype.name}{list(t.shape)}" if isinstance(t, Tensor)
                           else type(t).__name__ for t in leaves) + "]"


class _LoopRow:
    """What a loop node says of itself where graph passes read a row's properties (Note
    [what compile knows of a row] in ops/core/registry.py): a composite that is no view."""

    elementwise = cheap = view = value_dependent_shape = False
    alias = identity = None
    node_name = ""

    def __init__(self, name):
        self.name = name


class LoopNode:
    """The forward of a captured loop in a graph: ``n`` runs of ``body_nodes``."""

    op = _LoopRow("fori_loop")
    phase = "forward"  # the trace's phase when recorded: set per node

    def __init__(self, n, carry_in, placeholders, body_nodes, body_outs, captured, tape):
        self.n, self.carry_in, self.placeholders = n, carry_in, placeholders
        self.body_nodes, self.body_outs, self.captured = body_nodes, body_outs, captured
        self.tape = tape  # the value holding the tape (Note [loop tape])
        self.outputs: list = []
        self.attrs, self.ctx, self.args = {}, {}, [("v", v) for v in carry_in + captured]
        self.backward = None  # the body's backward (``BodyBackward``), if traced

    def value_args(self):
        return self.carry_in + self.captured

    def backward_plan(self, graph):
        """``(saves, nodes, from_tape)``: the body values the forward keeps per step for the
        backward (results of rows that are not cheap to recompute, while the tape stays under
        ``SAVE_LIMIT_BYTES``), the nodes one backward step runs (the recomputed body nodes,
        then the body's backward), and the body outputs it reads from the tape instead, as
        (value, carry index) pairs. Note [loop tape]."""
        from .program import needed_nodes

        if getattr(self, "_plan", None) is not None:
            return self._plan
        back = self.backward
        wanted = {g for g in back.carry_grads + back.captured_grads if g is not None}
        back_nodes = needed_nodes(back.nodes, set(wanted))
        # (arrays a body node stashed are its results too: a nested loop's tape, indices)
        producer = {v: node for node in self.body_nodes for v in _made([node])}
        reads = {v for node in back_nodes for v in _reads(node) if v in producer}
        # a body output the backward reads is on the tape already (row it + 1)
        from_tape = [(v, k) for k, v in enumerate(self.body_outs)
                     if v in reads and v not in self.placeholders]
        reads -= {v for v, _ in from_tape}
        saves, budget = [], SAVE_LIMIT_BYTES
        for v in sorted(reads):
            value = graph.values[v]
            size = (self.n * value.dtype.itemsize * int(np.prod(value.shape)))
            if not producer[v].op.cheap and len(value.shape) >= 1 and size <= budget:
                saves.append(v)
                budget -= size
        keep, kept = reads - set(saves), []
        for node in reversed(self.body_nodes):  # the body nodes the unsaved reads need
            if _made([node]) & keep:
                kept.append(node)
                keep.update(a for a in _reads(node) if a not in saves)
        self._plan = (saves, kept[::-1] + back_nodes, from_tape)
        return self._plan

    def make_step(self, graph, weak, build_steps):
        from .program import needed_nodes, run_steps

        n, placeholders, body_outs = self.n, self.placeholders, self.body_outs
        carry_in, outputs, tape_vid, captured = self.carry_in, self.outputs, self.tape, self.captured
        saves = self.backward_plan(graph)[0] if self.backward is not None else []
        save_meta = [(graph.values[v].shape, graph.values[v].dtype) for v in saves]
        live = set(body_outs) | set(saves)
        # the body nodes the step's results need (a result the body dropped is not computed:
        # ``divmod(c, y)[0]`` leaves the remainder unread)
        body_nodes = needed_nodes(self.body_nodes, set(live))
        kernel = _loop_kernel(graph, body_nodes, weak, live, _forward_source,
                              (placeholders, body_outs, captured, saves))
        if kernel is None:
            steps = build_steps(graph, body_nodes, weak, live)

        def step(env):
            tape = tuple(_new_tape(n, env[v]) for v in carry_in)
            kept = tuple(np.empty((n,) + shape, dtype) for shape, dtype in save_meta)
            if kernel is not None:
                kernel(n, *tape, *kept, *[env[v] for v in captured])
            else:
                for i in range(n):
                    for vid, t in zip(placeholders, tape):
                        env[vid] = t[i]
                    run_steps(steps, env)
                    for vid, t in zip(body_outs, tape):
                        t[i + 1] = env[vid]
                    for vid, t in zip(saves, kept):
                        t[i] = env[vid]
            for vid, t in zip(outputs, tape):
                env[vid] = t[n].copy()
            env[tape_vid] = (tape, kept)
        return step

    def __repr__(self):
        return (f"{self.outputs} = fori_loop[{self.n}]({self.carry_in}, captured="
                f"{self.captured}) {{{len(self.body_nodes)} nodes}}")


class BodyBackward:
    """The body's traced backward: cotangent placeholders in (per carry; None for a body
    result that does not require grad: no gradient flows back through it), gradients out for
    the carry placeholders and the captured values that need them (None: no gradient)."""

    def __init__(self, nodes, cotangents, carry_grads, captured_diff, captured_grads):
        self.nodes, self.cotangents = nodes, cotangents
        self.carry_grads, self.captured_diff = carry_grads, captured_diff
        self.captured_grads = captured_grads


class LoopBackwardNode:
    """The backward of a captured loop: the tape walked backwards (Note [loop tape])."""

    op = _LoopRow("fori_loop_backward")
    phase = "backward"  # the trace's phase when recorded: set per node

    def __init__(self, loop, grads_in):
        self.loop, self.grads_in = loop, grads_in  # per final carry: a value id or None
        self.outputs: list = []  # gradients: carry inputs, then loop.backward.captured_diff
        self.attrs, self.ctx = {}, {}
        self.args = [("v", v) for v in self.value_args()]

    def value_args(self):
        return [g for g in self.grads_in if g is not None] + [self.loop.tape] + self.loop.captured

    def make_step(self, graph, weak, build_steps):
        from .program import run_steps

        loop, back = self.loop, self.loop.backward
        wanted = {g for g in back.carry_grads + back.captured_grads if g is not None}
        saves, nodes, from_tape = loop.backward_plan(graph)
        values = graph.values
        n, placeholders, grads_in = loop.n, loop.placeholders, self.grads_in
        cotangents, carry_grads = back.cotangents, back.carry_grads
        captured_grads, outputs, tape_vid = back.captured_grads, self.outputs, loop.tape
        captured = loop.captured
        carry_meta = [(values[v].shape, values[v].dtype) for v in placeholders]
        acc_meta = [(values[v].shape, values[v].dtype) for v in back.captured_diff]
        kernel = _loop_kernel(graph, nodes, weak, wanted, _backward_source,
                              (placeholders, cotangents, carry_grads, captured, captured_grads,
                               saves, from_tape))
        if kernel is None:
            steps = build_steps(graph, nodes, weak, wanted)
        n_carry = len(placeholders)

        def step(env):
            tape, kept = env[tape_vid]
            g = [np.ascontiguousarray(env[v]) if v is not None else np.zeros(s, d)
                 for v, (s, d) in zip(grads_in, carry_meta)]
            acc = [np.zeros(s, d) for s, d in acc_meta]
            if kernel is not None:
                g = kernel(n, *tape, *kept, *g, *[env[v] for v in captured], *acc)
            else:
                for i in range(n - 1, -1, -1):
                    for vid, t in zip(placeholders, tape):
                        env[vid] = t[i]
                    for vid, t in zip(saves, kept):
                        env[vid] = t[i]
                    for vid, k in from_tape:
                        env[vid] = tape[k][i + 1]
                    for vid, a in zip(cotangents, g):
                        if vid is not None:
                            env[vid] = a
                    run_steps(steps, env)
                    g = [env[v] if v is not None else np.zeros(s, d)
                         for v, (s, d) in zip(carry_grads, carry_meta)]
                    for a, v in zip(acc, captured_grads):
                        if v is not None:
                            a += env[v]
            for vid, a in zip(outputs[:n_carry], g):
                env[vid] = a
            for vid, a in zip(outputs[n_carry:], acc):
                env[vid] = a
        return step

    def __repr__(self):
        return f"{self.outputs} = fori_loop_backward[{self.loop.n}]({self.grads_in})"


SAVE_LIMIT_BYTES = 64 << 20  # body values kept per step for the backward, at most


def _new_tape(n, first):
    """Note [loop tape]: the n + 1 carries of one carry leaf, stacked; row 0 is ``first``."""
    tape = np.empty((n + 1,) + first.shape, first.dtype)
    tape[0] = first
    return tape


def _loop_kernel(graph, nodes, weak, live, source, names):
    """The generated function running a whole loop direction (Note [generated loops] in
    ``segment.py``), or None when a body part cannot be emitted."""
    from ..kernels.cpu import elementwise as cpu

    parts = codegen.partition(graph, nodes, weak, live, min_run=1)
    if not all(segment.supported(graph, p, weak) for p in parts):
        return None
    imports: list = []
    setup: list = []
    body = [line for p in parts for line in segment.emit(graph, p, weak, imports, setup)]
    src = source(names, body, imports, setup)
    name = "jgl_" + hashlib.sha1(src.encode()).hexdigest()[:20]
    return cpu.load_generated(name, src).loop


_HEADER = ["# Generated by jitgrad.compile (Note [generated loops]); do not edit.",
           "import numpy as np", "from numba import njit",
           # the disk cache that heals (Note [healing cache] in kernels/cpu/kernel_cache.py); the
           # body imports (codegen's) carry each body's source hash (Note [source keys])
           "from jitgrad.kernels.cpu.kernel_cache import njit as cached_njit"]


def _forward_source(names, body, imports, setup) -> str:
    placeholders, body_outs, captured, saves = names
    tapes = [f"tape{k}" for k in range(len(placeholders))]
    kept = [f"kept{k}" for k in range(len(saves))]
    caps = [f"c{k}" for k in range(len(captured))]
    lines = _HEADER + imports + ["", "@cached_njit(nogil=True, error_model='numpy')",
                                 f"def loop(n, {', '.join(tapes + kept + caps)}):"]
    lines += [f"    v{vid} = {c}" for vid, c in zip(captured, caps)]
    lines += ["    " + line for line in setup]
    lines += ["    for it in range(n):"]
    lines += [f"        v{vid} = {t}[it]" for vid, t in zip(placeholders, tapes)]
    lines += ["        " + line for line in body]
    lines += [f"        {t}[it + 1] = v{vid}" for vid, t in zip(body_outs, tapes)]
    lines += [f"        {t}[it] = v{vid}" for vid, t in zip(saves, kept)]
    return "\n".join(lines) + "\n"


def _backward_source(names, body, imports, setup) -> str:
    placeholders, cotangents, carry_grads, captured, captured_grads, saves, from_tape = names
    k = len(placeholders)
    tapes = [f"tape{j}" for j in range(k)] + [f"kept{j}" for j in range(len(saves))]
    gs = [f"g{j}" for j in range(k)]
    caps = [f"c{j}" for j in range(len(captured))]
    accs = [f"acc{j}" for j in range(len(captured_grads))]
    lines = _HEADER + imports + ["", "@cached_njit(nogil=True, error_model='numpy')",
                                 f"def loop(n, {', '.join(tapes + gs + caps + accs)}):"]
    lines += [f"    v{vid} = {c}" for vid, c in zip(captured, caps)]
    lines += ["    " + line for line in setup]
    lines += ["    for it in range(n - 1, -1, -1):"]
    lines += [f"        v{vid} = {t}[it]" for vid, t in zip(placeholders + saves, tapes)]
    lines += [f"        v{vid} = tape{k}[it + 1]" for vid, k in from_tape]
    lines += [f"        v{vid} = {g}" for vid, g in zip(cotangents, gs) if vid is not None]
    lines += ["        " + line for line in body]
    # copies: a gradient may live in a buffer the next step rewrites while it still reads it
    lines += [f"        {g} = v{vid}.copy()" if vid is not None
              else f"        {g} = np.zeros_like({g})" for vid, g in zip(carry_grads, gs)]
    lines += [f"        {a} += v{vid}" for vid, a in zip(captured_grads, accs) if vid is not None]
    lines += [f"    return ({', '.join(gs)},)"]
    return "\n".join(lines) + "\n"


def _traced(tracer, n, body, carry):
    leaves, spec = tree_flatten(carry)
    if not leaves or not all(isinstance(c, Tensor) for c in leaves):
        raise trace.GraphBreak("fori_loop's carry must be Tensors to be captured")
    refs = [tracer.ref(c) for c in leaves]
    carry_in = [r[0][1] for r in refs]
    run_with = [r[1] for r in refs]
    graph = tracer.graph
    outer_nodes = graph.nodes
    # Note [carries requiring grad]: the placeholders of the carries that require grad at some
    # step of the eager loop require grad, and only those (a carry that starts constant, like
    # a velocity at rest, may require grad after one step: the body is traced again)
    first = tuple(is_grad_enabled() and t._requires_grad and t.dtype.is_floating_point
                  for t in run_with)
    differentiable = first
    try:
        while True:
            body_nodes = graph.nodes = []
            placeholders, ph_vids, out_leaves, body_outs = _trace_body(
                tracer, body, spec, carry, run_with, differentiable)
            flow = _GradFlow(_step_rule(tracer, body_nodes, ph_vids, out_leaves, body_outs),
                             first, n)
            reached, last = flow.reached, flow.last
            if all(d or not r for r, d in zip(reached, differentiable)):
                break
            differentiable = tuple(d or r for d, r in zip(differentiable, reached))
        made = _made(body_nodes) | set(ph_vids)
        captured = _outside(body_nodes, made, body_outs)
        backward = None
        diff_out = [k for k, o in enumerate(out_leaves)
                    if o._requires_grad and o.dtype.is_floating_point]
        if is_grad_enabled() and diff_out and any(last):
            captured_diff = [v for v in captured if v in tracer.tensors
                             and tracer.tensor_of(v)._requires_grad]
            targets = ([p for p in placeholders if p._requires_grad]
                       + [tracer.tensor_of(v) for v in captured_diff])
            seeds = [tracer.cotangent(body_outs[k]) for k in diff_out]
            back_nodes = graph.nodes = []
            try:
                with tracer.saved_floats():
                    grads = autograd_api.grad([out_leaves[k] for k in diff_out], targets,
                                              seeds, create_graph=True, allow_unused=True)
            except Exception as exc:  # eager would meet it in the backward, if at all
                raise trace._fail(trace.GraphBreak(
                    f"fori_loop: the body's backward cannot be traced ({type(exc).__name__}: "
                    f"{exc})")) from exc
            grad_vids = [None if g is None else tracer.ref(g)[0][1] for g in grads]
            it = iter(grad_vids)
            carry_grads = [next(it) if p._requires_grad else None for p in placeholders]
            cotangents = [None] * len(placeholders)
            for k, s in zip(diff_out, seeds):
                cotangents[k] = tracer.ids[id(s)]
            backward = BodyBackward(back_nodes, cotangents, carry_grads, captured_diff, list(it))
            # what the body's backward reads that neither it nor the body makes (a constant its
            # rules made: ``floor``'s zero gradient) is captured too
            made |= _made(back_nodes) | {c for c in cotangents if c is not None}
            read = _outside(back_nodes, made, carry_grads + backward.captured_grads)
            captured += [v for v in read if v not in captured]
    finally:
        graph.nodes = outer_nodes
    tape_vid = graph.new_value((), np.dtype(object), "tape")
    loop = LoopNode(n, carry_in, ph_vids, body_nodes, body_outs, captured, tape_vid)
    loop.phase = tracer.phase
    loop.ctx = {"tape": tape_vid}  # made by the loop: a backward reading it keeps the loop
    loop.backward = backward
    # the result, computed eagerly without a graph, joined by ForiLoopBackward
    tracer.suspended += 1
    try:
        tape = [list(run_with)]
        with no_grad():
            state = tree_unflatten(list(run_with), spec)
            for _ in range(n):
                state = body(state)
                tape.append(tree_flatten(state)[0])
        final = [Tensor._make(t._data) for t in tape[-1]]
    finally:
        tracer.suspended -= 1
    if backward is not None and is_grad_enabled():
        _join(final, run_with, backward, tracer, loop, body, spec, tape, differentiable, flow)
    loop.outputs = [tracer.add(t, "op") for t in final]
    outer_nodes.append(loop)
    return tree_unflatten(final, spec)


def _trace_body(tracer, body, spec, carry, run_with, differentiable):
    """The body traced once on placeholder carries (leaves: the body's backward stops there),
    those in ``differentiable`` requiring grad: ``(placeholders, their value ids, the body's
    result leaves, their value ids)``. A placeholder holds a copy of its carry's array, so a
    body result sharing its array (``detach``) is the placeholder, not the outer carry."""
    tracer.suspended += 1
    placeholders = [Tensor._make(t._data.copy(), d) for t, d in zip(run_with, differentiable)]
    tracer.suspended -= 1
    ph_vids = [tracer.add(p, "carry") for p in placeholders]
    out = _checked(body(tree_unflatten(placeholders, spec)), carry)
    out_leaves, _ = tree_flatten(out)
    body_outs = [tracer.ref(o)[0][1] for o in out_leaves]
    return placeholders, ph_vids, out_leaves, body_outs


def _step_rule(tracer, body_nodes, ph_vids, out_leaves, body_outs) -> list:
    """Note [carries requiring grad]: per body result, what makes it require grad, read from
    the traced body: the indices of the carries it is computed from through values that
    require grad, and ``("v", id)`` for each captured value requiring grad it is computed
    from (``("v", None)``: it requires grad whatever the carries do, from no value the body
    reads); nothing for a result that does not require grad (``detach``)."""
    tensors = tracer.tensors

    def source(vid):
        if vid in deps:
            return deps[vid]
        t = tensors.get(vid)  # a captured value, or a constant
        return {("v", vid)} if t is not None and t._requires_grad else set()

    deps = {v: ({j} if tensors[v]._requires_grad else set()) for j, v in enumerate(ph_vids)}
    for node in body_nodes:
        args = set().union(*[source(a) for a in node.value_args()])
        for o in node.outputs:
            t = tensors.get(o)
            deps[o] = (args or {("v", None)}) if t is not None and t._requires_grad else set()
    return [frozenset(source(v)) if o._requires_grad else frozenset()
            for o, v in zip(out_leaves, body_outs)]


class _GradFlow:
    """Note [carries requiring grad]: which carries require grad at each step of the eager
    loop, from those at the start and the body's ``rule`` (``_step_rule``): ``reached``,
    whether each requires grad at some step the body runs on; ``last``, whether each does
    after the n-th; ``used()``, what a gradient of the results reaches. The flags repeat after
    a few steps: the walk stops at the first repeat (``start``, ``period``)."""

    def __init__(self, rule, first, n):
        self.rule, self.n = rule, n
        self.start = self.period = None
        states, seen = [first], {first: 0}
        while len(states) <= n:
            nxt = self._advance(states[-1])
            if nxt in seen:  # periodic from seen[nxt]: every state met comes before step n
                self.start, self.period = seen[nxt], len(states) - seen[nxt]
                break
            seen[nxt] = len(states)
            states.append(nxt)
        self.states = states
        run = states if self.period else states[:n]
        self.reached = tuple(any(s[k] for s in run) for k in range(len(first)))
        self.last = self.at(n)

    def _advance(self, flags):
        return tuple(any(not isinstance(j, int) or flags[j] for j in deps) for deps in self.rule)

    def at(self, t):
        """The flags of the carries the body gets at step ``t`` (``t == n``: the results)."""
        if t < len(self.states):
            return self.states[t]
        return self.states[self.start + (t - self.start) % self.period]

    def used(self):
        """``(carries, captured value ids)``: the carries at the start and the captured values
        a gradient of the results requiring grad reaches (the others get no gradient: eager
        leaves them unused). Walked back from step n; where the walk repeats itself in the
        periodic part, the repeats are skipped."""
        needed = frozenset(k for k, f in enumerate(self.last) if f)
        captured, seen, jumped = set(), {}, False
        t = self.n - 1
        while t >= 0 and needed:
            if self.period and t >= self.start and not jumped:
                key = ((t - self.start) % self.period, needed)
                if key in seen:
                    cycle = seen[key] - t
                    t -= (t - self.start) // cycle * cycle
                    jumped = True
                else:
                    seen[key] = t
            items = set().union(*[self.rule[k] for k in needed])
            captured.update(i[1] for i in items if not isinstance(i, int) and i[1] is not None)
            flags = self.at(t)
            needed = frozenset(j for j in items if isinstance(j, int) and flags[j])
            t -= 1
        return needed, captured


def _made(nodes) -> set:
    return {v for node in nodes for v in list(node.outputs) + list(node.ctx.values())}


def _reads(node) -> list:
    """The values ``node`` reads: its arguments and the stashed arrays its attributes name."""
    return node.value_args() + [a.vid for a in node.attrs.values() if isinstance(a, trace.CtxRef)]


def _outside(nodes, made, also=()) -> list:
    """The values ``nodes`` read (arguments, stashed arrays) and the values in ``also`` that
    are not in ``made``, in order, once each: what a loop direction captures from outside
    (an outer value, a constant; a body result not computed by an op: ``zeros_like(c)``,
    ``lambda c: y``)."""
    found = []
    for node in nodes:
        for vid in _reads(node):
            if vid not in made and vid not in found:
                found.append(vid)
    for vid in also:
        if vid is not None and vid not in made and vid not in found:
            found.append(vid)
    return found


def _join(final, run_with, backward, tracer, loop, body, spec, tape, differentiable, flow):
    """Join the loop's result to the eager graph: edges to the traced tensors (a closure's
    proxy, so a traced backward sees the gradient arrive there), gradients taken with respect
    to the tensors the body itself reads (a closure's own tensor: the trace ran the body's ops
    on its proxy only while recording). As eager (Note [carries requiring grad]): only the
    results with a history require grad, and only the tensors a gradient reaches get an
    edge (``autograd.grad(..., allow_unused=True)`` gives None for the others)."""
    values = tracer.graph.values
    diff = backward.captured_diff
    diff_captured = [tracer.tensor_of(v) for v in diff]
    read = [values[v].info["tensor"] if values[v].kind == "closure" else tracer.tensor_of(v)
            for v in diff]
    node = ForiLoopBackward(body, spec, tape, run_with, read, loop, differentiable)
    inputs = list(run_with) + diff_captured
    carries, captured = flow.used()
    reached = [k in carries for k in range(len(run_with))] + [v in captured for v in diff]
    # Note [one way to wire a node] (ops/core/recording.py)
    record_node(node, inputs, tuple(t._requires_grad and r for t, r in zip(inputs, reached)), final,
                flow.last)


class ForiLoopBackward(Node):
    """The eager backward of a loop a trace ran (Note [loop tape]); inside a trace's backward
    it records one ``LoopBackwardNode``."""

    def __init__(self, body, spec, tape, carry_in, captured, loop, differentiable):
        super().__init__()
        self._body, self._spec, self._tape = body, spec, tape
        self._carry_in, self._captured, self._loop = carry_in, captured, loop
        self._differentiable = differentiable  # the carries the body was traced requiring grad

    def apply(self, grad_outputs):
        tracer = trace.current()
        recording = tracer is not None and not tracer.suspended
        if recording:
            grads_in = [None if g is None else tracer.ref(g)[0][1] for g in grad_outputs]
            tracer.suspended += 1
        try:
            with no_grad():
                result = self._walk(grad_outputs)
        finally:
            if recording:
                tracer.suspended -= 1
        if recording:
            node = LoopBackwardNode(self._loop, grads_in)
            node.phase = tracer.phase
            node.outputs = [tracer.add(t, "op") for t in result]
            tracer.graph.nodes.append(node)
        n_carry = len(self._carry_in)
        return [g if t._requires_grad else None
                for g, t in zip(result, self._carry_in)] + result[n_carry:]

    def _walk(self, grad_outputs):
        tape, body, spec = self._tape, self._body, self._spec
        g = [gr if gr is not None else _zeros(t) for gr, t in zip(grad_outputs, tape[-1])]
        acc = [None] * len(self._captured)
        for i in range(len(tape) - 2, -1, -1):
            ins = [Tensor._make(t._data, d) for t, d in zip(tape[i], self._differentiable)]
            with enable_grad():
                out = tree_flatten(body(tree_unflatten(ins, spec)))[0]
                pairs = [(o, gr) for o, gr in zip(out, g) if o._requires_grad]
                targets = [t for t in ins if t._requires_grad] + self._captured
                grads = [None] * len(targets)
                if pairs and targets:
                    grads = list(autograd_api.grad([o for o, _ in pairs], targets,
                                                   [gr for _, gr in pairs], allow_unused=True))
            g = [grads.pop(0) if t._requires_grad else None for t in ins]
            g = [gr if gr is not None else _zeros(t) for gr, t in zip(g, ins)]
            for k, gr in enumerate(grads):
                if gr is not None:
                    acc[k] = gr if acc[k] is None else acc[k] + gr
        return g + [a if a is not None else _zeros(t) for a, t in zip(acc, self._captured)]

    def _release(self):
        self._released = True
        self._tape = None


def _zeros(t):
    return Tensor._make(np.zeros(t.shape, t._data.dtype))
