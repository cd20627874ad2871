"""The machinery under ``jitgrad.numpy.functional``: nesting depth, lifting arguments into the
graph, the one reverse-mode primitive (``make_vjp_tree``) and the outermost NumPy conversion.

Note [nested operators]: HIPS autograd's operators nest (``grad(grad(f))``) because each one
boxes its argument and the outer trace sees the inner one's arithmetic. Here each operator
lifts its argument into a Tensor and runs one reverse pass; to nest, the inner pass records
its own graph (``create_graph=True``) and its result stays a Tensor, so the outer operator
traces through it. Whether a call is *nested* is decided once, when the operator is called:

- it runs inside another operator's traced function (a thread-local depth > 0), or an
  argument is a traced Tensor: it requires grad (a torch-style caller) or carries a
  forward-mode tangent (inside ``make_jvp``/``deriv``), and
- grad mode is on (inside a custom Function's backward without ``create_graph`` it is off,
  and there is nothing to nest into).

A nested call lifts a traced Tensor argument through ``clone`` (a new node on the caller's
graph that also carries its tangents: its gradient is the derivative w.r.t. this argument
only, and the result stays differentiable w.r.t. the caller's variable; closures over outer
variables stay differentiable because every pass records). Anything else becomes a fresh
leaf. Only the outermost call (depth 0, no argument requiring grad) turns Tensors into NumPy arrays
(``to_numpy``): a plain user never sees a Tensor.

Arguments and results may be containers: nested lists, tuples (namedtuples) and dicts with
arrays or numbers at the leaves (``jitgrad.func._pytree``); a gradient has its argument's
structure.
"""
from __future__ import annotations

import contextlib
import functools
import threading

import numpy as _np

from .. import autograd as _autograd
from ..autograd import forward_ad as _forward_ad
from ..graph.grad_mode import enable_grad, is_grad_enabled
from ..func._pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor

class _Local(threading.local):
    depth = 0  # how many operators' traced functions are running on this thread


_local = _Local()


def depth() -> int:
    """How many operators' traced functions are running on this thread."""
    return _local.depth


@contextlib.contextmanager
def tracing():
    """Mark a traced function's run: operators called inside it nest (Note [nested operators])."""
    _local.depth = depth() + 1
    try:
        yield
    finally:
        _local.depth -= 1


_has_tangent = _forward_ad.has_tangent


def tracked(tree) -> bool:
    """Whether any leaf of ``tree`` is a traced Tensor: it requires grad or carries a
    forward-mode tangent (a dual tensor of an enclosing ``make_jvp``)."""
    if isinstance(tree, Tensor):
        return tree.requires_grad or _has_tangent(tree)
    if isinstance(tree, (list, tuple)):
        return any(tracked(x) for x in tree)
    if isinstance(tree, dict):
        return any(tracked(x) for x in tree.values())
    return False


def is_nested(*trees) -> bool:
    """Whether an operator called now with ``trees`` as arguments must record its pass."""
    return is_grad_enabled() and (depth() > 0 or any(tracked(t) for t in trees))


def _float_data(x):
    data = x._host("jitgrad.numpy.functional") if isinstance(x, Tensor) else _np.asarray(x)
    if data.dtype.kind not in "fc":  # complex stays complex (a cast would drop the imaginary part)
        if data.dtype.kind not in "biu":
            raise TypeError(f"jitgrad.numpy.functional: cannot differentiate with respect to a "
                            f"value of type {type(x).__name__} (dtype {data.dtype}); the "
                            "differentiated argument must hold numbers or arrays (or lists, "
                            "tuples and dicts of them)")
        data = data.astype(_np.float64)
    return data


def lift(x, nested: bool, requires_grad: bool = True):
    """The Tensor a traced function receives for the leaf ``x`` (Note [nested operators])."""
    if nested and isinstance(x, Tensor) and tracked(x):  # a float tensor: only those are traced
        y = x.clone()  # keeps the caller's graph and tangents (Note [nested operators])
        return y.requires_grad_(requires_grad) if requires_grad and not y.requires_grad else y
    return Tensor._make(_np.array(_float_data(x)), requires_grad=requires_grad)


def as_tensor(v, like: Tensor):
    """A cotangent or tangent ``v`` as a Tensor of ``like``'s shape (a traced ``v`` is kept)."""
    if isinstance(v, Tensor):
        if tuple(v.shape) == tuple(like.shape):
            return v
        return v.broadcast_to(tuple(like.shape))
    data = _np.broadcast_to(_np.asarray(v, dtype=like.dtype.np), like.shape)
    return Tensor._make(_np.array(data))


def zeros_like(t: Tensor) -> Tensor:
    return Tensor._make(_np.zeros(tuple(t.shape), dtype=t.dtype.np))


def ones_like(t: Tensor) -> Tensor:
    return Tensor._make(_np.ones(tuple(t.shape), dtype=t.dtype.np))


def check_tensor(out, name: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}: the function must return a jitgrad Tensor (compute it with "
                        f"jitgrad.numpy functions on the argument it receives), got "
                        f"{type(out).__name__}; a result that does not depend on the argument "
                        "has a zero derivative: return it as jitgrad.numpy.array(...)")
    return out


def check_scalar(out, name: str) -> Tensor:
    out = check_tensor(out, name)
    if out.numel() != 1:
        raise TypeError(f"{name}: the function must return a scalar (one element), got shape "
                        f"{tuple(out.shape)}; use elementwise_grad or jacobian")
    return out


def make_vjp_tree(fun, x, name: str = "make_vjp"):
    """Run ``fun(x)`` on lifted leaves; return ``(vjp, ans)``. ``x`` and ``ans`` are pytrees
    (``ans`` of Tensors); ``vjp(v)`` takes a cotangent tree shaped like ``ans`` and returns the
    gradient tree shaped like ``x``. Results are Tensors (``to_numpy`` is the caller's job).
    ``vjp(v, last=True)`` frees the graph when the call is not nested."""
    nested = is_nested(x)
    leaves, spec = tree_flatten(x)
    lifted = [lift(leaf, nested) for leaf in leaves]
    with enable_grad(), tracing():
        ans = fun(tree_unflatten(lifted, spec))
    out_leaves, out_spec = tree_flatten(ans)
    for o in out_leaves:
        check_tensor(o, name)

    def vjp(v, last=False):
        v_leaves, v_spec = tree_flatten(v)
        if out_spec.kind == "leaf" and v_spec.kind != "leaf":  # an array-like given as a list
            v_leaves = [v]
        elif len(v_leaves) != len(out_leaves):
            raise ValueError(f"{name}: the cotangent has {len(v_leaves)} leaves, the function's "
                             f"output {len(out_leaves)} ({out_spec!r})")
        pairs = [(o, as_tensor(g, o)) for o, g in zip(out_leaves, v_leaves) if o.requires_grad]
        create = nested or (is_grad_enabled() and (depth() > 0 or tracked(v)))
        grads = [None] * len(lifted)
        if pairs:
            with enable_grad():
                grads = list(_autograd.grad([p[0] for p in pairs], lifted, [p[1] for p in pairs],
                                            create_graph=create,
                                            retain_graph=True if not last else create,
                                            allow_unused=True))
        grads = [zeros_like(t) if g is None else g for g, t in zip(grads, lifted)]
        return tree_unflatten(grads, spec)

    return vjp, ans


def out_np(t):
    """A Tensor's value as NumPy: a 0-d result is a NumPy scalar (as HIPS autograd's)."""
    a = t._host("jitgrad.numpy.functional")
    return a[()] if a.ndim == 0 else a.copy()


def to_numpy(result):
    """The outermost call's result: Tensors become NumPy arrays at any depth of containers;
    returned functions (``make_vjp``'s ``vjp``) convert their own results when called at the
    outermost level."""
    if isinstance(result, Tensor):
        return out_np(result)
    if isinstance(result, tuple):
        items = [to_numpy(r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
    if isinstance(result, list):
        return [to_numpy(r) for r in result]
    if isinstance(result, dict):
        return {k: to_numpy(r) for k, r in result.items()}
    if callable(result) and not isinstance(result, type):
        return outermost(result)
    return result


def outermost(fn):
    """``fn`` with its result converted by ``to_numpy`` when called at the outermost level."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        outer = not is_nested(args, kwargs)
        result = fn(*args, **kwargs)
        return to_numpy(result) if outer else result

    return wrapper


def nary(unary):
    """HIPS's ``unary_to_nary``: ``unary(fun, x, *op_args)`` differentiates a function of one
    argument; the operator ``op(fun, argnum=0, *op_args)`` picks ``x = args[argnum]`` (a tuple
    of arguments for a tuple ``argnum``) and converts the outermost result to NumPy."""
    @functools.wraps(unary)
    def operator(fun, argnum=0, *op_args, **op_kwargs):
        if not isinstance(argnum, (int, tuple, list)):
            raise TypeError(f"{unary.__name__}: argnum must be an int or a tuple of ints, got "
                            f"{type(argnum).__name__}")

        def nary_f(*args, **kwargs):
            outer = not is_nested(args, kwargs)
            for i in (argnum if isinstance(argnum, (tuple, list)) else (argnum,)):
                if not -len(args) <= i < len(args):
                    raise TypeError(f"{unary.__name__}: argnum {i} but the function got "
                                    f"{len(args)} positional arguments")

            def unary_f(x):
                sub = list(args)
                if isinstance(argnum, int):
                    sub[argnum] = x
                else:
                    for i, xi in zip(argnum, x):
                        sub[i] = xi
                return fun(*sub, **kwargs)

            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            result = unary(unary_f, x, *op_args, **op_kwargs)
            return to_numpy(result) if outer else result

        nary_f.__name__ = f"{unary.__name__}_{getattr(fun, '__name__', 'f')}"
        nary_f.__doc__ = getattr(fun, "__doc__", None)
        return nary_f

    return operator
