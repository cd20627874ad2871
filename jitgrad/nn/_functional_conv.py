"""``jitgrad.nn.functional``: 3-d and transposed convolutions, ``fold``/``unfold``, ``pad``
and the normalisations beyond batch/layer norm.

Everything reuses the fused ``convolution`` rows of ``jitgrad.ops.conv`` (1-d/2-d):

* ``conv3d`` is a sum over the kernel's depth taps of 2-d convolutions of depth slices
  (``out[:, :, d] = sum_kd conv2d(x[:, :, d s + kd dil], w[:, :, kd])``).
* ``conv_transpose`` is the adjoint of ``conv``: the ``convolution_input_grad`` row with the
  transposed convolution's output as the convolution's input shape (its weight layout
  ``(C_in, C_out / groups, *k)`` is exactly the convolution's ``(C_out, C_in / groups, *k)``).
  3-d: per depth tap, a 2-d transposed convolution placed at depths ``d s + kd dil``.
* ``unfold`` (im2col) is a grouped convolution with one-hot kernels (one output channel per
  kernel tap), and ``fold`` its adjoint, so both differentiate to all orders.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..graph.grad_mode import no_grad
from ..ops import npfuncs, shape, unary
from ..ops import nn as _ops
from ..ops import reduce as _red
from ..ops.core.upper import guard_writes
from ..ops.scatter import index_select
from ._functional_common import (shape_const as _sconst, shape_index as _sindex, const as _const, conv_padding as _conv_padding,
                                 float_tensor as _float_tensor, kernel_float as _kernel_float,
                                 same_dtype as _same_dtype, as_tensor as _tensor, ntuple as _tuple)

__all__ = ["conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
           "unfold", "fold", "pad", "group_norm", "instance_norm", "rms_norm",
           "local_response_norm"]


def _params(stride, padding, dilation, groups):
    return {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}


def conv_operands(op, nd, input, weight, bias, groups, transposed):  # noqa: A002
    """(x batched, weight, bias or None, whether a batch dim was added) of an ``nd``-d
    (transposed) convolution, checked: float32/float64, ranks, groups and channel counts."""
    x, w = _tensor(input, op), _tensor(weight, op)
    _same_dtype(op, x, w)
    _kernel_float(op, x)
    if w.ndim != nd + 2:
        raise RuntimeError(f"{op}: weight must be {nd + 2}-D, got {w.ndim}-D")
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = shape.unsqueeze(x, 0)
    if x.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{op}, but got input of size: {list(input.shape)}")
    groups = int(groups)
    if groups < 1 or w.shape[0] % groups:
        raise RuntimeError(f"{op}: {'in' if transposed else 'out'}_channels ({w.shape[0]}) "
                           f"must be divisible by groups ({groups})")
    c_in = w.shape[0] if transposed else w.shape[1] * groups
    if x.shape[1] != c_in:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {c_in} channels, but got "
                           f"{x.shape[1]} channels instead")
    c_out = w.shape[1] * groups if transposed else w.shape[0]
    b = None
    if bias is not None:
        b = _tensor(bias, op)
        if b.shape != (c_out,):
            raise RuntimeError(f"{op}: bias must have shape ({c_out},), got {list(b.shape)}")
    return x, w, b, unbatched


def _add_bias(y, b):
    return y if b is None else y + shape.reshape(b, (1, -1) + (1,) * (y.ndim - 2))


def _unbatch(y, unbatched):
    return shape.squeeze(y, 0) if unbatched else y


def _depth_fold(t):
    """(N, C, D, H, W) -> (N D, C, H, W)."""
    N, C, D = t.shape[:3]
    return shape.reshape(shape.permute(t, (0, 2, 1, 3, 4)), (N * D, C) + tuple(t.shape[3:]))


def _depth_unfold(t, N):
    """(N D, C, H, W) -> (N, C, D, H, W)."""
    D = t.shape[0] // N
    return shape.permute(shape.reshape(t, (N, D) + tuple(t.shape[1:])), (0, 2, 1, 3, 4))


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """3-d cross-correlation of ``(N, C, D, H, W)`` (or unbatched) input with
    ``(Co, C/groups, KD, KH, KW)`` weights: ``out[n, co, d, h, w] = b[co] + sum_{ci, k}
    w[co, ci, k] x[n, ci, (d, h, w) s - p + k dil]``; ``padding`` may be 'valid' or 'same'.
    Composed of per-depth-tap ``conv2d`` rows, so it differentiates like them."""
    x, w, b, unbatched = conv_operands("conv3d", 3, input, weight, bias, groups, False)
    s, d = _tuple(stride, 3, "stride"), _tuple(dilation, 3, "dilation")
    p = _conv_padding(padding, w.shape[2:], d, s, 3)
    if p[0]:
        x = npfuncs.pad_constant(x, ((0, 0), (0, 0), (p[0], p[0]), (0, 0), (0, 0)))
    KD = w.shape[2]
    Do = (x.shape[2] - d[0] * (KD - 1) - 1) // s[0] + 1
    if Do <= 0:
        raise RuntimeError(f"conv3d: input size {tuple(x.shape[2:])} (with padding) is smaller "
                           f"than the kernel size {tuple(w.shape[2:])}")
    params = _params(s[1:], p[1:], d[1:], int(groups))
    out = None
    for kd in range(KD):
        start = kd * d[0]
        xs = x[:, :, start:start + s[0] * (Do - 1) + 1:s[0]]
        y = _ops.conv(_depth_fold(xs), w[:, :, kd], None, params)
        out = y if out is None else out + y
    return _unbatch(_add_bias(_depth_unfold(out, x.shape[0]), b), unbatched)


def _transpose_geometry(op, x, w, nd, stride, padding, output_padding, dilation, output_size=None):
    s, p = _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding")
    op_, d = _tuple(output_padding, nd, "output_padding"), _tuple(dilation, nd, "dilation")
    for o, ss, dd in zip(op_, s, d):
        if o >= ss and o >= dd:
            raise RuntimeError(f"{op}: output padding must be smaller than either stride or "
                               f"dilation, but got output_padding={op_}, stride={s}, "
                               f"dilation={d}")
        if o >= ss:
            raise NotImplementedError(f"{op}: output_padding ({op_}) >= stride ({s}) is not "
                                      "supported")
    out = tuple((n - 1) * ss - 2 * pp + dd * (k - 1) + o + 1
                for n, ss, pp, dd, k, o in zip(x.shape[2:], s, p, d, w.shape[2:], op_))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"{op}: the output size {out} is not positive")
    return s, p, op_, d, out


def _conv_transpose_2d(op, nd, input, weight, bias, stride, padding, output_padding,  # noqa: A002
                       groups, dilation):
    x, w, b, unbatched = conv_operands(op, nd, input, weight, bias, groups, True)
    s, p, _, d, out = _transpose_geometry(op, x, w, nd, stride, padding, output_padding,
                                          dilation)
    if nd == 1:
        s, p, d = (1,) + s, (0,) + p, (1,) + d
    in_shape = (x.shape[0], w.shape[1] * int(groups)) + out
    y = _ops.conv_input_grad(x, w, in_shape, _params(s, p, d, int(groups)))
    return _unbatch(_add_bias(y, b), unbatched)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """1-d transposed convolution (the adjoint of ``conv1d``): ``out[n, co, i s - p + k dil]
    += w[ci, co, k] x[n, ci, i]`` with ``weight (C_in, C_out/groups, K)``; output length
    ``(L - 1) s - 2p + dil (K - 1) + output_padding + 1``."""
    return _conv_transpose_2d("conv_transpose1d", 1, input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """2-d transposed convolution (the adjoint of ``conv2d``, see ``conv_transpose1d``) with
    ``weight (C_in, C_out/groups, KH, KW)``."""
    return _conv_transpose_2d("conv_transpose2d", 2, input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,  # noqa: A002
                     groups=1, dilation=1):
    """3-d transposed convolution (the adjoint of ``conv3d``) with ``weight (C_in,
    C_out/groups, KD, KH, KW)``: per depth tap ``kd`` a 2-d transposed convolution, placed at
    output depths ``i s - p + kd dil``."""
    op = "conv_transpose3d"
    x, w, b, unbatched = conv_operands(op, 3, input, weight, bias, groups, True)
    s, p, o, d, out = _transpose_geometry(op, x, w, 3, stride, padding, output_padding,
                                          dilation)
    N, D = x.shape[0], x.shape[2]
    full = out[0] + 2 * p[0]  # output depth before cropping the padding
    xf = _depth_fold(x)
    total = None
    for kd in range(w.shape[2]):
        y = _ops.conv_input_grad(xf, w[:, :, kd], (xf.shape[0], w.shape[1] * int(groups)) +
                                 out[1:], _params(s[1:], p[1:], d[1:], int(groups)))
        y = _depth_unfold(y, N)  # (N, Co, D, Ho, Wo)
        if s[0] > 1:  # depth i goes to i s: interleave s - 1 zero planes
            y = shape.stack([y] + [_sconst(y, np.zeros(y.shape))] * (s[0] - 1), 3)
            y = shape.reshape(y, y.shape[:2] + (D * s[0],) + tuple(y.shape[4:]))
            y = y[:, :, :(D - 1) * s[0] + 1]
        before = kd * d[0]
        y = npfuncs.pad_constant(y, ((0, 0), (0, 0), (before, full - before - y.shape[2]),
                                     (0, 0), (0, 0)))
        total = y if total is None else total + y
    total = total[:, :, p[0]:p[0] + out[0]]
    return _unbatch(_add_bias(total, b), unbatched)


def conv_tbc(input, weight, bias, pad=0):  # noqa: A002
    """1-d convolution in time-batch-channel layout: ``input (T, B, C)``, ``weight
    (K, C, C_out)``, ``bias (C_out,)``, ``pad`` zeros at both ends of time; ``(T', B, C_out)``.
    """
    x, w = _float_tensor(input, "conv_tbc"), _float_tensor(weight, "conv_tbc")
    if x.ndim != 3 or w.ndim != 3 or x.shape[2] != w.shape[1]:
        raise RuntimeError(f"conv_tbc: expected input (T, B, C) and weight (K, C, C_out), got "
                           f"{list(x.shape)} and {list(w.shape)}")
    y = _ops.conv(shape.permute(x, (1, 2, 0)), shape.permute(w, (2, 1, 0)), None,
                  _params((1, 1), (0, int(pad)), (1, 1), 1))
    y = shape.permute(y, (2, 0, 1))
    return y + _float_tensor(bias, "conv_tbc")


# --- unfold / fold ---------------------------------------------------------------------------
def _one_hot_kernels(x, C, k):
    """``(C KH KW, 1, KH, KW)``: output channel ``c KH KW + t`` copies tap ``t`` of channel
    ``c`` (with ``groups = C``)."""
    kk = k[0] * k[1]
    eye = np.eye(kk).reshape(kk, 1, k[0], k[1])
    return _sconst(x, np.tile(eye, (C, 1, 1, 1)))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """im2col: the ``kernel_size`` patches of ``(N, C, H, W)`` (or ``(C, H, W)``) input as
    columns, ``(N, C KH KW, L)``, ``L`` the number of patch positions; row ``c KH KW + t`` holds
    tap ``t`` of channel ``c``. Its adjoint is ``fold``."""
    x = _float_tensor(input, "unfold")
    if x.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                           f"{x.ndim}D)")
    unbatched = x.ndim == 3
    if unbatched:
        x = shape.unsqueeze(x, 0)
    k, d = _tuple(kernel_size, 2, "kernel_size"), _tuple(dilation, 2, "dilation")
    p, s = _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride")
    N, C = x.shape[:2]
    cols = _ops.conv(x, _one_hot_kernels(x, C, k), None, _params(s, p, d, C))
    cols = shape.reshape(cols, (N, C * k[0] * k[1], -1))
    return _unbatch(cols, unbatched)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """col2im, the adjoint of ``unfold``: columns ``(N, C KH KW, L)`` (or unbatched) summed
    into an ``(N, C, *output_size)`` image (overlapping patches add up)."""
    cols = _float_tensor(input, "fold")
    if cols.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are "
                           f"supported (got {cols.ndim}D)")
    unbatched = cols.ndim == 2
    if unbatched:
        cols = shape.unsqueeze(cols, 0)
    out = _tuple(output_size, 2, "output_size")
    k, d = _tuple(kernel_size, 2, "kernel_size"), _tuple(dilation, 2, "dilation")
    p, s = _tuple(padding, 2, "padding"), _tuple(stride, 2, "stride")
    kk = k[0] * k[1]
    N, CK, L = cols.shape
    if CK % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={CK} and "
                           f"kernel_size={k}")
    blocks = [(n + 2 * pp - dd * (kkk - 1) - 1) // ss + 1
              for n, pp, dd, kkk, ss in zip(out, p, d, k, s)]
    if blocks[0] * blocks[1] != L:
        raise RuntimeError(f"Given output_size={out}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)={L}.")
    C = CK // kk
    g = shape.reshape(cols, (N, CK) + tuple(blocks))
    img = _ops.conv_input_grad(g, _one_hot_kernels(cols, C, k), (N, C) + out,
                               _params(s, p, d, C))
    return _unbatch(img, unbatched)


# --- pad -------------------------------------------------------------------------------------
def _pad_index(n, before, after, mode):
    """The source index of each padded position along one dim of length ``n``."""
    i = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    if mode == "circular":
        return i % n
    period = 2 * (n - 1)  # reflect: mirror about the end elements (not repeating them)
    m = np.abs(i) % period if period else np.zeros_like(i)
    return np.where(m < n, m, period - m)


def pad(input, pad, mode="constant", value=None):  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims of ``input``; ``pad = (left_last, right_last,
    left_second_last, ...)``. ``'constant'`` fills ``value`` (0) and accepts negative pads
    (cropping); ``'reflect'`` mirrors about the edge (pads < the dim's size), ``'replicate'``
    repeats the edge, ``'circular'`` wraps around (pads <= the size). The padded values are
    gathered copies of the input, so the gradient sums back onto the source elements."""
    x = _tensor(input, "pad")
    pad = tuple(int(v) for v in pad)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the number "
                           f"of dims of the input ({x.ndim}), got {len(pad)}")
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]  # last dim first
    if mode == "constant":
        crops = [(max(-a, 0), max(-b, 0)) for a, b in pairs]
        for i, (a, b) in enumerate(crops):
            dim = x.ndim - 1 - i
            if a or b:
                x = shape.narrow(x, dim, a, x.shape[dim] - a - b)
        widths = [(0, 0)] * (x.ndim - len(pairs)) + [(max(a, 0), max(b, 0))
                                                      for a, b in reversed(pairs)]
        if not any(a or b for a, b in widths):
            return x
        return npfuncs.pad_constant(x, widths, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if x.ndim < len(pairs) + 1:
        raise NotImplementedError(f"pad: {mode} padding of {len(pairs)} dims needs a "
                                  f"{len(pairs) + 1}D or {len(pairs) + 2}D input, got "
                                  f"{x.ndim}D")
    for i, (a, b) in enumerate(pairs):
        dim = x.ndim - 1 - i
        n = x.shape[dim]
        limit = n - 1 if mode == "reflect" else n
        if mode != "replicate" and (a > limit or b > limit or min(a, b) < 0):
            raise RuntimeError(f"pad: {mode} padding ({a}, {b}) of dim {dim} must be at most "
                               f"{limit} (the dim has size {n})")
        if n == 0 and (a or b):
            raise RuntimeError(f"pad: cannot {mode}-pad an empty dim {dim}")
        if a or b:
            idx = _pad_index(n, a, b, mode)
            x = index_select(x, dim, _sindex(idx, x))
    return x


# --- normalisation ---------------------------------------------------------------------------
def _affine(y, weight, bias, op):
    """``y * weight + bias`` with per-channel (dim 1) parameters."""
    C = y.shape[1]
    view = (1, C) + (1,) * (y.ndim - 2)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (C,):
            raise RuntimeError(f"{op}: expected {name} of shape ({C},), got {list(t.shape)}")
    if weight is not None:
        y = y * shape.reshape(weight, view)
    if bias is not None:
        y = y + shape.reshape(bias, view)
    return y


def _standardise(x, dims, eps):
    """``(x - mean) / sqrt(var + eps)`` over ``dims`` (biased variance)."""
    mean = _red.mean(x, dims, keepdim=True)
    var = _red.var(x, dims, keepdim=True, correction=0)
    return (x - mean) * unary.rsqrt(var + eps), mean, var


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalise ``(N, C, *)`` input over each group of ``C / num_groups`` channels and the
    spatial dims (``(x - mean) / sqrt(var + eps)``, biased variance), then the per-channel
    affine ``weight``/``bias``."""
    x = _float_tensor(input, "group_norm")
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{x.ndim}")
    N, C = x.shape[:2]
    G = int(num_groups)
    if G <= 0 or C % G:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(x.shape)} and num_groups="
                           f"{num_groups}")
    y, _, _ = _standardise(shape.reshape(x, (N, G, -1)), -1, eps)
    return _affine(shape.reshape(y, x.shape), weight, bias, "group_norm")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,  # noqa: A002
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalise each channel of each sample of ``(N, C, *)`` input over its spatial dims,
    then the per-channel affine. With ``use_input_stats`` the running stats (if given) are
    updated in place with the batch averages of the instance means and unbiased variances
    (``r = (1 - momentum) r + momentum stat``); without it they normalise instead."""
    x = _float_tensor(input, "instance_norm")
    if x.ndim < 3:
        raise ValueError(f"instance_norm: expected an input with at least 3 dims (N, C, *), got "
                         f"{x.ndim}D")
    dims = tuple(range(2, x.ndim))
    if math.prod(x.shape[2:]) <= 1 and use_input_stats:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{list(x.shape)}")
    if use_input_stats:
        y, mean, var = _standardise(x, dims, eps)
        stats = [t for t in (running_mean, running_var) if t is not None]
        if stats:
            n = math.prod(x.shape[2:])
            guard_writes(*stats)
            with no_grad():
                if running_mean is not None:
                    m = _red.mean(shape.reshape(mean, x.shape[:2]), 0)
                    running_mean.mul_(1 - momentum).add_(m * momentum)
                if running_var is not None:
                    v = _red.mean(shape.reshape(var, x.shape[:2]), 0) * (n / (n - 1))
                    running_var.mul_(1 - momentum).add_(v * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("instance_norm: running_mean and running_var must be given when "
                               "use_input_stats=False")
        view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        y = (x - shape.reshape(running_mean, view)) * unary.rsqrt(
            shape.reshape(running_var, view) + eps)
    return _affine(y, weight, bias, "instance_norm")


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    """``x / sqrt(mean(x^2) + eps) * weight`` over the trailing ``normalized_shape`` dims
    (``eps`` defaults to the dtype's machine epsilon)."""
    x = _float_tensor(input, "rms_norm")
    ns = (int(normalized_shape),) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(int(n) for n in normalized_shape)
    if not ns or len(ns) > x.ndim or tuple(x.shape[x.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(x.shape)}")
    if eps is None:
        eps = float(np.finfo(x.dtype.np).eps)
    dims = tuple(range(x.ndim - len(ns), x.ndim))
    y = x * unary.rsqrt(_red.mean(x * x, dims, keepdim=True) + eps)
    if weight is not None:
        if tuple(weight.shape) != ns:
            raise RuntimeError(f"rms_norm: weight must have shape {ns}, got "
                               f"{tuple(weight.shape)}")
        y = y * weight
    return y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):  # noqa: A002
    """``x / (k + alpha / size * sum_{c'} x_{c'}^2)^beta`` with the sum over the ``size``
    channels around ``c`` (``size // 2`` before, ``(size - 1) // 2`` after, zero outside)."""
    x = _float_tensor(input, "local_response_norm")
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.ndim} "
                         "dimensions)")
    if x.numel() == 0:
        return x
    C = x.shape[1]
    sq = npfuncs.pad_constant(x * x, [(0, 0), (size // 2, (size - 1) // 2)] +
                              [(0, 0)] * (x.ndim - 2))
    total = None
    for i in range(size):
        part = shape.narrow(sq, 1, i, C)
        total = part if total is None else total + part
    return x / (total * (alpha / size) + k) ** beta
