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


def _make_item(torch_item):
    def item(self, *args):
        """The element as a Python number: PyTorch's ``item()`` of a one-element tensor, or
        NumPy's ``item(i)`` / ``item(i, j)`` of a flat or multi-dimensional index."""
        if not args:
            return torch_item(self)
        return self._host().item(*args)
    return item


def _make_round(torch_round):
    def round(self, decimals=0):  # noqa: A001 - NumPy's and PyTorch's name
        """Round half to even to ``decimals`` (positional, as NumPy, or keyword, as PyTorch);
        zero gradient."""
        return torch_round(self, decimals=decimals)
    return round


_UNSET = object()


def _make_argsort(torch_argsort):
    def argsort(self, dim=-1, descending=False, stable=False, *, axis=_UNSET, kind=None,
                order=None):
        """PyTorch's ``argsort(dim, descending, stable)``; NumPy's ``argsort(axis, kind)``
        (a string second argument is ``kind``; ``axis=None`` sorts the flattened tensor)."""
        if isinstance(descending, str):
            kind, descending = descending, False
        if order is not None:
            raise NotImplementedError("Tensor.argsort: order= (structured arrays) is not covered")
        if axis is not _UNSET or kind is not None or dim is None:
            return _jnp().argsort(self, dim if axis is _UNSET else axis, kind,
                                  descending=descending)
        return torch_argsort(self, dim, descending, stable)
    return argsort


def _make_flatten(torch_flatten):
    def flatten(self, start_dim=0, end_dim=-1):
        """PyTorch's ``flatten(start_dim, end_dim)``; a string argument is NumPy's ``order``
        (``'C'`` only)."""
        if isinstance(start_dim, str):
            return _jnp().ravel(self, start_dim)
        return torch_flatten(self, start_dim, end_dim)
    return flatten


def install(cls) -> None:
    """Put the methods on ``cls`` (the Tensor class), wrapping PyTorch's where NumPy's
    signature extends it."""
    for fn in (__mod__, __rmod__, __floordiv__, __rfloordiv__, __divmod__, __rdivmod__, ravel,
               astype, fill, copy, dot):
        setattr(cls, fn.__name__, fn)
    cls.itemsize = property(lambda self: self._data.dtype.itemsize,
                            doc="Bytes per element (NumPy's and PyTorch's ``itemsize``).")
    cls.nbytes = property(lambda self: self._data.dtype.itemsize * self.numel(),
                          doc="Bytes of the elements (NumPy's and PyTorch's ``nbytes``).")
    cls.item = _make_item(cls.item)
    cls.round = _make_round(cls.round)
    cls.argsort = _make_argsort(cls.argsort)
    cls.flatten = _make_flatten(cls.flatten)
