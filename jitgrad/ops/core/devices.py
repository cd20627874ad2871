"""Device resolution and moves: which backend an op's arrays run on, and copies between devices.

Note [lazy cuda]: ``kernels.cuda.backend`` (and numba.cuda) is imported when the first CUDA tensor is made
(``cuda_backend()``); until then ``loaded_cuda`` is None and every op pays one check for it.
"""
from __future__ import annotations

import importlib

import numpy as np

from ...kernels.cpu import elementwise as cpu

#: ``kernels.cuda.backend`` once the first CUDA tensor was made, else None (Note [lazy cuda]). Read it
#: as ``devices.loaded_cuda`` (it changes after import).
loaded_cuda = None

MIXED_DEVICES_MSG = ("Expected all tensors to be on the same device, but found at least two "
                     "devices, {0} and {1}! (in {2}: move the operands to one device with "
                     ".to(device) first)")


#: what runs once when CUDA is first loaded, registered with ``on_cuda_load`` by the modules
#: that build on this one (``smath``: the CUDA overloads of its scalar functions)
_cuda_loaders: list = []


def on_cuda_load(fn) -> None:
    _cuda_loaders.append(fn)


def cuda_backend():
    """``kernels.cuda.backend``, loaded on first use (Note [lazy cuda])."""
    global loaded_cuda
    if loaded_cuda is None:
        from ...kernels.cuda import backend

        for load in _cuda_loaders:
            load()
        loaded_cuda = backend
    return loaded_cuda


def cuda_kernels(name: str):
    """A CUDA kernel module of the device layer (``"reduce"`` -> ``kernels.cuda.reduce``),
    imported on first use like ``kernels.cuda.backend`` itself (Note [lazy cuda])."""
    cuda_backend()
    return importlib.import_module(f"jitgrad.kernels.cuda.{name}")


def is_cuda_array(data) -> bool:
    """Whether ``data`` is a CUDA array (False, cheaply, until CUDA is loaded)."""
    return loaded_cuda is not None and isinstance(data, loaded_cuda.CudaArray)


def device_of(data) -> str:
    """``"cpu"`` or ``"cuda:N"`` for a tensor's data."""
    cuda = loaded_cuda
    return "cpu" if cuda is None or not isinstance(data, cuda.CudaArray) else data.device


def on_cuda(values: list, name: str, operands=None) -> bool:
    """True when an op over these operand arrays runs on CUDA (then every array is on one CUDA
    device). A 0-d CPU tensor that needs no grad counts as a scalar there, as in PyTorch: it is
    replaced in ``values`` by its device copy. Any other mix raises PyTorch's error."""
    cuda = loaded_cuda
    if cuda is None:
        return False
    device = next((v.device for v in values if isinstance(v, cuda.CudaArray)), None)
    if device is None:
        return False
    index = int(device.split(":")[1])
    for k, v in enumerate(values):
        if isinstance(v, cuda.CudaArray):
            if v.device != device:
                raise RuntimeError(MIXED_DEVICES_MSG.format(device, v.device, name))
        elif isinstance(v, np.ndarray):
            needs = operands is not None and getattr(operands[k], "_requires_grad", False)
            if v.ndim or needs:
                raise RuntimeError(MIXED_DEVICES_MSG.format(device, "cpu", name))
            values[k] = cuda.to_device(v, index)
    return True


def backend_for(values: list, name: str, operands=None):
    """The device module (``kernels.cpu.elementwise`` or ``kernels.cuda.backend``) an op over ``values`` runs on."""
    return loaded_cuda if on_cuda(values, name, operands) else cpu


def move(data, device: str):
    """``data`` (NumPy or CUDA array) copied to ``device``."""
    if device == "cpu":
        return data.get() if device_of(data) != "cpu" else data
    if data.dtype.kind == "c":  # Note [complex support]: CPU only for now
        raise NotImplementedError(f"to({device}): complex tensors are not supported on CUDA yet "
                                  f"(dtype {data.dtype.name}); keep them on the CPU")
    backend = cuda_backend()
    index = int(device.split(":")[1])
    backend.check_index(index)
    host = data.get() if device_of(data) != "cpu" else data
    return backend.to_device(host, index)


def shares_memory(a, b) -> bool:
    """Whether two arrays (NumPy or CUDA) may overlap in memory."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.may_share_memory(a, b)
    return getattr(a, "buffer", None) is not None and getattr(a, "buffer", None) is getattr(
        b, "buffer", None)
