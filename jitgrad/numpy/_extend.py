"""Custom primitives in HIPS autograd's style (``autograd.extend``): ``primitive``, ``defvjp``,
``defvjp_argnum``, ``defjvp``, built on ``jitgrad.autograd.Function``::

    @primitive
    def logsumexp(x):                       # runs on plain NumPy arrays
        m = numpy.max(x)
        return m + numpy.log(numpy.sum(numpy.exp(x - m)))

    defvjp(logsumexp, lambda ans, x: lambda g: g * jitgrad.numpy.exp(x - ans))
    defjvp(logsumexp, lambda g, ans, x: jitgrad.numpy.sum(g * jitgrad.numpy.exp(x - ans)))

Math: for ``y = f(x_1, ..., x_n)`` the vjp maker of argument ``i`` returns ``g -> g^T dy/dx_i``
and the jvp function of argument ``i`` gives ``dy/dx_i t_i`` for its tangent ``t_i``; forward
mode sums the contributions of the arguments that carry tangents.

The body runs on NumPy data (Tensors unwrapped, as HIPS unboxes); called with no Tensor
arguments the primitive is the plain function. The rules get the output and the arguments as
Tensors and the cotangent/tangent as a Tensor: written with ``jitgrad.numpy`` they record
under ``create_graph``, so a primitive nests to any order like a built-in op (HIPS's rules
have the same requirement). Only Tensor positional arguments are differentiable; the output
is one array. An argument with no rule raises NotImplementedError naming the primitive.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as _np

from ..autograd import forward_ad as _forward_ad
from ..autograd.function import Function
from ..tensor import Tensor

__all__ = ["primitive", "defvjp", "defvjp_argnum", "defjvp"]


def _raw(x):
    """The values a primitive's NumPy function receives (a Tensor's through ``Tensor._host``:
    a primitive runs on the host, outside the ops jitgrad.compile can record)."""
    return x._host("jitgrad.numpy.functional.primitive") if isinstance(x, Tensor) else x


def _as_tensor(value, like=None):
    if isinstance(value, Tensor):
        return value
    data = _np.asarray(value)
    if like is not None:
        data = _np.broadcast_to(data.astype(like.dtype.np, copy=False), tuple(like.shape))
    return Tensor._make(_np.array(data))


class _PrimitiveCall(Function):
    """One call of a primitive: ``apply(prim, kwargs, *args)``."""

    _tangents_by_caller = True  # ``Primitive.__call__`` propagates them with the defjvp rules

    @staticmethod
    def forward(ctx, prim, kwargs, *args):
        ctx.prim, ctx.kwargs = prim, kwargs
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        out = _as_tensor(_raw(prim.fun(*[_raw(a) for a in args], **kwargs)))
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)], out)
        return out

    @staticmethod
    def backward(ctx, g):
        prim = ctx.prim
        saved = list(ctx.saved_tensors)
        ans = saved.pop()
        it = iter(saved)
        args = [next(it) if a is None else a for a in ctx.args]
        grads = [None, None]
        for i, needed in enumerate(ctx.needs_input_grad[2:]):
            if not needed:
                grads.append(None)
                continue
            grads.append(_as_tensor(prim.vjp(i, ans, args, ctx.kwargs, g), args[i]))
        return tuple(grads)


class _Primitive:
    """A function with user-given derivative rules (see the module docstring)."""

    def __init__(self, fun):
        self.fun = fun
        self.vjps: dict = {}
        self.vjp_argnum = None
        self.jvps: dict = {}
        functools.update_wrapper(self, fun)
        name = getattr(fun, "__name__", "primitive")
        self._op = SimpleNamespace(name=name, node_name=f"primitive {name}", differentiable=True,
                                   elementwise=False, jvp=self._jvp_rule)

    def __call__(self, *args, **kwargs):
        if not any(isinstance(a, Tensor) for a in args):
            return self.fun(*args, **kwargs)
        out = _PrimitiveCall.apply(self, kwargs, *args)
        if _forward_ad._levels:  # tangents in: the jvp rules give the output's (Note [jvp rules])
            positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            op = SimpleNamespace(**vars(self._op))
            op.jvp = lambda tangents, primals, outs: self._jvp_rule(
                positions, args, kwargs, tangents, outs[0])
            _forward_ad._propagate(op, tuple(args[i] for i in positions), {}, out)
        return out

    def vjp(self, argnum, ans, args, kwargs, g):
        if argnum in self.vjps:
            return self.vjps[argnum](ans, *args, **kwargs)(g)
        if self.vjp_argnum is not None:
            return self.vjp_argnum(argnum, ans, args, kwargs)(g)
        raise NotImplementedError(
            f"reverse mode: primitive {self.__name__!r} has no vjp for positional argument "
            f"{argnum} (shape {tuple(_np.shape(_raw(args[argnum])))}); define one with "
            f"defvjp({self.__name__}, ...)")

    def _jvp_rule(self, positions, args, kwargs, tangents, ans):
        total = None
        for p, t in zip(positions, tangents):
            if t is None:
                continue
            if p not in self.jvps:
                raise NotImplementedError(
                    f"forward mode: primitive {self.__name__!r} has no jvp for positional "
                    f"argument {p} (shape {tuple(args[p].shape)}); define one with "
                    f"defjvp({self.__name__}, ...)")
            c = _as_tensor(self.jvps[p](t, ans, *args, **kwargs), ans)
            total = c if total is None else total + c
        return total

    def __repr__(self):
        return f"<jitgrad primitive {self.__name__}>"


def primitive(fun):
    """Wrap ``fun`` (a function of NumPy arrays) as a primitive whose derivatives come from
    ``defvjp``/``defjvp`` instead of tracing its body."""
    return _Primitive(fun)


def _check(prim, what):
    if not isinstance(prim, _Primitive):
        raise TypeError(f"{what}: the first argument must be a function wrapped by primitive(), "
                        f"got {type(prim).__name__}")


def defvjp(prim, *vjpmakers, argnums=None):
    """Give ``prim`` one vjp maker per positional argument (``None`` skips one): ``maker(ans,
    *args, **kwargs)`` returns ``g -> g^T d ans / d args[i]``, shaped like ``args[i]``.
    ``argnums`` lists the argument positions of the makers (default 0, 1, ...)."""
    _check(prim, "defvjp")
    for i, maker in zip(argnums if argnums is not None else range(len(vjpmakers)), vjpmakers):
        if maker is not None:
            prim.vjps[i] = maker


def defvjp_argnum(prim, vjpmaker):
    """One vjp maker for every argument: ``vjpmaker(argnum, ans, args, kwargs)`` returns
    ``g -> g^T d ans / d args[argnum]``."""
    _check(prim, "defvjp_argnum")
    prim.vjp_argnum = vjpmaker


def defjvp(prim, *jvpfuns, argnums=None):
    """Give ``prim`` one jvp function per positional argument (``None`` skips one):
    ``jvpfun(g, ans, *args, **kwargs)`` returns ``d ans / d args[i] . g`` for the tangent ``g``
    of ``args[i]``, shaped like ``ans``."""
    _check(prim, "defjvp")
    for i, fun in zip(argnums if argnums is not None else range(len(jvpfuns)), jvpfuns):
        if fun is not None:
            prim.jvps[i] = fun
