"""Reverse-mode engine: GraphTask, ReadyQueue, and the threads that run nodes.

Modelled on PyTorch's engine. One ``execute`` call is one GraphTask:

1. dependency counts by an iterative walk from the root (no recursion: graphs can be 100k deep);
   with ``inputs`` given, only nodes on a path to an input are counted ("needed");
2. a ready queue ordered by ``sequence_nr`` (later-created first), so the order matches PyTorch;
3. per node: tensor pre-hooks, ``retain_grad``, captures for ``autograd.grad``, node pre-hooks,
   ``apply``, post-hooks, output validation, release of saved tensors, then each gradient is added
   into the input buffer of the next node, which becomes ready when its count reaches zero.
   Gradients meeting in a buffer are added in place into one the engine holds alone, and
   AccumulateGrad keeps such a gradient as ``.grad`` without a copy (Note [owned buffers] in
   ``autograd/node.py``); the engine moves gradients out of its lists as it passes them on, so
   that reference counts show when nothing else holds them.

Note [broadcast reduction]: a gradient whose shape differs from the forward input's recorded shape
is summed down to it here, in one place (PyTorch's ``validate_outputs``), so no op's backward
rule unbroadcasts by hand. Tensors are handled by duck typing (``shape``, ``dtype``,
``_data.dtype``, ``_sum_to_shape``, ``_cast``, ``+``, ``_add_in_place``).

Note [threaded engine]: the calling thread (the task's *owner*) always runs nodes. While at most
one node is ready it runs them alone, touching the task without locks (no other thread can see
it). When more than one node is ready, the nodes run so far in this wide part of the graph took
long enough on average to be worth a hand-off, and a ready node's gradient is of a size where
that pays (Note [hand-off rule]), the owner *shares* the task: from then on the ready queue,
dependency counts and input buffers are changed only under ``task.lock``, and idle workers
(``workers.py``) pop ready nodes too. Kernels release the GIL, so nodes on different threads
overlap; the bookkeeping between them is short. When the owner finds one node ready and no
other thread inside the task, it takes the task back (lock-free again). Gradients meeting in an
input buffer are added outside the lock (the slot is emptied, the sum computed, then stored; the
dependency count drops only when a contribution is stored, so a node never becomes ready with a
sum in flight). In deterministic mode (``use_deterministic_algorithms``) contributions are kept
with their producer's ``(sequence_nr, edge)`` and summed in that order when the node is popped,
so results do not depend on which thread finished first (nor on the number of threads).

Errors: the first exception raised by a node, a hook or an add is stored on the task (with a
note naming the node); no thread takes its nodes any more, the owner waits until nodes running
on other threads return, then re-raises it (same object, same type). A ``BaseException`` raised
in the owner while it waits (KeyboardInterrupt) marks the task failed and propagates at once.

Fused regions of elementwise nodes run as one node: Note [fused regions] in ``regions.py``.

Reentrant backward (``backward()`` inside a node's backward or a hook) is a nested ``execute``:
the current thread owns the new task and always runs it itself, so it cannot deadlock when every
worker is busy; owners wait only for nodes that other threads are running now.
"""
from __future__ import annotations

import heapq
import math
import threading
import time

from .. import _config
from ..autograd import anomaly, grad_mode
from ..autograd.node import GraphRoot, sole_owner
from . import regions, workers

# Note [hand-off rule]: measured on 2 cores (docs/engine.md). Two threads run Python (the
# bookkeeping and dispatch of a node, ~9-14 us) one at a time under the GIL; only kernels
# overlap. Sharing a W5w-shaped graph paid off once its nodes took on average >= ~45 us with libm
# kernels (1.6x at 44 us, 1.8x at 142 us) or >= ~60 us with vectorised ones (1.06x at 56 us, 1.4x
# at 97 us), and lost below (0.7-0.8x at 24-35 us): a thread that drops the GIL for a short kernel
# takes it back before the waiting one has woken up, which then waits for the 5 ms switch
# interval. Element counts alone do not tell: the same W5w node took 106 us with libm kernels and
# 47 us with vectorised ones. So the owner times the nodes it runs while others are ready (never
# in a chain) and shares only when their mean is >= HANDOFF_MIN_SECONDS after
# HANDOFF_WARMUP_NODES of them. Gradients of HANDOFF_MAX_ELEMENTS or more are not handed off:
# their kernels run in parallel on every core, which balanced two uneven branches better than one
# serial branch per thread (W5h: 63 vs 76 ms). Tests set the thresholds to 0 to exercise the
# threaded path on tiny graphs.
HANDOFF_MIN_SECONDS = 50e-6
HANDOFF_WARMUP_NODES = 8
HANDOFF_MIN_ELEMENTS = 1 << 10
HANDOFF_MAX_ELEMENTS = 1 << 18


class GraphTask:
    """State of one backward()/grad() call."""

    __slots__ = ("keep_graph", "create_graph", "deterministic", "dependencies", "buffers",
                 "needed", "captures", "captured", "ready", "tie", "pending", "timed",
                 "time_sum", "lock", "cond", "shared", "published", "running", "error",
                 "owner_waiting", "fuse")

    def __init__(self, keep_graph, create_graph=False):
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        # Note [fused regions]: not while recording a graph of the backward, nor under anomaly
        # detection (it checks every node's outputs)
        self.fuse = _config.FUSION and not create_graph and not anomaly._state.enabled
        self.deterministic = _config.DETERMINISTIC
        self.dependencies: dict = {}
        self.buffers: dict = {}
        self.needed = None  # set of nodes to execute, or None for all
        self.captures: dict = {}  # node -> [(input_nr, capture index)]
        self.captured: list = []
        self.ready: list = []  # heap of (-sequence_nr, tie, node, input buffer)
        self.tie = 0
        self.pending: list = []  # nodes made ready beside others, not yet checked for hand-off
        self.timed = 0  # nodes the owner timed while others were ready (Note [hand-off rule])
        self.time_sum = 0.0
        self.lock = self.cond = None  # made when the task is first shared
        self.shared = False  # other threads may run nodes: every change under ``lock``
        self.published = False  # listed in the worker pool
        self.running = 0  # nodes being run now (shared mode)
        self.error = None  # first exception; stops the task
        self.owner_waiting = False

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
    deps, needed = task.dependencies, task.needed
    stack = [root]  # the root (made per call) is no node's next edge: ``deps`` is the seen set
    while stack:
        node = stack.pop()
        for nxt, _ in node._next_edges:
            if nxt is None or (needed is not None and not task.receives(nxt)):
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                if needed is None or nxt in needed:
                    stack.append(nxt)


def _validate(node, grads):
    if len(grads) != len(node._next_edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(node._next_edges)}, got {len(grads)})")
    out = list(grads)  # the engine's own list: it moves gradients out of it (_pass_on)
    metas = node._next_meta
    for i in range(len(out)):
        g = out[i]
        if g is None:
            continue
        meta = metas[i]
        if meta is None:
            continue
        shape, dtype = meta
        if g.shape != shape:
            try:
                g = g._sum_to_shape(shape)
            except ValueError:
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}") from None
        if g._data.dtype is not dtype.np and g.dtype is not dtype:  # the first test is cheap
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
    """Hooks, captures and apply for one ready node. Returns ``(source, outputs)``: the outputs
    (None to skip) and what they are passed on from, the node or the fused region it ran
    (Note [fused regions])."""
    if task.fuse and node._fusible:
        meta = node._output_meta[0]  # the size test first: most nodes stop here
        if (meta is not None and math.prod(meta[0]) >= _config.FUSION_MIN_ELEMENTS
                and inputs[0] is not None and not regions.observed(node)):
            fused = regions.run(task, node, inputs[0], _validate)
            if fused is not None:
                return fused
    if node._has_tensor_hooks():
        for nr in range(len(inputs)):
            hooks = node._tensor_pre_hooks(nr)
            if hooks and inputs[nr] is not None:
                inputs[nr] = _call_hooks(hooks, inputs[nr])
            retain = node._retain_grad_hooks.get(nr)
            if retain is not None and inputs[nr] is not None:
                retain(inputs[nr])
    needed = task.needed
    if needed is not None:  # grad(inputs=...) or backward(inputs=...): captures exist
        for nr, idx in task.captures.get(node, ()):
            task.captured[idx] = inputs[nr]
        if node not in needed:
            return node, None
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            res = hook(tuple(inputs))
            if res is not None:
                inputs = _check_hook_values(hook, tuple(inputs), res)
    outputs = node.apply(inputs)
    if anomaly._state.enabled:  # detect_anomaly(): nan/inf in this node's outputs raises
        anomaly.check_backward_outputs(node, outputs)
    if not task.keep_graph:
        node._release()
    outputs = _validate(node, outputs)  # post hooks see gradients shaped like the inputs
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            res = hook(tuple(outputs), tuple(inputs))
            if res is not None:
                outputs = _check_hook_values(hook, tuple(outputs), res)
    return node, outputs


# --- running a task --------------------------------------------------------------------------
class _Contributions(list):
    """Deterministic mode: the ``(key, gradient)`` pairs that reached one input slot."""

    __slots__ = ()


def _key(item):
    return item[0]


def _sum_inputs(inputs: list, create_graph: bool) -> list:
    """Deterministic mode: add each slot's contributions in a fixed order (producer
    ``sequence_nr`` then edge index, latest first), whatever order they arrived in."""
    for nr in range(len(inputs)):
        slot = inputs[nr]
        if type(slot) is _Contributions:
            slot.sort(key=_key, reverse=True)
            total = None
            for k in range(len(slot)):
                g = slot[k][1]
                slot[k] = None  # moved out: ``g`` is its only holder here (Note [owned buffers])
                total = g if total is None else _sum(total, g, create_graph)
            inputs[nr] = total
    return inputs


def _sum(a, b, create_graph: bool):
    """``a + b`` for two gradients meeting in one input slot; the caller holds each in exactly
    one variable and nowhere else. Unless recorded (``create_graph``), the sum is written into
    whichever of the two the engine holds alone (Note [owned buffers] in autograd/node.py), as
    PyTorch's InputBuffer does: no new buffer per addition, and the result is again the
    engine's alone for the next one (and for AccumulateGrad to keep). The tensor decides
    whether a raw in-place add is exact (``_add_in_place``: not while a transform needs the
    tangents added too, not for subclasses). Floating-point addition is commutative: the
    result is bitwise the same either way."""
    if not create_graph and a is not b:
        if sole_owner(a, 2) and a._add_in_place(b):  # 2: the caller's variable and ``a``
            return a
        if sole_owner(b, 2) and b._add_in_place(a):
            return b
    return a + b  # recorded iff create_graph


def _heavy(node) -> bool:
    """Whether the gradient ``node`` receives is of a size worth another thread."""
    meta = node._output_meta
    if meta:
        m = meta[0]
        return m is not None and HANDOFF_MIN_ELEMENTS <= math.prod(m[0]) < HANDOFF_MAX_ELEMENTS
    return False


def _worth_sharing(task: GraphTask) -> bool:
    """Called by the owner, alone, when more than one node is ready (Note [hand-off rule]):
    share the task if the nodes timed so far took long enough on average and one of the ready
    nodes is of a size worth a hand-off. A light node next to heavy ones counts too: it often
    unlocks a heavy branch. Only nodes made ready since the last size check are looked at
    (``task.pending``): a chain never fills it."""
    if task.timed < HANDOFF_WARMUP_NODES or task.time_sum < HANDOFF_MIN_SECONDS * task.timed:
        return False
    pending = task.pending
    heavy = any(_heavy(node) for node in pending)
    pending.clear()
    return heavy


def _share(task: GraphTask) -> None:
    if task.lock is None:
        task.lock = threading.Lock()
        task.cond = threading.Condition(task.lock)
    with task.lock:
        task.shared = True
    workers.POOL.request(task)


def _annotate(exc: BaseException, node) -> None:
    """Name the failing node on the exception (once: the innermost node of a reentrant chain)."""
    if isinstance(exc, Exception) and getattr(exc, "_jitgrad_node", None) is None:
        try:
            exc._jitgrad_node = node.name()
            exc.add_note(f"(jitgrad: raised while running backward node {node.name()})")
        except (AttributeError, TypeError):  # pragma: no cover - exotic exception types
            pass


def execute(root_edges, root_grads, keep_graph: bool, create_graph: bool,
            capture_edges=None, accumulate: bool = True):
    """Run backward from ``root_edges`` (``(node, input_nr)`` pairs) seeded with ``root_grads``.

    With ``capture_edges`` (for ``autograd.grad`` or ``backward(inputs=...)``) only the nodes on a
    path to them run, and the gradients arriving at those edges are returned in order.
    """
    task = GraphTask(keep_graph, create_graph)
    root = GraphRoot(root_edges, root_grads)
    if capture_edges is not None:
        task.captured = [None] * len(capture_edges)
        for idx, (node, nr) in enumerate(capture_edges):
            task.captures.setdefault(node, []).append((nr, idx))
        task.needed = _reachable_needed(root, set(task.captures), accumulate)
    _count_dependencies(task, root)
    task.ready.append((0, 0, root, []))
    caller_mode = grad_mode.is_grad_enabled()
    outermost = workers.enter()
    try:
        while not (_run_shared(task) if task.shared else _run_alone(task)):
            pass
    except BaseException as exc:
        if task.shared and task.error is None:
            with task.lock:  # stop the workers (KeyboardInterrupt while waiting, for example)
                if task.error is None:
                    task.error = exc
        raise
    finally:
        if task.published:
            workers.POOL.withdraw(task)
        if outermost:
            workers.leave()
        grad_mode._set_enabled(caller_mode)
    if task.error is not None:
        exc, task.error = task.error, None
        try:
            raise exc
        finally:
            exc = None
    return task.captured


def _run_alone(task: GraphTask) -> bool:
    """The owner runs the task with no other thread (lock-free). Returns True when the task is
    done, False after sharing it (more than one node ready, one of them heavy)."""
    ready = task.ready
    create_graph = bool(task.create_graph)
    deterministic = task.deterministic
    share = _config.NUM_INTEROP_THREADS > 1
    mode = grad_mode._state  # this thread's grad mode
    tie = task.tie
    try:
        while ready:
            if share and len(ready) > 1 and task.pending and _worth_sharing(task):
                _share(task)
                return False
            _, _, node, inputs = heapq.heappop(ready)
            # the node AND its hooks run with grad mode = create_graph, as in PyTorch (set per
            # node: a hook may have changed it)
            mode.enabled = create_graph
            timed = share and ready  # another node is ready: time this one (never in a chain)
            try:
                if deterministic:
                    inputs = _sum_inputs(inputs, create_graph)
                if timed:
                    t0 = time.perf_counter()
                    source, outputs = _run_node(task, node, inputs)
                    task.time_sum += time.perf_counter() - t0
                    task.timed += 1
                else:
                    source, outputs = _run_node(task, node, inputs)
                if outputs is not None:
                    if deterministic:
                        task.tie = tie
                        _pass_on_ordered(task, source, outputs, share)
                        tie = task.tie
                    else:
                        tie = _pass_on(task, source, outputs, ready, tie, share)
            except BaseException as exc:
                _annotate(exc, node)
                raise
    finally:
        task.tie = tie
    return True


def _pass_on(task: GraphTask, node, outputs, ready: list, tie: int, share: bool) -> int:
    """Add a node's output gradients into the input buffers of the nodes they feed; push the
    nodes whose dependencies are all satisfied (the owner alone: no lock). Returns the updated
    tie-breaker counter."""
    deps, buffers, create_graph = task.dependencies, task.buffers, task.create_graph
    needed = task.needed
    edges = node._next_edges
    for i in range(len(outputs)):
        nxt, nr = edges[i]
        if nxt is None or (needed is not None and not task.receives(nxt)):
            continue
        grad = outputs[i]
        outputs[i] = None  # moved: ``grad`` is its only holder here (Note [owned buffers])
        remaining = deps[nxt] - 1
        deps[nxt] = remaining
        # a node fed by one edge (a chain) never enters ``buffers``
        buf = buffers.get(nxt) if remaining else buffers.pop(nxt, None)
        if buf is None:
            size = len(nxt._output_meta)  # one slot per forward output
            buf = [None] * (size if size > nr else nr + 1)
            if remaining:
                buffers[nxt] = buf
        if grad is not None:
            old = buf[nr]
            if old is None:
                buf[nr] = grad
            else:
                buf[nr] = None
                buf[nr] = _sum(old, grad, create_graph)
        if not remaining:
            if share and ready:  # ready beside another: a candidate for a hand-off
                if len(ready) == 1:
                    task.pending.append(ready[0][2])
                task.pending.append(nxt)
            tie += 1
            heapq.heappush(ready, (-nxt._sequence_nr, tie, nxt, buf))
    return tie


def _pass_on_ordered(task: GraphTask, node, outputs, share: bool) -> None:
    """``_pass_on`` in deterministic mode: keep each contribution with its key (the caller
    holds ``task.lock`` when the task is shared)."""
    deps, buffers, ready = task.dependencies, task.buffers, task.ready
    seq = node._sequence_nr
    edges = node._next_edges
    for i in range(len(outputs)):
        nxt, nr = edges[i]
        if nxt is None or not task.receives(nxt):
            continue
        grad = outputs[i]
        outputs[i] = None  # moved into the slot (Note [owned buffers])
        buf = buffers.get(nxt)
        if buf is None:
            buf = buffers[nxt] = [None] * max(nxt._num_outputs, nr + 1)
        if grad is not None:
            slot = buf[nr]
            if slot is None:
                slot = buf[nr] = _Contributions()
            slot.append(((seq, i), grad))
        deps[nxt] -= 1
        if deps[nxt] == 0:
            del buffers[nxt]
            if share and ready and not task.shared:
                if len(ready) == 1:
                    task.pending.append(ready[0][2])
                task.pending.append(nxt)
            task.tie += 1
            heapq.heappush(ready, (-nxt._sequence_nr, task.tie, nxt, buf))


# --- shared mode ------------------------------------------------------------------------------
def _run_shared(task: GraphTask) -> bool:
    """The owner's loop while other threads may run the task's nodes. Returns True when the
    task is done (or failed: every other thread has left its nodes), False after taking the
    task back (one node ready, no other thread inside)."""
    lock, ready = task.lock, task.ready
    while True:
        with lock:
            while True:
                if task.error is not None:
                    _wait(task, lambda: task.running == 0)
                    return True
                if ready:
                    if task.running == 0 and len(ready) == 1:
                        task.shared = False  # alone again: workers see it under the lock
                        task.pending.clear()
                        return False
                    item = heapq.heappop(ready)
                    task.running += 1
                    break
                if task.running == 0:
                    task.shared = False
                    return True
                _wait(task, lambda: ready or task.running == 0 or task.error is not None)
        _run_one(task, item)


def _wait(task: GraphTask, done) -> None:
    """Owner sleeps on the task's condition (lock held) until ``done()``; it does not count as
    busy meanwhile (Note [engine busy count])."""
    if done():
        return
    workers.adjust_busy(-1)
    task.owner_waiting = True
    try:
        while not done():
            task.cond.wait()
    finally:
        task.owner_waiting = False
        workers.adjust_busy(1)


def help_task(task: GraphTask) -> None:
    """A worker runs ready nodes of ``task`` until none is left (or the task failed or was taken
    back by its owner)."""
    lock, ready = task.lock, task.ready
    while True:
        with lock:
            if not task.shared or task.error is not None or not ready:
                return
            item = heapq.heappop(ready)
            task.running += 1
        _run_one(task, item)


def _run_one(task: GraphTask, item) -> None:
    """Run one popped node in shared mode (owner or worker) and pass its gradients on. Any
    exception is recorded on the task, never raised here."""
    node, inputs = item[2], item[3]
    try:
        grad_mode._set_enabled(task.create_graph)
        if task.deterministic:
            inputs = _sum_inputs(inputs, task.create_graph)
        source, outputs = _run_node(task, node, inputs)
        help_wanted = _pass_on_shared(task, source, outputs or ())
    except BaseException as exc:
        _annotate(exc, node)
        with task.lock:
            if task.error is None:
                task.error = exc
            task.running -= 1
            if task.owner_waiting:
                task.cond.notify()
        return
    if help_wanted:
        workers.POOL.request(task)


def _pass_on_shared(task: GraphTask, node, outputs) -> bool:
    """``_pass_on`` under ``task.lock``; additions of gradients meeting in a buffer happen
    outside the lock (Note [threaded engine]). Ends the node's ``running`` count. Returns
    whether idle workers should be asked to help."""
    lock, create_graph = task.lock, task.create_graph
    todo = None
    if not task.deterministic:
        todo, edges = [], node._next_edges
        for i in range(len(outputs)):
            nxt, nr = edges[i]
            if nxt is not None and task.receives(nxt):
                todo.append((nxt, nr, outputs[i]))
                outputs[i] = None  # moved (Note [owned buffers])
    while True:
        adds = []
        with lock:
            if task.error is None:
                if todo is None:
                    _pass_on_ordered(task, node, outputs, False)
                else:
                    deps, buffers = task.dependencies, task.buffers
                    for k in range(len(todo)):
                        nxt, nr, grad = todo[k]
                        todo[k] = None  # moved: a node made ready here may run at once elsewhere
                        buf = buffers.get(nxt)
                        if buf is None:
                            buf = buffers[nxt] = [None] * max(nxt._num_outputs, nr + 1)
                        if grad is not None:
                            if buf[nr] is None:
                                buf[nr] = grad
                            else:  # take the partial sum out; add it up after the lock
                                adds.append((nxt, nr, buf[nr], grad))
                                buf[nr] = None
                                continue
                        deps[nxt] -= 1
                        if deps[nxt] == 0:
                            del buffers[nxt]
                            task.tie += 1
                            heapq.heappush(task.ready, (-nxt._sequence_nr, task.tie, nxt, buf))
                    grad = None
            if not adds:
                task.running -= 1
                if task.owner_waiting and (task.ready or task.running == 0
                                           or task.error is not None):
                    task.cond.notify()
                return task.error is None and len(task.ready) > 1
        # add up outside the lock; each gradient is moved out of its tuple first, so that ``a``
        # and ``g`` are its only holders here (Note [owned buffers])
        todo = []
        for k in range(len(adds)):
            nxt, nr, a, g = adds[k]
            adds[k] = None
            todo.append((nxt, nr, _sum(a, g, create_graph)))
        a = g = None
