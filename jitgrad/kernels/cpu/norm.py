"""CPU kernels for batch and layer norm, the NLL of cross-entropy and the embedding gradient
(fused Numba loops, serial and parallel variants; split from ``kernels/cpu/nn.py``, whose kernel
builder ``_get`` and thresholds they share)."""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from . import pool
from .nn import _flat, _get, _par


# ---- normalisation ------------------------------------------------------------------------
def _bn_fwd(x, w, b, mean, invstd, var, out, N, C, L, eps, training):
    M = N * L
    for c in prange(C):
        if training:
            s = 0.0
            for n in range(N):
                row = x[(n * C + c) * L:(n * C + c + 1) * L]
                for j in range(L):
                    s += row[j]
            m = s / M
            q = 0.0
            for n in range(N):
                row = x[(n * C + c) * L:(n * C + c + 1) * L]
                for j in range(L):
                    q += (row[j] - m) * (row[j] - m)
            var[c] = q / M
            mean[c] = m
            invstd[c] = 1.0 / math.sqrt(q / M + eps)
        scale = invstd[c] * (w[c] if w.size > 0 else 1.0)
        shift = (b[c] if b.size > 0 else 0.0) - mean[c] * scale
        sc = out.dtype.type(scale)
        sf = out.dtype.type(shift)
        for n in range(N):
            row = x[(n * C + c) * L:(n * C + c + 1) * L]
            orow = out[(n * C + c) * L:(n * C + c + 1) * L]
            for j in range(L):
                orow[j] = row[j] * sc + sf


def _bn_bwd(x, g, w, mean, invstd, gx, gw, gb, N, C, L, training, need_x):
    M = N * L
    for c in prange(C):
        m = mean[c]
        sg = 0.0
        sgx = 0.0
        for n in range(N):
            row = x[(n * C + c) * L:(n * C + c + 1) * L]
            grow = g[(n * C + c) * L:(n * C + c + 1) * L]
            for j in range(L):
                sg += grow[j]
                sgx += grow[j] * (row[j] - m)
        istd = invstd[c]
        gb[c] = sg
        gw[c] = sgx * istd
        if need_x:
            wc = (w[c] if w.size > 0 else 1.0) * istd
            k = sgx * istd * istd / M if training else 0.0
            gm = sg / M if training else 0.0
            a = gx.dtype.type(wc)
            bk = gx.dtype.type(wc * k)
            cst = gx.dtype.type(wc * (k * m - gm))
            for n in range(N):
                row = x[(n * C + c) * L:(n * C + c + 1) * L]
                grow = g[(n * C + c) * L:(n * C + c + 1) * L]
                xrow = gx[(n * C + c) * L:(n * C + c + 1) * L]
                for j in range(L):
                    xrow[j] = a * grow[j] - bk * row[j] + cst


def _bn_fwd_cols(x, w, b, mean, invstd, var, out, N, C, eps, training, CW):
    """L == 1 ((N, C) input): the same math with the channels as the vectorised inner loop,
    work items being chunks of CW channels (a per-channel loop would stride by C)."""
    for t in prange((C + CW - 1) // CW):
        c0 = t * CW
        nc = min(C, c0 + CW) - c0
        if training:
            s = np.zeros(nc)
            for n in range(N):
                row = x[n * C + c0:n * C + c0 + nc]
                for j in range(nc):
                    s[j] += row[j]
            for j in range(nc):
                mean[c0 + j] = s[j] / N
            q = np.zeros(nc)
            mc = mean[c0:c0 + nc]
            for n in range(N):
                row = x[n * C + c0:n * C + c0 + nc]
                for j in range(nc):
                    q[j] += (row[j] - mc[j]) * (row[j] - mc[j])
            for j in range(nc):
                var[c0 + j] = q[j] / N
                invstd[c0 + j] = 1.0 / math.sqrt(q[j] / N + eps)
        sc = np.empty(nc, out.dtype)
        sf = np.empty(nc, out.dtype)
        for j in range(nc):
            scale = invstd[c0 + j] * (w[c0 + j] if w.size > 0 else 1.0)
            sc[j] = scale
            sf[j] = (b[c0 + j] if b.size > 0 else 0.0) - mean[c0 + j] * scale
        for n in range(N):
            row = x[n * C + c0:n * C + c0 + nc]
            orow = out[n * C + c0:n * C + c0 + nc]
            for j in range(nc):
                orow[j] = row[j] * sc[j] + sf[j]


def _bn_bwd_cols(x, g, w, mean, invstd, gx, gw, gb, N, C, training, need_x, CW):
    for t in prange((C + CW - 1) // CW):
        c0 = t * CW
        nc = min(C, c0 + CW) - c0
        sg = np.zeros(nc)
        sgx = np.zeros(nc)
        mc = mean[c0:c0 + nc]
        for n in range(N):
            row = x[n * C + c0:n * C + c0 + nc]
            grow = g[n * C + c0:n * C + c0 + nc]
            for j in range(nc):
                sg[j] += grow[j]
                sgx[j] += grow[j] * (row[j] - mc[j])
        a = np.empty(nc, gx.dtype)
        bk = np.empty(nc, gx.dtype)
        cst = np.empty(nc, gx.dtype)
        for j in range(nc):
            istd = invstd[c0 + j]
            gb[c0 + j] = sg[j]
            gw[c0 + j] = sgx[j] * istd
            wc = (w[c0 + j] if w.size > 0 else 1.0) * istd
            k = sgx[j] * istd * istd / N if training else 0.0
            gm = sg[j] / N if training else 0.0
            a[j] = wc
            bk[j] = wc * k
            cst[j] = wc * (k * mc[j] - gm)
        if need_x:
            for n in range(N):
                row = x[n * C + c0:n * C + c0 + nc]
                grow = g[n * C + c0:n * C + c0 + nc]
                xrow = gx[n * C + c0:n * C + c0 + nc]
                for j in range(nc):
                    xrow[j] = a[j] * grow[j] - bk[j] * row[j] + cst[j]


_BN_CW = 64  # channels per work item of the (N, C) kernels


def batch_norm_forward(x3, w, b, mean, invstd, eps, training):
    """x3: (N, C, L). Training: per-channel batch mean / biased var into ``mean``, ``invstd``
    (and returned ``var``); else uses the given ``mean``/``invstd``. out = (x - mean) * invstd
    * w + b."""
    N, C, L = x3.shape
    out = pool.empty(x3.shape, x3.dtype)
    var = np.zeros(C, np.float64)
    if x3.size and L == 1:
        _get(_bn_fwd_cols, _par(x3.size, C // _BN_CW + 1), fastmath=True)(
            _flat(x3), _flat(w), _flat(b), mean, invstd, var, out.reshape(-1), N, C,
            float(eps), bool(training), _BN_CW)
    elif x3.size:
        _get(_bn_fwd, _par(x3.size, C), fastmath=True)(
            _flat(x3), _flat(w), _flat(b), mean, invstd, var, out.reshape(-1), N, C, L,
            float(eps), bool(training))
    return out, var


def batch_norm_backward(x3, g3, w, mean, invstd, training, need_x):
    """(gx, gw, gb) of batch norm: gb = sum g, gw = sum g xhat, and in training
    gx = w invstd (g - mean(g) - xhat mean(g xhat)); in eval gx = w invstd g."""
    N, C, L = x3.shape
    gx = pool.empty(x3.shape, x3.dtype) if need_x else np.empty(0, x3.dtype)
    gw = np.zeros(C, np.float64)
    gb = np.zeros(C, np.float64)
    if x3.size and L == 1:
        _get(_bn_bwd_cols, _par(x3.size, C // _BN_CW + 1), fastmath=True)(
            _flat(x3), _flat(g3), _flat(w), mean, invstd, gx.reshape(-1), gw, gb, N, C,
            bool(training), bool(need_x), _BN_CW)
    elif x3.size:
        _get(_bn_bwd, _par(x3.size, C), fastmath=True)(
            _flat(x3), _flat(g3), _flat(w), mean, invstd, gx.reshape(-1), gw, gb, N, C, L,
            bool(training), bool(need_x))
    return gx, gw.astype(x3.dtype), gb.astype(x3.dtype)


def _ln_fwd(x, w, b, mean, rstd, out, M, D, eps):
    """Rows in the data dtype (vectorised sums with reassociation, as PyTorch's float
    accumulation); ``w``/``b`` are always arrays (ones/zeros stand in), so the loops have no
    branches."""
    for r in prange(M):
        row = x[r * D:(r + 1) * D]
        orow = out[r * D:(r + 1) * D]
        s = x.dtype.type(0)
        for j in range(D):
            s += row[j]
        m = s / D
        q = x.dtype.type(0)
        for j in range(D):
            q += (row[j] - m) * (row[j] - m)
        rs = 1.0 / math.sqrt(q / D + eps)
        mean[r] = m
        rstd[r] = rs
        a = out.dtype.type(rs)
        c = out.dtype.type(-m * rs)
        for j in range(D):
            orow[j] = (row[j] * a + c) * w[j] + b[j]


def _ln_bwd(x, g, w, mean, rstd, gx, pgw, pgb, M, D, B, need_x):
    per = (M + B - 1) // B
    for blk in prange(B):
        pw = pgw[blk * D:(blk + 1) * D]
        pb = pgb[blk * D:(blk + 1) * D]
        for j in range(D):
            pw[j] = 0
            pb[j] = 0
        for r in range(blk * per, min(M, (blk + 1) * per)):
            row = x[r * D:(r + 1) * D]
            grow = g[r * D:(r + 1) * D]
            m = x.dtype.type(mean[r])
            rs = x.dtype.type(rstd[r])
            a = x.dtype.type(0)
            c = x.dtype.type(0)
            for j in range(D):
                xh = (row[j] - m) * rs
                gwj = grow[j] * w[j]
                a += gwj
                c += gwj * xh
                pw[j] += grow[j] * xh
                pb[j] += grow[j]
            if need_x:
                xrow = gx[r * D:(r + 1) * D]
                a /= D
                c /= D
                for j in range(D):
                    xh = (row[j] - m) * rs
                    xrow[j] = rs * (grow[j] * w[j] - a - xh * c)


def _ones_if_empty(a, D, dtype, fill):
    return np.full(D, fill, dtype) if a.size == 0 else _flat(a).astype(dtype, copy=False)


def layer_norm_forward(x2, w, b, eps):
    """x2: (M, D) rows normalised to zero mean / unit variance, then * w + b."""
    M, D = x2.shape
    out = pool.empty(x2.shape, x2.dtype)
    mean = np.empty(M, np.float64)
    rstd = np.empty(M, np.float64)
    if x2.size:
        _get(_ln_fwd, _par(x2.size, M), fastmath=True)(
            _flat(x2), _ones_if_empty(w, D, x2.dtype, 1), _ones_if_empty(b, D, x2.dtype, 0),
            mean, rstd, out.reshape(-1), M, D, float(eps))
    return out, mean, rstd


_LN_BLOCKS = 64  # fixed row blocks for the weight/bias partial sums (thread-count independent)


def layer_norm_backward(x2, g2, w, mean, rstd, need_x):
    """(gx, gw, gb): gx = rstd (g w - mean(g w) - xhat mean(g w xhat)) per row,
    gw = sum_rows g xhat, gb = sum_rows g."""
    M, D = x2.shape
    B = max(1, min(M, _LN_BLOCKS))
    gx = pool.empty(x2.shape, x2.dtype) if need_x else np.empty(0, x2.dtype)
    pgw = np.zeros(B * D, x2.dtype)
    pgb = np.zeros(B * D, x2.dtype)
    if x2.size:
        _get(_ln_bwd, _par(x2.size, B), fastmath=True)(
            _flat(x2), _flat(g2), _ones_if_empty(w, D, x2.dtype, 1), mean, rstd, gx.reshape(-1),
            pgw, pgb, M, D, B, bool(need_x))
    return (gx, pgw.reshape(B, D).sum(0, dtype=np.float64).astype(x2.dtype),
            pgb.reshape(B, D).sum(0, dtype=np.float64).astype(x2.dtype))


# ---- cross-entropy (NLL on log-probabilities) and embedding ---------------------------------
def _nll_fwd(x, t, w, out, N, C, ignore_index, none):
    """out[i] = -w[t_i] x[i, t_i] (0 where t_i == ignore_index); returns (sum, total weight)."""
    total = 0.0
    wsum = 0.0
    for i in range(N):
        ti = t[i]
        if ti == ignore_index:
            if none:
                out[i] = 0
            continue
        wi = w[ti] if w.size > 0 else 1.0
        v = -wi * x[i * C + ti]
        if none:
            out[i] = v
        total += v
        wsum += wi
    return total, wsum


def _nll_bwd(g, t, w, gx, N, C, ignore_index, none, scale):
    """gx[i, t_i] = -w[t_i] g_i * scale, zeros elsewhere."""
    for i in range(N):
        row = gx[i * C:(i + 1) * C]
        for j in range(C):
            row[j] = 0
        ti = t[i]
        if ti == ignore_index:
            continue
        wi = w[ti] if w.size > 0 else 1.0
        row[ti] = -wi * (g[i] if none else g[0]) * scale


def _first_bad_target(t, C, ignore_index):
    """The position of the first target outside ``[0, C)`` that is not ``ignore_index``, or
    -1 (one pass, where NumPy's ``min`` and ``max`` took two)."""
    for i in range(t.size):
        ti = t[i]
        if ti != ignore_index and (ti < 0 or ti >= C):
            return i
    return -1


# module names, for the code compiled programs generate (compile/native.py)
FIRST_BAD_TARGET = _get(_first_bad_target, False)
SERIAL_NLL_FORWARD = _get(_nll_fwd, False)


def first_bad_target(t, C, ignore_index) -> int:
    """``_first_bad_target`` of the int64 targets ``t`` (any shape, read in C order)."""
    return FIRST_BAD_TARGET(_flat(t), C, int(ignore_index)) if t.size else -1


def nll_forward(x2, t, w, ignore_index, reduction):
    """NLL of log-probabilities ``x2`` (N, C) at int64 targets ``t`` (N,): per-sample losses
    (reduction 'none'), or (sum, total weight)."""
    N, C = x2.shape
    none = reduction == "none"
    out = np.empty(N if none else 0, x2.dtype)
    total, wsum = SERIAL_NLL_FORWARD(_flat(x2), _flat(t), _flat(w), out, N, C,
                                     int(ignore_index), none)
    return out, total, wsum


def nll_backward(g, t, w, shape, ignore_index, reduction, scale):
    gx = pool.empty(shape, g.dtype)
    N, C = shape
    if gx.size:
        _get(_nll_bwd, False)(_flat(g), _flat(t), _flat(w), gx.reshape(-1), N, C,
                              int(ignore_index), reduction == "none", float(scale))
    return gx


def _emb_bwd(g, idx, gw, D, padding_idx):
    for i in range(idx.size):
        k = idx[i]
        if k == padding_idx:
            continue
        dst = gw[k * D:(k + 1) * D]
        src = g[i * D:(i + 1) * D]
        for j in range(D):
            dst[j] += src[j]


def embedding_backward(g2, idx, num_weights, padding_idx):
    """gw[k] = sum of the gradient rows whose index is k (none for ``padding_idx``)."""
    D = g2.shape[1]
    gw = pool.zeros((num_weights, D), g2.dtype)
    if g2.size:
        _get(_emb_bwd, False)(_flat(g2), _flat(idx), gw.reshape(-1), D,
                              -1 if padding_idx is None else int(padding_idx))
    return gw
