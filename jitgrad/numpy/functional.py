"""HIPS-autograd-style differential operators on functions written with ``jitgrad.numpy``:
``grad elementwise_grad value_and_grad grad_and_aux jacobian hessian make_hvp
hessian_tensor_product (hessian_vector_product, hvp) tensor_jacobian_product
(vector_jacobian_product) make_vjp make_jvp make_jvp_reversemode make_ggnvp deriv
holomorphic_grad grad_named``, plus ``flatten flatten_func fixed_point`` (HIPS's
``autograd.misc``) and the extension API ``primitive defvjp defvjp_argnum defjvp`` (HIPS's
``autograd.extend``). ``from jitgrad.numpy.functional import grad`` is the drop-in for
``from autograd import grad``; the optimizers are in ``jitgrad.numpy.optimizers``.

Operators nest to any order (``grad(grad(grad(f)))``, ``grad`` of a function calling
``value_and_grad``, ``jacobian`` inside ``grad``): a nested call records its reverse pass and
returns Tensors the outer operator traces; only the outermost call returns NumPy arrays
(Note [nested operators] in ``_trace.py``). ``argnum`` picks the differentiated positional
argument (a tuple picks several: the gradient is a tuple). The argument may be a container
(nested lists, tuples, dicts of arrays), the gradient has its structure.

Reverse mode runs on the recorded graph; ``make_jvp`` and ``deriv`` run forward mode (dual
tensors, ``jitgrad.autograd.forward_ad``) and fall back to the double-vjp trick when an op
has no forward rule. For PyTorch/JAX-style transforms (``vmap``, ``jacfwd``...) see
``jitgrad.func``.

Complex inputs keep their dtype and get PyTorch's gradient convention (Note [complex transforms]
in jitgrad/func/_common.py): ``grad`` of a real ``f(x + iy)`` is ``df/dx + i df/dy``, the
conjugate of HIPS autograd's ``df/dx - i df/dy``. ``holomorphic_grad`` is HIPS's, ``f'(z)``.
"""
from __future__ import annotations

import inspect

import numpy as _np

from ..autograd import forward_ad as _forward_ad
from ..graph.grad_mode import enable_grad as _enable_grad
from ..func._pytree import tree_flatten as _tree_flatten, tree_unflatten as _tree_unflatten
from ..tensor import Tensor
# (the topic modules' functions are read at call time: the public ones, wrappers included, as
# jitgrad.numpy's _plain.install leaves them: Note [plain inputs])
from . import _creation, _elementwise, _join, _matrix, _reductions, _trace
from ._extend import defjvp, defvjp, defvjp_argnum, primitive
from ._misc import fixed_point, flatten, flatten_func

__all__ = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian", "hessian",
           "make_hvp", "hessian_tensor_product", "hessian_vector_product", "hvp",
           "tensor_jacobian_product", "vector_jacobian_product", "make_vjp", "make_jvp",
           "make_jvp_reversemode", "make_ggnvp", "deriv", "holomorphic_grad", "grad_named",
           "flatten", "flatten_func", "fixed_point", "primitive", "defvjp", "defvjp_argnum",
           "defjvp"]


@_trace.nary
def make_vjp(fun, x):
    """``make_vjp(f)(*args) -> (vjp, f(*args))`` with ``vjp(v) = v^T df/dx`` (``v`` shaped like
    ``f``'s output, which may be a container of arrays; the result is shaped like ``x``)."""
    vjp, ans = _trace.make_vjp_tree(fun, x, "make_vjp")
    return (lambda v: vjp(v)), ans


@_trace.nary
def grad(fun, x):
    """``grad(f)(*args) = df/dx`` for a scalar ``f`` (``x = args[argnum]``), shaped like ``x``:
    ``(df/dx)_i = d f / d x_i``; the same container structure for a list/tuple/dict ``x``."""
    vjp, ans = _trace.make_vjp_tree(fun, x, "grad")
    return vjp(_trace.ones_like(_trace.check_scalar(ans, "grad")), last=True)


@_trace.nary
def value_and_grad(fun, x):
    """``value_and_grad(f)(*args) -> (f(*args), df/dx)`` for a scalar ``f`` (one pass)."""
    vjp, ans = _trace.make_vjp_tree(fun, x, "value_and_grad")
    ans = _trace.check_scalar(ans, "value_and_grad")
    return ans, vjp(_trace.ones_like(ans), last=True)


@_trace.nary
def grad_and_aux(fun, x):
    """``f`` returns ``(scalar, aux)``; ``grad_and_aux(f)(*args) -> (df/dx, aux)`` with ``aux``
    passed through (its Tensors as NumPy arrays at the outermost call)."""
    box = []

    def first(xx):
        out, aux = fun(xx)
        box.append(aux)
        return out

    vjp, ans = _trace.make_vjp_tree(first, x, "grad_and_aux")
    return vjp(_trace.ones_like(_trace.check_scalar(ans, "grad_and_aux")), last=True), box[0]


@_trace.nary
def elementwise_grad(fun, x):
    """``sum_i d f_i / dx`` (``v^T J`` with ``v`` all ones), in one reverse pass: the
    elementwise derivative for an elementwise ``f``."""
    vjp, ans = _trace.make_vjp_tree(fun, x, "elementwise_grad")
    ans = _trace.check_tensor(ans, "elementwise_grad")
    if ans.dtype.np.kind == "c":
        raise TypeError("elementwise_grad only applies to real-output functions; use "
                        "holomorphic_grad or jacobian for a complex output")
    return vjp(_trace.ones_like(ans), last=True)


@_trace.nary
def jacobian(fun, x):
    """``jacobian(f)(*args)[i..., j...] = d f(x)[i...] / d x[j...]``, of shape
    ``f(x).shape + x.shape`` (one reverse pass per output element). ``x`` is a scalar or an
    array (nested lists of numbers count as an array)."""
    if isinstance(x, dict):
        raise TypeError("jacobian: the argument must be a scalar or an array, got dict; "
                        "flatten it first (jitgrad.numpy.functional.flatten_func)")
    if isinstance(x, (list, tuple)):  # nested lists of numbers (or Tensors): one array
        x = _creation.array(x)
    vjp, ans = _trace.make_vjp_tree(fun, x, "jacobian")
    ans = _trace.check_tensor(ans, "jacobian")
    n = ans.numel()
    rows = []
    for i in range(n):
        basis = _np.zeros(n, dtype=ans.dtype.np)
        basis[i] = 1
        rows.append(vjp(basis.reshape(tuple(ans.shape)), last=i == n - 1).reshape(-1))
    x_shape = tuple(x.shape) if isinstance(x, Tensor) else tuple(_np.shape(x))
    if not rows:
        return Tensor._make(_np.zeros(tuple(ans.shape) + x_shape))
    return _join.stack(rows).reshape(tuple(ans.shape) + x_shape)


@_trace.nary
def hessian(fun, x):
    """``hessian(f)(*args)[i..., j...] = d^2 f / dx[i...] dx[j...]`` for a scalar ``f``, of
    shape ``x.shape + x.shape``: ``jacobian(jacobian(f))`` (HIPS's definition)."""
    return jacobian(jacobian(fun))(x)


@_trace.nary
def make_hvp(fun, x):
    """``make_hvp(f)(*args) -> (hvp, grad f)`` with ``hvp(v) = H v``, the forward pass and
    gradient computed once for many products."""
    return make_vjp(grad(fun))(x)


def _tensordot(a, b, ndim):
    return _matrix.tensordot(a, b, axes=ndim)


def hessian_tensor_product(fun, argnum=0):
    """``hessian_tensor_product(f)(*args, v) = H v`` (contracted over all of ``v``'s axes),
    by differentiating ``<grad f(x), v>`` (two reverse passes, no Hessian formed)."""
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return _tensordot(fun_grad(*args, **kwargs), vector, _np.ndim(vector))

    return grad(vector_dot_grad, argnum)


hessian_vector_product = hvp = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """``tensor_jacobian_product(f)(*args, v) = v^T J`` (``v`` shaped like ``f``'s output,
    contracted over all its axes), one reverse pass."""
    def vector_dot_fun(*args, **kwargs):
        args, vector = args[:-1], args[-1]
        return _tensordot(vector, fun(*args, **kwargs), _np.ndim(vector))

    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


def _jvp_forward(fun, x, v):
    """``(f(x), J v)`` by forward mode (dual tensors); NotImplementedError where an op has no
    forward rule."""
    nested = _trace.is_nested(x, v)
    x_leaves, spec = _tree_flatten(x)
    v_leaves, _ = _tree_flatten(v)
    if len(v_leaves) != len(x_leaves):
        v_leaves = [v] if len(x_leaves) == 1 else v_leaves
    if len(v_leaves) != len(x_leaves):
        raise ValueError(f"make_jvp: the tangent has {len(v_leaves)} leaves, the argument "
                         f"{len(x_leaves)}")
    # fresh leaves require grad so that a tangent lost on the way (a custom Function whose
    # forward leaves the graph ops) shows up as an output that depends on x without a tangent
    primals = [leaf if nested and _trace.tracked(leaf) else _trace.lift(leaf, nested)
               for leaf in x_leaves]
    with _enable_grad(), _trace.tracing(), _forward_ad.dual_level():
        duals = [_forward_ad.make_dual(p, _trace.as_tensor(t, p))
                 for p, t in zip(primals, v_leaves)]
        out = _trace.check_tensor(fun(_tree_unflatten(duals, spec)), "make_jvp")
        value, tangent = _forward_ad.unpack_dual(out)
    if tangent is None:
        if value.requires_grad:  # depends on x, but forward mode lost the tangent
            raise NotImplementedError("make_jvp: the output has no forward-mode tangent")
        tangent = _trace.zeros_like(value)
    return value, tangent


@_trace.nary
def make_jvp_reversemode(fun, x):
    """``make_jvp_reversemode(f)(*args) -> jvp`` with ``jvp(v) = J v`` by the double-vjp trick:
    ``u -> J^T u`` is linear in ``u``, so its vjp against ``v`` is ``J v``."""
    vjp, y = _trace.make_vjp_tree(fun, x, "make_jvp_reversemode")
    zeros = [_trace.zeros_like(t) for t in _tree_flatten(y)[0]]
    vjp_vjp, _ = _trace.make_vjp_tree(lambda u: vjp(u), _tree_unflatten(zeros, _tree_flatten(y)[1]),
                                      "make_jvp_reversemode")
    return vjp_vjp


@_trace.nary
def make_jvp(fun, x):
    """``make_jvp(f)(*args) -> jvp`` with ``jvp(v) = (f(*args), J v)``, by forward mode (one
    pass per ``v``); an op without a forward rule falls back to ``make_jvp_reversemode``."""
    def jvp(v):
        try:
            return _jvp_forward(fun, x, v)
        except NotImplementedError as forward_error:
            # an op with no jvp rule: the double-vjp trick gives the same J v (fun runs again)
            try:
                vjp, y = _trace.make_vjp_tree(fun, x, "make_jvp")
                zeros = _trace.zeros_like(_trace.check_tensor(y, "make_jvp"))
                vjp_vjp, _ = _trace.make_vjp_tree(lambda u: vjp(u), zeros, "make_jvp")
                return y, vjp_vjp(v)
            except NotImplementedError as reverse_error:
                raise forward_error from reverse_error

    return jvp


@_trace.nary
def deriv(fun, x):
    """``deriv(f)(*args) = J 1`` (forward mode with an all-ones tangent): ``f'(x)`` for a
    scalar ``x``, the elementwise derivative for an elementwise ``f``."""
    x_leaves = _tree_flatten(x)[0]
    ones = [_np.ones(tuple(leaf.shape) if isinstance(leaf, Tensor) else _np.shape(leaf))
            for leaf in x_leaves]
    ones_tree = _tree_unflatten(ones, _tree_flatten(x)[1])
    return make_jvp(fun)(x)(ones_tree)[1]


def make_ggnvp(f, g=None, f_argnum=0):
    """``make_ggnvp(f, g)(*args) -> ggnvp`` with ``ggnvp(v) = J^T H_g J v``, the generalized
    Gauss-Newton product of ``g(f(x))`` (``J`` = Jacobian of ``f``, ``H_g`` = Hessian of
    ``g`` at ``f(x)``; default ``g(y) = sum(y**2, axis=-1) / 2``)."""
    if g is None:
        g = lambda y: 0.5 * _reductions.sum(y ** 2, axis=-1)  # noqa: E731

    def _make_ggnvp(fun, x):
        f_vjp, f_x = _trace.make_vjp_tree(fun, x, "make_ggnvp")
        g_hvp, grad_g_x = _trace.make_vjp_tree(grad(g), f_x, "make_ggnvp")
        f_jvp, _ = _trace.make_vjp_tree(lambda u: f_vjp(u), _trace.zeros_like(grad_g_x),
                                        "make_ggnvp")
        return lambda v: f_vjp(g_hvp(f_jvp(v)))

    _make_ggnvp.__name__ = "make_ggnvp"
    return _trace.nary(_make_ggnvp)(f, f_argnum)


@_trace.nary
def holomorphic_grad(fun, x):
    """``holomorphic_grad(f)(*args) = f'(z)`` for a holomorphic scalar ``f: C -> C``
    (``z = args[argnum]``, complex), as HIPS autograd's ``holomorphic_grad``.

    Math: PyTorch's convention gives ``grad_z Re f = conj(f'(z))`` (Note [complex transforms]
    in jitgrad/func/_common.py), so the result is the conjugate of one backward pass with the
    cotangent 1. HIPS's semantics hold for any ``f``: the value is ``conj`` of the gradient of
    ``Re f``, ``df/dz + conj(df/d conj(z))`` in Wirtinger terms, ``f'(z)`` when ``f`` is
    holomorphic. ``z`` must be complex and ``f(z)`` a complex scalar: a real input or a real
    output raises TypeError (for a real loss of ``z`` use ``grad``).
    """
    kind = x._data.dtype.kind if isinstance(x, Tensor) else _np.asarray(x).dtype.kind
    if kind != "c":
        raise TypeError("holomorphic_grad: the differentiated argument must be complex, got "
                        f"dtype kind {kind!r} (pass z + 0j; for a real function of a real "
                        "argument use grad)")
    vjp, out = _trace.make_vjp_tree(fun, x, "holomorphic_grad")
    out = _trace.check_scalar(out, "holomorphic_grad")
    if out._data.dtype.kind != "c":
        raise TypeError(f"holomorphic_grad: the function must return a complex scalar "
                        f"(f: C -> C), got {out.dtype.name}; a real-valued function of "
                        "z is not holomorphic: use grad for its gradient")
    return _elementwise.conj(vjp(_trace.ones_like(out), last=True))  # conj(grad_z Re f) = f'(z)


def grad_named(fun, argname):
    """``grad`` with respect to the argument named ``argname`` (positional or keyword
    parameters of ``fun``; not ``*args``/``**kwargs``)."""
    names = [p.name for p in inspect.signature(fun).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argname not in names:
        raise TypeError(f"grad_named: {getattr(fun, '__name__', 'the function')} has no "
                        f"positional parameter {argname!r} (it has {names})")
    return grad(fun, names.index(argname))
