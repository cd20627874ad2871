"""``fori_loop`` and ``scan``: loops a compiled function captures as ONE loop node, never
unrolled (the nodes: ``loop_nodes.py``).

Eager, ``fori_loop(n, body, carry)`` and ``scan(f, init, xs)`` are Python loops. Inside a
``jitgrad.compile`` trace the body is traced once, on placeholder carries, into a graph of its own (and its backward with
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

import numpy as np

from ..autograd import api as autograd_api
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..graph.node import Node
from ..func._pytree import tree_flatten, tree_unflatten
from ..ops.core.recording import record_node
from ..ops.creation import zeros
from ..ops.shape import stack
from ..tensor import Tensor
from . import trace
from .loop_nodes import BodyBackward, LoopBackwardNode, LoopNode, made, outside


def fori_loop(n, body, carry):
    """``carry = body(carry)``, ``n`` times; returns the last carry.

    ``carry`` is a Tensor or a tuple / list / dict of Tensors; ``body`` returns the same
    structure, with the same shapes and dtypes. ``n`` is a Python int. Eager this is a Python
    loop; inside ``jitgrad.compile`` it is one loop in the program, forward and backward, so
    compile time does not grow with ``n``."""
    n = _check_count(n, "fori_loop")
    final, _ = _loop("fori_loop", n, lambda c, _x: (body(c), None), carry, None)
    return final


def scan(f, init, xs=None, length=None):
    """``carry, y = f(carry, x)`` for each ``x`` along the first axis of ``xs``; returns the
    last carry and the ``y``s stacked (JAX's ``lax.scan``):

        carry_0 = init;  carry_{t+1}, y_t = f(carry_t, xs[t]);  return carry_n, stack(y_t)

    ``init`` and each ``y`` are Tensors or tuples / lists / dicts of them (``y`` may be None);
    ``xs`` likewise, every leaf with the same first dimension n (or None, with ``length=n``:
    ``f`` then gets ``x=None``). Differentiable in ``init``, ``xs`` and what ``f`` reads, to any
    order eager; inside ``jitgrad.compile`` it is one loop in the program, forward and backward,
    never unrolled."""
    x_leaves, _ = tree_flatten(xs)
    if any(not isinstance(x, Tensor) or x.dim() == 0 for x in x_leaves):
        raise TypeError("scan: xs must be Tensors with a leading axis to scan over, or None "
                        f"(got {[type(x).__name__ for x in x_leaves]})")
    lengths = {x.shape[0] for x in x_leaves}
    if length is not None:
        lengths.add(_check_count(length, "scan", "length"))
    if len(lengths) != 1:
        raise ValueError("scan: the leading dimensions of xs and length must agree (got "
                         f"{sorted(lengths)}); pass xs, or length=n when xs is None")
    return _loop("scan", lengths.pop(), f, init, xs)


def _check_count(n, name, what="n") -> int:
    if isinstance(n, Tensor) or not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"{name}: {what} must be a Python int (got {type(n).__name__}); the "
                        "number of steps is part of the program")
    if n < 0:
        raise ValueError(f"{name}: {what} must be >= 0 (got {n})")
    return int(n)


def _loop(name, n, step, carry, xs):
    tracer = trace.current()
    if tracer is None or tracer.suspended or n == 0:
        return _eager(name, n, step, carry, xs, tracer)
    return _traced(tracer, name, n, step, carry, xs)


def _eager(name, n, step, carry, xs, tracer):
    """The plain Python loop (its graph is the steps' own); a zero-trip scan calls ``f`` once
    on the first carry and zeros, without recording, to learn the shape of ``y``."""
    x_leaves, x_spec = tree_flatten(xs)
    ys = []
    for t in range(n):
        x = None if xs is None else tree_unflatten([a[t] for a in x_leaves], x_spec)
        new, y = step(carry, x)
        carry = _checked(name, new, carry)
        ys.append(y)
    if n:
        y_leaves = [tree_flatten(y) for y in ys]
        spec = y_leaves[0][1]
        stacked = [stack([leaves[j] for leaves, _ in y_leaves])
                   for j in range(len(y_leaves[0][0]))]
        return carry, tree_unflatten(stacked, spec)
    if name == "fori_loop":
        return carry, None

    def probe():
        with no_grad():
            x = None if xs is None else tree_unflatten(
                [Tensor._make(np.zeros(a.shape[1:], a._data.dtype)) for a in x_leaves], x_spec)
            return tree_flatten(step(carry, x)[1])
    leaves, spec = probe() if tracer is None else tracer.suspended_call(probe)
    # (a constant constructor: a trace records the empty ys as constants)
    return carry, tree_unflatten([zeros((0,) + tuple(y.shape), dtype=y.dtype) for y in leaves],
                                 spec)


def _same_tensor(a, b) -> bool:
    return (type(a) is Tensor and type(b) is Tensor and a._data.shape == b._data.shape
            and a._data.dtype == b._data.dtype)


def _checked(name, new, old):
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
        raise TypeError(f"{name}: the body must return the carry's structure with the same "
                        f"shapes and dtypes (carry {describe_leaves(old_leaves)}, body returned "
                        f"{describe_leaves(new_leaves)})")
    return new


def describe_leaves(leaves) -> str:
    """``[float64[3], int64[]]``: the dtypes and shapes of pytree leaves, for error messages."""
    return "[" + ", ".join(f"{t.dtype.name}{list(t.shape)}" if isinstance(t, Tensor)
                           else type(t).__name__ for t in leaves) + "]"


def _differentiable(t) -> bool:
    return is_grad_enabled() and t._requires_grad and t.dtype.is_floating_point


def _traced(tracer, name, n, step, carry, xs):
    leaves, spec = tree_flatten(carry)
    x_leaves, x_spec = tree_flatten(xs)
    if not leaves or not all(isinstance(c, Tensor) for c in leaves):
        raise trace.GraphBreak(f"{name}'s carry must be Tensors to be captured")
    refs = [tracer.ref(c) for c in leaves]
    carry_in, run_with = [r[0][1] for r in refs], [r[1] for r in refs]
    x_refs = [tracer.ref(x) for x in x_leaves]
    xs_in, xs_with = [r[0][1] for r in x_refs], [r[1] for r in x_refs]
    x_diff = tuple(_differentiable(x) for x in xs_with)
    graph = tracer.graph
    outer_nodes = graph.nodes
    # Note [carries requiring grad]: the placeholders of the carries that require grad at some
    # step of the eager loop require grad, and only those (a carry that starts constant, like
    # a velocity at rest, may require grad after one step: the body is traced again)
    first = tuple(_differentiable(t) for t in run_with)
    differentiable = first
    try:
        while True:
            body_nodes = graph.nodes = []
            body = trace_body(tracer, name, step, spec, carry, run_with, differentiable,
                               x_spec, xs_with, x_diff)
            flow = _GradFlow(_step_rule(tracer, body_nodes, body), first, n, len(leaves))
            if all(d or not r for r, d in zip(flow.reached, differentiable)):
                break
            differentiable = tuple(d or r for d, r in zip(differentiable, flow.reached))
        made_here = made(body_nodes) | set(body.ph_vids) | set(body.x_vids)
        captured = outside(body_nodes, made_here, body.outs + body.y_outs)
        backward = None
        results = body.out_leaves + body.y_leaves
        diff_out = [k for k, o in enumerate(results)
                    if o._requires_grad and o.dtype.is_floating_point]
        if is_grad_enabled() and diff_out and (any(flow.last) or any(flow.y_flags)):
            backward = trace_backward(tracer, name, body, captured, diff_out)
            made_here |= made(backward.nodes) | {c for c in backward.cotangents if c is not None}
            read = outside(backward.nodes, made_here, backward.carry_grads + backward.x_grads
                           + backward.captured_grads)
            captured += [v for v in read if v not in captured]
    finally:
        graph.nodes = outer_nodes
    tape_vid = graph.new_value((), np.dtype(object), "tape")
    loop = LoopNode(n, carry_in, body.ph_vids, body_nodes, body.outs, captured, tape_vid,
                    xs_in, body.x_vids, body.y_outs)
    loop.op = type(loop.op)(name)
    loop.phase = tracer.phase
    loop.ctx = {"tape": tape_vid}  # made by the loop: a backward reading it keeps the loop
    loop.backward = backward
    final, ys, tape = _run_untraced(tracer, n, step, spec, run_with, x_spec, xs_with)
    if backward is not None and is_grad_enabled():
        _join(final + ys, run_with, xs_with, backward, tracer, loop, step, (spec, x_spec), tape,
              differentiable, x_diff, flow)
    loop.outputs = [tracer.add(t, "op") for t in final + ys]
    outer_nodes.append(loop)
    y_spec = body.y_spec
    return tree_unflatten(final, spec), (None if not body.y_leaves and y_spec is None
                                         else tree_unflatten(ys, y_spec))


class _Body:
    """A body traced once: its placeholders, results and their value ids."""

    def __init__(self, placeholders, ph_vids, out_leaves, outs, x_phs, x_vids, y_leaves,
                 y_outs, y_spec):
        self.placeholders, self.ph_vids, self.out_leaves, self.outs = (
            placeholders, ph_vids, out_leaves, outs)
        self.x_phs, self.x_vids = x_phs, x_vids
        self.y_leaves, self.y_outs, self.y_spec = y_leaves, y_outs, y_spec


def trace_body(tracer, name, step, spec, carry, run_with, differentiable, x_spec, xs_with,
                x_diff) -> _Body:
    """The body traced once on placeholder carries and xs rows (leaves: the body's backward
    stops there), the carries in ``differentiable`` and the xs in ``x_diff`` requiring grad. A
    placeholder holds a copy of its array, so a body result sharing its array (``detach``) is
    the placeholder, not the outer value."""
    tracer.suspended += 1
    placeholders = [Tensor._make(t._data.copy(), d) for t, d in zip(run_with, differentiable)]
    x_phs = [Tensor._make(x._data[0].copy(), d) for x, d in zip(xs_with, x_diff)]
    tracer.suspended -= 1
    ph_vids = [tracer.add(p, "carry") for p in placeholders]
    x_vids = [tracer.add(p, "carry") for p in x_phs]
    x = tree_unflatten(x_phs, x_spec) if xs_with or x_spec is not None else None
    new, y = step(tree_unflatten(placeholders, spec), x)
    out = _checked(name, new, carry)
    out_leaves, _ = tree_flatten(out)
    y_leaves, y_spec = tree_flatten(y)
    if not all(isinstance(t, Tensor) for t in y_leaves):
        raise TypeError(f"{name}: each y must be a Tensor (got {describe_leaves(y_leaves)})")
    outs = [tracer.ref(o)[0][1] for o in out_leaves]
    y_outs = [tracer.ref(o)[0][1] for o in y_leaves]
    return _Body(placeholders, ph_vids, out_leaves, outs, x_phs, x_vids, y_leaves, y_outs,
                 None if y is None else y_spec)


def trace_backward(tracer, name, body, captured, diff_out) -> BodyBackward:
    """The body's backward, traced with ``create_graph=True`` from cotangent placeholders of
    the results requiring grad to the placeholders and captured values requiring grad."""
    results, result_vids = body.out_leaves + body.y_leaves, body.outs + body.y_outs
    captured_diff = [v for v in captured if v in tracer.tensors
                     and tracer.tensor_of(v)._requires_grad]
    targets = ([p for p in body.placeholders if p._requires_grad]
               + [p for p in body.x_phs if p._requires_grad]
               + [tracer.tensor_of(v) for v in captured_diff])
    seeds = [tracer.cotangent(result_vids[k]) for k in diff_out]
    graph = tracer.graph
    back_nodes = graph.nodes = []
    grads = traced_grads(tracer, f"{name}: the body's", [results[k] for k in diff_out],
                         targets, seeds)
    grad_vids = iter([None if g is None else tracer.ref(g)[0][1] for g in grads])
    carry_grads = [next(grad_vids) if p._requires_grad else None for p in body.placeholders]
    x_grads = [next(grad_vids) if p._requires_grad else None for p in body.x_phs]
    cotangents = [None] * len(results)
    for k, s in zip(diff_out, seeds):
        cotangents[k] = tracer.ids[id(s)]
    return BodyBackward(back_nodes, cotangents, carry_grads, x_grads, captured_diff,
                        list(grad_vids))


def traced_grads(tracer, what, outputs, targets, seeds) -> list:
    """``autograd.grad(outputs, targets, seeds)`` recorded into the trace's current node list
    (``create_graph=True``: the rules run as ops; no second derivative, Note in
    ``Tracer.records_own_backward``); a rule that cannot be traced breaks the capture."""
    tracer.body_backward += 1
    try:
        with tracer.saved_floats():
            return list(autograd_api.grad(outputs, targets, seeds, create_graph=True,
                                          allow_unused=True))
    except Exception as exc:  # eager would meet it in the backward, if at all
        raise trace._fail(trace.GraphBreak(
            f"{what} backward cannot be traced ({type(exc).__name__}: {exc})")) from exc
    finally:
        tracer.body_backward -= 1


def _run_untraced(tracer, n, step, spec, run_with, x_spec, xs_with):
    """The trace run's result: the loop computed eagerly without a graph, and its tape (each
    step's carry leaves)."""
    tracer.suspended += 1
    try:
        tape, ys = [list(run_with)], []
        with no_grad():
            state = tree_unflatten(list(run_with), spec)
            for t in range(n):
                x = (tree_unflatten([Tensor._make(a._data[t]) for a in xs_with], x_spec)
                     if xs_with or x_spec is not None else None)
                state, y = step(state, x)
                tape.append(tree_flatten(state)[0])
                ys.append(tree_flatten(y)[0])
        final = [Tensor._make(t._data) for t in tape[-1]]
        stacked = [Tensor._make(np.stack([row[j]._data for row in ys]))
                   for j in range(len(ys[0]))]
    finally:
        tracer.suspended -= 1
    return final, stacked, tape


def _step_rule(tracer, body_nodes, body) -> list:
    """Note [carries requiring grad]: per body result (carries, then ys), what makes it
    require grad, read from the traced body: the indices of the carries it is computed from
    through values that require grad, ``("x", k)`` for each xs leaf requiring grad and
    ``("v", id)`` for each captured value requiring grad it is computed from (``("v", None)``:
    it requires grad whatever the carries do, from no value the body reads); nothing for a
    result that does not require grad (``detach``)."""
    tensors = tracer.tensors

    def source(vid):
        if vid in deps:
            return deps[vid]
        t = tensors.get(vid)  # a captured value, or a constant
        return {("v", vid)} if t is not None and t._requires_grad else set()

    deps = {v: ({j} if tensors[v]._requires_grad else set()) for j, v in enumerate(body.ph_vids)}
    deps.update({v: ({("x", k)} if tensors[v]._requires_grad else set())
                 for k, v in enumerate(body.x_vids)})
    for node in body_nodes:
        args = set().union(*[source(a) for a in node.value_args()])
        for o in node.outputs:
            t = tensors.get(o)
            deps[o] = (args or {("v", None)}) if t is not None and t._requires_grad else set()
    return [frozenset(source(v)) if o._requires_grad else frozenset()
            for o, v in zip(body.out_leaves + body.y_leaves, body.outs + body.y_outs)]


class _GradFlow:
    """Note [carries requiring grad]: which carries require grad at each step of the eager
    loop, from those at the start and the body's ``rule`` (``_step_rule``; the carries' entries
    first, then the ys'): ``reached``, whether each carry requires grad at some step the body
    runs on; ``last``, whether each does after the n-th; ``y_flags``, whether each stacked y
    does (some step's y does); ``used()``, what a gradient of the results reaches. The flags
    repeat after a few steps: the walk stops at the first repeat (``start``, ``period``)."""

    def __init__(self, rule, first, n, n_carry):
        self.rule, self.y_rule, self.n = rule[:n_carry], rule[n_carry:], n
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
        self.y_flags = tuple(any(self._on(deps, s) for s in run) for deps in self.y_rule)

    @staticmethod
    def _on(deps, flags) -> bool:
        return any(not isinstance(j, int) or flags[j] for j in deps)

    def _advance(self, flags):
        return tuple(self._on(deps, flags) for deps in self.rule)

    def at(self, t):
        """The flags of the carries the body gets at step ``t`` (``t == n``: the results)."""
        if t < len(self.states):
            return self.states[t]
        return self.states[self.start + (t - self.start) % self.period]

    def used(self):
        """``(carries, xs, captured value ids)``: the carries at the start, the xs leaves and
        the captured values a gradient of the results requiring grad reaches (the others get
        no gradient: eager leaves them unused). Walked back from step n (each step's ys seed
        it too); where the walk repeats itself in the periodic part, the repeats are
        skipped."""
        needed = frozenset(k for k, f in enumerate(self.last) if f)
        captured, xs, seen, jumped = set(), set(), {}, False
        t = self.n - 1
        while t >= 0 and (needed or self.y_rule):
            flags = self.at(t)
            ys = [deps for deps in self.y_rule if self._on(deps, flags)]
            if self.period and t >= self.start and not jumped:
                key = ((t - self.start) % self.period, needed)
                if key in seen:
                    cycle = seen[key] - t
                    t -= (t - self.start) // cycle * cycle
                    jumped = True
                    continue
                seen[key] = t
            items = set().union(*[self.rule[k] for k in needed], *ys)
            captured.update(i[1] for i in items
                            if not isinstance(i, int) and i[0] == "v" and i[1] is not None)
            xs.update(i[1] for i in items if not isinstance(i, int) and i[0] == "x")
            needed = frozenset(j for j in items if isinstance(j, int) and flags[j])
            t -= 1
        return needed, xs, captured


def _join(outputs, run_with, xs_with, backward, tracer, loop, step, specs, tape,
          differentiable, x_diff, flow):
    """Join the loop's results to the eager graph: edges to the traced tensors (a closure's
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
    node = ForiLoopBackward(step, specs, tape, run_with, xs_with, read, loop, differentiable,
                            x_diff)
    inputs = list(run_with) + list(xs_with) + diff_captured
    carries, xs, captured = flow.used()
    reached = ([k in carries for k in range(len(run_with))]
               + [d and k in xs for k, d in enumerate(x_diff)] + [v in captured for v in diff])
    # Note [one way to wire a node] (ops/core/recording.py)
    record_node(node, inputs, tuple(t._requires_grad and r for t, r in zip(inputs, reached)),
                outputs, flow.last + flow.y_flags)


class ForiLoopBackward(Node):
    """The eager backward of a loop a trace ran (Note [loop tape]); inside a trace's backward
    it records one ``LoopBackwardNode``."""

    def __init__(self, step, specs, tape, carry_in, xs, captured, loop, differentiable, x_diff):
        super().__init__()
        self._step, (self._spec, self._x_spec), self._tape = step, specs, tape
        self._carry_in, self._xs, self._captured, self._loop = carry_in, xs, captured, loop
        self._differentiable = differentiable  # the carries the body was traced requiring grad
        self._x_diff = x_diff

    def apply(self, grad_outputs):
        def walk(recording):
            with no_grad():
                return self._walk(grad_outputs)
        result = trace.record_backward(grad_outputs, walk,
                                       lambda grads_in: LoopBackwardNode(self._loop, grads_in))
        n_carry, n_x = len(self._carry_in), len(self._xs)
        return ([g if t._requires_grad else None
                 for g, t in zip(result, self._carry_in)]
                + [g if d else None for g, d in zip(result[n_carry:n_carry + n_x], self._x_diff)]
                + result[n_carry + n_x:])

    def _walk(self, grad_outputs):
        tape, step, spec, x_spec = self._tape, self._step, self._spec, self._x_spec
        n_carry = len(self._carry_in)
        g = [gr if gr is not None else _zeros(t)
             for gr, t in zip(grad_outputs[:n_carry], tape[-1])]
        gys = grad_outputs[n_carry:]
        acc = [None] * len(self._captured)
        gxs = [np.zeros(x.shape, x._data.dtype) for x in self._xs]
        for i in range(len(tape) - 2, -1, -1):
            ins = [Tensor._make(t._data, d) for t, d in zip(tape[i], self._differentiable)]
            x_ins = [Tensor._make(x._data[i], d) for x, d in zip(self._xs, self._x_diff)]
            x = (tree_unflatten(x_ins, x_spec) if x_ins or x_spec is not None else None)
            with enable_grad():
                new, y = step(tree_unflatten(ins, spec), x)
                out = tree_flatten(new)[0] + tree_flatten(y)[0]
                seeds = g + [None if gy is None else gy[i] for gy in gys]
                pairs = [(o, s) for o, s in zip(out, seeds) if o._requires_grad and s is not None]
                targets = ([t for t in ins if t._requires_grad]
                           + [t for t in x_ins if t._requires_grad] + self._captured)
                grads = [None] * len(targets)
                if pairs and targets:
                    grads = list(autograd_api.grad([o for o, _ in pairs], targets,
                                                   [s for _, s in pairs], allow_unused=True))
            g = [grads.pop(0) if t._requires_grad else None for t in ins]
            g = [gr if gr is not None else _zeros(t) for gr, t in zip(g, ins)]
            for k, t in enumerate(x_ins):
                if t._requires_grad:
                    gx = grads.pop(0)
                    if gx is not None:
                        gxs[k][i] = gx._data
            for k, gr in enumerate(grads):
                if gr is not None:
                    acc[k] = gr if acc[k] is None else acc[k] + gr
        return (g + [Tensor._make(a) for a in gxs]
                + [a if a is not None else _zeros(t) for a, t in zip(acc, self._captured)])

    def _release(self):
        self._released = True
        self._tape = None


def _zeros(t):
    return Tensor._make(np.zeros(t.shape, t._data.dtype))
