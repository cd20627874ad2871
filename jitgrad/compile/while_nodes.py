"""The nodes a captured ``while_loop`` puts in a program's graph (``while_loop.py``):
``WhileNode``, the forward (the condition and the body run until the condition fails, keeping a
thinned tape of carries), and ``WhileBackwardNode``, its backward (the tape's segments
recomputed and walked back). Note [compiled while].

Note [compiled while]: the forward is ONE generated Numba function when the condition and the
body can be emitted (Note [generated loops] in ``segment.py``); the trip count is decided inside
it. The carry lives in two buffers swapped each step (a body result may be a view of the
carry it reads: ``(b, a)``, a transpose). The tape follows Note [while tape]: row ``i`` holds
the carry after ``i * stride`` steps; when the rows would pass half the cap (``max_rows``)
every other row is dropped and the stride doubles. The tape buffer starts small and grows (the
function returns ``full``, Python doubles it, the loop goes on where it stopped), so a loop of
ten steps does not allocate the cap; while it grows, the old and the new buffer take at most
three quarters of the cap. The backward walks the tape from its end in chunks of at most half
the cap of recomputed steps (and values kept per step), so the tape and the chunk together
stay within the cap: a chunk is recomputed from its first row by the
captured body's forward loop (``LoopNode.runner``, the same generated function ``fori_loop``
uses) and walked back by its backward loop (``LoopBackwardNode.walker``); a segment longer
than a chunk is halved, as eager does. When the stride is still 1 and no body value is kept
per step, the forward's tape is every step's carry and the backward is one walk over it.
"""
from __future__ import annotations

import hashlib

import numpy as np

from . import loop_nodes, native

#: the first tape buffer's rows (it doubles while the loop runs, up to the cap)
FIRST_TAPE_ROWS = 16


class WhileNode:
    """The forward of a captured while loop: ``cond_nodes`` (giving ``pred``) and
    ``body.body_nodes`` run until ``pred`` is false. ``body`` is a ``LoopNode`` of the same
    body (its runner recomputes chunks for the backward)."""

    op = loop_nodes.LoopRow("while_loop")
    phase = "forward"

    def __init__(self, body, cond_nodes, pred, cond_captured, cap):
        self.body, self.cond_nodes, self.pred, self.cap = body, cond_nodes, pred, cap
        self.carry_in, self.tape = body.carry_in, body.tape
        self.captured = list(body.captured) + [v for v in cond_captured
                                               if v not in body.captured]
        self.outputs: list = []
        self.attrs, self.ctx = {}, {"tape": body.tape}
        self.args = [("v", v) for v in self.value_args()]

    def value_args(self):
        return self.carry_in + self.captured

    def make_step(self, graph, weak, build_steps):
        from .program import needed_nodes

        body, values = self.body, graph.values
        meta = [(values[v].shape, values[v].dtype) for v in body.placeholders]
        carry_bytes = sum(int(np.prod(s)) * d.itemsize for s, d in meta) or 1
        # half the cap for the tape: its growth (old and new buffer at once) stays within
        # three quarters of it, and with the backward's chunk (the other half) within it
        max_rows = max(2, self.cap // (2 * carry_bytes))
        cond_nodes = needed_nodes(self.cond_nodes, {self.pred})
        body_nodes = needed_nodes(body.body_nodes, set(body.body_outs))
        kernel = _while_kernel(graph, weak, self, cond_nodes, body_nodes)
        if kernel is None:
            kernel = _python_loop(graph, weak, build_steps, self, cond_nodes, body_nodes)
        carry_in, captured, outputs = self.carry_in, self.captured, self.outputs
        tape_vid = self.tape

        def step(env):
            cur = [np.array(env[v], dtype=d, order="C") for v, (_, d) in zip(carry_in, meta)]
            nxt = [np.empty_like(c) for c in cur]
            rows = min(max_rows + 1, FIRST_TAPE_ROWS)
            tape = [np.empty((rows,) + c.shape, c.dtype) for c in cur]
            for t, c in zip(tape, cur):
                t[0] = c
            steps, stride, count = 0, 1, 1
            caps = [env[v] for v in captured]
            while True:
                steps, stride, count, full, *bufs = kernel(
                    steps, stride, count, max_rows, *tape, *cur, *nxt, *caps)
                cur, nxt = bufs[:len(cur)], bufs[len(cur):]
                if not full:
                    break
                rows = min(2 * rows, max_rows + 1)
                grown = [np.empty((rows,) + c.shape, c.dtype) for c in cur]
                for new, old in zip(grown, tape):
                    new[:count] = old[:count]
                tape = grown
            for vid, c in zip(outputs, cur):
                env[vid] = c
            env[tape_vid] = (tape, stride, count, steps)
        return step

    def __repr__(self):
        return (f"{self.outputs} = while_loop({self.carry_in}, captured={self.captured}) "
                f"{{{len(self.cond_nodes)} + {len(self.body.body_nodes)} nodes}}")


class WhileBackwardNode:
    """The backward of a captured while loop: its tape walked back (Note [compiled while])."""

    op = loop_nodes.LoopRow("while_loop_backward")
    phase = "backward"

    def __init__(self, loop: WhileNode, grads_in):
        self.loop, self.grads_in = loop, grads_in  # per carry: a value id or None
        self.outputs: list = []  # gradients: the carries, then body.backward.captured_diff
        self.attrs, self.ctx = {}, {}
        self.args = [("v", v) for v in self.value_args()]

    def value_args(self):
        return ([g for g in self.grads_in if g is not None] + [self.loop.tape]
                + self.loop.body.captured)

    def make_step(self, graph, weak, build_steps):
        body, values = self.loop.body, graph.values
        back = body.backward
        meta = [(values[v].shape, values[v].dtype) for v in body.placeholders]
        save_meta = body.save_meta(graph)
        acc_meta = [(values[v].shape, values[v].dtype) for v in back.captured_diff]
        step_bytes = sum(int(np.prod(s)) * d.itemsize for s, d in meta + save_meta) or 1
        chunk = max(1, (self.loop.cap // 2) // step_bytes)  # steps recomputed at once, at most
        run = body.runner(graph, weak, build_steps)
        walk = loop_nodes.LoopBackwardNode.walker(body, graph, weak, build_steps)
        grads_in, outputs, tape_vid = self.grads_in, self.outputs, self.loop.tape
        n_carry = len(meta)

        def recompute(env, state, n):
            """Rows 0..n of the carries from ``state`` (and the kept values of steps 0..n-1)."""
            tape = [np.empty((n + 1,) + s, d) for s, d in meta]
            for t, c in zip(tape, state):
                t[0] = c
            kept = [np.empty((n,) + s, d) for s, d in save_meta]
            run(env, n, tape, kept, (), ())
            return tape, kept

        def reverse(env, state, n, g, acc):
            """The gradients before the ``n`` steps from ``state``, given those after."""
            if n > chunk:  # halved: the second half first, from its recomputed first carry
                middle = n // 2
                mid, done = state, 0
                while done < middle:
                    k = min(chunk, middle - done)
                    mid = [t[k] for t in recompute(env, mid, k)[0]]
                    done += k
                g = reverse(env, mid, n - middle, g, acc)
                return reverse(env, state, middle, g, acc)
            tape, kept = recompute(env, state, n)
            return walk(env, n, tape, kept, (), g, (), acc, ())

        def step(env):
            tape, stride, count, steps = env[tape_vid]
            g = [np.ascontiguousarray(env[v]) if v is not None else np.zeros(s, d)
                 for v, (s, d) in zip(grads_in, meta)]
            acc = [np.zeros(s, d) for s, d in acc_meta]
            if stride == 1 and not save_meta:  # every step's carry is on the tape
                g = walk(env, steps, [t[:steps + 1] for t in tape], (), (), g, (), acc, ())
            else:
                end = steps
                while end > 0:
                    row = (end - 1) // stride  # the kept carry the last step starts from
                    while row > 0 and end - (row - 1) * stride <= chunk:
                        row -= 1  # (a chunk spans as many rows as fit)
                    g = reverse(env, [t[row] for t in tape], end - row * stride, g, acc)
                    end = row * stride
            for vid, a in zip(outputs[:n_carry], g):
                env[vid] = a
            for vid, a in zip(outputs[n_carry:], acc):
                env[vid] = a
        return step

    def __repr__(self):
        return f"{self.outputs} = while_loop_backward({self.grads_in})"


def _scalar(graph, weak, vid) -> str:
    """The one element of value ``vid`` in generated code."""
    if vid in weak:
        return f"v{vid}"
    nd = len(graph.values[vid].shape)
    return f"v{vid}[()]" if nd == 0 else f"v{vid}[{', '.join('0' * nd)}]"


def _while_kernel(graph, weak, node: WhileNode, cond_nodes, body_nodes):
    """The generated forward (Note [compiled while]), or None when a part cannot be emitted."""
    from ..kernels.cpu import elementwise as cpu

    body = node.body
    if (not native.ENABLED or node.pred in weak
            or any(v in weak for v in body.body_outs + body.placeholders)):
        return None
    imports: list = []
    setup: list = []
    other, other_imports = native.loop_emitter(graph, weak)
    sections = []
    for nodes, live in ((cond_nodes, {node.pred}), (body_nodes, set(body.body_outs))):
        lines = loop_nodes.emit_parts(graph, nodes, weak, live, imports, setup, other)
        if lines is None:
            return None
        sections.append(lines)
    k = range(len(body.placeholders))
    tapes, curs, nxts = ([f"{p}{i}" for i in k] for p in ("tape", "cur", "nxt"))
    caps = [f"c{i}" for i in range(len(node.captured))]
    state = ", ".join(curs + nxts)
    src = loop_nodes.LOOP_HEADER + imports + other_imports() + [
        "", "@cached_njit(nogil=True, error_model='numpy')",
        f"def loop(steps, stride, count, max_rows, {', '.join(tapes + curs + nxts + caps)}):"]
    src += [f"    v{vid} = {c}" for vid, c in zip(node.captured, caps)]
    src += ["    " + line for line in setup]
    src += [f"    rows = {tapes[0]}.shape[0]", "    while True:"]
    src += [f"        v{vid} = {c}" for vid, c in zip(body.placeholders, curs)]
    src += ["        " + line for line in sections[0]]
    src += [f"        if not {_scalar(graph, weak, node.pred)}:",
            f"            return steps, stride, count, False, {state}"]
    src += ["        " + line for line in sections[1]]
    # (into the other buffer: a result may be a view of the carry it was computed from)
    src += [f"        {n}[...] = v{vid}" for vid, n in zip(body.body_outs, nxts)]
    src += [f"        {c}, {n} = {n}, {c}" for c, n in zip(curs, nxts)]
    src += ["        steps += 1",
            "        if steps % stride == 0:"]
    src += [f"            {t}[count] = {c}" for t, c in zip(tapes, curs)]
    src += ["            count += 1",
            "            if count > max_rows:  # Note [while tape]: every other row dropped",
            "                for i in range(1, (count + 1) // 2):"]
    src += [f"                    {t}[i] = {t}[2 * i]" for t in tapes]
    src += ["                count = (count + 1) // 2",
            "                stride *= 2",
            "            if count == rows:",
            f"                return steps, stride, count, True, {state}"]
    text = "\n".join(src) + "\n"
    name = "jgw_" + hashlib.sha1(text.encode()).hexdigest()[:20]
    return cpu.load_generated(name, text).loop


def _python_loop(graph, weak, build_steps, node: WhileNode, cond_nodes, body_nodes):
    """The forward as a Python loop over the condition's and the body's steps, with the
    generated function's signature and tape (Note [compiled while])."""
    from .program import run_steps

    body = node.body
    cond_steps = build_steps(graph, cond_nodes, weak, {node.pred})
    body_steps = build_steps(graph, body_nodes, weak, set(body.body_outs))
    placeholders, outs, captured, pred = body.placeholders, body.body_outs, node.captured, node.pred
    n = len(placeholders)

    def loop(steps, stride, count, max_rows, *arrays):
        tape, cur, nxt = arrays[:n], list(arrays[n:2 * n]), list(arrays[2 * n:3 * n])
        env = dict(zip(captured, arrays[3 * n:]))  # the value table of the steps
        rows = tape[0].shape[0]
        while True:
            for vid, c in zip(placeholders, cur):
                env[vid] = c
            run_steps(cond_steps, env)
            if not np.asarray(env[pred]).reshape(-1)[0]:
                return (steps, stride, count, False, *cur, *nxt)
            run_steps(body_steps, env)
            for vid, b in zip(outs, nxt):
                b[...] = env[vid]
            cur, nxt = nxt, cur
            steps += 1
            if steps % stride == 0:
                for t, c in zip(tape, cur):
                    t[count] = c
                count += 1
                if count > max_rows:
                    for t in tape:
                        t[1:(count + 1) // 2] = t[2:count:2]
                    count = (count + 1) // 2
                    stride *= 2
                if count == rows:
                    return (steps, stride, count, True, *cur, *nxt)
    return loop

