"""``jitgrad.scipy.signal``: ``convolve correlate fftconvolve convolve2d correlate2d``,
differentiable in both inputs (and in ``fillvalue``), SciPy's signatures and output shapes.

The gradient of a convolution is a correlation of the incoming gradient with the other input
(``jitgrad.ops.scipy_signal``); ``correlate(x, w) = convolve(x, flip(w))`` for real inputs."""
from __future__ import annotations

import numpy as _np

from ..ops import npfuncs as _npfuncs
from ..ops import reduce as _reduce_ops
from ..ops import scipy_signal as _signal_ops
from ..ops.core import upper as _upper
from ..tensor import Tensor

__all__ = ["convolve", "correlate", "fftconvolve", "convolve2d", "correlate2d"]


def _t(x):
    return x if isinstance(x, Tensor) else _constant(x)


@_upper.constant_maker
def _constant(x):
    """A constant float Tensor of the Tensor-free data ``x``."""
    x = _np.asarray(x)
    return Tensor._make(_np.asarray(x, dtype=_np.result_type(x, 0.0)))


def convolve(in1, in2, mode="full", method="auto"):
    """N-d convolution ``y[n] = sum_k in1[k] in2[n - k]``, ``mode`` ``'full'`` (shape
    ``N1 + N2 - 1``), ``'same'`` (shape of ``in1``, centred) or ``'valid'`` (``|N1 - N2| + 1``);
    gradients ``dL/din1 = convolve(G, flip(in2), 'valid')`` and likewise for ``in2``, ``G``
    the incoming gradient embedded in the full output."""
    return _signal_ops.convolve(_t(in1), _t(in2), mode, method)


def correlate(in1, in2, mode="full", method="auto"):
    """N-d cross-correlation ``z[k] = sum_n in1[n + k] in2[n]`` (SciPy's offsets), computed as
    ``convolve(in1, flip(in2))``; real inputs."""
    return _signal_ops.convolve(_t(in1), _npfuncs.flip(_t(in2)), mode, method)


def fftconvolve(in1, in2, mode="full", axes=None):
    """``convolve(in1, in2, mode, method='fft')`` (``axes`` must be None: every axis)."""
    if axes is not None:
        raise NotImplementedError("fftconvolve: only axes=None (convolve along every axis) is "
                                  "supported")
    return _signal_ops.convolve(_t(in1), _t(in2), mode, "fft")


def _two_d(fn, in1, in2, mode, boundary, fillvalue, flip):
    in1, in2 = _t(in1), _t(in2)
    if in1.ndim != 2 or in2.ndim != 2:
        raise ValueError(f"{fn}: inputs must both be 2-D arrays, got {in1.ndim}-D and "
                         f"{in2.ndim}-D")
    if boundary not in ("fill", "pad"):
        raise NotImplementedError(f"{fn}: boundary={boundary!r} is not supported (only 'fill', "
                                  "with any fillvalue); pad the input explicitly with "
                                  "jitgrad.numpy.pad and use mode='valid'")
    crop = None
    if flip:
        in2 = _npfuncs.flip(in2)
        if mode == "same":  # correlate2d centres 'same' at ceil((N2 - 1) / 2), not floor
            crop = tuple(slice(m // 2, m // 2 + n) for n, m in zip(in1.shape, in2.shape))
            mode = "full"
    if isinstance(fillvalue, Tensor) or fillvalue != 0:
        # padding with c = (in1 - c) padded with zeros + c everywhere, whose convolution is
        # c * sum(in2) at every output position
        fv = _t(fillvalue)
        out = (_signal_ops.convolve(in1 - fv, in2, mode, "direct")
               + fv * _reduce_ops.sum(in2))
    else:
        out = _signal_ops.convolve(in1, in2, mode, "direct")
    return out if crop is None else out[crop]


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-D convolution (``scipy.signal.convolve2d``), ``boundary='fill'`` with any
    ``fillvalue`` ``c`` (also differentiable: the output is ``convolve(in1 - c, in2) +
    c sum(in2)``)."""
    return _two_d("convolve2d", in1, in2, mode, boundary, fillvalue, False)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """2-D cross-correlation (``scipy.signal.correlate2d``), ``boundary='fill'``."""
    return _two_d("correlate2d", in1, in2, mode, boundary, fillvalue, True)
