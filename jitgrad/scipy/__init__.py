"""``jitgrad.scipy``: differentiable subsets of ``scipy.special``, ``scipy.stats`` and
``scipy.linalg``, and ``scipy.optimize.minimize`` with exact gradients (see docs/numpy.md)."""
from . import integrate, linalg, optimize, signal, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]
