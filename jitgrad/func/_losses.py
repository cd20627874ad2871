"""A batchable ``nll_loss`` for class-index targets that vary across a ``vmap`` batch.

``nn.functional.nll_loss`` takes its targets as host integers (an attribute of the
``NllLossBackward0`` row, batched only when the log-probabilities are). When the targets
themselves are batched (per-sample gradients: ``vmap(grad(loss))(x, y)``) the loss is written
with a one-hot encoding instead, elementwise ops and sums only, which vmap batches and autograd
differentiates::

    onehot[..., c] = (t == c) & (t != ignore_index)
    loss_i = -sum_c w_c onehot[i, c] x[i, c];   'mean': sum_i loss_i / sum_i sum_c w_c onehot[i, c]
"""
from __future__ import annotations

import numpy as np

from ..ops import reduce
from ..ops.creation import arange
from ..ops.shape import permute, unsqueeze


def nll_loss_one_hot(input, target, weight=None, ignore_index=-100,  # noqa: A002
                     reduction="mean"):
    """``nll_loss(input, target, weight, ignore_index=, reduction=)`` (PyTorch's layout:
    ``input`` ``(C,)``, ``(N, C)`` or ``(N, C, d...)``, integer ``target`` without the class
    dim) through a one-hot encoding of ``target``: the same values and gradients as
    ``nn.functional.nll_loss``, and it runs under ``vmap`` when ``target`` is batched. Targets
    out of range count as ignored (they cannot be checked inside vmap)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    x = input
    if x.ndim >= 2:  # classes last
        x = permute(x, (0,) + tuple(range(2, x.ndim)) + (1,))
    C = x.shape[-1]
    classes = arange(C)
    keep = unsqueeze(target, -1) == classes
    keep = keep & unsqueeze(target != ignore_index, -1)
    onehot = keep * np.asarray(1.0, x.dtype.np)
    if weight is not None:
        onehot = onehot * weight
    losses = -reduce.sum(onehot * x, -1)
    if reduction == "none":
        return losses
    total = reduce.sum(losses)
    if reduction == "sum":
        return total
    return total / reduce.sum(onehot)
