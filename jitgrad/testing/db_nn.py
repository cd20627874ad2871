"""Op-database entries for the layers of ``jitgrad.nn`` (``jitgrad.ops.nn`` rows).

Each entry calls the public ``jitgrad.nn.functional`` function and gives an independent NumPy
reference written from the math (direct loops for convolution and pooling). The entries are
listed in ``ENTRIES`` (collected by ``testing.op_db.all_entries``; ``tests/ops/test_ops.py`` runs
the checks). Layers accumulate in float32 over many terms: their float32 forward tolerance is
looser than single ops', the result keeps the input's dtype, and the fused backward equals the
create_graph one to 1e-10 (``_nn``).
"""
from __future__ import annotations

import math

import numpy as np

from .opinfo import OpInfo, Sample, registrar

#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = []


def _nn(*args, **kwargs):
    """An nn entry: the layers' float32 tolerance, the input's dtype kept, fused rtol 1e-10."""
    return OpInfo(*args, float32_tol=(2e-5, 2e-5), result_dtype="input", fused_rtol=1e-10, **kwargs)


_nn_case = registrar(ENTRIES, _nn)


def _F():
    from jitgrad.nn import functional
    return functional


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


# --- references ----------------------------------------------------------------------------
def ref_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct definition: out[n, o, i, j] = b[o] + sum_{c, p, q} w[o, c, p, q]
    xpad[n, g*Cg + c, i*s + p*d, j*s + q*d]."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    N, C, H, W = x.shape
    Co, Cg, KH, KW = w.shape
    xp = np.zeros((N, C, H + 2 * ph, W + 2 * pw), x.dtype)
    xp[:, :, ph:ph + H, pw:pw + W] = x
    Ho = (H + 2 * ph - dh * (KH - 1) - 1) // sh + 1
    Wo = (W + 2 * pw - dw * (KW - 1) - 1) // sw + 1
    out = np.zeros((N, Co, Ho, Wo), np.float64)
    cog = Co // groups
    for o in range(Co):
        g = o // cog
        for p in range(KH):
            for q in range(KW):
                patch = xp[:, g * Cg:(g + 1) * Cg, p * dh:p * dh + sh * (Ho - 1) + 1:sh,
                           q * dw:q * dw + sw * (Wo - 1) + 1:sw]
                out[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, p, q])
        if b is not None:
            out[:, o] += b[o]
    return out.astype(x.dtype)


def ref_conv1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    out = ref_conv2d(x[:, :, None], w[:, :, None], b, (1, stride), (0, padding), (1, dilation),
                     groups)
    return out[:, :, 0]


def _pool_windows(x, k, s, p, d, ceil_mode, fill):
    """(windows (N, C, Ho, Wo, KH*KW) with ``fill`` outside the input, Ho, Wo)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _pair(k), _pair(s), _pair(p), _pair(d)
    N, C, H, W = x.shape

    def osize(n, kk, ss, pp, dd):
        num = n + 2 * pp - dd * (kk - 1) - 1 + (ss - 1 if ceil_mode else 0)
        o = num // ss + 1
        if ceil_mode and (o - 1) * ss >= n + pp:
            o -= 1
        return o
    Ho, Wo = osize(H, kh, sh, ph, dh), osize(W, kw, sw, pw, dw)
    big = np.full((N, C, H + 2 * ph + kh * dh + sh, W + 2 * pw + kw * dw + sw), fill)
    big[:, :, ph:ph + H, pw:pw + W] = x
    wins = np.empty((N, C, Ho, Wo, kh * kw))
    for i in range(Ho):
        for j in range(Wo):
            blk = big[:, :, i * sh:i * sh + (kh - 1) * dh + 1:dh, j * sw:j * sw + (kw - 1) * dw + 1:dw]
            wins[:, :, i, j] = blk.reshape(N, C, -1)
    return wins, Ho, Wo


def ref_max_pool2d(x, k, s=None, p=0, d=1, ceil_mode=False):
    wins, _, _ = _pool_windows(x, k, s or k, p, d, ceil_mode, -np.inf)
    return wins.max(-1).astype(x.dtype)


def ref_avg_pool2d(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True,
                   divisor_override=None):
    """Sum over each window / divisor; the divisor counts the window clipped to the padded
    input (count_include_pad) or only the real elements."""
    (kh, kw), (sh, sw), (ph, pw) = _pair(k), _pair(s or k), _pair(p)
    H, W = x.shape[-2:]
    wins, Ho, Wo = _pool_windows(x, k, s or k, p, 1, ceil_mode, 0.0)
    ones, _, _ = _pool_windows(np.ones((1, 1, H, W)), k, s or k, p, 1, ceil_mode, 0.0)
    out = wins.sum(-1)
    for i in range(Ho):
        for j in range(Wo):
            h0, w0 = i * sh - ph, j * sw - pw
            size = (min(h0 + kh, H + ph) - h0) * (min(w0 + kw, W + pw) - w0)
            div = divisor_override or (size if count_include_pad else ones[0, 0, i, j].sum())
            out[:, :, i, j] /= div
    return out.astype(x.dtype)


def ref_batch_norm(x, w, b, training=True, rm=None, rv=None, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        mean, var = x.mean(axes), x.var(axes)
    else:
        mean, var = rm, rv
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    return (y * w.reshape(shape) + b.reshape(shape)).astype(x.dtype)


def ref_layer_norm(x, shape, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y.astype(x.dtype)


def _erf(x):
    return np.vectorize(math.erf)(x)


def _log_softmax(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def _reduce(loss, reduction):
    if reduction == "mean":
        return np.asarray(loss.mean(), loss.dtype)
    return np.asarray(loss.sum(), loss.dtype) if reduction == "sum" else loss


def ref_nll(x, t, weight=None, ignore_index=-100, reduction="mean"):
    w = np.ones(x.shape[1]) if weight is None else weight
    keep = t != ignore_index
    tt = np.where(keep, t, 0)
    wi = w[tt] * keep
    loss = -wi * x[np.arange(len(t)), tt]
    if reduction == "mean":
        return np.asarray(loss.sum() / wi.sum(), x.dtype)
    return _reduce(loss.astype(x.dtype), reduction)


# --- samples -------------------------------------------------------------------------------
def _n(rng, dt, *shape):
    return rng.standard_normal(shape).astype(dt)


def _conv_samples(rng, dt):
    return [Sample((_n(rng, dt, 2, 2, 5, 4), _n(rng, dt, 3, 2, 2, 2), _n(rng, dt, 3)),
                   {"stride": (2, 1), "padding": 1}),
            Sample((_n(rng, dt, 1, 2, 4, 5), _n(rng, dt, 2, 1, 3, 2)),
                   {"padding": (1, 0), "dilation": (1, 2), "groups": 2})]


def _conv_im2col_samples(rng, dt):  # 2 * 3 * 3 = 18 taps > DIRECT_MAX_TAPS: im2col + GEMM
    return [Sample((_n(rng, dt, 2, 2, 4, 4), _n(rng, dt, 2, 2, 3, 3), _n(rng, dt, 2)),
                   {"padding": 1, "stride": (1, 2)})]


def _conv1d_samples(rng, dt):
    return [Sample((_n(rng, dt, 2, 2, 6), _n(rng, dt, 3, 2, 3), _n(rng, dt, 3)),
                   {"stride": 2, "padding": 1, "dilation": 1})]


def _distinct(rng, dt, *shape):  # well-separated values: no ties inside a pooling window
    n = math.prod(shape)
    return (rng.permutation(n).reshape(shape) * 0.25 + rng.uniform(-0.05, 0.05, shape)).astype(dt)


def _maxpool_samples(rng, dt):
    return [Sample((_distinct(rng, dt, 1, 2, 5, 5), 2)),
            Sample((_distinct(rng, dt, 1, 1, 5, 6), 3), {"s": 2, "p": 1, "ceil_mode": True}),
            Sample((_distinct(rng, dt, 1, 1, 5, 5), 2), {"s": 1, "p": 1, "d": 2})]


def _avgpool_samples(rng, dt):
    return [Sample((_n(rng, dt, 1, 2, 4, 5), 2)),
            Sample((_n(rng, dt, 1, 1, 5, 5), 3), {"s": 2, "p": 1, "ceil_mode": True,
                                                   "count_include_pad": False}),
            Sample((_n(rng, dt, 1, 1, 4, 4), 3), {"s": 2, "p": 1, "divisor_override": 4})]


def _bn_samples(rng, dt):
    return [Sample((_n(rng, dt, 4, 3), _n(rng, dt, 3), _n(rng, dt, 3))),
            Sample((_n(rng, dt, 2, 2, 3), _n(rng, dt, 2), _n(rng, dt, 2)))]


def _bn_eval_samples(rng, dt):
    return [Sample((_n(rng, dt, 2, 3, 2), _n(rng, dt, 3), _n(rng, dt, 3)),
                   {"rm": rng.standard_normal(3), "rv": rng.uniform(0.5, 2, 3)})]


def _ln_samples(rng, dt):
    return [Sample((_n(rng, dt, 3, 4), (4,), _n(rng, dt, 4), _n(rng, dt, 4))),
            Sample((_n(rng, dt, 2, 2, 3), (2, 3), _n(rng, dt, 2, 3), None))]


def _act_samples(rng, dt):
    return [Sample((_n(rng, dt, 3, 4) * 2,))]


def _pair_samples(rng, dt):
    return [Sample((_n(rng, dt, 3, 4), _n(rng, dt, 3, 4))),
            Sample((_n(rng, dt, 5), _n(rng, dt, 5)), {"reduction": "sum"}),
            Sample((_n(rng, dt, 2, 3), _n(rng, dt, 2, 3)), {"reduction": "none"})]


def _prob(rng, dt, *shape):
    return rng.uniform(0.05, 0.95, shape).astype(dt)


def _bce_samples(rng, dt):
    return [Sample((_prob(rng, dt, 3, 2), _prob(rng, dt, 3, 2))),
            Sample((_prob(rng, dt, 4), _prob(rng, dt, 4)), {"weight": _prob(rng, dt, 4),
                                                             "reduction": "sum"})]


def _bcel_samples(rng, dt):
    return [Sample((_n(rng, dt, 3, 2), _prob(rng, dt, 3, 2))),
            Sample((_n(rng, dt, 2, 3), _prob(rng, dt, 2, 3)),
                   {"weight": _prob(rng, dt, 2, 3), "pos_weight": _prob(rng, dt, 3) * 3,
                    "reduction": "none"})]


def _ce_samples(rng, dt):
    return [Sample((_n(rng, dt, 4, 3), np.array([0, 2, 1, 2]))),
            Sample((_n(rng, dt, 4, 3), np.array([0, -100, 1, 2])),
                   {"weight": np.array([0.5, 1.0, 2.0]), "reduction": "sum"}),
            Sample((_n(rng, dt, 2, 3, 2), np.array([[0, 2], [1, 1]])), {"reduction": "none"})]


def _ce_prob_samples(rng, dt):
    t = rng.uniform(0.1, 1, (3, 4))
    return [Sample((_n(rng, dt, 3, 4), (t / t.sum(1, keepdims=True)).astype(dt)),
                   {"label_smoothing": 0.1})]


def _ls_samples(rng, dt):
    return [Sample((_n(rng, dt, 4, 3), np.array([0, 2, -100, 1])),
                   {"label_smoothing": 0.2, "weight": np.array([0.5, 1.0, 2.0])})]


def _nll_samples(rng, dt):
    return [Sample((_log_softmax(_n(rng, dt, 4, 3)), np.array([2, 0, 1, 1]))),
            Sample((_log_softmax(_n(rng, dt, 3, 3)), np.array([2, -100, 1])),
                   {"weight": np.array([0.2, 1.0, 3.0]), "reduction": "none"})]


def _emb_samples(rng, dt):
    return [Sample((np.array([[1, 3], [3, 0]]), _n(rng, dt, 4, 3))),
            Sample((np.array([2, 0, 2, 1]), _n(rng, dt, 3, 2)))]  # padding_idx: its own test


def _linear_samples(rng, dt):
    return [Sample((_n(rng, dt, 3, 4), _n(rng, dt, 2, 4), _n(rng, dt, 2))),
            Sample((_n(rng, dt, 2, 2, 3), _n(rng, dt, 2, 3), None))]


# --- calls with the keyword names of the references -------------------------------------
def _t(a):
    import jitgrad
    return None if a is None else jitgrad.tensor(a)


def _maxpool(x, k, s=None, p=0, d=1, ceil_mode=False):
    return _F().max_pool2d(x, k, s, p, d, ceil_mode)


def _avgpool(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    return _F().avg_pool2d(x, k, s, p, ceil_mode, count_include_pad, divisor_override)


def _bn_eval(x, w, b, rm, rv):
    return _F().batch_norm(x, _t(rm), _t(rv), w, b, training=False)


def _ce_ref(x, t, weight=None, reduction="mean", label_smoothing=0.0):
    lp = _log_softmax(x.astype(np.float64), 1)
    C = x.shape[1]
    if t.dtype.kind == "f":
        y = t * (1 - label_smoothing) + label_smoothing / C
        loss = -(lp * y).sum(1)
        return _reduce(loss.astype(x.dtype), reduction)
    if x.ndim > 2:
        lp = np.moveaxis(lp, 1, -1).reshape(-1, C)
        out = ref_nll(lp, t.reshape(-1), weight, -100, reduction)
        return out.reshape(t.shape).astype(x.dtype) if reduction == "none" else out.astype(x.dtype)
    nll = ref_nll(lp, t, weight, -100, reduction)
    if label_smoothing == 0:
        return nll.astype(x.dtype)
    w = np.ones(C) if weight is None else weight
    keep = t != -100
    smooth = -(lp * w).sum(1) * keep
    tt = np.where(keep, t, 0)
    if reduction == "mean":
        smooth = smooth.sum() / (w[tt] * keep).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return ((1 - label_smoothing) * nll + label_smoothing / C * smooth).astype(x.dtype)


def _wt(a):
    return None if a is None else _t(a)


_nn_case("conv2d", lambda *a, **k: _F().conv2d(*a, **k), ref_conv2d, _conv_samples, rtol=1e-6,
         rows=("convolution",),
         gradient_rows=("convolution_input_grad", "convolution_weight_grad"))
_nn_case("conv2d_im2col", lambda *a, **k: _F().conv2d(*a, **k), ref_conv2d, _conv_im2col_samples,
         rtol=1e-6, rows=("convolution",))
_nn_case("conv1d", lambda *a, **k: _F().conv1d(*a, **k), ref_conv1d, _conv1d_samples, rtol=1e-6,
         rows=("convolution",))
_nn_case("max_pool2d", _maxpool, ref_max_pool2d, _maxpool_samples, rows=("max_pool2d",),
         gradient_rows=("max_pool2d_backward", "max_pool2d_gather"))
_nn_case("avg_pool2d", _avgpool, ref_avg_pool2d, _avgpool_samples, rows=("avg_pool2d",),
         gradient_rows=("avg_pool2d_backward",))
_nn_case("batch_norm", lambda x, w, b: _F().batch_norm(x, None, None, w, b, training=True),
         ref_batch_norm, _bn_samples, rtol=1e-6, atol=1e-8, rows=("batch_norm",))
_nn_case("batch_norm_eval", _bn_eval,
         lambda x, w, b, rm, rv: ref_batch_norm(x, w, b, False, rm, rv), _bn_eval_samples,
         rtol=1e-6, rows=("batch_norm",))
_nn_case("layer_norm", lambda x, s, w, b: _F().layer_norm(x, s, w, b), ref_layer_norm,
         _ln_samples, rtol=1e-6, atol=1e-8, rows=("layer_norm",))
_nn_case("embedding", lambda i, w, **k: _F().embedding(i, w, **k),
         lambda i, w, padding_idx=None: w[i], _emb_samples, rows=("embedding",),
         gradient_rows=("embedding_backward", "embedding_gather"))
_nn_case("linear", lambda x, w, b: _F().linear(x, w, b),
         lambda x, w, b: x @ w.T + (0 if b is None else b), _linear_samples, rtol=1e-6,
         rows=("addmm", "matmul_mm", "t", "view"))
_nn_case("gelu", lambda x: _F().gelu(x), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
         _act_samples, rtol=1e-6, rows=("gelu",))
_nn_case("gelu_tanh", lambda x: _F().gelu(x, approximate="tanh"),
         lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
         _act_samples, rtol=1e-6, rows=("gelu_tanh",))
_nn_case("silu", lambda x: _F().silu(x), lambda x: x / (1 + np.exp(-x)), _act_samples, rtol=1e-6,
         rows=("silu",))
_nn_case("softplus", lambda x: _F().softplus(x, beta=2.0, threshold=3.0),
         lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2), _act_samples, rtol=1e-6,
         rows=("softplus",))
_nn_case("leaky_relu", lambda x: _F().leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
         _act_samples, rows=("leaky_relu",))
_nn_case("mse_loss", lambda x, y, **k: _F().mse_loss(x, y, **k),
         lambda x, y, reduction="mean": _reduce((x - y) ** 2, reduction), _pair_samples,
         rtol=1e-6, rows=("mse_loss",))
_nn_case("l1_loss", lambda x, y, **k: _F().l1_loss(x, y, **k),
         lambda x, y, reduction="mean": _reduce(np.abs(x - y), reduction), _pair_samples,
         rtol=1e-6, rows=("abs", "mean", "sub", "sum"))
_nn_case("huber_loss", lambda x, y, **k: _F().huber_loss(x, y, delta=0.8, **k),
         lambda x, y, reduction="mean": _reduce(np.where(
             np.abs(x - y) < 0.8, 0.5 * (x - y) ** 2, 0.8 * (np.abs(x - y) - 0.4)), reduction),
         _pair_samples, rtol=1e-6, rows=("huber_loss",))
_nn_case("binary_cross_entropy",
         lambda x, y, weight=None, **k: _F().binary_cross_entropy(x, y, _wt(weight), **k),
         lambda x, y, weight=None, reduction="mean": _reduce(
             -(1 if weight is None else weight) * (y * np.log(x) + (1 - y) * np.log(1 - x)),
             reduction), _bce_samples, rtol=1e-6, rows=("binary_cross_entropy",))
_nn_case("binary_cross_entropy_with_logits",
         lambda x, y, weight=None, pos_weight=None, **k: _F().binary_cross_entropy_with_logits(
             x, y, _wt(weight), pos_weight=_wt(pos_weight), **k),
         lambda x, y, weight=None, pos_weight=None, reduction="mean": _reduce(
             -(1 if weight is None else weight) * ((1 if pos_weight is None else pos_weight) * y
                                                   * np.log(1 / (1 + np.exp(-x)))
                                                   + (1 - y) * np.log(1 - 1 / (1 + np.exp(-x)))),
             reduction), _bcel_samples, rtol=1e-6, rows=("binary_cross_entropy_with_logits",))
_nn_case("nll_loss", lambda x, t, weight=None, **k: _F().nll_loss(x, t, _wt(weight), **k),
         lambda x, t, weight=None, reduction="mean": ref_nll(x, t, weight, -100, reduction),
         _nll_samples, rtol=1e-6, rows=("nll_loss",))
_nn_case("cross_entropy", lambda x, t, weight=None, **k: _F().cross_entropy(x, t, _wt(weight), **k),
         _ce_ref, _ce_samples, rtol=1e-6,
         rows=("log_softmax", "nll_loss", "permute", "reshape_copy", "view"))
_nn_case("cross_entropy_probs", lambda x, t, **k: _F().cross_entropy(x, t, **k), _ce_ref,
         _ce_prob_samples, rtol=1e-6,
         rows=("add", "div", "log_softmax", "mul", "neg", "sum", "sum_dim"))
_nn_case("cross_entropy_smoothing",
         lambda x, t, weight=None, **k: _F().cross_entropy(x, t, _wt(weight), **k), _ce_ref,
         _ls_samples, rtol=1e-6,
         rows=("add", "div", "log_softmax", "mul", "neg", "nll_loss", "sum", "sum_dim"))
