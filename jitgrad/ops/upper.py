"""What the layers above ops register into it (Note [upper registrations]).

Note [upper registrations]: ops builds Tensors and lets the transforms of the layers above it
(vmap, forward AD, anomaly mode, checkpoints) see every op, without importing those layers
(imports go one way: device <- ops <- tensor/API, tests/test_layers.py). The layers above hand
ops what it needs once, through the functions here, and nothing else writes these names:

- ``Tensor``: the tensor class, registered by ``jitgrad/tensor.py`` (``register_tensor_type``)
  when the class is complete. ops makes every result with ``Tensor._make``.
- ``transform_hook`` (Note [transform hooks]) and ``inplace_tangents``: installed together by
  ``autograd/forward_ad.py`` (``set_transform_hook``) while a transform is active, None
  otherwise. ``inplace_tangents`` is forward AD's interface for in-place writes
  (``has_levels()``, ``inplace_update(target, result)``, ``copy_tangents(src, dst)``), which
  ``ops/inplace.py`` uses instead of importing ``autograd/forward_ad.py``.

Readers read them as module attributes at call time (``upper.Tensor``, ``upper.transform_hook``):
one module attribute read, as cheap as the global read ops paid before. ``ops.dispatch``
re-exports ``Tensor`` and ``transform_hook`` for the call sites written before this module
(``dispatch.Tensor``, ``dispatch.transform_hook``); the setters here keep that copy current,
and are the only code that writes either copy.
"""
from __future__ import annotations

import sys

Tensor = None
transform_hook = None
inplace_tangents = None

_REEXPORTED_BY = "jitgrad.ops.dispatch"  # re-exports Tensor and transform_hook (see above)


def _reexport(name: str, value) -> None:
    module = sys.modules.get(_REEXPORTED_BY)  # None before its import, which then reads the
    if module is not None:                    # current values itself
        setattr(module, name, value)


def register_tensor_type(cls) -> None:
    """Make ``cls`` the class ops builds its results with (``jitgrad/tensor.py``, once)."""
    global Tensor
    Tensor = cls
    _reexport("Tensor", cls)


def set_transform_hook(hook, tangents=None) -> None:
    """Route every registry op through ``hook(run, op, args, attrs)`` (Note [transform hooks]),
    or stop doing so (``hook=None``); ``tangents``: forward AD's in-place interface
    (``inplace_tangents`` above), None when no dual level can be open."""
    global transform_hook, inplace_tangents
    transform_hook = hook
    inplace_tangents = tangents if hook is not None else None
    _reexport("transform_hook", hook)
