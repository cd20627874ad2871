"""PyTorch's window functions and the constructors jitgrad lacked (issue 35):
``bartlett_window blackman_window hamming_window hann_window kaiser_window`` (periodic by
default: the ``N + 1``-point symmetric window without its last point), ``logspace``,
``range``, ``scalar_tensor``, ``empty_strided``. Their results are constants of their
arguments (``upper.constant_maker``: a compile trace may bake them in).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .core import dispatch, upper


def _dtype(dtype) -> np.dtype:
    return (dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)).np


def _finish(array, dtype, device, requires_grad):
    out = dispatch.Tensor._make(np.array(array, dtype=_dtype(dtype), order="C"))
    if device is not None and str(device) != "cpu":
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _window(name, symmetric, window_length, periodic, dtype, device, requires_grad):
    n = int(window_length)
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    if dtype is not None and not dtypes.to_dtype(dtype).is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if n <= 1:
        return _finish(np.ones(n), dtype, device, requires_grad)
    values = symmetric(n + 1)[:-1] if periodic else symmetric(n)
    return _finish(values, dtype, device, requires_grad)


def _cosine_sum(*coefficients):
    """The symmetric window ``sum_k (-1)^k a_k cos(2 pi k i / (M - 1))``."""
    def symmetric(m):
        phase = 2 * np.pi * np.arange(m) / (m - 1)
        return sum((-1) ** k * a * np.cos(k * phase) for k, a in enumerate(coefficients))
    return symmetric


@upper.constant_maker
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """``0.5 - 0.5 cos(2 pi i / (N - 1))`` (periodic: ``N`` of an ``N + 1``-point window)."""
    return _window("hann_window", _cosine_sum(0.5, 0.5), window_length, periodic, dtype,
                   device, requires_grad)


@upper.constant_maker
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """``alpha - beta cos(2 pi i / (N - 1))`` (periodic by default)."""
    return _window("hamming_window", _cosine_sum(alpha, beta), window_length, periodic, dtype,
                   device, requires_grad)


@upper.constant_maker
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi i / (N - 1)) + 0.08 cos(4 pi i / (N - 1))``."""
    return _window("blackman_window", _cosine_sum(0.42, 0.5, 0.08), window_length, periodic,
                   dtype, device, requires_grad)


def _bartlett(m):
    return 1 - np.abs(2 * np.arange(m) / (m - 1) - 1)


@upper.constant_maker
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The triangular window ``1 - |2 i / (N - 1) - 1|``."""
    return _window("bartlett_window", _bartlett, window_length, periodic, dtype, device,
                   requires_grad)


@upper.constant_maker
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """``I0(beta sqrt(1 - (2 i / (N - 1) - 1)^2)) / I0(beta)``."""
    return _window("kaiser_window", lambda m: np.kaiser(m, beta), window_length, periodic,
                   dtype, device, requires_grad)


@upper.constant_maker
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` points ``base ** linspace(start, end, steps)``."""
    if int(steps) < 0:
        raise RuntimeError("number of steps must be non-negative")
    values = np.power(float(base), np.linspace(float(start), float(end), int(steps)))
    return _finish(values, dtype, device, requires_grad)


@upper.constant_maker
def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """``start, start + step, ...`` up to and including ``end`` (deprecated in PyTorch in
    favour of ``arange``, which excludes ``end``); the default float dtype."""
    if end is None:
        start, end = 0, start
    if step == 0 or (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    count = int(math.floor((end - start) / step)) + 1
    return _finish(start + step * np.arange(count), dtype, device, requires_grad)


@upper.constant_maker
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """A 0-d tensor holding ``s`` (the default float dtype unless ``dtype``)."""
    return _finish(np.asarray(s), dtype, device, requires_grad)


@upper.constant_maker
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of ``size`` (zeros here) whose strides are ``stride``
    (in elements), as a strided view of a buffer just large enough."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({len(stride)} vs "
                           f"{len(size)})")
    dt = _dtype(dtype)
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    buffer = np.zeros(extent, dtype=dt)
    view = np.lib.stride_tricks.as_strided(buffer, size, tuple(s * dt.itemsize for s in stride))
    out = dispatch.Tensor._make(view)
    if device is not None and str(device) != "cpu":
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


FUNCTIONS = (hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window,
             logspace, range, scalar_tensor, empty_strided)
