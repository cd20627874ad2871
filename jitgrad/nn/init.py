"""``jitgrad.nn.init``: in-place initialisers with PyTorch's names, formulas and defaults.

Every initialiser fills the tensor's storage in place without recording a graph (as under
``no_grad``), bumps its version counter and returns it. Random draws come from jitgrad's
generator (``jitgrad.manual_seed``), or from ``generator`` (a ``numpy.random.Generator``).
"""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np

from ..ops import creation as _creation
from ..ops.core.upper import guard_writes

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "uniform", "normal", "constant", "eye", "dirac",
           "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
           "skipped"]

_skip_depth = 0  # > 0 inside ``skipped()``


@contextlib.contextmanager
def skipped():
    """Within this block the initialisers write nothing and leave the global generator alone
    (``nn.utils.skip_init``)."""
    global _skip_depth
    _skip_depth += 1
    try:
        yield
    finally:
        _skip_depth -= 1


def _rng(generator, tensor):
    """The generator to draw ``tensor``'s new values from, once the write is allowed (asked
    before the draw, so a refused write draws nothing). Inside ``skipped()`` a throwaway one
    (the values are not written)."""
    if _skip_depth:
        return np.random.default_rng(0)
    guard_writes(tensor)
    return generator if generator is not None else _creation.generator()


def _fill(tensor, values):
    from ..ops.core import dispatch

    if _skip_depth:
        return tensor
    guard_writes(tensor)
    data = tensor._data  # device read: written in place (write guarded)
    if dispatch.device_of(data) != "cpu":  # drawn on the host, copied in (as a seed's values
        # are the same on every device)
        host = np.broadcast_to(np.asarray(values), data.shape).astype(data.dtype)
        dispatch.cuda_backend().copy_into(data, dispatch.move(host, tensor.device))
    else:
        np.copyto(data, values, casting="unsafe")
    tensor._version_counter.bump()
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + a^2)) for leaky_relu (a = param, default 0.01), 3/4 for
    selu."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with U(a, b)."""
    return _fill(tensor, _rng(generator, tensor).uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with N(mean, std^2)."""
    return _fill(tensor, _rng(generator, tensor).normal(mean, std, tensor.shape))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with N(mean, std^2) conditioned on [a, b] (rejection sampling: draws outside the
    interval are redrawn)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    rng = _rng(generator, tensor)
    out = rng.normal(mean, std, tensor.shape)
    for _ in range(1000):
        bad = (out < a) | (out > b)
        if not bad.any():
            break
        out[bad] = rng.normal(mean, std, int(bad.sum()))
    return _fill(tensor, np.clip(out, a, b))


def constant_(tensor, val):
    """Fill with ``val``."""
    return _fill(tensor, val)


def ones_(tensor):
    """Fill with 1."""
    return _fill(tensor, 1)


def zeros_(tensor):
    """Fill with 0."""
    return _fill(tensor, 0)


def eye_(tensor):
    """The identity matrix (2-d tensors only; ones on the main diagonal of a rectangular
    one)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """The Dirac delta kernel of a 3-, 4- or 5-d convolution weight ``(out, in, *k)``: in each
    of the ``groups`` groups of ``out / groups`` output channels, output channel ``d`` gets a
    1 at input channel ``d`` and the kernel centre (``k // 2``), so the convolution is the
    identity on the first ``min(out / groups, in)`` channels."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_channels = tensor.shape[0]
    if groups <= 0 or out_channels % groups:
        raise ValueError(f"dirac_: dim 0 ({out_channels}) must be divisible by groups "
                         f"({groups})")
    per_group = out_channels // groups
    centre = tuple(k // 2 for k in tensor.shape[2:])
    values = np.zeros(tensor.shape)
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d) + centre] = 1.0
    return _fill(tensor, values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with ``a = gain sqrt(6 / (fan_in + fan_out))`` (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with ``std = gain sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b) with ``b = gain sqrt(3 / fan)`` (He et al., 2015); ``a`` is the negative slope
    of the leaky_relu gain. PyTorch's default init of Linear/Conv weights is ``a = sqrt(5)``,
    i.e. ``b = 1 / sqrt(fan_in)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with ``std = gain / sqrt(fan)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a normal sample (Saxe et al.,
    2013), scaled by ``gain``; trailing dims are flattened."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator, tensor).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def _deprecated(new):
    """PyTorch's old spelling of the initialiser ``new`` (without the trailing underscore):
    the same function, with a FutureWarning."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__module__ = new.__module__
    deprecated_init.__doc__ = (f"Deprecated: use ``{new.__name__}`` (this spelling warns).\n\n"
                               + (new.__doc__ or ""))
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
