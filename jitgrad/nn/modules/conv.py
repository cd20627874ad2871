"""``Conv1d`` and ``Conv2d``."""
from __future__ import annotations

import math

from .. import functional
from .. import init
from ..parameter import Parameter
from .linear import _check_device, _empty, _place
from .module import Module


class _ConvNd(Module):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        device = _check_device(device)
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode={padding_mode!r} is not supported; only "
                                      "'zeros'")
        tup = (lambda v: (v,) * nd if isinstance(v, int) else tuple(v))
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = tup(kernel_size), tup(stride), tup(dilation)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = tup(padding)
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = Parameter(_empty((out_channels, in_channels // groups) + self.kernel_size,
                                       dtype))
        if bias:
            self.bias = Parameter(_empty((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        _place(self, device)

    def reset_parameters(self):
        """PyTorch's default: ``kaiming_uniform_(a=sqrt(5))`` for the weight (bound
        ``1/sqrt(fan_in)``), bias ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        nd = self._nd
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-d convolution over ``(N, C_in, L)``: weight ``(C_out, C_in/groups, K)``."""

    _nd = 1

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return functional.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """2-d convolution over ``(N, C_in, H, W)``: weight ``(C_out, C_in/groups, KH, KW)``."""

    _nd = 2

    def forward(self, input):  # noqa: A002
        return functional.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)
