"""The CUDA forwards of the ``ops.nn`` rows (their ``cuda_forward=``; those of ``ops.conv`` and
``ops.losses`` too): the same contract as the CPU forwards, over ``kernels.cuda.backend.CudaArray``
operands, with the kernels of ``kernels.cuda.nn`` / ``kernels.cuda.nn_norm`` (reached lazily:
Note [lazy cuda]); the convolution geometry from ``ops.nn_common``.

What the forwards stash on ``ctx`` for the backward rules (batch-norm / layer-norm statistics,
the NLL's total weight, max-pool indices) stays on the device. Checks that would need the data
on the host are made on the device instead, as PyTorch's device asserts (Note [device asserts]
in kernels/cuda/backend.py): NLL targets and embedding indices out of range raise at the next host read.
Binary cross-entropy inputs outside [0, 1] are not checked on CUDA.
"""
from __future__ import annotations

import math

import numpy as np

from .core import dispatch
from .nn_common import as4, conv_geometry, out_nd, planes_shape


def _k():
    return dispatch.cuda_kernels("nn")


def _kn():
    return dispatch.cuda_kernels("nn_norm")


# --- softmax, addmm, convolution ----------------------------------------------------------------
def softmax_forward(ctx, x, dim, log):
    return _k().softmax(x, dim, log)


def addmm_forward(ctx, bias, m1, m2):
    return _k().addmm(bias, m1, m2)


def convolution_forward(ctx, x, w, b, **p):
    geo = conv_geometry(x.shape, w.shape, p)
    if geo.Ho <= 0 or geo.Wo <= 0:
        raise RuntimeError(f"convolution: input size {tuple(x.shape[2:])} (with padding) is "
                           f"smaller than the kernel size {tuple(w.shape[2:])}")
    out = _k().conv_forward(x.reshape(as4(x.shape)), w.reshape(as4(w.shape)), b, geo)
    return out_nd(out, x.ndim)


def convolution_input_grad_forward(ctx, g, w, in_shape, **p):
    geo = conv_geometry(in_shape, w.shape, p)
    g4 = g.reshape(geo.N, geo.Co, geo.Ho, geo.Wo)
    return _k().conv_input_grad(g4, w.reshape(as4(w.shape)), geo).reshape(in_shape)


def convolution_weight_grad_forward(ctx, x, g, w_shape, **p):
    geo = conv_geometry(x.shape, w_shape, p)
    g4 = g.reshape(geo.N, geo.Co, geo.Ho, geo.Wo)
    return _k().conv_weight_grad(x.reshape(as4(x.shape)), g4, geo).reshape(w_shape)


# --- pooling --------------------------------------------------------------------------------------
def _planes(a):
    return a.reshape(-1, a.shape[-2], a.shape[-1])


def max_pool2d_forward(ctx, x, kernel, stride, padding, dilation, ceil_mode):
    out, idx = _k().maxpool_forward(_planes(x), kernel, stride, padding, dilation, ceil_mode)
    shape = x.shape[:-2] + out.shape[1:]
    ctx.indices, ctx.in_shape = idx.reshape(shape), x.shape
    return out.reshape(shape), ctx.indices


def max_pool2d_backward_forward(ctx, g, indices, in_shape):
    return _k().maxpool_backward(_planes(g), _planes(indices),
                                 planes_shape(in_shape)).reshape(in_shape)


def max_pool2d_gather_forward(ctx, gg, indices):
    ctx.in_shape = gg.shape
    return _k().maxpool_gather(_planes(gg), _planes(indices)).reshape(indices.shape)


def avg_pool2d_forward(ctx, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    ctx.in_shape = x.shape
    out = _k().avgpool(_planes(x), kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    return out.reshape(x.shape[:-2] + out.shape[1:])


def avg_pool2d_backward_forward(ctx, g, in_shape, kernel, stride, padding, ceil_mode,
                                count_include_pad, divisor):
    gx = _k().avgpool(_planes(g), kernel, stride, padding, ceil_mode, count_include_pad, divisor,
                      in_hw=in_shape[-2:])
    return gx.reshape(in_shape)


# --- normalisation, embedding -------------------------------------------------------------------
def batch_norm_forward(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
    N, C = x.shape[0], x.shape[1]
    out, ctx.mean, ctx.invstd = _kn().batch_norm_forward(
        x.reshape(N, C, -1), weight, bias, running_mean, running_var, eps, training, momentum)
    return out.reshape(x.shape)


def layer_norm_forward(ctx, x, weight, bias, normalized_shape, eps):
    D = math.prod(normalized_shape)
    out, ctx.mean, ctx.rstd = _kn().layer_norm_forward(x.reshape(-1, D), weight, bias, eps)
    return out.reshape(x.shape)


def embedding_forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
    ctx.num_weights = weight.shape[0]
    out = _kn().embedding_gather(weight.reshape(weight.shape[0], -1), indices)
    return out.reshape(indices.shape + weight.shape[1:])


def embedding_backward_forward(ctx, g, indices, num_weights, padding_idx, scale_grad_by_freq):
    D = g.shape[-1]
    return _kn().embedding_backward(g.reshape(-1, D), indices, num_weights, padding_idx,
                                    scale_grad_by_freq)


def embedding_gather_forward(ctx, gg, indices, num_weights, padding_idx, scale_grad_by_freq):
    out = _kn().embedding_gather(gg.reshape(gg.shape[0], -1), indices, padding_idx,
                                 scale_grad_by_freq)
    return out.reshape(indices.shape + gg.shape[1:])


# --- losses ---------------------------------------------------------------------------------------
def _loss(ctx, body, arrays, scalars, reduction):
    shape = tuple(np.broadcast_shapes(*(a.shape for a in arrays)))
    dt = np.result_type(*(a.dtype for a in arrays))
    ctx.n = math.prod(shape)
    return _kn().pointwise_loss(body, list(arrays) + list(scalars), shape, dt, reduction)


def mse_loss_forward(ctx, x, y, reduction):
    return _loss(ctx, _kn().mse_body, (x, y), (), reduction)


def huber_loss_forward(ctx, x, y, reduction, delta):
    return _loss(ctx, _kn().huber_body, (x, y), (delta,), reduction)


def binary_cross_entropy_forward(ctx, x, y, w, reduction):
    if w.size:
        return _loss(ctx, _kn().bce_body, (x, y, w), (), reduction)
    return _loss(ctx, _kn().bce_body, (x, y), (1.0,), reduction)


def binary_cross_entropy_with_logits_forward(ctx, x, y, w, pw, reduction):
    arrays, scalars = ((x, y, w), ()) if w.size else ((x, y), (1.0,))
    if pw.size:
        if not w.size:  # the body takes (x, y, w, pw): keep the operand order
            return _loss(ctx, _kn().bcel_pw_nw_body, (x, y, pw), (), reduction)
        return _loss(ctx, _kn().bcel_pw_body, (x, y, w, pw), (), reduction)
    return _loss(ctx, _kn().bcel_body, arrays, scalars, reduction)


def nll_loss_forward(ctx, x, target, weight, ignore_index, reduction):
    out, ctx.wsum = _kn().nll_forward(x, target, weight, ignore_index, reduction)
    return out
