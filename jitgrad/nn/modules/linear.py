"""``Identity``, ``Linear`` and ``Flatten``."""
from __future__ import annotations

import math

from ... import dtypes
from ..._device import Device
from ...ops import creation, shape
from .. import functional
from .. import init
from ..parameter import Parameter
from .module import Module


def _empty(shape_, dtype):
    """An uninitialised float parameter array in ``dtype`` (default: jitgrad's default)."""
    return creation.empty(*shape_, dtype=dtypes.to_dtype(dtype) if dtype is not None
                          else dtypes.get_default_dtype())


def _check_device(device):
    """The canonical device of a constructor's ``device=`` (None: the CPU), checked to exist
    before any parameter is made."""
    if device is None:
        return None
    device = Device(device)
    if device != "cpu":
        from .module import _check_cuda

        _check_cuda(device)
    return device


def _place(module, device):
    """Move a freshly initialised module to its constructor's ``device`` (parameters are
    created and initialised on the CPU from jitgrad's generator, so a seed gives the same
    values on every device)."""
    if device is not None and device != "cpu":
        module.to(device)


class Identity(Module):
    """Returns its input unchanged (extra constructor arguments are ignored)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return input


class Linear(Module):
    """``y = x W^T + b`` with ``W`` of shape ``(out_features, in_features)``.

    Initialisation (PyTorch's): ``W, b ~ U(-1/sqrt(in_features), 1/sqrt(in_features))`` (for
    ``W`` this is ``kaiming_uniform_(a=sqrt(5))``).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        device = _check_device(device)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(_empty((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        _place(self, device)

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002
        return functional.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (default: all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        return shape.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
