"""Normalisation layers: ``BatchNorm1d/2d/3d``, ``InstanceNorm1d/2d/3d``, ``GroupNorm``,
``LayerNorm``, ``RMSNorm`` and ``LocalResponseNorm``."""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...ops import creation
from .. import functional
from .. import init
from ...ops.core.upper import guard_writes
from ..parameter import Parameter
from ...ops.core import dispatch
from .linear import _check_device, _empty, _place
from .module import Module


def _affine_parameters(module, shape, affine, bias, dtype):
    """``module.weight`` (and ``module.bias`` when ``bias``) of ``shape`` when ``affine``; the
    absent ones registered as None, as PyTorch's norm layers do."""
    module.register_parameter("weight", Parameter(_empty(shape, dtype)) if affine else None)
    module.register_parameter("bias", Parameter(_empty(shape, dtype)) if affine and bias
                              else None)


def _reset_affine(module):
    """Weight 1, bias 0 (the ones present): PyTorch's initialisation of a norm's affine."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _BatchNorm(Module):
    _dims = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        device = _check_device(device)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.use_bias = affine and bias
        _affine_parameters(self, (num_features,), affine, bias, dtype)
        if track_running_stats:
            fdt = dtypes.to_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=fdt))
            self.register_buffer("running_var", creation.ones(num_features, dtype=fdt))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=dtypes.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()
        _place(self, device)

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        """Running stats 0 / 1, weight 1, bias 0 (PyTorch's defaults)."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):  # noqa: A002 - PyTorch's argument name
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input "
                             f"(got {input.ndim}D input)")

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            guard_writes(self.num_batches_tracked)  # (jitgrad.compile cannot replay the count)
            if self.num_batches_tracked.is_cuda:  # a device kernel, no host copy
                dispatch.add_into(self.num_batches_tracked,
                                  dispatch.full_like(self.num_batches_tracked, 1))
            else:
                self.num_batches_tracked._data += np.int64(1)  # device read: write (guarded)
            self.num_batches_tracked._version_counter.bump()
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return functional.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.use_bias}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over ``(N, C)`` or ``(N, C, L)`` input, per channel C."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over ``(N, C, H, W)`` input, per channel C."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over ``(N, C, D, H, W)`` input, per channel C."""

    _dims = (5,)


class _InstanceNorm(_BatchNorm):
    """Normalise each sample's channel over its spatial dims: ``y = (x - mean) /
    sqrt(var + eps) * weight + bias`` (biased variance). No affine and no running statistics
    by default; with ``track_running_stats`` eval mode uses the running ones. Input without
    the batch dim (``_dims[0]`` dims) is accepted."""

    _dims = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        unbatched = input.ndim == self._dims[0]
        if unbatched:
            input = input.unsqueeze(0)
        out = functional.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over ``(N, C, L)`` or ``(C, L)`` input."""

    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""

    _dims = (4, 5)


class GroupNorm(Module):
    """Split the ``num_channels`` channels into ``num_groups`` groups and normalise each
    sample's group over its channels and spatial dims: ``y = (x - mean) / sqrt(var + eps)``
    (biased variance), then a per-channel affine (weight 1, bias 0 at init)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        device = _check_device(device)
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine, self.use_bias = eps, affine, affine and bias
        _affine_parameters(self, (num_channels,), affine, bias, dtype)
        self.reset_parameters()
        _place(self, device)

    def reset_parameters(self):
        """Weight 1, bias 0."""
        _reset_affine(self)

    def forward(self, input):  # noqa: A002
        return functional.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.use_bias}")


class LayerNorm(Module):
    """Normalisation over the trailing ``normalized_shape`` dims with an elementwise affine
    (weight 1, bias 0 at init)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        device = _check_device(device)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.use_bias = bias
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype)
        self.reset_parameters()
        _place(self, device)

    def reset_parameters(self):
        """Weight 1, bias 0."""
        _reset_affine(self)

    def forward(self, input):  # noqa: A002
        return functional.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias="
                f"{self.use_bias if self.elementwise_affine else False}")


class RMSNorm(Module):
    """``y = x / sqrt(mean(x^2 over normalized_shape) + eps) * weight`` (Zhang & Sennrich,
    2019); ``eps=None`` is the float epsilon of the input's dtype. Weight 1 at init."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        device = _check_device(device)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()
        _place(self, device)

    def reset_parameters(self):
        """Weight 1."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return functional.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalise each channel by its neighbours (Krizhevsky et al., 2012):
    ``b_c = a_c / (k + alpha / size * sum_{c' in window(c)} a_{c'}^2)^beta`` with a window of
    ``size`` channels."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):  # noqa: A002
        return functional.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
