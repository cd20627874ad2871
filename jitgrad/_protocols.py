"""NumPy's dispatch protocols for Tensor: ``numpy.sin(t)``, ``numpy.sum(t, axis=0)``,
``ndarray + t`` record the graph and return Tensors.

``Tensor``'s class body declares the protocol methods and calls the handlers this module
registers with ``tensor.set_numpy_protocols`` at import (it builds on ``jitgrad.numpy``, above
``tensor.py``). Both handlers look NumPy's callable up in ONE table, built by ``jitgrad.numpy``
(imported on the first protocol call, so ``import jitgrad`` stays cheap): ``UFUNCS`` (ufunc -> implementation) and ``FUNCTIONS``
(function -> implementation). The namespace path (``jitgrad.numpy.sin``) and the protocol path
(``numpy.sin``) therefore run the same code and record the same graph.

Anything not in the table: if no Tensor argument requires grad, NumPy runs on the data (the
behaviour of plain ``__array__`` conversion: an ndarray result); if one does, a ``TypeError``
names the function: never a silently missing gradient.
"""
from __future__ import annotations

import numpy as np

from . import tensor as _tensor_module
from .graph.grad_mode import is_grad_enabled
from .ops.core import upper
from .tensor import Tensor

_TABLE = None


def _tables():
    global _TABLE
    if _TABLE is None:
        import jitgrad.numpy as jnp

        _TABLE = (jnp.UFUNCS, jnp.FUNCTIONS)
    return _TABLE


def _tensor_type():
    return Tensor


def _any_requires_grad(objs) -> bool:
    Tensor = _tensor_type()
    for o in objs:
        if isinstance(o, Tensor):
            if o.requires_grad:
                return True
        elif isinstance(o, (list, tuple)):
            if _any_requires_grad(o):
                return True
        elif isinstance(o, dict):
            if _any_requires_grad(o.values()):
                return True
    return False


def _to_data(o, what):
    Tensor = _tensor_type()
    if isinstance(o, Tensor):
        return o._host(what)
    if isinstance(o, (list, tuple)):
        return type(o)(_to_data(v, what) for v in o)
    return o


def _fallback(name, func, args, kwargs):
    if is_grad_enabled() and _any_requires_grad(list(args) + list(kwargs.values())):
        raise TypeError(
            f"numpy.{name} is not differentiable in jitgrad (no derivative rule); it was called "
            "on a Tensor that requires grad. Use jitgrad.numpy's covered functions, or call it "
            "on tensor.detach().numpy() if no gradient is needed (see docs/numpy.md)")
    what = f"numpy.{name}"
    if kwargs.get("out") is not None:
        kwargs = dict(kwargs, out=_out_data(kwargs["out"]))
    return func(*_to_data(args, what), **{k: _to_data(v, what) for k, v in kwargs.items()})


def _out_data(out):
    """The arrays NumPy writes into for ``out=`` tensors (in place: the write guard is asked
    first, as the ops' writes do; jitgrad.compile refuses writes while it traces)."""
    Tensor = _tensor_type()
    if isinstance(out, (list, tuple)):
        return type(out)(_out_data(o) for o in out)
    if not isinstance(out, Tensor):
        return out
    if upper.write_guard is not None:
        upper.write_guard(out)
    return out._data  # device read: the array NumPy writes into (write guarded)


_REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min"}
_ACCUMULATE = {np.add: "cumsum", np.multiply: "cumprod"}


def _write_out(out, result, name):
    Tensor = _tensor_type()
    if isinstance(out, Tensor):
        if tuple(out.shape) != tuple(result.shape):
            raise ValueError(f"numpy.{name}: out has shape {tuple(out.shape)} but the result has "
                             f"shape {tuple(result.shape)}")
        out.copy_(result)  # records CopyBackwards: the gradient flows to result
        return out
    if isinstance(out, np.ndarray):
        if _any_requires_grad([result]):
            raise TypeError(f"numpy.{name}: out= is an ndarray but the result requires grad; "
                            "pass a Tensor as out (or detach first)")
        np.copyto(out, result._host(f"numpy.{name} out="), casting="same_kind")
        return out
    raise TypeError(f"numpy.{name}: out must be a Tensor or an ndarray, got {type(out).__name__}")


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``Tensor.__array_ufunc__``: ``__call__`` (with ``out=``, ``where=``), ``reduce``
    (``axis``, ``keepdims``) and ``accumulate`` of the covered ufuncs."""
    ufuncs, _ = _tables()
    import jitgrad.numpy as jnp

    name = ufunc.__name__
    out = kwargs.pop("out", None)
    if isinstance(out, tuple):
        if len(out) != 1:
            raise NotImplementedError(f"numpy.{name}: several out= arrays are not supported")
        out = out[0]
    where = kwargs.pop("where", True)
    if kwargs.pop("dtype", None) is not None or kwargs.pop("casting", "same_kind") != "same_kind":
        raise NotImplementedError(f"numpy.{name}: dtype= and casting= are not supported on Tensors")
    if method == "__call__":
        impl = ufuncs.get(ufunc)
        if impl is None or kwargs:
            if impl is not None:
                raise NotImplementedError(f"numpy.{name}: keyword(s) {sorted(kwargs)} not supported "
                                          "on Tensors")
            return _fallback(name, ufunc, inputs, dict(kwargs, out=out) if out is not None else {})
        result = impl(*inputs)
    elif method == "reduce" and ufunc in _REDUCE:
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        if kwargs.pop("initial", None) is not None or kwargs:
            raise NotImplementedError(f"numpy.{name}.reduce: initial= and other keywords are not "
                                      "supported on Tensors")
        result = getattr(jnp, _REDUCE[ufunc])(inputs[0], axis=axis, keepdims=keepdims)
    elif method == "accumulate" and ufunc in _ACCUMULATE:
        result = getattr(jnp, _ACCUMULATE[ufunc])(inputs[0], axis=kwargs.pop("axis", 0))
    else:
        return _fallback(f"{name}.{method}", getattr(ufunc, method), inputs,
                         dict(kwargs, out=out) if out is not None else kwargs)
    if where is not True:
        if out is None:
            raise NotImplementedError(f"numpy.{name}: where= needs out= on Tensors (the other "
                                      "elements would be undefined)")
        base = out if isinstance(out, _tensor_type()) else jnp.asarray(out)
        result = jnp.where(where, result, base)
    if out is not None:
        return _write_out(out, result, name)
    return result


def array_function(self, func, types, args, kwargs):
    """``Tensor.__array_function__``: covered functions run jitgrad's implementation; the rest
    run on the data when no gradient is at stake, else raise naming the function."""
    _, functions = _tables()
    impl = functions.get(func)
    name = getattr(func, "__name__", str(func))
    if impl is None:
        return _fallback(name, func, args, kwargs)
    out = kwargs.pop("out", None)
    result = impl(*args, **kwargs)
    if out is not None:
        return _write_out(out, result, name)
    return result


def array_namespace(self, api_version=None):
    """``Tensor.__array_namespace__``: the Array API namespace for Tensors, ``jitgrad.numpy``."""
    import jitgrad.numpy

    return jitgrad.numpy


_tensor_module.set_numpy_protocols(array_ufunc, array_function, array_namespace)
