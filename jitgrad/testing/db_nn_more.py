"""Op-database entries for the ``jitgrad.nn.functional`` functions of issue 35 (activations,
losses, pooling, 3-d/transposed convolution, fold/unfold, pad, norms, resampling, attention).

Each entry calls the public function and compares it with an independent NumPy reference
written from the math (direct loops over kernel taps for convolution and pooling). These
functions are composed of existing rows, so they name no rows of their own; the entries check
forward values (float64/float32), first and second derivatives against finite differences and
plain vs ``create_graph`` backward (see ``opinfo.py``). PyTorch's own values for the same
functions are pinned in ``tests/nn/test_functional_more.py``.
"""
from __future__ import annotations

import math

import numpy as np

from .db_nn import ref_conv2d
from .opinfo import OpInfo, Sample, registrar

#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = []


def _nn(*args, **kwargs):
    kwargs.setdefault("rtol", 1e-6)
    kwargs.setdefault("atol", 1e-8)
    return OpInfo(*args, float32_tol=(2e-5, 2e-5), result_dtype="input", fused_rtol=1e-10,
                  **kwargs)


_case = registrar(ENTRIES, _nn)


def _F():
    from jitgrad.nn import functional
    return functional


def _n(rng, dt, *shape):
    return rng.standard_normal(shape).astype(dt)


def _reduce(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _call(name, **fixed):
    """``jitgrad.nn.functional.<name>(*args, **fixed, **kwargs)``."""
    return lambda *a, **k: getattr(_F(), name)(*a, **fixed, **k)


def _away(rng, dt, *shape, kinks=(0.0,)):
    """Normal values at least 0.1 from every kink (so finite differences cross none)."""
    x = rng.standard_normal(shape) * 2
    for k in kinks:
        near = np.abs(x - k) < 0.1
        x[near] = k + np.where(x[near] >= k, 0.2, -0.2)
    return x.astype(dt)


def _pos(rng, dt, *shape):
    return rng.uniform(0.3, 2.0, shape).astype(dt)


def _distinct(rng, dt, *shape):
    return (rng.permutation(math.prod(shape)).reshape(shape) * 0.25 - 2.0).astype(dt)


def _sign(rng, dt, *shape):
    return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0).astype(dt)


def _label(rng, *shape):
    """+-1 labels as integers: a loss that compares its target with 1 is not differentiable
    in it (a float target would be perturbed across the comparison)."""
    return np.where(rng.standard_normal(shape) > 0, 1, -1).astype(np.int64)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0, x)


# --- activations -----------------------------------------------------------------------------
def _act(name, ref, kinks=(0.0,), scale=1.0, **fixed):
    _case(name, _call(name, **fixed), ref,
          lambda rng, dt: [Sample((_away(rng, dt, 3, 4, kinks=kinks) * scale,))])


_act("elu", lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)), alpha=0.7)
_act("celu", lambda x: np.where(x > 0, x, 1.5 * np.expm1(x / 1.5)), alpha=1.5)
_act("selu", lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)))
_act("hardshrink", lambda x: np.where(np.abs(x) > 0.5, x, 0), kinks=(-0.5, 0.5))
_act("softshrink", lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0), kinks=(-0.5, 0.5))
_act("tanhshrink", lambda x: x - np.tanh(x))
_act("softsign", lambda x: x / (1 + np.abs(x)))
_act("hardsigmoid", lambda x: np.clip(x / 6 + 0.5, 0, 1), kinks=(-3.0, 3.0), scale=2.0)
_act("hardswish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), kinks=(-3.0, 3.0), scale=2.0)
_act("hardtanh", lambda x: np.clip(x, -0.5, 1.2), kinks=(-0.5, 1.2), min_val=-0.5, max_val=1.2)
_act("relu6", lambda x: np.clip(x, 0, 6), kinks=(0.0, 6.0), scale=3.0)
_act("logsigmoid", lambda x: -_softplus(-x), scale=5.0)
_act("mish", lambda x: x * np.tanh(_softplus(x)))
_act("rrelu", lambda x: np.where(x >= 0, x, x * 0.2), lower=0.1, upper=0.3)
_act("threshold", lambda x: np.where(x > 0.3, x, -2.0), kinks=(0.3,), threshold=0.3, value=-2.0)
_case("softmin", _call("softmin", dim=1),
      lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True),
      lambda rng, dt: [Sample((_n(rng, dt, 3, 4),))])
_case("glu", _call("glu", dim=1), lambda x: x[:, :2] * _sigmoid(x[:, 2:]),
      lambda rng, dt: [Sample((_n(rng, dt, 3, 4),))])
_case("prelu", _call("prelu"), lambda x, w: np.where(x > 0, x, w[:, None] * x),
      lambda rng, dt: [Sample((_away(rng, dt, 2, 3, 4), _n(rng, dt, 3)))])


# --- distances, bilinear, shuffles -----------------------------------------------------------
def _pnorm(v, p, axis, keepdims=False):
    return (np.abs(v) ** p).sum(axis, keepdims=keepdims) ** (1 / p)


_case("normalize", _call("normalize", p=3.0, dim=0),
      lambda x: x / np.maximum(_pnorm(x, 3, 0, True), 1e-12),
      lambda rng, dt: [Sample((_n(rng, dt, 3, 4),))])
_case("cosine_similarity", _call("cosine_similarity"),
      lambda a, b: (a * b).sum(1) / (_pnorm(a, 2, 1) * _pnorm(b, 2, 1)),
      lambda rng, dt: [Sample((_n(rng, dt, 3, 5), _n(rng, dt, 3, 5)))])
_case("pairwise_distance", _call("pairwise_distance"), lambda a, b: _pnorm(a - b + 1e-6, 2, -1),
      lambda rng, dt: [Sample((_n(rng, dt, 3, 5), _n(rng, dt, 3, 5)))])
_case("pdist", _call("pdist"),
      lambda x: np.array([_pnorm(x[i] - x[j], 2, -1) for i in range(len(x))
                          for j in range(i + 1, len(x))], x.dtype),
      lambda rng, dt: [Sample((_n(rng, dt, 4, 3),))])
_case("bilinear", _call("bilinear"),
      lambda a, b, w, c: np.einsum("ni,kij,nj->nk", a, w, b) + c,
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3), _n(rng, dt, 2, 4), _n(rng, dt, 5, 3, 4),
                               _n(rng, dt, 5)))])
_case("pixel_shuffle", _call("pixel_shuffle", upscale_factor=2),
      lambda x: x.reshape(1, 2, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 6),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 8, 2, 3),))])
_case("pixel_unshuffle", _call("pixel_unshuffle", downscale_factor=2),
      lambda x: x.reshape(1, 2, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 8, 2, 3),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 4, 6),))])
_case("channel_shuffle", _call("channel_shuffle", groups=3),
      lambda x: x[:, [0, 2, 4, 1, 3, 5]],
      lambda rng, dt: [Sample((_n(rng, dt, 2, 6, 2),))])


# --- losses ----------------------------------------------------------------------------------
def _pair(rng, dt, kinks=(0.0,)):
    y = _n(rng, dt, 4, 3)
    return (y + _away(rng, dt, 4, 3, kinks=kinks)).astype(dt), y


_case("smooth_l1_loss", _call("smooth_l1_loss", beta=0.5),
      lambda x, y, reduction="mean": _reduce(np.where(np.abs(x - y) < 0.5, (x - y) ** 2, np.abs(
          x - y) - 0.25), reduction),
      lambda rng, dt: [Sample(_pair(rng, dt, (-0.5, 0.5))),
                       Sample(_pair(rng, dt, (-0.5, 0.5)), {"reduction": "none"})])
_case("kl_div", _call("kl_div", reduction="batchmean"),
      lambda x, y: (y * (np.log(y) - x)).sum() / x.shape[0],
      lambda rng, dt: [Sample((_n(rng, dt, 3, 4), _pos(rng, dt, 3, 4)))])
_case("soft_margin_loss", _call("soft_margin_loss"), lambda x, y: _softplus(-x * y).mean(),
      lambda rng, dt: [Sample((_n(rng, dt, 5), _sign(rng, dt, 5)))])
_case("margin_ranking_loss", _call("margin_ranking_loss", margin=0.2),
      lambda a, b, y: np.maximum(0, -y * (a - b) + 0.2).mean(),
      lambda rng, dt: [Sample((_away(rng, dt, 6, kinks=(0.2, -0.2)), np.zeros(6, dt),
                               _sign(rng, dt, 6)))])
_case("hinge_embedding_loss", _call("hinge_embedding_loss", reduction="sum"),
      lambda x, y: np.where(y == 1, x, np.maximum(0, 1 - x)).sum(),
      lambda rng, dt: [Sample((_away(rng, dt, 6, kinks=(1.0,)), _label(rng, 6)))])
_case("cosine_embedding_loss", _call("cosine_embedding_loss", margin=-0.5),
      lambda a, b, y: np.where(y == 1, 1 - (a * b).sum(1) / (_pnorm(a, 2, 1) * _pnorm(b, 2, 1)),
                               np.maximum(0, (a * b).sum(1) / (_pnorm(a, 2, 1) * _pnorm(
                                   b, 2, 1)) + 0.5)).mean(),
      lambda rng, dt: [Sample((_n(rng, dt, 4, 3), _n(rng, dt, 4, 3), _label(rng, 4)))],
      gradgrad=False)  # (the hinge's kink at cos = -0.5 can fall inside the step)
_case("gaussian_nll_loss", _call("gaussian_nll_loss", full=True),
      lambda x, y, v: (0.5 * (np.log(v) + (x - y) ** 2 / v + math.log(2 * math.pi))).mean(),
      lambda rng, dt: [Sample((_n(rng, dt, 4, 3), _n(rng, dt, 4, 3), _pos(rng, dt, 4, 3)))])
_case("poisson_nll_loss", _call("poisson_nll_loss"), lambda x, y: (np.exp(x) - y * x).mean(),
      lambda rng, dt: [Sample((_n(rng, dt, 4, 3), _pos(rng, dt, 4, 3)))])
_case("multi_margin_loss", _call("multi_margin_loss"),
      lambda x, t: np.mean([sum(max(0, 1 - x[n, t[n]] + x[n, i]) for i in range(x.shape[1])
                                if i != t[n]) / x.shape[1] for n in range(len(t))]),
      lambda rng, dt: [Sample((_distinct(rng, dt, 4, 5) * 0.45, np.array([0, 3, 1, 4])))])
_case("multilabel_margin_loss", _call("multilabel_margin_loss"),
      lambda x, t: np.mean([sum(max(0, 1 - x[n, j] + x[n, i]) for j in {0: [3, 0], 1: [1]}[n]
                                for i in range(4) if i not in {0: [3, 0], 1: [1]}[n]) / 4
                            for n in range(2)]),
      lambda rng, dt: [Sample((_distinct(rng, dt, 2, 4) * 0.45,
                               np.array([[3, 0, -1, 2], [1, -1, 0, 0]])))])
_case("multilabel_soft_margin_loss", _call("multilabel_soft_margin_loss"),
      lambda x, y: (-(y * -_softplus(-x) + (1 - y) * -_softplus(x))).mean(-1).mean(),
      lambda rng, dt: [Sample((_n(rng, dt, 3, 4), (rng.random((3, 4)) > 0.5).astype(dt)))])
_case("triplet_margin_loss", _call("triplet_margin_loss", margin=3.0),
      lambda a, p, n: np.maximum(0, 3.0 + _pnorm(a - p + 1e-6, 2, -1) -
                                 _pnorm(a - n + 1e-6, 2, -1)).mean(),
      lambda rng, dt: [Sample((_n(rng, dt, 4, 3), _n(rng, dt, 4, 3), _n(rng, dt, 4, 3) + 0.5))],
      gradgrad=False)  # (a hinge: its kink can fall inside the second-order step)
_case("mse_loss_weight", lambda x, y, weight: _F().mse_loss(x, y, weight=weight),
      lambda x, y, weight: (weight * (x - y) ** 2).sum() / weight.sum(),
      lambda rng, dt: [Sample((_n(rng, dt, 3, 4), _n(rng, dt, 3, 4), _pos(rng, dt, 3, 4)))])


# --- pad, pooling --------------------------------------------------------------------------
_case("pad", _call("pad", pad=(2, 1, 1, 2), mode="reflect"),
      lambda x: np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), mode="reflect"),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 3, 4),))])
_case("pad_replicate", _call("pad", pad=(2, 3), mode="replicate"),
      lambda x: np.pad(x, ((0, 0), (0, 0), (2, 3)), mode="edge"),
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3, 4),))])
_case("pad_circular", _call("pad", pad=(1, 2, 2, 0), mode="circular"),
      lambda x: np.pad(x, ((0, 0), (0, 0), (2, 0), (1, 2)), mode="wrap"),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 3, 4),))])
_case("pad_constant", _call("pad", pad=(1, 2), value=0.5),
      lambda x: np.pad(x, ((0, 0), (1, 2)), constant_values=0.5),
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3),))])


def _windows(x, k, s, p, fill):
    """(N, C, *out, prod(k)) windows of ``x`` (stride ``s``, padding ``p`` filled)."""
    nd = len(k)
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((pp, pp) for pp in p), constant_values=fill)
    out = [(n + 2 * pp - kk) // ss + 1 for n, kk, ss, pp in zip(x.shape[2:], k, s, p)]
    wins = np.empty(x.shape[:2] + tuple(out) + (math.prod(k),), x.dtype)
    for pos in np.ndindex(*out):
        sl = tuple(slice(o * ss, o * ss + kk) for o, ss, kk in zip(pos, s, k))
        wins[(slice(None), slice(None)) + pos] = xp[(Ellipsis,) + sl].reshape(
            x.shape[:2] + (-1,))
    assert len(out) == nd
    return wins


_case("max_pool1d", _call("max_pool1d"), lambda x, k, stride, padding:
      _windows(x, (k,), (stride,), (padding,), -np.inf).max(-1),
      lambda rng, dt: [Sample((_distinct(rng, dt, 2, 3, 9), 3), {"stride": 2, "padding": 1})])
_case("max_pool3d", _call("max_pool3d"), lambda x, k, stride: _windows(
      x, k, stride, (0, 0, 0), -np.inf).max(-1),
      lambda rng, dt: [Sample((_distinct(rng, dt, 1, 2, 4, 5, 5), (2, 3, 2)),
                              {"stride": (1, 2, 2)})])
_case("avg_pool1d", _call("avg_pool1d"), lambda x, k, stride, padding:
      _windows(x, (k,), (stride,), (padding,), 0.0).mean(-1),
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3, 7), 3), {"stride": 2, "padding": 1})])
_case("avg_pool3d", _call("avg_pool3d"), lambda x, k, stride, padding:
      _windows(x, k, stride, padding, 0.0).mean(-1),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 4, 5, 5), (2, 3, 2)),
                              {"stride": (1, 2, 2), "padding": (1, 1, 0)})])
_case("lp_pool2d", _call("lp_pool2d"), lambda x, norm_type, k:
      (_windows(x, k, k, (0, 0), 0.0) ** norm_type).sum(-1) ** (1 / norm_type),
      lambda rng, dt: [Sample((_pos(rng, dt, 1, 2, 4, 6), 3.0, (2, 3)))])


def _adaptive(x, out, reduce):
    """Adaptive pooling by its definition: bin ``i`` of a dim of size ``n`` covers
    ``[floor(i n / o), ceil((i + 1) n / o))``."""
    spatial = x.shape[2:]
    res = np.empty(x.shape[:2] + tuple(out), x.dtype)
    for pos in np.ndindex(*out):
        sl = tuple(slice(i * n // o, -(-(i + 1) * n // o)) for i, n, o in zip(pos, spatial, out))
        res[(slice(None), slice(None)) + pos] = reduce(x[(Ellipsis,) + sl].reshape(
            x.shape[:2] + (-1,)), -1)
    return res


_case("adaptive_avg_pool2d", _call("adaptive_avg_pool2d"),
      lambda x, o: _adaptive(x, o, np.mean),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 5, 7), (3, 4)))])
_case("adaptive_avg_pool1d", _call("adaptive_avg_pool1d"),
      lambda x, o: _adaptive(x, (o,), np.mean),
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3, 7), 3))])
_case("adaptive_max_pool2d", _call("adaptive_max_pool2d"),
      lambda x, o: _adaptive(x, o, np.max),
      lambda rng, dt: [Sample((_distinct(rng, dt, 1, 2, 5, 7), (3, 4)))])
_case("adaptive_max_pool3d", _call("adaptive_max_pool3d"),
      lambda x, o: _adaptive(x, o, np.max),
      lambda rng, dt: [Sample((_distinct(rng, dt, 1, 1, 5, 4, 3), (2, 3, 2)))])


def _unpool_ref(x, idx, k, output_size):
    out = np.zeros(x.shape[:2] + (math.prod(output_size),), x.dtype)
    np.put_along_axis(out, idx.reshape(x.shape[:2] + (-1,)), x.reshape(x.shape[:2] + (-1,)), 2)
    return out.reshape(x.shape[:2] + tuple(output_size))


_case("max_unpool2d", _call("max_unpool2d"), _unpool_ref,
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 2, 2), np.array([[[[0, 3], [10, 15]],
                                                                    [[5, 2], [8, 14]]]]), 2),
                              {"output_size": (4, 4)})])


# --- convolution ---------------------------------------------------------------------------
def ref_convnd(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct N-d definition: ``out[n, o, pos] = b[o] + sum_{c, k} w[o, c, k]
    xpad[n, g Cg + c, pos s + k d]``."""
    nd = x.ndim - 2
    s, p, d = ((v,) * nd if isinstance(v, int) else tuple(v) for v in (stride, padding, dilation))
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((pp, pp) for pp in p))
    Co, Cg = w.shape[:2]
    out_sp = [(n - dd * (k - 1) - 1) // ss + 1
              for n, dd, k, ss in zip(xp.shape[2:], d, w.shape[2:], s)]
    out = np.zeros((x.shape[0], Co) + tuple(out_sp))
    cog = Co // groups
    for o in range(Co):
        g = o // cog
        for tap in np.ndindex(*w.shape[2:]):
            sl = tuple(slice(t * dd, t * dd + ss * (n - 1) + 1, ss)
                       for t, dd, ss, n in zip(tap, d, s, out_sp))
            patch = xp[(slice(None), slice(g * Cg, (g + 1) * Cg)) + sl]
            out[:, o] += np.tensordot(w[(o, slice(None)) + tap], patch, (0, 1))
        if b is not None:
            out[:, o] += b[o]
    return out.astype(x.dtype)


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1,
                       dilation=1):
    """Direct definition: ``full[n, g Cog + co, i s + k d] += x[n, g Cig + ci, i]
    w[g Cig + ci, co, k]``, then the padding cropped (the output-padded end kept)."""
    nd = x.ndim - 2
    s, p, op, d = ((v,) * nd if isinstance(v, int) else tuple(v)
                   for v in (stride, padding, output_padding, dilation))
    Cin, Cog = w.shape[:2]
    cig = Cin // groups
    full_sp = [(n - 1) * ss + dd * (k - 1) + 1 + o
               for n, ss, dd, k, o in zip(x.shape[2:], s, d, w.shape[2:], op)]
    full = np.zeros((x.shape[0], Cog * groups) + tuple(full_sp))
    for ci in range(Cin):
        g = ci // cig
        for tap in np.ndindex(*w.shape[2:]):
            sl = tuple(slice(t * dd, t * dd + ss * (n - 1) + 1, ss)
                       for t, dd, ss, n in zip(tap, d, s, x.shape[2:]))
            full[(slice(None), slice(g * Cog, (g + 1) * Cog)) + sl] += \
                x[:, ci, None] * w[(ci, slice(None)) + tap].reshape((1, Cog) + (1,) * nd)
    crop = tuple(slice(pp, f - pp) for pp, f in zip(p, full_sp))
    out = full[(slice(None), slice(None)) + crop]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * nd)
    return out.astype(x.dtype)


_case("conv3d", _call("conv3d"), ref_convnd,
      lambda rng, dt: [Sample((_n(rng, dt, 2, 4, 4, 5, 3), _n(rng, dt, 6, 2, 2, 3, 2),
                               _n(rng, dt, 6)), {"stride": (2, 1, 1), "padding": (1, 1, 0),
                                                 "groups": 2})],
      gradgrad=False)  # (second order: the conv rows' own entries)
_case("conv_transpose1d", _call("conv_transpose1d"), ref_conv_transpose,
      lambda rng, dt: [Sample((_n(rng, dt, 2, 4, 5), _n(rng, dt, 4, 3, 3), _n(rng, dt, 3)),
                              {"stride": 2, "padding": 1, "output_padding": 1})])
_case("conv_transpose2d", _call("conv_transpose2d"), ref_conv_transpose,
      lambda rng, dt: [Sample((_n(rng, dt, 2, 4, 3, 4), _n(rng, dt, 4, 3, 3, 2), _n(rng, dt, 6)),
                              {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2,
                               "dilation": (1, 2)})], gradgrad=False)
_case("conv_transpose3d", _call("conv_transpose3d"), ref_conv_transpose,
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 3, 3, 2), _n(rng, dt, 2, 3, 2, 2, 2)),
                              {"stride": (2, 1, 2), "padding": (1, 0, 1),
                               "output_padding": (1, 0, 1), "dilation": (1, 2, 1)})],
      gradgrad=False)
_case("unfold", _call("unfold"), lambda x, k, padding, stride: ref_conv2d(
      x, np.tile(np.eye(k[0] * k[1]).reshape(-1, 1, *k), (x.shape[1], 1, 1, 1)).astype(x.dtype),
      None, stride, padding, 1, x.shape[1]).reshape(x.shape[0], x.shape[1] * k[0] * k[1], -1),
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3, 4, 5), (2, 3)), {"padding": 1,
                                                                  "stride": (1, 2)})])
_case("fold", _call("fold"), lambda c, out, k: _fold_ref(c, out, k),
      lambda rng, dt: [Sample((_n(rng, dt, 2, 12, 12), (4, 5), (2, 2)))])


def _fold_ref(cols, out, k):
    """Each column's taps added into the image at the patch they came from."""
    N, CK, L = cols.shape
    C = CK // (k[0] * k[1])
    bw = out[1] - k[1] + 1
    img = np.zeros((N, C) + tuple(out))
    c = cols.reshape(N, C, k[0], k[1], L)
    for idx in range(L):
        i, j = divmod(idx, bw)
        img[:, :, i:i + k[0], j:j + k[1]] += c[..., idx]
    return img.astype(cols.dtype)


# --- normalisation, resampling, attention -----------------------------------------------------
def _standard(x, axes, eps):
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


_case("group_norm", lambda x, w, b: _F().group_norm(x, 2, w, b),
      lambda x, w, b: _standard(x.reshape(2, 2, -1), -1, 1e-5).reshape(x.shape) *
      w[:, None, None] + b[:, None, None],
      lambda rng, dt: [Sample((_n(rng, dt, 2, 4, 3, 2), _n(rng, dt, 4), _n(rng, dt, 4)))])
_case("instance_norm", _call("instance_norm"), lambda x: _standard(x, (2, 3), 1e-5),
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3, 4, 3),))])
_case("rms_norm", _call("rms_norm"),
      lambda x, s, w: x / np.sqrt((x * x).mean((1, 2), keepdims=True) +
                                  np.finfo(x.dtype).eps) * w,
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3, 4), (3, 4), _n(rng, dt, 3, 4)))])
_case("local_response_norm", _call("local_response_norm", size=3, alpha=0.5),
      lambda x: x / (1 + 0.5 / 3 * np.stack([
          (x[:, max(c - 1, 0):c + 2] ** 2).sum(1) for c in range(x.shape[1])], 1)) ** 0.75,
      lambda rng, dt: [Sample((_n(rng, dt, 2, 5, 3),))])


def _linear_ref(x, out):
    """Linear interpolation along the last dim, half-pixel centres (``align_corners=False``)."""
    n = x.shape[-1]
    src = np.maximum((np.arange(out) + 0.5) * n / out - 0.5, 0)
    i0 = np.minimum(np.floor(src).astype(int), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    f = src - i0
    return x[..., i0] * (1 - f) + x[..., i1] * f


_case("interpolate_bilinear", _call("interpolate", size=(5, 7), mode="bilinear"),
      lambda x: np.swapaxes(_linear_ref(np.swapaxes(_linear_ref(x, 7), -1, -2), 5), -1, -2),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 3, 4),))])
_case("interpolate_nearest", _call("interpolate", scale_factor=2),
      lambda x: x.repeat(2, -1).repeat(2, -2),
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 2, 3),))])
_case("affine_grid", _call("affine_grid", size=(2, 1, 2, 3), align_corners=True),
      lambda t: np.einsum("nij,hwj->nhwi", t, np.stack(np.meshgrid(
          np.linspace(-1, 1, 2), np.linspace(-1, 1, 3), indexing="ij")[::-1] + (np.ones((2, 3)),),
          -1)), lambda rng, dt: [Sample((_n(rng, dt, 2, 2, 3),))])


def _grid_ref(x, g):
    """Bilinear sampling at ``(x, y)`` in ``[-1, 1]`` (align_corners, zeros outside)."""
    N, C, H, W = x.shape
    out = np.zeros((N, C) + g.shape[1:3])
    for n, i, j in np.ndindex(N, *g.shape[1:3]):
        px, py = (g[n, i, j, 0] + 1) * (W - 1) / 2, (g[n, i, j, 1] + 1) * (H - 1) / 2
        x0, y0 = math.floor(px), math.floor(py)
        for xx, yy in ((x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)):
            if 0 <= xx < W and 0 <= yy < H:
                out[n, :, i, j] += x[n, :, yy, xx] * (1 - abs(px - xx)) * (1 - abs(py - yy))
    return out.astype(x.dtype)


_case("grid_sample", _call("grid_sample", align_corners=True), _grid_ref,
      lambda rng, dt: [Sample((_n(rng, dt, 1, 2, 3, 4),
                               (np.round(rng.uniform(-1.0, 1.0, (1, 2, 2, 2)) * 4) / 4 +
                                0.07).astype(dt)))], gradgrad=False)


def _attention_ref(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


_case("scaled_dot_product_attention", _call("scaled_dot_product_attention"), _attention_ref,
      lambda rng, dt: [Sample((_n(rng, dt, 2, 3, 4), _n(rng, dt, 2, 5, 4),
                               _n(rng, dt, 2, 5, 3)))])
