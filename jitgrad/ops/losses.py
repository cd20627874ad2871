"""Loss rows of the ``nn`` family: ``mse_loss``, ``huber_loss``, ``binary_cross_entropy``
(``_with_logits``) and ``nll_loss`` (cross-entropy is ``log_softmax`` + ``nll_loss``), each with
its math, its Tensor-level backward (double backward for free), jvp and vmap rules. Split from
``ops/nn.py`` (which re-exports these names) to keep files small, with the helpers they share in
``ops/nn_common.py``; the CPU kernels are in ``kernels/cpu/norm.py``, the CUDA forwards in
``ops/nn_cuda.py``.
"""
from __future__ import annotations

import math

import numpy as np

from ..graph.grad_mode import is_grad_enabled
from ..kernels.cpu import norm as cpu_norm
from . import binary, nn_cuda, unary
from . import creation as _creation
from .core import dispatch
from . import reduce as _reduce
from . import shape as _shape
from .nn_common import none_tensor, pad_batched, sum_terms, wrap
from .core.registry import OPS, def_composite


# --- losses ----------------------------------------------------------------------------------
def _reduce_loss(ctx, loss, reduction):
    ctx.n = loss.size
    if reduction == "none":
        return loss
    with np.errstate(invalid="ignore", divide="ignore"):
        r = loss.sum() / loss.size if reduction == "mean" else loss.sum()
    return np.asarray(r, loss.dtype)


def _scale_grad(ctx, g, d):
    """``d`` (the elementwise derivative) times the incoming ``g`` of the reduction."""
    if ctx.reduction == "mean":
        return d * (g / ctx.n)
    return d * g


def _mse_fwd(ctx, x, y, reduction):
    d = x - y
    return _reduce_loss(ctx, d * d, reduction)


def _mse_bwd(ctx, g, x, y):
    gx = _scale_grad(ctx, g, (x - y) * 2.0)
    return gx if ctx.needs_input_grad[0] else None, -gx if ctx.needs_input_grad[1] else None


def _huber_fwd(ctx, x, y, reduction, delta):
    a = np.abs(x - y)
    loss = np.where(a < delta, 0.5 * a * a, delta * (a - 0.5 * delta)).astype(a.dtype, copy=False)
    return _reduce_loss(ctx, loss, reduction)


def _huber_bwd(ctx, g, x, y):
    gx = _scale_grad(ctx, g, binary.clamp(x - y, -ctx.delta, ctx.delta))
    return gx if ctx.needs_input_grad[0] else None, -gx if ctx.needs_input_grad[1] else None


_LOG_MIN = -100.0  # PyTorch clamps the logs of binary cross-entropy at -100


def _bce_fwd(ctx, x, y, w, reduction):
    if x.size and (np.nanmin(x) < 0 or np.nanmax(x) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        loss = -(y * np.maximum(np.log(x), _LOG_MIN) + (1 - y) * np.maximum(np.log1p(-x), _LOG_MIN))
    if w.size:
        loss = loss * w
    return _reduce_loss(ctx, loss.astype(x.dtype, copy=False), reduction)


def _bce_bwd(ctx, g, x, y, weight):
    nx, ny, _ = ctx.needs_input_grad
    w = None if weight.numel() == 0 else weight
    gx = gy = None
    if nx:
        d = (x - y) / binary.clamp((1.0 - x) * x, min=1e-12)
        gx = _scale_grad(ctx, g, d if w is None else d * w)
    if ny:
        d = binary.clamp(unary.log1p(-x), min=_LOG_MIN) - binary.clamp(unary.log(x), min=_LOG_MIN)
        gy = _scale_grad(ctx, g, d if w is None else d * w)
    return gx, gy, None


def _softplus_neg(x):  # log(1 + exp(-x)), stable, on arrays
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)


def _bcel_fwd(ctx, x, y, w, pw, reduction):
    sp = _softplus_neg(x)
    loss = (1 - y) * x + (sp if pw.size == 0 else (1 + (pw - 1) * y) * sp)
    if w.size:
        loss = loss * w
    return _reduce_loss(ctx, loss.astype(x.dtype, copy=False), reduction)


def _bcel_bwd(ctx, g, x, y, weight, pos_weight):
    nx, ny = ctx.needs_input_grad[:2]
    w = None if weight.numel() == 0 else weight
    pw = None if pos_weight.numel() == 0 else pos_weight
    gx = gy = None
    if nx:
        s = unary.sigmoid(x)
        d = s - y if pw is None else (pw * y + 1.0 - y) * s - pw * y
        gx = _scale_grad(ctx, g, d if w is None else d * w)
    if ny:
        d = -x
        if pw is not None:
            d = d + (pw - 1.0) * (unary.log1p(unary.exp(-unary.abs(x))) + unary.relu(-x))
        gy = _scale_grad(ctx, g, d if w is None else d * w)
    return gx, gy, None, None


# jvp rules: the elementwise derivative times the tangents, reduced as the loss.
def _reduce_t(t, reduction):
    if reduction == "none":
        return t
    return _reduce.mean(t) if reduction == "mean" else _reduce.sum(t)


def _diff_t(tx, ty):
    return tx if ty is None else (-ty if tx is None else tx - ty)


def _mse_jvp(tangents, primals, outs, reduction):
    (x, y), t = primals, _diff_t(*tangents)
    return _reduce_t((x - y) * 2.0 * t, reduction)


def _huber_jvp(tangents, primals, outs, reduction, delta):
    (x, y), t = primals, _diff_t(*tangents)
    return _reduce_t(binary.clamp(x - y, -delta, delta) * t, reduction)


def _bce_jvp(tangents, primals, outs, reduction):
    (tx, ty, tw), (x, y, w) = tangents, primals
    w = None if w.numel() == 0 else w
    logx = binary.clamp(unary.log(x), min=_LOG_MIN)
    log1mx = binary.clamp(unary.log1p(-x), min=_LOG_MIN)
    t = sum_terms(None if tx is None else (x - y) / binary.clamp((1.0 - x) * x, min=1e-12) * tx,
                  None if ty is None else (log1mx - logx) * ty)
    if w is not None and t is not None:
        t = t * w
    t = sum_terms(t, None if tw is None else -(y * logx + (1.0 - y) * log1mx) * tw)
    return _reduce_t(t, reduction)


def _bcel_jvp(tangents, primals, outs, reduction):
    (tx, ty, tw, tp), (x, y, w, pw) = tangents, primals
    w = None if w.numel() == 0 else w
    pw = None if pw.numel() == 0 else pw
    sp = unary.log1p(unary.exp(-unary.abs(x))) + unary.relu(-x)  # softplus(-x)
    t = None
    if tx is not None:
        s = unary.sigmoid(x)
        t = (s - y if pw is None else (pw * y + 1.0 - y) * s - pw * y) * tx
    if ty is not None:
        t = sum_terms(t, (-x if pw is None else -x + (pw - 1.0) * sp) * ty)
    if tp is not None:
        t = sum_terms(t, y * sp * tp)
    if w is not None and t is not None:
        t = t * w
    if tw is not None:
        t = sum_terms(t, ((1.0 - y) * x + (sp if pw is None else (1.0 + (pw - 1.0) * y) * sp))
                      * tw)
    return _reduce_t(t, reduction)


# Batch rules: the unreduced loss of the batch (operands padded to a common example rank,
# absent weights left alone), then each example's reduction.
def _loss_batch(name):
    """The batch rule of the loss row ``name`` (looked up when the rule runs)."""
    def rule(args, batched, reduction, **attrs):
        op = OPS[name]
        nd = max(a.ndim - b for a, b in zip(args, batched) if a.numel() or b)
        new = [pad_batched(a, nd) if b else a for a, b in zip(args, batched)]
        out = dispatch.composite(op, *new, reduction="none", **attrs)
        if reduction == "none":
            return out
        dims = tuple(range(1, out.ndim))
        if not dims:
            return out
        return _reduce.mean(out, dims) if reduction == "mean" else _reduce.sum(out, dims)
    return rule


MSE_LOSS = def_composite("mse_loss", "MseLossBackward0", ("x", "y"), _mse_fwd, _mse_bwd,
                         attrs=("reduction",), save=("x", "y"), jvp=_mse_jvp,
                         batch_rule=_loss_batch("mse_loss"), cuda_forward=nn_cuda.mse_loss_forward)
HUBER_LOSS = def_composite("huber_loss", "HuberLossBackward0", ("x", "y"), _huber_fwd,
                           _huber_bwd, attrs=("reduction", "delta"), save=("x", "y"),
                           jvp=_huber_jvp, batch_rule=_loss_batch("huber_loss"),
                           cuda_forward=nn_cuda.huber_loss_forward)
BCE = def_composite("binary_cross_entropy", "BinaryCrossEntropyBackward0", ("x", "y", "weight"),
                    _bce_fwd, _bce_bwd, attrs=("reduction",), save=("x", "y", "weight"),
                    jvp=_bce_jvp, batch_rule=_loss_batch("binary_cross_entropy"),
                    cuda_forward=nn_cuda.binary_cross_entropy_forward)
BCE_LOGITS = def_composite("binary_cross_entropy_with_logits",
                           "BinaryCrossEntropyWithLogitsBackward0",
                           ("x", "y", "weight", "pos_weight"), _bcel_fwd, _bcel_bwd,
                           attrs=("reduction",), save=("x", "y", "weight", "pos_weight"),
                           jvp=_bcel_jvp,
                           batch_rule=_loss_batch("binary_cross_entropy_with_logits"),
                           cuda_forward=nn_cuda.binary_cross_entropy_with_logits_forward)


def mse_loss(x, y, reduction):
    """``(x - y)^2`` reduced; derivatives ``2 (x - y) g`` (``/ n`` for the mean) and its
    negative. Records ``MseLossBackward0``."""
    return dispatch.composite(MSE_LOSS, x, y, reduction=reduction)


def huber_loss(x, y, reduction, delta):
    """``0.5 d^2`` where ``|d| < delta`` else ``delta (|d| - delta / 2)``, ``d = x - y``;
    derivative ``clamp(d, -delta, delta)``. Records ``HuberLossBackward0``."""
    return dispatch.composite(HUBER_LOSS, x, y, reduction=reduction, delta=float(delta))


def binary_cross_entropy(x, y, weight, reduction):
    """``-w (y log x + (1 - y) log(1 - x))`` (logs clamped at -100); derivatives
    ``w (x - y) / max(x (1 - x), 1e-12)`` and ``w (log(1 - x) - log x)``.
    Records ``BinaryCrossEntropyBackward0``."""
    return dispatch.composite(BCE, x, y, weight if weight is not None else none_tensor(x),
                              reduction=reduction)


def binary_cross_entropy_with_logits(x, y, weight, pos_weight, reduction):
    """``w ((1 - y) x + (1 + (p - 1) y) softplus(-x))`` (``p`` the pos_weight, 1 if None),
    computed stably; derivatives ``w ((p y + 1 - y) sigmoid(x) - p y)`` and
    ``w (-x + (p - 1) softplus(-x))``. Records ``BinaryCrossEntropyWithLogitsBackward0``."""
    none = none_tensor(x)
    return dispatch.composite(BCE_LOGITS, x, y, weight if weight is not None else none,
                              pos_weight if pos_weight is not None else none,
                              reduction=reduction)


def _check_targets(t, C, ignore_index):
    """IndexError for a target outside ``[0, C)`` that is not ``ignore_index``: made in the
    row's CPU forward, so it runs at every call of a compiled program too (a native segment
    runs the same check kernel and raises the same error; the CUDA kernel asserts instead)."""
    bad = cpu_norm.first_bad_target(t, C, ignore_index)
    if bad >= 0:
        raise IndexError(f"Target {int(t.reshape(-1)[bad])} is out of bounds.")


def _nll_fwd(ctx, x, target, weight, ignore_index, reduction):
    _check_targets(target, x.shape[1], ignore_index)
    losses, total, wsum = cpu_norm.nll_forward(np.ascontiguousarray(x), target, weight,
                                             ignore_index, reduction)
    ctx.wsum = wsum
    if reduction == "none":
        return losses
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.float64(total) / wsum if reduction == "mean" else total, x.dtype)


def _nll_grad(g, target, weight, C, ignore_index, reduction):
    """The derivative with Tensor ops (a recorded backward: create_graph, or a compile trace,
    where the targets are an input whose values change between calls):
    ``gx[i, c] = -g_i w_c [c == t_i] [t_i != ignore_index]`` (``w = 1`` without weights), for
    'mean' divided by the total weight of the counted samples (NaN where that is 0, as the
    kernel)."""
    classes = _creation.arange(C, device=target.device)
    hit = (_shape.unsqueeze(target, -1) == classes) & _shape.unsqueeze(target != ignore_index, -1)
    coef = unary.cast(hit, g.dtype)
    if weight.numel():
        coef = coef * weight
    if reduction == "mean":
        total = _reduce.sum(coef)
        coef = binary.where(hit, coef / binary.where(total == 0, math.nan, total), 0.0)
    gb = _shape.unsqueeze(g, -1) if reduction == "none" else g
    return gb * -coef


def _nll_bwd(ctx, g, target, weight):
    if not ctx.needs_input_grad[0]:
        return None, None, None
    shape = ctx._next_meta[0][0]
    if is_grad_enabled() or dispatch.transform_hook is not None:
        return _nll_grad(g, target, weight, shape[1], ctx.ignore_index, ctx.reduction), None, None
    if g.is_cuda:  # ctx.wsum: the device array (total, wsum) of the forward
        gx = dispatch.cuda_kernels("nn_norm").nll_backward(
            g._data, target._data, weight._data, shape, ctx.ignore_index, ctx.reduction,
            ctx.wsum)
        return wrap(gx), None, None
    scale = 1.0 / ctx.wsum if ctx.reduction == "mean" and ctx.wsum else (
        math.nan if ctx.reduction == "mean" else 1.0)
    gx = cpu_norm.nll_backward(np.ascontiguousarray(g._data), target._data, weight._data, shape,
                               ctx.ignore_index, ctx.reduction, scale)
    return wrap(gx), None, None


def _nll_jvp(tangents, primals, outs, ignore_index, reduction):
    """Linear in the log-probabilities: the loss of the tangent."""
    tx, (_, target, weight) = tangents[0], primals
    return None if tx is None else dispatch.composite(
        NLL_LOSS, tx, target, weight, ignore_index=ignore_index, reduction=reduction)


def _nll_batch(args, batched, ignore_index, reduction):
    """The examples' samples in one call of reduction 'none' (log-probabilities ``(B, N, C)``
    as ``(B N, C)``, the targets broadcast to ``(B, N)`` and flattened), then each example's
    reduction; 'mean' divides by each example's total weight (the 'none' losses of a -1
    input)."""
    x, target, weight = args
    if batched[2]:
        raise NotImplementedError("nll_loss: vmap over the class weights is not supported")
    size = (x if batched[0] else target).shape[0]
    if not batched[0]:
        x = _shape.expand(_shape.unsqueeze(x, 0), (size,) + tuple(x.shape))
    if not batched[1]:
        target = _shape.expand(_shape.unsqueeze(target, 0), (size,) + tuple(target.shape))
    flat = _shape.reshape(x, (-1, x.shape[-1]))
    tflat = _shape.reshape(target, (-1,))

    def losses(v):
        out = dispatch.composite(NLL_LOSS, v, tflat, weight, ignore_index=ignore_index,
                                 reduction="none")
        return _shape.reshape(out, (size, -1))
    out = losses(flat)
    if reduction == "none":
        return out
    total = _reduce.sum(out, (1,))
    if reduction == "sum":
        return total
    ones = _creation.full(tuple(flat.shape), -1.0, dtype=flat.dtype, device=flat.device)
    return total / _reduce.sum(losses(ones), (1,))


# linear in x; the targets (int64) and class weights are inputs without derivatives
NLL_LOSS = def_composite("nll_loss", "NllLossBackward0", ("x", "target", "weight"), _nll_fwd,
                         _nll_bwd, attrs=("ignore_index", "reduction"), save=("target", "weight"),
                         no_grad=("target", "weight"),
                         jvp=_nll_jvp, batch_rule=_nll_batch, cuda_forward=nn_cuda.nll_loss_forward)


def nll_loss(x, target, weight, ignore_index, reduction):
    """Negative log-likelihood of log-probabilities ``x`` (N, C) at int64 class ``target``
    (N,) (a Tensor on x's device): ``-w[t_i] x[i, t_i]``, 0 where ``t_i == ignore_index``;
    'mean' divides by the total weight of the counted samples. ``weight``: a (C,) Tensor of
    x's dtype on its device, or None. Derivative: ``-w[t_i] g`` at ``(i, t_i)``.
    Records ``NllLossBackward0``."""
    return dispatch.composite(NLL_LOSS, x, target, none_tensor(x) if weight is None else weight,
                              ignore_index=int(ignore_index), reduction=reduction)
