"""``jitgrad.nn.functional``: the layers as functions, with PyTorch's signatures.

Argument checking and normalisation live here; the differentiable ops are rows of
``jitgrad.ops.nn`` (fused Numba kernels for convolution, pooling, the norms and NLL; scalar-body
kernels for the activations). Each function states its forward and derivative math.

The rest of the namespace is composed of existing differentiable ops and kept in modules of
its own (re-exported here): ``_functional_act`` (activations, distances, channel dropouts,
shuffles), ``_functional_loss`` (losses), ``_functional_pool`` (1-d/3-d, adaptive, power,
fractional pooling and unpooling), ``_functional_conv`` (3-d and transposed convolution,
fold/unfold, pad, group/instance/RMS/local-response norm) and ``_functional_sample``
(interpolate, affine_grid, grid_sample, scaled_dot_product_attention); shared argument helpers
are in ``_functional_common``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import dtypes as _dtypes
from ..graph.grad_mode import no_grad
from ..ops import binary, shape, unary
from ..ops.core import dispatch
from ..ops import reduce as _red
from ..ops import creation as _creation
from ..ops import random_rows as _random_rows
from ..ops import nn as _ops
from ..ops.core import upper as _upper
from ..ops.core.upper import guard_writes
from ._functional_common import (  # noqa: F401 (nn.modules.loss reads _reduction)
                                 tensor_cls as _T, apply_reduction as _apply_reduction,
                                 index_array as _index_array, kernel_float as _kernel_float,
                                 maybe_inplace as _maybe_inplace, on_device_of as _on_device_of,
                                 loss_pair as _pair, reduction_mode as _reduction,
                                 as_tensor as _tensor, ntuple as _tuple, same_dtype as _same_dtype,
                                 conv_padding as _conv_padding)

# the functions kept in their own modules by size (see each module's docstring)
from ._functional_act import *  # noqa: F401,F403
from ._functional_loss import *  # noqa: F401,F403
from ._functional_pool import *  # noqa: F401,F403
from ._functional_conv import *  # noqa: F401,F403
from ._functional_sample import *  # noqa: F401,F403
from . import _functional_act as _act, _functional_loss as _loss
from . import _functional_pool as _pool, _functional_conv as _convs
from . import _functional_sample as _sample

__all__ = ["relu", "relu_", "tanh", "sigmoid", "gelu", "silu", "softplus", "leaky_relu",
           "softmax", "log_softmax", "linear", "conv1d", "conv2d", "max_pool2d", "avg_pool2d",
           "dropout", "batch_norm", "layer_norm", "embedding", "one_hot", "mse_loss", "l1_loss",
           "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]



# --- activations ---------------------------------------------------------------------------
def relu(input, inplace=False):  # noqa: A002 - PyTorch's argument name
    """``max(x, 0)``; derivative ``g`` where ``x > 0`` else 0. ``ReluBackward0``."""
    return input.relu_() if inplace else unary.relu(input)


def relu_(input):  # noqa: A002
    """In-place ``relu``."""
    return input.relu_()


def tanh(input):  # noqa: A002
    """``tanh(x)``; derivative ``1 - tanh(x)^2``."""
    return unary.tanh(input)


def sigmoid(input):  # noqa: A002
    """``1 / (1 + exp(-x))``; derivative ``s (1 - s)``."""
    return unary.sigmoid(input)


def gelu(input, approximate="none"):  # noqa: A002
    """Gaussian error linear unit (see ``jitgrad.ops.nn.gelu``)."""
    return _ops.gelu(input, approximate)


def silu(input, inplace=False):  # noqa: A002
    """``x sigmoid(x)`` (see ``jitgrad.ops.nn.silu``)."""
    return _maybe_inplace(input, inplace, "silu_", _ops.silu)


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (see ``ops.nn.softplus``)."""
    return _ops.softplus(input, beta, threshold)


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002
    """``x`` for ``x > 0`` else ``negative_slope x`` (see ``ops.nn.leaky_relu``)."""
    return _maybe_inplace(input, inplace, "leaky_relu_",
                          lambda t: _ops.leaky_relu(t, negative_slope))


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim`` (see ``jitgrad.softmax``; ``dim=None``:
    PyTorch's deprecated implicit choice, with its warning)."""
    if dim is None:
        dim = _act.implicit_softmax_dim("softmax", _tensor(input, "softmax").ndim)
    return _ops.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002
    """``x_i - logsumexp_j x_j`` along ``dim`` (see ``jitgrad.log_softmax``; ``dim=None`` as in
    ``softmax``)."""
    if dim is None:
        dim = _act.implicit_softmax_dim("log_softmax", _tensor(input, "log_softmax").ndim)
    return _ops.log_softmax(input, dim, dtype)


# --- linear / convolution ------------------------------------------------------------------
def linear(input, weight, bias=None):  # noqa: A002
    """``y = x W^T + b`` over the last dim of ``x`` (leading dims are batch dims).

    2-d input with bias records ``AddmmBackward0`` (inputs: bias, x, ``W.t()``), as PyTorch;
    other ranks are reshaped to 2-d and back. Derivatives: ``g W``, ``g^T x``, ``sum g``.
    """
    x, w = _tensor(input, "linear"), _tensor(weight, "linear")
    _same_dtype("linear", x, w)
    if w.ndim != 2:
        raise RuntimeError(f"linear: weight must be 2-D, got {w.ndim}-D")
    if x.ndim == 0 or x.shape[-1] != w.shape[1]:
        lead = x.shape[:-1] if x.ndim else ()
        rows = math.prod(lead)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{x.shape[-1] if x.ndim else 1} and {w.shape[1]}x{w.shape[0]})")
    x2 = x if x.ndim == 2 else shape.reshape(x, (-1, x.shape[-1]))
    wt = shape.t(w)
    if bias is not None:
        b = _tensor(bias, "linear")
        _same_dtype("linear", x, b)
        out = _ops.addmm(b, x2, wt)
    else:
        from ..ops.linalg import matmul
        out = matmul(x2, wt)
    return out if x.ndim == 2 else shape.reshape(out, x.shape[:-1] + (w.shape[0],))


def _conv(op, nd, input, weight, bias, stride, padding, dilation, groups):  # noqa: A002
    x, w, b, unbatched = _convs.conv_operands(op, nd, input, weight, bias, groups, False)
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    pad = _conv_padding(padding, w.shape[2:], dilation, stride, nd)
    if nd == 1:
        stride, pad, dilation = (1,) + stride, (0,) + pad, (1,) + dilation
    out = _ops.conv(x, w, b, {"stride": stride, "padding": pad, "dilation": dilation,
                              "groups": int(groups)})
    return shape.squeeze(out, 0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """1-d cross-correlation over the last dim of ``(N, C, L)`` (or ``(C, L)``) input:
    ``out[n, co, l] = b[co] + sum_{ci, k} w[co, ci, k] x[n, ci, l s - p + k d]``.
    Records ``ConvolutionBackward0`` (see ``jitgrad.ops.nn.conv`` for the derivatives)."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-d cross-correlation of ``(N, C, H, W)`` (or ``(C, H, W)``) input with
    ``(Co, C/groups, KH, KW)`` weights; ``padding`` may be an int, a pair, 'valid' or 'same'.
    Records ``ConvolutionBackward0`` (see ``jitgrad.ops.nn.conv`` for the derivatives)."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


# --- pooling -------------------------------------------------------------------------------
def _pool_args(op, x, kernel_size, stride, padding, dilation):
    x = _tensor(x, op)
    if x.ndim not in (3, 4):
        raise RuntimeError(f"{op}: expected a 3D or 4D input, got {x.ndim}D")
    k = _tuple(kernel_size, 2, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _tuple(stride, 2, "stride")
    p = _tuple(padding, 2, "padding")
    d = _tuple(dilation, 2, "dilation")
    if any(v <= 0 for v in k + s + d):
        raise RuntimeError(f"{op}: kernel_size, stride and dilation must be positive")
    if any(pp > kk // 2 for pp, kk in zip(p, k)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p[0] if p[0] > k[0] // 2 else p[1]}, kernel_size={k[0]} and "
                           f"dilation={d[0]}")
    return x, k, s, p, d


def _max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """Max over ``kernel_size`` windows of the last two dims (see ``ops.nn.max_pool2d``).
    Records ``MaxPool2DWithIndicesBackward0``; ``return_indices`` also gives the int64 flat
    in-plane argmax of each window."""
    x, k, s, p, d = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation)
    _kernel_float("max_pool2d", x)
    out, idx = _ops.max_pool2d(x, k, s, p, d, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    """Mean over ``kernel_size`` windows of the last two dims (see ``ops.nn.avg_pool2d``).
    Records ``AvgPool2DBackward0``."""
    x, k, s, p, _ = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1)
    _kernel_float("avg_pool2d", x)
    if divisor_override is not None and divisor_override <= 0:
        raise RuntimeError("divisor must be not zero")
    return _ops.avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override)


# --- dropout / normalisation / embedding ----------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (only
    when ``training``): ``y = x * m`` with the random mask ``m`` a constant, so the node is
    ``MulBackward0`` (as PyTorch) and the derivative ``g * m``. Uses ``jitgrad.manual_seed``'s
    generator."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _tensor(input, "dropout")
    if not training or p == 0:
        return x
    if x.is_cuda:
        keep = _creation.generator().random(x.shape) >= p
        scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        mask = _T()._make((keep * scale).astype(x.dtype.np))
    else:  # (a row: jitgrad.compile captures the draw)
        mask = _random_rows.dropout_mask(x, p)
    return x.mul_(mask) if inplace else binary.mul(x, mask)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,  # noqa: A002
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) of ``(N, C, *)`` input; see ``ops.nn.batch_norm``.

    In training the batch statistics are used and ``running_mean``/``running_var`` (Tensors or
    None) are updated in place (their version counters bump). Records
    ``NativeBatchNormBackward0``."""
    x = _tensor(input, "batch_norm")
    _kernel_float("batch_norm", x, weight, bias)
    if x.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {x.ndim}D input)")
    C = x.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and tuple(t.shape) != (C,):
            raise RuntimeError(f"batch_norm: {name} should contain {C} elements not {t.numel()}")
    if training:
        if x.numel() // C <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {list(x.shape)}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in "
                           "evaluation mode")
    on_cuda = x.is_cuda
    if on_cuda:
        stats = [t for t in (running_mean, running_var) if t is not None]
        if any(t.device != x.device for t in stats):
            if training:  # updated in place: they must live where the kernel runs
                raise RuntimeError(dispatch.MIXED_DEVICES_MSG.format(
                    x.device, next(t.device for t in stats if t.device != x.device),
                    "batch_norm (running_mean/running_var)"))
            running_mean, running_var = (_on_device_of(x, t) for t in (running_mean, running_var))
        weight, bias = _on_device_of(x, weight), _on_device_of(x, bias)
    if not training and _upper.host_read_hook is not None:
        # a jitgrad.compile trace: the row would take the running stats as attributes (their
        # values baked into the program); as ops they are inputs, read afresh at each call
        return _batch_norm_eval_ops(x, running_mean, running_var, weight, bias, eps)
    # the running stats reach the kernel as arrays (attributes of the op: their values would be
    # baked into a compiled program), read in eval mode and updated in place in training
    mean = var = None
    if running_mean is not None or running_var is not None:
        stats = [t for t in (running_mean, running_var) if t is not None]
        if training:
            guard_writes(*stats)
        if on_cuda:  # the device arrays (jitgrad.compile runs CUDA tensors eagerly)
            stats = [t._data for t in stats]  # device read: the device kernel's operands
        else:
            stats = [t._host("batch_norm") for t in stats]  # (the arrays themselves on the CPU)
        mean = None if running_mean is None else stats[0]
        var = None if running_var is None else stats[-1]
    out = _ops.batch_norm(x, weight, bias, mean, var, training,
                          0.0 if momentum is None else momentum, eps)
    if training:
        for t in (running_mean, running_var):
            if t is not None:
                t._version_counter.bump()
    return out


def _batch_norm_eval_ops(x, running_mean, running_var, weight, bias, eps):
    """Eval-mode batch norm as Tensor ops, ``(x - m) invstd w + b`` with
    ``invstd = (v + eps)^(-1/2)`` per channel (dim 1), the statistics taken in float64 as the
    row's kernel does. The running stats get no gradient (detached), as in the row; ``x``'s is
    ``g w invstd``, ``weight``'s ``sum(g xhat)``, ``bias``'s ``sum(g)``."""
    bshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)

    def stat(t):  # (a detach of a closure is no op: buffers need none)
        return shape.reshape((t.detach() if t.requires_grad else t).to(_dtypes.float64), bshape)

    mean, invstd = stat(running_mean), (stat(running_var) + eps) ** -0.5
    out = (x - mean.to(x.dtype)) * invstd.to(x.dtype)
    if weight is not None:  # (in x's dtype, as the kernel's output)
        out = out * shape.reshape(weight.to(x.dtype), bshape)
    if bias is not None:
        out = out + shape.reshape(bias.to(x.dtype), bshape)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalise over the trailing ``normalized_shape`` dims (see ``ops.nn.layer_norm``).
    Records ``NativeLayerNormBackward0``."""
    x = _tensor(input, "layer_norm")
    _kernel_float("layer_norm", x, weight, bias)
    ns = (int(normalized_shape),) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(int(n) for n in normalized_shape)
    if len(ns) == 0 or tuple(x.shape[x.ndim - len(ns):]) != ns or len(ns) > x.ndim:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(x.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"layer_norm: {name} must have shape {ns}, got {tuple(t.shape)}")
    return _ops.layer_norm(x, ns, weight, bias, eps)



def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at the int indices ``input`` (see ``ops.nn.embedding``).

    ``max_norm``: the looked-up rows whose ``norm_type``-norm exceeds it are rescaled in place
    (under no_grad) first, as PyTorch. ``sparse`` gradients are not supported."""
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported")
    w = _tensor(weight, "embedding")
    _kernel_float("embedding", w)
    idx = _index_array(input, "embedding")
    n = w.shape[0]
    on_cuda = w.is_cuda
    if on_cuda:  # indices go to the weight's device; their range is not checked there
        if dispatch.device_of(idx) == "cpu":  # (that would copy them back to the host)
            idx = dispatch.move(idx, w.device)
        if max_norm is not None:
            raise NotImplementedError("embedding: max_norm is not supported on CUDA yet")
    elif dispatch.device_of(idx) != "cpu":
        raise RuntimeError(dispatch.MIXED_DEVICES_MSG.format(idx.device, "cpu", "embedding"))
    elif idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = padding_idx % n
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx)
            data = w._host("embedding(max_norm)")  # (a CPU weight: its array itself)
            norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
            big = norms > max_norm
            if big.any():
                guard_writes(w)
                data[rows[big]] *= (max_norm / (norms[big] + 1e-7))[:, None].astype(w.dtype.np)
                w._version_counter.bump()
    return _ops.embedding(w, idx, padding_idx, scale_grad_by_freq)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding: ``out[..., c] = (tensor[...] == c)``."""
    idx = _index_array(tensor, "one_hot")
    if num_classes < 0:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _T()._make((idx[..., None] == np.arange(num_classes)).astype(np.int64))


# --- losses --------------------------------------------------------------------------------

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
             weight=None):
    """Mean squared error ``(x - y)^2`` (see ``ops.nn.mse_loss``). ``MseLossBackward0``.
    ``weight`` (the input's shape): ``w (x - y)^2``, 'mean' divided by ``sum(w)``."""
    x, y = _pair("mse_loss", input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        return _loss.weighted_reduction((x - y) ** 2, weight, reduction, "mse_loss")
    return _ops.mse_loss(x, y, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
            weight=None):
    """``|x - y|`` reduced, composed of ``sub``, ``abs`` and ``mean``/``sum`` as in PyTorch
    (derivative ``sign(x - y) g``); ``weight`` as in ``mse_loss``."""
    x, y = _pair("l1_loss", input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if weight is not None:
        return _loss.weighted_reduction(unary.abs(x - y), weight, reduction, "l1_loss")
    return _apply_reduction(unary.abs(x - y), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):  # noqa: A002
    """Huber loss with threshold ``delta`` (see ``ops.nn.huber_loss``); ``weight``: ``w l``,
    'mean' averaged over the elements (not divided by ``sum(w)``, as PyTorch)."""
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got "
                           f"{delta}")
    x, y = _pair("huber_loss", input, target)
    if weight is not None:
        pointwise = _ops.huber_loss(x, y, "none", delta)
        return _loss.weighted_reduction(pointwise, weight, _reduction(reduction), "huber_loss",
                                        mean_by_weight=False)
    return _ops.huber_loss(x, y, _reduction(reduction), delta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,  # noqa: A002
                         reduction="mean"):
    """``-w (y log x + (1 - y) log(1 - x))`` on probabilities ``x`` (see
    ``ops.nn.binary_cross_entropy``)."""
    x, y = _tensor(input, "binary_cross_entropy"), _tensor(target, "binary_cross_entropy")
    if x.shape != y.shape:
        raise ValueError(f"Using a target size ({list(y.shape)}) that is different to the input "
                         f"size ({list(x.shape)}) is deprecated. Please ensure they have the same "
                         "size.")
    w = None if weight is None else _on_device_of(x, _tensor(weight, "binary_cross_entropy"))
    return _ops.binary_cross_entropy(x, y, w, _reduction(reduction, size_average, reduce))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction="mean", pos_weight=None):
    """Sigmoid + binary cross-entropy in one stable op (see
    ``ops.nn.binary_cross_entropy_with_logits``)."""
    x = _tensor(input, "binary_cross_entropy_with_logits")
    y = _tensor(target, "binary_cross_entropy_with_logits")
    if x.shape != y.shape:
        raise ValueError(f"Target size ({list(y.shape)}) must be the same as input size "
                         f"({list(x.shape)})")
    w = None if weight is None else _on_device_of(
        x, _tensor(weight, "binary_cross_entropy_with_logits"))
    pw = None if pos_weight is None else _on_device_of(
        x, _tensor(pos_weight, "binary_cross_entropy_with_logits"))
    return _ops.binary_cross_entropy_with_logits(x, y, w, pw,
                                                 _reduction(reduction, size_average, reduce))


def _target_tensor(target, op):
    """Class-index targets as an int64 Tensor (kept a Tensor: under ``jitgrad.compile`` they
    are an input whose values may change between calls, never read on the host)."""
    t = target if isinstance(target, _T()) else _creation.tensor(np.asarray(target))
    if t.dtype.np.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer (Long) index tensor, got {t.dtype.np}")
    return t if t.dtype.np == np.int64 else unary.cast(t, _dtypes.int64)


def _class_layout(op, x, target):
    """(x as (M, C), int64 target Tensor (M,), output shape for 'none') for (N, C, d...) /
    (C,) inputs."""
    t = _target_tensor(target, op)
    if x.ndim == 1:
        if t.ndim != 0:
            raise RuntimeError(f"{op}: 1D input needs a 0D target, got {t.ndim}D")
        return shape.unsqueeze(x, 0), shape.reshape(t, (1,)), ()
    if x.ndim < 1 or t.shape[:1] != x.shape[:1]:
        raise ValueError(f"Expected input batch_size ({x.shape[0] if x.ndim else 0}) to match "
                         f"target batch_size ({t.shape[0] if t.ndim else 0}).")
    if t.shape != x.shape[:1] + x.shape[2:]:
        raise RuntimeError(f"{op}: expected target of shape {list(x.shape[:1] + x.shape[2:])}, "
                           f"got {list(t.shape)}")
    if x.ndim == 2:
        return x, t, t.shape
    C = x.shape[1]
    perm = (0,) + tuple(range(2, x.ndim)) + (1,)
    return shape.reshape(shape.permute(x, perm), (-1, C)), shape.reshape(t, (-1,)), t.shape


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,  # noqa: A002
             reduction="mean"):
    """Negative log-likelihood of log-probabilities (class dim 1) at int class targets; see
    ``ops.nn.nll_loss``. Targets out of range raise an IndexError (checked on the CPU; a CUDA
    kernel asserts). Records ``NllLossBackward0``."""
    x = _tensor(input, "nll_loss")
    _kernel_float("nll_loss", x)
    reduction = _reduction(reduction, size_average, reduce)
    from .. import func  # (nn -> func) per-example targets under vmap: a one-hot formulation
    if isinstance(target, func.BatchedTensor):
        return func.nll_loss_one_hot(x, target, weight, ignore_index, reduction)
    x2, t, out_shape = _class_layout("nll_loss", x, target)
    if (t.is_cuda or x.is_cuda) and t.device != x.device:
        if t.is_cuda:
            raise RuntimeError(dispatch.MIXED_DEVICES_MSG.format(t.device, x.device, "nll_loss"))
        t = t.to(x.device)  # the targets go where the log-probabilities are
    w = _weight_tensor(weight, x2.shape[1], x, "nll_loss")
    out = _ops.nll_loss(x2, t, w, ignore_index, reduction)
    return shape.reshape(out, out_shape) if reduction == "none" and out.shape != out_shape else out


def _weight_tensor(weight, C, x, op):
    """The class weights as a (C,) Tensor of x's dtype on x's device, or None. They get no
    gradient (nll_loss has no derivative for them)."""
    if weight is None:
        return None
    w = weight if isinstance(weight, _T()) else _creation.tensor(np.asarray(weight))
    if w.shape != (C,):
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no "
                           "classes")
    return _on_device_of(x, unary.cast(w, x.dtype))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,  # noqa: A002
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross-entropy of unnormalised logits (class dim 1) with class-index targets (int) or
    class probabilities (float, input's shape).

    Indices: ``nll_loss(log_softmax(x, 1), t)`` (nodes ``NllLossBackward0`` then
    ``LogSoftmaxBackward0``, as PyTorch); with ``label_smoothing`` e the loss is
    ``(1 - e) nll + e/C sum_c -w_c log p_c``. Probabilities: ``-sum_c w_c y_c log p_c`` per
    sample ('mean' divides by the number of samples). Derivative with respect to the logits:
    ``softmax(x) - y`` (weighted, scaled by the reduction).
    """
    x = _tensor(input, "cross_entropy")
    reduction = _reduction(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if x.ndim == 0:
        raise RuntimeError("cross_entropy: input must have at least 1 dim")
    cdim = 0 if x.ndim == 1 else 1
    C = x.shape[cdim]
    logp = _ops.log_softmax(x, cdim)
    tgt = target if isinstance(target, _T()) else _creation.tensor(np.asarray(target))
    if x.is_cuda and not tgt.is_cuda:
        tgt = tgt.to(x.device)
    w = _weight_tensor(weight, C, x, "cross_entropy")
    if tgt.dtype.is_floating_point:
        if tgt.shape != x.shape:
            raise RuntimeError(f"cross_entropy: probability targets must have the input's shape "
                               f"{list(x.shape)}, got {list(tgt.shape)}")
        if label_smoothing > 0:
            tgt = tgt * (1.0 - label_smoothing) + label_smoothing / C
        prod = logp * tgt
        if w is not None:
            prod = prod * shape.reshape(w, (C,) + (1,) * (x.ndim - cdim - 1))
        loss = -_red.sum(prod, cdim)
        if reduction == "mean":
            return loss.sum() / (loss.numel() if x.ndim > 1 else 1)
        return loss.sum() if reduction == "sum" else loss
    nll = nll_loss(logp, tgt, w, None, ignore_index, None, reduction)
    if label_smoothing == 0:
        return nll
    return _smoothed(nll, logp, tgt, w, ignore_index, reduction, label_smoothing, C)


def _smoothed(nll, logp, tgt, w, ignore_index, reduction, label_smoothing, C):
    """``cross_entropy``'s label-smoothing term, with Tensor ops only (no host copies; the
    targets may be a compiled program's input): the kept-sample mask is a comparison, and the
    'mean' denominator (the kept samples' total class weight) is the NLL of a constant -1
    input with reduction 'sum'."""
    x2, t, out_shape = _class_layout("cross_entropy", logp, tgt)
    keep = unary.cast(t != ignore_index, logp.dtype)
    terms = x2 if w is None else x2 * w
    smooth = -_red.sum(terms, 1) * keep
    if reduction == "none":
        smooth = shape.reshape(smooth, out_shape)
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        minus_one = _creation.full((x2.shape[0], C), -1.0, dtype=logp.dtype, device=logp.device)
        denom = _ops.nll_loss(minus_one, t, w, ignore_index, "sum")
        smooth = smooth.sum() / denom
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / C)


# the namespace's functions from its other modules, and max_pool2d's return_indices dispatch
__all__ += _act.__all__ + _loss.__all__ + _pool.__all__ + _convs.__all__ + _sample.__all__
max_pool2d = _pool.boolean_dispatch("return_indices", 6, False, _pool.max_pool2d_with_indices,
                                    _max_pool2d, __name__, "max_pool2d")
