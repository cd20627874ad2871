"""Fused regions: a group of elementwise backward nodes run as one node (engine side).

Note [fused regions]: when a node that can be fused (``node._fusible``: elementwise op nodes)
is about to run with a gradient of at least ``FUSION_MIN_ELEMENTS`` elements, the engine collects
the *region* below it: nodes that can be fused, with the root's output shape and dtype, whose
every incoming edge comes from the region (so their whole gradient is computed inside it), no
partial gradient received yet, and nothing to observe their gradients (no hooks, retain_grad or
capture). The root's ``_apply_fused`` runs the region at once (Note [fused backward] in
``ops/fusion.py``: one kernel) and returns the gradients leaving it, one per outside edge; the
engine passes them on through a ``FusedRegion`` standing for the region, and releases the
members' saved tensors. Members are never queued. A gradient already waiting at an outside edge,
held by the engine alone, is handed to the region so its kernel adds it in (one pass fewer than
adding afterwards; not in deterministic mode). The engine knows only that nodes may fuse; what
fusing means is the nodes' business.

The engine calls ``run`` for a node that can fuse; everything here works on the task's
dependency counts and input buffers, under ``task.lock`` when the task is shared.
"""
from __future__ import annotations

from ..autograd.node import sole_owner

# Note [fused regions]: at most this many nodes per region (a long chain fuses piecewise): the
# generated kernel's compile time and operand count grow with it
FUSION_MAX_NODES = 12


class FusedRegion:
    """What a fused region's gradients are passed on from: its outside edges (``(node, nr)``,
    each once) with their forward metadata; named and ordered like its root."""

    __slots__ = ("_root", "_next_edges", "_next_meta", "_sequence_nr")

    def __init__(self, root, edges: list, metas: list):
        self._root = root
        self._next_edges = edges
        self._next_meta = metas
        self._sequence_nr = root._sequence_nr

    def name(self) -> str:
        return self._root.name()


def observed(node) -> bool:
    """Whether something sees ``node``'s gradients: tensor or node hooks, retain_grad."""
    return bool(node._has_tensor_hooks() or node._pre_hooks or node._post_hooks)


def collect(task, root):
    """The region below ``root`` (Note [fused regions]) as ``(nodes, dests, edges, metas,
    merged)``: members in topological order (root first); per member and input edge, where its
    gradient goes: a member index (> 0), ``-1 - t`` for outside edge ``t``, or None (no edge, or
    one this task does not feed); the outside edges and their metadata; per outside node, how
    many of its counted dependencies the region's one delivery per edge stands for beyond one.
    None when no node joins."""
    meta = root._output_meta[0]
    deps, buffers, needed, captures = task.dependencies, task.buffers, task.needed, task.captures
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
            # gradient from outside would sit in ``buffers``)
            if (count == deps.get(nxt) and len(nodes) < FUSION_MAX_NODES and nxt not in buffers
                    and len(nxt._output_meta) == 1
                    and nxt._output_meta[0] == meta and not observed(nxt)
                    and (needed is None or (nxt in needed and nxt not in captures))):
                index[nxt] = len(nodes)
                nodes.append(nxt)
        k += 1
    if len(nodes) < 2:
        return None
    targets: dict = {}
    merged: dict = {}
    edges, metas, dests = [], [], []
    for node in nodes:
        node_dests = []
        for i, (nxt, nr) in enumerate(node._next_edges):
            if nxt is None or not task.receives(nxt):
                node_dests.append(None)
            elif nxt in index:
                node_dests.append(index[nxt])
            else:
                t = targets.get((nxt, nr))
                if t is None:
                    t = targets[(nxt, nr)] = len(edges)
                    edges.append((nxt, nr))
                    metas.append(node._next_meta[i])
                else:
                    merged[nxt] = merged.get(nxt, 0) + 1
                node_dests.append(-1 - t)
        dests.append(node_dests)
    return nodes, dests, edges, metas, merged


def _locked(lock, fn, *args):
    """``fn(*args)``, under ``lock`` when the task is shared (``lock`` not None)."""
    if lock is None:
        return fn(*args)
    with lock:
        return fn(*args)


def _claim(task, root):
    """The region below ``root`` (``collect``) plus the partial sums taken for it, or None."""
    region = collect(task, root)
    if region is None:
        return None
    return region, None if task.deterministic else _take_partials(task, region[2])


def _drop_dependencies(task, merged: dict) -> None:
    deps = task.dependencies
    for node, extra in merged.items():
        deps[node] -= extra


def _take_partials(task, edges: list):
    """Note [fused regions]: gradients already waiting in the outside edges' input slots that
    the engine alone holds, taken out of their slots, so the region's kernel can add them to
    its own (one pass fewer than adding afterwards); per edge, or None when there are none.
    Not in deterministic mode (slots keep every contribution apart)."""
    into = None
    buffers = task.buffers
    for t in range(len(edges)):
        nxt, nr = edges[t]
        buf = buffers.get(nxt)
        if buf is None or nr >= len(buf) or buf[nr] is None:
            continue
        old = buf[nr]
        buf[nr] = None
        if sole_owner(old, 1):  # ``old`` here, nowhere else
            if into is None:
                into = [None] * len(edges)
            into[t] = old
        else:
            buf[nr] = old
        old = None
    return into


def _restore_partials(task, edges: list, into: list) -> None:
    """Put back the partial sums the region did not take (it sets ``into[t]`` to None for those
    it added into its output for edge ``t``)."""
    buffers = task.buffers
    for t in range(len(edges)):
        if into[t] is not None:
            nxt, nr = edges[t]
            buffers[nxt][nr] = into[t]


def run(task, root, grad, validate):
    """Run the region below ``root`` (large enough, unobserved) as one; returns ``(source,
    outputs)`` as the engine's ``_run_node`` does (``validate``: its output check), or None
    when there is no region or the nodes decline (the root then runs alone)."""
    if task.needed is not None and (root not in task.needed or root in task.captures):
        return None
    lock = task.lock if task.shared else None  # other threads change dependencies and buffers
    claimed = _locked(lock, _claim, task, root)
    if claimed is None:
        return None
    (nodes, dests, edges, metas, merged), into = claimed
    try:
        outputs = root._apply_fused(nodes, dests, len(edges), grad, into)
    finally:
        if into is not None:
            _locked(lock, _restore_partials, task, edges, into)
    if outputs is None:
        return None
    if merged:  # several region edges into one outside edge: its count drops once per edge
        _locked(lock, _drop_dependencies, task, merged)
    if not task.keep_graph:
        for node in nodes:
            node._release()
    source = FusedRegion(root, edges, metas)
    return source, validate(source, outputs)
