"""``parameters_to_vector`` and ``vector_to_parameters``."""
from __future__ import annotations

from ...graph.grad_mode import no_grad
from ...ops import shape
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _device_check(param, device):
    if device is not None and param.device != device:
        raise TypeError(f"Found two parameters on different devices, this is currently not "
                        f"supported ({device} and {param.device})")
    return param.device


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-d Tensor
    (``cat([p.view(-1) for p in parameters])``: differentiable w.r.t. them)."""
    device, flat = None, []
    for p in parameters:
        device = _device_check(p, device)
        flat.append(p.reshape(-1))
    return shape.cat(flat)


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-d ``vec`` into the parameters, in place (the inverse
    of ``parameters_to_vector``; not recorded)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected jitgrad.Tensor, but got: {type(vec).__name__}")
    device, offset = None, 0
    with no_grad():
        for p in parameters:
            device = _device_check(p, device)
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(p.shape))
            offset += n
