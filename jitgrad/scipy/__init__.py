"""``jitgrad.scipy``: differentiable subsets of ``scipy.special``, ``scipy.stats`` and
``scipy.linalg``, and ``scipy.optimize.minimize`` with exact gradients (see docs/numpy.md)."""
from . import linalg, optimize, special, stats  # noqa: F401

__all__ = ["linalg", "optimize", "special", "stats"]
