"""The CUDA forwards of the ``ops.reduce`` and ``ops.extrema`` rows (their ``cuda_forward=``).

Each mirrors its CPU forward in ``ops.reduce`` / ``ops.extrema`` (same ctx attributes, dtypes,
shapes and empty-reduction values and errors) over ``kernels.cuda.reduce`` (reached lazily: Note
[lazy cuda]), which reads any strided input in place: no ``to3`` copy. float16 is reduced in
float32 and cast back, as on the CPU.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from .core import dispatch
from .reduce_common import out_shape, stash_reduction


def cuda_kernels():
    return dispatch.cuda_kernels("reduce")


def cuda_in(a):
    """The operand a CUDA reduction reads: float16 is reduced in float32."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _cuda_finish(res, a, shape):
    res = res.reshape(shape)
    if a.dtype == np.float16 and res.dtype == np.float32:
        res = res.astype(np.float16)
    return res


def _fold_cuda(name):
    def forward(ctx, x, dims, keepdim, dtype):
        shape = stash_reduction(ctx, x, dims, keepdim)
        out_np = None if dtype is None or dtype is dtypes.float16 else dtype.np
        fn = getattr(cuda_kernels(), name)
        res = _cuda_finish(fn(cuda_in(x), dims, out_np), x, shape)
        return res if dtype is None else res.astype(dtype.np, copy=False)
    return forward


def mean_forward(ctx, x, dims, keepdim):
    shape = stash_reduction(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    kernels = cuda_kernels()
    s = kernels.divide(kernels.reduce_sum(cuda_in(x), dims), ctx.n)  # 0/0 = nan when empty
    return _cuda_finish(s, x, shape)


def _cuda_extreme(x, dims, kind):
    kernels = cuda_kernels()
    return (kernels.reduce_max if kind == "max" else kernels.reduce_min)(cuda_in(x), dims)


def extreme_dim_forward(ctx, x, dims, keepdim, kind):
    shape = stash_reduction(ctx, x, dims, keepdim)
    vals, idx = _cuda_extreme(x, dims, kind)
    ctx.indices = idx.reshape(ctx.keep_shape)  # where the backward scatters the gradient
    return _cuda_finish(vals, x, shape).astype(x.dtype, copy=False), idx.reshape(shape)


def extreme_values_forward(ctx, x, dims, keepdim, kind):
    shape = stash_reduction(ctx, x, dims, keepdim)
    return _cuda_finish(_cuda_extreme(x, dims, kind)[0], x, shape).astype(x.dtype, copy=False)


def var_forward(ctx, x, dims, keepdim, correction, sqrt):
    shape = stash_reduction(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    if ctx.n - correction <= 0:  # (stacklevel: one frame deeper than the CPU forward's)
        warnings.warn(f"{'std' if sqrt else 'var'}(): degrees of freedom is <= 0. Correction "
                      "should be strictly less than the reduction factor (input numel divided by "
                      "output numel).", UserWarning, stacklevel=5)
    kernels = cuda_kernels()
    res = kernels.reduce_var(cuda_in(x), dims, correction)
    if sqrt:
        res = kernels.sqrt(res)
    return _cuda_finish(res, x, shape)


def logsumexp_forward(ctx, x, dims, keepdim):
    shape = stash_reduction(ctx, x, dims, keepdim)
    return _cuda_finish(cuda_kernels().reduce_logsumexp(cuda_in(x), dims), x, shape)


def scatter_forward(ctx, g, index, dim, shape):
    return cuda_kernels().index_scatter(g, index, dim, shape)


def gather_forward(ctx, x, index, dim):
    ctx.in_shape = x.shape
    return cuda_kernels().take_along_dim(x, index, dim)


sum_forward = _fold_cuda("reduce_sum")
prod_forward = _fold_cuda("reduce_prod")


def arg_forward(ctx, x, dims, keepdim, kind):
    """``argmax``/``argmin`` (``kind``) of a CUDA array over ``dims``: the index half of the
    device's max/min reduction."""
    kernels = cuda_kernels()
    _, idx = (kernels.reduce_max if kind == "max" else kernels.reduce_min)(cuda_in(x), dims)
    return idx.reshape(out_shape(x.shape, dims, keepdim))
