"""The optimizer update formulas, written once for the CPU and CUDA kernels.

Each ``*_at(i, p, g, ...)`` updates element ``i`` of a flat parameter ``p`` (and its state
buffers) in place. ``kernels.cpu.optim`` compiles them with Numba into one fused, parallel,
vectorised loop; ``kernels.cuda.optim`` into device functions called from grid-stride kernels.
Plain Python here: this module imports no compiler.

Note [branch-free updates]: hyper-parameter switches (maximize, weight decay, decoupled decay,
first step, Nesterov) enter as precomputed factors, not branches: with four invariant branches
in the loop the float32 Adam update did not vectorise, and ran many times slower (the
measurement: docs/cuda.md, "Measurements behind the device code"). One or two invariant
branches remain (weight decay: adding ``0 * p`` would turn an inf parameter into nan; amsgrad;
centered/momentum), which LLVM still vectorises. ``1 - beta`` factors are computed by the
caller in the parameter's dtype, so float32 math stays float32 and both devices round alike.
"""
import math


def sgd_at(i, p, g, buf, lr, sgn, wd, a, c, nest, mom_n, momentum):
    """``d = sgn g + wd p``; momentum: ``b = a b + c d`` (a = 0, c = 1 on the first step),
    ``d = d + mom_n b`` (Nesterov) or ``b``; ``p -= lr d``."""
    d = sgn * g[i]
    if wd != 0:  # a branch, not + 0 * p: an inf parameter must not turn the step nan
        d = d + wd * p[i]
    if momentum:
        bv = a * buf[i] + c * d
        buf[i] = bv
        d = d + mom_n * bv if nest else bv
    p[i] = p[i] - lr * d


def adam_at(i, p, g, m, v, vmax, sgn, decay, l2, omb1, b2, omb2, step, inv_bc2s, eps, amsgrad):
    """``p *= decay`` (AdamW); ``d = sgn g + l2 p``; ``m += (1 - b1)(d - m)`` (a lerp, as
    PyTorch); ``v = b2 v + (1 - b2) d^2``; ``p -= step m / (sqrt(v or vmax) inv_bc2s + eps)``
    with ``step = lr / (1 - b1^t)``; ``omb1 = 1 - b1``, ``omb2 = 1 - b2``."""
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


def rmsprop_at(i, p, g, sq, gavg, buf, lr, sgn, wd, alpha, oma, eps, momentum, centered):
    """``s = alpha s + (1 - alpha) d^2`` (minus the squared running mean of ``d`` when
    centered); ``step = d / (sqrt(s) + eps)``, through the momentum buffer; ``p -= lr step``;
    ``oma = 1 - alpha``."""
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


def adagrad_at(i, p, g, acc, clr, sgn, wd, eps):
    """``s += d^2``; ``p -= clr d / (sqrt(s) + eps)``."""
    d = sgn * g[i]
    if wd != 0:
        d = d + wd * p[i]
    s = acc[i] + d * d
    acc[i] = s
    p[i] = p[i] - clr * d / (math.sqrt(s) + eps)


UPDATES = {"sgd": sgd_at, "adam": adam_at, "rmsprop": rmsprop_at, "adagrad": adagrad_at}


def scalar_args(kind: str, t, state_and_scalars) -> list:
    """``optimizer_step``'s trailing arguments for the ``*_at`` functions: Python floats cast
    to the parameter's scalar type ``t``, and ``1 - beta``/``1 - alpha`` inserted for Adam
    and RMSprop (computed in ``t``)."""
    args = [t(a) if isinstance(a, float) else a for a in state_and_scalars]
    if kind == "adam":  # (m, v, vmax, sgn, decay, l2, b1, b2, ...) -> (..., 1-b1, b2, 1-b2, ...)
        args = args[:6] + [t(1) - args[6], args[7], t(1) - args[7]] + args[8:]
    elif kind == "rmsprop":  # (sq, gavg, buf, lr, sgn, wd, alpha, ...) -> (..., alpha, 1-alpha)
        args = args[:7] + [t(1) - args[6]] + args[7:]
    return args
