"""HIPS autograd's stochastic optimizers (``autograd.misc.optimizers``): ``sgd``, ``rmsprop``,
``adam``, update for update the same.

Each takes ``grad(params, i)`` (the gradient at iteration ``i``, shaped like ``params``), the
initial ``params`` (an array, or nested lists/tuples/dicts of arrays: they are flattened into
one vector with ``jitgrad.numpy.functional.flatten`` and the result unflattened), an optional
``callback(params, i, g)`` called before each update, ``num_iters`` and ``step_size``, and
returns the final parameters. With ``g_i = grad(x_i, i)`` and ``t = i + 1``:

- ``sgd`` (momentum ``mass``): ``v <- mass v - (1 - mass) g_i``, ``x <- x + step_size v``,
  from ``v = 0``.
- ``rmsprop``: ``r <- gamma r + (1 - gamma) g_i^2``, ``x <- x - step_size g_i / (sqrt(r) +
  eps)``, from ``r = 1`` (HIPS's start, not 0).
- ``adam``: ``m <- b1 m + (1 - b1) g_i``, ``v <- b2 v + (1 - b2) g_i^2``, ``mhat = m / (1 -
  b1^t)``, ``vhat = v / (1 - b2^t)``, ``x <- x - step_size mhat / (sqrt(vhat) + eps)``, from
  ``m = v = 0``.

The updates are written with arithmetic operators, so a traced ``params`` (a Tensor that
requires grad, or inside an operator of ``jitgrad.numpy.functional``) gives a traced result:
the optimization itself can be differentiated (hypergradients), as in HIPS. PyTorch-style
optimizers are in ``jitgrad.optim``.
"""
from __future__ import annotations

import functools

import numpy as _np

from ..tensor import Tensor
from . import _elementwise
from ._misc import flatten

__all__ = ["sgd", "rmsprop", "adam"]


def _sqrt(x):
    if isinstance(x, Tensor):
        return _elementwise.sqrt(x)
    return _np.sqrt(x)


def _flat(tree):
    vector, _ = flatten(tree)
    return vector if isinstance(vector, Tensor) else _np.asarray(vector, dtype=_np.float64)


def unflatten_optimizer(optimize):
    """``optimize(grad, x, callback, ...)`` on one flat vector, made to take and return any
    container of arrays (the gradient and the callback's arguments in the same structure)."""
    @functools.wraps(optimize)
    def _optimize(grad, x0, callback=None, *args, **kwargs):
        x0_flat, unflatten = flatten(x0)
        if not isinstance(x0_flat, Tensor):
            x0_flat = _np.asarray(x0_flat, dtype=_np.float64)

        def flat_grad(x, i):
            return _flat(grad(unflatten(x), i))

        def flat_callback(x, i, g):
            return callback(unflatten(x), i, unflatten(g))

        return unflatten(optimize(flat_grad, x0_flat, flat_callback if callback else None,
                                  *args, **kwargs))

    return _optimize


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum: ``v <- mass v - (1 - mass) g``,
    ``x <- x + step_size v`` (``grad(x, i)``, ``callback(x, i, g)``)."""
    velocity = _np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """Root-mean-square propagation: ``r <- gamma r + (1 - gamma) g^2`` (from ``r = 1``),
    ``x <- x - step_size g / (sqrt(r) + eps)``."""
    avg_sq_grad = _np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (_sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10**-8):
    """Adam (Kingma & Ba, arXiv:1412.6980): first and second moment estimates ``m``, ``v``
    with bias corrections ``1 - b^t``, ``x <- x - step_size mhat / (sqrt(vhat) + eps)``."""
    m = _np.zeros(len(x))
    v = _np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g**2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (_sqrt(vhat) + eps)
    return x
