"""``Fold`` (col2im) and ``Unfold`` (im2col)."""
from __future__ import annotations

from .. import functional
from .module import Module


class _Blocks(Module):
    """Sliding-block hyper-parameters shared by ``Fold`` and ``Unfold``."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def _blocks_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(_Blocks):
    """Extract sliding ``kernel_size`` blocks of ``(N, C, H, W)`` input as columns:
    ``(N, C prod(kernel_size), L)`` with ``L`` the number of block positions."""

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return functional.unfold(input, self.kernel_size, self.dilation, self.padding,
                                 self.stride)

    def extra_repr(self):
        return self._blocks_repr()


class Fold(_Blocks):
    """The adjoint of ``Unfold``: sum the columns of ``(N, C prod(kernel_size), L)`` input
    back into an ``(N, C, *output_size)`` image (overlapping blocks add up)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return functional.fold(input, self.output_size, self.kernel_size, self.dilation,
                               self.padding, self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + self._blocks_repr()
