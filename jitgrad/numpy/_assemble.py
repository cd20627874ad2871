"""Array assembly and selection functions (issue 19): ``append insert delete block r_ c_ select
piecewise choose compress extract put_along_axis fill_diagonal diagflat apply_along_axis
apply_over_axes fromfunction ediff1d trim_zeros resize`` and the index helper ``ix_``.

Note [labels]: most of these move elements around without arithmetic. Rather than re-deriving
NumPy's index rules, each runs the NumPy function itself on *label* arrays (the flat position of
every input element: ``arange(size)`` shaped like the input, offset per input) and then gathers
the flattened, concatenated inputs at the resulting labels: one ``take`` row whose gradient
scatters ``g`` back (summing repeats). The forward equals NumPy's by construction (the same
function chose the positions); the gradient is exact.
"""
from __future__ import annotations

import numpy as _np

from ..ops import indexing as _indexing
from ..ops.core import upper as _upper
from ..tensor import Tensor
from ._passthrough import mark as _mark
from . import _creation, _elementwise, _join, _matrix, _shape
from ._common import cast as _cast, to_tensor as _t

__all__ = ["append", "insert", "delete", "block", "r_", "c_", "select", "piecewise", "choose",
           "compress", "extract", "put_along_axis", "fill_diagonal", "diagflat", "ix_",
           "apply_along_axis", "apply_over_axes", "fromfunction", "ediff1d", "trim_zeros",
           "resize"]


def _host(x):
    return x._host() if isinstance(x, Tensor) else x


class _Labeller:
    """Labels for a set of inputs (Note [labels]) and the gather that follows."""

    def __init__(self):
        self.tensors, self.size = [], 0

    def label(self, x):
        t = _t(x)
        lab = _np.arange(self.size, self.size + t.numel(), dtype=_np.int64).reshape(t.shape)
        self.tensors.append(t)
        self.size += t.numel()
        return lab

    def gather(self, labels):
        labels = _np.asarray(labels)
        dt = _np.result_type(*(t.dtype.np for t in self.tensors)) if self.tensors else _np.float64
        flats = [_shape.ravel(t if t.dtype.np == dt else _cast(t, dt)) for t in self.tensors]
        src = flats[0] if len(flats) == 1 else _join.concatenate(flats)
        if labels.size == 0:
            return Tensor._make(_np.zeros(labels.shape, dt))
        return _indexing.take_flat(src, labels.astype(_np.intp))


def _by_labels(fn, *arrays, **kwargs):
    lab = _Labeller()
    return lab.gather(fn(*(lab.label(a) for a in arrays), **kwargs))


def append(arr, values, axis=None):
    """``concatenate((arr, values), axis)`` (both flattened when ``axis`` is None)."""
    arr, values = _t(arr), _t(values)
    if axis is None:
        return _join.concatenate([_shape.ravel(arr), _shape.ravel(values)])
    return _join.concatenate([arr, values], axis)


def insert(arr, obj, values, axis=None):
    """``numpy.insert`` (Note [labels]): ``values`` (broadcast as NumPy does) inserted before
    the indices ``obj``; the gradient goes back to ``arr`` and ``values`` (summed where
    ``values`` was broadcast)."""
    lab = _Labeller()
    a = lab.label(arr)
    v = lab.label(values)
    return lab.gather(_np.insert(a, _host(obj), v, axis=axis))


def delete(arr, obj, axis=None):
    """``numpy.delete`` (Note [labels]); the deleted elements get a zero gradient."""
    return _by_labels(lambda a: _np.delete(a, _host(obj), axis=axis), arr)


def resize(a, new_shape):
    """``numpy.resize``: the flattened ``a`` repeated to fill ``new_shape`` (Note [labels]);
    the gradient sums the copies."""
    return _by_labels(lambda x: _np.resize(x, new_shape), a)


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` where ``condition`` holds (Note [labels])."""
    if out is not None:
        raise NotImplementedError("jitgrad.numpy.compress: out= is not supported")
    cond = _np.asarray(_host(condition))
    return _by_labels(lambda x: _np.compress(cond, x, axis=axis), a)


def extract(condition, arr):
    """``arr`` flattened where ``condition`` (flattened) is true (Note [labels])."""
    cond = _np.asarray(_host(condition))
    return _by_labels(lambda x: _np.extract(cond, x), arr)


def choose(a, choices, out=None, mode="raise"):
    """``out[i] = choices[a[i]][i]`` with broadcasting (``mode`` raise/wrap/clip; Note
    [labels]); the gradient goes to the chosen entries of each choice."""
    if out is not None:
        raise NotImplementedError("jitgrad.numpy.choose: out= is not supported")
    lab = _Labeller()
    labels = [lab.label(c) for c in choices]
    return lab.gather(_np.choose(_np.asarray(_host(a)), labels, mode=mode))


def _label_nested(lab, x):
    if isinstance(x, list):
        return [_label_nested(lab, v) for v in x]
    return lab.label(x)


def block(arrays):
    """``numpy.block`` of nested lists of arrays (Note [labels])."""
    lab = _Labeller()
    return lab.gather(_np.block(_label_nested(lab, arrays)))


class _Concatenator:
    """``r_[...]`` / ``c_[...]``: NumPy's index-trick concatenation on Tensors (Note [labels]);
    slices become constant ranges (``numpy.r_[slice]``), strings are NumPy's directives."""

    def __init__(self, numpy_obj, name):
        self._numpy, self._name = numpy_obj, name

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        lab = _Labeller()
        conv = []
        for item in items:
            if isinstance(item, str):
                conv.append(item)
            elif isinstance(item, slice):
                conv.append(lab.label(Tensor._make(_np.asarray(_np.r_[item]))))
            elif isinstance(item, Tensor) or _np.ndim(item) or _is_nested(item):
                conv.append(lab.label(item))
            else:  # a Python/NumPy scalar: NumPy treats it as a 1-element array
                conv.append(lab.label(Tensor._make(_np.asarray(item))))
        labels = self._numpy[tuple(conv)]
        return lab.gather(_np.asarray(labels))

    def __len__(self):
        return 0

    def __repr__(self):
        return f"jitgrad.numpy.{self._name}"


def _is_nested(x):
    return isinstance(x, (list, tuple))


r_ = _Concatenator(_np.r_, "r_")
c_ = _Concatenator(_np.c_, "c_")


def select(condlist, choicelist, default=0):
    """``choicelist[k]`` where ``condlist[k]`` is the first true condition, else ``default``:
    nested ``where``; gradients to the selected choices (and to ``default``)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    out = _t(default)
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        # a Tensor condition goes to ``where`` as it is (a compiled program reads its values)
        c = cond if isinstance(cond, Tensor) else _np.asarray(cond)
        if (c.dtype.np if isinstance(c, Tensor) else c.dtype) != bool:
            raise TypeError("invalid entry in condlist: should be boolean ndarray")
        out = _elementwise.where(c, choice, out)

    def shape_of(a):
        return tuple(a.shape) if isinstance(a, Tensor) else _np.shape(a)
    shape = _np.broadcast_shapes(*(shape_of(c) for c in condlist),
                                 *(shape_of(c) for c in choicelist))
    return _shape.broadcast_to(out, shape) if tuple(out.shape) != shape else out


def piecewise(x, condlist, funclist, *args, **kw):
    """``numpy.piecewise``: each ``funclist[k]`` (a function or a constant) evaluated on
    ``x[condlist[k]]`` only (so a function undefined elsewhere never sees those points) and
    written into zeros (a later condition wins, as NumPy); one extra function is the
    "otherwise" case. Gradients: each function's, at its own points."""
    x = _t(x)
    if isinstance(condlist, (bool, _np.bool_)) or _np.ndim(_host(condlist)) == 0 or (
            not isinstance(condlist, list) and _np.ndim(_host(condlist)) == x.ndim
            and x.ndim > 0 and _np.asarray(_host(condlist)).dtype == bool and
            _np.shape(_host(condlist)) == tuple(x.shape)):
        condlist = [condlist]
    conds = [_np.broadcast_to(_np.asarray(_host(c), dtype=bool), x.shape) for c in condlist]
    n = len(conds)
    if len(funclist) == n + 1:
        conds.append(~_np.any(conds, axis=0) if n else _np.ones(x.shape, bool))
    elif len(funclist) != n:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    flat = _shape.ravel(x)
    out = _shape.ravel(_creation.zeros_like(x) + x * 0) if x.dtype.is_floating_point else \
        Tensor._make(_np.zeros(x.numel(), x.dtype.np))
    for cond, fn in zip(conds, funclist):
        pos = _np.flatnonzero(cond)
        if pos.size == 0:
            continue
        if callable(fn):
            vals = _t(fn(_indexing.take_flat(flat, pos.astype(_np.intp)), *args, **kw))
        else:
            vals = _t(fn)
        if vals.dtype != out.dtype:
            vals = _cast(vals, out.dtype.np)
        out = _indexing.put_flat(out, pos.astype(_np.intp), _shape.broadcast_to(vals, pos.shape)
                                 if vals.ndim == 0 else vals)
    return _shape.reshape(out, x.shape)


def put_along_axis(arr, indices, values, axis):
    """``numpy.put_along_axis``, in place: ``arr`` (a Tensor) is overwritten where
    ``indices`` points along ``axis`` (the last write to a repeated position wins); the
    gradient of the old values there is 0 and ``values`` get theirs (a copy into ``arr``,
    recorded like any in-place op). Returns None, as NumPy."""
    if not isinstance(arr, Tensor):
        if isinstance(values, Tensor) and values.requires_grad:
            raise TypeError("jitgrad.numpy.put_along_axis: writing values that require grad "
                            "into a NumPy array would drop their gradient; pass a Tensor arr")
        return _np.put_along_axis(arr, _np.asarray(_host(indices)), _host(values), axis)
    idx = _np.asarray(_host(indices))
    labels = _np.arange(arr.numel(), dtype=_np.int64).reshape(arr.shape)
    if axis is None:
        labels, axis = labels.ravel(), 0
    pos = _np.take_along_axis(labels, idx, axis)
    vals = _t(values)
    vals = vals if vals.dtype == arr.dtype else _cast(vals, arr.dtype.np)
    new = _indexing.put_flat(_shape.ravel(arr), pos.ravel().astype(_np.intp),
                             _shape.ravel(_shape.broadcast_to(vals, pos.shape)))
    arr.copy_(_shape.reshape(new, arr.shape))


def fill_diagonal(a, val, wrap=False):
    """``numpy.fill_diagonal``, in place on a Tensor (``val`` repeated along the diagonal as
    NumPy does; the old diagonal gets a zero gradient, ``val`` gets the diagonal's). Returns
    None."""
    if not isinstance(a, Tensor):
        if isinstance(val, Tensor) and val.requires_grad:
            raise TypeError("jitgrad.numpy.fill_diagonal: writing values that require grad "
                            "into a NumPy array would drop their gradient; pass a Tensor")
        return _np.fill_diagonal(a, _host(val), wrap)
    mask = _np.zeros(a.shape, bool)
    _np.fill_diagonal(mask, True, wrap)
    pos = _np.flatnonzero(mask).astype(_np.intp)
    v = _shape.ravel(_t(val))
    v = v if v.dtype == a.dtype else _cast(v, a.dtype.np)
    vals = v[_np.arange(pos.size) % v.shape[0]] if v.shape[0] != pos.size else v
    a.copy_(_shape.reshape(_indexing.put_flat(_shape.ravel(a), pos, vals), a.shape))


def diagflat(v, k=0):
    """The flattened ``v`` on diagonal ``k`` of a square matrix (``diag(ravel(v), k)``)."""
    return _matrix.diag(_shape.ravel(_t(v)), k)


@_mark
def ix_(*args):
    """``numpy.ix_``: open-mesh index arrays (integer/bool constants; a pass-through)."""
    return tuple(Tensor._make(r) for r in _np.ix_(*(_np.asarray(_host(a)) for a in args)))


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-d slice of ``arr`` along ``axis``; its result's dims take
    the place of ``axis`` (NumPy's rule). Differentiable when ``func1d`` is written with
    ``jitgrad.numpy``: the results are stacked."""
    arr = _t(arr)
    axis = int(axis) % arr.ndim
    moved = _shape.moveaxis(arr, axis, -1)
    outer = tuple(moved.shape[:-1])
    res = [_t(func1d(moved[idx], *args, **kwargs)) for idx in _np.ndindex(*outer)]
    if not res:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    out = _shape.reshape(_join.stack(res, 0), outer + tuple(res[0].shape))
    rnd = res[0].ndim
    if rnd == 0:
        return out
    return _shape.moveaxis(out, list(range(len(outer), len(outer) + rnd)),
                           list(range(axis, axis + rnd)))


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the dimensions (NumPy's
    ``apply_over_axes``)."""
    val = _t(a)
    n = val.ndim
    for axis in _np.atleast_1d(axes):
        axis = int(axis) + n if axis < 0 else int(axis)
        res = _t(func(val, axis))
        if res.ndim != n:
            res = _shape.expand_dims(res, axis)
            if res.ndim != n:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function(*indices(shape))`` with the index grids as constant Tensors; the result
    records whatever ``function`` does (differentiable in the Tensors it closes over)."""
    if like is not None:
        raise NotImplementedError("jitgrad.numpy.fromfunction: like= is not supported")
    return function(*_grids(shape, dtype), **kwargs)


@_upper.constant_maker
def _grids(shape, dtype):
    """``numpy.indices(shape)`` as constant Tensors."""
    return [Tensor._make(g) for g in _np.indices(shape, dtype=dtype)]


def ediff1d(ary, to_end=None, to_begin=None):
    """``concatenate((to_begin, diff(ravel(ary)), to_end))``; the gradient flows to ``ary``
    and to Tensor ``to_begin``/``to_end``."""
    a = _shape.ravel(_t(ary))
    parts = [] if to_begin is None else [_shape.ravel(_t(to_begin))]
    parts.append(a[1:] - a[:-1])
    if to_end is not None:
        parts.append(_shape.ravel(_t(to_end)))
    parts = [p if p.dtype == a.dtype else _cast(p, a.dtype.np) for p in parts]
    return parts[0] if len(parts) == 1 else _join.concatenate(parts)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros (a slice, chosen
    on the data; NumPy 2.2's ``axis`` too)."""
    f = _t(filt)
    data = f._host("jitgrad.numpy.trim_zeros")
    trim = trim.lower()
    axes = range(data.ndim) if axis is None else [int(a) % data.ndim for a in _np.atleast_1d(axis)]
    index = [slice(None)] * data.ndim
    nz = _np.argwhere(data)
    for ax in axes:
        if nz.size == 0:
            start = stop = 0
        else:
            start = int(nz[:, ax].min()) if "f" in trim else 0
            stop = int(nz[:, ax].max()) + 1 if "b" in trim else data.shape[ax]
        index[ax] = slice(start, stop)
    return f[tuple(index)]
