"""``jitgrad.scipy.optimize.minimize``: ``scipy.optimize.minimize`` with exact gradients.

``fun(x, *args)`` is written with jitgrad (``jitgrad.numpy``, Tensor operators) and returns a
scalar; ``x`` arrives as a float64 Tensor of ``x0``'s shape. The objective and its gradient
come from one forward and one backward pass per point; methods that use second-order
information (``Newton-CG``, ``trust-ncg``, ``trust-krylov``, ``trust-constr``) also get exact
Hessian-vector products (double backward). Dict constraints whose ``fun`` is written with
jitgrad get exact Jacobians too. The result is SciPy's ``OptimizeResult`` (ndarrays).
"""
from __future__ import annotations

import numpy as _np
import scipy.optimize as _scipy_optimize

from .. import autograd as _autograd
from ..autograd import enable_grad as _enable_grad
from ..tensor import Tensor

__all__ = ["minimize", "value_and_grad_np"]

_HESSP_METHODS = {"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"}
_NO_JAC_METHODS = {"nelder-mead", "powell", "cobyla", "cobyqa"}


def _host(v):
    """``v``'s values on the host (a Tensor's through ``Tensor._host``: Note [compile tracing])."""
    return v._host("jitgrad.scipy.optimize.minimize") if isinstance(v, Tensor) else v


def _leaf(x, shape):
    return Tensor._make(_np.array(x, dtype=_np.float64).reshape(shape), requires_grad=True)


def _scalar(v, name):
    if not isinstance(v, Tensor):
        raise TypeError(f"minimize: {name} must return a jitgrad Tensor (write it with "
                        f"jitgrad.numpy), got {type(v).__name__}")
    if v.numel() != 1:
        raise ValueError(f"minimize: {name} must return a scalar, got shape {tuple(v.shape)}")
    return v.reshape(())


def value_and_grad_np(fun, shape, args=()):
    """``x (ndarray) -> (f, grad f)`` as float and flat float64 ndarray."""
    def vg(x):
        with _enable_grad():
            xt = _leaf(x, shape)
            v = _scalar(fun(xt, *args), "fun")
            if not v.requires_grad:  # constant objective
                return float(v.item()), _np.zeros(int(_np.prod(shape)))
            (g,) = _autograd.grad(v, xt, allow_unused=True)
        g = _np.zeros(shape) if g is None else g._host("jitgrad.scipy.optimize.minimize")
        return float(v.item()), _np.asarray(g, dtype=_np.float64).reshape(-1).copy()

    return vg


def _hessp(fun, shape, args):
    def hessp(x, p):
        with _enable_grad():
            xt = _leaf(x, shape)
            v = _scalar(fun(xt, *args), "fun")
            (g,) = _autograd.grad(v, xt, create_graph=True)
            pt = Tensor._make(_np.asarray(p, dtype=_np.float64).reshape(shape))
            if not g.requires_grad:  # gradient independent of x: zero Hessian
                return _np.zeros(int(_np.prod(shape)))
            (hv,) = _autograd.grad((g * pt).sum(), xt, allow_unused=True)
        if hv is None:
            return _np.zeros(int(_np.prod(shape)))
        return hv._host("jitgrad.scipy.optimize.minimize").reshape(-1).copy()

    return hessp


def _constraint(c, shape):
    if not isinstance(c, dict) or "jac" in c:
        return c
    fun, args = c["fun"], tuple(c.get("args", ()))

    def cfun(x, *a):
        out = fun(Tensor._make(_np.array(x, dtype=_np.float64).reshape(shape)), *a)
        return _np.asarray(_host(out), dtype=_np.float64)

    def cjac(x, *a):
        with _enable_grad():
            xt = _leaf(x, shape)
            out = fun(xt, *a)
            if not isinstance(out, Tensor):
                raise TypeError("minimize: a constraint's fun must return a jitgrad Tensor")
            flat = out.reshape(-1)
            rows = []
            for i in range(flat.shape[0]):
                (g,) = _autograd.grad(flat[i], xt, retain_graph=True, allow_unused=True)
                rows.append(_np.zeros(int(_np.prod(shape))) if g is None
                            else g._host("jitgrad.scipy.optimize.minimize").reshape(-1))
        jac = _np.array(rows)
        return jac[0] if out.ndim == 0 else jac

    return {**c, "fun": cfun, "jac": cjac, "args": args}


def minimize(fun, x0, args=(), method=None, hess=None, hessp=None, bounds=None, constraints=(),
             tol=None, callback=None, options=None):
    """``scipy.optimize.minimize(fun, x0, ...)`` with the gradient (and, for second-order
    methods, Hessian-vector products) of ``fun`` computed exactly by reverse mode. ``x0`` may
    have any shape; ``result.x`` has the same shape. float64 throughout."""
    x0 = _np.asarray(_host(x0), dtype=_np.float64)
    shape = x0.shape
    m = (method or "").lower()
    if hess is not None and hessp is not None:
        raise ValueError("minimize: pass at most one of hess and hessp")
    kwargs = dict(method=method, bounds=bounds, tol=tol, options=options)
    if m in _NO_JAC_METHODS:
        def f_only(x):
            return float(_scalar(fun(Tensor._make(x.reshape(shape)), *args), "fun").item())

        fn, jac = f_only, None
    else:
        fn, jac = value_and_grad_np(fun, shape, args), True
    if m in _HESSP_METHODS and hess is None:
        kwargs["hessp"] = hessp or _hessp(fun, shape, args)
    elif hess is not None:
        kwargs["hess"] = hess
    elif hessp is not None:
        kwargs["hessp"] = hessp
    if constraints:
        cons = constraints if isinstance(constraints, (list, tuple)) else [constraints]
        kwargs["constraints"] = [_constraint(c, shape) for c in cons]
    if callback is not None:
        kwargs["callback"] = callback
    res = _scipy_optimize.minimize(fn, x0.reshape(-1), jac=jac, **kwargs)
    res.x = _np.asarray(res.x).reshape(shape)
    if "jac" in res and res.jac is not None and _np.size(res.jac) == x0.size:
        res.jac = _np.asarray(res.jac).reshape(shape)
    return res


def __getattr__(name):
    if hasattr(_scipy_optimize, name):
        raise AttributeError(f"jitgrad.scipy.optimize has no '{name}': use scipy.optimize.{name} "
                             "directly (only minimize is wrapped with exact gradients)")
    raise AttributeError(f"module 'jitgrad.scipy.optimize' has no attribute '{name}'")
