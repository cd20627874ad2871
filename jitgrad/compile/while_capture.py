"""A ``while_loop`` inside a ``jitgrad.compile`` trace: captured as ONE ``WhileNode`` (and, in
the backward, one ``WhileBackwardNode``), never unrolled: the trip count is decided by the
values at each call (Note [compiled while] in ``while_nodes.py``).

The condition and the body are traced once each on placeholder carries, into graphs of their
own; the body's backward with them (its rules traced with ``create_graph=True``, as a captured
``fori_loop``'s: ``loop.py``). As eager (Note [while tape] in ``while_loop.py``), the forward
computes without a graph and the backward recomputes each step from the tape with every float
carry requiring grad; the results require grad when a carry or a tensor the loop reads does.
The trace run itself computes the loop with the eager ``_Loop`` and joins its results to the
eager graph through ``WhileLoopBackward``, whose backward is the eager walk back (and, inside a
traced backward, records the ``WhileBackwardNode``).
"""
from __future__ import annotations

import numpy as np

from ..autograd import transforms
from ..func._pytree import tree_flatten, tree_unflatten
from ..graph.grad_mode import is_grad_enabled, no_grad
from ..graph.node import Node
from ..ops import creation
from ..ops.core.recording import record_node
from ..tensor import Tensor
from . import trace
from .loop import trace_backward, trace_body
from .loop_nodes import LoopNode, made, outside
from .while_nodes import WhileBackwardNode, WhileNode


def traced_while(tracer, loop, carry):
    """``while_loop`` recorded into the trace; ``loop``: the eager ``_Loop`` of this call."""
    leaves, spec = tree_flatten(carry)
    refs = [tracer.ref(c) for c in leaves]
    carry_in, run_with = [r[0][1] for r in refs], [r[1] for r in refs]
    grad_on = is_grad_enabled()
    graph = tracer.graph
    outer = graph.nodes
    try:
        body_nodes = graph.nodes = []
        body = trace_body(tracer, "while_loop", lambda c, _x: (loop.body_fn(c), None), spec,
                           carry, run_with,
                           tuple(grad_on and t.dtype.is_floating_point for t in run_with),
                           None, [], ())
        cond_nodes = graph.nodes = []
        with no_grad():  # (eager runs the condition without a graph)
            pred = loop.cond_fn(tree_unflatten(list(body.placeholders), spec))
        if not isinstance(pred, Tensor):
            raise tracer.fail("while_loop: cond_fn returned a Python value, not a Tensor: "
                              "return a one-element Tensor to compile the loop")
        if pred.numel() != 1:
            raise ValueError("while_loop: cond_fn must return a bool or a one-element Tensor "
                             f"(got shape {tuple(pred.shape)})")
        pred_vid = tracer.ref(pred)[0][1]
        phs = set(body.ph_vids)
        made_here = made(body_nodes) | phs
        captured = outside(body_nodes, made_here, body.outs)
        cond_captured = outside(cond_nodes, made(cond_nodes) | phs, [pred_vid])
        needs_grad = grad_on and (
            any(t._requires_grad and t.dtype.is_floating_point for t in run_with)
            or any(tracer.tensors[v]._requires_grad for v in captured + cond_captured
                   if v in tracer.tensors))
        diff_out = [k for k, o in enumerate(body.out_leaves)
                    if o._requires_grad and o.dtype.is_floating_point]
        backward = None
        if needs_grad and diff_out:
            backward = trace_backward(tracer, "while_loop", body, captured, diff_out)
            made_here |= made(backward.nodes) | {c for c in backward.cotangents if c is not None}
            read = outside(backward.nodes, made_here, backward.carry_grads
                           + backward.captured_grads)
            captured += [v for v in read if v not in captured]
    finally:
        graph.nodes = outer
    tape_vid = graph.new_value((), np.dtype(object), "tape")
    body_loop = LoopNode(1, carry_in, body.ph_vids, body_nodes, body.outs, captured, tape_vid)
    body_loop.backward = backward
    node = WhileNode(body_loop, cond_nodes, pred_vid, cond_captured, loop.cap)
    node.phase = tracer.phase
    final = _run_untraced(tracer, loop, run_with, needs_grad)
    if needs_grad:
        _join(tracer, node, loop, final, run_with, backward)
    node.outputs = [tracer.add(t, "op") for t in final]
    outer.append(node)
    return tree_unflatten(final, spec)


def _run_untraced(tracer, loop, run_with, needs_grad) -> list:
    """The trace run's result: the eager loop, keeping its tape when a backward may follow
    (and finding the float tensors the loop reads: eager's ``closures``)."""
    tracer.suspended += 1
    try:
        with no_grad():
            if not needs_grad:
                return [Tensor._make(t._data) for t in loop.run_plain(list(run_with))]
            used: dict = {}
            transforms.push_collector(used)
            try:
                final = loop.forward(list(run_with))
            finally:
                transforms.pop_collector()
        for t in run_with:
            used.pop(id(t), None)
        loop.closures = [t for t in used.values() if t.dtype.is_floating_point]
        return [Tensor._make(t._data) for t in final]
    finally:
        tracer.suspended -= 1


def _join(tracer, node, loop, final, run_with, backward):
    """Join the loop's results to the eager graph (as a captured ``fori_loop``'s ``_join``):
    edges to the carries and to the traced values of the captured tensors requiring grad;
    the eager backward takes gradients with respect to the tensors the body read."""
    values = tracer.graph.values
    diff = backward.captured_diff if backward is not None else []
    proxies = [tracer.tensor_of(v) for v in diff]
    read = [values[v].info["tensor"] if values[v].kind == "closure" else tracer.tensor_of(v)
            for v in diff]
    back = WhileLoopBackward(loop, node, read)
    inputs = list(run_with) + proxies
    needs = tuple(t._requires_grad and t.dtype.is_floating_point for t in inputs)
    record_node(back, inputs, needs, final, [t.dtype.is_floating_point for t in final])


class WhileLoopBackward(Node):
    """The eager backward of a while loop a trace ran (Note [while tape]); inside a trace's
    backward it records one ``WhileBackwardNode``."""

    def __init__(self, loop, node, read):
        super().__init__()
        self._loop, self._node, self._read = loop, node, read

    def apply(self, grad_outputs):
        tracer = trace.current()
        # (a trace records its own backward with create_graph=True: no second derivative)
        if is_grad_enabled() and not (tracer is not None and not tracer.suspended
                                      and tracer.records_own_backward()):
            raise RuntimeError("while_loop: a second derivative through the loop is not "
                               "supported (its tape is recomputed without a graph); use "
                               "fori_loop or scan, or a Python loop, for higher order")
        result = trace.record_backward(
            grad_outputs, lambda recording: self._gradients(grad_outputs),
            lambda grads_in: WhileBackwardNode(self._node, grads_in))
        n = len(self._loop.meta)
        return ([gr if gr.dtype.is_floating_point else None for gr in result[:n]]
                + result[n:])

    def _gradients(self, grad_outputs) -> list:
        with no_grad():
            g, acc = self._loop.backward(list(grad_outputs))
        position = {id(t): k for k, t in enumerate(self._loop.closures)}
        read = [acc[position[id(t)]] if id(t) in position and acc[position[id(t)]] is not None
                else creation.zeros(tuple(t.shape), dtype=t.dtype) for t in self._read]
        # (fresh arrays: a zero-trip loop's gradient is its input's, and the trace knows a
        # value by its array: the program must read this node's result, not the input)
        return [Tensor._make(np.array(t._data, order="C")) for t in list(g) + read]

    def _release(self):
        self._released = True
        self._loop = None
