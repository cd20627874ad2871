"""``cond`` with a computed predicate inside a ``jitgrad.compile`` trace: both branches traced,
the program picks one at each call (Note [compiled cond]).

Note [compiled cond]: a predicate computed by the function (``x.sum() > 0``) changes from call
to call, so neither branch may be baked in. Each branch is traced once on placeholder operands
into a graph of its own, and its backward with it (its rules traced with ``create_graph=True``,
as a loop body's). The program gets one ``CondNode``: it reads the predicate, runs only that
branch's steps and keeps, on a small tape, which branch ran and the values its backward reads;
the backward's ``CondBackwardNode`` runs only that branch's backward. Both branches must return
the same structure, shapes and dtypes (as ``jax.lax.cond``); otherwise the function runs
eagerly, with the compile warning. A result requires grad when it does in either branch (it
gets a zero gradient from a branch where it is constant). A constant predicate, and a bool
argument (a value guard per value), still pick the branch when tracing (``branch.py``).
"""
from __future__ import annotations

import numpy as np

from ..autograd import api as autograd_api
from ..func._pytree import tree_flatten, tree_unflatten
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..graph.node import Node
from ..ops.core.recording import record_node
from ..tensor import Tensor
from . import codegen, trace
from .loop import describe_leaves, traced_grads
from .loop_nodes import LoopRow, made, node_reads, outside


def captures(tracer, pred) -> bool:
    """Whether ``cond`` captures both branches for ``pred``: a value the function computed
    (not a constant, an argument or a closure: those are read when tracing)."""
    vid = tracer.ids.get(id(pred))
    if vid is None or vid in tracer.static:
        return False
    return tracer.graph.values[vid].kind not in ("input", "closure", "scalar", "const")


class _Branch:
    """One branch traced: placeholders, results, and its backward once traced."""

    def __init__(self, fn, nodes, placeholders, ph_vids, out_leaves, outs, out_spec):
        self.fn, self.nodes, self.placeholders, self.ph_vids = fn, nodes, placeholders, ph_vids
        self.out_leaves, self.outs, self.out_spec = out_leaves, outs, out_spec
        self.meta = [(tuple(o.shape), o.dtype) for o in out_leaves]
        self.back_nodes: list = []
        self.cotangents = [None] * len(outs)  # per result: its cotangent value, or None
        self.grads: list = []  # per operand, then per captured value requiring grad
        self.saved: list = []  # forward values the backward reads (kept on the tape)
        self.recomputed: list = []  # forward nodes the backward runs again (``_plan_backward``)


def traced_cond(tracer, pred, true_fn, false_fn, operands):
    leaves, spec = tree_flatten(list(operands))
    if not all(isinstance(t, Tensor) for t in leaves):
        raise tracer.fail("cond: with a computed predicate the operands must be Tensors to be "
                          "captured")
    refs = [tracer.ref(t) for t in leaves]
    operands_in, run_with = [r[0][1] for r in refs], [r[1] for r in refs]
    pred_vid = tracer.ref(pred)[0][1]
    grad_on = is_grad_enabled()
    graph = tracer.graph
    outer = graph.nodes
    try:
        branches = [_trace_branch(tracer, fn, spec, run_with, grad_on)
                    for fn in (true_fn, false_fn)]
        t, f = branches
        if t.out_spec != f.out_spec or t.meta != f.meta:
            raise tracer.fail(
                "cond: the branches return different structures, shapes or dtypes "
                f"({describe_leaves(t.out_leaves)} and {describe_leaves(f.out_leaves)}); with a "
                "computed predicate both must match (as jax.lax.cond)")
        captured = []
        for b in branches:
            captured += [v for v in outside(b.nodes, made(b.nodes) | set(b.ph_vids), b.outs)
                         if v not in captured]
        out_diff = [any(b.out_leaves[k]._requires_grad for b in branches)
                    and t.meta[k][1].is_floating_point for k in range(len(t.outs))]
        needs_grad = grad_on and any(out_diff)
        diff = [v for v in captured if v in tracer.tensors and tracer.tensors[v]._requires_grad]
        if needs_grad:
            for b in branches:
                _trace_branch_backward(tracer, b, diff)
            for b in branches:
                mine = made(b.nodes) | set(b.ph_vids) | made(b.back_nodes) | {
                    c for c in b.cotangents if c is not None}
                captured += [v for v in outside(b.back_nodes, mine, b.grads)
                             if v not in captured]
    finally:
        graph.nodes = outer
    tape = graph.new_value((), np.dtype(object), "tape")
    node = CondNode(pred_vid, operands_in, branches, captured, tape)
    node.phase = tracer.phase
    taken = branches[0 if bool(pred._data.reshape(-1)[0]) else 1]
    final = [Tensor._make(np.array(o._data, order="C")) for o in taken.out_leaves]
    if needs_grad:
        values = graph.values
        read = [values[v].info["tensor"] if values[v].kind == "closure" else tracer.tensor_of(v)
                for v in diff]
        back = CondBackward(taken, spec, run_with, read, node)
        inputs = list(run_with) + [tracer.tensor_of(v) for v in diff]
        record_node(back, inputs, tuple(x._requires_grad and x.dtype.is_floating_point
                                        for x in inputs), final, out_diff)
    node.outputs = [tracer.add(o, "op") for o in final]
    outer.append(node)
    return tree_unflatten(final, t.out_spec)


def _trace_branch(tracer, fn, spec, run_with, grad_on) -> _Branch:
    graph = tracer.graph
    nodes = graph.nodes = []
    tracer.suspended += 1
    placeholders = [Tensor._make(t._data.copy(), grad_on and t._requires_grad
                                 and t.dtype.is_floating_point) for t in run_with]
    tracer.suspended -= 1
    ph_vids = [tracer.add(p, "carry") for p in placeholders]
    out = fn(*tree_unflatten(placeholders, spec))
    out_leaves, out_spec = tree_flatten(out)
    if not all(isinstance(o, Tensor) for o in out_leaves):
        raise TypeError("cond: a branch must return Tensors (or a tuple / list / dict of "
                        f"them); got {[type(o).__name__ for o in out_leaves]}")
    outs = [tracer.ref(o)[0][1] for o in out_leaves]
    return _Branch(fn, nodes, placeholders, ph_vids, out_leaves, outs, out_spec)


def _trace_branch_backward(tracer, b: _Branch, diff) -> None:
    """The branch's backward from cotangents of its results requiring grad to its operands
    and the captured values ``diff`` (None where no gradient reaches)."""
    graph = tracer.graph
    results = [k for k, o in enumerate(b.out_leaves)
               if o._requires_grad and o.dtype.is_floating_point]
    targets = [p for p in b.placeholders if p._requires_grad] + [tracer.tensor_of(v)
                                                                  for v in diff]
    grads = [None] * len(targets)
    b.back_nodes = graph.nodes = []
    if results and targets:
        seeds = [tracer.cotangent(b.outs[k]) for k in results]
        for k, s in zip(results, seeds):
            b.cotangents[k] = tracer.ids[id(s)]
        grads = traced_grads(tracer, "cond: a branch's", [b.out_leaves[k] for k in results],
                             targets, seeds)
    grad_vids = iter([None if g is None else tracer.ref(g)[0][1] for g in grads])
    b.grads = ([next(grad_vids) if p._requires_grad else None for p in b.placeholders]
               + list(grad_vids))
    _plan_backward(tracer.graph, b)


def _plan_backward(graph, b: _Branch) -> None:
    """What the branch's backward reads of its forward: the elementwise values it recomputes
    inside its own fused loops (``b.recomputed``, the nodes), and the others, kept on the
    tape by the forward (``b.saved``: operands, composite rows' results). Recomputing keeps
    the forward's fused loop from storing every intermediate, which cost far more than the
    recomputation (docs/compile.md, "While loops and branches")."""
    producer = {v: n for n in b.nodes for v in n.outputs}
    pending = [v for n in b.back_nodes for v in node_reads(n)] + [
        v for v in b.grads if v is not None]
    chosen, saved = set(), set()
    while pending:
        v = pending.pop()
        node = producer.get(v)
        if node is None:
            if v in b.ph_vids:
                saved.add(v)
            continue
        if id(node) in chosen:
            continue
        if node.op.elementwise and codegen.fusible(graph, node):
            chosen.add(id(node))
            pending.extend(node.value_args())
        else:
            saved.add(v)
    b.recomputed = [n for n in b.nodes if id(n) in chosen]
    b.saved = sorted(saved)


class CondNode:
    """The forward of a captured ``cond``: one branch's steps, picked at each call."""

    op = LoopRow("cond")
    phase = "forward"

    def __init__(self, pred, operands_in, branches, captured, tape):
        self.pred, self.operands_in, self.branches = pred, operands_in, branches
        self.captured, self.tape = captured, tape
        self.outputs: list = []
        self.attrs, self.ctx = {}, {"tape": tape}
        self.args = [("v", v) for v in self.value_args()]

    def value_args(self):
        return [self.pred] + self.operands_in + self.captured

    def make_step(self, graph, weak, build_steps):
        from .program import run_steps

        steps = [build_steps(graph, b.nodes, weak, set(b.outs) | set(b.saved))
                 for b in self.branches]
        pred, operands_in, outputs, tape = self.pred, self.operands_in, self.outputs, self.tape
        dtypes = [graph.values[v].dtype for v in operands_in]
        fixed = [v in weak for v in operands_in]  # a float argument: held as a Python float
        plans = [(b.ph_vids, b.outs, set(b.ph_vids) | set(self.captured), b.saved)
                 for b in self.branches]

        def step(env):
            k = 0 if np.asarray(env[pred]).reshape(-1)[0] else 1
            ph_vids, outs, inputs, saved = plans[k]
            for ph, v, d, w in zip(ph_vids, operands_in, dtypes, fixed):
                env[ph] = np.asarray(env[v], d) if w else env[v]
            run_steps(steps[k], env)
            for o, r in zip(outputs, outs):
                a = env[r]  # (an operand, or a view of one, is copied: results are fresh)
                env[o] = a.copy() if r in inputs or a.base is not None else a
            env[tape] = (k, [env[v] for v in saved])
        return step

    def __repr__(self):
        return (f"{self.outputs} = cond({self.pred}, {self.operands_in}) "
                f"{{{len(self.branches[0].nodes)} | {len(self.branches[1].nodes)} nodes}}")


class CondBackwardNode:
    """The backward of a captured ``cond``: the backward of the branch that ran."""

    op = LoopRow("cond_backward")
    phase = "backward"

    def __init__(self, node: CondNode, grads_in):
        self.node, self.grads_in = node, grads_in  # per result: a value id or None
        self.outputs: list = []  # gradients: per operand, then per captured value
        self.attrs, self.ctx = {}, {}
        self.args = [("v", v) for v in self.value_args()]

    def value_args(self):
        return ([g for g in self.grads_in if g is not None] + [self.node.tape]
                + self.node.captured)

    def make_step(self, graph, weak, build_steps):
        from .program import run_steps

        values, node = graph.values, self.node
        branches = node.branches
        steps = [build_steps(graph, b.recomputed + b.back_nodes, weak,
                             {g for g in b.grads if g is not None}) for b in branches]
        out_meta = [(values[v].shape, values[v].dtype) for v in branches[0].outs]
        grad_meta = [(values[v].shape, values[v].dtype) for v in self.outputs]
        grads_in, outputs, tape = self.grads_in, self.outputs, node.tape

        def step(env):
            k, saved = env[tape]
            b = branches[k]
            for v, a in zip(b.saved, saved):
                env[v] = a
            for c, g, (s, d) in zip(b.cotangents, grads_in, out_meta):
                if c is not None:
                    env[c] = env[g] if g is not None else np.zeros(s, d)
            run_steps(steps[k], env)
            for o, g, (s, d) in zip(outputs, b.grads, grad_meta):
                env[o] = env[g] if g is not None else np.zeros(s, d)
        return step

    def __repr__(self):
        return f"{self.outputs} = cond_backward({self.grads_in})"


class CondBackward(Node):
    """The eager backward of a ``cond`` a trace ran: the taken branch re-run with grad mode
    on; inside a trace's backward it records one ``CondBackwardNode``."""

    def __init__(self, branch, spec, operands, read, node):
        super().__init__()
        self._fn, self._spec, self._operands = branch.fn, spec, operands
        self._read, self._node = read, node

    def apply(self, grad_outputs):
        tracer = trace.current()
        create = is_grad_enabled()
        if (tracer is not None and not tracer.suspended and create
                and not tracer.records_own_backward()):
            # a derivative of a derivative: the branches' backwards were traced once
            raise tracer.fail("cond: a derivative of a derivative through a cond with a "
                              "computed predicate")
        result = trace.record_backward(
            grad_outputs, lambda recording: self._vjp(grad_outputs, create and not recording),
            lambda grads_in: CondBackwardNode(self._node, grads_in))
        n = len(self._operands)
        return ([g if t._requires_grad and t.dtype.is_floating_point else None
                 for g, t in zip(result[:n], self._operands)] + result[n:])

    def _vjp(self, grad_outputs, create):
        # (create_graph: the branch re-run on the operands themselves, so the gradients have
        # a history reaching them, for a derivative of any order, as eager's)
        ins = list(self._operands) if create else [
            Tensor._make(t._data, t._requires_grad and t.dtype.is_floating_point)
            for t in self._operands]
        with enable_grad():
            outs, _ = tree_flatten(self._fn(*tree_unflatten(ins, self._spec)))
            pairs = [(o, g) for o, g in zip(outs, grad_outputs)
                     if g is not None and o._requires_grad]
            targets = [t for t in ins if t._requires_grad] + list(self._read)
            grads = [None] * len(targets)
            if pairs and targets:
                grads = list(autograd_api.grad([o for o, _ in pairs], targets,
                                               [g for _, g in pairs], create_graph=create,
                                               allow_unused=True))
        it = iter(grads)
        full = [next(it) if t._requires_grad else None for t in ins] + list(it)
        with no_grad():
            return [g if g is not None and create else
                    Tensor._make(np.array(g._data, order="C")) if g is not None else
                    Tensor._make(np.zeros(tuple(t.shape), t._data.dtype))
                    for g, t in zip(full, ins + list(self._read))]

    def _release(self):
        self._released = True
        self._fn = None
