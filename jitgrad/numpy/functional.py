"""HIPS-autograd-style differential operators, taking and returning ndarrays:
``grad elementwise_grad value_and_grad grad_and_aux jacobian hessian
hessian_vector_product make_vjp make_jvp``.

``from jitgrad.numpy.functional import grad`` is the drop-in for ``from autograd import grad``
(``argnum`` picks the differentiated positional argument). Everything runs in reverse mode on
the recorded graph: Hessians and Hessian-vector products by double backward, ``make_jvp`` by
the double-vjp trick (the vjp is linear in its cotangent ``u``, so differentiating
``u -> J^T u`` against ``v`` gives ``J v``), so every op with a backward rule supports them.
For PyTorch/JAX-style transforms (``vmap``, ``jacfwd``...) see ``jitgrad.func``.

Complex inputs keep their dtype and get PyTorch's gradient convention (Note [complex transforms]
in jitgrad/func/_common.py): ``grad`` of a real ``f(x + iy)`` is ``df/dx + i df/dy``, the
conjugate of HIPS autograd's ``df/dx - i df/dy``. ``holomorphic_grad`` is HIPS's, ``f'(z)``.
"""
from __future__ import annotations

import numpy as _np

from .. import autograd as _autograd
from ..autograd import enable_grad as _enable_grad
from ..tensor import Tensor

__all__ = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian", "hessian",
           "hessian_vector_product", "hvp", "make_vjp", "make_jvp", "deriv", "holomorphic_grad"]


def _lift(args, argnum):
    x = args[argnum]
    data = x._data if isinstance(x, Tensor) else _np.asarray(x)
    if data.dtype.kind not in "fc":  # complex stays complex (a cast would drop the imaginary part)
        data = data.astype(_np.float64)
    xt = Tensor._make(_np.array(data), requires_grad=True)
    return xt, args[:argnum] + (xt,) + args[argnum + 1:]


def _out_np(t):
    a = t._data if isinstance(t, Tensor) else _np.asarray(t)
    return a[()] if a.ndim == 0 else a.copy()


def _check_out(out, name):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}: the function must return a jitgrad Tensor (write it with "
                        f"jitgrad.numpy), got {type(out).__name__}")
    return out


def _pull(out, xt, v, create_graph=False, retain_graph=None):
    if not out.requires_grad:
        return Tensor._make(_np.zeros(xt.shape, dtype=xt.dtype.np))
    (g,) = _autograd.grad(out, xt, v, create_graph=create_graph, retain_graph=retain_graph,
                    allow_unused=True)
    return Tensor._make(_np.zeros(xt.shape, dtype=xt.dtype.np)) if g is None else g


def _scalar(out, name):
    if out.numel() != 1:
        raise TypeError(f"{name}: the function must return a scalar (one element), got shape "
                        f"{tuple(out.shape)}; use elementwise_grad or jacobian")
    return out


def make_vjp(fun, argnum=0):
    """``make_vjp(f)(*args) -> (vjp, f(*args))`` with ``vjp(v) = v^T df/dx``."""
    def maker(*args, **kwargs):
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out = _check_out(fun(*a, **kwargs), "make_vjp")

        def vjp(v):
            vt = Tensor._make(_np.broadcast_to(_np.asarray(v, dtype=out.dtype.np), out.shape).copy())
            with _enable_grad():
                return _out_np(_pull(out, xt, vt, retain_graph=True))

        return vjp, _out_np(out)

    return maker


def grad_and_aux(fun, argnum=0):
    """``f`` returns ``(scalar, aux)``; ``grad_and_aux(f)(*args) -> (gradient, aux)``."""
    def g(*args, **kwargs):
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out, aux = fun(*a, **kwargs)
            out = _scalar(_check_out(out, "grad_and_aux"), "grad_and_aux")
            return _out_np(_pull(out, xt, None)), aux

    return g


def value_and_grad(fun, argnum=0):
    """``value_and_grad(f)(*args) -> (f(*args), df/dx)`` for a scalar ``f``."""
    def g(*args, **kwargs):
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out = _scalar(_check_out(fun(*a, **kwargs), "value_and_grad"), "value_and_grad")
            return _out_np(out), _out_np(_pull(out, xt, None))

    return g


def grad(fun, argnum=0):
    """``grad(f)(*args) = df/dx`` (``x = args[argnum]``) for a scalar ``f``, shaped like ``x``."""
    vg = value_and_grad(fun, argnum)

    def g(*args, **kwargs):
        return vg(*args, **kwargs)[1]

    g.__name__ = f"grad_{getattr(fun, '__name__', 'f')}"
    return g


def elementwise_grad(fun, argnum=0):
    """The sum over outputs of their gradients (``v^T J`` with ``v`` all ones): the
    elementwise derivative for elementwise ``f``."""
    def g(*args, **kwargs):
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out = _check_out(fun(*a, **kwargs), "elementwise_grad")
            ones = Tensor._make(_np.ones(out.shape, dtype=out.dtype.np))
            return _out_np(_pull(out, xt, ones))

    return g


deriv = elementwise_grad


def jacobian(fun, argnum=0):
    """``jacobian(f)(*args)`` of shape ``f(x).shape + x.shape`` (one backward per output
    element)."""
    def j(*args, **kwargs):
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out = _check_out(fun(*a, **kwargs), "jacobian")
            flat = out.reshape(-1)
            rows = [_pull(flat[i], xt, None, retain_graph=True)._data.reshape(-1)
                    for i in range(flat.shape[0])]
        jac = _np.array(rows).reshape(tuple(out.shape) + tuple(xt.shape))
        return jac

    return j


def hessian(fun, argnum=0):
    """``hessian(f)(*args)`` of shape ``x.shape + x.shape`` for a scalar ``f`` (double
    backward)."""
    def h(*args, **kwargs):
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out = _scalar(_check_out(fun(*a, **kwargs), "hessian"), "hessian")
            g = _pull(out, xt, None, create_graph=True).reshape(-1)
            rows = [_pull(g[i], xt, None, retain_graph=True)._data.reshape(-1)
                    for i in range(g.shape[0])]
        return _np.array(rows).reshape(tuple(xt.shape) * 2)

    return h


def hessian_vector_product(fun, argnum=0):
    """``hvp(f)(*args, vector) = H v`` for a scalar ``f``, by double backward (one gradient's
    cost)."""
    def hv(*args, **kwargs):
        *args, vector = args
        with _enable_grad():
            xt, a = _lift(tuple(args), argnum)
            out = _scalar(_check_out(fun(*a, **kwargs), "hessian_vector_product"),
                          "hessian_vector_product")
            g = _pull(out, xt, None, create_graph=True)
            v = Tensor._make(_np.asarray(vector, dtype=xt.dtype.np).reshape(xt.shape))
            if not g.requires_grad:
                return _np.zeros(xt.shape)
            return _out_np(_pull((g * v).sum(), xt, None))

    return hv


hvp = hessian_vector_product


def make_jvp(fun, argnum=0):
    """``make_jvp(f)(*args) -> jvp`` with ``jvp(v) = (f(*args), df/dx v)``."""
    def maker(*args, **kwargs):
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out = _check_out(fun(*a, **kwargs), "make_jvp")

        def jvp(v):
            vt = Tensor._make(_np.asarray(v, dtype=xt.dtype.np).reshape(xt.shape))
            with _enable_grad():
                if not out.requires_grad:
                    return _out_np(out), _np.zeros(out.shape)
                u = Tensor._make(_np.zeros(out.shape, dtype=out.dtype.np), requires_grad=True)
                gx = _pull(out, xt, u, create_graph=True, retain_graph=True)
                if not gx.requires_grad:
                    return _out_np(out), _np.zeros(out.shape)
                (jv,) = _autograd.grad(gx, u, vt, allow_unused=True)
            return _out_np(out), _np.zeros(out.shape) if jv is None else _out_np(jv)

        return jvp

    return maker


def holomorphic_grad(fun, argnum=0):
    """``holomorphic_grad(f)(*args) = f'(z)`` for a holomorphic scalar ``f: C -> C``
    (``z = args[argnum]``, complex), as HIPS autograd's ``holomorphic_grad``.

    Math: PyTorch's convention gives ``grad_z Re f = conj(f'(z))`` (Note [complex transforms]
    in jitgrad/func/_common.py), so the result is the conjugate of one backward pass with the
    cotangent 1. HIPS's semantics hold for any ``f``: the value is ``conj`` of the gradient of
    ``Re f``, ``df/dz + conj(df/d conj(z))`` in Wirtinger terms, ``f'(z)`` when ``f`` is
    holomorphic. ``z`` must be complex and ``f(z)`` a complex scalar: a real input or a real
    output raises TypeError (for a real loss of ``z`` use ``grad``).
    """
    def g(*args, **kwargs):
        x = args[argnum]
        kind = x._data.dtype.kind if isinstance(x, Tensor) else _np.asarray(x).dtype.kind
        if kind != "c":
            raise TypeError("holomorphic_grad: the differentiated argument must be complex, got "
                            f"dtype kind {kind!r} (pass z + 0j; for a real function of a real "
                            "argument use grad)")
        with _enable_grad():
            xt, a = _lift(args, argnum)
            out = _scalar(_check_out(fun(*a, **kwargs), "holomorphic_grad"), "holomorphic_grad")
            if out._data.dtype.kind != "c":
                raise TypeError(f"holomorphic_grad: the function must return a complex scalar "
                                f"(f: C -> C), got {out.dtype.name}; a real-valued function of "
                                "z is not holomorphic: use grad for its gradient")
            ones = Tensor._make(_np.ones(out.shape, dtype=out.dtype.np))
            return _np.conj(_out_np(_pull(out, xt, ones)))  # conj(grad_z Re f) = f'(z)

    g.__name__ = f"holomorphic_grad_{getattr(fun, '__name__', 'f')}"
    return g
