"""``jitgrad.scipy``: differentiable subsets of ``scipy.special``, ``scipy.stats``,
``scipy.signal`` and ``scipy.linalg``, ``scipy.integrate.odeint`` with adjoint gradients, and
``scipy.optimize.minimize`` with exact gradients (see docs/scipy.md)."""
from . import integrate, linalg, optimize, signal, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]
