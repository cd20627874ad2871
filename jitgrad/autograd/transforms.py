"""The transform dispatcher: what every registry op call passes through while a transform is
active (Note [transform hooks] in ops/core/dispatch.py).

ops calls ``transform_hook(run, op, args, attrs)`` around each registry op while the hook is
registered (``ops/core/upper.py``); this module is that hook (``_interpose``), and it composes the
transforms that need to see ops, each registered here by the layer that owns it:

- vmap's batching (``func/_batching.py``: ``set_batch_runner``);
- checkpoint's input collection and substitution (``utils/checkpoint.py``: ``push_collector``,
  ``push_substitutes``, per thread);
- jitgrad.compile's tracer (``compile/trace.py``: ``set_tracer``, per thread; Note [compile
  tracing]);
- forward AD's tangent propagation (``autograd/forward_ad.py``: ``set_forward_mode``);
- anomaly mode's record of where each node was made (``graph/anomaly.py``).

The hook is registered only while one of them is active (``refresh``), so plain eager ops pay
one ``None`` check.
"""
from __future__ import annotations

import threading

from ..graph import anomaly


class _Local(threading.local):
    """Per-thread transforms: engine workers run ops for other computations meanwhile.

    ``collectors`` / ``substitutes``: utils/checkpoint.py's tables (Note [checkpoint inputs]);
    ``tracer``: jitgrad.compile's recorder of this thread's ops (Note [compile tracing]).
    """

    tracer = None

    def __init__(self):
        self.collectors: list = []
        self.substitutes: list = []


_local = _Local()
_n_local_users = [0]  # threads with collectors, substitutes or a tracer (the hook stays on)
batch_runner = None  # func/_batching.py: run_batched(op, args, attrs) or NotImplemented
batching = None  # the func/_batching module once imported (forward AD's batched duals)
_anomaly_record = None  # graph/anomaly.py: record(outputs) notes where nodes were made
_levels: list = []  # forward AD's open dual levels (its own list, registered)
_propagate = None  # forward AD: propagate(op, args, attrs, out)
_inplace_tangents = None  # forward AD's interface for in-place writes (ops/core/upper.py)
_dispatch = None


def ops_dispatch():
    """``ops.dispatch``, imported at first use (ops imports the autograd package)."""
    global _dispatch
    if _dispatch is None:
        from ..ops.core import dispatch

        _dispatch = dispatch
    return _dispatch


def refresh() -> None:
    """Register the dispatch hook while any transform needs it, remove it otherwise (Note
    [upper registrations] in ops/core/upper.py)."""
    active = (batch_runner is not None or _levels or _anomaly_record is not None
              or _n_local_users[0])
    ops_dispatch()  # _interpose reads _dispatch
    from ..ops.core import upper

    upper.set_transform_hook(_interpose if active else None, _inplace_tangents)


def _interpose(run, op, args, attrs):
    local = _local
    if local.substitutes:
        table = local.substitutes[-1]
        args = tuple(table.get(id(a), a) for a in args)
    runner = batch_runner
    if runner is not None:
        out = runner(op, args, attrs)
        if out is not NotImplemented:
            return out  # the ops on the inner tensors did the rest
    if local.collectors:
        Tensor = _dispatch.Tensor
        for a in args:
            if isinstance(a, Tensor) and a._requires_grad:
                for c in local.collectors:
                    c[id(a)] = a
    tracer = local.tracer
    out = run(op, *args, **attrs) if tracer is None else tracer(run, op, args, attrs)
    if _levels:
        _propagate(op, args, attrs, out)
    if _anomaly_record is not None:
        _anomaly_record(out)
    return out


def set_forward_mode(levels: list, propagate, inplace_tangents) -> None:
    """Forward AD registers its open levels (the list it keeps), its propagation and its
    in-place interface, once at import; it calls ``refresh`` when a level opens or closes."""
    global _levels, _propagate, _inplace_tangents
    _levels, _propagate, _inplace_tangents = levels, propagate, inplace_tangents


def set_batch_runner(runner, module=None) -> None:
    """vmap: ``runner(op, args, attrs)`` runs every op (None: stop); ``module``: the batching
    module, for forward AD's batched duals."""
    global batch_runner, batching
    batch_runner = runner
    if module is not None:
        batching = module
    refresh()


def _set_anomaly_record(fn) -> None:
    global _anomaly_record
    _anomaly_record = fn
    refresh()


def _push_local(stack: list, table: dict) -> None:
    stack.append(table)
    _n_local_users[0] += 1
    refresh()


def _pop_local(stack: list) -> None:
    stack.pop()
    _n_local_users[0] -= 1
    refresh()


def set_tracer(tracer) -> None:
    """Route this thread's registry ops through ``tracer(run, op, args, attrs)`` (None: stop);
    jitgrad.compile's trace (Note [compile tracing] in jitgrad/compile/trace.py)."""
    if (_local.tracer is None) == (tracer is None):
        _local.tracer = tracer
        return
    _local.tracer = tracer
    _n_local_users[0] += 1 if tracer is not None else -1
    refresh()


def tracing() -> bool:
    """Whether jitgrad.compile traces this thread: its ``backward()`` then records the
    backward's ops (Note [backward under compile] in jitgrad/compile/mutations.py)."""
    return _local.tracer is not None


def push_collector(table: dict) -> None:
    """Note [checkpoint inputs]: note in ``table`` every tensor requiring grad an op reads."""
    _push_local(_local.collectors, table)


def pop_collector() -> None:
    _pop_local(_local.collectors)


def push_substitutes(table: dict) -> None:
    """Note [checkpoint inputs]: ops read ``table[id(t)]`` instead of ``t``."""
    _push_local(_local.substitutes, table)


def pop_substitutes() -> None:
    _pop_local(_local.substitutes)


anomaly.set_forward_record_installer(_set_anomaly_record)  # anomaly mode's forward record
