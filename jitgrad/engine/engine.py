"""Reverse-mode engine: GraphTask, ReadyQueue, and the loop that runs nodes.

Modelled on PyTorch's engine. One ``execute`` call is one GraphTask:

1. dependency counts by an iterative walk from the root (no recursion: graphs can be 100k deep);
   with ``inputs`` given, only nodes on a path to an input are counted ("needed");
2. a ready queue ordered by ``sequence_nr`` (later-created first), so the order matches PyTorch;
3. per node: tensor pre-hooks, ``retain_grad``, captures for ``autograd.grad``, node pre-hooks,
   ``apply``, post-hooks, output validation, release of saved tensors, then each gradient is added
   into the input buffer of the next node, which becomes ready when its count reaches zero.

Note [broadcast reduction]: a gradient whose shape differs from the forward input's recorded shape
is summed down to it here, in one place (PyTorch's ``validate_outputs``), so no op's backward
rule unbroadcasts by hand. Tensors are handled by duck typing (``shape``, ``dtype``,
``_sum_to_shape``, ``_cast``, ``+``).

A single worker (the calling thread) runs the queue; the threaded scheduler is a later step.
"""
from __future__ import annotations

import heapq

from ..autograd import grad_mode
from ..autograd.node import GraphRoot


class GraphTask:
    """State of one backward()/grad() call."""

    __slots__ = ("keep_graph", "dependencies", "buffers", "needed", "captures", "captured")

    def __init__(self, keep_graph):
        self.keep_graph = keep_graph
        self.dependencies: dict = {}
        self.buffers: dict = {}
        self.needed = None  # set of nodes to execute, or None for all
        self.captures: dict = {}  # node -> [(input_nr, capture index)]
        self.captured: list = []

    def runs(self, node) -> bool:
        return self.needed is None or node in self.needed

    def receives(self, node) -> bool:
        return self.needed is None or node in self.needed or node in self.captures


def _reachable_needed(root, targets, run_sinks: bool):
    """Nodes from which some target node can be reached through at least one edge (iterative
    post-order walk). Target sinks (``AccumulateGrad``) are included when ``run_sinks``: that is
    ``backward(inputs=...)``; ``autograd.grad`` only captures what arrives at its inputs."""
    needed = set()
    state = {}
    stack = [root]
    while stack:
        node = stack[-1]
        if node not in state:
            state[node] = 0
            for nxt, _ in node._next_edges:
                if nxt is not None and nxt not in state:
                    stack.append(nxt)
            continue
        stack.pop()
        if state[node] == 1:
            continue
        state[node] = 1
        if any(n in needed or n in targets for n, _ in node._next_edges if n is not None):
            needed.add(node)
    if run_sinks:
        needed.update(t for t in targets if not t._next_edges)
    return needed


def _count_dependencies(task: GraphTask, root) -> None:
    """Count, for every node that will receive gradients, the edges that feed it."""
    deps = task.dependencies
    seen = {root}
    stack = [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node._next_edges:
            if nxt is None or not task.receives(nxt):
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                if task.runs(nxt):
                    stack.append(nxt)


def _validate(node, grads):
    if len(grads) != len(node._next_edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(node._next_edges)}, got {len(grads)})")
    out = list(grads)
    for i, (g, meta) in enumerate(zip(grads, node._next_meta)):
        if g is None or meta is None:
            continue
        shape, dtype = meta
        if tuple(g.shape) != shape:
            try:
                g = g._sum_to_shape(shape)
            except ValueError:
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}") from None
        if g.dtype is not dtype:
            g = g._cast(dtype)
        out[i] = g
    return out


def _hook_name(hook) -> str:
    return getattr(hook, "__name__", "<unknown>")


def _check_hook_value(hook, old, new) -> None:
    """PyTorch's check of a gradient a hook returned in place of ``old``."""
    if old is None:
        if new is not None:
            raise RuntimeError("can't replace a empty gradient with a non-empty value")
        return
    if new is None:
        return
    if not (hasattr(new, "shape") and hasattr(new, "dtype") and hasattr(new, "_sum_to_shape")):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new.dtype is not old.dtype:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"{old.dtype.name} got {new.dtype.name})")
    if tuple(new.shape) != tuple(old.shape):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _check_hook_values(hook, old: tuple, new) -> list:
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values "
                           f"(got {len(new)}, but expected {len(old)})")
    for o, n in zip(old, new):
        _check_hook_value(hook, o, n)
    return list(new)


def _call_hooks(hooks, grad):
    for hook in list(hooks):
        res = hook(grad)
        if res is not None:
            _check_hook_value(hook, grad, res)
            grad = res
    return grad


def _run_node(task: GraphTask, node, inputs: list):
    """Hooks, captures and apply for one ready node; returns its outputs or None to skip."""
    if node._has_tensor_hooks():
        for nr in range(len(inputs)):
            hooks = node._tensor_pre_hooks(nr)
            if hooks and inputs[nr] is not None:
                inputs[nr] = _call_hooks(hooks, inputs[nr])
            retain = node._retain_grad_hooks.get(nr)
            if retain is not None and inputs[nr] is not None:
                retain(inputs[nr])
    for nr, idx in task.captures.get(node, ()):
        task.captured[idx] = inputs[nr]
    if not task.runs(node):
        return None
    for hook in list(node._pre_hooks.values()):
        res = hook(tuple(inputs))
        if res is not None:
            inputs = _check_hook_values(hook, tuple(inputs), res)
    outputs = node.apply(inputs)
    if not task.keep_graph:
        node._release()
    outputs = _validate(node, outputs)  # post hooks see gradients shaped like the inputs
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            res = hook(tuple(outputs), tuple(inputs))
            if res is not None:
                outputs = _check_hook_values(hook, tuple(outputs), res)
    return outputs


def execute(root_edges, root_grads, keep_graph: bool, create_graph: bool,
            capture_edges=None, accumulate: bool = True):
    """Run backward from ``root_edges`` (``(node, input_nr)`` pairs) seeded with ``root_grads``.

    With ``capture_edges`` (for ``autograd.grad`` or ``backward(inputs=...)``) only the nodes on a
    path to them run, and the gradients arriving at those edges are returned in order.
    """
    task = GraphTask(keep_graph)
    root = GraphRoot(root_edges, root_grads)
    if capture_edges is not None:
        task.captured = [None] * len(capture_edges)
        for idx, (node, nr) in enumerate(capture_edges):
            task.captures.setdefault(node, []).append((nr, idx))
        task.needed = _reachable_needed(root, set(task.captures), accumulate)
    _count_dependencies(task, root)
    ready = [(0, 0, root, [])]
    tie = 1
    caller_mode = grad_mode.is_grad_enabled()
    try:
        while ready:
            _, _, node, inputs = heapq.heappop(ready)
            # the node AND its hooks run with grad mode = create_graph, as in PyTorch (set per
            # node: a hook may have changed it)
            grad_mode._set_enabled(create_graph)
            outputs = _run_node(task, node, inputs)
            if outputs is not None:
                tie = _pass_on(task, node, outputs, ready, tie)
    finally:
        grad_mode._set_enabled(caller_mode)
    return task.captured


def _pass_on(task: GraphTask, node, outputs, ready: list, tie: int) -> int:
    """Add a node's output gradients into the input buffers of the nodes they feed; push the
    nodes whose dependencies are all satisfied. Returns the updated tie-breaker counter."""
    deps, buffers = task.dependencies, task.buffers
    for (nxt, nr), grad in zip(node._next_edges, outputs):
        if nxt is None or not task.receives(nxt):
            continue
        buf = buffers.get(nxt)
        if buf is None:
            buf = buffers[nxt] = [None] * max(nxt._num_outputs, nr + 1)
        if grad is not None:
            buf[nr] = grad if buf[nr] is None else buf[nr] + grad  # recorded iff create_graph
        deps[nxt] -= 1
        if deps[nxt] == 0:
            del buffers[nxt]
            tie += 1
            heapq.heappush(ready, (-nxt._sequence_nr, tie, nxt, buf))
    return tie
