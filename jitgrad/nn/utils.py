"""``jitgrad.nn.utils``: gradient clipping and flat parameter vectors."""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ..ops.core.upper import guard_writes

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale all gradients in place so their joint ``norm_type``-norm is at most ``max_norm``
    (factor ``max_norm / (total + 1e-6)``, applied only when below 1). Returns the total norm
    (before clipping) as a 0-d Tensor."""
    params = _grads(parameters)
    if not params:
        return Tensor._make(np.asarray(0.0))
    norm_type = float(norm_type)
    grads = [p.grad._host("clip_grad_norm_") for p in params]
    if norm_type == math.inf:
        total = max(float(np.max(np.abs(g))) for g in grads)
    else:
        total = sum(float(np.sum(np.abs(g.astype(np.float64)) ** norm_type))
                    for g in grads) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped.")
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        guard_writes(*(p.grad for p in params))
        for p in params:
            data = p.grad._data  # device read: scaled in place (write guarded)
            data *= data.dtype.type(coef)
            p.grad._version_counter.bump()
    return Tensor._make(np.asarray(total, params[0].grad._data.dtype))


def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    grads = [p.grad for p in _grads(parameters)]
    guard_writes(*grads)
    for g in grads:
        data = g._data  # device read: clamped in place (write guarded)
        np.clip(data, -clip_value, clip_value, out=data)
        g._version_counter.bump()


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-d Tensor (a copy, no graph)."""
    return Tensor._make(np.concatenate([p._host("parameters_to_vector").reshape(-1)
                                        for p in parameters]))


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-d ``vec`` into the parameters, in place."""
    data = vec._host("vector_to_parameters") if isinstance(vec, Tensor) else np.asarray(vec)
    parameters = list(parameters)
    guard_writes(*parameters)
    offset = 0
    for p in parameters:
        n = p.numel()
        np.copyto(p._data,  # device read: written in place (write guarded)
                  data[offset:offset + n].reshape(p.shape), casting="unsafe")
        p._version_counter.bump()
        offset += n
