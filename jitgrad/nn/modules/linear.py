"""``Identity``, ``Linear``, ``Bilinear``, ``Flatten`` and ``Unflatten``."""
from __future__ import annotations

import math

from ... import dtypes
from ..._device import Device
from ...ops import creation, shape
from .. import functional
from .. import init
from ..parameter import Parameter
from .module import Module


def empty_parameter(shape_, dtype):
    """An uninitialised float parameter array in ``dtype`` (default: jitgrad's default)."""
    return creation.empty(*shape_, dtype=dtypes.to_dtype(dtype) if dtype is not None
                          else dtypes.get_default_dtype())


def check_device(device):
    """The canonical device of a constructor's ``device=`` (None: the CPU), checked to exist
    before any parameter is made."""
    if device is None:
        return None
    device = Device(device)
    if device != "cpu":
        from .module import _check_cuda

        _check_cuda(device)
    return device


def place(module, device):
    """Move a freshly initialised module to its constructor's ``device`` (parameters are
    created and initialised on the CPU from jitgrad's generator, so a seed gives the same
    values on every device)."""
    if device is not None and device != "cpu":
        module.to(device)


# the older private spellings, which conv.py, normalization.py and sparse.py import
_empty, _check_device, _place = empty_parameter, check_device, place


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
        device = check_device(device)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty_parameter((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(empty_parameter((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, device)

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


class Bilinear(Module):
    """``y_k = x1^T W_k x2 + b_k`` with ``W`` of shape ``(out_features, in1_features,
    in2_features)``; ``x1: (*, in1_features)``, ``x2: (*, in2_features)``.

    Initialisation (PyTorch's): ``W, b ~ U(-1/sqrt(in1_features), 1/sqrt(in1_features))``.
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        device = check_device(device)
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(empty_parameter((out_features, in1_features, in2_features),
                                                dtype))
        if bias:
            self.bias = Parameter(empty_parameter((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, device)

    def reset_parameters(self):
        """``U(-1/sqrt(in1_features), 1/sqrt(in1_features))`` for weight and bias."""
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return functional.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size`` (a tuple of ints, one may be -1; or a
    tuple of ``(name, size)`` pairs as PyTorch's named form, whose sizes are used)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise TypeError("Unflatten: named dims (a str dim) need named tensors, which "
                            "jitgrad does not have; pass an int dim")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got "
                            f"{type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):  # noqa: A002
        sizes = tuple(s[1] if isinstance(s, tuple) else s for s in self.unflattened_size)
        dim = self.dim % input.ndim if input.ndim else 0
        return shape.reshape(input, tuple(input.shape[:dim]) + sizes
                             + tuple(input.shape[dim + 1:]))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
