"""Dropout modules: ``Dropout``, ``Dropout1d/2d/3d`` (whole channels), ``AlphaDropout`` and
``FeatureAlphaDropout`` (keep SELU's mean and variance)."""
from __future__ import annotations

from .. import functional
from .module import Module


class _DropoutNd(Module):
    """A drop probability ``p`` and an ``inplace`` flag; the identity in eval mode.
    ``_fn`` names the functional form."""

    _fn = "dropout"

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        return getattr(functional, self._fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training, zero each element with probability ``p`` and scale the others by
    ``1 / (1 - p)``; the identity in eval mode."""


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``
    (the kept ones scaled by ``1 / (1 - p)``)."""

    _fn = "dropout1d"


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` input with probability ``p``
    (the kept ones scaled by ``1 / (1 - p)``)."""

    _fn = "dropout2d"


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with probability
    ``p`` (the kept ones scaled by ``1 / (1 - p)``)."""

    _fn = "dropout3d"


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks: dropped elements are set to SELU's negative saturation
    ``-alpha scale`` and the result is affinely rescaled so that zero-mean unit-variance input
    keeps its mean and variance (Klambauer et al., 2017)."""

    _fn = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` applied to whole channels."""

    _fn = "feature_alpha_dropout"
