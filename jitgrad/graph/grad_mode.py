"""Thread-local grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each works as a context manager and as a decorator, like PyTorch's. The flag is thread-local,
so a worker thread that runs backward nodes has its own mode.
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading

class _State(threading.local):
    enabled = True  # the default in every thread (a class attribute: no getattr fallback)


_state = _State()
#: the thread's flag object: ``state.enabled`` is ``is_grad_enabled()`` without the call (for
#: the eager hot path, ops/core/fastpath.py)
state = _state


def is_grad_enabled() -> bool:
    """True when operations are being recorded for autograd on this thread."""
    return _state.enabled


def _set_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradModeContext:
    """Base for grad-mode context managers that also decorate functions."""

    _mode: bool

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_enabled(self._mode)

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def _ctor_args(self):
        return ()

    def clone(self):
        return self.__class__(*self._ctor_args())


def _wrap_generator(make_ctx, gen_fn):
    """Run each step of the generator (not just its creation) under a fresh context."""

    @functools.wraps(gen_fn)
    def generator_context(*args, **kwargs):
        gen = gen_fn(*args, **kwargs)
        try:
            with make_ctx():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException:
                    with make_ctx():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_ctx():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator_context


class _NoParamContext(_GradModeContext):
    """Usable as ``@ctx`` as well as ``@ctx()`` and ``with ctx():`` (PyTorch allows all three)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamContext):
    """Disable graph recording: results of operations have ``grad_fn=None``."""

    _mode = False


class enable_grad(_NoParamContext):
    """Enable graph recording (inside a ``no_grad`` block, for example)."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode on or off. Takes effect immediately (as a call) and as a context manager."""

    def __init__(self, mode: bool):
        self._prev = is_grad_enabled()
        self._mode = bool(mode)
        _set_enabled(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_enabled(self._prev)
        return False

    def __call__(self, fn):
        _set_enabled(self._prev)  # as a decorator it must not change the mode when applied
        return super().__call__(fn)

    def _ctor_args(self):
        return (self._mode,)
