"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d``
(``nn.functional.interpolate`` with fixed arguments)."""
from __future__ import annotations

from .. import functional
from .module import Module


class Upsample(Module):
    """Resize the spatial dims of ``(N, C, *spatial)`` input to ``size`` or by
    ``scale_factor`` with ``mode`` ('nearest', 'linear', 'bilinear', 'bicubic', 'trilinear',
    'nearest-exact'); see ``functional.interpolate``."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return functional.interpolate(input, self.size, self.scale_factor, self.mode,
                                      self.align_corners,
                                      recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of ``(N, C, H, W)`` input (``Upsample(mode='nearest')``)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of ``(N, C, H, W)`` input with ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
