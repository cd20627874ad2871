"""Neural-network ops along one dim: softmax and log_softmax (numerically stable).

Forward: the input is laid out as ``(outer, r, inner)`` (a reshape: one dim is always
adjacent), the max and the sum of exponentials come from the ``device.cpu_reduce`` kernels and
the elementwise work is NumPy with ``out=`` (no extra temporaries). Backward rules are Tensor ops
on the saved output, so double backward works.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..device import cpu_reduce
from . import dispatch, unary
from . import reduce as _reduce
from .registry import def_composite


def _softmax_fwd(ctx, x, dim, log):
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    a = x.astype(np.float32) if x.dtype == np.float16 else x
    if a.ndim == 0:
        x3 = a.reshape(1, 1, 1)
    else:
        shape = a.shape
        x3 = np.ascontiguousarray(a).reshape(math.prod(shape[:dim]), shape[dim],
                                             math.prod(shape[dim + 1:]))
    m = cpu_reduce.reduce_max(x3)[0][:, None, :]
    z = x3 - m  # a fresh array: shifted so the largest exponent is 0
    if log:
        e = np.exp(z)
        z -= np.log(cpu_reduce.reduce_sum(e))[:, None, :]
    else:
        np.exp(z, out=z)
        z /= cpu_reduce.reduce_sum(z)[:, None, :]
    return z.reshape(x.shape).astype(x.dtype, copy=False)


def _softmax_bwd(ctx, g, result):
    return (result * (g - _reduce.sum(g * result, ctx.dim, keepdim=True)),)


def _log_softmax_bwd(ctx, g, result):
    return (g - result.exp() * _reduce.sum(g, ctx.dim, keepdim=True),)


SOFTMAX = def_composite("softmax", "SoftmaxBackward0", ("x",), _softmax_fwd, _softmax_bwd,
                        attrs=("dim", "log"), save=("result",))
LOG_SOFTMAX = def_composite("log_softmax", "LogSoftmaxBackward0", ("x",), _softmax_fwd,
                            _log_softmax_bwd, attrs=("dim", "log"), save=("result",))


def _prepare(op, x, dim, dtype):
    x = dispatch.tensor_operand(x, op)
    if dtype is not None:
        x = unary.cast(x, dtypes.to_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}(): expected a floating point input, got "
                           f"{_reduce.torch_dtype_name(x.dtype)} (pass dtype= to convert)")
    if dim is None:
        raise TypeError(f"{op}(): argument 'dim' must be an int, not None")
    dims = _reduce._dims(op, dim, x.ndim, multi=False)
    return x, dims[0] if dims else 0


def softmax(x, dim, dtype=None):
    """``exp(x_i - m) / sum_j exp(x_j - m)`` along ``dim`` with ``m = max_j x_j`` (stable).

    Float input only (``dtype`` casts first). Derivative (``y`` the output):
    ``y * (g - sum_j g_j y_j)``. Records ``SoftmaxBackward0``.
    """
    x, d = _prepare("softmax", x, dim, dtype)
    return dispatch.composite(SOFTMAX, x, dim=d, log=False)


def log_softmax(x, dim, dtype=None):
    """``x_i - m - log(sum_j exp(x_j - m))`` along ``dim`` with ``m = max_j x_j`` (stable).

    Float input only (``dtype`` casts first). Derivative (``y`` the output):
    ``g - exp(y) * sum_j g_j``. Records ``LogSoftmaxBackward0``.
    """
    x, d = _prepare("log_softmax", x, dim, dtype)
    return dispatch.composite(LOG_SOFTMAX, x, dim=d, log=True)
