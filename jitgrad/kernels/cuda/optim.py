"""Fused optimizer updates on CUDA (SGD, Adam/AdamW, RMSprop, Adagrad): one grid-stride kernel
per parameter updating it and its state buffers in place on the device, with the formulas of
``device.optim_updates`` (the ones the CPU loops use) compiled as device functions."""
from __future__ import annotations

from numba import cuda

from .. import optim_updates
from .nn import launch


_sgd_dev = cuda.jit(device=True)(optim_updates.sgd_at)
_adam_dev = cuda.jit(device=True)(optim_updates.adam_at)
_rmsprop_dev = cuda.jit(device=True)(optim_updates.rmsprop_at)
_adagrad_dev = cuda.jit(device=True)(optim_updates.adagrad_at)


@cuda.jit
def _sgd_k(p, g, buf, lr, sgn, wd, a, c, nest, mom_n, momentum):
    i = cuda.grid(1)
    while i < p.size:
        _sgd_dev(i, p, g, buf, lr, sgn, wd, a, c, nest, mom_n, momentum)
        i += cuda.gridsize(1)


@cuda.jit
def _adam_k(p, g, m, v, vmax, sgn, decay, l2, omb1, b2, omb2, step, inv_bc2s, eps, amsgrad):
    i = cuda.grid(1)
    while i < p.size:
        _adam_dev(i, p, g, m, v, vmax, sgn, decay, l2, omb1, b2, omb2, step, inv_bc2s, eps,
                  amsgrad)
        i += cuda.gridsize(1)


@cuda.jit
def _rmsprop_k(p, g, sq, gavg, buf, lr, sgn, wd, alpha, oma, eps, momentum, centered):
    i = cuda.grid(1)
    while i < p.size:
        _rmsprop_dev(i, p, g, sq, gavg, buf, lr, sgn, wd, alpha, oma, eps, momentum, centered)
        i += cuda.gridsize(1)


@cuda.jit
def _adagrad_k(p, g, acc, clr, sgn, wd, eps):
    i = cuda.grid(1)
    while i < p.size:
        _adagrad_dev(i, p, g, acc, clr, sgn, wd, eps)
        i += cuda.gridsize(1)


def _buf(a):
    """The 1-D device buffer of a flat contiguous CudaArray (an empty slice when empty)."""
    return a.buffer[a.offset:a.offset + a.size]


def optimizer_step(kind: str, p, g, *state_and_scalars):
    """The fused ``kind`` update (``cpu_optim.optimizer_step``'s arguments) of the flat contiguous
    CUDA parameter ``p`` with its gradient ``g``; float scalars are cast to p's dtype."""
    args = [_buf(a) if hasattr(a, "buffer") else a
            for a in optim_updates.scalar_args(kind, p.dtype.type, state_and_scalars)]
    kern = {"sgd": _sgd_k, "adam": _adam_k, "rmsprop": _rmsprop_k, "adagrad": _adagrad_k}[kind]
    launch(kern, p.size, _buf(p), _buf(g), *args)
