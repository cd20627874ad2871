"""Neural-network ops: softmax and log_softmax, the elementwise activations, addmm, batch and
layer norm, embedding; convolution and pooling are in ``ops/conv.py`` and the losses in
``ops/losses.py`` (both re-exported here).

Softmax and log_softmax (numerically stable) along one dim:

Forward: the input is laid out as ``(outer, r, inner)`` (a reshape: one dim is always
adjacent) and ``kernels/cpu/softmax.py``'s one kernel computes the max, the sum of exponentials
and the result per slice; compiled programs call the same kernel. Backward rules are Tensor ops
on the saved output, so double backward works.
"""
from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from .. import dtypes
from ..graph.grad_mode import is_grad_enabled
from ..kernels.cpu import norm as cpu_norm, pool, softmax as cpu_softmax
from . import binary, nn_cuda, unary
from .core import dispatch, upper
from . import linalg as _linalg
from . import reduce as _reduce
from . import shape as _shape
from .core import smath
from .core.registry import LINEAR, OPS, def_composite, def_elementwise, public
from .nn_common import none_tensor, pad_batched, sum_terms, wrap
from .reduce_common import reduced_dims
# the convolution/pooling rows live in ops/conv.py, the loss rows in ops/losses.py (re-exported
# here: nn.functional reaches them as ops.nn's); they share this module's helpers through
# ops/nn_common.py, so neither imports this module
from .conv import (AVGPOOL, AVGPOOL_BWD, CONV, CONV_BW, CONV_BX, MAXPOOL,  # noqa: F401
                   MAXPOOL_GATHER, MAXPOOL_SCATTER, avg_pool2d, conv, conv_input_grad,
                   conv_weight_grad, max_pool2d)
from .losses import (BCE, BCE_LOGITS, HUBER_LOSS, MSE_LOSS, NLL_LOSS,  # noqa: F401
                     binary_cross_entropy, binary_cross_entropy_with_logits, huber_loss, mse_loss,
                     nll_loss)


def _softmax_fwd(ctx, x, dim, log):
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    a = x.astype(np.float32) if x.dtype == np.float16 else x
    shape = a.shape
    x3 = a.reshape(math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])) if a.ndim \
        else a.reshape(1, 1, 1)
    y = cpu_softmax.slices(x3, cpu_softmax.LOG_SOFTMAX if log else cpu_softmax.SOFTMAX)
    return y.reshape(x.shape).astype(x.dtype, copy=False)


def _softmax_bwd(ctx, g, result):
    return (result * (g - _reduce.sum(g * result, ctx.dim, keepdim=True)),)


def _log_softmax_bwd(ctx, g, result):
    return (g - result.exp() * _reduce.sum(g, ctx.dim, keepdim=True),)


def _softmax_jvp(tangents, primals, outs, dim, log):
    """softmax: ``y * (t - sum_j t_j y_j)``; log_softmax: ``t - sum_j t_j exp(y_j)``."""
    t, y = tangents[0], outs[0]
    if log:
        return t - _reduce.sum(t * y.exp(), dim, keepdim=True)
    return y * (t - _reduce.sum(t * y, dim, keepdim=True))


def _softmax_batch(name):
    """The batch rule of the row ``name`` (looked up when the rule runs): ``dim`` shifted by
    the batch dim; 0-d examples become a column."""
    def rule(args, batched, dim, log):
        op, x = OPS[name], args[0]
        if x.ndim > 1:
            return dispatch.composite(op, x, dim=dim + 1, log=log)
        col = _shape.reshape(x, (x.shape[0], 1))  # 0-d examples
        return _shape.reshape(dispatch.composite(op, col, dim=1, log=log), x.shape)
    return rule


SOFTMAX = def_composite("softmax", "SoftmaxBackward0", ("x",), _softmax_fwd, _softmax_bwd,
                        attrs=("dim", "log"), save=("result",), jvp=_softmax_jvp,
                        batch_rule=_softmax_batch("softmax"), cuda_forward=nn_cuda.softmax_forward,
                        method=True, export=True)
LOG_SOFTMAX = def_composite("log_softmax", "LogSoftmaxBackward0", ("x",), _softmax_fwd,
                            _log_softmax_bwd, attrs=("dim", "log"), save=("result",),
                            jvp=_softmax_jvp, batch_rule=_softmax_batch("log_softmax"),
                            cuda_forward=nn_cuda.softmax_forward, method=True, export=True)


def _prepare(op, x, dim, dtype):
    x = dispatch.tensor_operand(x, op)
    if dtype is not None:
        x = unary.cast(x, dtypes.to_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}(): expected a floating point input, got "
                           f"{_reduce.torch_dtype_name(x.dtype)} (pass dtype= to convert)")
    if dim is None:
        raise TypeError(f"{op}(): argument 'dim' must be an int, not None")
    dims = reduced_dims(op, dim, x.ndim, multi=False)
    return x, dims[0] if dims else 0


@public(SOFTMAX)
def softmax(x, dim, dtype=None):
    """``exp(x_i - m) / sum_j exp(x_j - m)`` along ``dim`` with ``m = max_j x_j`` (stable).

    Float input only (``dtype`` casts first). Derivative (``y`` the output):
    ``y * (g - sum_j g_j y_j)``. Records ``SoftmaxBackward0``.
    """
    x, d = _prepare("softmax", x, dim, dtype)
    return dispatch.composite(SOFTMAX, x, dim=d, log=False)


@public(LOG_SOFTMAX)
def log_softmax(x, dim, dtype=None):
    """``x_i - m - log(sum_j exp(x_j - m))`` along ``dim`` with ``m = max_j x_j`` (stable).

    Float input only (``dtype`` casts first). Derivative (``y`` the output):
    ``g - exp(y) * sum_j g_j``. Records ``LogSoftmaxBackward0``.
    """
    x, d = _prepare("log_softmax", x, dim, dtype)
    return dispatch.composite(LOG_SOFTMAX, x, dim=d, log=True)


# =============================================================================================
# Layers of jitgrad.nn: activations, linear, convolution, pooling, normalisation, embedding and
# losses. Public signatures (PyTorch's) live in jitgrad.nn.functional; these are the rows.
# =============================================================================================
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K_TANH = math.sqrt(2.0 / math.pi)
_C_TANH = 0.044715


# Dual-use erf / log1p (a kernel call inside Numba, the registry op on Tensors) from smath, which
# routes them to the vectorisable kernels/cpu/vmath versions
_erf = smath.erf
_log1p = smath.log1p


def _c(x, value):
    """``value`` in ``x``'s float type inside kernels (a Python float would turn float32 math
    into float64: DESIGN-NUMBA.md), the plain number on Tensors (a weak scalar there)."""
    return value


@overload(_c, inline="always")
def _c_ov(x, value):
    if isinstance(x, types.Float):
        cast = as_dtype(x).type
        return lambda x, value: cast(value)
    return lambda x, value: value


# On CUDA this (target "generic") overload is used as it is: np.float32(value) compiles there, so
# bodies using _c need no CUDA-specific overload (checked by compiling the gelu bodies to PTX for
# sm_90 with NVVM, numba-cuda 0.30.4). A CUDA-only overload would have to be registered through
# numba.cuda.extending.overload: numba-cuda's typing does not see numba.extending's target="cuda".


# --- elementwise activations (scalar bodies: fused backward, create_graph for free) ----------
def _gelu(x):
    return _c(x, 0.5) * x * (_c(x, 1.0) + _erf(x * _c(x, _INV_SQRT2)))


def _gelu_dx(g, x):  # Phi(x) + x phi(x)
    return g * (_c(x, 0.5) * (_c(x, 1.0) + _erf(x * _c(x, _INV_SQRT2)))
                + x * (_c(x, _INV_SQRT_2PI) * smath.exp(_c(x, -0.5) * (x * x))))


def _gelu_tanh(x):
    return _c(x, 0.5) * x * (_c(x, 1.0) + smath.tanh(_c(x, _K_TANH) * (x + _c(x, _C_TANH) * x * x * x)))


def _gelu_tanh_dx(g, x):
    x2 = x * x
    t = smath.tanh(_c(x, _K_TANH) * (x + _c(x, _C_TANH) * x2 * x))
    return g * (_c(x, 0.5) * (_c(x, 1.0) + t) + _c(x, 0.5 * _K_TANH) * x * (_c(x, 1.0) - t * t)
                * (_c(x, 1.0) + _c(x, 3.0 * _C_TANH) * x2))


def _silu(x):
    return x * smath.sigmoid(x)


def _silu_dx(g, x):
    s = smath.sigmoid(x)
    return g * (s * (_c(x, 1.0) + x * (_c(x, 1.0) - s)))


def _softplus(x, beta, threshold):
    z = x * beta
    if z > threshold:
        return x
    return _log1p(smath.exp(z)) / beta


def _softplus_dx(g, x, beta, threshold):
    z = x * beta
    return smath.where(z > threshold, g, g * smath.sigmoid(z))


def _leaky_relu(x, negative_slope):
    return x if x > 0 else x * negative_slope


def _leaky_relu_dx(g, x, negative_slope):
    return smath.where(x > 0, g, g * negative_slope)


GELU = def_elementwise("gelu", "GeluBackward0", ("x",), _gelu, {"x": _gelu_dx}, dtype_rule="float")
GELU_TANH = def_elementwise("gelu_tanh", "GeluBackward0", ("x",), _gelu_tanh,
                            {"x": _gelu_tanh_dx}, dtype_rule="float")
SILU = def_elementwise("silu", "SiluBackward0", ("x",), _silu, {"x": _silu_dx}, dtype_rule="float")
SOFTPLUS = def_elementwise("softplus", "SoftplusBackward0", ("x",), _softplus,
                           {"x": _softplus_dx}, attrs=("beta", "threshold"), dtype_rule="float")
LEAKY_RELU = def_elementwise("leaky_relu", "LeakyReluBackward0", ("x",), _leaky_relu,
                             {"x": _leaky_relu_dx}, attrs=("negative_slope",), dtype_rule="float")


def _float_input(op, x):
    x = dispatch.tensor_operand(x, op)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}(): expected a floating point input, got "
                           f"{_reduce.torch_dtype_name(x.dtype)}")
    return x


def gelu(x, approximate="none"):
    """``x Phi(x)`` (``Phi`` the normal CDF, via erf), or with ``approximate='tanh'``
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``. Derivative (exact):
    ``Phi(x) + x phi(x)``. Records ``GeluBackward0``."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    return dispatch.elementwise(GELU if approximate == "none" else GELU_TANH,
                                _float_input("gelu", x))


def silu(x):
    """``x sigmoid(x)``; derivative ``s (1 + x (1 - s))`` with ``s = sigmoid(x)``.
    Records ``SiluBackward0``."""
    return dispatch.elementwise(SILU, _float_input("silu", x))


def softplus(x, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta x)) / beta``, or ``x`` where ``beta x > threshold``. Derivative
    ``sigmoid(beta x)`` (1 above the threshold). Records ``SoftplusBackward0``."""
    return dispatch.elementwise(SOFTPLUS, _float_input("softplus", x), beta=beta,
                                threshold=threshold)


def leaky_relu(x, negative_slope=0.01):
    """``x`` where ``x > 0`` else ``negative_slope x``; derivative 1 or ``negative_slope``.
    Records ``LeakyReluBackward0``."""
    return dispatch.elementwise(LEAKY_RELU, _float_input("leaky_relu", x),
                                negative_slope=negative_slope)


# --- linear: addmm ---------------------------------------------------------------------------
def _addmm_fwd(ctx, bias, m1, m2):
    if m1.dtype == m2.dtype and m1.dtype.kind == "f":
        out = np.matmul(m1, m2, out=pool.empty((m1.shape[0], m2.shape[1]), m1.dtype))
    else:
        out = np.matmul(m1, m2)
    out += bias
    return out


def _addmm_bwd(ctx, g, mat1, mat2):
    need_b, need_1, need_2 = ctx.needs_input_grad
    g1 = _linalg.matmul(g, _shape.t(mat2)) if need_1 else None
    # (g^T mat1)^T: for mat2 = weight.t() this hands TBackward0 a C-contiguous weight gradient
    g2 = _shape.t(_linalg.matmul(_shape.t(g), mat1)) if need_2 else None
    return (g if need_b else None), g1, g2


def _addmm_jvp(tangents, primals, outs):
    (tb, t1, t2), (_, m1, m2) = tangents, primals
    return sum_terms(tb, None if t1 is None else _linalg.matmul(t1, m2),
                     None if t2 is None else _linalg.matmul(m1, t2))


def _addmm_batch(args, batched):
    (b, m1, m2), (bb, b1, b2) = args, batched
    prod = (_linalg._matmul_batch([m1, m2], (b1, b2)) if b1 or b2
            else _linalg.matmul(m1, m2))
    return prod + (pad_batched(b, 2) if bb else b)


ADDMM = def_composite("addmm", "AddmmBackward0", ("bias", "mat1", "mat2"), _addmm_fwd,
                      _addmm_bwd, save=("mat1", "mat2"), jvp=_addmm_jvp, batch_rule=_addmm_batch,
                      cuda_forward=nn_cuda.addmm_forward, method=True, export=True)


@public(ADDMM)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002 - PyTorch's argument name
    """``beta input + alpha (mat1 @ mat2)`` (input broadcast over rows), ``torch.addmm``.
    Derivatives: ``beta g`` (summed to the input's shape), ``alpha g @ mat2^T`` and
    ``alpha mat1^T @ g``. Records ``AddmmBackward0`` (scaled operands when beta/alpha != 1)."""
    if beta != 1:
        input = input * beta
    if alpha != 1:
        mat1 = mat1 * alpha
    return dispatch.composite(ADDMM, input, mat1, mat2)


# --- normalisation ---------------------------------------------------------------------------
@upper.constant_maker
def _const(a, like, shape):
    """A float64 statistic array as a constant Tensor of ``like``'s dtype, reshaped. Only for
    eval mode's statistics, functions of the row's attributes (the running stats and eps): a
    compile trace records those attributes as constants of the forward, so these are constants
    of the same program (never batch statistics, which depend on ``x``)."""
    if dispatch.device_of(a) != "cpu":  # CUDA statistics stay on the device
        return wrap(a.astype(like.dtype.np).reshape(shape))
    return wrap(np.asarray(a, like.dtype.np).reshape(shape))


def _bn_fwd(ctx, x, weight, bias, running_mean, running_var, training, momentum, eps):
    N, C = x.shape[0], x.shape[1]
    x3 = np.ascontiguousarray(x).reshape(N, C, -1)
    if training:
        mean, invstd = np.empty(C), np.empty(C)
    else:
        mean = np.asarray(running_mean, np.float64)
        invstd = 1.0 / np.sqrt(np.asarray(running_var, np.float64) + eps)
    out, var = cpu_norm.batch_norm_forward(x3, weight, bias, mean, invstd, eps, training)
    if training and running_mean is not None:
        n = x3.shape[0] * x3.shape[2]
        running_mean *= 1.0 - momentum
        running_mean += (momentum * mean).astype(running_mean.dtype)
        running_var *= 1.0 - momentum
        running_var += (momentum * var * (n / max(n - 1, 1))).astype(running_var.dtype)
    ctx.mean, ctx.invstd = mean, invstd
    return out.reshape(x.shape)


def _bn_bwd(ctx, g, x, weight):
    nx, nw, nb = ctx.needs_input_grad
    if not is_grad_enabled() and dispatch.transform_hook is None and x.is_cuda:
        N, C = x.shape[0], x.shape[1]
        gx, gw, gb = dispatch.cuda_kernels("nn_norm").batch_norm_backward(
            x._data.reshape(N, C, -1), g._data.reshape(N, C, -1), weight._data, ctx.mean,
            ctx.invstd, ctx.training, nx)
        return (wrap(gx.reshape(x.shape)) if nx else None, wrap(gw) if nw else None,
                wrap(gb) if nb else None)
    if not is_grad_enabled() and dispatch.transform_hook is None:  # the fused kernel
        N, C = x.shape[0], x.shape[1]
        gx, gw, gb = cpu_norm.batch_norm_backward(
            np.ascontiguousarray(x._data).reshape(N, C, -1),
            np.ascontiguousarray(g._data).reshape(N, C, -1), weight._data, ctx.mean, ctx.invstd,
            ctx.training, nx)
        return (wrap(gx.reshape(x.shape)) if nx else None, wrap(gw) if nw else None,
                wrap(gb) if nb else None)
    # create_graph: the same math as Tensor ops (batch statistics recomputed from x)
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if ctx.training:
        xc = x - _reduce.mean(x, dims, keepdim=True)
        invstd = (_reduce.mean(xc * xc, dims, keepdim=True) + ctx.eps) ** -0.5
    else:
        xc = x - _const(ctx.mean, x, bshape)
        invstd = _const(ctx.invstd, x, bshape)
    xhat = xc * invstd
    gx = None
    if nx:
        scale = invstd if weight.numel() == 0 else _shape.reshape(weight, bshape) * invstd
        if ctx.training:
            gx = scale * (g - _reduce.mean(g, dims, keepdim=True)
                          - xhat * _reduce.mean(g * xhat, dims, keepdim=True))
        else:
            gx = g * scale
    return (gx, _reduce.sum(g * xhat, dims) if nw else None, _reduce.sum(g, dims) if nb else None)


def _norm_jvp(tx, tw, tb, x, w, dims, stats, wshape, eps):
    """The tangent of ``xhat * w + b`` (``xhat = (x - mean) rstd`` over ``dims``):
    ``w rstd (t - mean(t) - xhat mean(t xhat))`` (the last two terms only when the statistics
    come from ``x``), plus ``xhat t_w + t_b``. ``stats`` is None (batch statistics) or the
    constant ``(mean, rstd)``."""
    if stats is None:
        xc = x - _reduce.mean(x, dims, keepdim=True)
        rstd = (_reduce.mean(xc * xc, dims, keepdim=True) + eps) ** -0.5
    else:
        xc, rstd = x - stats[0], stats[1]
    xhat = xc * rstd
    out = None
    if tx is not None:
        t = tx * rstd if stats is not None else rstd * (
            tx - _reduce.mean(tx, dims, keepdim=True)
            - xhat * _reduce.mean(tx * xhat, dims, keepdim=True))
        out = t if w.numel() == 0 else t * _shape.reshape(w, wshape)
    return sum_terms(out, None if tw is None else xhat * _shape.reshape(tw, wshape),
                     None if tb is None else _shape.reshape(tb, wshape))


def _bn_jvp(tangents, primals, outs, running_mean, running_var, training, momentum, eps):
    (tx, tw, tb), (x, w, _) = tangents, primals
    bshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    stats = None
    if not training:
        stats = (_const(running_mean, x, bshape),
                 _const(1.0 / np.sqrt(np.asarray(running_var, np.float64) + eps), x, bshape))
    return _norm_jvp(tx, tw, tb, x, w, (0,) + tuple(range(2, x.ndim)), stats, bshape, eps)


# no batch rule: statistics over the batch (and running stats) do not batch; vmap raises
# naming batch_norm
BATCH_NORM = def_composite("batch_norm", "NativeBatchNormBackward0", ("x", "weight", "bias"),
                           _bn_fwd, _bn_bwd, attrs=("running_mean", "running_var", "training",
                                                    "momentum", "eps"), save=("x", "weight"),
                           jvp=_bn_jvp, cuda_forward=nn_cuda.batch_norm_forward)


def batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """Per-channel (dim 1) normalisation: ``(x - mean) / sqrt(var + eps) * weight + bias`` with
    the batch's mean and biased variance in training (the running stats, NumPy arrays updated
    in place, get ``(1 - momentum) r + momentum s`` with the unbiased variance), else the
    running stats. Derivative (training): ``w invstd (g - mean(g) - xhat mean(g xhat))``;
    ``sum(g xhat)`` and ``sum(g)`` for weight and bias. Records ``NativeBatchNormBackward0``."""
    return dispatch.composite(BATCH_NORM, x, weight if weight is not None else none_tensor(x),
                              bias if bias is not None else none_tensor(x),
                              running_mean=running_mean, running_var=running_var,
                              training=bool(training), momentum=float(momentum), eps=float(eps))


def _ln_fwd(ctx, x, weight, bias, normalized_shape, eps):
    D = math.prod(normalized_shape)
    out, ctx.mean, ctx.rstd = cpu_norm.layer_norm_forward(
        np.ascontiguousarray(x).reshape(-1, D), weight, bias, eps)
    return out.reshape(x.shape)


def _ln_bwd(ctx, g, x, weight):
    nx, nw, nb = ctx.needs_input_grad
    k = len(ctx.normalized_shape)
    if not is_grad_enabled() and dispatch.transform_hook is None:
        D = math.prod(ctx.normalized_shape)
        if x.is_cuda:
            gx, gw, gb = dispatch.cuda_kernels("nn_norm").layer_norm_backward(
                x._data.reshape(-1, D), g._data.reshape(-1, D), weight._data, ctx.mean,
                ctx.rstd, nx)
            return (wrap(gx.reshape(x.shape)) if nx else None,
                    wrap(gw.reshape(ctx.normalized_shape)) if nw else None,
                    wrap(gb.reshape(ctx.normalized_shape)) if nb else None)
        gx, gw, gb = cpu_norm.layer_norm_backward(
            np.ascontiguousarray(x._data).reshape(-1, D),
            np.ascontiguousarray(g._data).reshape(-1, D), weight._data, ctx.mean, ctx.rstd, nx)
        return (wrap(gx.reshape(x.shape)) if nx else None,
                wrap(gw.reshape(ctx.normalized_shape)) if nw else None,
                wrap(gb.reshape(ctx.normalized_shape)) if nb else None)
    dims = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    xc = x - _reduce.mean(x, dims, keepdim=True)
    rstd = (_reduce.mean(xc * xc, dims, keepdim=True) + ctx.eps) ** -0.5
    xhat = xc * rstd
    gx = None
    if nx:
        gw_hat = g if weight.numel() == 0 else g * weight
        gx = rstd * (gw_hat - _reduce.mean(gw_hat, dims, keepdim=True)
                     - xhat * _reduce.mean(gw_hat * xhat, dims, keepdim=True))
    gw = (_reduce.sum(g * xhat, lead) if lead else g * xhat) if nw else None
    gb = (_reduce.sum(g, lead) if lead else g) if nb else None
    return gx, gw, gb


def _ln_jvp(tangents, primals, outs, normalized_shape, eps):
    (tx, tw, tb), (x, w, _) = tangents, primals
    k = len(normalized_shape)
    return _norm_jvp(tx, tw, tb, x, w, tuple(range(x.ndim - k, x.ndim)), None,
                     tuple(normalized_shape), eps)


def _ln_batch(args, batched, normalized_shape, eps):
    (x, w, b), (_, bw, bb) = args, batched
    if not bw and not bb:  # normalised over trailing dims: the batch is one more leading dim
        return dispatch.composite(LAYER_NORM, x, w, b, normalized_shape=normalized_shape, eps=eps)
    none = none_tensor(x)
    out = dispatch.composite(LAYER_NORM, x, none, none, normalized_shape=normalized_shape,
                             eps=eps)
    nd = out.ndim - 1
    if w.numel():
        out = out * (pad_batched(w, nd) if bw else w)
    if b.numel():
        out = out + (pad_batched(b, nd) if bb else b)
    return out


LAYER_NORM = def_composite("layer_norm", "NativeLayerNormBackward0", ("x", "weight", "bias"),
                           _ln_fwd, _ln_bwd, attrs=("normalized_shape", "eps"),
                           save=("x", "weight"), jvp=_ln_jvp, batch_rule=_ln_batch,
                           cuda_forward=nn_cuda.layer_norm_forward)


def layer_norm(x, normalized_shape, weight, bias, eps):
    """Normalise over the trailing ``normalized_shape`` dims: ``(x - mean) / sqrt(var + eps)
    * weight + bias`` (biased variance). Derivative per row (``g' = g w``):
    ``rstd (g' - mean(g') - xhat mean(g' xhat))``; weight ``sum g xhat``, bias ``sum g``.
    Records ``NativeLayerNormBackward0``."""
    return dispatch.composite(LAYER_NORM, x, weight if weight is not None else none_tensor(x),
                              bias if bias is not None else none_tensor(x),
                              normalized_shape=tuple(normalized_shape), eps=float(eps))


# --- embedding -------------------------------------------------------------------------------
def _freq_scale(indices, num_weights):
    counts = np.bincount(indices.reshape(-1), minlength=num_weights)
    return 1.0 / np.maximum(counts, 1)


def _emb_fwd(ctx, weight, indices, padding_idx, scale_grad_by_freq):
    ctx.num_weights = weight.shape[0]
    out = pool.empty(indices.shape + weight.shape[1:], weight.dtype)
    np.take(weight, indices.reshape(-1), axis=0, out=out.reshape((-1,) + weight.shape[1:]))
    return out


def _emb_attrs(ctx):
    return {k: getattr(ctx, k) for k in ("indices", "num_weights", "padding_idx",
                                         "scale_grad_by_freq")}


def _emb_bwd(ctx, g):
    return (dispatch.composite(EMBEDDING_BWD, g, **_emb_attrs(ctx)),)


def _emb_bwd_fwd(ctx, g, indices, num_weights, padding_idx, scale_grad_by_freq):
    D = g.shape[-1]
    gw = cpu_norm.embedding_backward(np.ascontiguousarray(g).reshape(-1, D), indices,
                                   num_weights, padding_idx)
    if scale_grad_by_freq:
        gw *= _freq_scale(indices, num_weights)[:, None].astype(gw.dtype)
    return gw


def _emb_gather_fwd(ctx, gg, indices, num_weights, padding_idx, scale_grad_by_freq):
    idx = indices.reshape(-1)
    out = np.take(gg, idx, axis=0)
    if padding_idx is not None:
        out[idx == padding_idx] = 0
    if scale_grad_by_freq:
        out *= _freq_scale(indices, num_weights)[idx][:, None].astype(out.dtype)
    return out.reshape(indices.shape + gg.shape[1:])


# Batch rules: a batched table (B, V, D) is read as one (B*V, D) table with the indices
# offset by b*V; the padding row is handled per example.
def _offset(indices, size, num_weights):
    return (np.arange(size).reshape((size,) + (1,) * indices.ndim) * num_weights
            + indices[None])


def _emb_batch(args, batched, indices, padding_idx, scale_grad_by_freq):
    w = args[0]
    if padding_idx is not None:
        raise NotImplementedError("vmap: embedding with a batched weight and padding_idx has no "
                                  "batching rule (embedding)")
    size, v = w.shape[0], w.shape[1]
    flat = _shape.reshape(w, (size * v,) + tuple(w.shape[2:]))
    return dispatch.composite(EMBEDDING, flat, indices=_offset(indices, size, v),
                              padding_idx=None, scale_grad_by_freq=scale_grad_by_freq)


def _zero_padding(t, mask):
    return binary.where(dispatch.Tensor._make(mask), 0.0, t)


def _emb_bwd_batch(args, batched, indices, num_weights, padding_idx, scale_grad_by_freq):
    g = args[0]
    size = g.shape[0]
    out = dispatch.composite(EMBEDDING_BWD, g, indices=_offset(indices, size, num_weights),
                             num_weights=size * num_weights, padding_idx=None,
                             scale_grad_by_freq=scale_grad_by_freq)
    out = _shape.reshape(out, (size, num_weights) + tuple(out.shape[1:]))
    if padding_idx is not None:
        mask = np.zeros((1, num_weights) + (1,) * (out.ndim - 2), bool)
        mask[0, padding_idx] = True
        out = _zero_padding(out, mask)
    return out


def _emb_gather_batch(args, batched, indices, num_weights, padding_idx, scale_grad_by_freq):
    gg = args[0]
    size = gg.shape[0]
    flat = _shape.reshape(gg, (size * num_weights,) + tuple(gg.shape[2:]))
    out = dispatch.composite(EMBEDDING_GATHER, flat, indices=_offset(indices, size, num_weights),
                             num_weights=size * num_weights, padding_idx=None,
                             scale_grad_by_freq=scale_grad_by_freq)
    if padding_idx is not None:
        mask = (indices == padding_idx).reshape((1,) + indices.shape + (1,) * (gg.ndim - 2))
        out = _zero_padding(out, mask)
    return out


EMBEDDING = def_composite("embedding", "EmbeddingBackward0", ("weight",), _emb_fwd, _emb_bwd,
                          attrs=("indices", "padding_idx", "scale_grad_by_freq"), jvp=LINEAR,
                          batch_rule=_emb_batch, cuda_forward=nn_cuda.embedding_forward)
EMBEDDING_BWD = def_composite("embedding_backward", "EmbeddingBackwardBackward0", ("g",),
                              _emb_bwd_fwd, lambda ctx, gg: (dispatch.composite(
                                  EMBEDDING_GATHER, gg, **_emb_attrs(ctx)),),
                              attrs=("indices", "num_weights", "padding_idx",
                                     "scale_grad_by_freq"), jvp=LINEAR,
                              batch_rule=_emb_bwd_batch,
                              cuda_forward=nn_cuda.embedding_backward_forward)
EMBEDDING_GATHER = def_composite("embedding_gather", "EmbeddingBackward0", ("gg",),
                                 _emb_gather_fwd, _emb_bwd, attrs=("indices", "num_weights",
                                                                   "padding_idx",
                                                                   "scale_grad_by_freq"),
                                 jvp=LINEAR, batch_rule=_emb_gather_batch,
                                 cuda_forward=nn_cuda.embedding_gather_forward)


def embedding(weight, indices, padding_idx, scale_grad_by_freq):
    """Rows of ``weight`` at int64 ``indices``: ``out[..., :] = weight[indices[...], :]``.
    Derivative: the gradient rows summed into their weight rows (none into ``padding_idx``;
    divided by the index's count with ``scale_grad_by_freq``). Records ``EmbeddingBackward0``."""
    return dispatch.composite(EMBEDDING, weight, indices=indices, padding_idx=padding_idx,
                              scale_grad_by_freq=bool(scale_grad_by_freq))
