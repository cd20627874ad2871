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
_full_constant, _full_like_constant = full, full_like


def _filled(fill, shape, dtype):
    """``fill`` (a Tensor) broadcast to ``shape`` as NumPy's ``full`` (a new contiguous Tensor,
    cast to ``dtype``): the gradient of the fill value is the sum of the output's gradient
    over the broadcast (as JAX / HIPS autograd)."""
    from .. import dtypes

    out = fill if dtype is None or dtypes.to_dtype(dtype) == fill.dtype else \
        _unary_ops.cast(fill, dtypes.to_dtype(dtype))
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    try:
        target = _np.broadcast_shapes(tuple(out.shape), shape)
    except ValueError:
        target = None
    if target != shape:
        raise ValueError(f"jitgrad.numpy.full: could not broadcast the fill value of shape "
                         f"{tuple(out.shape)} into shape {shape}")
    lead = len(shape) - out.ndim
    if lead:
        out = _shape_ops.reshape(out, (1,) * lead + tuple(out.shape))
    return _unary_ops.clone(_shape_ops.expand(out, *shape))


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """``numpy.full``: an array of ``shape`` filled with ``fill_value`` (a number, array or
    Tensor broadcast to ``shape``). A Tensor fill value is differentiated through: its
    gradient is the sum of the output's gradient over the filled entries."""
    if isinstance(fill_value, Tensor):
        check_device(device)
        return _filled(fill_value, shape, dtype)
    return _full_constant(shape, fill_value, dtype, order, device=device)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.full_like``: ``full(shape or a.shape, fill_value, dtype or a.dtype)``; a Tensor
    fill value is differentiated through as in ``full``."""
    if isinstance(fill_value, Tensor):
        check_device(device)
        a_shape = tuple(a.shape) if hasattr(a, "shape") else _np.shape(a)
        a_dtype = a.dtype.np if isinstance(a, Tensor) else _np.asarray(a).dtype
        return _filled(fill_value, a_shape if shape is None else shape,
                       a_dtype if dtype is None else dtype)
    return _full_like_constant(a, fill_value, dtype, order, subok, shape, device=device)



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
