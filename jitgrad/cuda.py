"""``jitgrad.cuda``: the CUDA devices, named like ``torch.cuda``.

Nothing here imports ``numba.cuda`` until asked: ``is_available()`` returns False when the
``jitgrad[cuda]`` extra (numba-cuda) is not installed or no driver/GPU is found. With
``NUMBA_ENABLE_CUDASIM=1`` (set before jitgrad is imported) Numba's simulator stands in for one
device, which is how CUDA code is tested on machines without a GPU.
"""
from __future__ import annotations


def _backend():
    from .ops.core import dispatch

    return dispatch.cuda_backend()


def is_available() -> bool:
    """True when CUDA tensors can be made (a GPU and driver, or the simulator)."""
    try:
        backend = _backend()
    except ImportError:
        return False
    return backend.is_available()


def device_count() -> int:
    """The number of CUDA devices (0 when CUDA is not available)."""
    return _backend().device_count() if is_available() else 0


def current_device() -> int:
    """The index of the default CUDA device (``"cuda"`` means ``"cuda:0"``)."""
    return 0


def get_device_name(device=0) -> str:
    from ._device import Device

    index = Device(device).index or 0
    backend = _backend()
    backend.check_index(index)
    return backend.device_name(index)


def synchronize(device=None) -> None:
    """Wait until every kernel queued on ``device`` (default: all of the current) has run.

    Ops return as soon as their kernels are queued; reading a value on the host (``item()``,
    ``cpu()``, ``repr``) synchronises by itself, so this is for timing."""
    from ._device import Device

    _backend().synchronize(None if device is None else (Device(device).index or 0))


def manual_seed(seed: int) -> None:
    """Seed the generator of random tensors made on CUDA devices (``randn(..., device="cuda")``)."""
    from .ops import creation

    creation.cuda_manual_seed(seed)


manual_seed_all = manual_seed


def empty_cache() -> None:
    """Give the CUDA buffers jitgrad's caching allocator keeps for reuse back to the driver."""
    if is_available():
        _backend().empty_cache()


def memory_stats() -> dict:
    """The CUDA caching allocator's counters: bytes allocated from the driver, bytes cached
    (free for reuse), allocations and reuses."""
    return _backend().memory_stats() if is_available() else {}

__all__ = ["is_available", "device_count", "current_device", "get_device_name", "synchronize",
           "manual_seed", "manual_seed_all", "empty_cache", "memory_stats"]
