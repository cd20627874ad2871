"""``jitgrad.nn.functional``: resampling (``interpolate``, ``affine_grid``, ``grid_sample``)
and ``scaled_dot_product_attention``.

``interpolate`` is separable: each spatial dim is multiplied by an ``(out, in)`` interpolation
matrix (0/1 rows for nearest, two taps for linear, four for cubic, bin averages for area), so
the gradient is the transposed matrix product, of every order. ``grid_sample`` gathers the
corner values at the floored coordinates and weighs them with the fractional parts, which are
differentiable in the grid.
"""
from __future__ import annotations

import math

import numpy as np

from ..ops import binary, shape, unary
from ..ops import nn as _ops
from ..ops.linalg import matmul
from ..ops.scatter import gather
from ._functional_common import (shape_const as _sconst, shape_index as _sindex, index_tensor, const as _const, float_tensor as _float_tensor,
                                 as_tensor as _tensor)
from ._functional_act import keep_mask
from ._functional_pool import adaptive_bins, along

__all__ = ["interpolate", "affine_grid", "grid_sample", "scaled_dot_product_attention"]

_MODES = {"nearest": None, "nearest-exact": None, "area": None, "linear": 1, "bilinear": 2,
          "bicubic": 2, "trilinear": 3}


def _source(o, n, scale, align_corners, clamp_low):
    """The input coordinate of each output position along one dim."""
    i = np.arange(o, dtype=np.float64)
    if align_corners:
        return i * ((n - 1) / (o - 1)) if o > 1 else np.zeros(o)
    src = (i + 0.5) * scale - 0.5
    return np.maximum(src, 0.0) if clamp_low else src


def _cubic(t, a=-0.75):
    """Keys' cubic convolution weights of the 4 taps at offsets -1, 0, 1, 2 (``a = -0.75``)."""
    def near(z):
        return ((a + 2) * z - (a + 3)) * z * z + 1

    def far(z):
        return ((a * z - 5 * a) * z + 8 * a) * z - 4 * a
    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], -1)


def _matrix(mode, n, o, scale, align_corners):
    """The ``(o, n)`` interpolation matrix of one dim."""
    m = np.zeros((o, n))
    rows = np.arange(o)
    if mode in ("nearest", "nearest-exact"):
        i = np.arange(o, dtype=np.float64)
        src = np.floor((i + (0.5 if mode == "nearest-exact" else 0.0)) * scale)
        m[rows, np.minimum(src.astype(np.int64), n - 1)] = 1.0
    elif mode == "area":
        lo, hi = adaptive_bins(n, o)
        j = np.arange(n)
        m = ((j >= lo[:, None]) & (j < hi[:, None])) / (hi - lo)[:, None]
    elif mode == "bicubic":
        src = _source(o, n, scale, align_corners, False)
        base = np.floor(src)
        w = _cubic(src - base)
        for tap in range(4):
            np.add.at(m, (rows, np.clip(base.astype(np.int64) - 1 + tap, 0, n - 1)), w[:, tap])
    else:
        src = _source(o, n, scale, align_corners, True)
        i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
        i1 = np.minimum(i0 + 1, n - 1)
        frac = src - i0
        np.add.at(m, (rows, i0), 1.0 - frac)
        np.add.at(m, (rows, i1), frac)
    return m


def interpolate(input, size=None, scale_factor=None, mode="nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (all but the first two) of ``input`` to ``size`` or by
    ``scale_factor``. Modes: 'nearest' (source ``floor(i scale)``), 'nearest-exact'
    (``floor((i + 1/2) scale)``), 'linear'/'bilinear'/'trilinear' (1/2/3 spatial dims, two taps
    per dim), 'bicubic' (Keys' cubic, ``a = -0.75``, 2 dims), 'area' (adaptive average).
    ``align_corners`` maps the corner pixels' centres onto each other (``src = i (n - 1) /
    (o - 1)``); otherwise ``src = (i + 1/2) scale - 1/2``, where ``scale`` is ``in / out``, or
    ``1 / scale_factor`` when that is given and ``recompute_scale_factor`` is not true.
    ``antialias`` is not supported."""
    if mode not in _MODES:
        raise NotImplementedError(f"Input Error: unsupported interpolation mode {mode!r}; "
                                  f"expected one of {sorted(_MODES)}")
    x = _float_tensor(input, "interpolate")
    nd = x.ndim - 2
    if nd < 1:
        raise ValueError(f"interpolate: expected an input with a batch and a channel dim, got "
                         f"{x.ndim}D")
    if _MODES[mode] is not None and _MODES[mode] != nd:
        want = {1: "3D", 2: "4D", 3: "5D"}[_MODES[mode]]
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs {want} input")
    if align_corners is not None and mode in ("nearest", "nearest-exact", "area"):
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    spatial = x.shape[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = (int(size),) * nd if isinstance(size, (int, np.integer)) else \
            tuple(int(v) for v in size)
        if len(out) != nd:
            raise ValueError(f"Input and output must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and output size of {list(out)}.")
        scales = [n / o for n, o in zip(spatial, out)]
    else:
        sf = (float(scale_factor),) * nd if isinstance(scale_factor, (int, float)) else \
            tuple(float(v) for v in scale_factor)
        if len(sf) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial "
                             f"dimensions, but got input with spatial dimensions of "
                             f"{list(spatial)} and scale_factor of shape {list(sf)}.")
        out = tuple(int(math.floor(n * f)) for n, f in zip(spatial, sf))
        scales = [n / o for n, o in zip(spatial, out)] if recompute_scale_factor else \
            [1.0 / f for f in sf]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"interpolate: the output size {out} must be positive")
    for dim, (n, o, sc) in enumerate(zip(spatial, out, scales)):
        if n != o or mode == "bicubic":
            x = along(x, 2 + dim, _matrix(mode, n, o, sc, bool(align_corners)))
    return x


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps: for 2-d ``size (N, C, H, W)`` and
    ``theta (N, 2, 3)``, ``grid[n, h, w] = theta[n] @ (x_w, y_h, 1)`` with the normalised
    pixel coordinates in ``[-1, 1]`` (pixel centres; the corner pixels' centres at +-1 with
    ``align_corners``); 3-d: ``size (N, C, D, H, W)``, ``theta (N, 3, 4)``. ``(N, H, W, 2)`` /
    ``(N, D, H, W, 3)``, linear in ``theta``."""
    t = _float_tensor(theta, "affine_grid")
    size = tuple(int(v) for v in size)
    nd = len(size) - 2
    if nd not in (2, 3) or t.shape != (size[0], nd, nd + 1):
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} "
                         f"for size {list(size)}. Got {list(t.shape)}.")
    if min(size) <= 0:
        raise ValueError(f"affine_grid: expected non-zero, positive output size, got "
                         f"{list(size)}")
    spatial = size[2:]

    def coords(n):
        if n == 1:
            return np.zeros(1)
        lin = np.linspace(-1.0, 1.0, n)
        return lin if align_corners else lin * (n - 1) / n
    axes = [coords(n) for n in spatial]  # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack(list(mesh)[::-1] + [np.ones(spatial)], -1)  # (*spatial, nd + 1): x, y(, z), 1
    base = _sconst(t, base.reshape(1, -1, nd + 1))
    grid = matmul(base, shape.transpose(t, 1, 2))  # (N, prod(spatial), nd)
    return shape.reshape(grid, (size[0],) + spatial + (nd,))


def _unnormalise(g, n, align_corners):
    return (g + 1.0) * ((n - 1) / 2) if align_corners else ((g + 1.0) * n - 1.0) / 2


def _reflect(c, n, align_corners):
    """Reflect coordinates into the input (about the corner centres with ``align_corners``,
    about the outer edges otherwise), then clip."""
    lo, span = (0.0, n - 1.0) if align_corners else (-0.5, float(n))
    if span <= 0:
        return c * 0.0
    u = unary.abs(c - lo)
    period = 2 * span
    m = u - (u / period).floor().detach() * period
    c = binary.where(m > span, period - m, m) + lo
    return binary.clamp(c, 0.0, n - 1.0)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros",  # noqa: A002
                align_corners=None):
    """Sample ``input (N, C, H, W)`` at ``grid (N, Ho, Wo, 2)`` locations (``x, y`` normalised
    to ``[-1, 1]``): ``(N, C, Ho, Wo)``. 'bilinear' weighs the four neighbours by the
    fractional parts (differentiable in the input and the grid); 'nearest' takes the nearest
    pixel (zero gradient for the grid). ``padding_mode``: 'zeros' (outside pixels are 0),
    'border' (coordinates clamped to the edge), 'reflection' (mirrored back inside)."""
    x, g = _float_tensor(input, "grid_sample"), _float_tensor(grid, "grid_sample")
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"grid_sample: mode {mode!r} is not supported (use "
                                  "'bilinear' or 'nearest')")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if x.ndim != 4 or g.ndim != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise RuntimeError(f"grid_sample: expected a 4D input (N, C, H, W) and a grid "
                           f"(N, Ho, Wo, 2) with the same N, got {list(x.shape)} and "
                           f"{list(g.shape)} (5D volumes are not supported)")
    N, C, H, W = x.shape
    Ho, Wo = g.shape[1:3]
    ac = bool(align_corners)
    ix = _unnormalise(g[..., 0], W, ac)
    iy = _unnormalise(g[..., 1], H, ac)
    if padding_mode == "border":
        ix, iy = binary.clamp(ix, 0.0, W - 1.0), binary.clamp(iy, 0.0, H - 1.0)
    elif padding_mode == "reflection":
        ix, iy = _reflect(ix, W, ac), _reflect(iy, H, ac)
    flat = shape.reshape(x, (N, C, H * W))

    def tap(xi, yi):
        """``input`` at integer coordinates (N, Ho, Wo) arrays; 0 outside."""
        inside = (xi >= 0) & (xi < W) & (yi >= 0) & (yi < H)
        idx = np.where(inside, np.clip(yi, 0, H - 1) * W + np.clip(xi, 0, W - 1), 0)
        it = index_tensor(np.broadcast_to(idx.reshape(N, 1, -1), (N, C, Ho * Wo)), x)
        vals = shape.reshape(gather(flat, 2, it), (N, C, Ho, Wo))
        return vals * _const(x, inside[:, None].astype(np.float64))

    if mode == "nearest":
        xi = np.rint(ix.detach()._host("grid_sample")).astype(np.int64)
        yi = np.rint(iy.detach()._host("grid_sample")).astype(np.int64)
        return tap(xi, yi)
    fx = np.floor(ix.detach()._host("grid_sample"))
    fy = np.floor(iy.detach()._host("grid_sample"))
    wx1 = shape.unsqueeze(ix - _const(x, fx), 1)
    wy1 = shape.unsqueeze(iy - _const(x, fy), 1)
    wx0, wy0 = 1.0 - wx1, 1.0 - wy1
    x0, y0 = fx.astype(np.int64), fy.astype(np.int64)
    return (tap(x0, y0) * wx0 * wy0 + tap(x0 + 1, y0) * wx1 * wy0 +
            tap(x0, y0 + 1) * wx0 * wy1 + tap(x0 + 1, y0 + 1) * wx1 * wy1)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q k^T * scale + mask) v`` over the last two dims (``scale`` defaults to
    ``1 / sqrt(E)``). ``attn_mask``: a bool mask (True = attend) or an additive float mask,
    broadcast to ``(..., L, S)``; ``is_causal``: attend to ``s <= l`` only (no ``attn_mask``
    then); ``dropout_p``: dropout on the attention weights (``jitgrad.manual_seed``'s
    generator); ``enable_gqa``: key/value heads (dim -3) shared by groups of query heads."""
    q, k, v = (_float_tensor(t, "scaled_dot_product_attention") for t in (query, key, value))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2 or q.shape[-1] != k.shape[-1] or \
            k.shape[-2] != v.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: expected query (..., L, E), key "
                           f"(..., S, E) and value (..., S, Ev), got {list(q.shape)}, "
                           f"{list(k.shape)} and {list(v.shape)}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        hq, hk = q.shape[-3], k.shape[-3]
        if hq % hk:
            raise RuntimeError(f"scaled_dot_product_attention: query heads ({hq}) must be a "
                               f"multiple of key/value heads ({hk}) with enable_gqa")
        k = k.repeat_interleave(hq // hk, dim=-3)
        v = v.repeat_interleave(hq // hk, dim=-3)
    L, S = q.shape[-2], k.shape[-2]
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = matmul(q, shape.transpose(k, -2, -1)) * s
    if is_causal:
        attn_mask = _sindex(np.tril(np.ones((L, S), bool)), q)
    if attn_mask is not None:
        m = _tensor(attn_mask, "scaled_dot_product_attention")
        if m.dtype.name == "bool":
            scores = binary.where(m, scores, _sconst(scores, -np.inf))
        else:
            scores = scores + m
    weights = _ops.softmax(scores, -1)
    if dropout_p > 0:
        keep = keep_mask(weights, dropout_p, weights.shape)
        weights = weights * _const(weights, keep / (1.0 - dropout_p) if dropout_p < 1 else keep)
    return matmul(weights, v)

