"""Convolution and pooling rows of the ``nn`` family: ``convolution`` (N-d via 2-d, groups,
stride, padding, dilation) with its input/weight gradient rows (double backward), ``max_pool2d``
and ``avg_pool2d`` with their backward rows, jvp and vmap rules. Split from ``ops/nn.py``
(which re-exports these names); the geometry helpers, shared with the CUDA forwards, are in
``ops/nn_common.py``; CPU kernels in ``kernels/cpu/nn.py``, CUDA forwards in ``ops/nn_cuda.py``.
"""
from __future__ import annotations

import math

import numpy as np

from ..graph.grad_mode import is_grad_enabled
from ..kernels.cpu import nn as cpu_nn
from .core import dispatch
from . import nn_cuda
from . import reduce as _reduce
from . import shape as _shape
from .nn_common import conv_geometry, none_tensor, out_nd, planes_shape, sum_terms, wrap
from .core.registry import LINEAR, def_composite


# --- convolution -----------------------------------------------------------------------------
def _params(ctx):
    return {k: getattr(ctx, k) for k in ("stride", "padding", "dilation", "groups")}


def _conv_fwd(ctx, x, w, b, **p):
    geo = conv_geometry(x.shape, w.shape, p)
    if geo.Ho <= 0 or geo.Wo <= 0:
        raise RuntimeError(f"convolution: input size {tuple(x.shape[2:])} (with padding) is "
                           f"smaller than the kernel size {tuple(w.shape[2:])}")
    return out_nd(cpu_nn.conv_forward(x, w, b, geo), x.ndim)


def _conv_bwd(ctx, g, x, weight):
    nx, nw, nb = ctx.needs_input_grad
    p = _params(ctx)
    gx = conv_input_grad(g, weight, x.shape, p) if nx else None
    gw = conv_weight_grad(x, g, weight.shape, p) if nw else None
    gb = None
    if nb:
        if g.is_cuda and not is_grad_enabled() and dispatch.transform_hook is None:
            gb = wrap(dispatch.cuda_kernels("nn").channel_sum(g._data))
        else:
            gb = _reduce.sum(g, (0,) + tuple(range(2, g.ndim)))
    return gx, gw, gb


def _conv_bx_fwd(ctx, g, w, in_shape, **p):
    geo = conv_geometry(in_shape, w.shape, p)
    return cpu_nn.conv_input_grad(g, w, geo).reshape(in_shape)


def _conv_bx_bwd(ctx, gg, g, weight):  # gx = conv_transpose(g, w): linear in g and in w
    ng, nw = ctx.needs_input_grad
    p = _params(ctx)
    return (conv(gg, weight, None, p) if ng else None,
            conv_weight_grad(gg, g, weight.shape, p) if nw else None)


def _conv_bw_fwd(ctx, x, g, w_shape, **p):
    geo = conv_geometry(x.shape, w_shape, p)
    return cpu_nn.conv_weight_grad(x, g, geo).reshape(w_shape)


def _conv_bw_bwd(ctx, v, x, g):  # gw = sum g x: linear in x and in g
    nx, ng = ctx.needs_input_grad
    p = _params(ctx)
    return (conv_input_grad(g, v, x.shape, p) if nx else None,
            conv(x, v, None, p) if ng else None)


# jvp rules: conv is linear in x, in weight and in bias; its two backward ops are bilinear.
def _conv_jvp(tangents, primals, outs, **p):
    (tx, tw, tb), (x, w, _) = tangents, primals
    return sum_terms(None if tx is None else conv(tx, w, None, p),
                     None if tw is None else conv(x, tw, None, p),
                     None if tb is None else _shape.reshape(tb, (1, -1) + (1,) * (x.ndim - 2)))


def _conv_bx_jvp(tangents, primals, outs, in_shape, **p):
    (tg, tw), (g, w) = tangents, primals
    return sum_terms(None if tg is None else conv_input_grad(tg, w, in_shape, p),
                     None if tw is None else conv_input_grad(g, tw, in_shape, p))


def _conv_bw_jvp(tangents, primals, outs, w_shape, **p):
    (tx, tg), (x, g) = tangents, primals
    return sum_terms(None if tx is None else conv_weight_grad(tx, g, w_shape, p),
                     None if tg is None else conv_weight_grad(x, tg, w_shape, p))


# Batch rules (vmap): with one weight for the batch, the batch folds into N; with a batched
# weight (per-example weights, per-example weight gradients) it folds into the channels, each
# example becoming its own group of a grouped convolution.
def _batched_args(args, batched):
    size = next(a.shape[0] for a, b in zip(args, batched) if b)
    return size, [a if b else _shape.expand(_shape.unsqueeze(a, 0), (size,) + tuple(a.shape))
                  for a, b in zip(args, batched)]


def _fold_n(t):
    return _shape.reshape(t, (t.shape[0] * t.shape[1],) + tuple(t.shape[2:]))


def _fold_c(t):
    """(B, N, C, ...) -> (N, B*C, ...)."""
    t = _shape.transpose(t, 0, 1)
    return _shape.reshape(t, (t.shape[0], t.shape[1] * t.shape[2]) + tuple(t.shape[3:]))


def _unfold_c(t, size):
    """(N, B*C, ...) -> (B, N, C, ...)."""
    t = _shape.reshape(t, (t.shape[0], size, t.shape[1] // size) + tuple(t.shape[2:]))
    return _shape.transpose(t, 0, 1)


def _grouped(p, size):
    return {**p, "groups": p["groups"] * size}


def _conv_batch(args, batched, **p):
    (x, w, b), (bx, bw, bb) = args, batched
    bias = None if (not bb and b.numel() == 0) else b
    if not bw and not bb:
        out = conv(_fold_n(x), w, bias, p)
        return _shape.reshape(out, tuple(x.shape[:2]) + tuple(out.shape[1:]))
    size, (x, w) = _batched_args([x, w], (bx, bw))
    if bias is not None:
        bias = _shape.reshape(bias if bb else _shape.expand(_shape.unsqueeze(bias, 0),
                                                              (size,) + tuple(bias.shape)), (-1,))
    out = conv(_fold_c(x), _shape.reshape(w, (-1,) + tuple(w.shape[2:])), bias,
               _grouped(p, size))
    return _unfold_c(out, size)


def _conv_bx_batch(args, batched, in_shape, **p):
    (g, w), (bg, bw) = args, batched
    if not bw:
        out = conv_input_grad(_fold_n(g), w, (g.shape[0] * g.shape[1],) + tuple(in_shape[1:]), p)
        return _shape.reshape(out, tuple(g.shape[:2]) + tuple(in_shape[1:]))
    size, (g, w) = _batched_args([g, w], (bg, bw))
    shape = (in_shape[0], size * in_shape[1]) + tuple(in_shape[2:])
    out = conv_input_grad(_fold_c(g), _shape.reshape(w, (-1,) + tuple(w.shape[2:])), shape,
                          _grouped(p, size))
    return _unfold_c(out, size)


def _conv_bw_batch(args, batched, w_shape, **p):
    size, (x, g) = _batched_args(args, batched)
    out = conv_weight_grad(_fold_c(x), _fold_c(g), (size * w_shape[0],) + tuple(w_shape[1:]),
                           _grouped(p, size))
    return _shape.reshape(out, (size,) + tuple(w_shape))


_CONV_ATTRS = ("stride", "padding", "dilation", "groups")
CONV = def_composite("convolution", "ConvolutionBackward0", ("x", "weight", "bias"), _conv_fwd,
                     _conv_bwd, attrs=_CONV_ATTRS, save=("x", "weight"), jvp=_conv_jvp,
                     batch_rule=_conv_batch, cuda_forward=nn_cuda.convolution_forward)
CONV_BX = def_composite("convolution_input_grad", "ConvolutionBackwardBackward0", ("g", "weight"),
                        _conv_bx_fwd, _conv_bx_bwd, attrs=("in_shape",) + _CONV_ATTRS,
                        save=("g", "weight"), jvp=_conv_bx_jvp, batch_rule=_conv_bx_batch,
                        cuda_forward=nn_cuda.convolution_input_grad_forward)
CONV_BW = def_composite("convolution_weight_grad", "ConvolutionBackwardBackward0", ("x", "g"),
                        _conv_bw_fwd, _conv_bw_bwd, attrs=("w_shape",) + _CONV_ATTRS,
                        save=("x", "g"), jvp=_conv_bw_jvp, batch_rule=_conv_bw_batch,
                        cuda_forward=nn_cuda.convolution_weight_grad_forward)


def conv(x, weight, bias, params):
    """1-d/2-d convolution (cross-correlation) of ``x`` (N, C, [H,] W) with ``weight``
    (Co, C/groups, [KH,] KW); ``params``: 2-tuples ``stride``, ``padding``, ``dilation`` and
    int ``groups`` (1-d: the first entry of each is the unit H one).

    ``out[n, co] = bias[co] + sum_{ci, k} weight[co, ci, k] x[n, ci, o*stride - pad + k*dil]``.
    Derivatives: ``gx = conv_transpose(g, weight)``, ``gw = sum_n g (*) x``, ``gb = sum g``,
    each itself a differentiable op. Records ``ConvolutionBackward0``.
    """
    return dispatch.composite(CONV, x, weight, bias if bias is not None else none_tensor(x),
                              **params)


def conv_input_grad(g, weight, in_shape, params):
    """The gradient of ``conv`` with respect to its input (a transposed convolution)."""
    return dispatch.composite(CONV_BX, g, weight, in_shape=tuple(in_shape), **params)


def conv_weight_grad(x, g, w_shape, params):
    """The gradient of ``conv`` with respect to its weight."""
    return dispatch.composite(CONV_BW, x, g, w_shape=tuple(w_shape), **params)


# --- pooling ---------------------------------------------------------------------------------
def _planes(a):
    return np.ascontiguousarray(a).reshape(-1, a.shape[-2], a.shape[-1])


def _maxpool_fwd(ctx, x, kernel, stride, padding, dilation, ceil_mode):
    out, idx = cpu_nn.maxpool_forward(_planes(x), kernel, stride, padding, dilation, ceil_mode)
    shape = x.shape[:-2] + out.shape[1:]
    ctx.indices, ctx.in_shape = idx.reshape(shape), x.shape
    return out.reshape(shape), ctx.indices


def _maxpool_bwd(ctx, g, _g_indices):
    return (_maxpool_scatter(g, ctx.indices, ctx.in_shape),)


def _mp_scatter_fwd(ctx, g, indices, in_shape):
    return cpu_nn.maxpool_backward(_planes(g), _planes(indices), planes_shape(in_shape)
                                   ).reshape(in_shape)


def _mp_scatter_bwd(ctx, gg):
    return (dispatch.composite(MAXPOOL_GATHER, gg, indices=ctx.indices),)


def _mp_gather_fwd(ctx, gg, indices):
    ctx.in_shape = gg.shape
    P = math.prod(indices.shape[:-2])
    return np.take_along_axis(np.ascontiguousarray(gg).reshape(P, -1),
                              indices.reshape(P, -1), 1).reshape(indices.shape)


def _mp_gather_bwd(ctx, g):
    return (_maxpool_scatter(g, ctx.indices, ctx.in_shape),)


def _maxpool_jvp(tangents, primals, outs, **attrs):
    return dispatch.composite(MAXPOOL_GATHER, tangents[0], indices=outs[1]._data), None


def _with_batched_indices(indices, size):
    return np.broadcast_to(indices, (size,) + tuple(indices.shape))


MAXPOOL = def_composite(
    "max_pool2d", "MaxPool2DWithIndicesBackward0", ("x",), _maxpool_fwd, _maxpool_bwd,
    attrs=("kernel", "stride", "padding", "dilation", "ceil_mode"), n_outputs=2,
    jvp=_maxpool_jvp,
    batch_rule=lambda args, batched, **a: dispatch.composite(MAXPOOL, args[0], **a),
    cuda_forward=nn_cuda.max_pool2d_forward)
MAXPOOL_SCATTER = def_composite(
    "max_pool2d_backward", "MaxPool2DWithIndicesBackwardBackward0", ("g",), _mp_scatter_fwd,
    _mp_scatter_bwd, attrs=("indices", "in_shape"), jvp=LINEAR,
    batch_rule=lambda args, batched, indices, in_shape: dispatch.composite(
        MAXPOOL_SCATTER, args[0], indices=_with_batched_indices(indices, args[0].shape[0]),
        in_shape=(args[0].shape[0],) + tuple(in_shape)),
    cuda_forward=nn_cuda.max_pool2d_backward_forward)
MAXPOOL_GATHER = def_composite(
    "max_pool2d_gather", "GatherBackward0", ("gg",), _mp_gather_fwd, _mp_gather_bwd,
    attrs=("indices",), jvp=LINEAR,
    batch_rule=lambda args, batched, indices: dispatch.composite(
        MAXPOOL_GATHER, args[0], indices=_with_batched_indices(indices, args[0].shape[0])),
    cuda_forward=nn_cuda.max_pool2d_gather_forward)


def _maxpool_scatter(g, indices, in_shape):
    return dispatch.composite(MAXPOOL_SCATTER, g, indices=indices, in_shape=tuple(in_shape))


def max_pool2d(x, kernel, stride, padding, dilation, ceil_mode):
    """Max over each (dilated) window of the last two dims (padding counts as -inf); returns
    ``(values, indices)`` with flat in-plane argmax indices (int64, as PyTorch). NaN wins.
    Derivative: ``g`` scattered to the argmax (accumulating where windows overlap).
    Records ``MaxPool2DWithIndicesBackward0``."""
    return dispatch.composite(MAXPOOL, x, kernel=kernel, stride=stride, padding=padding,
                              dilation=dilation, ceil_mode=bool(ceil_mode))


def _avgpool_fwd(ctx, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    ctx.in_shape = x.shape
    out = cpu_nn.avgpool(_planes(x), kernel, stride, padding, ceil_mode, count_include_pad,
                         divisor)
    return out.reshape(x.shape[:-2] + out.shape[1:])


def _avgpool_bwd(ctx, g):
    return (dispatch.composite(AVGPOOL_BWD, g, in_shape=ctx.in_shape, **_avg_attrs(ctx)),)


def _avg_attrs(ctx):
    return {k: getattr(ctx, k) for k in ("kernel", "stride", "padding", "ceil_mode",
                                         "count_include_pad", "divisor")}


def _avgpool_bwd_fwd(ctx, g, in_shape, kernel, stride, padding, ceil_mode, count_include_pad,
                     divisor):
    gx = cpu_nn.avgpool(_planes(g), kernel, stride, padding, ceil_mode, count_include_pad,
                        divisor, in_hw=in_shape[-2:])
    return gx.reshape(in_shape)


def _avgpool_bwd_bwd(ctx, gg):
    return (dispatch.composite(AVGPOOL, gg, **_avg_attrs(ctx)),)


_AVG_ATTRS = ("kernel", "stride", "padding", "ceil_mode", "count_include_pad", "divisor")
# pooling over the last two dims: a batch is a leading dim
AVGPOOL = def_composite(
    "avg_pool2d", "AvgPool2DBackward0", ("x",), _avgpool_fwd, _avgpool_bwd, attrs=_AVG_ATTRS,
    jvp=LINEAR, batch_rule=lambda args, batched, **a: dispatch.composite(AVGPOOL, args[0], **a),
    cuda_forward=nn_cuda.avg_pool2d_forward)
AVGPOOL_BWD = def_composite(
    "avg_pool2d_backward", "AvgPool2DBackwardBackward0", ("g",), _avgpool_bwd_fwd,
    _avgpool_bwd_bwd, attrs=("in_shape",) + _AVG_ATTRS, jvp=LINEAR,
    batch_rule=lambda args, batched, in_shape, **a: dispatch.composite(
        AVGPOOL_BWD, args[0], in_shape=(args[0].shape[0],) + tuple(in_shape), **a),
    cuda_forward=nn_cuda.avg_pool2d_backward_forward)


def avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Mean over each window of the last two dims: ``sum(window) / divisor`` where the divisor
    is ``divisor_override``, or the window size (clipped to the padded input) with
    ``count_include_pad``, else the number of real elements. Derivative: ``g / divisor``
    spread over each window. Records ``AvgPool2DBackward0``."""
    return dispatch.composite(AVGPOOL, x, kernel=kernel, stride=stride, padding=padding,
                              ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                              divisor=int(divisor_override or 0))
