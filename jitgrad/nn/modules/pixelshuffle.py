"""``PixelShuffle``, ``PixelUnshuffle`` and ``ChannelShuffle``: rearrangements of channels."""
from __future__ import annotations

from .. import functional
from .module import Module


class PixelShuffle(Module):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)`` with ``r = upscale_factor`` (Shi et al.,
    2016): ``out[c, h r + i, w r + j] = in[c r^2 + i r + j, h, w]``."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return functional.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """The inverse of ``PixelShuffle``: ``(*, C, H r, W r) -> (*, C r^2, H, W)`` with
    ``r = downscale_factor``."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):  # noqa: A002
        return functional.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Split the channels of ``(N, C, *)`` input into ``groups`` groups and interleave them:
    channel ``g (C / groups) + k`` moves to ``k groups + g`` (Zhang et al., 2017)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):  # noqa: A002
        return functional.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
