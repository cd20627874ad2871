"""``jitgrad.nn.functional``: the losses beyond ``functional.py``'s fused ones, and the
``weight=`` forms of ``mse_loss``/``l1_loss``/``huber_loss``.

Each loss is composed of differentiable ops, so its gradients of every order (with respect to
the input and, where it is a float tensor, the target) come from those ops. ``reduction`` is
PyTorch's: ``'none'`` keeps the per-element (or per-sample) losses, ``'sum'`` adds them and
``'mean'`` averages them; the legacy ``size_average``/``reduce`` arguments map onto it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..ops import binary, shape, unary
from ..ops import reduce as _red
from ._functional_act import logsigmoid, pairwise_distance
from ._functional_common import (shape_const as _sconst, shape_index as _sindex,
                                 class_targets, value_check, on_device_of,
                                 apply_reduction as _apply_reduction,
                                 float_tensor as _float_tensor,
                                 loss_pair as _pair,
                                 reduction_mode as _reduction, as_tensor as _tensor)

__all__ = ["kl_div", "smooth_l1_loss", "soft_margin_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "cosine_embedding_loss", "gaussian_nll_loss",
           "poisson_nll_loss", "multi_margin_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]


def weighted_reduction(loss, weight, reduction, op, mean_by_weight=True):
    """PyTorch's elementwise loss ``weight``: ``w * loss``; ``'mean'`` divides by ``sum(w)``
    (a weighted mean; by the element count without ``mean_by_weight``, as PyTorch's
    ``huber_loss``). ``weight`` must have the loss's shape."""
    w = _float_tensor(weight, op)
    if w.shape != loss.shape:
        raise ValueError("Weights and input must have the same size.")
    wl = loss * w
    if reduction == "mean":
        return _red.sum(wl) / _red.sum(w) if mean_by_weight else _red.mean(wl)
    return _red.sum(wl) if reduction == "sum" else wl


def _where0(cond, value):
    return binary.where(cond, value, _sconst(value, 0.0))


def _xlogy(t):
    """``t log t`` with ``0 log 0 = 0`` (the ``log`` argument kept finite where ``t = 0``)."""
    pos = t > 0
    return _where0(pos, t * unary.log(binary.where(pos, t, _sconst(t, 1.0))))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
           log_target=False):
    """Kullback-Leibler divergence of log-probabilities ``x`` from ``y``: pointwise
    ``y (log y - x)`` (0 where ``y = 0``), or ``exp(y) (y - x)`` with ``log_target``.
    ``'batchmean'`` divides the sum by the batch size (the KL divergence proper); ``'mean'``
    averages over every element (with PyTorch's warning). Derivatives ``-y`` (``-exp(y)``) for
    ``x`` and ``log y + 1 - x`` (``exp(y) (y - x + 1)``) for ``y``."""
    if reduction == "batchmean":
        reduction_ = "batchmean"
    else:
        reduction_ = _reduction(reduction, size_average, reduce)
        if reduction_ == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          UserWarning, stacklevel=2)
    x, y = _float_tensor(input, "kl_div"), _float_tensor(target, "kl_div")
    if log_target:
        loss = unary.exp(y) * (y - x)
    else:
        loss = _xlogy(y) - y * x
    if reduction_ == "batchmean":
        return _red.sum(loss) / (x.shape[0] if x.ndim else 1)
    return _apply_reduction(loss, reduction_)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",  # noqa: A002
                   beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta`` else ``|d| - beta / 2``, ``d = x - y`` (plain
    L1 for ``beta = 0``); derivative ``d / beta`` or ``sign(d)``."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, y = _pair("smooth_l1_loss", input, target)
    d = x - y
    a = unary.abs(d)
    loss = a if beta == 0 else binary.where(a < beta, d * d * (0.5 / beta), a - 0.5 * beta)
    return _apply_reduction(loss, _reduction(reduction, size_average, reduce))


def soft_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                     reduction="mean"):
    """``log(1 + exp(-y x))`` (two-class logistic loss, ``y`` in {-1, 1}), computed as
    ``-logsigmoid(y x)``; derivative ``-y sigmoid(-y x)``."""
    x, y = _pair("soft_margin_loss", input, target)
    return _apply_reduction(-logsigmoid(x * y), _reduction(reduction, size_average, reduce))


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -y (x1 - x2) + margin)`` for ranking labels ``y`` in {-1, 1}."""
    a = _float_tensor(input1, "margin_ranking_loss")
    b = _float_tensor(input2, "margin_ranking_loss")
    y = _tensor(target, "margin_ranking_loss")
    if not (a.ndim == b.ndim == y.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {list(a.shape)}, input2: "
                           f"{list(b.shape)}, target: {list(y.shape)} ")
    loss = binary.clamp(-y * (a - b) + margin, min=0.0)
    return _apply_reduction(loss, _reduction(reduction, size_average, reduce))


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,  # noqa: A002
                         reduction="mean"):
    """``x`` where ``y = 1`` and ``max(0, margin - x)`` where ``y = -1`` (elements with other
    labels get both terms, as PyTorch)."""
    x, y = _float_tensor(input, "hinge_embedding_loss"), _tensor(target, "hinge_embedding_loss")
    hinge = binary.clamp(margin - x, min=0.0)
    loss = _where0(y != 1, hinge) + _where0(y != -1, x)
    return _apply_reduction(loss, _reduction(reduction, size_average, reduce))


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``y = 1`` and ``max(0, cos(x1, x2) - margin)`` where
    ``y = -1``; the cosine is taken along the last dim as ``x1.x2 / sqrt((|x1|^2 + e)
    (|x2|^2 + e))`` with ``e = 1e-12``."""
    a = _float_tensor(input1, "cosine_embedding_loss")
    b = _float_tensor(input2, "cosine_embedding_loss")
    y = _tensor(target, "cosine_embedding_loss")
    if a.shape != b.shape or a.ndim not in (1, 2):
        raise RuntimeError(f"cosine_embedding_loss: expected 1D or 2D inputs of the same shape,"
                           f" got {list(a.shape)} and {list(b.shape)}")
    if y.shape != a.shape[:-1]:
        raise RuntimeError(f"cosine_embedding_loss: expected a target of shape "
                           f"{list(a.shape[:-1])}, got {list(y.shape)}")
    eps = 1e-12
    cos = _red.sum(a * b, -1) / unary.sqrt((_red.sum(a * a, -1) + eps) *
                                          (_red.sum(b * b, -1) + eps))
    loss = _where0(y == 1, 1.0 - cos) + _where0(y == -1, binary.clamp(cos - margin, min=0.0))
    return _apply_reduction(loss, _reduction(reduction, size_average, reduce))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa: A002
    """Gaussian negative log-likelihood ``0.5 (log(max(var, eps)) + (x - y)^2 / max(var, eps))``
    (``+ 0.5 log(2 pi)`` with ``full``). ``var`` has the input's shape, or it without the last
    dim / with a last dim of 1 (one variance per sample), or broadcasts to it. The clamp is
    outside autograd (the gradient passes to ``var`` as if unclamped), as PyTorch."""
    x, y = _float_tensor(input, "gaussian_nll_loss"), _float_tensor(target, "gaussian_nll_loss")
    v = _tensor(var, "gaussian_nll_loss") if not isinstance(var, (int, float)) else \
        _sconst(x, float(var))
    if v.shape != x.shape:
        if x.shape[:-1] == v.shape:
            v = shape.unsqueeze(v, -1)
        elif not (x.shape[:-1] == v.shape[:-1] and v.shape[-1:] == (1,)) and \
                np.broadcast_shapes(v.shape, x.shape) != x.shape:
            raise ValueError("var is of incorrect size")
    reduction = _reduction(reduction)
    v = value_check(v, v < 0, "var has negative entry/entries", ValueError)
    v = v + (binary.clamp(v, min=eps) - v).detach()
    loss = 0.5 * (unary.log(v) + (x - y) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None,  # noqa: A002
                     eps=1e-8, reduce=None, reduction="mean"):
    """Poisson negative log-likelihood: ``exp(x) - y x`` for log-rate input (``log_input``),
    else ``x - y log(x + eps)``; ``full`` adds Stirling's ``y log y - y + 0.5 log(2 pi y)``
    where ``y > 1``."""
    x, y = _float_tensor(input, "poisson_nll_loss"), _float_tensor(target, "poisson_nll_loss")
    loss = unary.exp(x) - y * x if log_input else x - y * unary.log(x + eps)
    if full:
        big = y > 1
        ys = binary.where(big, y, _sconst(y, 1.0))
        stirling = ys * unary.log(ys) - ys + 0.5 * unary.log(ys * (2 * math.pi))
        loss = loss + _where0(big, stirling)
    return _apply_reduction(loss, _reduction(reduction, size_average, reduce))


def _class_scores(op, input, target):  # noqa: A002
    """(input as (N, C), integer targets (N,) as a Tensor, whether it was 1-D) for the
    class-margin losses."""
    x = _float_tensor(input, op)
    t = class_targets(target, op, x)
    if x.ndim not in (1, 2) or tuple(t.shape) != x.shape[:1] * (x.ndim == 2):
        raise RuntimeError(f"{op}: expected a 1D or 2D input and a target of its batch size, got "
                           f"input {list(x.shape)} and target {list(t.shape)}")
    one = x.ndim == 1
    return (shape.unsqueeze(x, 0) if one else x), shape.reshape(t, (-1,)), one


def _is_class(t, C, like):
    """``t[..., None] == arange(C)``: the one-hot (bool) of integer targets ``t``."""
    return shape.unsqueeze(t, -1) == _sindex(np.arange(C), like)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,  # noqa: A002
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: ``sum_{i != y} w_y max(0, margin - x_y + x_i)^p / C`` per
    sample (``p`` 1 or 2, ``y`` the class index). ``x_y`` and ``w_y`` are picked by the
    one-hot of ``y`` (ops: the targets are never read on the host but for the range check)."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x, t, one = _class_scores("multi_margin_loss", input, target)
    N, C = x.shape
    x = value_check(x, (t < 0) | (t >= C), f"multi_margin_loss: target out of range for {C} "
                   "classes")
    hit = _is_class(t, C, x)  # (N, C)
    xy = _red.sum(_where0(hit, x), 1, keepdim=True)
    h = binary.clamp(x - xy + margin, min=0.0)
    if p == 2:
        h = h * h
    h = _where0(~hit, h)  # the other classes only
    if weight is not None:
        w = _float_tensor(weight, "multi_margin_loss")
        if w.shape != (C,):
            raise RuntimeError(f"multi_margin_loss: weight must have shape ({C},), got "
                               f"{list(w.shape)}")
        h = h * _red.sum(_where0(hit, on_device_of(x, w)), 1, keepdim=True)
    loss = _red.sum(h, 1) / C
    reduction = _reduction(reduction, size_average, reduce)
    if one and reduction == "none":
        loss = shape.reshape(loss, ())
    return _apply_reduction(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                           reduction="mean"):
    """Multi-label hinge loss: ``sum_{j, i} max(0, 1 - (x_j - x_i)) / C`` over the target
    classes ``j`` (the leading entries of ``target`` up to the first negative one; a class
    listed twice counts twice) and the non-target classes ``i``."""
    from ..ops.npfuncs import cumsum

    x = _float_tensor(input, "multilabel_margin_loss")
    t = class_targets(target, "multilabel_margin_loss", x)
    if x.ndim not in (1, 2) or tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"multilabel_margin_loss: expected a 1D or 2D input and a target of "
                           f"its shape, got {list(x.shape)} and {list(t.shape)}")
    one = x.ndim == 1
    x2, t2 = (shape.unsqueeze(x, 0), shape.unsqueeze(t, 0)) if one else (x, t)
    N, C = x2.shape
    listed = cumsum(t2 < 0, 1) == 0  # (N, K): before the first negative entry
    x2 = value_check(x2, listed & (t2 >= C), "multilabel_margin_loss: a target out of range "
                    f"for {C} classes")
    # count[n, j]: how often class j is listed; pairs (N, j, i): count_j where i is unlisted
    count = _red.sum((shape.unsqueeze(listed, -1) & _is_class(t2, C, x2)).to(x2.dtype), 1)
    pairs = _where0(shape.unsqueeze(count == 0, 1), shape.unsqueeze(count, 2))
    h = binary.clamp(1.0 - shape.unsqueeze(x2, 2) + shape.unsqueeze(x2, 1), min=0.0)
    loss = _red.sum(h * pairs, (1, 2)) / C
    reduction = _reduction(reduction, size_average, reduce)
    if one and reduction == "none":
        loss = shape.reshape(loss, ())
    return _apply_reduction(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None,  # noqa: A002
                                reduce=None, reduction="mean"):
    """``-mean_c w_c (y_c logsigmoid(x_c) + (1 - y_c) logsigmoid(-x_c))`` per sample (class
    dim last)."""
    x = _float_tensor(input, "multilabel_soft_margin_loss")
    y = _tensor(target, "multilabel_soft_margin_loss")
    loss = -(y * logsigmoid(x) + (1 - y) * logsigmoid(-x))
    if weight is not None:
        loss = loss * _float_tensor(weight, "multilabel_soft_margin_loss")
    loss = _red.mean(loss, -1) if x.ndim else loss
    return _apply_reduction(loss, _reduction(reduction, size_average, reduce))


def _triplet(op, anchor, positive, negative, dist, margin, swap, reduction):
    a, pos, neg = (_float_tensor(t, op) for t in (anchor, positive, negative))
    if margin <= 0:
        raise ValueError(f"{op}: expected margin to be greater than 0, got {margin} instead")
    if not a.ndim == pos.ndim == neg.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a.ndim}D, "
                           f"positive {pos.ndim}D, and negative {neg.ndim}D inputs")
    d_pos, d_neg = dist(a, pos), dist(a, neg)
    if swap:
        d_neg = binary.minimum(d_neg, dist(pos, neg))
    return _apply_reduction(binary.clamp(margin + d_pos - d_neg, min=0.0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm pairwise distance
    (``swap``: ``d(a, n)`` replaced by ``min(d(a, n), d(p, n))``)."""
    return _triplet("triplet_margin_loss", anchor, positive, negative,
                    lambda u, v: pairwise_distance(u, v, p, eps), margin, swap,
                    _reduction(reduction, size_average, reduce))


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``triplet_margin_loss`` with any ``distance_function(x, y) -> Tensor`` (the Euclidean
    ``pairwise_distance`` by default)."""
    dist = pairwise_distance if distance_function is None else distance_function
    return _triplet("triplet_margin_with_distance_loss", anchor, positive, negative, dist,
                    margin, swap, _reduction(reduction))
