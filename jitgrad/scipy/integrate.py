"""``jitgrad.scipy.integrate.odeint``: ``scipy.integrate.odeint`` with gradients by the adjoint
method (as HIPS autograd and JAX offer), for ``y0``, the times ``t`` and the Tensor ``args``.

For ``dy/dt = f(y, t, *args)`` with outputs ``y_i = y(t_i)`` and incoming gradients ``g_i``,
the adjoint ``a(t) = dL/dy(t)`` obeys ``da/dt = -a^T df/dy`` between the output times and jumps
by ``g_i`` at each ``t_i``; the parameter gradient is ``dL/dargs = int_{t_0}^{t_N} a^T df/dargs
dt``. The backward pass integrates the augmented state ``[y, a, a_args]`` backwards from each
``t_i`` to ``t_{i-1}`` (``dy/dt = f``, ``da/dt = -a^T df/dy``, ``da_args/dt = -a^T df/dargs``),
restarting ``y`` from the stored forward value at every output time, with the vector-Jacobian
products ``a^T df/dy`` and ``a^T df/dargs`` from jitgrad's own reverse mode on ``func``. The time
gradients are ``dL/dt_i = g_i . f(y_i, t_i)`` for ``i >= 1`` and ``dL/dt_0 = -a(t_0^+) .
f(y_0, t_0)`` (``a(t_0^+)`` the adjoint before ``g_0`` is added; ``dL/dy0 = a(t_0^+) + g_0``).

Both directions call ``scipy.integrate.odeint`` (LSODA) on NumPy data with the same
``rtol``/``atol``; the gradient is that of the exact flow, accurate to about those tolerances
(not the derivative of LSODA's discrete steps). Second derivatives are not implemented (a
``create_graph=True`` backward through ``odeint`` raises).
"""
from __future__ import annotations

import numpy as _np

from ..autograd import Function
from ..autograd.api import grad as _grad
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..tensor import Tensor

__all__ = ["odeint"]

_UNSUPPORTED = ("full_output", "Dfun", "col_deriv")


_WHAT = "jitgrad.scipy.integrate.odeint"


def _array(v):
    """``v``'s values as float64 for SciPy (a Tensor's through ``Tensor._host``)."""
    return _np.asarray(v._host(_WHAT) if isinstance(v, Tensor) else v, dtype=_np.float64)


class _Problem:
    """The user's ``func`` and SciPy options, and the NumPy right-hand sides built from them."""

    def __init__(self, func, shape, args, tfirst, options):
        self.func, self.shape, self.tfirst, self.options = func, shape, tfirst, options
        # constants as they were passed; Tensors as detached copies (fresh leaves in backward)
        self.args = args
        self.n = int(_np.prod(shape, dtype=_np.int64))

    def call(self, y, tt, args):
        out = self.func(tt, y, *args) if self.tfirst else self.func(y, tt, *args)
        if isinstance(out, (list, tuple)):
            from .. import numpy as jnp

            out = jnp.stack([o if isinstance(o, Tensor) else Tensor._make(_np.asarray(o, dtype=_np.float64))
                             for o in out])
        return out

    def detached_args(self):
        return [a.detach() if isinstance(a, Tensor) else a for a in self.args]

    def rhs(self, y, tt):
        """``f`` on NumPy data (no graph)."""
        with no_grad():
            out = self.call(Tensor._make(_np.reshape(y, self.shape)), float(tt), self.detached_args())
        return _np.ravel(_array(out))

    def integrate(self, fun, s0, times):
        import scipy.integrate

        return scipy.integrate.odeint(fun, s0, times, **self.options)


def _augmented(problem, diff):
    """The backward dynamics of ``[y, a, a_args]`` (``diff``: positions of the Tensor args
    that need a gradient)."""
    n = problem.n
    sizes = [problem.args[i]._data.size for i in diff]

    def dynamics(s, tt):
        y = Tensor._make(_np.reshape(s[:n], problem.shape).copy())
        y.requires_grad_(True)
        args = problem.detached_args()
        for i in diff:
            args[i] = Tensor._make(problem.args[i]._host(_WHAT).copy())
            args[i].requires_grad_(True)
        with enable_grad():
            out = problem.call(y, float(tt), args)
            if not isinstance(out, Tensor) or not out.requires_grad:  # f independent of y, args
                vjps = [None] * (1 + len(diff))
            else:
                adj = Tensor._make(_np.reshape(s[n:2 * n], tuple(out.shape)).astype(out._data.dtype))
                vjps = _grad(out, [y] + [args[i] for i in diff], grad_outputs=adj,
                             allow_unused=True)
        parts = [_np.ravel(_array(out))]
        for v, size in zip(vjps, [n] + sizes):
            parts.append(_np.zeros(size) if v is None else -_np.ravel(v._host(_WHAT)))
        return _np.concatenate(parts)
    return dynamics


class _OdeInt(Function):
    @staticmethod
    def forward(ctx, problem, y0, t, *args):
        t_np = _array(t)
        ys = problem.integrate(problem.rhs, _np.ravel(_array(y0)), t_np)
        ctx.problem, ctx.ys, ctx.t = problem, ys, t_np
        return Tensor._make(_np.reshape(ys, (len(t_np),) + problem.shape))

    @staticmethod
    def backward(ctx, g):
        if is_grad_enabled():
            raise NotImplementedError(
                "odeint: second derivatives (create_graph=True through the adjoint backward) are "
                "not implemented; take first derivatives only, or detach the odeint result")
        problem, ys, t = ctx.problem, ctx.ys, ctx.t
        n = problem.n
        g = _np.reshape(_array(g), (len(t), n))
        need_args = ctx.needs_input_grad[3:]
        diff = [i for i, a in enumerate(problem.args)
                if isinstance(a, Tensor) and need_args[i]]
        sizes = [problem.args[i]._data.size for i in diff]
        dynamics = _augmented(problem, diff)
        adj = _np.zeros(n)
        adj_args = _np.zeros(sum(sizes))
        grad_t = _np.zeros(len(t))
        for i in range(len(t) - 1, 0, -1):
            grad_t[i] = g[i] @ problem.rhs(ys[i], t[i])
            adj = adj + g[i]
            s = problem.integrate(dynamics, _np.concatenate([ys[i], adj, adj_args]),
                                  _np.array([t[i], t[i - 1]]))[-1]
            adj, adj_args = s[n:2 * n], s[2 * n:]
        grad_t[0] = -(adj @ problem.rhs(ys[0], t[0]))
        grad_y0 = adj + g[0]
        out_args, offset = [None] * len(problem.args), 0
        for i, size in zip(diff, sizes):
            arg = problem.args[i]
            out_args[i] = Tensor._make(_np.reshape(adj_args[offset:offset + size], arg.shape)
                                       .astype(arg._data.dtype))
            offset += size
        y0_grad = Tensor._make(_np.reshape(grad_y0, problem.shape)) if ctx.needs_input_grad[1] \
            else None
        t_grad = Tensor._make(grad_t) if ctx.needs_input_grad[2] else None
        return (None, y0_grad, t_grad, *out_args)


def odeint(func, y0, t, args=(), rtol=None, atol=None, tfirst=False, **kwargs):
    """Integrate ``dy/dt = func(y, t, *args)`` (``func(t, y, *args)`` with ``tfirst=True``)
    from ``y(t[0]) = y0``, returning ``y(t[i])`` for every ``t[i]`` (shape
    ``(len(t),) + y0.shape``): ``scipy.integrate.odeint``'s semantics and options (``rtol``,
    ``atol``, ``hmax``, ``mxstep`` ... are passed to it; ``full_output``, ``Dfun`` and
    ``col_deriv`` are not supported).

    ``func`` is written with jitgrad operations (``jitgrad.numpy``) and returns an array of
    ``y``'s shape (a list of scalars is stacked). Differentiable in ``y0``, ``t`` and every
    Tensor in ``args`` by the adjoint method (module docstring); ``args`` may hold pytrees
    (lists, tuples, dicts) of Tensors, e.g. a list of ``(W, b)`` layers, each Tensor leaf
    differentiated. Arguments that are not Tensors are constants (a ``func`` reading a Tensor
    that requires grad from its closure raises: pass such Tensors in ``args``). Second
    derivatives raise."""
    for name in _UNSUPPORTED:
        if kwargs.get(name):
            raise NotImplementedError(f"odeint: {name} is not supported")
        kwargs.pop(name, None)
    if not isinstance(args, tuple):
        args = (args,)
    y0 = y0 if isinstance(y0, Tensor) else Tensor._make(_np.asarray(y0, dtype=_np.float64))
    t = t if isinstance(t, Tensor) else Tensor._make(_np.asarray(t, dtype=_np.float64))
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a 1-D sequence of times, got shape {tuple(t.shape)}")
    options = {k: v for k, v in (("rtol", rtol), ("atol", atol)) if v is not None}
    options.update(kwargs)
    func, args = _flat_args(func, args)
    problem = _Problem(func, tuple(y0.shape), args, tfirst, options)
    if is_grad_enabled():
        _check_closure(problem, y0, t)
    return _OdeInt.apply(problem, y0, t, *args)


def _flat_args(func, args):
    """``(func', leaves)``: the Tensor leaves of the pytrees in ``args`` as separate arguments
    (each gets its adjoint), and ``func`` called with the pytrees rebuilt from them."""
    from ..func import tree_flatten, tree_unflatten  # (a sibling public package)

    leaves, spec = tree_flatten(args)
    if len(leaves) == len(args) and all(not isinstance(a, (list, tuple, dict)) for a in args):
        return func, args

    def flat_func(first, second, *flat):
        return func(first, second, *tree_unflatten(list(flat), spec))
    return flat_func, tuple(leaves)


def _check_closure(problem, y0, t):
    """One evaluation of ``func`` on constants: if its result still requires grad, ``func``
    reads a Tensor that requires grad from its closure, which the adjoint would miss."""
    with enable_grad():
        out = problem.call(Tensor._make(y0._host(_WHAT).copy()), float(t._host(_WHAT)[0]),
                           problem.detached_args())
    if isinstance(out, Tensor) and out.requires_grad:
        raise ValueError("odeint: func uses a Tensor that requires grad without receiving it "
                         "through args (a closure or global); pass it in args=(...) so the "
                         "adjoint computes its gradient")
