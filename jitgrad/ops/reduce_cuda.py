"""The CUDA forwards of the ``ops.reduce`` rows (``OpDef.cuda_forward``).

Each mirrors its CPU forward in ``ops.reduce`` (same ctx attributes, dtypes, shapes and
empty-reduction values and errors) over ``device.cuda_reduce`` (reached lazily: Note [lazy
cuda]), which reads any strided input in place: no ``_to3`` copy. float16 is reduced in float32
and cast back, as on the CPU.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes
from . import reduce as R


def _cuda_finish(res, a, shape):
    res = res.reshape(shape)
    if a.dtype == np.float16 and res.dtype == np.float32:
        res = res.astype(np.float16)
    return res


def _fold_cuda(name):
    def forward(ctx, x, dims, keepdim, dtype):
        shape = R._stash(ctx, x, dims, keepdim)
        out_np = None if dtype is None or dtype is dtypes.float16 else dtype.np
        fn = getattr(R._cuda_kernels(), name)
        res = _cuda_finish(fn(R._cuda_in(x), dims, out_np), x, shape)
        return res if dtype is None else res.astype(dtype.np, copy=False)
    return forward


def _mean_cuda(ctx, x, dims, keepdim):
    shape = R._stash(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    kernels = R._cuda_kernels()
    s = kernels.divide(kernels.reduce_sum(R._cuda_in(x), dims), ctx.n)  # 0/0 = nan when empty
    return _cuda_finish(s, x, shape)


def _cuda_extreme(x, dims, kind):
    kernels = R._cuda_kernels()
    return (kernels.reduce_max if kind == "max" else kernels.reduce_min)(R._cuda_in(x), dims)


def _extreme_dim_cuda(ctx, x, dims, keepdim, kind):
    shape = R._stash(ctx, x, dims, keepdim)
    vals, idx = _cuda_extreme(x, dims, kind)
    ctx.indices = idx.reshape(ctx.keep_shape)  # where the backward scatters the gradient
    return _cuda_finish(vals, x, shape).astype(x.dtype, copy=False), idx.reshape(shape)


def _extreme_values_cuda(ctx, x, dims, keepdim, kind):
    shape = R._stash(ctx, x, dims, keepdim)
    return _cuda_finish(_cuda_extreme(x, dims, kind)[0], x, shape).astype(x.dtype, copy=False)


def _var_cuda(ctx, x, dims, keepdim, correction, sqrt):
    shape = R._stash(ctx, x, dims, keepdim)
    ctx.n = math.prod(x.shape[d] for d in dims)
    if ctx.n - correction <= 0:  # (stacklevel: one frame deeper than the CPU forward's)
        warnings.warn(f"{'std' if sqrt else 'var'}(): degrees of freedom is <= 0. Correction "
                      "should be strictly less than the reduction factor (input numel divided by "
                      "output numel).", UserWarning, stacklevel=5)
    kernels = R._cuda_kernels()
    res = kernels.reduce_var(R._cuda_in(x), dims, correction)
    if sqrt:
        res = kernels.sqrt(res)
    return _cuda_finish(res, x, shape)


def _lse_cuda(ctx, x, dims, keepdim):
    shape = R._stash(ctx, x, dims, keepdim)
    return _cuda_finish(R._cuda_kernels().reduce_logsumexp(R._cuda_in(x), dims), x, shape)


def _scatter_cuda(ctx, g, index, dim, shape):
    return R._cuda_kernels().index_scatter(g, index, dim, shape)


def _gather_cuda(ctx, x, index, dim):
    ctx.in_shape = x.shape
    return R._cuda_kernels().take_along_dim(x, index, dim)


def register() -> None:
    """Attach the forwards to the rows (called once by ``ops.reduce``)."""
    for _row in (R.SUM, R.SUM_DIM):
        _row.cuda_forward = _fold_cuda("reduce_sum")
    for _row in (R.PROD, R.PROD_DIM):
        _row.cuda_forward = _fold_cuda("reduce_prod")
    for _row in (R.MEAN, R.MEAN_DIM):
        _row.cuda_forward = _mean_cuda
    for _row in (R.MAX, R.MIN, R.AMAX, R.AMIN):
        _row.cuda_forward = _extreme_values_cuda
    for _row in (R.MAX_DIM, R.MIN_DIM):
        _row.cuda_forward = _extreme_dim_cuda
    for _row in (R.VAR, R.STD):
        _row.cuda_forward = _var_cuda
    R.LOGSUMEXP.cuda_forward = _lse_cuda
    R._SCATTER.cuda_forward = _scatter_cuda
    R._GATHER.cuda_forward = _gather_cuda
