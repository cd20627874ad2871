"""Fused regions: a group of elementwise backward nodes run as one node (engine side).

Note [fused regions]: when a node that can be fused (``node._fusible``: elementwise op nodes)
is about to run with a gradient of at least ``FUSION_MIN_ELEMENTS`` elements, the engine collects
the *region* below it: nodes that can be fused, with the root's output shape and dtype, whose
every incoming edge comes from the region (so their whole gradient is computed inside it), no
partial gradient received yet, and nothing to observe their gradients (no hooks, retain_grad or
capture). The engine hands the region to the root as a ``FusedRegion``: its members, where
each member's gradient for each input goes (a ``Destination``: another member, or one of the
region's outside edges) and its outside edges. The root's ``_apply_fused`` runs the region at
once (Note [fused backward] in ``ops/core/fusion.py``: one kernel) and returns ``FusedGradients``:
the gradients leaving it, one per outside edge. The engine passes them on from the
``FusedRegion`` (it stands for the region as one node: named and ordered like its root), and
releases the members' saved tensors. Members are never queued. A gradient already waiting at an
outside edge, held by the engine alone, is handed to the region (``FusedRegion.partials``) so
its kernel adds it in (one pass fewer than adding afterwards; not in deterministic mode); the
result says which it added in (``FusedGradients.added``), and the engine puts the others back.
The engine knows only that nodes may fuse; what fusing means is the nodes' business.

The engine calls ``run`` for a node that can fuse; everything here works on the task's
dependency counts and input buffers, under ``task.threads.lock`` when the task is shared.
"""
from __future__ import annotations

from ..graph.node import Destination, sole_owner
from .input_buffer import InputBuffer, validate_outputs

# Note [fused regions]: at most this many nodes per region (a long chain fuses piecewise): the
# generated kernel's compile time and operand count grow with it
FUSION_MAX_NODES = 12


class FusedRegion:
    """A fused region (Note [fused regions]), as the engine hands it to its root's
    ``_apply_fused`` and passes its gradients on afterwards, as from one node.

    ``nodes``: the members in topological order, root first. ``destinations``: per member, per
    input edge, a ``Destination``, or None (no edge, or one this task does not feed).
    ``n_edges``: the number of outside edges (``_next_edges``: ``(node, input_nr)``, each once,
    with the forward metadata of each in ``_next_meta``). ``partials``: per outside edge, a
    gradient already waiting in its slot that the engine alone holds, taken out for the kernel
    to add in (or None), or None when there is none. ``merged``: per outside node, how many of
    its counted dependencies the region's one delivery per edge stands for beyond one."""

    __slots__ = ("nodes", "destinations", "partials", "merged", "_next_edges", "_next_meta",
                 "_sequence_nr")

    def __init__(self, nodes: list, destinations: list, edges: list, metas: list, merged: dict):
        self.nodes = nodes
        self.destinations = destinations
        self.partials = None
        self.merged = merged
        self._next_edges = edges
        self._next_meta = metas
        self._sequence_nr = nodes[0]._sequence_nr

    @property
    def n_edges(self) -> int:
        return len(self._next_edges)

    def name(self) -> str:
        return self.nodes[0].name()


def observed(node) -> bool:
    """Whether something sees ``node``'s gradients: tensor or node hooks, retain_grad."""
    return bool(node._has_tensor_hooks() or node._pre_hooks or node._post_hooks)


def collect(task, root):
    """The region below ``root`` (Note [fused regions]) as a ``FusedRegion`` (no partials
    yet), or None when no node joins."""
    meta = root._output_meta[0]
    deps, not_ready, needed = task.dependencies, task.not_ready, task.needed
    captures = task.captures
    index = {root: 0}
    nodes = [root]
    arrived: dict = {}
    k = 0
    while k < len(nodes):
        for nxt, _ in nodes[k]._next_edges:
            if nxt is None or not nxt._fusible:
                continue
            count = arrived.get(nxt, 0) + 1
            arrived[nxt] = count
            # every edge into ``nxt`` comes from the region (deps counts them all; a partial
            # gradient from outside would sit in ``not_ready``)
            if (count == deps.get(nxt) and len(nodes) < FUSION_MAX_NODES
                    and nxt not in not_ready and len(nxt._output_meta) == 1
                    and nxt._output_meta[0] == meta and not observed(nxt)
                    and (needed is None or (nxt in needed and nxt not in captures))):
                index[nxt] = len(nodes)
                nodes.append(nxt)
        k += 1
    if len(nodes) < 2:
        return None
    targets: dict = {}
    merged: dict = {}
    edges, metas, destinations = [], [], []
    for node in nodes:
        node_destinations = []
        for i, (nxt, nr) in enumerate(node._next_edges):
            if nxt is None or not task.receives(nxt):
                node_destinations.append(None)
            elif nxt in index:
                node_destinations.append(Destination(False, index[nxt]))
            else:
                t = targets.get((nxt, nr))
                if t is None:
                    t = targets[(nxt, nr)] = len(edges)
                    edges.append((nxt, nr))
                    metas.append(node._next_meta[i])
                else:
                    merged[nxt] = merged.get(nxt, 0) + 1
                node_destinations.append(Destination(True, t))
        destinations.append(node_destinations)
    return FusedRegion(nodes, destinations, edges, metas, merged)


def _locked(lock, fn, *args):
    """``fn(*args)``, under ``lock`` when the task is shared (``lock`` not None)."""
    if lock is None:
        return fn(*args)
    with lock:
        return fn(*args)


def _claim(task, root):
    """The region below ``root`` (``collect``) with the partial sums taken for it, or None."""
    region = collect(task, root)
    if region is not None and not task.deterministic:
        region.partials = _take_partials(task, region._next_edges)
    return region


def _drop_dependencies(task, merged: dict) -> None:
    deps = task.dependencies
    for node, extra in merged.items():
        deps[node] -= extra


def _take_partials(task, edges: list):
    """Note [fused regions]: gradients already waiting in the outside edges' input slots that
    the engine alone holds, taken out of their slots, so the region's kernel can add them to
    its own (one pass fewer than adding afterwards); per edge, or None when there are none.
    Not in deterministic mode (slots keep every contribution apart)."""
    partials = None
    not_ready = task.not_ready
    for t in range(len(edges)):
        nxt, nr = edges[t]
        buffer = not_ready.get(nxt)
        if buffer is None or nr >= len(buffer) or buffer[nr] is None:
            continue
        old = InputBuffer.take(buffer, nr)
        if sole_owner(old, 1):  # ``old`` here, nowhere else
            if partials is None:
                partials = [None] * len(edges)
            partials[t] = old
        else:
            buffer[nr] = old
        old = None
    return partials


def _restore_partials(task, region: FusedRegion, added) -> None:
    """Put the partial sums the region did not add in (``added``: those it did) back in their
    slots; the region keeps none."""
    partials, region.partials = region.partials, None
    not_ready = task.not_ready
    for t in range(len(partials)):
        if partials[t] is not None and t not in added:
            nxt, nr = region._next_edges[t]
            not_ready[nxt][nr] = partials[t]
        partials[t] = None


def run(task, root, grad):
    """Run the region below ``root`` (large enough, unobserved) as one; returns ``(source,
    outputs)`` as the engine's ``_run_node`` does, or None when there is no region or the nodes
    decline (the root then runs alone)."""
    if task.needed is not None and (root not in task.needed or root in task.captures):
        return None
    threads = task.threads
    lock = threads.lock if threads.shared else None  # other threads change counts and buffers
    region = _locked(lock, _claim, task, root)
    if region is None:
        return None
    result = None
    try:
        result = root._apply_fused(region, grad)
    finally:
        if region.partials is not None:
            _locked(lock, _restore_partials, task, region, () if result is None else result.added)
    if result is None:
        return None
    if region.merged:  # several region edges into one outside edge: its count drops once per edge
        _locked(lock, _drop_dependencies, task, region.merged)
    if not task.keep_graph:
        for node in region.nodes:
            node._release()
    return region, validate_outputs(region, result.grads)
