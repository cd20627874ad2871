"""``jitgrad.fft``: torch.fft's discrete Fourier transforms, differentiable.

The same transforms as ``jitgrad.numpy.fft`` (the rows and their derivative rules are in
``jitgrad/ops/fft.py``) under torch's names and arguments: ``input``, ``n``/``s`` (sizes: the
input is cropped or zero-padded to them; ``-1`` in ``s`` keeps a dim's size), ``dim`` (an int
or a sequence of unique dims; ``fftn`` with ``s`` and no ``dim`` transforms the last
``len(s)`` dims), ``norm`` (``"backward"``: no scaling forward, ``1/n`` inverse;
``"ortho"``: ``1/sqrt(n)`` both ways; ``"forward"``: ``1/n`` forward) and ``out=`` (written
without autograd). Real inputs give complex128 (float64) or complex64 (float32) spectra; the
gradients follow PyTorch's convention for complex functions (the adjoint of each linear map:
Note [fft adjoints] in ``jitgrad/ops/fft.py``).
"""
from __future__ import annotations

import numbers

from . import dtypes as _dtypes
from .numpy import fft as _np_fft
from .ops import creation as _creation
from .ops import special_torch as _special_torch
from .tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")


def _input(input):
    return input if isinstance(input, Tensor) else _creation.as_tensor(input)


def _norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _real_input(name, x):
    if x.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{_dtypes.to_dtype(x.dtype).name} (use fft for complex input)")


def _points(n):
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dims(name, x, s, dim):
    """The (non-negative, unique) dims and the sizes of an n-d transform, as torch reads
    ``s`` and ``dim``."""
    if isinstance(dim, numbers.Integral):
        dim = (dim,)
    if s is not None:
        s = [int(k) for k in s]
        if dim is None:
            dim = range(x.ndim - len(s), x.ndim)
        elif len(dim) != len(s):
            raise RuntimeError(f"{name}: when given, dim and shape arguments must have the same "
                               f"length (got s={tuple(s)}, dim={tuple(dim)})")
        for k in s:
            if k != -1:
                _points(k)
    elif dim is None:
        dim = range(x.ndim)
    dims = []
    for d in dim:
        d = int(d)
        if not -x.ndim <= d < x.ndim:
            raise IndexError(f"{name}: Dimension out of range (expected to be in range of "
                             f"[{-x.ndim}, {x.ndim - 1}], but got {d})")
        dims.append(d % x.ndim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{name}: FFT dims must be unique (got dim={tuple(dim)})")
    return s, dims


def _one_d(name, numpy_fn, real=False):
    def transform(input, n=None, dim=-1, norm=None, *, out=None):
        x = _input(input)
        if real:
            _real_input(name, x)
        result = numpy_fn(x, _points(n), dim, _norm(norm))
        return _special_torch.write_result(f"fft_{name}", result, out)
    return transform


def _n_d(name, numpy_fn, default_dim, real=False):
    def transform(input, s=None, dim=default_dim, norm=None, *, out=None):
        x = _input(input)
        if real:
            _real_input(name, x)
        s, dims = _dims(name, x, s, dim)
        result = numpy_fn(x, s, dims, _norm(norm))
        return _special_torch.write_result(f"fft_{name}", result, out)
    return transform


def _public(fn, name, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


fft = _public(_one_d("fft", _np_fft.fft), "fft", """1-D discrete Fourier transform of ``input``
along ``dim``, cropped or zero-padded to ``n`` points: ``X_k = c sum_j x_j exp(-2 pi i j k / n)``
(``c`` = 1, ``1/sqrt(n)``, ``1/n`` for norm "backward", "ortho", "forward").
Derivative: the adjoint, ``n * ifft(g)`` for "backward" (the real part for a real input).""")
ifft = _public(_one_d("ifft", _np_fft.ifft), "ifft", """1-D inverse transform
``x_j = c sum_k X_k exp(2 pi i j k / n)`` (``c = 1/n`` for norm "backward").
Derivative: the adjoint, ``fft(g) / n`` for "backward".""")
rfft = _public(_one_d("rfft", _np_fft.rfft, real=True), "rfft", """1-D transform of a real
``input``: the ``n // 2 + 1`` non-negative frequency bins of ``fft``.
Derivative: the real part of the adjoint of ``fft`` applied to the zero-extended half
spectrum.""")
irfft = _public(_one_d("irfft", _np_fft.irfft), "irfft", """Inverse of ``rfft``: a real signal
of ``n`` points (default ``2 (m - 1)`` for ``m`` input bins) from a half spectrum (the
imaginary parts of bins 0 and ``n/2`` are ignored). Derivative: ``W rfft(g)`` with the dual
norm, ``W`` = 2 on the bins that stand for two, 1 on bins 0 and ``n/2``.""")
hfft = _public(_one_d("hfft", _np_fft.hfft), "hfft", """Transform of a Hermitian-symmetric
signal given by its first half: the real spectrum ``irfft(conj(input))`` with the opposite
scaling (``n`` defaults to ``2 (m - 1)``). Derivative through those two maps.""")
ihfft = _public(_one_d("ihfft", _np_fft.ihfft, real=True), "ihfft", """Inverse of ``hfft``:
``conj(rfft(input))`` with the opposite scaling, of a real ``input``.""")
fft2 = _public(_n_d("fft2", _np_fft.fftn, (-2, -1)), "fft2", """2-D transform over ``dim``
(the last two dims by default): ``fftn`` over two dims.""")
ifft2 = _public(_n_d("ifft2", _np_fft.ifftn, (-2, -1)), "ifft2", """2-D inverse transform
(``ifftn`` over two dims).""")
fftn = _public(_n_d("fftn", _np_fft.fftn, None), "fftn", """N-D transform over ``dim`` (all
dims, or the last ``len(s)`` when only ``s`` is given), each cropped or padded to ``s``: the
1-D transform along each dim in turn. Derivative: the adjoint (``ifftn`` with the dual norm,
resized back).""")
ifftn = _public(_n_d("ifftn", _np_fft.ifftn, None), "ifftn", """N-D inverse transform.
Derivative: ``fftn`` with the dual norm, resized back.""")
rfft2 = _public(_n_d("rfft2", _np_fft.rfftn, (-2, -1), real=True), "rfft2", """2-D transform
of a real ``input``, halved along the last dim (``rfftn`` over two dims).""")
irfft2 = _public(_n_d("irfft2", _np_fft.irfftn, (-2, -1)), "irfft2", """2-D inverse of
``rfft2`` (``irfftn`` over two dims).""")
rfftn = _public(_n_d("rfftn", _np_fft.rfftn, None, real=True), "rfftn", """N-D transform of a
real ``input``; the last transformed dim keeps bins ``0..s[-1] // 2``. Derivative: the real part
of the adjoint of ``fftn`` on the zero-extended half spectrum.""")
irfftn = _public(_n_d("irfftn", _np_fft.irfftn, None), "irfftn", """Inverse of ``rfftn``: a
real tensor of sizes ``s`` (last: ``2 (m - 1)`` by default) from a half spectrum.
Derivative: ``W rfftn(g)`` with the dual norm, resized back (see ``irfft``).""")


def _shift_dims(x, dim):
    if dim is None:
        return None
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    return tuple(int(d) % x.ndim for d in dims)


def fftshift(input, dim=None):
    """Move the zero-frequency bin to the centre of ``dim`` (all dims by default): a roll by
    ``n // 2``. Derivative: ``g`` rolled back."""
    x = _input(input)
    return _np_fft.fftshift(x, _shift_dims(x, dim))


def ifftshift(input, dim=None):
    """Inverse of ``fftshift``: a roll by ``-(n // 2)``. Derivative: ``g`` rolled back."""
    x = _input(input)
    return _np_fft.ifftshift(x, _shift_dims(x, dim))


def _frequencies(name, numpy_fn, n, d, out, dtype, device, requires_grad):
    values = numpy_fn(n, d, device=device)
    dtype = _dtypes.get_default_dtype() if dtype is None else dtype
    result = _creation.tensor(values, dtype=dtype, requires_grad=requires_grad)
    return _special_torch.write_result(name, result, out)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point ``fft`` with sample spacing ``d``:
    ``[0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n)`` (default float dtype)."""
    return _frequencies("fft_fftfreq", _np_fft.fftfreq, n, d, out, dtype, device,
                        requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point ``rfft``: ``[0, 1, ..., n // 2] / (d n)``."""
    return _frequencies("fft_rfftfreq", _np_fft.rfftfreq, n, d, out, dtype, device,
                        requires_grad)
