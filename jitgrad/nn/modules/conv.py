"""Convolutions: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``."""
from __future__ import annotations

import math

from .. import functional
from .. import init
from ..parameter import Parameter
from .linear import _check_device, _empty, _place
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What every convolution shares: the hyper-parameters as ``_nd``-tuples, the weight
    (``(C_out, C_in/groups, *k)``, transposed: ``(C_in, C_out/groups, *k)``), the bias and
    PyTorch's initialisation."""

    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        device = _check_device(device)
        nd, name = self._nd, type(self).__name__
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer (got {groups})")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) must be divisible by groups "
                             f"({groups})")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by "
                             f"groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        tup = (lambda v: (v,) * nd if isinstance(v, int) else tuple(v))
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = tup(kernel_size), tup(stride), tup(dilation)
        self.output_padding, self.transposed = tup(output_padding), self._transposed
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
            totals = [0 if padding == "valid" else d * (k - 1)
                      for d, k in zip(self.dilation, self.kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        else:
            self.padding = tup(padding)
            pairs = [(p, p) for p in self.padding]
        # functional.pad's order (last dim first) for the non-zero padding modes
        self._reversed_padding_repeated_twice = tuple(v for pair in reversed(pairs)
                                                      for v in pair)
        self.groups, self.padding_mode = groups, padding_mode
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups))
        self.weight = Parameter(_empty(shape + self.kernel_size, dtype))
        if bias:
            self.bias = Parameter(_empty((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        _place(self, device)

    def reset_parameters(self):
        """PyTorch's default: ``kaiming_uniform_(a=sqrt(5))`` for the weight (bound
        ``1/sqrt(fan_in)``, ``fan_in = weight.shape[1] * prod(kernel_size)``), bias
        ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
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
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):  # noqa: A002 - PyTorch's argument name
        conv = getattr(functional, f"conv{self._nd}d")
        if self.padding_mode != "zeros":
            input = functional.pad(input, self._reversed_padding_repeated_twice,
                                   mode=self.padding_mode)
            return conv(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):  # noqa: A002
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d cross-correlation over ``(N, C_in, L)``: ``out[n, o, l] = b[o] + sum_{c, k}
    w[o, c, k] x[n, g(o) C_in/groups + c, stride l + dilation k - padding]``; weight
    ``(C_out, C_in/groups, K)``. ``padding_mode`` pads with ``functional.pad`` first."""

    _nd = 1


class Conv2d(_Conv):
    """2-d cross-correlation over ``(N, C_in, H, W)``: weight ``(C_out, C_in/groups, KH, KW)``
    (see ``Conv1d``)."""

    _nd = 2


class Conv3d(_Conv):
    """3-d cross-correlation over ``(N, C_in, D, H, W)``: weight
    ``(C_out, C_in/groups, KD, KH, KW)`` (see ``Conv1d``)."""

    _nd = 3


class _ConvTransposeNd(_ConvNd):
    """The adjoint (gradient w.r.t. input) of the convolution with the same hyper-parameters;
    output size per dim ``(in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``.
    ``forward(input, output_size=None)``: ``output_size`` picks ``output_padding``."""

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"ints, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):  # noqa: A002
        """The ``output_padding`` that makes the output's spatial size ``output_size``."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        output_size = list(output_size)[-nd:]
        if len(output_size) != nd:
            raise ValueError(f"{type(self).__name__}: output_size must have {nd} or "
                             f"{nd + 2} elements (got {len(output_size)})")
        pads = []
        for i in range(nd):
            size_in = input.shape[input.ndim - nd + i]
            low = ((size_in - 1) * self.stride[i] - 2 * self.padding[i]
                   + self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            if not low <= output_size[i] < low + self.stride[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {low} to {low + self.stride[i] - 1} (for an "
                                 f"input of {list(input.shape[-nd:])})")
            pads.append(output_size[i] - low)
        return tuple(pads)

    def forward(self, input, output_size=None):  # noqa: A002
        output_padding = self._output_padding(input, output_size)
        return getattr(functional, f"conv_transpose{self._nd}d")(
            input, self.weight, self.bias, self.stride, self.padding, output_padding,
            self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution over ``(N, C_in, L)``: weight
    ``(C_in, C_out/groups, K)``."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution over ``(N, C_in, H, W)``: weight
    ``(C_in, C_out/groups, KH, KW)``."""

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution over ``(N, C_in, D, H, W)``: weight
    ``(C_in, C_out/groups, KD, KH, KW)``."""

    _nd = 3
