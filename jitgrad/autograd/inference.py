"""``inference_mode``: PyTorch's faster no-grad mode, as a context manager and a decorator.

Inside it nothing is recorded (grad mode is off) and every tensor made is an inference tensor
(``Tensor.is_inference()``). jitgrad has no separate inference dispatch to speed up, so the
mode is ``no_grad`` plus that marking (PyTorch also refuses to save inference tensors for a
backward recorded outside the mode; jitgrad lets them be used like any tensor); the marks are kept in a weak table filled by a tensor
creation hook (``ops/core/upper.py``), installed only while the mode is on, so tensors made
outside it cost nothing.
"""
from __future__ import annotations

import functools
import threading
import weakref

from ..graph.grad_mode import is_grad_enabled, set_grad_enabled
from ..ops.core import methods, upper

#: id -> weak reference of each tensor made inside inference mode (by id: Tensor ``==`` is
#: elementwise, so no WeakSet); an entry goes when its tensor does
_INFERENCE: dict = {}
class _State(threading.local):
    """Per thread; a class default, as a missed ``getattr`` default costs a caught error."""
    depth = 0  # inference-mode contexts entered on this thread


_state = _State()
_installed = [None]  # the creation hook this module installed and the one it replaced


def is_inference_mode_enabled() -> bool:
    """Whether ``inference_mode`` is on in this thread."""
    return _state.depth > 0


def _mark(previous):
    def hook(t):
        if _state.depth > 0:
            key = id(t)
            _INFERENCE[key] = weakref.ref(t, lambda _ref, key=key: _INFERENCE.pop(key, None))
        if previous is not None:
            previous(t)

    return hook


class inference_mode:  # noqa: N801 - PyTorch's name
    """Context manager and decorator: grad mode off, and the tensors made inside are inference
    tensors. ``mode=False`` does nothing (PyTorch's switch)."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        if not self.mode:
            return self
        self._prev = is_grad_enabled()
        set_grad_enabled(False)
        _state.depth = _state.depth + 1
        if _installed[0] is None:
            previous = upper.creation_hook
            hook = _mark(previous)
            _installed[0] = (hook, previous)
            upper.set_tracing_hooks(hook, upper.host_read_hook, upper.random_hook)
        return self

    def __exit__(self, *exc):
        if not self.mode:
            return False
        _state.depth -= 1
        set_grad_enabled(self._prev)
        if _state.depth == 0 and _installed[0] is not None \
                and upper.creation_hook is _installed[0][0]:
            upper.set_tracing_hooks(_installed[0][1], upper.host_read_hook, upper.random_hook)
            _installed[0] = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.mode):
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return inference_mode(self.mode)


def is_inference(input) -> bool:  # noqa: A002 - PyTorch's name
    """Whether ``input`` was made inside ``inference_mode``."""
    ref = _INFERENCE.get(id(input))
    return ref is not None and ref() is input


methods.declare({"is_inference": is_inference}, __name__)
