"""NumPy's ndarray methods and operators on ``Tensor`` (issue 19), where they do not clash with
PyTorch's: ``%``, ``//``, ``divmod`` (and their reflected forms), ``ravel``, ``astype``, ``fill``,
``copy``, ``dot``, ``itemsize``, ``nbytes``, ``item(*index)``, ``round(decimals)`` positional,
``argsort(axis, kind)``, and ``flatten(order)`` (a string first argument). ``cumsum``/``cumprod``
take NumPy's ``axis=`` (and scan the flattened tensor without one) in their rows' functions
(``ops/npfuncs.py``).

Each is the ``jitgrad.numpy`` function of the same name (imported on first call: ``jitgrad.numpy``
sits above ``tensor``), so the gradient is that function's: ``x % y`` is the ``remainder`` row
(``g`` for ``x``, ``-g floor(x / y)`` for ``y``), ``x // y`` is ``floor(x / y)`` (zero gradient;
integers stay integers), ``divmod(x, y)`` is the pair.

Clashes, where PyTorch's meaning is kept (docs/numpy.md, "Tensor methods"): ``x.size`` is a
method (``x.size()``; NumPy's attribute is ``x.numel()``), ``x.nonzero()`` is the
``(N, ndim)`` index tensor (NumPy's tuple: ``x.nonzero(as_tuple=True)`` or
``jitgrad.numpy.nonzero(x)``), ``x.argsort(axis, True)`` is descending (a string second argument
is NumPy's ``kind``), ``x.flatten(start_dim, end_dim)`` takes PyTorch's dims, ``x.repeat``,
``x.transpose`` and the reductions (``sum``, ``max``...) keep PyTorch's signatures (``dim``).
"""
from __future__ import annotations

import numpy as np

from .ops.core import methods


def _jnp():
    import jitgrad.numpy as jnp  # (above tensor: imported on first use)

    return jnp


def __mod__(self, other):
    """``self % other``: ``numpy.remainder`` (the sign of the divisor, as Python)."""
    return _jnp().remainder(self, other)


def __rmod__(self, other):
    return _jnp().remainder(other, self)


def __floordiv__(self, other):
    """``self // other``: ``floor(self / other)`` (integers stay integers); zero gradient."""
    return _jnp().floor_divide(self, other)


def __rfloordiv__(self, other):
    return _jnp().floor_divide(other, self)


def __divmod__(self, other):
    """``divmod(self, other)``: ``(self // other, self % other)``."""
    return _jnp().divmod(self, other)


def __rdivmod__(self, other):
    return _jnp().divmod(other, self)


def ravel(self, order="C"):
    """NumPy's ``ravel`` (C order; PyTorch's ``ravel()`` is the same call)."""
    return _jnp().ravel(self, order)


def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """``self`` cast to ``dtype`` (a NumPy or jitgrad dtype); the gradient is cast back.
    ``order``/``casting``/``subok`` are NumPy's and accepted with their defaults only."""
    if order not in ("K", "C", "A") or casting != "unsafe":
        raise NotImplementedError("Tensor.astype: only order='K'/'C' and casting='unsafe' are "
                                  "supported")
    return _jnp().astype(self, np.dtype(getattr(dtype, "np", dtype)), copy=copy)


def fill(self, value):
    """NumPy's in-place ``fill`` (returns None); ``fill_`` is PyTorch's (returns ``self``)."""
    self.fill_(value)


def copy(self, order="C"):
    """A copy (``clone``): the gradient flows through it."""
    return _jnp().copy(self, order)


def dot(self, b, out=None):
    """``numpy.dot(self, b)`` (1-d with 1-d is PyTorch's ``dot``; NumPy's also takes N-d)."""
    if out is not None:
        raise NotImplementedError("Tensor.dot: out= is not supported")
    return _jnp().dot(self, b)


def _itemsize(self):
    return self._data.dtype.itemsize


def _nbytes(self):
    return self._data.dtype.itemsize * self.numel()


# (``item(*index)`` and ``flatten(order)`` are in Tensor's class body; ``round(decimals)`` and
# ``argsort(axis, kind)`` in _torch_functions.py: one method per name takes both signatures)
methods.declare({fn.__name__: fn for fn in (
    __mod__, __rmod__, __floordiv__, __rfloordiv__, __divmod__, __rdivmod__, ravel, astype, fill,
    copy, dot)} | {
    "itemsize": property(_itemsize, doc="Bytes per element (NumPy's and PyTorch's ``itemsize``)."),
    "nbytes": property(_nbytes, doc="Bytes of the elements (NumPy's and PyTorch's ``nbytes``)."),
}, __name__)
