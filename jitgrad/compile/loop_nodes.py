"""The nodes a captured loop puts in a program's graph (``loop.py``): ``LoopNode``, the forward
(``n`` runs of the body, keeping each step's carry on a tape), and ``LoopBackwardNode``, its
backward (the tape walked backwards). Each direction is one generated Numba function when its
body can be emitted (Note [generated loops] in ``segment.py``), else a Python loop over steps.

A loop has carries (threaded from step to step), and for ``scan`` per-step inputs ``xs`` (row
``it`` of each array is the step's ``x``) and per-step outputs ``ys`` (the step's ``y`` is
written to row ``it``). ``fori_loop`` is the loop with neither.
"""
from __future__ import annotations

import hashlib

import numpy as np

from . import codegen, native, segment, trace


class LoopRow:
    """What a loop node says of itself where graph passes read a row's properties (Note
    [what compile knows of a row] in ops/core/registry.py): a composite that is no view."""

    elementwise = cheap = view = value_dependent_shape = random = check = False
    alias = identity = None
    node_name = ""

    def __init__(self, name):
        self.name = name


class LoopNode:
    """The forward of a captured loop in a graph: ``n`` runs of ``body_nodes``."""

    op = LoopRow("fori_loop")
    phase = "forward"  # the trace's phase when recorded: set per node

    def __init__(self, n, carry_in, placeholders, body_nodes, body_outs, captured, tape,
                 xs_in=(), x_placeholders=(), y_outs=()):
        self.n, self.carry_in, self.placeholders = n, carry_in, placeholders
        self.body_nodes, self.body_outs, self.captured = body_nodes, body_outs, captured
        self.xs_in, self.x_placeholders, self.y_outs = list(xs_in), list(x_placeholders), list(y_outs)
        self.tape = tape  # the value holding the tape (Note [loop tape])
        self.outputs: list = []  # the final carries, then the stacked ys
        self.attrs, self.ctx = {}, {}
        self.args = [("v", v) for v in self.value_args()]
        self.backward = None  # the body's backward (``BodyBackward``), if traced

    def value_args(self):
        return self.carry_in + self.xs_in + self.captured

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
        back_nodes = needed_nodes(back.nodes, set(back.wanted()))
        # (arrays a body node stashed are its results too: a nested loop's tape, indices)
        producer = {v: node for node in self.body_nodes for v in made([node])}
        reads = {v for node in back_nodes for v in node_reads(node) if v in producer}
        # a carry the body returns that the backward reads is on the tape already (row it + 1)
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
            if made([node]) & keep:
                kept.append(node)
                keep.update(a for a in node_reads(node) if a not in saves)
        self._plan = (saves, kept[::-1] + back_nodes, from_tape)
        return self._plan

    def save_meta(self, graph) -> list:
        """``(shape, dtype)`` of each body value one step keeps for the backward."""
        saves = self.backward_plan(graph)[0] if self.backward is not None else []
        return [(graph.values[v].shape, graph.values[v].dtype) for v in saves]

    def runner(self, graph, weak, build_steps):
        """``run(env, n, tapes, kept, xs, ys)``: ``n`` steps of the body from row 0 of each carry's
        tape, writing rows 1..n (and the kept values and ys per step); the captured values are
        read from ``env``. One generated function when the body can be emitted."""
        from .program import needed_nodes, run_steps

        placeholders, body_outs, captured = self.placeholders, self.body_outs, self.captured
        x_phs, y_outs = self.x_placeholders, self.y_outs
        saves = self.backward_plan(graph)[0] if self.backward is not None else []
        live = set(body_outs) | set(y_outs) | set(saves)
        # the body nodes the step's results need (a result the body dropped is not computed:
        # ``divmod(c, y)[0]`` leaves the remainder unread)
        body_nodes = needed_nodes(self.body_nodes, set(live))
        kernel = loop_kernel(graph, body_nodes, weak, live, _forward_source,
                             (placeholders, body_outs, captured, saves, x_phs, y_outs))
        if kernel is not None:
            return lambda env, n, tape, kept, xs, ys: kernel(
                n, *tape, *kept, *xs, *ys, *[env[v] for v in captured])
        steps = build_steps(graph, body_nodes, weak, live)

        def run(env, n, tape, kept, xs, ys):
            for i in range(n):
                for vid, t in zip(placeholders, tape):
                    env[vid] = t[i]
                for vid, x in zip(x_phs, xs):
                    env[vid] = x[i]
                run_steps(steps, env)
                for vid, t in zip(body_outs, tape):
                    t[i + 1] = env[vid]
                for vid, t in zip(saves, kept):
                    t[i] = env[vid]
                for vid, y in zip(y_outs, ys):
                    y[i] = env[vid]
        return run

    def make_step(self, graph, weak, build_steps):
        n, carry_in, tape_vid, xs_in = self.n, self.carry_in, self.tape, self.xs_in
        n_carry = len(carry_in)
        carry_outputs, y_outputs = self.outputs[:n_carry], self.outputs[n_carry:]
        save_meta = self.save_meta(graph)
        y_meta = [(graph.values[v].shape, graph.values[v].dtype) for v in self.y_outs]
        run = self.runner(graph, weak, build_steps)

        def step(env):
            tape = tuple(_new_tape(n, env[v]) for v in carry_in)
            kept = tuple(np.empty((n,) + shape, dtype) for shape, dtype in save_meta)
            xs = tuple(np.ascontiguousarray(env[v]) for v in xs_in)
            ys = tuple(np.empty((n,) + shape, dtype) for shape, dtype in y_meta)
            run(env, n, tape, kept, xs, ys)
            for vid, t in zip(carry_outputs, tape):
                env[vid] = t[n].copy()
            for vid, y in zip(y_outputs, ys):
                env[vid] = y
            env[tape_vid] = (tape, kept, xs)
        return step

    def __repr__(self):
        return (f"{self.outputs} = loop[{self.n}]({self.carry_in}, xs={self.xs_in}, captured="
                f"{self.captured}) {{{len(self.body_nodes)} nodes}}")


class BodyBackward:
    """The body's traced backward: cotangent placeholders in (per carry, then per y; None for a
    body result that does not require grad: no gradient flows back through it), gradients out
    for the carry placeholders, the x placeholders and the captured values that need them
    (None: no gradient)."""

    def __init__(self, nodes, cotangents, carry_grads, x_grads, captured_diff, captured_grads):
        self.nodes, self.cotangents = nodes, cotangents
        self.carry_grads, self.x_grads = carry_grads, x_grads
        self.captured_diff, self.captured_grads = captured_diff, captured_grads

    def wanted(self) -> list:
        return [g for g in self.carry_grads + self.x_grads + self.captured_grads if g is not None]


class LoopBackwardNode:
    """The backward of a captured loop: the tape walked backwards (Note [loop tape])."""

    op = LoopRow("fori_loop_backward")
    phase = "backward"  # the trace's phase when recorded: set per node

    def __init__(self, loop, grads_in):
        self.loop, self.grads_in = loop, grads_in  # per loop output: a value id or None
        # gradients: carry inputs, then xs, then loop.backward.captured_diff
        self.outputs: list = []
        self.attrs, self.ctx = {}, {}
        self.args = [("v", v) for v in self.value_args()]

    def value_args(self):
        return [g for g in self.grads_in if g is not None] + [self.loop.tape] + self.loop.captured

    @staticmethod
    def walker(loop, graph, weak, build_steps):
        """``walk(env, n, tapes, kept, xs, g, gys, acc, gxs) -> g``: the ``n`` steps of ``loop``
        on the tapes walked back from the carries' gradients ``g`` after step n, adding the
        captured values' gradients into ``acc`` and writing the xs' into ``gxs``; returns the
        carries' gradients before step 0. One generated function when the steps can be
        emitted."""
        from .program import run_steps

        back = loop.backward
        saves, nodes, from_tape = loop.backward_plan(graph)
        values = graph.values
        placeholders, x_phs = loop.placeholders, loop.x_placeholders
        n_carry = len(placeholders)
        cotangents, y_cotangents = back.cotangents[:n_carry], back.cotangents[n_carry:]
        carry_grads, x_grads, captured_grads = back.carry_grads, back.x_grads, back.captured_grads
        captured = loop.captured
        carry_meta = [(values[v].shape, values[v].dtype) for v in placeholders]
        y_seeds = [c for c in y_cotangents if c is not None]
        kernel = loop_kernel(graph, nodes, weak, set(back.wanted()), _backward_source,
                             (placeholders, cotangents, carry_grads, captured, captured_grads,
                              saves, from_tape, x_phs, y_seeds, x_grads))
        if kernel is not None:
            return lambda env, n, tape, kept, xs, g, gys, acc, gxs: kernel(
                n, *tape, *kept, *xs, *g, *gys, *[env[v] for v in captured], *acc, *gxs)
        steps = build_steps(graph, nodes, weak, set(back.wanted()))

        def walk(env, n, tape, kept, xs, g, gys, acc, gxs):
            for i in range(n - 1, -1, -1):
                for vid, t in zip(placeholders, tape):
                    env[vid] = t[i]
                for vid, x in zip(x_phs, xs):
                    env[vid] = x[i]
                for vid, t in zip(saves, kept):
                    env[vid] = t[i]
                for vid, k in from_tape:
                    env[vid] = tape[k][i + 1]
                for vid, a in zip(cotangents, g):
                    if vid is not None:
                        env[vid] = a
                for vid, gy in zip(y_seeds, gys):
                    env[vid] = gy[i]
                run_steps(steps, env)
                g = [env[v] if v is not None else np.zeros(s, d)
                     for v, (s, d) in zip(carry_grads, carry_meta)]
                for a, v in zip(acc, captured_grads):
                    if v is not None:
                        a += env[v]
                for gx, v in zip(gxs, x_grads):
                    if v is not None:
                        gx[i] = env[v]
            return g
        return walk

    def make_step(self, graph, weak, build_steps):
        loop, back = self.loop, self.loop.backward
        values = graph.values
        n, placeholders, x_phs = loop.n, loop.placeholders, loop.x_placeholders
        n_carry, n_x = len(placeholders), len(x_phs)
        grads_in, y_grads_in = self.grads_in[:n_carry], self.grads_in[n_carry:]
        y_cotangents = back.cotangents[n_carry:]
        # the ys gradients a step reads: one per cotangent placeholder (zeros where no
        # gradient reaches that y)
        y_seeds = [(j, values[c].shape, values[c].dtype)
                   for j, c in enumerate(y_cotangents) if c is not None]
        outputs, tape_vid = self.outputs, loop.tape
        carry_meta = [(values[v].shape, values[v].dtype) for v in placeholders]
        x_meta = [(values[v].shape, values[v].dtype) for v in x_phs]
        acc_meta = [(values[v].shape, values[v].dtype) for v in back.captured_diff]
        walk = self.walker(loop, graph, weak, build_steps)

        def step(env):
            tape, kept, xs = env[tape_vid]
            g = [np.ascontiguousarray(env[v]) if v is not None else np.zeros(s, d)
                 for v, (s, d) in zip(grads_in, carry_meta)]
            gys = [np.ascontiguousarray(env[y_grads_in[j]]) if y_grads_in[j] is not None
                   else np.zeros((n,) + s, d) for j, s, d in y_seeds]
            acc = [np.zeros(s, d) for s, d in acc_meta]
            gxs = [np.zeros((n,) + s, d) for s, d in x_meta]
            g = walk(env, n, tape, kept, xs, g, gys, acc, gxs)
            for vid, a in zip(outputs[:n_carry], g):
                env[vid] = a
            for vid, a in zip(outputs[n_carry:n_carry + n_x], gxs):
                env[vid] = a
            for vid, a in zip(outputs[n_carry + n_x:], acc):
                env[vid] = a
        return step

    def __repr__(self):
        return f"{self.outputs} = loop_backward[{self.loop.n}]({self.grads_in})"


SAVE_LIMIT_BYTES = 64 << 20  # body values kept per step for the backward, at most


def _new_tape(n, first):
    """Note [loop tape]: the n + 1 carries of one carry leaf, stacked; row 0 is ``first``."""
    tape = np.empty((n + 1,) + first.shape, first.dtype)
    tape[0] = first
    return tape


def loop_kernel(graph, nodes, weak, live, source, names):
    """The generated function running a whole loop direction (Note [generated loops] in
    ``segment.py``), or None when a body part cannot be emitted."""
    from ..kernels.cpu import elementwise as cpu

    imports: list = []
    setup: list = []
    other, other_imports = native.loop_emitter(graph, weak)  # sums, 0-d runs, more rows
    body = emit_parts(graph, nodes, weak, live, imports, setup, other)
    if body is None:
        return None
    zero_d = {v for v, value in enumerate(graph.values) if value.shape == ()}
    src = source(names, body, imports + other_imports(), setup, zero_d)
    name = "jgl_" + hashlib.sha1(src.encode()).hexdigest()[:20]
    return cpu.load_generated(name, src).loop


def emit_parts(graph, nodes, weak, live, imports, setup, other) -> list | None:
    """The statements of one loop step running ``nodes`` (``live``: the values read after
    them), or None when a part has no generated form; ``other``: ``native.loop_emitter``'s."""
    body: list = []
    for p in codegen.partition(graph, nodes, weak, live, min_run=1):
        if segment.supported(graph, p, weak):
            body += segment.emit(graph, p, weak, imports, setup)
            continue
        lines = other(p)
        if lines is None:
            return None
        body += lines
    return body


LOOP_HEADER = ["# Generated by jitgrad.compile (Note [generated loops]); do not edit.",
           "import numpy as np", "from numba import njit",
           # the disk cache that heals (Note [healing cache] in kernels/cpu/kernel_cache.py); the
           # body imports (codegen's) carry each body's source hash (Note [source keys])
           "from jitgrad.kernels.cpu.kernel_cache import njit as cached_njit"]


def _names(prefix, items) -> list:
    return [f"{prefix}{k}" for k in range(len(items))]


def _load(vid, array, row, zero_d) -> str:
    """``v<vid> = array[row]``; a row of a 0-d value stays a 0-d array (Numba's ``a[i]`` of a
    vector is a scalar, and the body's statements index 0-d values with ``[()]``)."""
    if vid in zero_d:
        return f"        v{vid} = {array}[{row}:{row} + 1].reshape(())"
    return f"        v{vid} = {array}[{row}]"


def _forward_source(names, body, imports, setup, zero_d) -> str:
    placeholders, body_outs, captured, saves, x_phs, y_outs = names
    tapes, kept, caps = _names("tape", placeholders), _names("kept", saves), _names("c", captured)
    xs, ys = _names("xs", x_phs), _names("ys", y_outs)
    lines = LOOP_HEADER + imports + ["", "@cached_njit(nogil=True, error_model='numpy')",
                                 f"def loop(n, {', '.join(tapes + kept + xs + ys + caps)}):"]
    lines += [f"    v{vid} = {c}" for vid, c in zip(captured, caps)]
    lines += ["    " + line for line in setup]
    lines += ["    for it in range(n):"]
    lines += [_load(vid, t, "it", zero_d) for vid, t in zip(placeholders + x_phs, tapes + xs)]
    lines += ["        " + line for line in body]
    lines += [f"        {t}[it + 1] = v{vid}" for vid, t in zip(body_outs, tapes)]
    lines += [f"        {t}[it] = v{vid}" for vid, t in zip(saves + y_outs, kept + ys)]
    return "\n".join(lines) + "\n"


def _backward_source(names, body, imports, setup, zero_d) -> str:
    (placeholders, cotangents, carry_grads, captured, captured_grads, saves, from_tape, x_phs,
     y_seeds, x_grads) = names
    tapes = _names("tape", placeholders) + _names("kept", saves) + _names("xs", x_phs)
    gs, gys, caps = _names("g", placeholders), _names("gy", y_seeds), _names("c", captured)
    accs, gxs = _names("acc", captured_grads), _names("gx", x_phs)
    params = tapes + gs + gys + caps + accs + gxs
    lines = LOOP_HEADER + imports + ["", "@cached_njit(nogil=True, error_model='numpy')",
                                 f"def loop(n, {', '.join(params)}):"]
    lines += [f"    v{vid} = {c}" for vid, c in zip(captured, caps)]
    lines += ["    " + line for line in setup]
    lines += ["    for it in range(n - 1, -1, -1):"]
    lines += [_load(vid, t, "it", zero_d) for vid, t in zip(placeholders + saves + x_phs, tapes)]
    lines += [_load(vid, f"tape{k}", "it + 1", zero_d) for vid, k in from_tape]
    lines += [f"        v{vid} = {g}" for vid, g in zip(cotangents, gs) if vid is not None]
    lines += [_load(vid, g, "it", zero_d) for vid, g in zip(y_seeds, gys)]
    lines += ["        " + line for line in body]
    # copies: a gradient may live in a buffer the next step rewrites while it still reads it
    lines += [f"        {g} = v{vid}.copy()" if vid is not None
              else f"        {g} = np.zeros_like({g})" for vid, g in zip(carry_grads, gs)]
    lines += [f"        {a} += v{vid}" for vid, a in zip(captured_grads, accs) if vid is not None]
    lines += [f"        {g}[it] = v{vid}" for vid, g in zip(x_grads, gxs) if vid is not None]
    lines += [f"    return ({', '.join(gs)},)"]
    return "\n".join(lines) + "\n"


def made(nodes) -> set:
    return {v for node in nodes for v in list(node.outputs) + list(node.ctx.values())}


def node_reads(node) -> list:
    """The values ``node`` reads: its arguments and the stashed arrays its attributes name."""
    return node.value_args() + [a.vid for a in node.attrs.values() if isinstance(a, trace.CtxRef)]


def outside(nodes, made_here, also=()) -> list:
    """The values ``nodes`` read (arguments, stashed arrays) and the values in ``also`` that
    are not in ``made_here``, in order, once each: what a loop direction captures from outside
    (an outer value, a constant; a body result not computed by an op: ``zeros_like(c)``,
    ``lambda c: y``)."""
    found = []
    for node in nodes:
        for vid in node_reads(node):
            if vid not in made_here and vid not in found:
                found.append(vid)
    for vid in also:
        if vid is not None and vid not in made_here and vid not in found:
            found.append(vid)
    return found
