"""``jitgrad.numpy.fft``: ``fftshift``, ``ifftshift`` and ``fftfreq``/``rfftfreq`` (real
index permutations and constants). The transforms themselves produce complex arrays, which
jitgrad does not have: looking them up raises ``AttributeError`` naming them."""
from __future__ import annotations

import numpy as _np

from ..tensor import Tensor

__all__ = ["fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def _shift(x, axes, sign):
    from . import roll

    x = x if isinstance(x, Tensor) else Tensor._make(_np.asarray(x))
    axes = tuple(range(x.ndim)) if axes is None else tuple(_np.atleast_1d(axes).tolist())
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axes)


def fftshift(x, axes=None):
    """Move the zero-frequency term to the centre (a roll by ``n // 2``; gradient rolled back)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of ``fftshift`` (a roll by ``-(n // 2)``)."""
    return _shift(x, axes, -1)


def fftfreq(n, d=1.0):
    """Sample frequencies (a constant Tensor)."""
    return Tensor._make(_np.fft.fftfreq(n, d))


def rfftfreq(n, d=1.0):
    """Sample frequencies for ``rfft`` (a constant Tensor)."""
    return Tensor._make(_np.fft.rfftfreq(n, d))


def __getattr__(name):
    if hasattr(_np.fft, name):
        raise AttributeError(f"jitgrad.numpy.fft has no '{name}': numpy.fft.{name} is not covered "
                             "(it produces complex arrays and jitgrad has no complex dtype)")
    raise AttributeError(f"module 'jitgrad.numpy.fft' has no attribute '{name}'")
