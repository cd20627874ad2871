"""CUDA kernels for batch norm, layer norm, embedding and the losses (the twins of the
matching ``kernels.cpu.nn`` kernels; conventions in ``kernels.cuda.nn``'s docstring).

Statistics (means, inverse standard deviations, loss totals) are float64 device arrays: the
backward kernels read them on the device, so nothing comes back to the host.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64

from . import backend as cuda_backend
from .nn import BLOCK, block_sum, channel_pos, dummy, flat, launch, launch_rows, safe_div

# the messages of the device-side checks (Note [device asserts] in kernels/cuda/backend.py)
_NLL_RANGE = cuda_backend.assert_code("nll_loss: a target is out of bounds (targets must lie in "
                            "[0, n_classes) or equal ignore_index)")
_EMB_RANGE = cuda_backend.assert_code("embedding: an index is out of range (indices must lie in "
                            "[0, num_embeddings))")


# --- batch norm -----------------------------------------------------------------------------------
@cuda.jit
def _bn_fwd_k(x, w, b, has_w, has_b, mean, invstd, rm, rv, has_rm, N, C, L, eps, training,
              momentum, unbias, out):
    """Per channel c (one block each) of the (N, C, L) input. Training: ``m = mean(x)``,
    ``v = mean((x - m)^2)`` (two shared-memory tree sums), ``invstd = 1/sqrt(v + eps)``, and the
    running stats (when given) become ``(1 - momentum) r + momentum s`` (unbiased variance).
    Eval: ``m``, ``v`` are the running stats. Then ``out = (x - m) invstd w + b``."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    M = N * L
    c = cuda.blockIdx.x
    while c < C:
        if training:
            s = 0.0
            j = tid
            while j < M:
                s += x[channel_pos(j, c, C, L)]
                j += BLOCK
            m = block_sum(sm, s) / M
            q = 0.0
            j = tid
            while j < M:
                d = x[channel_pos(j, c, C, L)] - m
                q += d * d
                j += BLOCK
            var = block_sum(sm, q) / M
            istd = 1.0 / math.sqrt(var + eps)
            if tid == 0 and has_rm:
                rm[c] = rm[c] * (1.0 - momentum) + momentum * m
                rv[c] = rv[c] * (1.0 - momentum) + momentum * var * unbias
        else:
            m = rm[c] * 1.0
            istd = 1.0 / math.sqrt(rv[c] + eps)
        if tid == 0:
            mean[c] = m
            invstd[c] = istd
        scale = istd * (w[c] if has_w else 1.0)
        shift = (b[c] if has_b else 0.0) - m * scale
        j = tid
        while j < M:
            k = channel_pos(j, c, C, L)
            out[k] = x[k] * scale + shift
            j += BLOCK
        c += cuda.gridDim.x


@cuda.jit
def _bn_bwd_k(x, g, w, has_w, mean, invstd, N, C, L, training, need_x, gx, gw, gb):
    """Per channel: ``gb = sum g``, ``gw = invstd sum g (x - m)``; training
    ``gx = w invstd (g - mean(g) - xhat mean(g xhat))``, eval ``gx = w invstd g``."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    M = N * L
    c = cuda.blockIdx.x
    while c < C:
        m = mean[c]
        sg = 0.0
        sgx = 0.0
        j = tid
        while j < M:
            k = channel_pos(j, c, C, L)
            sg += g[k]
            sgx += g[k] * (x[k] - m)
            j += BLOCK
        sg = block_sum(sm, sg)
        sgx = block_sum(sm, sgx)
        istd = invstd[c]
        if tid == 0:
            gb[c] = sg
            gw[c] = sgx * istd
        if need_x:
            wc = (w[c] if has_w else 1.0) * istd
            kk = sgx * istd * istd / M if training else 0.0
            gm = sg / M if training else 0.0
            j = tid
            while j < M:
                k = channel_pos(j, c, C, L)
                gx[k] = wc * g[k] - wc * kk * x[k] + wc * (kk * m - gm)
                j += BLOCK
        c += cuda.gridDim.x


def _opt(a, dtype, index):
    """(buffer, present) for an optional per-channel operand (an empty array when absent)."""
    if a is None or a.size == 0:
        return dummy(dtype, index), False
    return flat(a), True


def _norm_outputs(x, n_stats):
    """(out shaped like ``x``, mean, inverse standard deviation) of a normalisation forward: the
    statistics are float64 device arrays of ``n_stats`` entries (channels or rows)."""
    stat = (n_stats,)
    return (cuda_backend.empty(x.shape, x.dtype, x.index),
            cuda_backend.empty(stat, np.float64, x.index),
            cuda_backend.empty(stat, np.float64, x.index))


def batch_norm_forward(x3, w, b, running_mean, running_var, eps, training, momentum):
    """(out, mean, invstd) of batch norm over the (N, C, L) ``x3``; the running stats (device
    arrays, or None) are updated in place on the device in training."""
    N, C, L = x3.shape
    idx = x3.index
    out, mean, invstd = _norm_outputs(x3, C)
    wb, has_w = _opt(w, x3.dtype, idx)
    bb, has_b = _opt(b, x3.dtype, idx)
    has_rm = running_mean is not None
    rm = running_mean.buffer[running_mean.offset:] if has_rm else dummy(np.float64, idx)
    rv = running_var.buffer[running_var.offset:] if has_rm else dummy(np.float64, idx)
    if has_rm and not (running_mean.is_contiguous() and running_var.is_contiguous()):
        raise RuntimeError("batch_norm: running stats must be contiguous")
    n = N * L
    launch_rows(_bn_fwd_k, C, flat(x3), wb, bb, has_w, has_b, mean.buffer, invstd.buffer, rm, rv,
                has_rm, N, C, L, float(eps), bool(training), float(momentum),
                n / max(n - 1, 1), out.buffer)
    return out, mean, invstd


def batch_norm_backward(x3, g3, w, mean, invstd, training, need_x):
    N, C, L = x3.shape
    idx = x3.index
    gx = cuda_backend.empty(x3.shape if need_x else (0,), x3.dtype, idx)
    gw = cuda_backend.empty((C,), x3.dtype, idx)
    gb = cuda_backend.empty((C,), x3.dtype, idx)
    wb, has_w = _opt(w, x3.dtype, idx)
    launch_rows(_bn_bwd_k, C, flat(x3), flat(g3), wb, has_w, mean.buffer, invstd.buffer, N, C, L,
                bool(training), bool(need_x), gx.buffer, gw.buffer, gb.buffer)
    return gx, gw, gb


# --- layer norm -----------------------------------------------------------------------------------
@cuda.jit
def _ln_fwd_k(x, w, b, has_w, has_b, M, D, eps, mean, rstd, out):
    """Row r (one block each): ``m = mean(x_r)``, ``rstd = 1/sqrt(mean((x_r - m)^2) + eps)``,
    ``out = (x - m) rstd w + b``."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    r = cuda.blockIdx.x
    while r < M:
        s = 0.0
        j = tid
        while j < D:
            s += x[r * D + j]
            j += BLOCK
        m = block_sum(sm, s) / D
        q = 0.0
        j = tid
        while j < D:
            d = x[r * D + j] - m
            q += d * d
            j += BLOCK
        rs = 1.0 / math.sqrt(block_sum(sm, q) / D + eps)
        if tid == 0:
            mean[r] = m
            rstd[r] = rs
        j = tid
        while j < D:
            v = (x[r * D + j] - m) * rs
            if has_w:
                v = v * w[j]
            if has_b:
                v = v + b[j]
            out[r * D + j] = v
            j += BLOCK
        r += cuda.gridDim.x


@cuda.jit
def _ln_bwd_x_k(x, g, w, has_w, mean, rstd, M, D, gx):
    """Row r: with ``g' = g w``: ``gx = rstd (g' - mean(g') - xhat mean(g' xhat))``."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    r = cuda.blockIdx.x
    while r < M:
        m = mean[r]
        rs = rstd[r]
        a = 0.0
        c = 0.0
        j = tid
        while j < D:
            gw = g[r * D + j] * (w[j] if has_w else 1.0)
            a += gw
            c += gw * (x[r * D + j] - m) * rs
            j += BLOCK
        a = block_sum(sm, a) / D
        c = block_sum(sm, c) / D
        j = tid
        while j < D:
            gw = g[r * D + j] * (w[j] if has_w else 1.0)
            gx[r * D + j] = rs * (gw - a - (x[r * D + j] - m) * rs * c)
            j += BLOCK
        r += cuda.gridDim.x


@cuda.jit
def _ln_bwd_w_k(x, g, mean, rstd, M, D, gw, gb):
    """Column j (one block each): ``gw_j = sum_r g xhat``, ``gb_j = sum_r g``."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    j = cuda.blockIdx.x
    while j < D:
        sw = 0.0
        sb = 0.0
        r = tid
        while r < M:
            gv = g[r * D + j]
            sw += gv * (x[r * D + j] - mean[r]) * rstd[r]
            sb += gv
            r += BLOCK
        sw = block_sum(sm, sw)
        sb = block_sum(sm, sb)
        if tid == 0:
            gw[j] = sw
            gb[j] = sb
        j += cuda.gridDim.x


def layer_norm_forward(x2, w, b, eps):
    """(out, mean, rstd) of the rows of (M, D) ``x2``."""
    M, D = x2.shape
    idx = x2.index
    out, mean, rstd = _norm_outputs(x2, M)
    wb, has_w = _opt(w, x2.dtype, idx)
    bb, has_b = _opt(b, x2.dtype, idx)
    if D:
        launch_rows(_ln_fwd_k, M, flat(x2), wb, bb, has_w, has_b, M, D, float(eps), mean.buffer,
                    rstd.buffer, out.buffer)
    return out, mean, rstd


def layer_norm_backward(x2, g2, w, mean, rstd, need_x):
    M, D = x2.shape
    idx = x2.index
    xf, gf = flat(x2), flat(g2)
    gx = cuda_backend.empty(x2.shape if need_x else (0,), x2.dtype, idx)
    if need_x and D:
        wb, has_w = _opt(w, x2.dtype, idx)
        launch_rows(_ln_bwd_x_k, M, xf, gf, wb, has_w, mean.buffer, rstd.buffer, M, D, gx.buffer)
    gw = cuda_backend.zeros((D,), x2.dtype, idx)
    gb = cuda_backend.zeros((D,), x2.dtype, idx)
    if M:
        launch_rows(_ln_bwd_w_k, D, xf, gf, mean.buffer, rstd.buffer, M, D, gw.buffer, gb.buffer)
    return gx, gw, gb


# --- embedding ------------------------------------------------------------------------------------
@cuda.jit
def _emb_gather_k(w, idx, D, V, n, pad, scale, counts, out, err, code):
    """``out[i, d] = w[idx_i, d]`` (0 where ``idx_i == pad``, times ``1/count(idx_i)`` when
    ``scale``); an index outside ``[0, V)`` records ``code`` (Note [device asserts])."""
    i = cuda.grid(1)
    while i < n:
        r = i // D
        k = idx[r]
        if k < 0 or k >= V:
            cuda.atomic.max(err, 0, code)
            out[i] = 0
            i += cuda.gridsize(1)
            continue
        v = w[k * D + i - r * D]
        if k == pad:
            v = v * 0
        if scale:
            v = v / max(counts[k], 1)
        out[i] = v
        i += cuda.gridsize(1)


@cuda.jit
def _emb_scatter_k(g, idx, D, V, n, pad, gw):
    """``gw[idx_i, d] += g[i, d]`` (none into ``pad``, nor for an index outside ``[0, V)``,
    which the forward reported): a scatter-add with atomics."""
    i = cuda.grid(1)
    while i < n:
        r = i // D
        k = idx[r]
        if k != pad and k >= 0 and k < V:
            cuda.atomic.add(gw, k * D + i - r * D, g[i])
        i += cuda.gridsize(1)


@cuda.jit
def _count_k(idx, n, V, counts):
    """``counts[k] = #{i: idx_i == k}`` (atomic increments; indices outside ``[0, V)``
    skipped)."""
    i = cuda.grid(1)
    while i < n:
        if idx[i] >= 0 and idx[i] < V:
            cuda.atomic.add(counts, idx[i], 1)
        i += cuda.gridsize(1)


@cuda.jit
def _scale_rows_k(gw, D, n, counts):
    """``gw[k, d] /= max(counts[k], 1)`` (scale_grad_by_freq)."""
    i = cuda.grid(1)
    while i < n:
        gw[i] = gw[i] / max(counts[i // D], 1)
        i += cuda.gridsize(1)


def _counts(idx, num_weights, index):
    counts = cuda_backend.zeros((num_weights,), np.int64, index)
    launch(_count_k, idx.size, flat(idx), idx.size, num_weights, counts.buffer)
    return counts


def embedding_gather(w2, idx, padding_idx=None, scale_grad_by_freq=False):
    """Rows of (V, D) ``w2`` at int64 ``idx`` (any shape): (idx.size, D). Optionally zero the
    padding rows and divide by the index counts (the embedding gradient's adjoint)."""
    V, D = w2.shape
    out = cuda_backend.empty((idx.size, D), w2.dtype, w2.index)
    counts = _counts(idx, V, w2.index).buffer if scale_grad_by_freq else dummy(np.int64, w2.index)
    launch(_emb_gather_k, out.size, flat(w2), flat(idx), D, V, out.size,
           -1 if padding_idx is None else int(padding_idx), bool(scale_grad_by_freq), counts,
           out.buffer, cuda_backend.error_flag(w2.index), _EMB_RANGE)
    return out


def embedding_backward(g2, idx, num_weights, padding_idx, scale_grad_by_freq):
    """``gw[k] = sum of the gradient rows whose index is k`` (none for ``padding_idx``;
    divided by the count of k with ``scale_grad_by_freq``)."""
    D = g2.shape[1]
    gw = cuda_backend.zeros((num_weights, D), g2.dtype, g2.index)
    launch(_emb_scatter_k, g2.size, flat(g2), flat(idx), D, num_weights, g2.size,
           -1 if padding_idx is None else int(padding_idx), gw.buffer)
    if scale_grad_by_freq:
        launch(_scale_rows_k, gw.size, gw.buffer, D, gw.size,
               _counts(idx, num_weights, g2.index).buffer)
    return gw


# --- losses ---------------------------------------------------------------------------------------
@cuda.jit
def _sum_k(a, n, mean, out):
    """``out[0] = sum(a)`` (``/ n`` when ``mean``): one block, a shared-memory tree."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    s = 0.0
    i = tid
    while i < n:
        s += a[i]
        i += BLOCK
    s = block_sum(sm, s)
    if tid == 0:
        out[0] = safe_div(s, n * 1.0) if mean else s


def reduce_loss(loss, reduction):
    """The per-element ``loss`` reduced: itself ('none'), its sum or its mean (a 0-d array)."""
    if reduction == "none":
        return loss
    out = cuda_backend.empty((), loss.dtype, loss.index)
    loss_f = flat(loss)
    _sum_k[1, BLOCK](loss_f, loss.size, reduction == "mean", out.buffer)
    return out


@cuda.jit(device=True)
def _clog(v):
    """``max(log v, -100)`` (PyTorch's clamp in binary cross-entropy), NaN kept."""
    if v != v:
        return v
    if v > 0:
        return max(math.log(v), -100.0)
    return -100.0 if v == 0 else math.nan


@cuda.jit(device=True)
def _clog1m(v):
    """``max(log(1 - v), -100)`` (via log1p), NaN kept."""
    if v != v:
        return v
    if v < 1:
        return max(math.log1p(-v), -100.0)
    return -100.0 if v == 1 else math.nan


@cuda.jit(device=True)
def _softplus_neg(x):
    """``log(1 + exp(-x))``, stable: ``log1p(exp(-|x|)) + max(-x, 0)``."""
    return math.log1p(math.exp(-abs(x))) + max(-x, 0.0)


def mse_body(x, y):
    """``(x - y)^2``."""
    d = x - y
    return d * d


def huber_body(x, y, delta):
    """``0.5 d^2`` where ``|d| < delta`` else ``delta (|d| - delta / 2)``, ``d = x - y``."""
    a = abs(x - y)
    if a < delta:
        return 0.5 * a * a
    return delta * (a - 0.5 * delta)


def bce_body(x, y, w):
    """``-w (y max(log x, -100) + (1 - y) max(log(1 - x), -100))``."""
    return -(y * _clog(x) + (1 - y) * _clog1m(x)) * w


def bcel_body(x, y, w):
    """``w ((1 - y) x + softplus(-x))``."""
    return ((1 - y) * x + _softplus_neg(x)) * w


def bcel_pw_body(x, y, w, pw):
    """``w ((1 - y) x + (1 + (pw - 1) y) softplus(-x))``."""
    return ((1 - y) * x + (1 + (pw - 1) * y) * _softplus_neg(x)) * w


def bcel_pw_nw_body(x, y, pw):
    """``(1 - y) x + (1 + (pw - 1) y) softplus(-x)`` (no weight)."""
    return (1 - y) * x + (1 + (pw - 1) * y) * _softplus_neg(x)


def pointwise_loss(body, operands, shape, dtype, reduction):
    """The loss ``body`` over broadcast ``operands`` (arrays or scalars), then reduced."""
    loss = cuda_backend.elementwise(body, operands, shape, dtype, dtype)
    return reduce_loss(loss, reduction)


# --- NLL (cross-entropy after log_softmax) --------------------------------------------------------
#: the NLL's ``stats`` device array (the forward writes it, the backward reads it): positions
TOTAL, WEIGHT_SUM = 0, 1
@cuda.jit
def _nll_fwd_k(x, t, w, has_w, N, C, ignore, none, mode, losses, stats, res, err, code):
    """``loss_i = -w[t_i] x[i, t_i]`` (0 where ``t_i == ignore``); one block sums the losses
    and the weights into ``stats = (total, wsum)``; ``res[0]`` is ``total / wsum`` (mode 1) or
    ``total`` (mode 2). A target outside ``[0, C)`` records ``code`` and counts as ignored
    (Note [device asserts])."""
    sm = cuda.shared.array(BLOCK, float64)
    tid = cuda.threadIdx.x
    tot = 0.0
    ws = 0.0
    i = tid
    while i < N:
        ti = t[i]
        if ti == ignore or ti < 0 or ti >= C:
            if ti != ignore:
                cuda.atomic.max(err, 0, code)
            if none:
                losses[i] = 0
        else:
            wi = w[ti] * 1.0 if has_w else 1.0
            v = -wi * x[i * C + ti]
            if none:
                losses[i] = v
            tot += v
            ws += wi
        i += BLOCK
    tot = block_sum(sm, tot)
    ws = block_sum(sm, ws)
    if tid == 0:
        stats[TOTAL] = tot
        stats[WEIGHT_SUM] = ws
        if mode == 1:
            res[0] = safe_div(tot, ws)
        elif mode == 2:
            res[0] = tot


@cuda.jit
def _nll_bwd_k(g, t, w, has_w, N, C, ignore, none, mean, stats, gx):
    """``gx[i, t_i] = -w[t_i] g_i scale`` (``scale = 1 / wsum`` for the mean, NaN when the
    weights sum to 0), zeros elsewhere."""
    i = cuda.grid(1)
    while i < N * C:
        r = i // C
        j = i - r * C
        ti = t[r]
        v = 0.0
        if j == ti and ti != ignore and ti >= 0 and ti < C:
            scale = 1.0
            if mean:
                wsum = stats[WEIGHT_SUM]
                scale = safe_div(1.0, wsum) if wsum != 0 else math.nan
            wi = w[ti] * 1.0 if has_w else 1.0
            v = -wi * (g[r] if none else g[0]) * scale
        gx[i] = v
        i += cuda.gridsize(1)


def nll_forward(x2, t, w, ignore_index, reduction):
    """(result, stats): per-sample losses ('none') or the 0-d reduced loss, and the device
    array ``(total, wsum)`` the backward reads."""
    N, C = x2.shape
    idx = x2.index
    none = reduction == "none"
    losses = cuda_backend.empty((N,) if none else (0,), x2.dtype, idx)
    res = cuda_backend.empty((), x2.dtype, idx)
    stats = cuda_backend.empty((2,), np.float64, idx)
    wb, has_w = _opt(w, x2.dtype, idx)
    mode = {"none": 0, "mean": 1, "sum": 2}[reduction]
    _nll_fwd_k[1, BLOCK](flat(x2), flat(t) if t.size else dummy(np.int64, idx), wb, has_w, N, C,
                         int(ignore_index), none, mode, losses.buffer, stats.buffer, res.buffer,
                         cuda_backend.error_flag(idx), _NLL_RANGE)
    return (losses if none else res), stats


def nll_backward(g, t, w, shape, ignore_index, reduction, stats):
    """``gx`` (N, C) of the NLL for the incoming ``g`` ((N,) for 'none', else 0-d)."""
    N, C = shape
    idx = g.index
    gx = cuda_backend.empty((N, C), g.dtype, idx)
    wb, has_w = _opt(w, g.dtype, idx)
    launch(_nll_bwd_k, gx.size, flat(g), flat(t) if t.size else dummy(np.int64, idx), wb, has_w,
           N, C, int(ignore_index), reduction == "none", reduction == "mean", stats.buffer,
           gx.buffer)
    return gx
