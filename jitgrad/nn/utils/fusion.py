"""Folding an eval-mode batch norm into the preceding convolution or linear layer:
``bn(conv(x)) == conv'(x)`` with ``W' = W s``, ``b' = (b - mean) s + beta`` and
``s = gamma / sqrt(running_var + eps)`` per output channel."""
from __future__ import annotations

import copy

from ...graph.grad_mode import no_grad
from ...ops import creation
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _bn_scale(bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """``(s, beta)`` with ``s = gamma / sqrt(var + eps)`` (gamma 1 and beta 0 when None)."""
    if bn_w is None:
        bn_w = creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = creation.zeros_like(bn_rm)
    return bn_w * (bn_rv + bn_eps).rsqrt(), bn_b


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused ``(weight, bias)`` Parameters of a convolution followed by an eval batch
    norm: ``W' = W s`` over the output-channel dim (dim 1 when ``transpose``),
    ``b' = (b - mean) s + beta`` (``b`` 0 when None)."""
    dtype = conv_w.dtype
    with no_grad():
        if conv_b is None:
            conv_b = creation.zeros_like(bn_rm)
        scale, beta = _bn_scale(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
        shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
        fused_w = (conv_w * scale.reshape(shape)).to(dtype)
        fused_b = ((conv_b - bn_rm) * scale + beta).to(dtype)
    return (Parameter(fused_w, conv_w.requires_grad),
            Parameter(fused_b, conv_b.requires_grad))


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of the eval-mode ``conv`` with the eval-mode batch norm ``bn`` folded in."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval: the batch norm must track running stats")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused ``(weight, bias)`` Parameters of a linear layer followed by an eval batch
    norm: ``W' = s[:, None] W``, ``b' = (b - mean) s + beta``."""
    with no_grad():
        if linear_b is None:
            linear_b = creation.zeros_like(bn_rm)
        scale, beta = _bn_scale(bn_rm, bn_rv, bn_eps, bn_w, bn_b)
        fused_w = linear_w * scale.unsqueeze(-1)
        fused_b = (linear_b - bn_rm) * scale + beta
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of the eval-mode ``linear`` with the eval-mode batch norm ``bn`` folded in
    (``bn.num_features`` must be ``linear.out_features`` or 1)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features OR "
                             "bn.num_features must be 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval: the batch norm must track running stats")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
