"""What the layers above ops register into it (Note [upper registrations]).

Note [upper registrations]: ops builds Tensors and lets the transforms of the layers above it
(vmap, forward AD, anomaly mode, checkpoints) see every op, without importing those layers
(imports go one way: device <- ops <- tensor/API, tests/test_layers.py). The layers above hand
ops what it needs once, through the functions here, and nothing else writes these names:

- ``Tensor``: the tensor class, registered by ``jitgrad/tensor.py`` (``register_tensor_type``)
  when the class is complete. ops makes every result with ``Tensor._make``; ``make_tensor``
  is that method bound once (a hot path's call then skips the classmethod's binding, ~40 ns).
- ``transform_hook`` (Note [transform hooks]) and ``inplace_tangents``: installed together by
  ``autograd/transforms.py`` (``set_transform_hook``) while a transform is active, None
  otherwise. ``inplace_tangents`` is forward AD's interface for in-place writes
  (``has_levels()``, ``inplace_update(target, result)``, ``copy_tangents(src, dst)``), which
  ``ops/inplace.py`` uses instead of importing ``autograd/forward_ad.py``.

- ``view_refresher``: ``ops/views.py``'s ``refresh_view`` (a stale view's new ``grad_fn``,
  Note [view tracking] in ``ops/core/recording.py``), registered when that family is imported
  (``register_view_refresher``): the core reaches the family through it, never by an import.
- ``write_guard``: called with a tensor before any in-place or ``out=`` write into it
  (``ops/core/writes.py``, ``check_writable``); set by jitgrad.compile while a trace runs (Note
  [compile tracing] in jitgrad/compile/trace.py), None otherwise.
- ``creation_hook`` and ``host_read_hook``: jitgrad.compile's view of eager while it traces
  (``set_tracing_hooks``): ``Tensor._make`` reports every tensor made, ``Tensor._host`` every
  read of a tensor's values for Python, ``creation.generator`` every random draw;
  ``constant_maker`` marks the constructors whose tensors are constants of a traced program;
  ``host_read`` and ``guard_writes`` are how code outside ``_host`` and ``ops/core/writes.py``
  reports a read or asks before a write.

Readers read them as module attributes at call time (``upper.inplace_tangents``), or, on a hot
path, as globals of their own module, which they ask this module to keep current with ``bind``
(``Tensor = None`` then ``upper.bind(globals(), "Tensor")``): a plain global read, as cheap as
before these registrations existed. The setters here are the only writers of the values and of
every bound copy; ``ops.dispatch`` binds ``Tensor`` and ``transform_hook``, so call sites read
``dispatch.Tensor`` and ``dispatch.transform_hook`` as well.
"""
from __future__ import annotations

import functools
import threading

Tensor = make_tensor = None
transform_hook = None
inplace_tangents = None
write_guard = None
view_refresher = None

_bound: dict[str, list] = {"Tensor": [], "make_tensor": [], "transform_hook": [],
                           "inplace_tangents": [], "write_guard": []}


def bind(namespace: dict, *names: str) -> None:
    """Keep ``namespace[name]`` (a module's ``globals()``) equal to each registration ``name``,
    now and after every change, so a hot path reads it as a plain global."""
    for name in names:
        _bound[name].append(namespace)
        namespace[name] = globals()[name]


def _set(name: str, value) -> None:
    globals()[name] = value
    for namespace in _bound[name]:
        namespace[name] = value


def register_tensor_type(cls) -> None:
    """Make ``cls`` the class ops builds its results with (``jitgrad/tensor.py``, once)."""
    _set("Tensor", cls)
    _set("make_tensor", cls._make)


def set_transform_hook(hook, tangents=None) -> None:
    """Route every registry op through ``hook(run, op, args, attrs)`` (Note [transform hooks]),
    or stop doing so (``hook=None``); ``tangents``: forward AD's in-place interface
    (``inplace_tangents`` above), None when no dual level can be open."""
    _set("transform_hook", hook)
    _set("inplace_tangents", tangents if hook is not None else None)


def register_view_refresher(fn) -> None:
    """Make ``fn(view)`` what regenerates a stale view's ``grad_fn`` (``ops/views.py``, once)."""
    global view_refresher
    view_refresher = fn


def set_write_guard(guard) -> None:
    """Call ``guard(tensor)`` before every in-place or ``out=`` write (None: stop)."""
    _set("write_guard", guard)


# --- the compiler's view of eager (Note [compile tracing] in jitgrad/compile/trace.py) --------
# ``creation_hook(tensor)``: called by ``Tensor._make`` for every tensor made; ``host_read_hook
# (tensor, what)``: called by ``Tensor._host`` (the one accessor of a tensor's values for
# Python) before any read. Both None unless jitgrad.compile is tracing.
creation_hook = None
host_read_hook = None
random_hook = None  # ``random_hook()``: called before each draw from jitgrad's generators
_bound["creation_hook"] = []
_bound["host_read_hook"] = []
_constants = threading.local()  # .depth: constant constructors running on this thread


def tracing() -> bool:
    """Whether jitgrad.compile's hooks are registered: a trace may run on some thread. Ops
    whose eager path is cheaper than their row (``rand``, ``Tensor.all``, value checks) take
    the row only then; both paths give the same values."""
    return random_hook is not None


def set_tracing_hooks(creation, host_read, random_draw) -> None:
    """Register jitgrad.compile's hooks (all None: unregister)."""
    global random_hook
    _set("creation_hook", creation)
    _set("host_read_hook", host_read)
    random_hook = random_draw


def constant_maker(fn):
    """Mark ``fn`` as a constant constructor: its result depends only on its arguments'
    Python values and shapes, never on tensor values (``zeros``, ``arange``, ``tensor`` of
    numbers). While a trace runs, the tensors it makes are constants of the traced program
    (``making_constant``); a tensor value it reads goes through ``Tensor._host`` and is refused
    there. Outside a trace the wrapper costs one check."""

    @functools.wraps(fn)
    def maker(*args, **kwargs):
        if creation_hook is None:
            return fn(*args, **kwargs)
        _constants.depth = getattr(_constants, "depth", 0) + 1
        try:
            return fn(*args, **kwargs)
        finally:
            _constants.depth -= 1

    maker.constant_maker = True
    return maker


def making_constant() -> bool:
    """Whether a constant constructor (``constant_maker``) is running on this thread."""
    return getattr(_constants, "depth", 0) > 0


def host_read(t, what: str) -> None:
    """Report that ops' glue code reads ``t``'s values to decide something in Python (a mask,
    an index, which derivative formula): ``Tensor._host``'s hook, for code that reads the
    values on the device (a CUDA count) or as ``_data``."""
    if host_read_hook is not None:
        host_read_hook(t, what)


def guard_writes(*tensors) -> None:
    """Ask the write guard (if one is set) about each tensor a layer above ops is about to
    write in place outside the ops (``nn.init``, gradient clipping, ``load_state_dict``,
    buffers, optimizer steps), as ``ops/core/writes.py`` does for the ops' own writes: while
    jitgrad.compile traces, a write the trace did not record would not happen on a later call,
    so the guard refuses it. Outside a trace this costs one check."""
    if write_guard is not None:
        for t in tensors:
            write_guard(t)
