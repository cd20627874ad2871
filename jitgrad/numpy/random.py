"""``jitgrad.numpy.random``: NumPy's random sampling returning constant Tensors (float64 by
default, as NumPy). ``seed(n)`` / ``default_rng(n)`` make runs reproducible."""
from __future__ import annotations

import numpy as _np

from ..tensor import Tensor

__all__ = ["seed", "default_rng", "Generator", "rand", "randn", "random", "uniform", "normal",
           "standard_normal", "randint", "choice", "permutation", "shuffle_indices"]

_state = _np.random.default_rng()


def seed(n=None):
    """Reseed the module-level generator."""
    global _state
    _state = _np.random.default_rng(n)


class Generator:
    """A seeded generator (``numpy.random.Generator``) whose draws are Tensors."""

    def __init__(self, seed=None):
        self._rng = seed._rng if isinstance(seed, Generator) else _np.random.default_rng(seed)

    def __getattr__(self, name):
        fn = getattr(self._rng, name)
        if not callable(fn):
            return fn

        def draw(*args, **kwargs):
            r = fn(*args, **kwargs)
            return Tensor._make(_np.asarray(r)) if isinstance(r, (_np.ndarray, _np.generic)) else r

        draw.__name__ = name
        return draw


def default_rng(seed=None):
    """A new ``Generator`` seeded with ``seed``."""
    return Generator(seed)


def _t(r):
    return Tensor._make(_np.asarray(r))


def rand(*shape):
    """Uniform [0, 1) of ``shape``."""
    return _t(_state.random(shape))


def randn(*shape):
    """Standard normal of ``shape``."""
    return _t(_state.standard_normal(shape))


def random(size=None):
    """Uniform [0, 1)."""
    return _t(_state.random(size))


def uniform(low=0.0, high=1.0, size=None):
    """Uniform [low, high)."""
    return _t(_state.uniform(low, high, size))


def normal(loc=0.0, scale=1.0, size=None):
    """Normal(loc, scale)."""
    return _t(_state.normal(loc, scale, size))


def standard_normal(size=None):
    """Standard normal."""
    return _t(_state.standard_normal(size))


def randint(low, high=None, size=None):
    """Integers in [low, high)."""
    return _t(_state.integers(low, high, size))


def choice(a, size=None, replace=True, p=None):
    """Random sample from ``a`` (an int n means ``arange(n)``)."""
    return _t(_state.choice(a, size, replace, p))


def permutation(x):
    """A permuted ``arange(x)`` (int) or a permuted copy of ``x`` along axis 0."""
    if isinstance(x, Tensor):
        return x[_state.permutation(x.shape[0])]
    return _t(_state.permutation(x))


def shuffle_indices(n):
    """A random permutation of ``range(n)`` as an int64 Tensor."""
    return _t(_state.permutation(n))
