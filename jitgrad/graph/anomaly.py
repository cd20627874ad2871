"""Anomaly detection: ``detect_anomaly()`` / ``set_detect_anomaly()`` (PyTorch's names).

While enabled, every op that records a node also records the Python traceback of the forward
call that made it (``node.metadata["traceback_"]``, as PyTorch). During backward, a node whose
output gradients contain NaN raises ``RuntimeError("Function 'SqrtBackward0' returned nan values
in its 0th output.")`` with that forward traceback appended, and any error raised inside a
node's backward is preceded by a warning showing the forward traceback. ``check_nan=False``
skips the NaN check; ``check_inf=True`` (an extension) also rejects infinities.

Hook points (Note [transform hooks]): the forward record comes from the dispatch hook in
``forward_ad``, which registers the switch for it here (``set_forward_record_installer``: this
graph-level module imports nothing above it, tests/test_layers.py); the backward check runs in
``check_backward_outputs(node, grads)``, which the engine calls after each node's ``apply``.
For engines without that call, nodes recorded in anomaly mode get the check wrapped around their
``apply`` (so ``with detect_anomaly():`` around both forward and backward works either way).
"""
from __future__ import annotations

import threading
import traceback
import warnings

import numpy as np

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "check_backward_outputs"]


class _State:
    enabled = False
    check_nan = True
    check_inf = False


_state = _State()
_lock = threading.Lock()
# install(record or None): puts ``_record`` on every op's path while anomaly mode is on
_install_forward_record = None


def set_forward_record_installer(install) -> None:
    """Register ``install(record)`` / ``install(None)``, called whenever anomaly mode turns on
    or off (``autograd/forward_ad.py`` registers its transform-hook switch at import)."""
    global _install_forward_record
    _install_forward_record = install
    if _state.enabled:
        install(_record)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.check_nan


def _set(enabled, check_nan, check_inf) -> None:
    _state.enabled = bool(enabled)
    _state.check_nan = bool(check_nan)
    _state.check_inf = bool(check_inf)
    if _install_forward_record is not None:
        _install_forward_record(_record if enabled else None)


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection for its block.

    Slows everything down (a traceback per recorded op, a scan of every gradient): use it to
    find where a NaN comes from, not in production.
    """

    def __init__(self, check_nan=True, check_inf=False):
        self.check_nan, self.check_inf = check_nan, check_inf
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (_state.enabled, _state.check_nan, _state.check_inf)
        _set(True, self.check_nan, self.check_inf)

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan, self.check_inf):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off: as a call (takes effect at once) or as a context
    manager (restored on exit)."""

    def __init__(self, mode: bool, check_nan: bool = True, check_inf: bool = False):
        self.prev = (_state.enabled, _state.check_nan, _state.check_inf)
        _set(mode, check_nan, check_inf)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


# --- forward: where was each node made ----------------------------------------------------
def _record(out) -> None:
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        node = getattr(o, "_grad_fn", None)
        if node is not None and "traceback_" not in node.metadata:
            node.metadata["traceback_"] = "".join(traceback.format_stack()[:-3])
            if "apply" not in vars(node):
                _wrap_apply(node)
            return


def _wrap_apply(node) -> None:
    apply = node.apply

    def checked_apply(grad_outputs):
        try:
            grads = apply(grad_outputs)
        except Exception:
            if _state.enabled:
                _warn_traceback(node)
            raise
        if _state.enabled:
            _check(node, grads)
        return grads

    node.apply = checked_apply


def _warn_traceback(node) -> None:
    tb = node.metadata.get("traceback_") if node._metadata is not None else None
    if tb:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{tb}", UserWarning, stacklevel=3)


# --- backward: reject NaN gradients -------------------------------------------------------
def _values(t):
    while hasattr(t, "_bt_inner"):  # a batched gradient (func/_batching.py): the real values
        t = t._bt_inner
    return np.asarray(t._data) if hasattr(t, "_data") else None


def _check(node, grads) -> None:
    for nr, g in enumerate(grads or ()):
        if g is None:
            continue
        v = _values(g)
        if v is None or v.dtype.kind != "f":
            continue
        what = None
        if _state.check_nan and np.isnan(v).any():
            what = "nan"
        elif _state.check_inf and np.isinf(v).any():
            what = "inf"
        if what is None:
            continue
        tb = node.metadata.get("traceback_") if node._metadata is not None else None
        msg = f"Function '{node.name()}' returned {what} values in its {nr}th output."
        if tb:
            _warn_traceback(node)
            msg += f"\nTraceback of the forward call that created it:\n{tb}"
        else:
            msg += (" (No forward traceback: the node was created while anomaly detection was "
                    "off; enable it around the forward pass too.)")
        raise RuntimeError(msg)


def check_backward_outputs(node, grads) -> None:
    """Called by the engine after ``node.apply`` when anomaly mode is on: raise if the
    gradients ``grads`` contain NaN (or inf with ``check_inf``), naming the node and the
    forward traceback that created it."""
    if not _state.enabled or "apply" in vars(node):  # a wrapped apply checked already
        return
    _check(node, grads)
