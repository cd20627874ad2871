"""``numpy.linalg`` functions composed of the covered ones (issue 19): ``cond``, ``tensorinv``,
``tensorsolve``. Their gradients are those of ``svd``/``norm``/``inv``/``solve`` (reshapes
and transposes around them)."""
from __future__ import annotations

import math as _math

import numpy as _np

__all__ = ["cond", "tensorinv", "tensorsolve"]


def _ns():
    import jitgrad.numpy as jnp

    return jnp


def cond(x, p=None):
    """The condition number: ``s_max / s_min`` of the singular values for ``p`` None or 2
    (``s_min / s_max`` for -2; gradient through ``svdvals``, distinct singular values needed),
    else ``norm(x, p) norm(inv(x), p)`` for ``'fro'``, ``'nuc'``, +-1, +-inf (square ``x``)."""
    jnp = _ns()
    x = jnp._t(x)
    if x.ndim < 2:
        raise _np.linalg.LinAlgError(f"{x.ndim}-dimensional array given. Array must be at "
                                     "least two-dimensional")
    if p is None or p in (2, -2):
        s = jnp.linalg.svd(x, compute_uv=False)
        hi, lo = jnp.max(s, axis=-1), jnp.min(s, axis=-1)
        return lo / hi if p == -2 else hi / lo
    if x.shape[-1] != x.shape[-2]:
        raise _np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return (jnp.linalg.norm(x, p, axis=(-2, -1))
            * jnp.linalg.norm(jnp.linalg.inv(x), p, axis=(-2, -1)))


def tensorinv(a, ind=2):
    """The inverse under ``tensordot(., ., ind)``: ``a`` reshaped to a square matrix
    (``prod(shape[:ind])`` rows), inverted, reshaped to ``shape[ind:] + shape[:ind]``;
    gradient through ``inv``."""
    jnp = _ns()
    a = jnp._t(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    old = tuple(a.shape)
    rows = _math.prod(old[:ind])
    inv = jnp.linalg.inv(jnp.reshape(a, (rows, -1)))
    return jnp.reshape(inv, old[ind:] + old[:ind])


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) = b`` (NumPy's algorithm: ``axes`` moved last,
    ``a`` reshaped to a square matrix, ``solve``); gradients through ``solve``."""
    jnp = _ns()
    a, b = jnp._t(a), jnp._t(b)
    if axes is not None:
        allaxes = list(range(a.ndim))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(a.ndim, k)
        a = jnp.transpose(a, allaxes)
    oldshape = tuple(a.shape[-(a.ndim - b.ndim):])
    prod = _math.prod(oldshape)
    if _math.prod(a.shape) != prod ** 2:
        raise _np.linalg.LinAlgError("Input arrays must satisfy the requirement "
                                     "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = jnp.linalg.solve(jnp.reshape(a, (prod, prod)), jnp.reshape(b, (prod,)))
    return jnp.reshape(x, oldshape)
