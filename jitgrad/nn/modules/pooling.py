"""Pooling modules: max/average/power-average pools over 1-3 spatial dims, adaptive pools
(an output size instead of a window), ``MaxUnpool`` (the inverse of a max pool given its
indices) and fractional max pools (thin wrappers over ``nn.functional``)."""
from __future__ import annotations

from .. import functional
from .module import Module


def _ntuple(value, nd):
    """An int repeated ``nd`` times, or the given sequence as a tuple."""
    return (value,) * nd if isinstance(value, int) else tuple(value)


class _MaxPoolNd(Module):
    """Max over ``kernel_size`` windows (``stride`` defaults to ``kernel_size``); ``_nd``
    spatial dims."""

    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return getattr(functional, f"max_pool{self._nd}d")(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """``out[n, c, l] = max_k input[n, c, stride l + dilation k]`` over ``(N, C, L)``."""

    _nd = 1


class MaxPool2d(_MaxPoolNd):
    """Max over 2-d windows of ``(N, C, H, W)`` input."""

    _nd = 2


class MaxPool3d(_MaxPoolNd):
    """Max over 3-d windows of ``(N, C, D, H, W)`` input."""

    _nd = 3


class AvgPool1d(Module):
    """``out[n, c, l] = mean_k input[n, c, stride l + k]`` over ``(N, C, L)`` (zero padding
    counted in the mean when ``count_include_pad``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):  # noqa: A002
        return functional.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                     self.ceil_mode, self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    """Mean over ``kernel_size`` windows (``stride`` defaults to ``kernel_size``);
    ``divisor_override`` replaces the window size as the divisor."""

    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):  # noqa: A002
        return getattr(functional, f"avg_pool{self._nd}d")(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """Mean over 2-d windows of ``(N, C, H, W)`` input."""

    _nd = 2


class AvgPool3d(_AvgPoolNd):
    """Mean over 3-d windows of ``(N, C, D, H, W)`` input."""

    _nd = 3


class _LPPoolNd(Module):
    """Power-average pool: ``(sum_window x^p)^(1/p)`` with ``p = norm_type`` (``p = inf`` is
    max pooling, ``p = 1`` sum pooling)."""

    _nd = 2

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):  # noqa: A002
        return getattr(functional, f"lp_pool{self._nd}d")(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pool over ``(N, C, L)``."""

    _nd = 1


class LPPool2d(_LPPoolNd):
    """Power-average pool over ``(N, C, H, W)``."""

    _nd = 2


class LPPool3d(_LPPoolNd):
    """Power-average pool over ``(N, C, D, H, W)``."""

    _nd = 3


class _AdaptivePoolNd(Module):
    """Pool to a fixed ``output_size`` (None in a dim keeps the input's size there): output
    cell ``i`` of a dim of size ``L`` pools ``[floor(i L / out), ceil((i + 1) L / out))``."""

    _nd = 2

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return getattr(functional, f"adaptive_avg_pool{self._nd}d")(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    """Adaptive max pool; ``return_indices`` also returns the argmax positions."""

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):  # noqa: A002
        return getattr(functional, f"adaptive_max_pool{self._nd}d")(
            input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Adaptive average pool over ``(N, C, L)``."""

    _nd = 1


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Adaptive average pool over ``(N, C, H, W)``."""

    _nd = 2


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """Adaptive average pool over ``(N, C, D, H, W)``."""

    _nd = 3


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive max pool over ``(N, C, L)``."""

    _nd = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Adaptive max pool over ``(N, C, H, W)``."""

    _nd = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Adaptive max pool over ``(N, C, D, H, W)``."""

    _nd = 3


class _MaxUnpoolNd(Module):
    """The partial inverse of ``MaxPool``: ``forward(input, indices, output_size=None)``
    scatters each value to its flat position ``indices`` in a zero output of spatial size
    ``(in - 1) stride - 2 padding + kernel_size`` (or ``output_size``)."""

    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, nd)
        self.padding = _ntuple(padding, nd)

    def forward(self, input, indices, output_size=None):  # noqa: A002
        return getattr(functional, f"max_unpool{self._nd}d")(
            input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of ``MaxPool1d``."""

    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Inverse of ``MaxPool2d``."""

    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Inverse of ``MaxPool3d``."""

    _nd = 3


class _FractionalMaxPoolNd(Module):
    """Fractional max pooling (Graham, 2014): pseudo-random overlapping windows of
    ``kernel_size`` whose starts are drawn so the output has ``output_size`` (or
    ``output_ratio`` times the input size). ``_random_samples`` (``(N, C, nd)`` in [0, 1))
    fixes the draw."""

    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd = self._nd
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _ntuple(output_size, nd)
        self.output_ratio = None if output_ratio is None else (
            (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else
            tuple(output_ratio))
        if (output_size is None) == (output_ratio is None):
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             "or a pooling ratio (exactly one of them)")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):  # noqa: A002
        return getattr(functional, f"fractional_max_pool{self._nd}d")(
            input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over ``(N, C, H, W)``."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over ``(N, C, D, H, W)``."""

    _nd = 3
