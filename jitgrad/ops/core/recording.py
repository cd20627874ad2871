"""Recording: the autograd node an op makes, its edges and what it saves for backward.

Note [view tracking]: a view op (``def_composite(..., view=True)``) whose NumPy result shares
memory with its input makes a view: ``_base`` is the root tensor (never itself a view), the
version counter is shared, the view joins ``root._views`` (``LiveViews``) and remembers the
version at which its ``grad_fn`` was made (``_view_version``) and whether grad mode was off
(``_view_nograd``). An in-place op recorded on the root or on any of its views rebases the
root's history (``ops/inplace.py``); a view's ``grad_fn`` is then stale, which
``gradient_edge`` notices by the version and fixes by asking ``ops/views.py`` for a fresh
``AsStridedBackward0`` over the root's current history (PyTorch regenerates it the same way).
"""
from __future__ import annotations

import weakref

import numpy as np

from ...graph.grad_mode import is_grad_enabled
from ...graph.node import SavedTensor, next_sequence_nr
from ...dtypes import BY_NUMPY
from . import upper
from .devices import shares_memory

_ndarray = np.ndarray

# the registered class and its bound ``_make``: ops/core/upper.py keeps them current (Note [upper
# registrations])
Tensor = make_tensor = None
upper.bind(globals(), "Tensor", "make_tensor")


def refresh_view(view) -> None:
    """Regenerate a stale view's ``grad_fn`` (Note [view tracking]; ``ops/views.py``, imported
    on this rare path because it builds on this module)."""
    from .. import views

    views.refresh_view(view)


def gradient_edge(t) -> tuple:
    """The ``(node, input_nr)`` a gradient for ``t`` flows into (Note [view tracking])."""
    if t._base is not None and t._view_version != t._version_counter.value:
        refresh_view(t)
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (t._grad_accumulator(), 0)
    return (None, 0)


def operand_edge(o, node) -> tuple:
    """``gradient_edge(o)`` of an operand of ``node`` that requires grad, the common cases
    inline: a result of another op (not a view: no stale history to check), or a leaf: its
    live sink, or ``(o, 0)`` with ``node._leaf_edges`` set when it has none (Note [lazy leaf
    edges] in graph/node.py)."""
    if o._base is None:
        source = o._grad_fn
        if source is not None:
            return (source, o._output_nr)
        ref = o._grad_acc_ref
        if ref is not None:
            sink = ref()
            if sink is not None:
                return (sink, 0)
        node._leaf_edges = True
        return (o, 0)
    return gradient_edge(o)


def new_node(op):
    """A node of ``op``'s class, numbered in the backward order, for a recorder that sets its
    fields next (``OpNode`` has no ``__init__``: the edges, metadata, ``needs_input_grad``,
    attributes and saved values are the recorder's)."""
    node = op.node_cls()
    node._sequence_nr = next_sequence_nr()
    return node


def connect(node, operands, needs, meta=None) -> None:
    """Edges and input metadata of ``node``; ``meta``: the ``(shape, dtype)`` every Tensor
    operand has, when known (one tuple shared by the node's metadata)."""
    node.needs_input_grad = needs
    # one or two operands unrolled (the common ops; a loop with lists costs twice as much)
    count = len(operands)
    if count == 1 and needs[0]:
        o = operands[0]
        node._next_edges = (operand_edge(o, node),)
        node._next_meta = (meta or (o._data.shape, o.dtype),)
        return
    if count == 2 and meta is not None:
        a, b = operands
        need_a, need_b = needs
        node._next_edges = (operand_edge(a, node) if need_a else _NO_EDGE,
                            operand_edge(b, node) if need_b else _NO_EDGE)
        node._next_meta = (meta if need_a else None, meta if need_b else None)
        return
    edges, metas = [], []
    for k in range(len(operands)):  # (an index loop: no zip per recorded op)
        if needs[k]:
            o = operands[k]
            edges.append(operand_edge(o, node))
            metas.append(meta or (o._data.shape, o.dtype))
        else:
            edges.append(_NO_EDGE)
            metas.append(None)
    node._next_edges, node._next_meta = tuple(edges), tuple(metas)


_NO_EDGE = (None, 0)
_dtype_of = BY_NUMPY.get
_weak = weakref.ref


def needs_grad(operands) -> tuple:
    """``needs_input_grad`` of a node over ``operands``: which are Tensors requiring grad."""
    return tuple(isinstance(o, Tensor) and o._requires_grad for o in operands)


def save_plan(op, needs: tuple) -> tuple:
    """``(name, source)`` pairs an elementwise node saves for these ``needs_input_grad``:
    source is an input index, "attr" or "result". Computed once per op and needs pattern."""
    plan = op.save_plans.get(needs)
    if plan is None:
        names = sorted({p for inp, need in zip(op.inputs, needs) if need
                        for p in op.params.get(inp, ())})
        plan = op.save_plans[needs] = tuple(
            (n, "attr" if n in op.attrs else "result" if n == "result" else op.inputs.index(n))
            for n in names)
    return plan


def record_elementwise(op, operands, needs, attrs, out, shape, out_dt, dtype=None) -> None:
    """Give ``out`` the node of elementwise ``op`` over ``operands`` (some of which need grad;
    ``attrs``: the row's attributes, None or empty when it has none),
    saving what its backward reads (``save_plan``). ``dtype``: every Tensor operand's, when
    known."""
    node = op.node_cls()
    node._sequence_nr = next_sequence_nr()
    meta = (shape, out_dt)
    # ``dtype`` given: every Tensor operand has ``shape`` and ``dtype`` (Note [plain float path])
    connect(node, operands, needs, None if dtype is None else meta if dtype is out_dt
            else (shape, dtype))
    if attrs:
        node._attrs = attrs
    node._output_meta = (meta,)
    out._grad_fn = node
    out._requires_grad = True
    plan = op.save_plans.get(needs)
    if plan is None:
        plan = save_plan(op, needs)
    if plan:
        node._saved = saved_values(plan, operands, attrs, out)


# needs_input_grad of one operand, and of two by bit mask (bit 0: the first needs grad, bit 1:
# the second)
_NEEDS_ONE = (True,)
_NEEDS_TWO = (None, (True, False), (False, True), (True, True))


def record_unrolled(op, x, y, mask, saves, out, metas) -> None:
    """``record_elementwise`` for ``fastpath.unrolled_fast``: ``op`` over ``x`` alone (``y``
    None) or ``x`` and ``y`` (a Tensor or a Python number), every Tensor operand of the output's
    shape and dtype; ``mask``: bit k set where operand k requires grad; ``saves``: the
    ``save_plan`` for it; ``metas``: the node's metadata tuples, the output's at index 0 and the
    inputs' at index ``mask`` (shared by the nodes of one plan and shape)."""
    node = op.node_cls()
    node._sequence_nr = next_sequence_nr()
    node._next_meta = metas[mask]
    node._output_meta = metas[0]
    if y is None:
        node.needs_input_grad = _NEEDS_ONE
        node._next_edges = (operand_edge(x, node),)
    else:
        node.needs_input_grad = _NEEDS_TWO[mask]
        node._next_edges = (operand_edge(x, node) if mask & 1 else _NO_EDGE,
                            operand_edge(y, node) if mask & 2 else _NO_EDGE)
    out._grad_fn = node
    out._requires_grad = True
    if saves:
        node._saved = saved_values(saves, (x, y), None, out)


def saved_values(plan, operands, attrs, out) -> dict:
    """The saved values of an elementwise node by ``plan`` (``save_plan``) from its
    ``operands``, ``attrs`` and output ``out``."""
    saved = {}
    for name, source in plan:
        if source == "attr":
            saved[name] = attrs[name]
        elif source == "result":
            saved[name] = SavedTensor(out, is_output=True)
        else:
            v = operands[source]
            saved[name] = SavedTensor(v) if isinstance(v, Tensor) else v
    return saved


class CompositeCtx:
    """What a composite forward may stash for its backward (copied onto the node)."""


def record_composite(op, operands, arrays, ctx, attrs, outs):
    """Views, alias copies and the node of a composite op whose outputs are ``outs``."""
    if not op.view:  # (a view op's first output is made by ``view_tensor``)
        for o in outs:  # a result aliasing an input would let an in-place op on it write there
            d = o._data
            if getattr(d, "base", d) is None:
                for a in arrays:
                    if d is a:
                        break
                else:
                    continue  # a fresh array of its own (the common case)
            for a in arrays:
                if d is a or shares_memory(d, a):
                    o._data = d.copy()
                    break
    if not (op.differentiable and is_grad_enabled()):
        return outs[0] if op.n_outputs == 1 else tuple(outs)
    needs = []
    wanted = False
    for o in operands:  # ``needs_grad``, without a generator per call
        need = isinstance(o, Tensor) and o._requires_grad
        needs.append(need)
        wanted = wanted or need
    if wanted:
        if len(operands) == 1 and len(outs) == 1 and not op.save:
            record_one(op, operands[0], outs[0], {**attrs, **vars(ctx)})
            return outs[0]
        node = new_node(op)
        if op.save:
            node._saved = {}
        connect(node, operands, tuple(needs))
        node._attrs = {**attrs, **vars(ctx)}
        for name in op.save:
            if name != "result":
                node._saved[name] = SavedTensor(operands[op.inputs.index(name)])
        if len(outs) == 1:  # (the common case, without the loops)
            o = outs[0]
            node._output_meta = ((o._data.shape, o.dtype),)
            if o._data.dtype.kind in "fc":
                o._grad_fn, o._requires_grad = node, True
        else:
            meta = []
            for o in outs:
                meta.append((o._data.shape, o.dtype))
            node._output_meta = tuple(meta)
            for nr, o in enumerate(outs):
                if o._data.dtype.kind in "fc":
                    o._grad_fn, o._requires_grad, o._output_nr = node, True, nr
        if "result" in op.save:
            node._saved["result"] = SavedTensor(outs[0], is_output=True)
    return outs[0] if op.n_outputs == 1 else tuple(outs)



def record_one(op, operand, out, attrs) -> None:
    """``record_composite``'s node for its commonest call: one Tensor ``operand`` that requires
    grad, one output ``out``, nothing saved (``op.save`` empty); ``attrs``: the node's
    attributes (the call's and what the forward stashed)."""
    node = op.node_cls()  # (``new_node``, inline: the recorder of slices, sums, rolls)
    node._sequence_nr = next_sequence_nr()
    node.needs_input_grad = _NEEDS_ONE
    node._next_edges = (operand_edge(operand, node),)
    data, out_data = operand._data, out._data
    dtype = _dtype_of(data.dtype) or operand.dtype  # (the property's look-up, without its call)
    node._next_meta = ((data.shape, dtype),)
    node._attrs = attrs
    out_dtype = out_data.dtype
    if out_dtype is data.dtype:  # a view or a reduction: its input's dtype, which requires grad
        node._output_meta = ((out_data.shape, dtype),)
        out._grad_fn, out._requires_grad = node, True
        return
    node._output_meta = ((out_data.shape, out.dtype),)
    if out_dtype.kind in "fc":
        out._grad_fn, out._requires_grad = node, True


def view_tensor(base, array, grad_enabled):
    """The Tensor of ``array``, the result of a view op on ``base`` (a basic index, a
    transpose, a reshape; CPU or CUDA) made with grad mode ``grad_enabled``: a view of
    ``base``'s root when it shares ``base``'s memory (an empty one may not), else a Tensor of
    its own. A view shares the version counter, has the root as ``_base`` and is registered in
    ``root._views`` (Note [view tracking])."""
    data = base._data
    if not ((type(array) is _ndarray and array.base is data) or shares_memory(array, data)):
        return make_tensor(array)
    counter = base._version_counter
    view = make_tensor(array, False, counter)
    root = base._base
    nograd = not grad_enabled  # PyTorch's CreationMeta.NO_GRAD_MODE, inherited by views of views
    if root is None:
        root = base
        view._view_nograd = nograd
    else:
        view._view_nograd = nograd or base._view_nograd
    view._base = root
    view._view_version = counter.value
    views = root._views
    if views is None:
        views = root._views = LiveViews()
    refs = views._refs  # the registration (``LiveViews``): one view per slice of the eager path
    refs.append(_weak(view))
    if len(refs) >= views._sweep_at:
        views.sweep()
    return view


# a sweep costs about as much as 8 appends: sweeping at 32 references (dead or alive), not 8,
# makes it ~1% of a slice that is dropped at once; between sweeps a base keeps up to 32 dead
# references, or as many as it has live views
_FIRST_SWEEP = 32


class LiveViews:
    """The live views of one base, held weakly (``root._views``, Note [view tracking]).

    Views are made far more often than anything asks for them (an in-place write on the base,
    ``.data =``, resizing an ``out=`` tensor), so registering one (``view_tensor``) is a weak
    reference and an append (a ``WeakSet`` costs a callback per view); dead references are
    dropped whenever the list has doubled since the last sweep."""

    __slots__ = ("_refs", "_sweep_at")

    def __init__(self):
        self._refs = []
        self._sweep_at = _FIRST_SWEEP

    def sweep(self) -> None:
        """Drop the references of dead views (once the list has doubled since the last)."""
        refs = self._refs
        refs[:] = [ref for ref in refs if ref() is not None]
        self._sweep_at = max(_FIRST_SWEEP, 2 * len(refs))

    def discard(self, view) -> None:
        self._refs = [ref for ref in self._refs if ref() is not None and ref() is not view]

    def __iter__(self):
        """The views still alive (a list: safe to modify them while iterating)."""
        return iter([v for v in (ref() for ref in self._refs) if v is not None])

    def __bool__(self) -> bool:
        return any(ref() is not None for ref in self._refs)
