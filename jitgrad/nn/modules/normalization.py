"""``BatchNorm1d``, ``BatchNorm2d`` and ``LayerNorm``."""
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


class _BatchNorm(Module):
    _dims = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        device = _check_device(device)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.use_bias = affine and bias
        if affine:
            self.weight = Parameter(_empty((num_features,), dtype))
            if bias:
                self.bias = Parameter(_empty((num_features,), dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
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
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

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
        if elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, dtype))
            if bias:
                self.bias = Parameter(_empty(self.normalized_shape, dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()
        _place(self, device)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        return functional.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias="
                f"{self.use_bias if self.elementwise_affine else False}")
