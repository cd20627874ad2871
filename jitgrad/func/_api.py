"""Function transforms: ``grad``, ``grad_and_value``, ``value_and_grad``, ``vjp``, ``jvp``,
``linearize`` and ``hvp`` (the Jacobian ones are in ``_jacobian.py``).

Note [func reverse mode]: ``vjp`` (and ``grad``, ``jacrev``) runs ``f`` on fresh leaf tensors
and differentiates with ``autograd.grad``. Inside ``vmap`` the leaves are the real (batched)
tensors: every input is materialized at the vmap levels where the inputs or the outputs are
batched (``_batching.materialize``; ``f`` is run a second time when an output turns out to be
batched where an input was not: per-example gradients of a shared parameter), and the gradient
of the batch is per example because examples never mix. Reverse-mode history goes outward only
where needed: a backward graph is recorded (``create_graph``) when grad mode is on and the
outputs depend on tensors other than the leaves (an enclosing grad, or a closed-over tensor
that requires grad); otherwise results are detached. Forward-mode tangents always flow through
(forward-over-reverse: ``jacfwd(jacrev(f))``): a backward inside a dual level computes with
duals, cotangents included (Note [backward inside a dual level] in autograd/forward_ad.py).
"""
from __future__ import annotations

import functools

from .. import autograd
from ..autograd import forward_ad
from ..autograd.api import check_complex_match
from ..graph.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..graph.node import AccumulateGrad
from ..ops.core import dispatch
from ..tensor import Tensor
from . import _batching as batching
from ._common import (argnums_tuple, detach_keep_tangents, diff_input, from_numpy_tree,
                      numpy_mode, split_aux, to_tensor, zeros_like_logical)
from ._pytree import tree_flatten, tree_map, tree_unflatten


# --- reverse mode core ---------------------------------------------------------------------
class _VJP:
    """One evaluation of ``f`` prepared for vector-Jacobian products (Note [func reverse
    mode]): ``out`` (logical outputs), ``aux`` and ``pullback(cotangents)``."""

    def __init__(self, func, args, kwargs, argnums, has_aux, fname):
        self.fname = fname
        nums, self.as_tuple = argnums_tuple(argnums, len(args), fname)
        self.nums = nums
        trees = tuple(args[i] for i in nums)
        flat, self.in_spec = tree_flatten(trees)
        self.primals = [diff_input(x, fname) for x in flat]
        outer_grad = is_grad_enabled()
        levels = set().union(*(batching.levels_of(x) for x in self.primals))
        while True:
            self.leaves = [_leaf(batching.materialize(x, sorted(levels))) for x in self.primals]
            logical = [batching.wrap_levels(leaf, sorted(levels)) for leaf in self.leaves]
            new_args = list(args)
            for i, tree in zip(nums, tree_unflatten(logical, self.in_spec)):
                new_args[i] = tree
            with enable_grad():
                out = func(*new_args, **kwargs)
            self.aux = None
            if has_aux:
                out, self.aux = split_aux(out, fname)
            out_flat, self.out_spec = tree_flatten(out)
            for o in out_flat:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"{fname}: expected f(*args) to return Tensors, got a "
                                       f"{type(o).__name__}")
            out_levels = set().union(*(batching.levels_of(o) for o in out_flat))
            if out_levels <= levels:
                break
            levels |= out_levels  # per-example gradients: batch the inputs too, run again
        self.levels = sorted(levels)
        self.out_flat = out_flat
        self.out_reals = [batching.materialize(o, self.levels) for o in out_flat]
        self.create = outer_grad and _depends_externally(self.out_reals, self.leaves)

    def outputs(self):
        """The logical outputs and aux, detached unless a graph goes outward."""
        fix = (lambda t: t) if self.create else detach_keep_tangents
        out = tree_unflatten([fix(o) for o in self.out_flat], self.out_spec)
        aux = tree_map(fix, self.aux) if self.aux is not None else None
        return out, aux

    def pullback(self, cotangents):
        """Gradients (flat, logical, one per primal) for cotangents shaped like the outputs."""
        ct_flat, ct_spec = tree_flatten(cotangents)
        if ct_spec != self.out_spec:
            raise RuntimeError(f"{self.fname}: Expected pytree structure of cotangents to be the "
                               f"same as pytree structure of outputs to the function. cotangents: "
                               f"{ct_spec!r}, primal output: {self.out_spec!r}")
        outs, cts = [], []
        for k, (o, real, c) in enumerate(zip(self.out_flat, self.out_reals, ct_flat)):
            c = to_tensor(c, self.fname)
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"{self.fname}: cotangent of shape {list(c.shape)} does not "
                                   f"match the output's shape {list(o.shape)}")
            if not real.requires_grad:
                continue  # an output that does not depend on the inputs contributes nothing
            if c.dtype is not o.dtype:
                check_complex_match(c.dtype, o.dtype, k)  # Note [complex transforms]
                c = c._cast(o.dtype)
            for lev in reversed(self.levels):
                c = batching.expose(c, lev)
            outs.append(real)
            cts.append(c)
        # the gradients keep their forward-mode tangents (Note [backward inside a dual level])
        grads = autograd.grad(outs, self.leaves, cts, retain_graph=True, create_graph=self.create,
                              allow_unused=True) if outs else [None] * len(self.leaves)
        return [zeros_like_logical(x) if g is None else batching.unmaterialize(g, self.levels)
                for g, x in zip(grads, self.primals)]

    def structure(self, flat_grads):
        """Gradients in the structure of the differentiated arguments."""
        trees = tree_unflatten(flat_grads, self.in_spec)
        return trees if self.as_tuple else trees[0]


def _leaf(real):
    """A fresh tensor to differentiate with respect to, with ``real``'s value and tangents;
    a recorded view of ``real`` when an enclosing computation differentiates through it."""
    if real.requires_grad and is_grad_enabled():
        return dispatch.composite(_view_op(), real, shape=tuple(real.shape))
    leaf = real.detach()
    forward_ad._copy_tangents(real, leaf)
    return leaf.requires_grad_()


def _view_op():
    from ..ops import shape

    return shape.VIEW


def _depends_externally(outs, leaves) -> bool:
    """Whether the graph of ``outs`` reaches a leaf other than ``leaves``."""
    own = {id(t) for t in leaves}
    stack = [o.grad_fn for o in outs if o.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own:
                return True
            continue
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _check_scalar(out, fname):
    if not isinstance(out, Tensor):
        raise RuntimeError(f"{fname}(f)(*args): Expected f(*args) to return a Tensor, got "
                           f"{type(out).__name__}")
    if out.ndim != 0:
        raise RuntimeError(f"{fname}(f)(*args): Expected f(*args) to return a scalar Tensor, "
                           f"got tensor with {out.ndim} dims. Maybe you wanted to use the vjp or "
                           "jacrev APIs instead?")
    if out.dtype.is_complex:  # Note [complex transforms]
        raise RuntimeError(f"{fname}(f)(*args): grad can be implicitly created only for real "
                           f"scalar outputs but got jitgrad.{out.dtype.name} (differentiate a "
                           "real loss such as abs(f)**2 or f.real, or use vjp / "
                           "jitgrad.numpy.functional.holomorphic_grad)")


# --- grad ----------------------------------------------------------------------------------
def _grad_and_value(func, args, kwargs, argnums, has_aux, fname):
    to_np = numpy_mode(tree_flatten(args)[0])
    state = _VJP(func, args, kwargs, argnums, has_aux, fname)
    out, aux = state.outputs()
    _check_scalar(out, fname)
    from ..ops.creation import ones_like

    grads = state.structure(state.pullback(ones_like(out)))
    value = (out, aux) if has_aux else out
    if to_np:
        grads, value = from_numpy_tree(grads), from_numpy_tree(value)
    return grads, value


def grad_and_value(func, argnums=0, has_aux=False):
    """``grad_and_value(f)(*args)`` returns ``(gradient, f(*args))`` in one evaluation.

    With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the result is
    ``(gradient, (output, aux))``. See ``grad`` for the rest.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, args, kwargs, argnums, has_aux, "grad_and_value")

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function (PyTorch's ``torch.func.grad``, JAX's ``jax.grad``).

    ``grad(f)(x)[i] = d f(x) / d x[i]``, computed by reverse mode. ``argnums`` (an int or a
    tuple of ints) picks the differentiated positional arguments; each may be a pytree
    (tuple/list/dict) of tensors, and the gradient has the same structure (a tuple of them for
    a tuple ``argnums``). ``f`` must return a 0-d tensor (``(output, aux)`` with
    ``has_aux=True``: then ``(gradient, aux)`` is returned). Inputs ``f`` does not depend on
    get zero gradients. Transforms compose: ``grad(grad(f))``, ``vmap(grad(f))`` (per-example
    gradients), ``jacfwd(grad(f))``. NumPy arrays in, NumPy arrays out.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value(func, args, kwargs, argnums, has_aux, "grad")
        return (g, value[1]) if has_aux else g

    return wrapper


def value_and_grad(func, argnums=0, has_aux=False):
    """JAX's ordering of ``grad_and_value``: ``(f(*args), gradient)``, or
    ``((output, aux), gradient)`` with ``has_aux``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = _grad_and_value(func, args, kwargs, argnums, has_aux, "value_and_grad")
        return value, g

    return wrapper


# --- vjp -----------------------------------------------------------------------------------
def vjp(func, *primals, has_aux=False):
    """``(f(*primals), vjp_fn)`` where ``vjp_fn(v)`` is the vector-Jacobian product
    ``v^T J`` for every primal (a tuple, one entry per primal, each shaped like it).

    ``v`` has the structure and shapes of ``f``'s output (a pytree of tensors). ``vjp_fn`` can
    be called many times (and under ``vmap``: that is ``jacrev``). With ``has_aux``:
    ``(output, vjp_fn, aux)``.
    """
    if not primals:
        raise RuntimeError("vjp(f, *primals): expected at least one primal")
    to_np = numpy_mode(tree_flatten(primals)[0])
    state = _VJP(func, primals, {}, tuple(range(len(primals))), has_aux, "vjp")
    out, aux = state.outputs()

    def vjp_fn(cotangents):
        grads = state.structure(state.pullback(cotangents))
        return from_numpy_tree(grads) if to_np else grads

    if to_np:
        out, aux = from_numpy_tree(out), from_numpy_tree(aux)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# --- forward mode --------------------------------------------------------------------------
def _tangent_pairs(primals, tangents, fname):
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals to be a tuple. "
                           "E.g. it should be valid to call f(*primals).")
    if not isinstance(tangents, (tuple, list)):
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected tangents to be a tuple.")
    p_flat, p_spec = tree_flatten(tuple(primals))
    t_flat, t_spec = tree_flatten(tuple(tangents))
    if p_spec != t_spec:
        raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals and tangents to "
                           f"have the same python structure. For example, if primals is a "
                           f"tuple of 3 tensors, tangents also must be. Got primals with "
                           f"structure {p_spec!r} and tangents with structure {t_spec!r}")
    ps = [diff_input(p, fname) for p in p_flat]
    ts = [to_tensor(t, fname) for t in t_flat]
    for p, t in zip(ps, ts):
        if t.dtype.is_complex and not p.dtype.is_complex:  # a cast would drop t.imag
            raise RuntimeError(f"{fname}(f, primals, tangents): a complex tangent "
                               f"({t.dtype.name}) for a real primal ({p.dtype.name}); make the "
                               "primal complex, or pass the real and imaginary parts as two "
                               "tangents")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{fname}(f, primals, tangents): Expected primals and tangents "
                               f"to have the same shape, got {list(p.shape)} and "
                               f"{list(t.shape)}")
    return ps, ts, p_spec, numpy_mode(p_flat)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(f(*primals), J @ tangents)``: the Jacobian-vector product by forward mode, in ONE
    evaluation of ``f`` (every op also computes its output's tangent).

    ``primals`` and ``tangents`` are tuples (of pytrees) with equal structure and shapes.
    Outputs that do not depend on the primals get zero tangents (``strict=True`` raises
    instead). With ``has_aux``: ``(output, jvp_out, aux)``. Nested (``jvp`` of ``jvp``),
    under ``vmap`` (that is ``jacfwd``) and composed with reverse mode.
    """
    ps, ts, spec, to_np = _tangent_pairs(primals, tangents, "jvp")
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(ps, ts)]
        out = func(*tree_unflatten(duals, spec))
        aux = None
        if has_aux:
            out, aux = split_aux(out, "jvp")
        o_flat, o_spec = tree_flatten(out)
        prim, tang = [], []
        for o in o_flat:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): expected f(*primals) to return "
                                   f"Tensors, got a {type(o).__name__}")
            p, t = forward_ad.unpack_dual(o)
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): the output of f "
                                       "is independent of the inputs")
                t = zeros_like_logical(p)
            prim.append(p)
            tang.append(t)
    res = (tree_unflatten(prim, o_spec), tree_unflatten(tang, o_spec))
    if has_aux:
        res = res + (aux,)
    return from_numpy_tree(res) if to_np else res


def linearize(func, *primals):
    """``(f(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` gives ``J @ tangents`` at the primals
    without evaluating ``f`` again.

    ``f`` runs once while the ops that depend on the primals are recorded; ``jvp_fn`` replays
    their jvp rules on the recorded values (the linearization), so each call costs the
    tangent arithmetic only. Primals must not be batched (call it outside ``vmap``).
    """
    flat, spec = tree_flatten(primals)
    ps = [diff_input(p, "linearize") for p in flat]
    if any(type(p) is batching.BatchedTensor for p in ps):
        raise batching.BatchingRuleError("linearize: batched primals (inside vmap) are not supported")
    to_np = numpy_mode(flat)
    lvl = forward_ad._enter(record=True)
    try:
        duals = [forward_ad.make_dual(p, forward_ad._SYMBOLIC) for p in ps]
        out = func(*tree_unflatten(duals, spec))
    finally:
        forward_ad.exit_dual_level(level=lvl.index)
    tape = lvl.tape
    o_flat, o_spec = tree_flatten(out)

    def jvp_fn(*tangents):
        t_flat, t_spec = tree_flatten(tangents)
        if t_spec != spec:
            raise RuntimeError(f"linearize: jvp_fn expects tangents structured like the primals "
                               f"{spec!r}, got {t_spec!r}")
        env = {}
        for d, t in zip(duals, t_flat):
            t = to_tensor(t, "linearize")
            if tuple(t.shape) != tuple(d.shape):
                raise RuntimeError(f"linearize: tangent of shape {list(t.shape)} for a primal of "
                                   f"shape {list(d.shape)}")
            env[id(d)] = t if t.dtype is d.dtype else t._cast(d.dtype)
        for op, args, attrs, outs in tape:
            ts = [env.get(id(a)) if isinstance(a, Tensor) else None for a in args]
            if all(t is None for t in ts):
                continue
            for o, t in zip(outs, forward_ad.jvp_of(op, args, attrs, outs, ts)):
                if t is not None:
                    env[id(o)] = t
        res = tree_unflatten([env[id(o)] if id(o) in env else zeros_like_logical(o)
                              for o in o_flat], o_spec)
        return from_numpy_tree(res) if to_np else res

    with no_grad():
        value = tree_unflatten([detach_keep_tangents(o) for o in o_flat], o_spec)
    return (from_numpy_tree(value) if to_np else value), jvp_fn


def hvp(func, primals, tangents):
    """``(f(*primals), H @ tangents)`` for a scalar function ``f``: the Hessian-vector product
    by forward-over-reverse (``jvp`` of ``grad``), costing about one gradient evaluation.

    ``primals`` and ``tangents``: tuples (of pytrees) as for ``jvp``; the product has the
    structure of ``primals`` (a tuple).
    """
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError("hvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    nums = tuple(range(len(primals)))

    def grad_and_out(*p):
        g, value = _grad_and_value(func, p, {}, nums, False, "hvp")
        return g, value

    (_, value), (hv, _) = jvp(grad_and_out, tuple(primals), tuple(tangents))
    return value, hv
