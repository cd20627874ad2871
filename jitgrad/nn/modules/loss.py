"""Loss modules (call ``loss(input, target)``): thin wrappers over the losses of
``nn.functional`` with PyTorch's constructor arguments. ``reduction`` is 'mean', 'sum' or
'none'; ``size_average``/``reduce`` are PyTorch's deprecated spellings of it."""
from __future__ import annotations

from .. import functional
from .distance import PairwiseDistance
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:  # PyTorch's legacy spelling
            reduction = functional._reduction(reduction, size_average, reduce)
        self.reduction = reduction  # checked by the functional form (e.g. 'batchmean')


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error ``(x - y)^2``, reduced by ``reduction`` ('mean', 'sum', 'none')."""

    def forward(self, input, target):  # noqa: A002 - PyTorch's argument name
        return functional.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|x - y|``."""

    def forward(self, input, target):  # noqa: A002
        return functional.l1_loss(input, target, reduction=self.reduction)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear above."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):  # noqa: A002
        return functional.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities at class indices."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):  # noqa: A002
        return functional.nll_loss(input, target, weight=self.weight,
                                   ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits with class indices or class probabilities (see
    ``nn.functional.cross_entropy``)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):  # noqa: A002
        return functional.cross_entropy(input, target, weight=self.weight,
                                        ignore_index=self.ignore_index, reduction=self.reduction,
                                        label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities."""

    def forward(self, input, target):  # noqa: A002
        return functional.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross-entropy, numerically stable; ``pos_weight`` weighs positives."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):  # noqa: A002
        return functional.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class SmoothL1Loss(_Loss):
    """``0.5 (x - y)^2 / beta`` where ``|x - y| < beta``, else ``|x - y| - 0.5 beta``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):  # noqa: A002
        return functional.smooth_l1_loss(input, target, reduction=self.reduction,
                                         beta=self.beta)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + exp(-y x))`` with targets ``y`` in {1, -1}."""

    def forward(self, input, target):  # noqa: A002
        return functional.soft_margin_loss(input, target, reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence ``y (log y - x)`` of log-probabilities ``x`` from the
    target ``y`` (``log_target``: ``y`` is given as log-probabilities, ``exp(y) (y - x)``).
    ``reduction='batchmean'`` divides the sum by the batch size (the true KL divergence)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):  # noqa: A002
        return functional.kl_div(input, target, reduction=self.reduction,
                                 log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood: ``exp(x) - y x`` (``log_input``) or
    ``x - y log(x + eps)``; ``full`` adds Stirling's term ``y log y - y + 0.5 log(2 pi y)``
    where ``y > 1``."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return functional.poisson_nll_loss(log_input, target, log_input=self.log_input,
                                           full=self.full, eps=self.eps,
                                           reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood ``0.5 (log(max(var, eps)) + (x - y)^2 /
    max(var, eps))`` (+ ``0.5 log(2 pi)`` when ``full``); ``forward(input, target, var)``."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):  # noqa: A002
        return functional.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                            reduction=self.reduction)


class _MarginLoss(_Loss):
    """A loss with a ``margin``."""

    _margin = 0.0

    def __init__(self, margin=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = self._margin if margin is None else margin


class MarginRankingLoss(_MarginLoss):
    """``max(0, -y (x1 - x2) + margin)`` with ``y`` in {1, -1};
    ``forward(input1, input2, target)``."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        return functional.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                              reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):  # noqa: A002
        return functional.hinge_embedding_loss(input, target, margin=self.margin,
                                               reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``y = -1``; ``forward(input1, input2, target)``."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1, input2, target):
        return functional.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                                reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss: ``sum_{j in targets, i not in targets}
    max(0, 1 - (x_j - x_i)) / C`` (the target lists class indices, ended by the first -1)."""

    def forward(self, input, target):  # noqa: A002
        return functional.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss: ``-mean_c w_c (y_c log sigmoid(x_c) +
    (1 - y_c) log sigmoid(-x_c))``."""

    def forward(self, input, target):  # noqa: A002
        return functional.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                                      reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss: ``sum_{i != y} max(0, w_y (margin - x_y + x_i))^p / C``
    (``p`` is 1 or 2)."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported (got {p})")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be 1-D, got shape "
                             f"{tuple(weight.shape)}")
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input, target):  # noqa: A002
        return functional.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                            weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_MarginLoss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with the ``p``-norm distance
    ``d(x, y) = ||x - y + eps||_p``; ``swap`` uses ``min(d(a, n), d(p, n))`` (Balntas et al.,
    2016). ``forward(anchor, positive, negative)``."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        super().__init__(margin, size_average, reduce, reduction)
        self.p, self.eps, self.swap = p, eps, swap

    def forward(self, anchor, positive, negative):
        return functional.triplet_margin_loss(anchor, positive, negative, margin=self.margin,
                                              p=self.p, eps=self.eps, swap=self.swap,
                                              reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with any ``distance_function`` (default
    ``PairwiseDistance()``, registered as a child module as in PyTorch)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return functional.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
