"""New Tensors without history on a given device: zeros, filled, copies (pooled on the CPU)."""
from __future__ import annotations

from ...kernels.cpu import pool
from . import devices, upper
from .devices import cuda_backend, device_of

Tensor = None  # the registered class: ops/core/upper.py keeps it current (Note [upper registrations])
upper.bind(globals(), "Tensor")


@upper.constant_maker
def zeros(shape, dtype, device="cpu"):
    """A Tensor of zeros of ``shape`` and jitgrad ``dtype`` on ``device``."""
    if device != "cpu":
        return Tensor._make(cuda_backend().zeros(shape, dtype.np, int(device.split(":")[1])))
    return Tensor._make(pool.zeros(shape, dtype.np))


def copy_data(t):
    """A new Tensor (no history) holding a copy of ``t``'s values in a buffer of its own."""
    return Tensor._make(t._data.copy() if device_of(t._data) != "cpu"
                              else pool.copy(t._data))


@upper.constant_maker
def full_like(t, value):
    """A Tensor of ``t``'s shape, dtype and device filled with ``value``."""
    if device_of(t._data) != "cpu":
        return Tensor._make(devices.loaded_cuda.full(t.shape, value, t.dtype.np,
                                                           t._data.index))
    return Tensor._make(pool.full(t.shape, value, t.dtype.np))
