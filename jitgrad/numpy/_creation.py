"""The array constructors of ``jitgrad.numpy``: ``array``/``asarray`` (a Tensor keeps its graph;
containers of Tensors are stacked, recording it), NumPy's constant creators (``zeros``,
``arange``, ``linspace``, the ``*_like`` functions, window functions: constant Tensors, no
gradient) and the NumPy-only conversions (``asanyarray``, ``ascontiguousarray``...). They
return Tensors whatever their arguments (``_plain.CONSTRUCTORS``, Note [plain inputs])."""
from __future__ import annotations

import numpy as _np

from ..ops import creation as _creation
from ..ops import shape as _shape_ops
from ..ops import unary as _unary_ops
from ..ops.core import upper as _upper
from ..tensor import Tensor
from ._common import host_data as _data, to_tensor as _t
from ._passthrough import mark as _mark_passthrough

__all__ = ["array", "asarray", "zeros", "ones", "empty", "full", "eye", "identity", "arange",
           "linspace", "logspace", "zeros_like", "ones_like", "empty_like", "full_like", "tri",
           "geomspace", "hanning", "hamming", "blackman", "bartlett", "kaiser", "asanyarray",
           "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "require"]


def array(obj, dtype=None, copy=True, ndmin=0):
    """A constant Tensor holding a copy of ``obj`` (a Tensor keeps its graph; lists of Tensors
    are stacked, recording the graph)."""
    t = _t(obj, dtype)
    while t.ndim < ndmin:
        t = _shape_ops.unsqueeze(t, 0)
    return t


def check_device(device):
    """The Array API ``device=`` argument: None, ``'cpu'`` or a CPU device are accepted."""
    if device is not None and str(getattr(device, "type", device)) != "cpu":
        raise ValueError(f"jitgrad.numpy: device {device!r} is not supported here (only 'cpu')")


def asarray(obj, dtype=None, *, device=None, copy=None):
    """Like ``array`` without copying a Tensor (``obj`` itself is returned). ``copy=True``
    always copies (recorded: the gradient flows through the copy), ``copy=False`` raises if a
    copy would be needed (the Array API's rule); ``device`` must be the CPU."""
    check_device(device)
    if copy is False and not (isinstance(obj, Tensor) and
                              (dtype is None or obj.dtype.np == _np.dtype(dtype))):
        raise ValueError("jitgrad.numpy.asarray: copy=False but a copy is needed")
    out = _t(obj, dtype)
    return _unary_ops.clone(out) if copy and out is obj else out


def _shaped_like(x):
    """A stand-in for a ``*_like`` function's first argument: its shape and dtype, no values
    (a zero-strided view of one element: reading a Tensor's values would be a host read)."""
    if not isinstance(x, Tensor):
        return x
    return _np.broadcast_to(_np.zeros((), dtype=x.dtype.np), tuple(x.shape))


def _creator(fn):
    name = f"jitgrad.numpy.{fn.__name__}"
    like = fn.__name__.endswith("_like")

    @_upper.constant_maker
    def make(*args, **kwargs):
        check_device(kwargs.pop("device", None))
        # the values of a ``*_like`` function's first argument do not matter; any other Tensor
        # (a fill value, a linspace end) would be read as a constant, silently cutting its graph
        valued = list(args[1:] if like else args) + list(kwargs.values())
        _creation.refuse_graph_cut(valued, f"{name}()")
        if like and args:
            args = (_shaped_like(args[0]),) + tuple(args[1:])
        return Tensor._make(_np.asarray(fn(*(_data(a, name) for a in args),
                                           **{k: _data(v, name) for k, v in kwargs.items()})))

    make.__name__ = fn.__name__
    make.__doc__ = f"``numpy.{fn.__name__}`` as a constant Tensor (no gradient flows through it)."
    return _mark_passthrough(make)


zeros, ones, empty, full, eye, identity, arange, linspace, logspace, zeros_like, ones_like, \
    empty_like, full_like, tri = (_creator(f) for f in (
        _np.zeros, _np.ones, _np.empty, _np.full, _np.eye, _np.identity, _np.arange, _np.linspace,
        _np.logspace, _np.zeros_like, _np.ones_like, _np.empty_like, _np.full_like, _np.tri))
# constant grids and window functions (issue 19): their arguments are sizes and shape parameters
geomspace, hanning, hamming, blackman, bartlett, kaiser = (_creator(f) for f in (
    _np.geomspace, _np.hanning, _np.hamming, _np.blackman, _np.bartlett, _np.kaiser))


# --- array conversion (NumPy-only names): a Tensor has one (C-contiguous) layout -------------
def asanyarray(a, dtype=None, order=None, *, like=None, device=None, copy=None):
    """``asarray`` (there are no ndarray subclasses to keep); the graph is kept."""
    return asarray(a, dtype, device=device, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None):
    """``asarray`` (every Tensor is C-contiguous); the graph is kept."""
    return asarray(a, dtype)


def asfortranarray(a, dtype=None, *, like=None):
    """``asarray``: the values (a Tensor has no Fortran layout; memory order does not change
    the values or their gradient)."""
    return asarray(a, dtype)


def require(a, dtype=None, requirements=None, *, like=None):
    """``asarray(a, dtype)`` (the layout flags are always met, apart from Fortran order)."""
    return asarray(a, dtype)


def asarray_chkfinite(a, dtype=None, order=None):
    """``asarray``, raising ``ValueError`` if there is an inf or NaN (NumPy's check)."""
    out = asarray(a, dtype)
    if out.dtype.np.kind in "fc" and not _np.isfinite(out._host()).all():
        raise ValueError("array must not contain infs or NaNs")
    return out
