"""``jitgrad.numpy.fft``: NumPy's discrete Fourier transforms, differentiable.

``fft ifft rfft irfft hfft ihfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn`` take NumPy's
arguments (``n``/``s``, ``axis``/``axes``, ``norm`` = "backward" | "ortho" | "forward") and
return complex (or, for ``irfft*``/``hfft``, real) Tensors computed by ``numpy.fft``; the rows
and their derivative rules are in ``jitgrad/ops/fft.py`` (PyTorch's convention for complex
gradients, see ``jitgrad/ops/complex.py``). ``fftshift``/``ifftshift`` are rolls (gradient
rolled back); ``fftfreq``/``rfftfreq`` are constants. ``numpy.fft.fft(tensor)`` dispatches here.
"""
from __future__ import annotations

import sys
import warnings

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index as _axis_index

from ..ops import complex as _complex_ops
from ..ops import fft as _fft_ops
from ..ops.core import upper as _upper
from ..tensor import Tensor
from . import _plain
from ._passthrough import mark as _mark
from ._shape import roll as _roll

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def _t(a) -> Tensor:
    return a if isinstance(a, Tensor) else _constant(a)


@_upper.constant_maker
def _constant(a) -> Tensor:
    """A constant Tensor of the Tensor-free data ``a``."""
    return Tensor._make(_np.asarray(a))


def _no_out(name, out) -> None:
    if out is not None:
        raise TypeError(f"jitgrad.numpy.fft.{name}: out= is not supported (writes into complex "
                        "tensors are not recorded yet); use the returned Tensor")


def _check_n(n) -> int:
    n = int(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _user_level() -> int:
    """The ``stacklevel`` of the first caller outside this module and the public functions'
    wrappers (``_plain.py``), for ``_cook``'s warnings: the transforms call each other, so the
    depth varies."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in (__file__, _plain.__file__):
        frame, level = frame.f_back, level + 1
    return level


def _cook(x, s, axes, invreal=False):
    """NumPy's ``_cook_nd_args``: the transform sizes and (non-negative) axes, with NumPy's
    deprecation warnings for ``s`` without ``axes`` and ``None`` entries in ``s``."""
    shapeless = s is None
    if s is None:
        s = list(x.shape) if axes is None else [x.shape[a] for a in axes]
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy "
                          "2.0). In a future version of NumPy, this will raise an error and "
                          "`s[i]` will correspond to the size along the transformed axis "
                          "specified by `axes[i]`. To retain current behaviour, pass a sequence "
                          "[0, ..., k-1] to `axes` for an array of dimension k.",
                          DeprecationWarning, stacklevel=_user_level())
        axes = list(range(-len(s), 0))
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    axes = [_axis_index(int(a), x.ndim) for a in axes]
    if invreal and shapeless:
        s[-1] = (x.shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in NumPy "
                      "2.0 and will raise an error in a future version of NumPy.",
                      DeprecationWarning, stacklevel=_user_level())
    last = len(s) - 1
    s = [(2 * (x.shape[a] - 1) if invreal and k == last else x.shape[a]) if n is None
         else x.shape[a] if n == -1 else n for k, (n, a) in enumerate(zip(s, axes))]
    return [_check_n(n) for n in s], axes


def _unique(axes) -> bool:
    return len(set(axes)) == len(axes)


# --- complex to complex ----------------------------------------------------------------------
def _c2c_nd(a, s, axes, norm, inverse):
    x = _t(a)
    s, axes = _cook(x, s, axes)
    norm = _fft_ops.check_norm(norm)
    if _unique(axes):
        return _fft_ops.c2c(x, s, axes, norm, inverse)
    for k in reversed(range(len(axes))):  # repeated axes: NumPy's order, one axis at a time
        x = _fft_ops.c2c(x, (s[k],), (axes[k],), norm, inverse)
    return x


def _c2c_1d(a, n, axis, norm, inverse):
    x = _t(a)
    axis = _axis_index(int(axis), x.ndim)
    n = x.shape[axis] if n is None else _check_n(n)
    return _fft_ops.c2c(x, (n,), (axis,), _fft_ops.check_norm(norm), inverse)


def fft(a, n=None, axis=-1, norm=None, out=None):
    """1-D discrete Fourier transform ``y_k = c sum_j x_j exp(-2 pi i jk/n)`` (``c`` from
    ``norm``: 1, 1/sqrt(n) or 1/n), of ``a`` cropped/zero-padded to ``n``.

    Gradient (PyTorch's convention): the adjoint, ``n * ifft(g)`` for norm="backward", then
    cropped/padded back; a real input gets its real part."""
    _no_out("fft", out)
    return _c2c_1d(a, n, axis, norm, False)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """1-D inverse transform ``x_j = c sum_k y_k exp(2 pi i jk/n)`` (``c`` = 1/n for
    norm="backward"). Gradient: ``fft(g) / n`` for norm="backward" (the adjoint)."""
    _no_out("ifft", out)
    return _c2c_1d(a, n, axis, norm, True)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """N-D transform over ``axes`` (all by default) with sizes ``s``. Gradient: the adjoint
    (``ifftn`` with the dual norm, resized back)."""
    _no_out("fftn", out)
    return _c2c_nd(a, s, axes, norm, False)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """N-D inverse transform. Gradient: ``fftn`` with the dual norm, resized back."""
    _no_out("ifftn", out)
    return _c2c_nd(a, s, axes, norm, True)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """2-D transform (``fftn`` over the last two axes)."""
    _no_out("fft2", out)
    return _c2c_nd(a, s, axes, norm, False)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """2-D inverse transform (``ifftn`` over the last two axes)."""
    _no_out("ifft2", out)
    return _c2c_nd(a, s, axes, norm, True)


# --- real input / real output ----------------------------------------------------------------
def rfftn(a, s=None, axes=None, norm=None, out=None):
    """N-D transform of a real array; the last axis keeps bins ``0..s[-1]//2``.

    Gradient: the real part of the adjoint of the full transform applied to the zero-extended
    half spectrum (``ops/fft.py``, Note [fft adjoints])."""
    _no_out("rfftn", out)
    x = _t(a)
    s, axes = _cook(x, s, axes)
    norm = _fft_ops.check_norm(norm)
    if _unique(axes):
        return _fft_ops.r2c(x, s, axes, norm)
    x = _fft_ops.r2c(x, s[-1:], axes[-1:], norm)  # repeated axes: NumPy's order
    for k in range(len(axes) - 2, -1, -1):
        x = _fft_ops.c2c(x, (s[k],), (axes[k],), norm, False)
    return x


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """Inverse of ``rfftn``: a real array of sizes ``s`` (last: ``2 (m - 1)`` by default) from a
    half spectrum (imaginary parts of bins 0 and n/2 are ignored, as NumPy).

    Gradient: ``W rfftn(g, dual norm)`` resized back, ``W`` doubling the bins that stand for
    two (``ops/fft.py``, Note [fft adjoints])."""
    _no_out("irfftn", out)
    x = _t(a)
    s, axes = _cook(x, s, axes, invreal=True)
    norm = _fft_ops.check_norm(norm)
    if _unique(axes):
        return _fft_ops.c2r(x, s, axes, norm)
    for k in range(len(axes) - 1):  # repeated axes: NumPy's order
        x = _fft_ops.c2c(x, (s[k],), (axes[k],), norm, True)
    return _fft_ops.c2r(x, s[-1:], axes[-1:], norm)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """1-D transform of a real array (bins ``0..n//2``); see ``rfftn``."""
    _no_out("rfft", out)
    x = _t(a)
    return rfftn(x, None if n is None else [n], [axis], norm)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """1-D inverse of ``rfft`` (``n`` defaults to ``2 (m - 1)``); see ``irfftn``."""
    _no_out("irfft", out)
    x = _t(a)
    return irfftn(x, None if n is None else [n], [axis], norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """2-D ``rfftn`` over the last two axes."""
    _no_out("rfft2", out)
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """2-D ``irfftn`` over the last two axes."""
    _no_out("irfft2", out)
    return irfftn(a, s, axes, norm)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """Transform of a Hermitian-symmetric signal given by its first half: a real array,
    ``irfft(conj(a), n, norm=swapped)`` as NumPy (gradient through those two ops)."""
    _no_out("hfft", out)
    x = _t(a)
    if n is None:
        n = (x.shape[_axis_index(int(axis), x.ndim)] - 1) * 2
    return irfft(_complex_ops.conj(x), n, axis, _fft_ops.DUAL[_fft_ops.check_norm(norm)])


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """Inverse of ``hfft``: ``conj(rfft(a, n, norm=swapped))`` of a real array, as NumPy."""
    _no_out("ihfft", out)
    return _complex_ops.conj(rfft(a, n, axis, _fft_ops.DUAL[_fft_ops.check_norm(norm)]))


# --- helpers ----------------------------------------------------------------------------------
def _shift(x, axes, sign):
    x = _t(x)
    axes = tuple(range(x.ndim)) if axes is None else tuple(_np.atleast_1d(axes).tolist())
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return _roll(x, shifts, axes)


def fftshift(x, axes=None):
    """Move the zero-frequency term to the centre (a roll by ``n // 2``; gradient rolled back)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of ``fftshift`` (a roll by ``-(n // 2)``)."""
    return _shift(x, axes, -1)


@_upper.constant_maker
def _freq(fn, n, d):
    """NumPy's ``fn(n, d)`` for a number ``d`` (a constant Tensor); for a Tensor ``d`` (under
    jitgrad.compile a float argument is a 0-d input) the integer frequencies, to be scaled."""
    if isinstance(d, Tensor):
        return Tensor._make(_np.rint(fn(n) * n))  # the integers 0, 1, ...
    return Tensor._make(fn(n, d))


@_mark
def fftfreq(n, d=1.0, device=None):
    """Sample frequencies ``[0, 1, ..., n//2 - 1 (or n//2), -(n//2), ..., -1] / (d n)`` (a
    constant Tensor for a number ``d``; ``device`` must be None or the CPU)."""
    _cpu_only(device)
    return _scaled(_freq(_np.fft.fftfreq, n, d), n, d)


@_mark
def rfftfreq(n, d=1.0, device=None):
    """Sample frequencies for ``rfft``: ``[0, 1, ..., n//2] / (d n)`` (a constant Tensor for a
    number ``d``)."""
    _cpu_only(device)
    return _scaled(_freq(_np.fft.rfftfreq, n, d), n, d)


def _scaled(f, n, d):
    # NumPy's arithmetic: the integers times ``1 / (n d)``
    return f * (1.0 / (n * d)) if isinstance(d, Tensor) else f


def _cpu_only(device) -> None:
    if device is not None and str(getattr(device, "type", device)) != "cpu":
        raise ValueError(f"jitgrad.numpy.fft: device {device!r} is not supported here (only 'cpu')")
