"""Fused optimizer updates on the CPU: one parallel, vectorised pass over a flat parameter and
its state buffers, applying the formulas of ``device.optim_updates`` (shared with CUDA)."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import optim_updates
from .nn import PAR_MIN_OPTIM, _get, _par

# inline='always': the loop body must be one straight block for LLVM to vectorise it
_jit = njit(nogil=True, error_model="numpy", inline="always")
_sgd_at, _adam_at = _jit(optim_updates.sgd_at), _jit(optim_updates.adam_at)
_rmsprop_at, _adagrad_at = _jit(optim_updates.rmsprop_at), _jit(optim_updates.adagrad_at)


def _sgd(p, g, buf, lr, sgn, wd, a, c, nest, mom_n, momentum):
    for i in prange(p.size):
        _sgd_at(i, p, g, buf, lr, sgn, wd, a, c, nest, mom_n, momentum)


def _adam(p, g, m, v, vmax, sgn, decay, l2, omb1, b2, omb2, step, inv_bc2s, eps, amsgrad):
    for i in prange(p.size):
        _adam_at(i, p, g, m, v, vmax, sgn, decay, l2, omb1, b2, omb2, step, inv_bc2s, eps,
                 amsgrad)


def _rmsprop(p, g, sq, gavg, buf, lr, sgn, wd, alpha, oma, eps, momentum, centered):
    for i in prange(p.size):
        _rmsprop_at(i, p, g, sq, gavg, buf, lr, sgn, wd, alpha, oma, eps, momentum, centered)


def _adagrad(p, g, acc, clr, sgn, wd, eps):
    for i in prange(p.size):
        _adagrad_at(i, p, g, acc, clr, sgn, wd, eps)


_LOOPS = {"sgd": _sgd, "adam": _adam, "rmsprop": _rmsprop, "adagrad": _adagrad}


def optimizer_step(kind: str, p: np.ndarray, g: np.ndarray, *state_and_scalars):
    """Run the fused ``kind`` update in place on the flat C-contiguous parameter ``p`` with its
    gradient ``g`` (same dtype/shape). Float scalars are cast to ``p``'s dtype here."""
    args = optim_updates.scalar_args(kind, p.dtype.type, state_and_scalars)
    _get(_LOOPS[kind], _par(p.size, 2, PAR_MIN_OPTIM))(p, g, *args)
