"""What the distribution modules of ``jitgrad.scipy.stats`` share: operand conversion, the
``(x - loc) / scale`` standardisation, and the module type that makes a distribution module
callable the way SciPy's distribution objects are (``norm(loc, scale).logpdf(x)``, a frozen
distribution) while it stays a real module (``import jitgrad.scipy.stats.norm as norm``, as
HIPS autograd code writes it)."""
from __future__ import annotations

import sys
import types

import numpy as _np

from ...ops import binary as _binary_ops
from ...ops import unary as _unary_ops
from ...ops.core import upper as _upper
from ...tensor import Tensor


def tensor(x):
    """``x`` as a Tensor (float64 for Python and integer inputs; Tensors as they are)."""
    return x if isinstance(x, Tensor) else _constant(x)


@_upper.constant_maker
def _constant(x):
    """A constant float Tensor of the Tensor-free data ``x``."""
    x = _np.asarray(x)
    return Tensor._make(_np.asarray(x, dtype=_np.result_type(x, 0.0)))


def standardize(x, loc, scale):
    """``(z, scale)`` with ``z = (x - loc) / scale`` and ``scale`` a Tensor."""
    scale = tensor(scale)
    return (tensor(x) - loc) / scale, scale


def constant(x):
    """The values of ``x`` as a float64 ndarray (for parameters that select, not weigh)."""
    return _np.asarray(x._host("jitgrad.scipy.stats") if isinstance(x, Tensor) else x,
                       dtype=_np.float64)


def log(x):
    return _unary_ops.log(x)


def where(cond, a, b):
    return _binary_ops.where(cond, a, b)


class Frozen:
    """A distribution with its parameters bound: ``norm(1.0, 2.0).logpdf(x)`` is
    ``norm.logpdf(x, 1.0, 2.0)``; parameters may be Tensors (gradients flow to them)."""

    def __init__(self, module, args, kwargs):
        self._module, self._args, self._kwargs = module, args, kwargs

    def __getattr__(self, name):
        fn = getattr(self._module, name)
        if not callable(fn) or name.startswith("_"):
            raise AttributeError(name)
        params = getattr(fn, "_params_only", False)

        def bound(*x, **kwargs):
            args = self._args if params else (*x, *self._args)
            return fn(*args, **{**self._kwargs, **kwargs})
        bound.__name__ = name
        bound.__doc__ = fn.__doc__
        return bound

    def __repr__(self):
        return f"<frozen {self._module.__name__} {self._args} {self._kwargs}>"


def params_only(fn):
    """Mark a module function that takes only the parameters (``mean``, ``entropy``): a frozen
    distribution calls it without an ``x``."""
    fn._params_only = True
    return fn


class DistributionModule(types.ModuleType):
    """A module that, called, freezes its distribution (``Frozen``)."""

    def __call__(self, *args, **kwargs):
        return Frozen(self, args, kwargs)


def make_distribution(name):
    """Make the module ``name`` callable (``DistributionModule``); call at its end."""
    sys.modules[name].__class__ = DistributionModule


def missing(module, name):
    """The ``AttributeError`` for a SciPy method this module does not cover."""
    import scipy.stats

    short = module.rsplit(".", 1)[-1]
    if hasattr(getattr(scipy.stats, short, None), name):
        return AttributeError(f"{module} has no '{name}': scipy.stats.{short}.{name} is not "
                              "covered (no derivative rule); see docs/scipy.md")
    return AttributeError(f"module '{module}' has no attribute '{name}'")
