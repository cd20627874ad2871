"""What the layers above ops register into it (Note [upper registrations]).

Note [upper registrations]: ops builds Tensors and lets the transforms of the layers above it
(vmap, forward AD, anomaly mode, checkpoints) see every op, without importing those layers
(imports go one way: device <- ops <- tensor/API, tests/test_layers.py). The layers above hand
ops what it needs once, through the functions here, and nothing else writes these names:

- ``Tensor``: the tensor class, registered by ``jitgrad/tensor.py`` (``register_tensor_type``)
  when the class is complete. ops makes every result with ``Tensor._make``; ``make_tensor``
  is that method bound once (a hot path's call then skips the classmethod's binding, ~40 ns),
  bound again by ``rebind_tensor_maker`` when jitgrad.compile's tracer wraps ``_make``.
- ``transform_hook`` (Note [transform hooks]) and ``inplace_tangents``: installed together by
  ``autograd/forward_ad.py`` (``set_transform_hook``) while a transform is active, None
  otherwise. ``inplace_tangents`` is forward AD's interface for in-place writes
  (``has_levels()``, ``inplace_update(target, result)``, ``copy_tangents(src, dst)``), which
  ``ops/inplace.py`` uses instead of importing ``autograd/forward_ad.py``.

- ``write_guard``: called with a tensor before any in-place or ``out=`` write into it
  (``ops/writes.py``, ``check_writable``); set by jitgrad.compile while a trace runs (Note
  [compile tracing] in jitgrad/compile/trace.py), None otherwise.

Readers read them as module attributes at call time (``upper.inplace_tangents``), or, on a hot
path, as globals of their own module, which they ask this module to keep current with ``bind``
(``Tensor = None`` then ``upper.bind(globals(), "Tensor")``): a plain global read, as cheap as
before these registrations existed. The setters here are the only writers of the values and of
every bound copy; ``ops.dispatch`` binds ``Tensor`` and ``transform_hook``, so call sites read
``dispatch.Tensor`` and ``dispatch.transform_hook`` as well.
"""
from __future__ import annotations

Tensor = make_tensor = None
transform_hook = None
inplace_tangents = None
write_guard = None

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


def rebind_tensor_maker() -> None:
    """Bind ``make_tensor`` to the tensor class's ``_make`` again, after it was replaced
    (jitgrad.compile's tracer wraps it while a trace runs)."""
    _set("make_tensor", Tensor._make)


def set_transform_hook(hook, tangents=None) -> None:
    """Route every registry op through ``hook(run, op, args, attrs)`` (Note [transform hooks]),
    or stop doing so (``hook=None``); ``tangents``: forward AD's in-place interface
    (``inplace_tangents`` above), None when no dual level can be open."""
    _set("transform_hook", hook)
    _set("inplace_tangents", tangents if hook is not None else None)


def set_write_guard(guard) -> None:
    """Call ``guard(tensor)`` before every in-place or ``out=`` write (None: stop)."""
    _set("write_guard", guard)
