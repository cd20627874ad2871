"""CUDA twins of the fused optimizer updates of ``device.cpu_nn`` (SGD, Adam/AdamW, RMSprop,
Adagrad): one grid-stride kernel per parameter updating it and its state buffers in place on
the device, with the same formulas (Note [branch-free updates] in ``cpu_nn``) and the scalars
cast to the parameter's dtype on the host (float32 math stays float32)."""
from __future__ import annotations

import math

from numba import cuda

from .cuda_nn import launch


@cuda.jit
def _sgd_k(p, g, buf, lr, sgn, wd, a, c, nest, mom_n, momentum):
    """``d = sgn g + wd p``; momentum: ``b = a b + c d`` (a = 0, c = 1 on the first step),
    ``d = d + mom_n b`` (Nesterov) or ``b``; ``p -= lr d``."""
    i = cuda.grid(1)
    while i < p.size:
        d = sgn * g[i]
        if wd != 0:  # not + 0 * p: an inf parameter must not turn the step nan
            d = d + wd * p[i]
        if momentum:
            bv = a * buf[i] + c * d
            buf[i] = bv
            d = d + mom_n * bv if nest else bv
        p[i] = p[i] - lr * d
        i += cuda.gridsize(1)


@cuda.jit
def _adam_k(p, g, m, v, vmax, sgn, decay, l2, omb1, b2, omb2, step, inv_bc2s, eps, amsgrad):
    """``p *= decay`` (AdamW); ``d = sgn g + l2 p``; ``m += (1 - b1)(d - m)``;
    ``v = b2 v + (1 - b2) d^2``; ``p -= step m / (sqrt(v or vmax) inv_bc2s + eps)`` with
    ``step = lr / (1 - b1^t)`` (``omb1 = 1 - b1``, ``omb2 = 1 - b2`` in p's dtype)."""
    i = cuda.grid(1)
    while i < p.size:
        pi = p[i] * decay
        d = sgn * g[i]
        if l2 != 0:
            d = d + l2 * pi
        mi = m[i] + omb1 * (d - m[i])
        vi = b2 * v[i] + omb2 * d * d
        m[i] = mi
        v[i] = vi
        if amsgrad:
            vm = max(vmax[i], vi)
            vmax[i] = vm
            vi = vm
        p[i] = pi - step * mi / (math.sqrt(vi) * inv_bc2s + eps)
        i += cuda.gridsize(1)


@cuda.jit
def _rmsprop_k(p, g, sq, gavg, buf, lr, sgn, wd, alpha, oma, eps, momentum, centered):
    """``s = alpha s + (1 - alpha) d^2`` (minus the squared running mean of d when
    centered); ``step = d / (sqrt(s) + eps)``, through the momentum buffer; ``p -= lr step``."""
    i = cuda.grid(1)
    while i < p.size:
        d = sgn * g[i]
        if wd != 0:
            d = d + wd * p[i]
        s = alpha * sq[i] + oma * d * d
        sq[i] = s
        if centered:
            ga = alpha * gavg[i] + oma * d
            gavg[i] = ga
            s = s - ga * ga
        st = d / (math.sqrt(s) + eps)
        if momentum != 0:
            bv = momentum * buf[i] + st
            buf[i] = bv
            st = bv
        p[i] = p[i] - lr * st
        i += cuda.gridsize(1)


@cuda.jit
def _adagrad_k(p, g, acc, clr, sgn, wd, eps):
    """``s += d^2``; ``p -= clr d / (sqrt(s) + eps)``."""
    i = cuda.grid(1)
    while i < p.size:
        d = sgn * g[i]
        if wd != 0:
            d = d + wd * p[i]
        s = acc[i] + d * d
        acc[i] = s
        p[i] = p[i] - clr * d / (math.sqrt(s) + eps)
        i += cuda.gridsize(1)


def _buf(a):
    """The 1-D device buffer of a flat contiguous CudaArray (an empty slice when empty)."""
    return a.buffer[a.offset:a.offset + a.size]


def optimizer_step(kind: str, p, g, *state_and_scalars):
    """The fused ``kind`` update (``cpu_nn.optimizer_step``'s arguments) of the flat contiguous
    CUDA parameter ``p`` with its gradient ``g``; float scalars are cast to p's dtype."""
    t = p.dtype.type
    args = [t(a) if isinstance(a, float) else _buf(a) if hasattr(a, "buffer") else a
            for a in state_and_scalars]
    pb, gb = _buf(p), _buf(g)
    if kind == "adam":  # 1 - beta in p's dtype, as the CPU kernel's (one - b1)
        args = args[:6] + [t(1) - args[6], args[7], t(1) - args[7]] + args[8:]
        kern = _adam_k
    elif kind == "rmsprop":
        args = args[:7] + [t(1) - args[6]] + args[7:]
        kern = _rmsprop_k
    else:
        kern = {"sgd": _sgd_k, "adagrad": _adagrad_k}[kind]
    launch(kern, p.size, pb, gb, *args)

