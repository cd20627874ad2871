"""HIPS autograd's ``autograd.misc`` helpers: ``flatten``, ``flatten_func``, ``fixed_point``.

``flatten(value) -> (vector, unflatten)`` concatenates the raveled leaves of nested lists,
tuples and dicts (dict entries in sorted key order, as HIPS) into one 1-d vector;
``unflatten(vector)`` rebuilds the structure. Both are differentiable (concatenation and
slicing are recorded ops), and both give plain NumPy when nothing is traced.

``fixed_point(f, a, x0, distance, tol)`` iterates ``x <- f(a)(x)`` from ``x0`` until
``distance(x, x_prev) <= tol`` and returns ``x* = f(a)(x*)``. Its reverse mode does not
differentiate the iterations (HIPS's ``fixed_point``): by the implicit function theorem,
``dx*/da = (I - df/dx)^-1 df/da`` at ``(a, x*)``, so ``g^T dx*/da = w^T df/da`` where ``w``
solves ``w = g + (df/dx)^T w``, itself found by fixed-point iteration (which converges where
the forward one does: the spectral radius of ``df/dx`` is below 1 at an attracting fixed
point). The rule is written with traced vjps, so ``fixed_point`` nests (second derivatives).
"""
from __future__ import annotations

import numpy as _np

from ..tensor import Tensor
# (the topic modules' functions are read at call time: the public ones, wrappers included, as
# jitgrad.numpy's _plain.install leaves them: Note [plain inputs])
from . import _creation, _join, _shape, _trace
from ._extend import defvjp, primitive

__all__ = ["flatten", "flatten_func", "fixed_point"]


def _shape_of(x) -> tuple:
    return tuple(x.shape) if isinstance(x, Tensor) else tuple(_np.shape(x))


def _values(x, name):
    """``x``'s values for NumPy (a Tensor's through ``Tensor._host``)."""
    return x._host(f"jitgrad.numpy.functional.{name}") if isinstance(x, Tensor) else x


def _leaves(value, out):
    """Depth-first leaves of ``value`` (dicts in sorted key order); returns a rebuild spec."""
    if isinstance(value, (list, tuple)):
        specs = [_leaves(v, out) for v in value]
        return (type(value), specs)
    if isinstance(value, dict):
        keys = sorted(value)
        return (dict, keys, [_leaves(value[k], out) for k in keys])
    shape = _shape_of(value)
    out.append(value)
    return shape


def _rebuild(spec, parts):
    if isinstance(spec, tuple) and spec and isinstance(spec[0], type):
        kind = spec[0]
        if kind is dict:
            return {k: _rebuild(s, parts) for k, s in zip(spec[1], spec[2])}
        items = [_rebuild(s, parts) for s in spec[1]]
        if kind is list:
            return items
        return kind(*items) if hasattr(kind, "_fields") else kind(items)
    return next(parts)


def flatten(value):
    """``(vector, unflatten)``: the leaves of ``value`` (nested lists, tuples and dicts of
    arrays and numbers) raveled and concatenated into one 1-d vector, and the inverse map
    ``unflatten(vector)`` (leaves come back with their shapes, in the vector's dtype). A
    traced leaf (a Tensor that requires grad) gives a traced vector; otherwise both give
    NumPy arrays."""
    leaves: list = []
    spec = _leaves(value, leaves)
    shapes = [_shape_of(x) for x in leaves]
    sizes = [int(_np.prod(s)) for s in shapes]
    if any(isinstance(x, Tensor) and x.requires_grad for x in leaves):
        vector = (_join.concatenate([_shape.ravel(x) for x in leaves]) if leaves
                  else _creation.array([]))
    else:
        raw = [_np.ravel(_values(x, "flatten")) for x in leaves]
        vector = _np.concatenate(raw) if raw else _np.array([])
    offsets = _np.concatenate([[0], _np.cumsum(sizes)]).astype(int)

    def unflatten(vec):
        n = int(_shape_of(vec)[0])
        if n != offsets[-1]:
            raise ValueError(f"unflatten: the vector has {n} entries, the structure "
                             f"{offsets[-1]}")
        if not isinstance(vec, Tensor):
            vec = _np.asarray(vec)
        parts = iter(vec[offsets[i]:offsets[i + 1]].reshape(shapes[i]) for i in range(len(shapes)))
        return _rebuild(spec, parts)

    return vector, unflatten


def flatten_func(func, example):
    """``(flat_func, unflatten, flat_example)`` with ``flat_func(vector, *args) =
    flatten(func(unflatten(vector), *args))[0]``: a function of a container as a function of
    one vector (for optimizers that want vectors)."""
    flat_example, unflatten = flatten(example)

    def flat_func(vector, *args):
        return flatten(func(unflatten(vector), *args))[0]

    return flat_func, unflatten, flat_example


def _scalar(d) -> float:
    return float(_values(d, "fixed_point"))


@primitive
def _fixed_point(f, a, x0, distance, tol):
    step = f(a)
    x, x_prev = step(x0), x0
    while _scalar(distance(x, x_prev)) > tol:
        x, x_prev = step(x), x
    return _values(x, "fixed_point") if isinstance(x, Tensor) else _np.asarray(x)


def _fixed_point_vjp(ans, f, a, x0, distance, tol):
    vjp_a, _ = _trace.make_vjp_tree(lambda aa: f(aa)(ans), a, "fixed_point")
    vjp_x, _ = _trace.make_vjp_tree(f(a), ans, "fixed_point")

    def vjp(g):
        w, w_prev = g + vjp_x(_trace.zeros_like(ans)), _trace.zeros_like(ans)
        while _scalar(distance(w, w_prev)) > tol:  # w = g + (df/dx)^T w
            w, w_prev = g + vjp_x(w), w
        return vjp_a(w)

    return vjp


defvjp(_fixed_point, None, _fixed_point_vjp, None, None, None)


def fixed_point(f, a, x0, distance, tol):
    """The fixed point ``x* = f(a)(x*)`` reached by iterating ``x <- f(a)(x)`` from ``x0``
    until ``distance(x, x_prev) <= tol``; differentiable with respect to ``a`` by the implicit
    function theorem (see the module docstring), not through the iterations. ``a`` may be a
    container (it is flattened); ``x0``, ``distance`` and ``tol`` get no gradient."""
    if isinstance(a, (list, tuple, dict)):
        vector, unflatten = flatten(a)
        return fixed_point(lambda v: f(unflatten(v)), vector, x0, distance, tol)
    if isinstance(a, Tensor) or _trace.depth() > 0:
        return _fixed_point(f, a if isinstance(a, Tensor) else Tensor._make(_np.asarray(a)),
                            x0, distance, tol)
    return _fixed_point.fun(f, _np.asarray(a), x0, distance, tol)
