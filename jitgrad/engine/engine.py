"""Reverse-mode engine: runs a backward graph, modelled on PyTorch's engine.

One ``execute`` call is one ``GraphTask`` (``graph_task.py``):

1. dependency counts by an iterative walk from the root (no recursion: graphs can be 100k deep);
   with ``inputs`` given, only nodes on a path to an input are counted ("needed");
2. a ``ReadyQueue`` ordered by ``sequence_nr`` (later-created first), so the order matches PyTorch;
3. ``run_nodes``, the one loop every thread runs: pop a ready node; tensor pre-hooks,
   ``retain_grad``, captures for ``autograd.grad``, node pre-hooks, ``apply``, post-hooks,
   ``validate_outputs`` (Note [broadcast reduction] in ``input_buffer.py``), release of saved
   tensors (``_run_node``); then ``_deliver``, the one path for it alone, shared (through
   ``_pass_on``, under the lock) and deterministic: each gradient is added into the input
   buffer of the node it feeds (``InputBuffer``), whose dependency count goes down, and which
   goes into the ready queue when the count reaches zero. Gradients meeting in a buffer are added in place into one the engine holds
   alone, and AccumulateGrad keeps such a gradient as ``.grad`` without a copy (Note [owned
   buffers] in ``graph/node.py``); the engine moves gradients out of its lists as it passes
   them on, so that reference counts show when nothing else holds them.

Note [threaded engine]: the calling thread (the task's *owner*) always runs nodes. While at most
one node is ready it runs them alone, touching the task without locks (no other thread can see
it). When more than one node is ready, the nodes run so far in this wide part of the graph took
long enough on average to be worth a hand-off, and a ready node's gradient is of a size where
that pays (Note [hand-off rule]), the owner *shares* the task (``task.threads``, a
``workers.TaskThreads``): from then on the ready queue, dependency counts and input buffers are
changed only under ``task.threads.lock``, and idle workers (``workers.py``) run the same loop,
popping ready nodes too. Kernels release the GIL, so nodes on different threads overlap; the
bookkeeping between them is short. When the owner finds one node ready and no other thread
inside the task, it takes the task back (lock-free again). Gradients meeting in an input buffer
are added outside the lock (the slot is emptied, the sum computed, then stored; the dependency
count drops only when a contribution is stored, so a node never becomes ready with a sum in
flight). In deterministic mode (``use_deterministic_algorithms``) the buffers are
``OrderedInputBuffer``s: contributions are kept with their producer's ``(sequence_nr, edge)``
and summed in that order when the node is popped, so results do not depend on which thread
finished first (nor on the number of threads).

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

import math
import threading
import time
from contextlib import contextmanager
from heapq import heappop, heappush

from .. import _config
from ..graph import anomaly, grad_mode
from ..graph.node import GraphRoot
from . import regions, workers
from .graph_task import GraphTask, count_dependencies, reachable_needed
from .input_buffer import InputBuffer, OrderedInputBuffer, sum_gradients, validate_outputs

# Note [hand-off rule]: two threads run Python (the bookkeeping and dispatch of a node) one at
# a time under the GIL; only kernels overlap. Sharing a graph therefore pays off only when its
# nodes are long, and loses when they are short: a thread that drops the GIL for a short kernel
# takes it back before the waiting one has woken up, which then waits for CPython's switch
# interval. Element counts alone do not tell how long a node takes (that depends on which kernels
# it calls). So the owner times the nodes it runs while others are ready (never in a chain) and
# shares only when their mean is >= HANDOFF_MIN_SECONDS after HANDOFF_WARMUP_NODES of them.
# Gradients of HANDOFF_MAX_ELEMENTS or more are not handed off: their kernels run in parallel on
# every core, which balances uneven branches better than one serial branch per thread. The
# measurements behind the thresholds: docs/engine.md, 'The hand-off rule' and 'Measurements
# behind the code'. Tests set the thresholds to 0 to exercise the threaded path on tiny graphs.
HANDOFF_MIN_SECONDS = 50e-6
HANDOFF_WARMUP_NODES = 8
# After a check that found the nodes too short, the next HANDOFF_QUIET_NODES nodes run beside
# others are neither timed nor followed by a check (in a wide graph of short nodes, W6, the
# timing and the check were ~0.5 us of every node): the mean is sampled, and a graph whose
# nodes turn long is shared at most that many nodes later.
HANDOFF_QUIET_NODES = 16
HANDOFF_MIN_ELEMENTS = 1 << 10
HANDOFF_MAX_ELEMENTS = 1 << 18


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
            fused = regions.run(task, node, inputs[0])
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
    outputs = validate_outputs(node, outputs)  # post hooks see gradients shaped like the inputs
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            res = hook(tuple(outputs), tuple(inputs))
            if res is not None:
                outputs = _check_hook_values(hook, tuple(outputs), res)
    return node, outputs


def _annotate(exc: BaseException, node) -> None:
    """Name the failing node on the exception (once: the innermost node of a reentrant chain)."""
    if isinstance(exc, Exception) and getattr(exc, "_jitgrad_node", None) is None:
        try:
            exc._jitgrad_node = node.name()
            exc.add_note(f"(jitgrad: raised while running backward node {node.name()})")
        except (AttributeError, TypeError):  # pragma: no cover - exotic exception types
            pass


# --- running a task --------------------------------------------------------------------------
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
        task.needed = reachable_needed(root, set(task.captures), accumulate)
    count_dependencies(task, root)
    task.ready.push(root, [])
    threads = task.threads
    caller_mode = grad_mode.is_grad_enabled()
    outermost = workers.enter()
    try:
        run_nodes(task, owner=True)
    except BaseException as exc:
        if threads.shared and task.error is None:
            with threads.lock:  # stop the workers (KeyboardInterrupt while waiting, for example)
                if task.error is None:
                    task.error = exc
        raise
    finally:
        if threads.published:
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


# what ``_next_shared`` returns besides a node: the owner took the task back (it runs alone)
_TAKEN_BACK = object()

# threads whose backward calls must run every node themselves (``serial``)
_serial = threading.local()


@contextmanager
def serial():
    """Backward calls made by this thread inside the block run every node on this thread
    (no worker joins in): jitgrad.compile records the ops a backward runs, per thread."""
    depth = getattr(_serial, "depth", 0)
    _serial.depth = depth + 1
    try:
        yield
    finally:
        _serial.depth = depth


def run_nodes(task: GraphTask, owner: bool) -> None:
    """Run ready nodes of ``task`` until none is left: the one loop of the owner (``owner``,
    the thread inside ``execute``) and of the workers that help it (Note [threaded engine]).

    While the task is not shared (the owner alone) nodes are popped and passed on without a
    lock, the nodes run beside other ready ones are timed, and the owner shares the task when
    the hand-off rule says it pays. Once shared, nodes are popped and passed on under the
    task's lock (``_next_shared``), and a node's exception is recorded on the task instead of
    raised. The owner returns when the task is done or failed (no node of it runs anywhere); a
    worker, when no node is ready, the task failed, or its owner took it back."""
    ready, threads = task.ready, task.threads
    create_graph = bool(task.create_graph)
    deterministic = task.deterministic
    # the owner may share the task (not inside ``serial()``)
    share = owner and _config.NUM_INTEROP_THREADS > 1 and not getattr(_serial, "depth", 0)
    mode = grad_mode._state  # this thread's grad mode
    # Note [plain step]: a node that nothing observes (no hooks, no retain_grad), in a task with
    # no captures, no graph of the backward recorded and no deterministic ordering, needs of
    # _run_node only apply and validate_outputs; a node class that can do both at once, and
    # cheaper (an elementwise row on small arrays: ops/core/registry.py), offers ``_apply_plain``,
    # and one whose running is its ``apply`` alone (``_plain_apply``: no hooks but those that
    # set ``_observed``, not fusible) has the two called directly.
    # The owner runs it while alone and not timing (a chain); nodes run shared or timed, in
    # the wide parts of a graph, take _run_node. Anomaly detection checks every node's
    # outputs, so it is looked up per node.
    plain = not (create_graph or deterministic or task.needed is not None)
    keep_graph = task.keep_graph
    held = None  # alone: the node to run next, made ready while the queue was empty
    while True:
        shared = threads.shared
        if shared:
            with threads.lock:
                item = _next_shared(task, owner)
            if item is None:
                return
            if item is _TAKEN_BACK:
                continue
            node, inputs = item
            timed = False
        else:  # the owner alone
            if held is not None:  # what ``ready.pop()`` would return (the queue is empty)
                node, inputs = held
                held = None
            else:
                if not ready:
                    return
                if (share and len(ready) > 1 and threads.pending and not threads.quiet
                        and _worth_sharing(threads)):
                    threads.share()
                    workers.POOL.request(task)
                    continue
                _, _, node, inputs = heappop(ready)  # ready.pop(), inline (see _deliver)
            # another node is ready: time this one (never in a chain), unless the last check
            # found the nodes short (Note [hand-off rule])
            timed = share and ready
            if timed and threads.quiet:
                threads.quiet -= 1
                timed = False
        try:
            if deterministic:
                inputs = OrderedInputBuffer.variables(inputs, create_graph)
            if (not timed and plain and not shared and not node._observed
                    and not anomaly._state.enabled):
                # the plain step, by the owner alone: most nodes of a chain take it. It reads
                # no grad mode and records nothing, so the mode is set only for what follows
                if node._apply_plain is not None:
                    outputs = node._apply_plain(inputs)
                elif node._plain_apply:
                    mode.enabled = False  # (no graph of the backward is recorded)
                    outputs = validate_outputs(node, node.apply(inputs))
                else:
                    outputs = None
                if outputs is not None:
                    if not keep_graph:
                        node._release()
                    held = _deliver(task, node._next_edges, outputs, node._sequence_nr, False,
                                    share and not threads.quiet)
                    continue
            # the node AND its hooks run with grad mode = create_graph, as in PyTorch (set per
            # node: a hook may have changed it)
            mode.enabled = create_graph
            if timed:
                t0 = time.perf_counter()
                source, outputs = _run_node(task, node, inputs)
                threads.time_sum += time.perf_counter() - t0
                threads.timed += 1
            else:
                source, outputs = _run_node(task, node, inputs)
            if not shared:  # alone: pass on at once, no lock
                if outputs is not None:
                    # (no hand-off candidates are collected while the rule is quiet)
                    held = _deliver(task, source._next_edges, outputs, source._sequence_nr,
                                    False, share and not threads.quiet)
                continue
            help_wanted = _pass_on(task, source, outputs)
        except BaseException as exc:
            _annotate(exc, node)
            if not shared:
                raise
            with threads.lock:
                if task.error is None:
                    task.error = exc
                threads.running -= 1
                if threads.owner_waiting:
                    threads.cond.notify()
            continue
        if help_wanted:
            workers.POOL.request(task)


workers.set_task_runner(run_nodes)


def _next_shared(task: GraphTask, owner: bool):
    """Under the task's lock, in shared mode: the next ``(node, buffer)`` to run, counted in
    ``threads.running``; None when this thread should stop (the task is done or failed, and for
    a worker also when nothing is ready or the owner took the task back); ``_TAKEN_BACK`` when
    the owner takes the task back (one node ready, no other thread inside)."""
    threads, ready = task.threads, task.ready
    while True:
        if task.error is not None:
            if owner:  # wait for the nodes other threads are running
                threads.wait(lambda: threads.running == 0)
            return None
        if not threads.shared:  # a worker: the owner took the task back
            return None
        if ready:
            if owner and threads.running == 0 and len(ready) == 1:
                threads.shared = False  # alone again: workers see it under the lock
                threads.pending.clear()
                return _TAKEN_BACK
            threads.running += 1
            return ready.pop()
        if not owner:
            return None
        if threads.running == 0:
            threads.shared = False
            return None
        threads.wait(lambda: ready or threads.running == 0 or task.error is not None)


def _pass_on(task: GraphTask, source, outputs) -> bool:
    """Shared mode: pass a node's output gradients on from ``source`` (the node, or the fused
    region it ran) under the task's lock (``_deliver``); gradients meeting one already waiting
    in a slot are added up outside the lock and delivered again (Note [threaded engine]). Ends
    the node's ``running`` count. Returns whether idle workers should be asked to help. (Alone,
    the owner calls ``_deliver`` itself: no lock, no deferred sums.)"""
    threads, create_graph = task.threads, task.create_graph
    edges, grads, seq = source._next_edges, outputs or (), source._sequence_nr
    while True:
        with threads.lock:
            sums = None
            if task.error is None:
                sums = _deliver(task, edges, grads, seq, True, False)
            if not sums:
                threads.running -= 1
                if threads.owner_waiting and (task.ready or threads.running == 0
                                              or task.error is not None):
                    threads.cond.notify()
                return task.error is None and len(task.ready) > 1
        # add up outside the lock; each gradient is moved out of its tuple first, so that ``a``
        # and ``g`` are its only holders here (Note [owned buffers])
        edges, grads = [], []
        for k in range(len(sums)):
            nxt, nr, a, g = sums[k]
            sums[k] = None
            edges.append((nxt, nr))
            grads.append(sum_gradients(a, g, create_graph))
        a = g = None


def _deliver(task: GraphTask, edges, grads: list, seq, shared: bool, track: bool):
    """The one path of a gradient into the next node: move ``grads[i]`` into the input buffer of
    the node ``edges[i]`` leads to, count that node's dependency down, and push it into the
    ready queue when none is left. A node fed by one edge (a chain) never enters ``not_ready``.
    ``shared``: the caller holds the task's lock, and (not in deterministic mode) a gradient
    that meets another already in its slot is not added here; the slot is emptied and both are returned as ``(node, input_nr, waiting,
    new)`` for the caller to add up outside the lock (the count drops when the sum is stored).
    ``track``: nodes made ready while another is ready are hand-off candidates
    (``threads.pending``). ``seq``: the producer's ``sequence_nr``, for deterministic mode.

    Returns the deferred sums when ``shared``. Alone, it returns the one node made ready, with
    its buffer, when the queue was empty and no other node became ready here: it would be the
    next popped, so the owner runs it without queueing it (a chain never touches the queue);
    a second node made ready pushes it first, in the order they became ready."""
    deps, not_ready, needed, ready = task.dependencies, task.not_ready, task.needed, task.ready
    ordered = task.deterministic
    create_graph = task.create_graph
    sums = held = None
    for i in range(len(grads)):
        nxt, nr = edges[i]
        if nxt is None or (needed is not None and not task.receives(nxt)):
            continue
        buffer = not_ready.get(nxt)
        if buffer is None:
            size = len(nxt._output_meta)  # a new buffer: one slot per forward output
            buffer = [None] * (size if size > nr else nr + 1)
            fresh = True
            if ordered:
                OrderedInputBuffer.add(buffer, nr, grads, i, seq, create_graph)
            else:  # nothing to add to: ``add`` would only store it
                buffer[nr] = grads[i]
                grads[i] = None  # moved: ``buffer`` holds it alone (Note [owned buffers])
        else:
            fresh = False
            if ordered:
                OrderedInputBuffer.add(buffer, nr, grads, i, seq, create_graph)
            elif shared and grads[i] is not None and buffer[nr] is not None:
                if sums is None:
                    sums = []
                sums.append((nxt, nr, InputBuffer.take(buffer, nr), grads[i]))
                grads[i] = None  # moved (Note [owned buffers])
                continue
            else:
                InputBuffer.add(buffer, nr, grads, i, seq, create_graph)
        remaining = deps[nxt] - 1
        deps[nxt] = remaining
        if remaining:
            if fresh:
                not_ready[nxt] = buffer
        else:
            if not fresh:
                del not_ready[nxt]
            if not (shared or ready or held):
                held = nxt, buffer
                continue
            if held is not None:
                ready.push(*held)
                held = None
            if track and ready:  # ready beside another: a candidate for a hand-off
                pending = task.threads.pending
                if len(ready) == 1:
                    pending.append(ready.peek())
                pending.append(nxt)
            # ready.push(nxt, buffer), inline: a call each to push and pop showed in the
            # engine's own time per node of a wide graph (docs/engine.md, "Pieces")
            ready.pushed += 1
            heappush(ready, (-nxt._sequence_nr, ready.pushed, nxt, buffer))
    return sums if shared else held


# --- the hand-off rule -------------------------------------------------------------------------
def _heavy(node) -> bool:
    """Whether the gradient ``node`` receives is of a size worth another thread."""
    meta = node._output_meta
    if meta:
        m = meta[0]
        return m is not None and HANDOFF_MIN_ELEMENTS <= math.prod(m[0]) < HANDOFF_MAX_ELEMENTS
    return False


def _worth_sharing(threads: workers.TaskThreads) -> bool:
    """Called by the owner, alone, when more than one node is ready (Note [hand-off rule]):
    share the task if the nodes timed so far took long enough on average and one of the ready
    nodes is of a size worth a hand-off. A light node next to heavy ones counts too: it often
    unlocks a heavy branch. Only nodes made ready since the last check after the warm-up
    are looked at (``threads.pending``, emptied by each, so a long wide graph of short nodes
    does not grow it by every node it runs): a chain never fills it."""
    if threads.timed < HANDOFF_WARMUP_NODES:
        return False
    pending = threads.pending
    if threads.time_sum < HANDOFF_MIN_SECONDS * threads.timed:
        pending.clear()
        threads.quiet = HANDOFF_QUIET_NODES
        return False
    heavy = any(_heavy(node) for node in pending)
    pending.clear()
    return heavy
