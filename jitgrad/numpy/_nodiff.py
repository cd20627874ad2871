"""The non-differentiable functions of ``jitgrad.numpy``: they run NumPy on the data.

Index-valued, boolean and shape queries (``argmax``, ``nonzero``, ``isnan``, ``logical_and``,
``isclose``, ``searchsorted``, ``shape``, ``result_type``...) carry no gradient by nature:
``_nodiff`` reads the Tensor operands' values (``Tensor._host``; CUDA operands are copied to
the host) and wraps NumPy's array results as Tensors on the operands' device. ``unique`` and
``histogram`` hold values of their inputs and refuse an input that requires grad.
``bincount`` with weights is a scatter-add, differentiable in the weights.
(``argsort`` is ``_array_api``'s, with the Array API's keywords.)
"""
from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ..autograd import forward_ad as _forward_ad
from ..ops import binary as _binary_ops
from ..ops import extrema as _extrema
from ..ops.core import upper as _upper
from ..tensor import Tensor
from ._common import (cast as _cast, constant_array as _constant_array, host_data as _data,
                      on_device as _on, to_tensor as _t)
from ._passthrough import mark as _mark_passthrough
from ._shape import ravel

__all__ = []  # (the names the loops below make, then unique, histogram, bincount)


def _host_tree(x, what):
    """The values of ``x`` for NumPy (Tensors at any depth of lists/tuples, read through
    ``Tensor._host``: CUDA tensors are copied to the host), and the device they came from."""
    if isinstance(x, Tensor):
        return x._host(what), (x.device if x.is_cuda else None)
    if isinstance(x, (list, tuple)):
        pairs = [_host_tree(v, what) for v in x]
        return type(x)(p[0] for p in pairs), next((p[1] for p in pairs if p[1]), None)
    return x, None


def _wrap(r):
    if isinstance(r, _np.ndarray) or isinstance(r, _np.generic):
        return Tensor._make(_np.asarray(r))
    if isinstance(r, tuple):
        return tuple(_wrap(v) for v in r)
    if isinstance(r, list):
        return [_wrap(v) for v in r]
    return r


def _nodiff(fn, name=None, wrap=True):
    name = name or fn.__name__
    what = f"jitgrad.numpy.{name}"

    def f(*args, **kwargs):
        # NumPy runs on host data: CUDA operands are copied to the host (a device sync) and
        # array results go back to their device; no gradient flows here either way
        args, device = _host_tree(args, what)
        kw = {}
        for k, v in kwargs.items():
            kw[k], dev = _host_tree(v, what)
            device = device or dev
        r = fn(*args, **kw)
        return _on(_wrap(r), device) if wrap else r

    f.__name__ = name
    f.__doc__ = (f"``numpy.{name}`` on the data (not differentiable: no gradient flows through "
                 "its integer/bool result).")
    return _mark_passthrough(f)


_NODIFF_WRAP = ("argmax argmin argpartition nonzero argwhere flatnonzero isnan isinf "
                "isfinite isneginf isposinf signbit logical_and logical_or logical_not "
                "logical_xor isclose any all count_nonzero searchsorted digitize tril_indices triu_indices diag_indices indices unravel_index "
                "ravel_multi_index floor_divide_int bitwise_and bitwise_or bitwise_xor invert "
                "left_shift right_shift gcd lcm heaviside iscomplex isreal").split()
_NODIFF_RAW = ("shape ndim size allclose array_equal array_equiv result_type can_cast "
               "broadcast_shapes iscomplexobj isrealobj isscalar issubdtype promote_types "
               "min_scalar_type").split()
for _n in _NODIFF_WRAP:
    if hasattr(_np, _n):
        globals()[_n] = _nodiff(getattr(_np, _n))
        __all__.append(_n)
for _n in _NODIFF_RAW:
    if hasattr(_np, _n):
        globals()[_n] = _nodiff(getattr(_np, _n), wrap=False)
        __all__.append(_n)
nonzero = _nodiff(_np.nonzero)  # (also made above; named for linters)


# --- the queries with registry rows ------------------------------------------------------------
# Under a jitgrad.compile trace the host reads above would stop the capture, so these run as
# rows there: ``argmax``/``argmin`` always (the rows are the implementation), the float
# predicates only while tracing (eager keeps NumPy: one call, no kernel dispatch).
def _tracing() -> bool:
    return _upper.host_read_hook is not None


def _real_tensor(x) -> bool:
    return isinstance(x, Tensor) and x.dtype.np.kind in "iuf"


def _index_query(name):
    host = _nodiff(getattr(_np, name))
    row = getattr(_extrema, name)

    def f(a, axis=None, out=None, *, keepdims=False):
        if out is not None or not _real_tensor(a):
            return host(a, axis, out, keepdims=keepdims)
        return row(a, axis, keepdim=keepdims)

    f.__name__ = name
    f.__doc__ = (f"``numpy.{name}``: the int64 index (of the flattened array when ``axis`` is "
                 f"None; the first one on ties, NaN counting as the extreme), the ``{name}`` "
                 "row (no gradient).")
    return _mark_passthrough(f)


argmax, argmin = _index_query("argmax"), _index_query("argmin")


def _float_predicate(name, recorded):
    host = _nodiff(getattr(_np, name))

    def f(x, *args, **kwargs):
        if args or kwargs or not _tracing() or not _real_tensor(x):
            return host(x, *args, **kwargs)
        if x.dtype.np.kind != "f":  # integers are finite
            return recorded(x) if name == "isfinite" else _binary_ops.compare("ne", x, x)
        return recorded(x)

    f.__name__ = name
    f.__doc__ = host.__doc__
    return _mark_passthrough(f)


_INF = float("inf")
isnan = _float_predicate("isnan", lambda x: _binary_ops.compare("ne", x, x))  # NaN != NaN
isinf = _float_predicate("isinf", lambda x: (x == _INF) | (x == -_INF))
isfinite = _float_predicate("isfinite", lambda x: (x > -_INF) & (x < _INF))  # False for NaN


def _refusing_grad(fn, why):
    """``_nodiff(fn)`` raising when an argument requires grad: its result holds values of the
    inputs (``unique``'s values, ``histogram``'s edges), so running it would cut the graph."""
    run = _nodiff(fn)

    def f(*args, **kwargs):
        from .. import autograd

        if autograd.is_grad_enabled() and _builtins.any(
                _forward_ad.needs_derivative(v) for v in list(args) + list(kwargs.values())):
            raise TypeError(f"jitgrad.numpy.{fn.__name__} is not differentiable ({why}); call "
                            "it on x.detach() if no gradient is needed")
        return run(*args, **kwargs)

    f.__name__ = fn.__name__
    f.__doc__ = (f"``numpy.{fn.__name__}`` on the data (a pass-through; an input that requires "
                 f"grad raises: {why}).")
    return _mark_passthrough(f)


unique = _refusing_grad(_np.unique, "its output shape depends on which values are equal")
histogram = _refusing_grad(_np.histogram, "its counts are piecewise constant and its bin edges "
                                          "have no derivative rule here")
__all__ += ["unique", "histogram", "bincount"]


def bincount(x, weights=None, minlength=0):
    """Counts of each non-negative integer in ``x`` (no gradient), or with ``weights``
    ``out[k] = sum_{i: x_i = k} w_i``, a scatter-add: the gradient of ``w_i`` is ``g[x_i]``."""
    xs = _np.asarray(_data(x, "jitgrad.numpy.bincount"))
    if weights is None or not _forward_ad.needs_derivative(weights):
        return _nodiff(_np.bincount)(xs, weights, minlength)
    from ..ops import indexing as _indexing

    w = _t(weights)
    if not w.dtype.is_floating_point:
        w = _cast(w, _np.float64)
    n = _builtins.max(int(xs.max()) + 1 if xs.size else 0, int(minlength))
    base = _constant_array(_np.zeros(n, dtype=_np.result_type(w.dtype.np, _np.float64)), w)
    return _indexing.put_flat(base, xs.ravel().astype(_np.intp), ravel(_cast(w, base.dtype.np))
                              if w.dtype.np != base.dtype.np else ravel(w), accumulate=True)
