"""GraphTask and ReadyQueue: the state of one backward call (PyTorch's names).

A ``GraphTask`` holds the graph's state only: dependency counts, the input buffers of nodes not
ready yet, the ready queue, the nodes needed for ``grad(inputs=...)``, the captures, the first
error and the call's flags. How threads share it is in its ``threads``
(``workers.TaskThreads``).
"""
from __future__ import annotations

from heapq import heappop, heappush

from .. import _config
from ..graph import anomaly
from ..graph.node import bind_leaf_sinks
from . import workers


class ReadyQueue(list):
    """The nodes of one GraphTask whose every gradient has arrived, with their input buffers:
    a heap of ``(-sequence_nr, push count, node, buffer)``. The latest-created node
    (``sequence_nr``) comes first, as in PyTorch; among equal ones (leaf sinks, the root), the
    first pushed. PyTorch's queue also orders by reentrant depth, deeper first: here every task
    has its own queue, and the workers take nodes from the newest shared task first
    (``workers.Pool``), a reentrant task being newer than the task that waits on it."""

    __slots__ = ("pushed",)
    # the engine's hot path (``engine._deliver``, ``engine.run_nodes``) does ``push`` and
    # ``pop`` inline: keep the entry's layout in step with it

    def __init__(self):
        super().__init__()
        self.pushed = 0

    def push(self, node, buffer) -> None:
        self.pushed += 1
        heappush(self, (-node._sequence_nr, self.pushed, node, buffer))

    def pop(self):
        """The first node and its input buffer, taken out of the queue."""
        entry = heappop(self)
        return entry[2], entry[3]

    def peek(self):
        """The first node, left in the queue."""
        return self[0][2]


class GraphTask:
    """State of one backward()/grad() call."""

    __slots__ = ("keep_graph", "create_graph", "fuse", "deterministic", "dependencies",
                 "not_ready", "needed", "captures", "captured", "ready", "error", "threads")

    def __init__(self, keep_graph, create_graph=False):
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        # Note [fused regions]: not while recording a graph of the backward, nor under anomaly
        # detection (it checks every node's outputs)
        self.fuse = _config.FUSION and not create_graph and not anomaly._state.enabled
        self.deterministic = _config.DETERMINISTIC
        self.dependencies: dict = {}  # node -> edges still to deliver a gradient to it
        self.not_ready: dict = {}  # node -> its InputBuffer, while some of them have not
        self.needed = None  # set of nodes to execute, or None for all
        self.captures: dict = {}  # node -> [(input_nr, capture index)]
        self.captured: list = []
        self.ready = ReadyQueue()
        self.error = None  # first exception; stops the task
        self.threads = workers.TaskThreads()

    def runs(self, node) -> bool:
        return self.needed is None or node in self.needed

    def receives(self, node) -> bool:
        return self.needed is None or node in self.needed or node in self.captures


def reachable_needed(root, targets, run_sinks: bool):
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
            if node._leaf_edges:  # the walk reads edges first (Note [lazy leaf edges])
                bind_leaf_sinks(node)
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


def count_dependencies(task: GraphTask, root) -> None:
    """Count, for every node that will receive gradients, the edges that feed it (iterative:
    graphs can be 100,000 nodes deep)."""
    deps, needed = task.dependencies, task.needed
    stack = [root]  # the root (made per call) is no node's next edge: ``deps`` is the seen set
    while stack:
        node = stack.pop()
        if node._leaf_edges:  # (Note [lazy leaf edges]: every node that runs passes here)
            bind_leaf_sinks(node)
        for nxt, _ in node._next_edges:
            if nxt is None or (needed is not None and not task.receives(nxt)):
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                if needed is None or nxt in needed:
                    stack.append(nxt)
