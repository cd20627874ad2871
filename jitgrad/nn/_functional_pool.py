"""``jitgrad.nn.functional``: pooling beyond ``functional.py``'s fused 2-d max/avg pools.

* Max pools choose their windows' argmax first (NumPy, no gradient) and then *gather* the
  input at those flat indices: ``out = x.flatten(spatial).gather(-1, idx)``, so the gradient is
  ``g`` scattered back to the argmax (PyTorch's ``max_pool*_backward``), of every order. 1-d
  and 2-d regular max pools use the fused ``max_pool2d`` row instead. While a compile trace
  records, the windows are gathered by a constant index and reduced by the ``max`` row
  (``_windows``), so a compiled program finds each call's argmax.
* Average pools sum ``prod(kernel)`` strided slices of the zero-padded input and divide by the
  per-window count; adaptive average pools multiply each spatial dim by its ``(out, in)``
  averaging matrix (bins ``[floor(i n / o), ceil((i + 1) n / o))``).
* ``max_unpool`` scatters the values back to their indices in a zero tensor.
"""
from __future__ import annotations

import math

import numpy as np

from ..ops import shape, unary
from ..ops import nn as _ops
from ..ops import npfuncs
from ..ops.linalg import matmul
from ..ops.scatter import gather
from ..ops.scatter_reduce import scatter
from ..ops.core import upper
from ._functional_common import (shape_const as _sconst, shape_index as _sindex,
                                 host_index_array, index_tensor,
                                 float_tensor as _float_tensor, kernel_float as _kernel_float,
                                 as_tensor as _tensor, ntuple as _tuple)

__all__ = ["max_pool1d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool3d", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "boolean_dispatch"]


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name=None,
                     func_name=None):
    """A function calling ``if_true`` or ``if_false`` by the boolean argument ``arg_name``
    (positional index ``arg_index``, default ``default``): how PyTorch's ``max_pool2d`` returns
    ``(output, indices)`` only when ``return_indices`` is true."""
    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else \
            args[arg_index] if len(args) > arg_index else default
        return (if_true if flag else if_false)(*args, **kwargs)
    fn.__name__ = func_name or if_false.__name__
    if module_name is not None:
        fn.__module__ = module_name
    fn.__doc__ = if_true.__doc__ if if_false.__doc__ is None else if_false.__doc__
    return fn


# --- geometry --------------------------------------------------------------------------------
def _spatial_input(op, input, nd):  # noqa: A002
    """(x batched as (N, C, *spatial), whether a batch dim was added)."""
    x = _float_tensor(input, op)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input, "
                           f"got input of size {list(x.shape)}")
    unbatched = x.ndim == nd + 1
    return (shape.unsqueeze(x, 0) if unbatched else x), unbatched


def _unbatch(out, unbatched):
    return shape.squeeze(out, 0) if unbatched else out


def pool_out_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooled length: ``floor((n + 2p - d(k - 1) - 1) / s) + 1`` (ceil with
    ``ceil_mode``, dropping a last window that would start in the right padding)."""
    num = n + 2 * p - d * (k - 1) - 1
    o = (num + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def _pool_params(op, nd, x, kernel_size, stride, padding, dilation, ceil_mode):
    k = _tuple(kernel_size, nd, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _tuple(stride, nd, "stride")
    p, d = _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation")
    if any(v <= 0 for v in k + s + d):
        raise RuntimeError(f"{op}: kernel_size, stride and dilation must be positive, got "
                           f"kernel_size={k}, stride={s}, dilation={d}")
    if any(pp > kk // 2 for pp, kk in zip(p, k)):
        raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got "
                           f"pad={p} and kernel_size={k}")
    out = tuple(pool_out_size(n, *a, ceil_mode) for n, a in zip(x.shape[2:], zip(k, s, p, d)))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{op}: given input size {list(x.shape[1:])}, the calculated output "
                           f"size {list(x.shape[1:2]) + list(out)} is too small")
    return k, s, p, d, out


def _window_argmax(a, positions):
    """Flat spatial indices (N, C, *out) of the maxima of ``a`` (N, C, *spatial) over windows
    given per dim as ``positions[d]``: an (out_d, k_d) int array of input positions, -1 where a
    window element lies outside the input. The first maximum wins; a NaN counts as the max."""
    nd = len(positions)
    spatial = a.shape[2:]
    grids, valid = [], True
    for dim, pos in enumerate(positions):
        o, k = pos.shape
        sh = [1] * (2 * nd)
        sh[dim], sh[nd + dim] = o, k
        grids.append(np.clip(pos, 0, None).reshape(sh))
        valid = valid & (pos >= 0).reshape(sh)
    win = a[(slice(None), slice(None)) + tuple(grids)]  # (N, C, *out, *k)
    win = np.where(valid, win, -np.inf)
    outs = win.shape[2:2 + nd]
    flat = win.reshape(win.shape[:2 + nd] + (-1,))
    nan = np.isnan(flat)
    arg = np.where(nan.any(-1), nan.argmax(-1), flat.argmax(-1))
    ks = tuple(p.shape[1] for p in positions)
    offs = np.unravel_index(arg, ks)
    idx = np.zeros(arg.shape, np.int64)
    for dim in range(nd):
        pos = positions[dim]
        o_ix = np.arange(outs[dim]).reshape([-1 if i == dim else 1 for i in range(nd)])
        idx = idx * spatial[dim] + pos[o_ix, offs[dim]]
    return idx


def _gather_max(x, idx):
    """``x`` (N, C, *spatial) gathered at the flat spatial indices ``idx`` (N, C, *out)."""
    N, C = x.shape[:2]
    it = index_tensor(idx, x)
    out = gather(shape.reshape(x, (N, C, -1)), 2, shape.reshape(it, (N, C, -1)))
    return shape.reshape(out, idx.shape), it


def _windows(x, positions):
    """``_gather_max(x, _window_argmax(x's values, positions))`` as ops, for a compile trace
    (the argmax from each call's data): the window elements of ``x`` (N, C, *spatial) picked
    by a constant flat index ``G`` (P windows by K elements; shapes only), ``-inf`` outside
    the input, then the ``max`` row along each window (its first maximum, NaN winning, as
    ``_window_argmax``) and ``G`` at that element. The gradient goes to the argmax through the
    ``max`` row and ``index_select``'s scatter."""
    from ..ops import binary
    from ..ops.extrema import max as _max, take_along_dim
    from ..ops.scatter import index_select

    N, C = x.shape[:2]
    nd = len(positions)
    flat, valid = np.zeros((), np.int64), np.ones((), bool)
    for dim, pos in enumerate(positions):
        sh = [1] * (2 * nd)
        sh[dim], sh[nd + dim] = pos.shape
        flat = flat * x.shape[2 + dim] + np.clip(pos, 0, None).reshape(sh)
        valid = valid & (pos >= 0).reshape(sh)
    outs = tuple(p.shape[0] for p in positions)
    P, K = math.prod(outs), math.prod(p.shape[1] for p in positions)
    flat = np.broadcast_to(flat, outs + flat.shape[nd:]).reshape(P, K)
    win = shape.reshape(index_select(shape.reshape(x, (N, C, -1)), 2, flat.reshape(-1)),
                        (N, C, P, K))
    valid = np.broadcast_to(valid, outs + valid.shape[nd:]).reshape(P, K)
    if not valid.all():
        win = binary.where(_sindex(valid, x), win, _sconst(x, -np.inf))
    y, arg = _max(win, 3)
    where = shape.expand(_sindex(flat, x), (N, C, P, K))
    idx = take_along_dim(where, shape.unsqueeze(arg, 3), 3)
    return shape.reshape(y, (N, C) + outs), shape.reshape(idx, (N, C) + outs)


def _window_max(op, x, positions):
    """The max of ``x`` over each window and its flat spatial index: NumPy's argmax eagerly,
    ``_windows``'s ops while a compile trace records."""
    if upper.host_read_hook is not None:
        return _windows(x, positions)
    return _gather_max(x, _window_argmax(x._host(op), positions))


def _regular_positions(n, k, s, p, d, o):
    pos = np.arange(o)[:, None] * s - p + np.arange(k)[None, :] * d
    return np.where((pos >= 0) & (pos < n), pos, -1)


# --- max pooling -----------------------------------------------------------------------------
def _max_pool_nd(op, nd, input, kernel_size, stride, padding, dilation, ceil_mode):  # noqa: A002
    x, unbatched = _spatial_input(op, input, nd)
    k, s, p, d, out = _pool_params(op, nd, x, kernel_size, stride, padding, dilation, ceil_mode)
    if nd <= 2:
        _kernel_float(op, x)
        if nd == 1:
            x2 = shape.unsqueeze(x, 2)
            y, idx = _ops.max_pool2d(x2, (1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode)
            y, idx = shape.squeeze(y, 2), shape.squeeze(idx, 2)
        else:
            y, idx = _ops.max_pool2d(x, k, s, p, d, ceil_mode)
    else:
        positions = [_regular_positions(n, *a, o) for n, a, o in
                     zip(x.shape[2:], zip(k, s, p, d), out)]
        y, idx = _window_max(op, x, positions)
    return _unbatch(y, unbatched), _unbatch(idx, unbatched)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """Max over ``kernel_size`` windows of the last dim of ``(N, C, L)`` / ``(C, L)`` input
    (stride defaults to the kernel size; ``padding`` counts as -inf; ``dilation`` spaces the
    window; ``ceil_mode`` keeps a partial last window). ``(output, int64 indices)``: the index
    of each window's first maximum, where the gradient goes (the fused ``max_pool2d`` row on a
    unit height)."""
    return _max_pool_nd("max_pool1d", 1, input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """``max_pool1d_with_indices`` over the last 2 dims (the fused ``max_pool2d`` row); the
    indices are flat in each ``H x W`` plane."""
    return _max_pool_nd("max_pool2d", 2, input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                            ceil_mode=False, return_indices=False):
    """``max_pool1d_with_indices`` over the last 3 dims: the argmax of each window (flat in each
    ``D x H x W`` volume), then the input gathered there (the gradient scatters back to it)."""
    return _max_pool_nd("max_pool3d", 3, input, kernel_size, stride, padding, dilation,
                        ceil_mode)


def _max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                ceil_mode=False, return_indices=False):
    """``max_pool1d_with_indices`` without the indices."""
    return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
                ceil_mode=False, return_indices=False):
    """``max_pool3d_with_indices`` without the indices."""
    return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


max_pool1d = boolean_dispatch("return_indices", 6, False, max_pool1d_with_indices, _max_pool1d,
                              __name__, "max_pool1d")
max_pool3d = boolean_dispatch("return_indices", 6, False, max_pool3d_with_indices, _max_pool3d,
                              __name__, "max_pool3d")


# --- average and power-average pooling ------------------------------------------------------
def _window_counts(n, k, s, p, o, count_include_pad):
    """Each window's divisor along one dim: its length inside the padded input (or inside the
    input itself without ``count_include_pad``)."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, n + p)
    if not count_include_pad:
        start, end = np.maximum(start, 0), np.minimum(end, n)
    return (end - start).astype(np.float64)


def _window_sum(x, k, s, p, out):
    """``sum`` over each ``k`` window (stride ``s``) of ``x`` (N, C, *spatial) zero-padded by
    ``p`` (and on the right as far as the last window reaches): a sum of strided slices."""
    nd = len(k)
    pads = [(0, 0), (0, 0)]
    for n, kk, ss, pp, o in zip(x.shape[2:], k, s, p, out):
        pads.append((pp, max(pp, (o - 1) * ss + kk - n - pp)))
    xp = npfuncs.pad_constant(x, pads) if any(a or b for a, b in pads) else x
    total = None
    for offs in np.ndindex(*k):
        index = (slice(None), slice(None)) + tuple(
            slice(off, off + ss * (o - 1) + 1, ss) for off, ss, o in zip(offs, s, out))
        part = xp[index]
        total = part if total is None else total + part
    assert total is not None and total.ndim == nd + 2
    return total


def _avg_pool_nd(op, nd, input, kernel_size, stride, padding, ceil_mode,  # noqa: A002
                 count_include_pad, divisor_override):
    x, unbatched = _spatial_input(op, input, nd)
    k, s, p, _, out = _pool_params(op, nd, x, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        div = np.full(out, float(divisor_override))
    else:
        div = np.ones(())
        for n, kk, ss, pp, o in zip(x.shape[2:], k, s, p, out):
            div = np.multiply.outer(div, _window_counts(n, kk, ss, pp, o, count_include_pad))
    return _unbatch(_window_sum(x, k, s, p, out) / _sconst(x, div), unbatched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True):
    """Mean over ``kernel_size`` windows of the last dim of ``(N, C, L)`` / ``(C, L)`` input
    (zero padding, counted unless ``count_include_pad=False``); the fused ``avg_pool2d`` row
    on a unit height. Derivative: ``g / count`` spread over each window."""
    x, unbatched = _spatial_input("avg_pool1d", input, 1)
    k, s, p, _, _ = _pool_params("avg_pool1d", 1, x, kernel_size, stride, padding, 1, ceil_mode)
    _kernel_float("avg_pool1d", x)
    y = _ops.avg_pool2d(shape.unsqueeze(x, 2), (1,) + k, (1,) + s, (0,) + p, ceil_mode,
                        count_include_pad, None)
    return _unbatch(shape.squeeze(y, 2), unbatched)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True, divisor_override=None):
    """Mean over ``kernel_size`` windows of the last 3 dims of ``(N, C, D, H, W)`` /
    ``(C, D, H, W)`` input: ``sum(window) / count`` (``divisor_override`` replaces the
    count). Derivative: ``g / count`` spread over each window."""
    return _avg_pool_nd("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override)


def _lp_pool(op, nd, input, norm_type, kernel_size, stride, ceil_mode):  # noqa: A002
    """``(sum_window x^p)^(1/p)``; a partial last window (``ceil_mode``) sums ``x^p`` scaled
    by ``prod(kernel) / len(window)``, as PyTorch (an average pool times the kernel size)."""
    x, unbatched = _spatial_input(op, input, nd)
    k, s, _, _, out = _pool_params(op, nd, x, kernel_size, stride, 0, 1, ceil_mode)
    total = _window_sum(x ** norm_type, k, s, (0,) * nd, out)
    if ceil_mode:
        counts = np.ones(())
        for n, kk, ss, o in zip(x.shape[2:], k, s, out):
            counts = np.multiply.outer(counts, _window_counts(n, kk, ss, 0, o, True))
        total = total * _sconst(x, math.prod(k) / counts)
    total = unary.sign(total) * unary.relu(unary.abs(total))  # as PyTorch: negatives give 0
    return _unbatch(total ** (1.0 / norm_type), unbatched)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over the last dim (``p = norm_type``;
    ``inf`` is max pooling's limit, not supported: use ``max_pool1d``)."""
    return _lp_pool("lp_pool1d", 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over the last 2 dims."""
    return _lp_pool("lp_pool2d", 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling ``(sum_window x^p)^(1/p)`` over the last 3 dims."""
    return _lp_pool("lp_pool3d", 3, input, norm_type, kernel_size, stride, ceil_mode)


# --- adaptive pooling ------------------------------------------------------------------------
def _adaptive_sizes(op, nd, x, output_size):
    sizes = (output_size,) * nd if output_size is None or isinstance(output_size, int) else \
        tuple(output_size)
    if len(sizes) == 1 and nd > 1:
        sizes = sizes * nd
    if len(sizes) != nd:
        raise ValueError(f"{op}: output_size must be an int or a tuple of {nd} ints, got "
                         f"{output_size}")
    sizes = tuple(n if o is None else int(o) for n, o in zip(x.shape[2:], sizes))
    if any(o <= 0 for o in sizes) or any(n == 0 for n in x.shape[2:]):
        raise RuntimeError(f"{op}: expected positive output sizes and a non-empty input, got "
                           f"output_size {sizes} for input of size {list(x.shape)}")
    return sizes


def adaptive_bins(n, o):
    """Adaptive pooling's bins along one dim: ``[floor(i n / o), ceil((i + 1) n / o))``."""
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def along(x, dim, matrix):
    """``x`` contracted along ``dim`` with ``matrix`` (out, in): ``y[.., i, ..] =
    sum_j matrix[i, j] x[.., j, ..]`` (a matmul on the moved dim)."""
    moved = shape.transpose(x, dim, -1)
    y = matmul(moved, _sconst(x, matrix.T))
    return shape.transpose(y, dim, -1)


def _adaptive_avg(op, nd, input, output_size):  # noqa: A002
    x, unbatched = _spatial_input(op, input, nd)
    for dim, (n, o) in enumerate(zip(x.shape[2:], _adaptive_sizes(op, nd, x, output_size))):
        lo, hi = adaptive_bins(n, o)
        j = np.arange(n)
        m = ((j >= lo[:, None]) & (j < hi[:, None])) / (hi - lo)[:, None]
        x = along(x, 2 + dim, m)
    return _unbatch(x, unbatched)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """Mean over ``output_size`` adaptive bins of the last dim (bin ``i``:
    ``[floor(i L / o), ceil((i + 1) L / o))``); a matmul by the averaging matrix."""
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Adaptive average pooling of the last 2 dims (see ``adaptive_avg_pool1d``; ``None`` in
    ``output_size`` keeps that dim)."""
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    """Adaptive average pooling of the last 3 dims (see ``adaptive_avg_pool1d``)."""
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def _adaptive_max(op, nd, input, output_size):  # noqa: A002
    x, unbatched = _spatial_input(op, input, nd)
    positions = []
    for n, o in zip(x.shape[2:], _adaptive_sizes(op, nd, x, output_size)):
        lo, hi = adaptive_bins(n, o)
        pos = lo[:, None] + np.arange(int((hi - lo).max()))[None, :]
        positions.append(np.where(pos < hi[:, None], pos, -1))
    y, idx = _window_max(op, x, positions)
    return _unbatch(y, unbatched), _unbatch(idx, unbatched)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """Max over ``output_size`` adaptive bins of the last dim (bins as in
    ``adaptive_avg_pool1d``); ``(output, int64 indices)``, the gradient going to the argmax."""
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """Adaptive max pooling of the last 2 dims (see ``adaptive_max_pool1d_with_indices``)."""
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):  # noqa: A002
    """Adaptive max pooling of the last 3 dims (see ``adaptive_max_pool1d_with_indices``)."""
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size)


def _first(fn):
    def only_output(input, output_size, return_indices=False):  # noqa: A002
        return fn(input, output_size)[0]
    only_output.__doc__ = fn.__doc__
    return only_output


adaptive_max_pool1d = boolean_dispatch("return_indices", 2, False,
                                       adaptive_max_pool1d_with_indices,
                                       _first(adaptive_max_pool1d_with_indices), __name__,
                                       "adaptive_max_pool1d")
adaptive_max_pool2d = boolean_dispatch("return_indices", 2, False,
                                       adaptive_max_pool2d_with_indices,
                                       _first(adaptive_max_pool2d_with_indices), __name__,
                                       "adaptive_max_pool2d")
adaptive_max_pool3d = boolean_dispatch("return_indices", 2, False,
                                       adaptive_max_pool3d_with_indices,
                                       _first(adaptive_max_pool3d_with_indices), __name__,
                                       "adaptive_max_pool3d")


# --- fractional max pooling ------------------------------------------------------------------
def _fractional(op, nd, input, kernel_size, output_size, output_ratio,  # noqa: A002
                _random_samples):
    x, unbatched = _spatial_input(op, input, nd)
    k = _tuple(kernel_size, nd, "kernel_size")
    spatial = x.shape[2:]
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an "
                             "output_ratio")
        ratio = _ratio(output_ratio, nd)
        output_size = tuple(int(n * r) for n, r in zip(spatial, ratio))
    out = _tuple(output_size, nd, "output_size")
    for n, kk, o in zip(spatial, k, out):
        if o + kk - 1 > n:
            raise RuntimeError(f"{op}: output_size {out} + kernel_size {k} - 1 is too large "
                               f"for input size {tuple(spatial)}")
    N, C = x.shape[:2]
    if _random_samples is None:
        from ..ops import creation
        u = creation.generator().random((N, C, nd))
    else:
        u = np.asarray(_tensor(_random_samples, op)._host(op), np.float64).reshape(N, C, nd)
    a = x._host(op)
    idx = np.empty((N, C) + out, np.int64)
    for n in range(N):  # each plane has its own random window starts
        for c in range(C):
            # (PyTorch's 2-d samples are (w, h); its 3-d ones (t, h, w))
            sample = u[n, c, ::-1] if nd == 2 else u[n, c]
            positions = [_frac_starts(sample[dim], spatial[dim], k[dim], out[dim])[:, None]
                         + np.arange(k[dim])[None, :] for dim in range(nd)]
            idx[n, c] = _window_argmax(a[n:n + 1, c:c + 1], positions)[0, 0]
    y, it = _gather_max(x, idx)
    return _unbatch(y, unbatched), _unbatch(it, unbatched)


def _ratio(r, nd):
    r = (float(r),) * nd if isinstance(r, (int, float)) else tuple(float(v) for v in r)
    if len(r) != nd or not all(0 < v < 1 for v in r):
        raise ValueError(f"output_ratio must be {nd} values between 0 and 1, got {r}")
    return r


def _frac_starts(u, n, k, o):
    """The pseudo-random window starts of fractional max pooling (Graham 2014): with
    ``alpha = (n - k) / (o - 1)``, start ``i`` is ``floor((i + u) alpha) - floor(u alpha)`` and
    the last window ends at the input's end."""
    if o == 1:
        return np.array([n - k])
    alpha = (n - k) / (o - 1)
    i = np.arange(o - 1)
    starts = (np.floor((i + u) * alpha) - np.floor(u * alpha)).astype(np.int64)
    return np.append(starts, n - k)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Fractional max pooling over the last 2 dims: ``kernel_size`` windows at pseudo-random
    starts (one draw per plane, ``_random_samples`` of shape (N, C, 2) in [0, 1) to fix them)
    giving ``output_size`` (or ``output_ratio`` times the input size). ``(output, indices)``."""
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size,
                       output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,  # noqa: A002
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Fractional max pooling over the last 3 dims (see
    ``fractional_max_pool2d_with_indices``; samples of shape (N, C, 3))."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size,
                       output_ratio, _random_samples)


def _frac_first(fn):
    def only_output(input, kernel_size, output_size=None, output_ratio=None,  # noqa: A002
                    return_indices=False, _random_samples=None):
        return fn(input, kernel_size, output_size, output_ratio, False, _random_samples)[0]
    only_output.__doc__ = fn.__doc__
    return only_output


fractional_max_pool2d = boolean_dispatch("return_indices", 4, False,
                                         fractional_max_pool2d_with_indices,
                                         _frac_first(fractional_max_pool2d_with_indices),
                                         __name__, "fractional_max_pool2d")
fractional_max_pool3d = boolean_dispatch("return_indices", 4, False,
                                         fractional_max_pool3d_with_indices,
                                         _frac_first(fractional_max_pool3d_with_indices),
                                         __name__, "fractional_max_pool3d")


# --- unpooling -------------------------------------------------------------------------------
def _max_unpool(op, nd, input, indices, kernel_size, stride, padding, output_size):  # noqa: A002
    x, unbatched = _spatial_input(op, input, nd)
    idx = host_index_array(indices, op)
    if unbatched:
        idx = idx[None]
    if idx.shape != tuple(x.shape):
        raise RuntimeError(f"{op}: expected indices of the input's shape {list(x.shape)}, got "
                           f"{list(idx.shape)}")
    k = _tuple(kernel_size, nd, "kernel_size")
    s = k if stride is None else _tuple(stride, nd, "stride")
    p = _tuple(padding, nd, "padding")
    default = tuple((n - 1) * ss - 2 * pp + kk for n, kk, ss, pp in zip(x.shape[2:], k, s, p))
    if output_size is None:
        out = default
    else:
        out = tuple(int(v) for v in output_size)[-nd:]
        if len(out) != nd:
            raise ValueError(f"{op}: output_size must have {nd} or {nd + 2} elements, got "
                             f"{output_size}")
        for o, dflt, ss in zip(out, default, s):
            if not dflt - ss < o < dflt + ss:
                raise ValueError(f"{op}: invalid output_size {out} (expected sizes between "
                                 f"{tuple(d - ss + 1 for d, ss in zip(default, s))} and "
                                 f"{tuple(d + ss - 1 for d, ss in zip(default, s))})")
    plane = math.prod(out)
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        raise RuntimeError(f"{op}: Found an invalid max index {int(idx.max())} (output volumes "
                           f"are of size {'x'.join(map(str, out))})")
    N, C = x.shape[:2]
    # the indices go to the scatter row as its index (an array read through ``_host``: under
    # a compile trace, indices given as an argument join the program's value guards; computed
    # ones stop the capture there)
    zeros = _sconst(x, np.zeros((N, C, plane)))
    y = scatter(zeros, 2, idx.reshape(N, C, -1), shape.reshape(x, (N, C, -1)))
    return _unbatch(shape.reshape(y, (N, C) + out), unbatched)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """The partial inverse of ``max_pool1d``: each value written at its flat index in a zero
    output of length ``(L - 1) stride - 2 padding + kernel_size`` (or ``output_size``); the
    gradient is ``g`` gathered at the indices."""
    return _max_unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """The partial inverse of ``max_pool2d`` (see ``max_unpool1d``)."""
    return _max_unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding,
                       output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0,  # noqa: A002
                 output_size=None):
    """The partial inverse of ``max_pool3d`` (see ``max_unpool1d``)."""
    return _max_unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding,
                       output_size)

