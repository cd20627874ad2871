"""``jitgrad.nn.functional``: the activations beyond ``functional.py``'s fused ones, distances
and similarities, channel dropouts and channel rearrangements.

Every function here is composed of differentiable ops (``where``, ``clamp``, ``exp``...), so
gradients of every order come from those ops' rules. Branches are written so the branch not
taken stays finite (``expm1`` of a clamped input), since ``where`` multiplies the other
branch's gradient by 0 and ``0 * inf`` would be NaN.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..ops import binary, creation as _creation, shape, unary
from ..ops import nn as _ops
from ..ops import random_rows as _random_rows
from ..ops import reduce as _red
from ..ops.extrema import amax as _amax
from ..ops.scatter import index_select
from ._functional_common import (shape_const as _sconst, shape_index as _sindex, check_rank as _check_rank, const as _const,
                                 float_tensor as _float_tensor, maybe_inplace as _maybe_inplace,
                                 as_tensor as _tensor)

__all__ = ["elu", "elu_", "celu", "celu_", "selu", "selu_", "glu", "hardshrink", "softshrink",
           "tanhshrink", "softsign", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
           "relu6", "leaky_relu_", "logsigmoid", "mish", "prelu", "rrelu", "rrelu_", "threshold",
           "threshold_", "softmin", "gumbel_softmax", "normalize", "cosine_similarity",
           "pairwise_distance", "pdist", "bilinear", "dropout1d", "dropout2d", "dropout3d",
           "alpha_dropout", "feature_alpha_dropout", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "native_channel_shuffle"]

#: SELU's constants (Klambauer et al. 2017)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# --- activations -----------------------------------------------------------------------------
def _elu(x, alpha, scale=1.0, input_scale=1.0):
    """``scale * (x if x > 0 else alpha * (exp(input_scale * x) - 1))``."""
    neg = alpha * unary.expm1(binary.clamp(x, max=0.0) * input_scale)
    out = binary.where(x > 0, x, neg)
    return out if scale == 1.0 else out * scale


def elu(input, alpha=1.0, inplace=False):  # noqa: A002 - PyTorch's argument name
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha (exp(x) - 1)``.
    Derivative 1 for ``x > 0``, else ``alpha exp(x)``."""
    x = _float_tensor(input, "elu")
    return _maybe_inplace(x, inplace, "elu_", lambda t: _elu(t, alpha))


def elu_(input, alpha=1.0):  # noqa: A002
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def celu(input, alpha=1.0, inplace=False):  # noqa: A002
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``; derivative 1 for ``x > 0``, else
    ``exp(x / alpha)``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: celu: alpha must not be 0")
    x = _float_tensor(input, "celu")
    return _maybe_inplace(x, inplace, "celu_", lambda t: _elu(t, alpha, 1.0, 1.0 / alpha))


def celu_(input, alpha=1.0):  # noqa: A002
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def selu(input, inplace=False):  # noqa: A002
    """``scale * elu(x, alpha)`` with SELU's fixed ``alpha = 1.6733``, ``scale = 1.0507``."""
    x = _float_tensor(input, "selu")
    return _maybe_inplace(x, inplace, "selu_", lambda t: _elu(t, SELU_ALPHA, SELU_SCALE))


def selu_(input):  # noqa: A002
    """In-place ``selu``."""
    return selu(input, inplace=True)


def glu(input, dim=-1):  # noqa: A002
    """Gated linear unit: split ``input`` in halves ``a, b`` along ``dim``; ``a * sigmoid(b)``.
    Derivatives: ``g sigmoid(b)`` for ``a`` and ``g a s (1 - s)`` for ``b``."""
    x = _float_tensor(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % x.ndim
    n = x.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    return shape.narrow(x, d, 0, n // 2) * unary.sigmoid(shape.narrow(x, d, n // 2, n // 2))


def hardshrink(input, lambd=0.5):  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0; derivative the same indicator."""
    x = _float_tensor(input, "hardshrink")
    return binary.where(unary.abs(x) > lambd, x, _sconst(x, 0.0))


def softshrink(input, lambd=0.5):  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0, i.e.
    ``x - clamp(x, -lambd, lambd)``; derivative ``1{|x| > lambd}``."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    x = _float_tensor(input, "softshrink")
    return binary.where(unary.abs(x) > lambd, x - binary.clamp(x, -lambd, lambd),
                        _sconst(x, 0.0))


def tanhshrink(input):  # noqa: A002
    """``x - tanh(x)``; derivative ``tanh(x)^2``."""
    x = _float_tensor(input, "tanhshrink")
    return x - unary.tanh(x)


def softsign(input):  # noqa: A002
    """``x / (1 + |x|)``; derivative ``1 / (1 + |x|)^2``."""
    x = _float_tensor(input, "softsign")
    return x / (unary.abs(x) + 1.0)


def hardsigmoid(input, inplace=False):  # noqa: A002
    """``clamp(x / 6 + 1/2, 0, 1)``; derivative ``1/6`` on ``(-3, 3)``, else 0."""
    x = _float_tensor(input, "hardsigmoid")
    return _maybe_inplace(x, inplace, "hardsigmoid_", _hardsigmoid)


def _hardsigmoid(x):
    return binary.where(unary.abs(x) < 3.0, x / 6.0 + 0.5, (x >= 3.0).to(x.dtype))


def hardswish(input, inplace=False):  # noqa: A002
    """``x * hardsigmoid(x)``: 0 below -3, ``x`` above 3, ``x (x + 3) / 6`` between;
    derivative ``x / 3 + 1/2`` on ``[-3, 3]``."""
    x = _float_tensor(input, "hardswish")
    return _maybe_inplace(x, inplace, "hardswish_",
                          lambda t: binary.where(t > 3.0, t, t * binary.clamp(t + 3.0, 0.0, 6.0)
                                                 / 6.0))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """``clamp(x, min_val, max_val)``; derivative 1 strictly inside, else 0."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    x = _tensor(input, "hardtanh")
    return _maybe_inplace(x, inplace, "hardtanh_", lambda t: _hardtanh(t, min_val, max_val))


def _hardtanh(x, lo, hi):
    inside = (x > lo) & (x < hi)
    return binary.where(inside, x, binary.clamp(x, lo, hi).detach())


def hardtanh_(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):  # noqa: A002
    """``min(max(x, 0), 6)`` (``hardtanh(x, 0, 6)``)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu_(input, negative_slope=0.01):  # noqa: A002
    """In-place ``leaky_relu``: ``x`` for ``x > 0`` else ``negative_slope x``."""
    return _maybe_inplace(_float_tensor(input, "leaky_relu_"), True, "leaky_relu_",
                          lambda t: _ops.leaky_relu(t, negative_slope))


def logsigmoid(input):  # noqa: A002
    """``log(1 / (1 + exp(-x)))``, computed as ``x - log1p(exp(x))`` for ``x < 0`` and
    ``-log1p(exp(-x))`` otherwise (no overflow); derivative ``1 - sigmoid(x)``."""
    x = _float_tensor(input, "logsigmoid")
    neg = binary.clamp(x, max=0.0)
    pos = binary.clamp(x, min=0.0)
    return binary.where(x < 0, neg - unary.log1p(unary.exp(neg)),
                        -unary.log1p(unary.exp(-pos)))


def mish(input, inplace=False):  # noqa: A002
    """``x tanh(softplus(x))``; derivative ``tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)``."""
    x = _float_tensor(input, "mish")
    return _maybe_inplace(x, inplace, "mish_", lambda t: t * unary.tanh(_ops.softplus(t)))


def prelu(input, weight):  # noqa: A002
    """``x`` for ``x > 0`` else ``a x``, with one learnable slope ``a`` per channel (dim 1; 0-d
    and 1-d input have one channel) or one shared slope (``weight`` of 1 element). Derivatives
    ``1{x > 0}`` / ``a 1{x <= 0}`` for ``x`` and ``sum x 1{x <= 0}`` for ``a``."""
    x, w = _float_tensor(input, "prelu"), _float_tensor(weight, "prelu")
    if w.ndim > 1:
        raise RuntimeError(f"prelu: weight must be 0-D or 1-D, got {w.ndim}-D")
    n = w.numel()
    if n != 1:
        if x.ndim == 0:
            raise RuntimeError("prelu: a 0-D input takes a weight of 1 element, got "
                               f"{n} elements")
        channels = x.shape[1] if x.ndim >= 2 else 1
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
        w = shape.reshape(w, (n,) + (1,) * (x.ndim - 2 if x.ndim >= 2 else 0))
    elif w.ndim:
        w = shape.reshape(w, ())
    return binary.where(x > 0, x, w * x)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002
    """Randomised leaky ReLU: ``x`` for ``x >= 0``, else ``a x`` with ``a ~ U(lower, upper)``
    drawn per element in training (a constant of the graph, from ``jitgrad.manual_seed``'s
    generator) and ``a = (lower + upper) / 2`` in evaluation. Derivative ``1`` or ``a``."""
    if lower > upper:
        raise RuntimeError(f"Lower bound should be less than or equal to the upper bound, got "
                           f"lower={lower}, upper={upper}")
    x = _float_tensor(input, "rrelu")

    def fn(t):
        if not training:
            return binary.where(t >= 0, t, t * ((lower + upper) / 2))
        a = _creation.generator().uniform(lower, upper, t.shape)
        return binary.where(t >= 0, t, t * _const(t, a))
    return _maybe_inplace(x, inplace, "rrelu_", fn)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):  # noqa: A002
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)


def threshold(input, threshold, value, inplace=False):  # noqa: A002
    """``x`` where ``x > threshold``, else ``value``; derivative ``1{x > threshold}``."""
    return _threshold(input, threshold, value, inplace)


def _threshold(input, th, value, inplace):  # noqa: A002
    x = _tensor(input, "threshold")
    return _maybe_inplace(x, inplace, "threshold_",
                          lambda t: binary.where(t > th, t, _sconst(t, value)))


def threshold_(input, threshold, value):  # noqa: A002
    """In-place ``threshold``."""
    return _threshold(input, threshold, value, True)


def implicit_softmax_dim(name, ndim):
    """PyTorch's legacy choice of dim when ``dim=None`` (with its deprecation warning)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """``softmax(-x)`` along ``dim``: ``exp(-x_i) / sum_j exp(-x_j)``."""
    x = _tensor(input, "softmin")
    if dim is None:
        dim = implicit_softmax_dim("softmin", x.ndim)
    if dtype is not None:
        x = x.to(dtype)
    return _ops.softmax(-x, dim)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """``softmax((logits + G) / tau)`` with Gumbel(0, 1) noise ``G = -log(E)``, ``E ~ Exp(1)``
    (a graph constant from ``jitgrad.manual_seed``'s generator). ``hard``: the one-hot of the
    argmax in the forward, with the soft sample's gradient (``y_hard - y.detach() + y``).
    ``eps`` is unused (kept for PyTorch's signature)."""
    x = _float_tensor(logits, "gumbel_softmax")
    gumbels = _const(x, -np.log(_creation.generator().exponential(1.0, x.shape)))
    y = _ops.softmax((x + gumbels) / tau, dim)
    if not hard:
        return y
    d = dim % max(x.ndim, 1)
    idx = np.argmax(y.detach()._host("gumbel_softmax"), axis=d) if x.ndim else np.int64(0)
    hot = np.zeros(x.shape, x.dtype.np)
    if x.ndim:
        np.put_along_axis(hot, np.expand_dims(idx, d), 1.0, axis=d)
    else:
        hot[()] = 1.0
    return _const(x, hot) - y.detach() + y


# --- distances and normalisation -------------------------------------------------------------
def vector_norm(x, p, dim, keepdim=False):
    """``(sum |x|^p)^(1/p)`` over ``dim`` (``max |x|`` for ``p = inf``), with a zero gradient at
    a zero vector (where the p-norm is not differentiable), as PyTorch's norm backward."""
    a = unary.abs(x)
    if p == math.inf:
        return _amax(a, dim, keepdim)
    if p == -math.inf:
        return -_amax(-a, dim, keepdim)
    if p == 0:
        return _red.sum((a != 0).to(x.dtype), dim, keepdim)
    if p == 1:
        return _red.sum(a, dim, keepdim)
    s = _red.sum(a * a if p == 2 else a ** p, dim, keepdim)
    nz = s > 0
    safe = binary.where(nz, s, _sconst(s, 1.0))
    root = unary.sqrt(safe) if p == 2 else safe ** (1.0 / p)
    return binary.where(nz, root, _sconst(s, 0.0))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):  # noqa: A002
    """``x / max(||x||_p, eps)`` along ``dim`` (``out``: also written into that tensor).
    Derivative through the norm (zero gradient of the norm at a zero vector)."""
    x = _float_tensor(input, "normalize")
    d = dim if x.ndim else None
    denom = binary.clamp(vector_norm(x, p, d, keepdim=x.ndim > 0), min=eps)
    result = x / denom
    if out is not None:
        return out.copy_(result)
    return result


def _broadcast_pair(op, a, b):
    a, b = _float_tensor(a, op), _float_tensor(b, op)
    try:
        sh = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(f"{op}: the shapes {list(a.shape)} and {list(b.shape)} do not "
                           "broadcast") from None
    return shape.expand(a, sh), shape.expand(b, sh)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 x2) / (max(||x1||, eps) max(||x2||, eps))`` along ``dim`` (the inputs
    broadcast)."""
    a, b = _broadcast_pair("cosine_similarity", x1, x2)
    na = binary.clamp(vector_norm(a, 2, dim, True), min=eps)
    nb = binary.clamp(vector_norm(b, 2, dim, True), min=eps)
    return _red.sum((a / na) * (b / nb), dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim (the inputs broadcast)."""
    a, b = _broadcast_pair("pairwise_distance", x1, x2)
    if a.ndim == 0:
        return unary.abs(a - b + eps)
    return vector_norm(a - b + eps, p, -1, keepdim)


def pdist(input, p=2):  # noqa: A002
    """``||x_i - x_j||_p`` for every pair of rows ``i < j`` of a 2-D input, in row-major order
    of ``(i, j)`` (``N (N - 1) / 2`` values)."""
    x = _float_tensor(input, "pdist")
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(x.shape[0], 1)
    return vector_norm(index_select(x, 0, _sindex(i, x)) -
                       index_select(x, 0, _sindex(j, x)), p, -1)


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1^T W_k x2 + b_k`` over the last dims: ``x1 (..., in1)``, ``x2 (..., in2)``,
    ``weight (out, in1, in2)``. Composed of matmuls (derivatives ``W_k x2``, ``x1^T W_k``,
    ``x1 x2^T``)."""
    a, b = _float_tensor(input1, "bilinear"), _float_tensor(input2, "bilinear")
    w = _float_tensor(weight, "bilinear")
    if w.ndim != 3 or a.shape[-1:] != w.shape[1:2] or b.shape[-1:] != w.shape[2:]:
        raise RuntimeError(f"bilinear: expected input1 (..., {w.shape[1] if w.ndim == 3 else '?'})"
                           f", input2 (..., in2) and a 3-D weight (out, in1, in2); got "
                           f"{list(a.shape)}, {list(b.shape)} and {list(w.shape)}")
    if a.shape[:-1] != b.shape[:-1]:
        raise RuntimeError(f"bilinear: input1 and input2 must have the same leading dims, got "
                           f"{list(a.shape)} and {list(b.shape)}")
    from ..ops.linalg import matmul
    out_f, in1, in2 = w.shape
    lead = a.shape[:-1]
    a2, b2 = shape.reshape(a, (-1, in1)), shape.reshape(b, (-1, 1, in2))
    wflat = shape.reshape(shape.permute(w, (1, 0, 2)), (in1, out_f * in2))
    y = _red.sum(shape.reshape(matmul(a2, wflat), (-1, out_f, in2)) * b2, -1)
    if bias is not None:
        y = y + _float_tensor(bias, "bilinear")
    return shape.reshape(y, lead + (out_f,))


# --- dropouts --------------------------------------------------------------------------------
def _check_p(p):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def keep_mask(x, p, mask_shape):
    """A Bernoulli(1 - p) 0/1 array of ``mask_shape`` from ``jitgrad.manual_seed``'s
    generator."""
    return (_creation.generator().random(mask_shape) >= p).astype(x.dtype.np)


def _feature_dropout(op, input, p, training, inplace, batched_ndim):  # noqa: A002
    _check_p(p)
    x = _tensor(input, op)
    _check_rank(op, x, (batched_ndim - 1, batched_ndim))
    if not training or p == 0:
        return x
    lead = x.shape[:2] if x.ndim == batched_ndim else x.shape[:1]
    mask_shape = lead + (1,) * (x.ndim - len(lead))
    if x.is_cuda:
        keep = keep_mask(x, p, mask_shape)
        mask = _const(x, keep * (0.0 if p == 1 else 1.0 / (1.0 - p)))
    else:  # (a row: jitgrad.compile captures the draw)
        mask = _random_rows.dropout_mask(x, p, mask_shape)
    return x.mul_(mask) if inplace else x * mask


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of ``(N, C, L)`` / ``(C, L)`` input with probability ``p``, scaling
    the kept ones by ``1 / (1 - p)`` (in training): ``y = x * m`` with a constant mask."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Channel dropout (see ``dropout1d``) of ``(N, C, H, W)`` input. 3-D input is taken as
    ``(N, C, L)`` (channel-wise 1-d dropout) with PyTorch's warning."""
    x = _tensor(input, "dropout2d")
    if x.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape "
                      "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
                      "to using dropout1d instead.", UserWarning, stacklevel=2)
        return _feature_dropout("dropout2d", x, p, training, inplace, 3)
    return _feature_dropout("dropout2d", x, p, training, inplace, 4)


def dropout3d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Channel dropout (see ``dropout1d``) of ``(N, C, D, H, W)`` / ``(C, D, H, W)`` input."""
    return _feature_dropout("dropout3d", input, p, training, inplace, 5)


def _alpha_dropout(op, input, p, training, inplace, feature):  # noqa: A002
    """SELU-preserving dropout: dropped values are set to ``a' = -scale * alpha`` and the
    result is ``A (x m + a' (1 - m)) + B`` with ``A = ((1 - p)(1 + p a'^2))^(-1/2)`` and
    ``B = -A a' p``, keeping zero mean and unit variance; derivative ``A m``."""
    _check_p(p)
    x = _float_tensor(input, op)
    if not training or p == 0:
        return x
    if p == 1:
        return x.mul_(0.0) if inplace else x * 0.0
    if feature and x.ndim < 2:
        raise RuntimeError(f"{op}: feature dropout needs at least 2 dims, got {x.ndim}")
    mask_shape = x.shape[:2] + (1,) * (x.ndim - 2) if feature else x.shape
    keep = keep_mask(x, p, mask_shape)
    alpha_p = -SELU_ALPHA * SELU_SCALE
    a = ((1 - p) * (1 + p * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * p
    mul, add = _const(x, keep * a), _const(x, (1 - keep) * (a * alpha_p) + b)
    return x.mul_(mul).add_(add) if inplace else x * mul + add


def alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """Alpha dropout of single elements (see ``_alpha_dropout`` for the math)."""
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """Alpha dropout of whole channels (dim 1 of ``(N, C, *)``)."""
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, True)


# --- channel rearrangements ------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``: ``out[c, h r + i, w r + j] =
    in[c r^2 + i r + j, h, w]`` (a reshape and permute)."""
    x = _tensor(input, "pixel_shuffle")
    r = int(upscale_factor)
    if x.ndim < 3 or x.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)="
                           f"{x.shape[-3] if x.ndim >= 3 else None} is not divisible by {r * r}")
    *lead, C, H, W = x.shape
    lead = tuple(lead)
    y = shape.reshape(x, lead + (C // (r * r), r, r, H, W))
    n = len(lead)
    y = shape.permute(y, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return shape.reshape(y, lead + (C // (r * r), H * r, W * r))


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """The inverse of ``pixel_shuffle``: ``(*, C, H r, W r) -> (*, C r^2, H, W)``."""
    x = _tensor(input, "pixel_unshuffle")
    r = int(downscale_factor)
    if x.ndim < 3 or x.shape[-1] % r or x.shape[-2] % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor ({r}), got input of size {list(x.shape)}")
    *lead, C, H, W = x.shape
    lead = tuple(lead)
    n = len(lead)
    y = shape.reshape(x, lead + (C, H // r, r, W // r, r))
    y = shape.permute(y, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return shape.reshape(y, lead + (C * r * r, H // r, W // r))


def channel_shuffle(input, groups):  # noqa: A002
    """Interleave the channels of ``(N, C, *)`` input in ``groups``: channel ``g C/groups + k``
    moves to ``k groups + g``."""
    x = _tensor(input, "channel_shuffle")
    g = int(groups)
    if x.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {list(x.shape)}")
    if g <= 0 or x.shape[1] % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{x.shape[1]} channels and {g} groups.")
    N, C = x.shape[:2]
    rest = tuple(x.shape[2:])
    y = shape.transpose(shape.reshape(x, (N, g, C // g) + rest), 1, 2)
    return shape.reshape(y, x.shape)


def native_channel_shuffle(input, groups):  # noqa: A002
    """``channel_shuffle`` (PyTorch's native kernel entry point; same result)."""
    return channel_shuffle(input, groups)
