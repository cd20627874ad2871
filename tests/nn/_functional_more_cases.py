"""Deterministic cases for ``tests/nn/test_functional_more.py``: each case builds NumPy inputs
from its own seed and calls the functional namespace ``F`` it is given, so the same case runs
on jitgrad (the test) and on PyTorch 2.13 (``tests/nn/_pin_functional_more.py``, which wrote
``_pinned_functional_more.py``; the tests never import torch).

``CASES[name] = (inputs, call, grad)``: ``inputs(rng)`` -> list of arrays (float arrays become
float64 tensors, int arrays int64 tensors), ``call(F, *tensors)`` -> Tensor or tuple, and
``grad``: 0 no gradient check, 1 gradcheck, 2 also gradgradcheck (float inputs, float64),
and ``fixed``: the indices of float inputs that are not differentiated (random samples, masks).
"""
import zlib

import numpy as np


def rng_for(name):
    """The case's own generator (the same in every process)."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def _n(*shape):
    return lambda rng: rng.standard_normal(shape)


def _away(*shape, kinks=(0.0,), gap=0.05):
    """Normal values kept ``gap`` away from the kinks (finite differences straddle no kink)."""
    def make(rng):
        x = rng.standard_normal(shape) * 2
        for k in kinks:
            near = np.abs(x - k) < gap
            x[near] += np.where(x[near] >= k, gap, -gap) * 2
        return x
    return make


def _pos(*shape):
    return lambda rng: rng.uniform(0.2, 2.0, shape)


def _prob(*shape):
    def make(rng):
        p = rng.uniform(0.1, 1.0, shape)
        return p / p.sum(-1, keepdims=True)
    return make


def _ints(high, *shape):
    return lambda rng: rng.integers(0, high, shape)


def _sign(*shape):
    return lambda rng: np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


def _distinct(*shape):
    """A permutation of well-separated values: no ties inside any pooling window."""
    def make(rng):
        return rng.permutation(np.prod(shape)).reshape(shape) * 0.5 - 3.0
    return make


def _case(inputs, call, grad=2, fixed=()):
    return (lambda rng: [f(rng) for f in inputs], call, grad, fixed)


CASES = {
    # activations
    "elu": _case([_away(3, 4)], lambda F, x: F.elu(x, alpha=0.7)),
    "celu": _case([_away(3, 4)], lambda F, x: F.celu(x, alpha=1.5)),
    "selu": _case([_away(3, 4)], lambda F, x: F.selu(x)),
    "glu": _case([_n(3, 4)], lambda F, x: F.glu(x, dim=1)),
    "hardshrink": _case([_away(3, 4, kinks=(-0.5, 0.5))], lambda F, x: F.hardshrink(x, 0.5)),
    "softshrink": _case([_away(3, 4, kinks=(-0.4, 0.4))], lambda F, x: F.softshrink(x, 0.4)),
    "tanhshrink": _case([_n(3, 4)], lambda F, x: F.tanhshrink(x)),
    "softsign": _case([_away(3, 4)], lambda F, x: F.softsign(x)),
    "hardsigmoid": _case([_away(4, 5, kinks=(-3, 3))], lambda F, x: F.hardsigmoid(x * 2)),
    "hardswish": _case([_away(4, 5, kinks=(-1.5, 1.5))], lambda F, x: F.hardswish(x * 2)),
    "hardtanh": _case([_away(3, 4, kinks=(-0.6, 0.8))],
                      lambda F, x: F.hardtanh(x, min_val=-0.6, max_val=0.8)),
    "relu6": _case([_away(3, 4, kinks=(0.0, 2.0))], lambda F, x: F.relu6(x * 3)),
    "logsigmoid": _case([_n(3, 4)], lambda F, x: F.logsigmoid(x * 20)),
    "mish": _case([_n(3, 4)], lambda F, x: F.mish(x * 3)),
    "prelu": _case([_away(2, 3, 4), _n(3)], lambda F, x, w: F.prelu(x, w)),
    "prelu_shared": _case([_away(5), _n(1)], lambda F, x, w: F.prelu(x, w)),
    "rrelu_eval": _case([_away(3, 4)], lambda F, x: F.rrelu(x, 0.1, 0.3, training=False)),
    "threshold": _case([_away(3, 4, kinks=(0.2,))], lambda F, x: F.threshold(x, 0.2, -1.5)),
    "softmin": _case([_n(3, 4)], lambda F, x: F.softmin(x, dim=1)),
    "leaky_relu_": _case([_away(3, 4)], lambda F, x: F.leaky_relu_(x.clone(), 0.2)),
    # distances, normalisation, bilinear
    "normalize": _case([_n(3, 4)], lambda F, x: F.normalize(x, p=3.0, dim=0)),
    "normalize_l2": _case([_n(2, 3, 4)], lambda F, x: F.normalize(x)),
    "cosine_similarity": _case([_n(3, 5), _n(3, 5)],
                               lambda F, a, b: F.cosine_similarity(a, b, dim=1)),
    "cosine_similarity_bcast": _case([_n(3, 5), _n(1, 5)],
                                     lambda F, a, b: F.cosine_similarity(a, b, dim=-1)),
    "pairwise_distance": _case([_n(3, 5), _n(3, 5)],
                               lambda F, a, b: F.pairwise_distance(a, b, p=1.5, keepdim=True)),
    "pdist": _case([_n(4, 3)], lambda F, x: F.pdist(x)),
    "pdist_p1": _case([_n(4, 3)], lambda F, x: F.pdist(x, p=1)),
    "bilinear": _case([_n(2, 3), _n(2, 4), _n(5, 3, 4), _n(5)],
                      lambda F, a, b, w, c: F.bilinear(a, b, w, c)),
    "pixel_shuffle": _case([_n(1, 8, 2, 3)], lambda F, x: F.pixel_shuffle(x, 2)),
    "pixel_unshuffle": _case([_n(1, 2, 4, 6)], lambda F, x: F.pixel_unshuffle(x, 2)),
    "channel_shuffle": _case([_n(2, 6, 2)], lambda F, x: F.channel_shuffle(x, 3)),
    # losses
    "kl_div": _case([_n(3, 4), _prob(3, 4)],
                    lambda F, x, y: F.kl_div(x, y, reduction="batchmean")),
    "kl_div_log_target": _case([_n(3, 4), _n(3, 4)],
                               lambda F, x, y: F.kl_div(x, y, reduction="sum", log_target=True)),
    "smooth_l1_loss": _case([_away(4, 3), _n(4, 3)],
                            lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.5, reduction="none")),
    "soft_margin_loss": _case([_n(5), _sign(5)], lambda F, x, y: F.soft_margin_loss(x, y)),
    "margin_ranking_loss": _case([_n(6), _n(6), _sign(6)],
                                 lambda F, a, b, y: F.margin_ranking_loss(a, b, y, margin=0.2)),
    "hinge_embedding_loss": _case([_away(6, kinks=(1.0,)), _sign(6)],
                                  lambda F, x, y: F.hinge_embedding_loss(x, y, margin=1.0,
                                                                         reduction="sum")),
    "cosine_embedding_loss": _case([_n(4, 3), _n(4, 3), _sign(4)],
                                   lambda F, a, b, y: F.cosine_embedding_loss(a, b, y)),
    "gaussian_nll_loss": _case([_n(4, 3), _n(4, 3), _pos(4, 3)],
                               lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, full=True)),
    "gaussian_nll_loss_var1": _case([_n(4, 3), _n(4, 3), _pos(4, 1)],
                                    lambda F, x, y, v: F.gaussian_nll_loss(x, y, v,
                                                                           reduction="none")),
    "poisson_nll_loss": _case([_n(4, 3), _pos(4, 3)],
                              lambda F, x, y: F.poisson_nll_loss(x, y * 2, full=True)),
    "poisson_nll_loss_rate": _case([_pos(4, 3), _pos(4, 3)],
                                   lambda F, x, y: F.poisson_nll_loss(x, y, log_input=False,
                                                                      reduction="sum")),
    "multi_margin_loss": _case([_n(4, 5), _ints(5, 4)],
                               lambda F, x, t: F.multi_margin_loss(x, t)),
    "multi_margin_loss_p2w": _case([_n(4, 5), _ints(5, 4), _pos(5)],
                                   lambda F, x, t, w: F.multi_margin_loss(
                                       x, t, p=2, margin=0.7, weight=w, reduction="none")),
    "multilabel_margin_loss": _case(
        [_n(3, 4), lambda rng: np.array([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]])],
        lambda F, x, t: F.multilabel_margin_loss(x, t, reduction="none")),
    "multilabel_soft_margin_loss": _case([_n(3, 4), _ints(2, 3, 4), _pos(4)],
                                         lambda F, x, t, w: F.multilabel_soft_margin_loss(
                                             x, t, weight=w)),
    "triplet_margin_loss": _case([_n(4, 3), _n(4, 3), _n(4, 3)],
                                 lambda F, a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0,
                                                                          swap=True)),
    "triplet_margin_with_distance_loss": _case(
        [_n(4, 3), _n(4, 3), _n(4, 3)],
        lambda F, a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v),
            margin=1.5, reduction="none")),
    "mse_loss_weight": _case([_n(3, 4), _n(3, 4), _pos(3, 4)],
                             lambda F, x, y, w: F.mse_loss(x, y, weight=w)),
    "l1_loss_weight": _case([_away(3, 4), _n(3, 4), _pos(3, 4)],
                            lambda F, x, y, w: F.l1_loss(x, y, weight=w, reduction="sum")),
    "huber_loss_weight": _case([_away(3, 4), _n(3, 4), _pos(3, 4)],
                               lambda F, x, y, w: F.huber_loss(x, y, delta=0.5, weight=w)),
    # padding
    "pad_constant": _case([_n(2, 3, 4)], lambda F, x: F.pad(x, (1, 2, -1, 1), value=0.5)),
    "pad_reflect": _case([_n(1, 2, 3, 4)], lambda F, x: F.pad(x, (3, 2, 2, 1), mode="reflect")),
    "pad_replicate": _case([_n(2, 3, 4)], lambda F, x: F.pad(x, (2, 5), mode="replicate")),
    "pad_circular": _case([_n(1, 1, 2, 3, 4)],
                          lambda F, x: F.pad(x, (1, 2, 3, 0, 1, 1), mode="circular")),
    # pooling
    "max_pool1d": _case([_distinct(2, 3, 9)],
                        lambda F, x: F.max_pool1d(x, 3, stride=2, padding=1,
                                                  return_indices=True)),
    "max_pool1d_ceil": _case([_distinct(2, 8)],
                             lambda F, x: F.max_pool1d(x, 2, dilation=2, ceil_mode=True)),
    "max_pool3d": _case([_distinct(1, 2, 4, 5, 5)],
                        lambda F, x: F.max_pool3d(x, (2, 3, 2), stride=(1, 2, 2),
                                                  padding=(1, 1, 0), return_indices=True)),
    "max_pool3d_ceil": _case([_distinct(1, 3, 5, 5)],
                             lambda F, x: F.max_pool3d(x, 2, ceil_mode=True, dilation=(1, 2, 1))),
    "max_pool2d_with_indices": _case([_distinct(1, 1, 5, 6)],
                                     lambda F, x: F.max_pool2d_with_indices(x, 2)),
    "avg_pool1d": _case([_n(2, 3, 7)],
                        lambda F, x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True,
                                                  count_include_pad=False)),
    "avg_pool3d": _case([_n(1, 2, 4, 5, 5)],
                        lambda F, x: F.avg_pool3d(x, (2, 3, 2), stride=(1, 2, 2),
                                                  padding=(1, 1, 0), ceil_mode=True)),
    "avg_pool3d_nopad": _case([_n(2, 4, 5, 5)],
                              lambda F, x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False)),
    "avg_pool3d_divisor": _case([_n(1, 2, 4, 4, 4)],
                                lambda F, x: F.avg_pool3d(x, 2, divisor_override=3)),
    "lp_pool1d": _case([_pos(2, 3, 7)], lambda F, x: F.lp_pool1d(x, 2.0, 3, 2)),
    "lp_pool2d": _case([_pos(1, 2, 5, 5)], lambda F, x: F.lp_pool2d(x, 3, (2, 3), ceil_mode=True)),
    "lp_pool3d": _case([_pos(1, 2, 4, 4, 4)], lambda F, x: F.lp_pool3d(x, 1.5, 2)),
    "adaptive_avg_pool1d": _case([_n(2, 3, 7)], lambda F, x: F.adaptive_avg_pool1d(x, 3)),
    "adaptive_avg_pool2d": _case([_n(1, 2, 5, 7)],
                                 lambda F, x: F.adaptive_avg_pool2d(x, (3, None))),
    "adaptive_avg_pool3d": _case([_n(2, 5, 4, 3)],
                                 lambda F, x: F.adaptive_avg_pool3d(x, (2, 3, 2))),
    "adaptive_max_pool1d": _case([_distinct(2, 3, 7)],
                                 lambda F, x: F.adaptive_max_pool1d(x, 3, return_indices=True)),
    "adaptive_max_pool2d": _case([_distinct(1, 2, 5, 7)],
                                 lambda F, x: F.adaptive_max_pool2d(x, (2, 4), True)),
    "adaptive_max_pool3d": _case([_distinct(1, 1, 5, 4, 3)],
                                 lambda F, x: F.adaptive_max_pool3d_with_indices(x, 2)),
    "fractional_max_pool2d": _case(
        [_distinct(1, 2, 7, 8), lambda rng: rng.uniform(0, 1, (1, 2, 2))],
        lambda F, x, u: F.fractional_max_pool2d(x, 2, output_size=(4, 3), return_indices=True,
                                                _random_samples=u), fixed=(1,)),
    "fractional_max_pool3d": _case(
        [_distinct(2, 5, 6, 7), lambda rng: rng.uniform(0, 1, (1, 2, 3))],
        lambda F, x, u: F.fractional_max_pool3d(x, (2, 2, 3), output_ratio=0.5,
                                                _random_samples=u), fixed=(1,)),
    "max_unpool1d": _case([_n(2, 3, 4), lambda rng: np.array([[[0, 3, 5, 6]] * 3] * 2)],
                          lambda F, x, i: F.max_unpool1d(x, i, 2)),
    "max_unpool2d": _case([_n(1, 2, 2, 2), lambda rng: np.array([[[[0, 3], [10, 15]],
                                                                   [[5, 2], [8, 14]]]])],
                          lambda F, x, i: F.max_unpool2d(x, i, 2, output_size=(5, 4))),
    "max_unpool3d": _case([_n(1, 1, 1, 2, 1), lambda rng: np.array([[[[[1], [6]]]]])],
                          lambda F, x, i: F.max_unpool3d(x, i, 2)),
    # convolution
    "conv3d": _case([_n(2, 4, 4, 5, 3), _n(6, 2, 2, 3, 2), _n(6)],
                    lambda F, x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=(1, 1, 0),
                                                dilation=(1, 1, 2), groups=2), grad=1),
    "conv3d_same": _case([_n(1, 2, 3, 4, 4), _n(3, 2, 3, 3, 1)],
                         lambda F, x, w: F.conv3d(x, w, padding="same"), grad=1),
    "conv_transpose1d": _case([_n(2, 4, 5), _n(4, 3, 3), _n(3)],
                              lambda F, x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1,
                                                                    output_padding=1), grad=1),
    "conv_transpose2d": _case([_n(2, 4, 3, 5), _n(4, 3, 3, 2), _n(6)],
                              lambda F, x, w, b: F.conv_transpose2d(
                                  x, w, b, stride=2, padding=1, output_padding=1, groups=2,
                                  dilation=(1, 2)), grad=1),
    "conv_transpose3d": _case([_n(1, 2, 3, 3, 2), _n(2, 3, 2, 2, 2), _n(3)],
                              lambda F, x, w, b: F.conv_transpose3d(
                                  x, w, b, stride=(2, 1, 2), padding=(1, 0, 1),
                                  output_padding=(1, 0, 1), dilation=(1, 2, 1)), grad=1),
    "conv_tbc": _case([_n(5, 2, 3), _n(3, 3, 4), _n(4)],
                      lambda F, x, w, b: F.conv_tbc(x, w, b, 1), grad=1),
    "conv1d_padding": _case([_n(2, 3, 5), _n(4, 3, 3)],
                            lambda F, x, w: F.conv1d(x, w, padding=2, stride=2), grad=1),
    "unfold": _case([_n(2, 3, 5, 6)],
                    lambda F, x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(2, 1))),
    "fold": _case([_n(2, 12, 12)],
                  lambda F, x: F.fold(x, (5, 6), (2, 3), padding=(1, 0), stride=(2, 1))),
    # normalisation
    "group_norm": _case([_n(2, 4, 3, 2), _n(4), _n(4)],
                        lambda F, x, w, b: F.group_norm(x, 2, w, b, eps=1e-3)),
    "instance_norm": _case([_n(2, 3, 5), _n(3), _n(3)],
                           lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b)),
    "rms_norm": _case([_n(2, 3, 4), _n(3, 4)], lambda F, x, w: F.rms_norm(x, (3, 4), w)),
    "rms_norm_eps": _case([_n(2, 5)], lambda F, x: F.rms_norm(x, (5,), eps=0.1)),
    "local_response_norm": _case([_n(2, 5, 3)], lambda F, x: F.local_response_norm(x, 3, 0.5)),
    "local_response_norm_4d": _case([_n(1, 4, 2, 3)],
                                    lambda F, x: F.local_response_norm(x, 2, 1e-2, 0.6, 2.0)),
    # resampling, attention
    "interpolate_nearest": _case([_n(1, 2, 3, 4)],
                                 lambda F, x: F.interpolate(x, size=(5, 7))),
    "interpolate_nearest_exact": _case([_n(1, 2, 5)],
                                       lambda F, x: F.interpolate(x, scale_factor=1.7,
                                                                  mode="nearest-exact")),
    "interpolate_linear": _case([_n(2, 2, 5)],
                                lambda F, x: F.interpolate(x, size=8, mode="linear")),
    "interpolate_bilinear": _case([_n(1, 2, 3, 4)],
                                  lambda F, x: F.interpolate(x, scale_factor=(1.5, 0.75),
                                                             mode="bilinear")),
    "interpolate_bilinear_ac": _case([_n(1, 2, 3, 4)],
                                     lambda F, x: F.interpolate(x, size=(5, 3), mode="bilinear",
                                                                align_corners=True)),
    "interpolate_bicubic": _case([_n(1, 1, 4, 5)],
                                 lambda F, x: F.interpolate(x, size=(6, 3), mode="bicubic")),
    "interpolate_bicubic_ac": _case([_n(1, 1, 4, 5)],
                                    lambda F, x: F.interpolate(x, scale_factor=2, mode="bicubic",
                                                               align_corners=True)),
    "interpolate_trilinear": _case([_n(1, 1, 2, 3, 4)],
                                   lambda F, x: F.interpolate(x, size=(3, 3, 5),
                                                              mode="trilinear")),
    "interpolate_area": _case([_n(1, 2, 5, 7)],
                              lambda F, x: F.interpolate(x, size=(2, 3), mode="area")),
    "affine_grid": _case([_n(2, 2, 3)],
                         lambda F, t: F.affine_grid(t, (2, 1, 3, 4), align_corners=False)),
    "affine_grid_3d": _case([_n(1, 3, 4)],
                            lambda F, t: F.affine_grid(t, (1, 1, 2, 3, 2), align_corners=True)),
    "grid_sample": _case([_n(2, 3, 4, 5), lambda rng: rng.uniform(-1.2, 1.2, (2, 3, 2, 2))],
                         lambda F, x, g: F.grid_sample(x, g, align_corners=False), grad=1),
    "grid_sample_border": _case([_n(1, 2, 3, 4), lambda rng: rng.uniform(-1.3, 1.3, (1, 2, 3, 2))],
                                lambda F, x, g: F.grid_sample(x, g, padding_mode="border",
                                                              align_corners=True), grad=1),
    "grid_sample_reflection": _case([_n(1, 2, 3, 4),
                                     lambda rng: rng.uniform(-1.8, 1.8, (1, 2, 3, 2))],
                                    lambda F, x, g: F.grid_sample(x, g,
                                                                  padding_mode="reflection",
                                                                  align_corners=False), grad=1),
    "grid_sample_nearest": _case([_n(1, 2, 3, 4),
                                  lambda rng: rng.uniform(-1.0, 1.0, (1, 2, 2, 2)) * 0.9],
                                 lambda F, x, g: F.grid_sample(x, g, mode="nearest",
                                                               align_corners=False), grad=0),
    "sdpa": _case([_n(2, 3, 4), _n(2, 5, 4), _n(2, 5, 3)],
                  lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    "sdpa_causal_scale": _case([_n(1, 2, 4, 3), _n(1, 2, 4, 3), _n(1, 2, 4, 2)],
                               lambda F, q, k, v: F.scaled_dot_product_attention(
                                   q, k, v, is_causal=True, scale=0.3)),
    "sdpa_float_mask": _case([_n(2, 3, 4), _n(2, 5, 4), _n(2, 5, 3), _n(3, 5)],
                             lambda F, q, k, v, m: F.scaled_dot_product_attention(
                                 q, k, v, attn_mask=m), fixed=(3,)),
    "sdpa_bool_mask_gqa": _case([_n(1, 4, 3, 2), _n(1, 2, 3, 2), _n(1, 2, 3, 2),
                                 lambda rng: rng.integers(0, 2, (3, 3)) | np.eye(3, dtype=int)],
                                lambda F, q, k, v, m: F.scaled_dot_product_attention(
                                    q, k, v, attn_mask=m > 0, enable_gqa=True)),
}
