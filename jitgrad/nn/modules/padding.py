"""Padding modules: ``ConstantPad{1,2,3}d``, ``ZeroPad{1,2,3}d``, ``ReflectionPad{1,2,3}d``,
``ReplicationPad{1,2,3}d`` and ``CircularPad{1,2,3}d`` (``nn.functional.pad`` with a fixed
``padding`` and mode).

``padding`` is an int (the same on every side of the last ``n`` dims) or a tuple of ``2 n``
ints ``(left, right, top, bottom, front, back)``, last dim first, as ``functional.pad``.
"""
from __future__ import annotations

from .. import functional
from .module import Module


def _padding(padding, nd, cls):
    """``padding`` as a tuple of ``2 nd`` ints."""
    if isinstance(padding, int):
        return (padding,) * (2 * nd)
    padding = tuple(padding)
    if len(padding) != 2 * nd or not all(isinstance(p, int) for p in padding):
        raise ValueError(f"{cls}: padding must be an int or a tuple of {2 * nd} ints, got "
                         f"{padding!r}")
    return padding


class _PadNd(Module):
    """Pad the last ``_nd`` dims with ``functional.pad(input, padding, _mode)``."""

    _nd = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(padding, self._nd, type(self).__name__)

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return functional.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pad with the constant ``value``."""

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):  # noqa: A002
        return functional.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``(N, C, W) -> (N, C, W + left + right)``."""

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with ``value``."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims with ``value``."""

    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pad the last dim with zeros."""

    _nd = 1


class ZeroPad2d(_ZeroPadNd):
    """Pad the last 2 dims with zeros."""

    _nd = 2


class ZeroPad3d(_ZeroPadNd):
    """Pad the last 3 dims with zeros."""

    _nd = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection about the edge (edge not repeated:
    ``[a b c] -> [c b a b c b a]`` for padding 2); each pad must be < the dim's size."""

    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Reflection padding of the last 2 dims."""

    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Reflection padding of the last 3 dims."""

    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values (``[a b c] -> [a a b c c]``)."""

    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Replication padding of the last 2 dims."""

    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Replication padding of the last 3 dims."""

    _nd, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    """Pad the last dim periodically (``[a b c] -> [c a b c a]``)."""

    _nd, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    """Circular padding of the last 2 dims."""

    _nd, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    """Circular padding of the last 3 dims."""

    _nd, _mode = 3, "circular"
