"""Forward-mode automatic differentiation with dual tensors (PyTorch's
``torch.autograd.forward_ad``)::

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)

Each registry op applied to a dual tensor computes the tangent of its output at once, so a
Jacobian-vector product costs one forward pass (``jitgrad.func.jvp``/``jacfwd`` are built on it).

Note [jvp rules]: the derivative bodies of an elementwise row are linear in ``g``, so the tangent
of its output is ``sum_i body_i(t_i, ...)`` with input ``i``'s tangent in place of ``g``: the
same bodies serve the compiled backward, ``create_graph`` and forward mode. A composite row
gives ``jvp=LINEAR`` (a linear op: the op applied to the tangents) or its own rule
``jvp(tangents, primals, outs, **attrs)``. Rules are Tensor code: under grad mode they record a
graph (reverse-over-forward works), tangents may be duals of an enclosing level (higher order)
or batched tensors (``jacfwd`` is vmap over jvp, with the primal computed once).

Note [dual levels]: unlike PyTorch, levels nest (jvp of jvp, jacfwd of jacfwd). Tangents are
kept per level, keyed by tensor identity. The tangent at level ``k`` of an op's output is
computed with level ``k`` and the levels inside it hidden, so a tangent computation only
carries tangents of enclosing levels (the second-order terms) and levels never mix up
("perturbation confusion"). Tangents are plain tensors attached to plain tensors; a batched
tensor's tangent is its inner tensor's (``func/_batching.py``).

An in-place op on a dual tensor is not tracked yet: reading the tangent of a tensor whose data
changed since its tangent was set raises instead of giving a stale tangent.

Forward AD sees every registry op through the transform dispatcher (``autograd/transforms.py``,
Note [transform hooks]), where it registers its levels and its propagation at import.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from collections import namedtuple
from types import SimpleNamespace

from . import transforms

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])

#: stands for "has a tangent" while ``linearize`` records (no tangent is computed then)
_SYMBOLIC = object()


class _Level:
    """Tangents of one dual level: ``id(tensor) -> (weakref, tangent, version)``.

    Note [saved outputs keep tangents]: an op that saves its output for backward gets back a
    new Tensor object (``SavedTensor.unpack``) with the same ``grad_fn`` and ``output_nr``, so
    tangents are also found by ``(grad_fn, output_nr)``: forward-over-reverse through
    ``exp``, ``tanh``, ``softmax``... needs the tangent of the saved result.
    """

    __slots__ = ("index", "tangents", "by_node", "tape")

    def __init__(self, index, record=False):
        self.index = index
        self.tangents: dict = {}
        self.by_node: dict = {}  # (id(grad_fn), output_nr) -> (weakref(node), tangent, version)
        self.tape = [] if record else None  # linearize: (op, args, attrs, outs) per op

    def get(self, t):
        entry = self.tangents.get(id(t))
        if entry is not None and entry[0]() is t and t._version_counter.value == entry[2]:
            return entry[1]
        node = t._grad_fn
        if node is not None:
            alt = self.by_node.get((id(node), t._output_nr))
            if alt is not None and alt[0]() is node and t._version_counter.value == alt[2]:
                return alt[1]
        if entry is None or entry[0]() is not t:
            return None
        raise RuntimeError(
            f"forward AD: a dual tensor of shape {list(t.shape)} was modified by an in-place "
            f"operation after its tangent was set (version {t._version_counter.value}, "
            f"expected {entry[2]}); in-place operations on dual tensors are not supported: "
            "use the out-of-place op")

    def set(self, t, tangent) -> None:
        version = t._version_counter.value
        self.tangents[id(t)] = (weakref.ref(t, _dropper(self.tangents, id(t))), tangent, version)
        node = t._grad_fn
        if node is not None:
            key = (id(node), t._output_nr)
            self.by_node[key] = (weakref.ref(node, _dropper(self.by_node, key)), tangent, version)

    def clear(self) -> None:
        self.tangents.clear()
        self.by_node.clear()


def _dropper(table, key):
    """A weakref callback removing ``table[key]`` if it still belongs to the dead object."""
    def drop(ref):
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            del table[key]
    return drop


_levels: list = []  # open dual levels, outermost first (global, as PyTorch's)


class _Local(threading.local):
    """Per-thread state: ``limit``: only ``levels[:limit]`` receive tangents (None: all; Note
    [dual levels])."""

    limit = None


_local = _Local()


def _visible() -> int:
    limit = _local.limit
    return len(_levels) if limit is None else min(limit, len(_levels))


_ops = transforms.ops_dispatch


# --- tangent propagation -------------------------------------------------------------------
def has_tangent(t) -> bool:
    """Whether ``t`` carries a forward-mode tangent at an open (visible) dual level: code that
    chooses a non-differentiable path when ``requires_grad`` is False must also ask this."""
    return bool(_levels) and any(lvl.get(t) is not None for lvl in _levels[:_visible()])


def needs_derivative(t) -> bool:
    """``t`` is a Tensor that requires grad or carries a tangent."""
    return isinstance(t, _ops().Tensor) and (t.requires_grad or has_tangent(t))


def _propagate(op, args, attrs, out) -> None:
    if not op.differentiable:
        return
    Tensor = _ops().Tensor
    outs = out if isinstance(out, tuple) else (out,)
    local = _local
    n = _visible()
    for k in range(n):
        lvl = _levels[k]
        tangents = [lvl.get(a) if isinstance(a, Tensor) else None for a in args]
        if all(t is None for t in tangents):
            continue
        if not any(o.dtype.is_differentiable for o in outs):  # floating point or complex
            return
        if lvl.tape is not None:  # linearize records the op; tangents come later
            lvl.tape.append((op, args, attrs, outs))
            for o in outs:
                if o.dtype.is_differentiable:
                    lvl.set(o, _SYMBOLIC)
            continue
        prev, local.limit = local.limit, k  # Note [dual levels]
        try:
            result = jvp_of(op, args, attrs, outs, tangents)
        finally:
            local.limit = prev
        for o, t in zip(outs, result):
            if t is not None and o.dtype.is_differentiable:
                lvl.set(o, t)


def jvp_of(op, args, attrs, outs, tangents) -> tuple:
    """The output tangents of one registry op call (Note [jvp rules]): one entry per output,
    None where there is none. ``tangents`` has one entry (Tensor or None) per argument."""
    from ..ops.core.bodies import negate, passthrough
    from ..ops.core.registry import LINEAR

    d = _ops()
    Tensor = d.Tensor
    if op.elementwise and op.jvp is None:
        out = outs[0]
        total = None
        for name, t in zip(op.inputs, tangents):
            body = op.backward.get(name)
            if t is None:
                continue
            if body is None:  # reverse mode refuses this input too: never a lost tangent
                raise NotImplementedError(
                    f"forward-mode AD: {op.name} ({op.node_name}) has no derivative with "
                    f"respect to its input '{name}', which carries a tangent; pass it as a "
                    "constant (without a tangent)")
            if body is passthrough:
                c = t
            elif body is negate:
                c = -t
            else:
                params = [out if p == "result" else attrs[p] if p in op.attrs
                          else d.operand(args[op.inputs.index(p)], op.name)
                          for p in op.params[name]]
                c = body(t, *params)
                if not isinstance(c, Tensor):
                    c = d.full_like(t, c)
            total = c if total is None else total + c
        return (_fit(total, out),)
    if op.jvp is None:
        raise NotImplementedError(
            f"forward-mode AD: no jvp rule for op '{op.name}' ({op.node_name}); it cannot be used "
            "with dual tensors (jitgrad.func.jvp, jacfwd, hessian, hvp)")
    if op.jvp == LINEAR:
        primals = [d.tensor_operand(a, op.name) for a in args]
        ts = [t if t is not None else d.zeros(p.shape, p.dtype) for t, p in zip(tangents, primals)]
        result = d.composite(op, *ts, **attrs)
    else:
        primals = [d.tensor_operand(a, op.name) for a in args]
        result = op.jvp(tangents, primals, outs, **attrs)
    result = result if isinstance(result, tuple) else (result,)
    return tuple(_fit(t, o) if t is not None else None for t, o in zip(result, outs))


def _fit(t, out):
    """A tangent shaped and typed like ``out`` (broadcast contributions are expanded)."""
    if t is None:
        return None
    if t.dtype is not out.dtype:
        t = t._cast(out.dtype)
    if tuple(t.shape) != tuple(out.shape):
        from ..ops import shape

        t = shape.expand(t, out.shape)
    return t


# --- public API ----------------------------------------------------------------------------
def enter_dual_level() -> int:
    """Open a new dual level and return its index. Levels nest (unlike PyTorch's, where a
    second level raises): the inner one carries tangents of tangents."""
    return _enter(False).index


def _enter(record: bool) -> _Level:
    lvl = _Level(len(_levels), record)
    _levels.append(lvl)
    transforms.refresh()
    return lvl


def exit_dual_level(*, level=None) -> None:
    """Close the innermost dual level: its tangents are dropped."""
    if not _levels:
        raise RuntimeError("exit_dual_level: no dual level is open")
    if level is not None and level != _levels[-1].index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    lvl = _levels.pop()
    lvl.clear()
    transforms.refresh()


class dual_level:
    """Context manager (and decorator) scoping a dual level: ``make_dual``/``unpack_dual``
    use it, and its tangents are dropped on exit."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)

        return wrapper


def _resolve(level, what: str) -> _Level:
    if not _levels:
        raise RuntimeError(f"Trying to {what} but no level exists, make sure to "
                           "enter_dual_level() first.")
    if level is None:
        return _levels[-1]
    for lvl in _levels:
        if lvl.index == level:
            return lvl
    raise RuntimeError(f"{what}: dual level {level} is not open")


@contextlib.contextmanager
def _hidden(lvl: _Level):
    """Context in which ``lvl`` and the levels inside it get no tangents (this thread)."""
    prev = _local.limit
    _local.limit = lvl.index if prev is None else min(prev, lvl.index)
    try:
        yield
    finally:
        _local.limit = prev


def _alias(t):
    """A new tensor viewing ``t`` (``ViewBackward0`` when recorded, as PyTorch's make_dual)."""
    from ..ops import shape

    return _ops().composite(shape.VIEW, t, shape=tuple(t.shape))


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient at ``level`` (the
    innermost open level by default). ``tangent`` must have the tensor's shape; it is converted
    to the tensor's dtype. Ops on the result propagate the tangent (``t_out = J t``)."""
    d = _ops()
    lvl = _resolve(level, "create a dual Tensor for forward AD")
    tensor = d.tensor_operand(tensor, "make_dual")
    if not tensor.dtype.is_differentiable:
        raise ValueError("Expected primal to be floating point or complex, but got: "
                         f"jitgrad.{tensor.dtype.name}")
    if tangent is not _SYMBOLIC:
        tangent = d.tensor_operand(tangent, "make_dual")
        if not tangent.dtype.is_differentiable:
            raise ValueError("Expected tangent to be floating point or complex, but got: "
                             f"jitgrad.{tangent.dtype.name}")
        if tuple(tangent.shape) != tuple(tensor.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
                f"while the given forward gradient is of size {list(tangent.shape)}.")
        if tangent.dtype is not tensor.dtype:
            tangent = tangent._cast(tensor.dtype)
    _batching = transforms.batching
    if _batching is not None and _batching.is_batched(tensor):
        # Note [dual levels]: a batched tensor's tangent lives on its inner tensor
        lev = _batching.level_of(tensor)
        inner_t = tangent if tangent is _SYMBOLIC else _batching.expose(tangent, lev)
        return _batching.wrap_at(make_dual(_batching.inner(tensor), inner_t, level=lvl.index),
                                 lev)
    with _hidden(lvl):
        dual = _alias(tensor)
    lvl.set(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at ``level``: the primal is a view without that
    level's tangent, the tangent is None when the tensor has none."""
    if not _levels:
        return UnpackedDualTensor(tensor, None)
    lvl = _resolve(level, "unpack a dual Tensor")
    _batching = transforms.batching
    if _batching is not None and _batching.is_batched(tensor):
        lev = _batching.level_of(tensor)
        p, t = unpack_dual(_batching.inner(tensor), level=lvl.index)
        return UnpackedDualTensor(_batching.wrap_at(p, lev),
                                  None if t is None else _batching.wrap_at(t, lev))
    t = lvl.get(tensor)
    if t is None or t is _SYMBOLIC:
        return UnpackedDualTensor(tensor, None)
    with _hidden(lvl):
        primal = _alias(tensor)
    return UnpackedDualTensor(primal, t)


# --- helpers for jitgrad.func ----------------------------------------------------------------
def _has_levels() -> bool:
    return bool(_levels)


def levels_open() -> bool:
    """Whether a dual level is open: forward-mode tangents may flow through the ops (code that
    runs ops under ``no_grad`` and rebuilds their results must then let the ops run plainly)."""
    return bool(_levels)


def _copy_tangents(src, dst) -> None:
    """Give ``dst`` (a tensor with ``src``'s value) the tangents ``src`` has at every open
    level (what a detach that keeps forward gradients needs)."""
    for lvl in _levels[:_visible()]:
        t = lvl.get(src)
        if t is not None:
            lvl.set(dst, t)


def detach_keep_tangents(t):
    """``t`` without reverse-mode history but with its forward-mode tangents (and batching).

    Note [backward inside a dual level]: as in PyTorch, a backward run inside a dual level
    computes with dual tensors: the gradient formulas are registry ops, so the tangents of the
    grad_outputs and of the saved values flow into the gradients (forward-over-reverse needs
    exactly that). ``autograd.grad`` detaches its grad_outputs and results from the reverse
    graph unless ``create_graph``; it keeps their tangents through this function."""
    _batching = transforms.batching
    if _batching is not None and _batching.is_batched(t):
        return _batching.wrap(detach_keep_tangents(_batching.inner(t)), _batching.level_of(t))
    d = t.detach()
    _copy_tangents(t, d)
    return d


def _inplace_update(target, result) -> None:
    """After ``result`` was written into ``target`` in place: ``target`` takes over its
    tangents (for ``ops/inplace.py``; until it calls this, the tangent check raises)."""
    for lvl in _levels:
        t = lvl.get(result)
        if t is not None:
            lvl.set(target, t)


# forward AD's interface for in-place writes, handed to ops with the transform hook: ops/inplace.py
# moves tangents through it without importing this module (Note [upper registrations])
_INPLACE_TANGENTS = SimpleNamespace(has_levels=_has_levels, inplace_update=_inplace_update,
                                    copy_tangents=_copy_tangents)
transforms.set_forward_mode(_levels, _propagate, _INPLACE_TANGENTS)
