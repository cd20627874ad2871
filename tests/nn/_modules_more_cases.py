"""Deterministic module cases for ``tests/nn/test_modules_more.py``: each case builds a module
from the ``nn`` namespace it is given and NumPy inputs from its own seed, so the same case runs
on jitgrad (the test) and on PyTorch 2.13 (``_pin_modules_more.py``, which wrote
``_pinned_modules_more.py`` with torch's initial state_dict, outputs and repr; the tests never
import torch).

``CASES[name] = (make, inputs, grad, train)``: ``make(nn, T)`` -> module (``T(list)`` makes a
float64 tensor), ``inputs(rng)`` -> list of arrays (float arrays become float64 tensors, int
arrays int64 tensors), ``grad``: the indices of the inputs to gradcheck with the parameters
(1: every float input, 0: no check; targets and labels are left out), ``train``: the module's
mode (False: eval).
"""
import zlib

import numpy as np


def rng_for(name):
    """The case's own generator (the same in every process)."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def _n(*shapes):
    return lambda rng: [rng.standard_normal(s) for s in shapes]


def _away(*shape, kinks=(0.0,), gap=0.05):
    """Normal values (x2) kept ``gap`` away from the kinks (finite differences straddle no
    kink)."""
    def make(rng):
        x = rng.standard_normal(shape) * 2
        for k in kinks:
            near = np.abs(x - k) < gap
            x[near] += np.where(x[near] >= k, gap, -gap) * 2
        return [x]
    return make


def _distinct(*shape):
    """A permutation of well-separated values: no ties inside any pooling window."""
    return lambda rng: [rng.permutation(int(np.prod(shape))).reshape(shape) * 0.5 - 3.0]


def _with(make_x, *extra):
    """``make_x``'s inputs followed by ``extra`` makers (each ``rng -> array``)."""
    return lambda rng: make_x(rng) + [e(rng) for e in extra]


def _sign(*shape):
    return lambda rng: np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


def _ints(high, *shape):
    return lambda rng: rng.integers(0, high, shape)


def _pos(*shape):
    return lambda rng: rng.uniform(0.2, 2.0, shape)


def _prob(*shape):
    def make(rng):
        p = rng.uniform(0.1, 1.0, shape)
        return p / p.sum(-1, keepdims=True)
    return make


def _binary(*shape):
    return lambda rng: rng.integers(0, 2, shape).astype(float)


def _unpool(in_shape, kernel):
    """Pooled values and valid max-pool indices: each output cell of ``in_shape`` (N, C,
    *spatial) points at a random position of its ``kernel`` window in the unpooled grid
    (stride = kernel, no padding)."""
    def make(rng):
        spatial = in_shape[2:]
        out = [s * kernel for s in spatial]
        grids = np.meshgrid(*[np.arange(s) for s in spatial], indexing="ij")
        idx = np.zeros(in_shape, dtype=np.int64)
        for n in range(in_shape[0]):
            for c in range(in_shape[1]):
                flat = 0
                for d, g in enumerate(grids):
                    pos = g * kernel + rng.integers(0, kernel, g.shape)
                    flat = flat * out[d] + pos
                idx[n, c] = flat
        return [rng.standard_normal(in_shape), idx]
    return make


def _multilabel(rng):
    return np.array([[3, 0, -1, 1], [1, 2, 3, -1]])


CASES = {
    # activations
    "ELU": (lambda nn, T: nn.ELU(0.7), _away(3, 4), 1, True),
    "CELU": (lambda nn, T: nn.CELU(1.3), _away(3, 4), 1, True),
    "SELU": (lambda nn, T: nn.SELU(), _away(3, 4), 1, True),
    "GLU": (lambda nn, T: nn.GLU(1), _n((3, 4)), 1, True),
    "Hardshrink": (lambda nn, T: nn.Hardshrink(0.4), _away(3, 4, kinks=(-0.4, 0.4)), 1, True),
    "Softshrink": (lambda nn, T: nn.Softshrink(0.3), _away(3, 4, kinks=(-0.3, 0.3)), 1, True),
    "Hardsigmoid": (lambda nn, T: nn.Hardsigmoid(), _away(3, 4, kinks=(-3.0, 3.0)), 1, True),
    "Hardswish": (lambda nn, T: nn.Hardswish(), _away(3, 4, kinks=(-3.0, 3.0)), 1, True),
    "Hardtanh": (lambda nn, T: nn.Hardtanh(-0.5, 1.5), _away(3, 4, kinks=(-0.5, 1.5)), 1, True),
    "ReLU6": (lambda nn, T: nn.ReLU6(), _away(3, 4, kinks=(0.0, 6.0)), 1, True),
    "LogSigmoid": (lambda nn, T: nn.LogSigmoid(), _n((3, 4)), 1, True),
    "Mish": (lambda nn, T: nn.Mish(), _n((3, 4)), 1, True),
    "Softsign": (lambda nn, T: nn.Softsign(), _n((3, 4)), 1, True),
    "Tanhshrink": (lambda nn, T: nn.Tanhshrink(), _n((3, 4)), 1, True),
    "Threshold": (lambda nn, T: nn.Threshold(0.2, -1.0), _away(3, 4, kinks=(0.2,)), 1, True),
    "Softmin": (lambda nn, T: nn.Softmin(dim=1), _n((3, 4)), 1, True),
    "Softmax2d": (lambda nn, T: nn.Softmax2d(), _n((2, 3, 2, 2)), 1, True),
    "PReLU": (lambda nn, T: nn.PReLU(), _away(3, 4), 1, True),
    "PReLU_channels": (lambda nn, T: nn.PReLU(3, init=0.1), _away(2, 3, 4), 1, True),
    "RReLU_eval": (lambda nn, T: nn.RReLU(0.1, 0.3), _away(3, 4), 1, False),
    # dropout (eval: the identity)
    "Dropout1d_eval": (lambda nn, T: nn.Dropout1d(0.3), _n((2, 3, 4)), 0, False),
    "Dropout2d_eval": (lambda nn, T: nn.Dropout2d(0.3), _n((2, 3, 2, 2)), 0, False),
    "Dropout3d_eval": (lambda nn, T: nn.Dropout3d(0.3), _n((2, 3, 1, 2, 2)), 0, False),
    "AlphaDropout_eval": (lambda nn, T: nn.AlphaDropout(0.3), _n((2, 3)), 0, False),
    "FeatureAlphaDropout_eval": (lambda nn, T: nn.FeatureAlphaDropout(0.3), _n((2, 3, 4)), 0,
                                 False),
    # padding
    "ConstantPad1d": (lambda nn, T: nn.ConstantPad1d((1, 2), 3.5), _n((2, 3, 4)), 1, True),
    "ConstantPad2d": (lambda nn, T: nn.ConstantPad2d(1, -1.0), _n((1, 2, 3, 3)), 1, True),
    "ConstantPad3d": (lambda nn, T: nn.ConstantPad3d((1, 0, 0, 1, 1, 0), 0.5),
                      _n((1, 1, 2, 2, 2)), 1, True),
    "ZeroPad1d": (lambda nn, T: nn.ZeroPad1d(2), _n((2, 3)), 1, True),
    "ZeroPad2d": (lambda nn, T: nn.ZeroPad2d((1, 0, 2, 1)), _n((1, 2, 3, 3)), 1, True),
    "ZeroPad3d": (lambda nn, T: nn.ZeroPad3d(1), _n((1, 1, 2, 2, 2)), 1, True),
    "ReflectionPad1d": (lambda nn, T: nn.ReflectionPad1d((2, 1)), _n((2, 3, 4)), 1, True),
    "ReflectionPad2d": (lambda nn, T: nn.ReflectionPad2d(1), _n((1, 2, 3, 3)), 1, True),
    "ReflectionPad3d": (lambda nn, T: nn.ReflectionPad3d(1), _n((1, 1, 2, 3, 3)), 1, True),
    "ReplicationPad1d": (lambda nn, T: nn.ReplicationPad1d((2, 1)), _n((2, 3, 4)), 1, True),
    "ReplicationPad2d": (lambda nn, T: nn.ReplicationPad2d((1, 2, 0, 1)), _n((1, 2, 3, 3)), 1,
                         True),
    "ReplicationPad3d": (lambda nn, T: nn.ReplicationPad3d(1), _n((1, 1, 2, 2, 2)), 1, True),
    "CircularPad1d": (lambda nn, T: nn.CircularPad1d((2, 1)), _n((2, 3, 4)), 1, True),
    "CircularPad2d": (lambda nn, T: nn.CircularPad2d(1), _n((1, 2, 3, 3)), 1, True),
    "CircularPad3d": (lambda nn, T: nn.CircularPad3d(1), _n((1, 1, 2, 2, 2)), 1, True),
    # pooling
    "MaxPool1d": (lambda nn, T: nn.MaxPool1d(2), _distinct(2, 3, 6), 1, True),
    "MaxPool1d_indices": (lambda nn, T: nn.MaxPool1d(3, 2, 1, return_indices=True),
                          _distinct(2, 2, 7), 0, True),
    "MaxPool3d": (lambda nn, T: nn.MaxPool3d(2, stride=1), _distinct(1, 2, 3, 3, 3), 1, True),
    "AvgPool1d": (lambda nn, T: nn.AvgPool1d(3, 2, 1), _n((2, 3, 7)), 1, True),
    "AvgPool3d": (lambda nn, T: nn.AvgPool3d(2, divisor_override=3), _n((1, 2, 4, 4, 4)), 1,
                  True),
    "LPPool1d": (lambda nn, T: nn.LPPool1d(2, 3, stride=2), _n((2, 3, 7)), 1, True),
    "LPPool2d": (lambda nn, T: nn.LPPool2d(3, 2), _with(lambda r: [], _pos(1, 2, 4, 4)), 1,
                 True),
    "LPPool3d": (lambda nn, T: nn.LPPool3d(2, 2), _n((1, 1, 2, 4, 4)), 1, True),
    "AdaptiveAvgPool1d": (lambda nn, T: nn.AdaptiveAvgPool1d(3), _n((2, 3, 7)), 1, True),
    "AdaptiveAvgPool2d": (lambda nn, T: nn.AdaptiveAvgPool2d((2, None)), _n((1, 2, 5, 3)), 1,
                          True),
    "AdaptiveAvgPool3d": (lambda nn, T: nn.AdaptiveAvgPool3d(2), _n((1, 2, 3, 4, 5)), 1, True),
    "AdaptiveMaxPool1d": (lambda nn, T: nn.AdaptiveMaxPool1d(3, return_indices=True),
                          _distinct(2, 3, 7), 0, True),
    "AdaptiveMaxPool2d": (lambda nn, T: nn.AdaptiveMaxPool2d(2), _distinct(1, 2, 5, 4), 1,
                          True),
    "AdaptiveMaxPool3d": (lambda nn, T: nn.AdaptiveMaxPool3d((1, 2, 2)),
                          _distinct(1, 1, 3, 4, 4), 1, True),
    "FractionalMaxPool2d": (lambda nn, T: nn.FractionalMaxPool2d(
        2, output_size=3, _random_samples=T([[[0.3, 0.7], [0.1, 0.9]]])),
        _distinct(1, 2, 6, 6), 1, True),
    "FractionalMaxPool3d": (lambda nn, T: nn.FractionalMaxPool3d(
        2, output_ratio=0.5, _random_samples=T([[[0.3, 0.7, 0.5]]])),
        _distinct(1, 1, 6, 6, 6), 0, True),
    "MaxUnpool1d": (lambda nn, T: nn.MaxUnpool1d(2), _unpool((2, 2, 3), 2), (0,), True),
    "MaxUnpool2d": (lambda nn, T: nn.MaxUnpool2d(2), _unpool((1, 2, 2, 3), 2), (0,), True),
    "MaxUnpool3d": (lambda nn, T: nn.MaxUnpool3d(2), _unpool((1, 1, 2, 2, 2), 2), (0,), True),
    # convolutions
    "Conv3d": (lambda nn, T: nn.Conv3d(2, 4, 2, padding=1, groups=2), _n((1, 2, 3, 3, 3)), 1,
               True),
    "Conv1d_reflect": (lambda nn, T: nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"),
                       _n((2, 2, 5)), 1, True),
    "Conv2d_circular": (lambda nn, T: nn.Conv2d(2, 2, 3, padding=(1, 2),
                                                padding_mode="circular"), _n((1, 2, 4, 4)), 1,
                        True),
    "Conv2d_replicate_same": (lambda nn, T: nn.Conv2d(1, 2, (2, 3), padding="same",
                                                      padding_mode="replicate"),
                              _n((1, 1, 4, 4)), 1, True),
    "ConvTranspose1d": (lambda nn, T: nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1,
                                                         output_padding=1), _n((2, 2, 4)), 1,
                        True),
    "ConvTranspose2d": (lambda nn, T: nn.ConvTranspose2d(4, 2, 3, stride=2, groups=2,
                                                         dilation=(1, 2)), _n((1, 4, 3, 3)), 1,
                        True),
    "ConvTranspose3d": (lambda nn, T: nn.ConvTranspose3d(2, 2, 2, stride=2, bias=False),
                        _n((1, 2, 2, 2, 2)), 1, True),
    # normalisation
    "BatchNorm3d": (lambda nn, T: nn.BatchNorm3d(2), _n((2, 2, 2, 2, 2)), 1, True),
    "BatchNorm3d_eval": (lambda nn, T: nn.BatchNorm3d(2, momentum=None), _n((2, 2, 2, 2, 2)), 1,
                         False),
    "GroupNorm": (lambda nn, T: nn.GroupNorm(2, 4), _n((2, 4, 3)), 1, True),
    "GroupNorm_noaffine": (lambda nn, T: nn.GroupNorm(1, 3, affine=False, eps=1e-3),
                           _n((2, 3, 2, 2)), 1, True),
    "InstanceNorm1d": (lambda nn, T: nn.InstanceNorm1d(3), _n((2, 3, 5)), 1, True),
    "InstanceNorm1d_unbatched": (lambda nn, T: nn.InstanceNorm1d(3, affine=True), _n((3, 5)),
                                 1, True),
    "InstanceNorm2d_stats": (lambda nn, T: nn.InstanceNorm2d(2, affine=True,
                                                             track_running_stats=True),
                             _n((2, 2, 3, 3)), 1, True),
    "InstanceNorm3d": (lambda nn, T: nn.InstanceNorm3d(2), _n((1, 2, 2, 2, 3)), 1, True),
    "LocalResponseNorm": (lambda nn, T: nn.LocalResponseNorm(3, alpha=0.1, k=2.0),
                          _n((2, 5, 3)), 1, True),
    "RMSNorm": (lambda nn, T: nn.RMSNorm(4), _n((3, 4)), 1, True),
    "RMSNorm_2d": (lambda nn, T: nn.RMSNorm([2, 3], eps=1e-3), _n((2, 2, 3)), 1, True),
    "RMSNorm_noaffine": (lambda nn, T: nn.RMSNorm(3, elementwise_affine=False), _n((2, 3)), 1,
                         True),
    # distances, bilinear, shape
    "PairwiseDistance": (lambda nn, T: nn.PairwiseDistance(), _n((3, 4), (3, 4)), 1, True),
    "PairwiseDistance_p1": (lambda nn, T: nn.PairwiseDistance(p=3.0, keepdim=True),
                            _n((3, 4), (3, 4)), 1, True),
    "CosineSimilarity": (lambda nn, T: nn.CosineSimilarity(dim=0), _n((3, 4), (3, 4)), 1,
                         True),
    "Bilinear": (lambda nn, T: nn.Bilinear(2, 3, 4), _n((5, 2), (5, 3)), 1, True),
    "Unflatten": (lambda nn, T: nn.Unflatten(1, (2, 3)), _n((2, 6, 2)), 1, True),
    "Fold": (lambda nn, T: nn.Fold((3, 4), 2), _n((2, 4, 6)), 1, True),
    "Unfold": (lambda nn, T: nn.Unfold(2, padding=1, stride=2), _n((1, 2, 3, 3)), 1, True),
    "PixelShuffle": (lambda nn, T: nn.PixelShuffle(2), _n((1, 8, 2, 3)), 1, True),
    "PixelUnshuffle": (lambda nn, T: nn.PixelUnshuffle(2), _n((1, 2, 4, 2)), 1, True),
    "ChannelShuffle": (lambda nn, T: nn.ChannelShuffle(3), _n((1, 6, 2)), 1, True),
    "Upsample_nearest": (lambda nn, T: nn.Upsample(scale_factor=2), _n((1, 2, 3)), 1, True),
    "Upsample_bilinear": (lambda nn, T: nn.Upsample(size=(3, 5), mode="bilinear"),
                          _n((1, 1, 2, 3)), 1, True),
    "Upsample_trilinear_ac": (lambda nn, T: nn.Upsample(scale_factor=(1.5, 2, 2),
                                                        mode="trilinear", align_corners=True),
                              _n((1, 1, 2, 2, 2)), 1, True),
    "UpsamplingNearest2d": (lambda nn, T: nn.UpsamplingNearest2d(size=5), _n((1, 2, 2, 3)), 1,
                            True),
    "UpsamplingBilinear2d": (lambda nn, T: nn.UpsamplingBilinear2d(scale_factor=2),
                             _n((1, 1, 2, 3)), 1, True),
    # losses
    "SmoothL1Loss": (lambda nn, T: nn.SmoothL1Loss(beta=0.5), _n((3, 4), (3, 4)), 1, True),
    "SoftMarginLoss": (lambda nn, T: nn.SoftMarginLoss(reduction="sum"),
                       _with(_n((3, 4)), _sign(3, 4)), (0,), True),
    "KLDivLoss": (lambda nn, T: nn.KLDivLoss(reduction="batchmean"),
                  _with(_n((3, 4)), _prob(3, 4)), (0,), True),
    "KLDivLoss_logtarget": (lambda nn, T: nn.KLDivLoss(reduction="none", log_target=True),
                            _n((3, 4), (3, 4)), 1, True),
    "PoissonNLLLoss": (lambda nn, T: nn.PoissonNLLLoss(), _with(_n((3, 4)), _pos(3, 4)), (0,),
                       True),
    "PoissonNLLLoss_full": (lambda nn, T: nn.PoissonNLLLoss(log_input=False, full=True),
                            _with(lambda r: [], _pos(3, 4), _pos(3, 4)), (0,), True),
    "GaussianNLLLoss": (lambda nn, T: nn.GaussianNLLLoss(full=True),
                        _with(_n((3, 4), (3, 4)), _pos(3, 4)), 1, True),
    "MarginRankingLoss": (lambda nn, T: nn.MarginRankingLoss(0.3),
                          _with(_n((5,), (5,)), _sign(5)), (0, 1), True),
    "HingeEmbeddingLoss": (lambda nn, T: nn.HingeEmbeddingLoss(1.5),
                           _with(_n((3, 4)), _sign(3, 4)), (0,), True),
    "CosineEmbeddingLoss": (lambda nn, T: nn.CosineEmbeddingLoss(0.1),
                            _with(_n((4, 3), (4, 3)), _sign(4)), (0, 1), True),
    "MultiLabelMarginLoss": (lambda nn, T: nn.MultiLabelMarginLoss(),
                             _with(_n((2, 4)), _multilabel), 1, True),
    "MultiLabelSoftMarginLoss": (lambda nn, T: nn.MultiLabelSoftMarginLoss(
        weight=T([1.0, 2.0, 0.5, 1.5])), _with(_n((3, 4)), _binary(3, 4)), (0,), True),
    "MultiMarginLoss": (lambda nn, T: nn.MultiMarginLoss(p=2, margin=0.7,
                                                         weight=T([1.0, 0.5, 2.0])),
                        _with(_n((4, 3)), _ints(3, 4)), 1, True),
    "TripletMarginLoss": (lambda nn, T: nn.TripletMarginLoss(margin=2.0, swap=True),
                          _n((4, 3), (4, 3), (4, 3)), 1, True),
    "TripletMarginWithDistanceLoss": (lambda nn, T: nn.TripletMarginWithDistanceLoss(
        margin=2.5), _n((4, 3), (4, 3), (4, 3)), 1, True),
}
