"""Gradient clipping: ``get_total_norm``, ``clip_grads_with_norm_``, ``clip_grad_norm_``
and ``clip_grad_value_``, with PyTorch's semantics.

The norms and the scaling run as Tensor ops (on each gradient's device) without recording a
graph; ``foreach`` selects PyTorch's fused multi-tensor kernels there and changes nothing
here (jitgrad has one implementation), but is accepted and checked as PyTorch does.
"""
from __future__ import annotations

import math
import warnings

from ...graph.grad_mode import no_grad
from ...ops import creation, shape
from ...tensor import Tensor

__all__ = ["get_total_norm", "clip_grads_with_norm_", "clip_grad_norm_", "clip_grad_norm",
           "clip_grad_value_"]


def _tensors(tensors) -> list:
    """``tensors`` (a Tensor or an iterable of them) as a list."""
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters) -> list:
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def _check_foreach(foreach, op):
    if foreach not in (None, True, False):
        raise TypeError(f"{op}: foreach must be None or a bool, got {foreach!r}")


def _vector_norm(t, p: float):
    """``||t||_p`` of all elements: ``(sum |t|^p)^(1/p)``; ``max |t|`` for ``p = inf``,
    ``min |t|`` for ``-inf``, the count of non-zeros for ``p = 0``."""
    a = t.abs()
    if a.numel() == 0:
        return creation.zeros((), dtype=t.dtype, device=t.device)
    if p == math.inf:
        return a.max()
    if p == -math.inf:
        return a.min()
    if p == 0:
        return (a != 0).sum().to(t.dtype)
    return (a ** p).sum() ** (1.0 / p)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all the elements of ``tensors`` together (as if
    concatenated): ``||(||t_1||_p, ..., ||t_n||_p)||_p``; a 0-d Tensor (0.0 for no tensors).

    ``error_if_nonfinite``: raise when it is nan or inf.
    """
    _check_foreach(foreach, "get_total_norm")
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return creation.tensor(0.0)
    with no_grad():
        norms = [_vector_norm(t, norm_type) for t in tensors]
        first = tensors[0]
        stacked = shape.stack([n.to(first.device).to(first.dtype) for n in norms])
        total = _vector_norm(stacked, norm_type)
    if error_if_nonfinite and not math.isfinite(float(total.item())):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm +
    1e-6))``, given their ``total_norm`` (from ``get_total_norm``)."""
    _check_foreach(foreach, "clip_grads_with_norm_")
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device).to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clip the gradients of ``parameters`` in place so that their total ``norm_type``-norm
    is at most ``max_norm``: ``g <- g min(1, max_norm / (total + 1e-6))``. Returns the total
    norm before clipping (a 0-d Tensor)."""
    parameters = _tensors(parameters)  # a generator is read once
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated spelling of ``clip_grad_norm_`` (warns, as PyTorch)."""
    warnings.warn("`jitgrad.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`jitgrad.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element of ``parameters`` into ``[-clip_value, clip_value]`` in
    place."""
    _check_foreach(foreach, "clip_grad_value_")
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
