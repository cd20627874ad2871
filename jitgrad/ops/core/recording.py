"""Recording: the autograd node an op makes, its edges and what it saves for backward.

Note [one way to wire a node]: every node the graph gets from a forward call (an elementwise
or composite op's, a view's regenerated ``AsStridedBackward0``, an in-place op's and the
``CopySlices`` over its base, a custom ``Function``'s ctx, a compiled function's and a
``fori_loop``'s) is wired by ``record_node``, which sets every field the engine, hooks and
introspection read:

- ``_sequence_nr``: taken when the node is wired, before its edges are collected (as PyTorch's
  node constructor, before ``collect_next_edges``: a view's ``grad_fn`` regenerated while
  collecting comes after it); a custom Function's ctx keeps the one it got when it was made,
  before its forward ran (``numbered``);
- ``needs_input_grad``: per forward input, whether it needs a gradient;
- ``_next_edges``: per forward input, the ``(node, input_nr)`` its gradient flows into
  (``operand_edge``: a leaf's may be ``(leaf, 0)`` with ``_leaf_edges`` set, Note [lazy leaf
  edges] in graph/node.py), ``(None, 0)`` where none flows;
- ``_next_meta``: per forward input, the ``(shape, dtype)`` its gradient must have (None where
  none flows), which the engine sums and casts gradients to (Note [broadcast reduction]);
- ``_output_meta``: per forward output, its ``(shape, dtype)`` (None: not a Tensor);
- per differentiable output, ``grad_fn``, ``output_nr`` and ``requires_grad``
  (``take_history``, which also moves ``retain_grad`` to the new node, as PyTorch's
  ``update_tensor_hooks_on_new_gradfn``).

What a node saves (``_saved``, ``_attrs``) is its kind's own. The eager recorders of the common
ops (``record_elementwise``, ``record_unrolled``, ``record_one``) are ``record_node`` written
out for their one fresh output (which has no ``retain_grad`` to move and is output 0 already),
with metadata tuples shared between nodes (``_metas``, fewer objects for the cyclic collector):
tests/autograd/test_node_wiring.py builds every kind and checks the fields, and that these
give the fields ``record_node`` gives. The engine's own ``GraphRoot`` (graph/node.py) and
``FusedRegion`` (engine/regions.py) stand for no forward call and are not recorded here.

Note [view tracking]: a view op (``def_composite(..., view=True)``) whose NumPy result shares
memory with its input makes a view: ``_base`` is the root tensor (never itself a view), the
version counter is shared, the view joins ``root._views`` (``LiveViews``) and remembers the
version at which its ``grad_fn`` was made (``_view_version``) and whether grad mode was off
(``_view_nograd``). An in-place op recorded on the root or on any of its views rebases the
root's history (``ops/inplace.py``); a view's ``grad_fn`` is then stale, which
``gradient_edge`` notices by the version and fixes by asking ``ops/views.py`` (registered with
``upper.register_view_refresher``: the core imports no op family) for a fresh
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
    """Regenerate a stale view's ``grad_fn`` (Note [view tracking]): ``ops/views.py``'s
    ``refresh_view``, which it registers when imported (``upper.register_view_refresher``)."""
    refresher = upper.view_refresher
    if refresher is None:
        raise RuntimeError("jitgrad: a view's history changed but jitgrad.ops.views, which "
                           "regenerates it, is not imported (import jitgrad)")
    refresher(view)


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
    """A node of ``op``'s class for ``record_node`` to wire (``OpNode`` has no ``__init__``:
    the recorder sets every field)."""
    return op.node_cls()


def record_node(node, inputs, needs, outputs=(), grads=None, *, edges=None, next_meta=None,
                output_meta=None, needs_input_grad=None, numbered=False):
    """Wire ``node`` into the graph as the backward of a forward call (Note [one way to wire a
    node]) and return it.

    ``inputs``: the call's inputs, one per edge (a Tensor where ``needs`` says it needs a
    gradient; anything else may stand where it does not); ``needs``: per input, whether it
    does (a Tensor requiring grad). ``edges`` and ``next_meta``: the edges and their metadata,
    given instead of ``inputs`` (``CopySlices`` takes its op's); ``needs`` may then be None
    (whether each edge leads somewhere). ``outputs``: the call's outputs (a non-Tensor one has
    metadata None and no history); ``grads``: per output, whether it gets ``node`` as its
    ``grad_fn`` (None: each Tensor output of a floating or complex dtype); ``output_meta``:
    the outputs' metadata, when the outputs are not given (an in-place op's: its output gets
    its history after the write, ``take_history``). ``needs_input_grad``: the node's, where it
    is not ``needs`` (a custom Function's: per forward argument, Tensor or not).
    ``numbered``: keep the node's ``_sequence_nr`` (a custom Function's ctx, numbered when
    made, before its forward ran). ``needs`` and ``needs_input_grad`` are tuples."""
    if not numbered:
        node._sequence_nr = next_sequence_nr()
    if edges is None:
        connect(node, inputs, needs)
    else:
        edges = tuple(edges)
        if needs is None:
            needs = tuple(edge[0] is not None for edge in edges)
        node._next_edges = edges
        node._next_meta = tuple(next_meta) if next_meta is not None else (None,) * len(edges)
    node.needs_input_grad = needs if needs_input_grad is None else needs_input_grad
    if len(outputs) == 1 and isinstance(outputs[0], Tensor):  # the common call, unrolled
        o = outputs[0]
        data = o._data
        dtype = _dtype_of(data.dtype) or o.dtype
        if output_meta is None:
            output_meta = _metas(o)
        node._output_meta = output_meta
        if dtype.is_differentiable if grads is None else grads[0]:
            if o._retains_grad:
                take_history(o, node, 0)
            else:  # (``take_history`` without its call: nothing to move)
                o._grad_fn, o._output_nr, o._requires_grad = node, 0, True
        return node
    metas = []
    nr = 0
    for o in outputs:  # (one pass: metadata and history)
        if isinstance(o, Tensor):
            metas.append(_metas(o)[0])
            if o._data.dtype.kind in "fc" if grads is None else grads[nr]:
                take_history(o, node, nr)
        else:
            metas.append(None)
        nr += 1
    node._output_meta = tuple(metas) if output_meta is None else output_meta
    return node


def take_history(t, node, output_nr: int = 0) -> None:
    """Make Tensor ``t`` output ``output_nr`` of ``node`` (Note [one way to wire a node]): its
    ``grad_fn``, ``output_nr`` and ``requires_grad``, and its ``retain_grad`` hook moved over
    from the node it had (PyTorch's ``update_tensor_hooks_on_new_gradfn``: an in-place op's
    rebase, a view's regenerated ``grad_fn``)."""
    if t._retains_grad:
        old = t._grad_fn
        if old is not None and old is not node:
            hooks = old.__dict__.get("_retain_grad_hooks")
            fn = hooks.pop(t._output_nr, None) if hooks else None
            if fn is not None:
                node._set_retain_grad_hook(output_nr, fn)
    t._grad_fn, t._output_nr, t._requires_grad = node, output_nr, True


def connect(node, operands, needs, shared=None) -> None:
    """Edges and input metadata of ``node`` (``record_node``'s); ``shared``: the shared
    metadata tuples (``_shared``) of the ``(shape, dtype)`` every Tensor operand has, when
    known."""
    # one or two operands unrolled (the common ops; a loop with lists costs twice as much)
    count = len(operands)
    if count == 1 and needs[0]:
        o = operands[0]
        node._next_edges = (operand_edge(o, node),)
        node._next_meta = shared[0] if shared is not None else _metas(o)
        return
    if count == 2 and shared is not None:
        a, b = operands
        need_a, need_b = needs
        node._next_edges = (operand_edge(a, node) if need_a else _NO_EDGE,
                            operand_edge(b, node) if need_b else _NO_EDGE)
        node._next_meta = shared[need_a | need_b << 1] if need_a or need_b else (None, None)
        return
    edges, metas = [], []
    for k in range(len(operands)):  # (an index loop: no zip per recorded op)
        if needs[k]:
            o = operands[k]
            edges.append(operand_edge(o, node))
            if shared is not None:
                metas.append(shared[0][0])
                continue
            metas.append(_metas(o)[0])
        else:
            edges.append(_NO_EDGE)
            metas.append(None)
    node._next_edges, node._next_meta = tuple(edges), tuple(metas)


_NO_EDGE = (None, 0)
_dtype_of = BY_NUMPY.get
_weak = weakref.ref


# --- shared metadata tuples (Note [one way to wire a node]): a node's ``(shape, dtype)`` tuples
# are the same for every node over tensors of one shape and dtype, so nodes share them instead
# of making two to four tuples each that the cyclic collector would walk. ``_shared`` gives
# them: index 0 ``((shape, dtype),)``, the metadata of a node's one input or output; index
# ``mask`` (1 to 3) that of two inputs, bit k set where input k has an edge (the layout of
# ``fastpath._node_metas``); index 4 the dtype. The recorders look them up by shape alone
# (``_by_shape``: the first dtype seen with that shape, checked by identity; a jitgrad dtype
# hashes in Python, ~100 ns a look-up), as cheap as making the tuples; ``_shared`` keeps every
# dtype's (by its ``id``: the tuples hold the dtype, so its id stays its own). Bounded:
# programs of ever new shapes.
_META_LIMIT = 1024
_meta_tables: dict = {}  # id(dtype) -> {shape: shared tuples}
_by_shape: dict = {}  # shape -> the shared tuples of the last dtype looked up with it


def _shared(shape, dtype) -> tuple:
    """The shared metadata tuples of ``(shape, dtype)`` (a jitgrad dtype), also the ones
    ``_by_shape`` gives for ``shape`` when it has none yet."""
    table = _meta_tables.get(id(dtype))
    if table is None:
        table = _meta_tables[id(dtype)] = {}
    found = table.get(shape)
    if found is None:
        if len(table) >= _META_LIMIT:
            table.clear()
        meta = (shape, dtype)
        found = table[shape] = ((meta,), (meta, None), (None, meta), (meta, meta), dtype)
    if shape not in _by_shape:  # (the first dtype keeps a shape: no thrashing between two)
        if len(_by_shape) >= _META_LIMIT:
            _by_shape.clear()
        _by_shape[shape] = found
    return found


def _metas(t) -> tuple:
    """The shared ``((shape, dtype),)`` of Tensor ``t``: a node's metadata for its one input or
    output ``t``."""
    data = t._data
    dtype = _dtype_of(data.dtype) or t.dtype  # (the property's look-up, without its call)
    shape = data.shape
    try:
        found = _by_shape[shape]
        if found[4] is dtype:
            return found[0]
        return _meta_tables[id(dtype)][shape][0]  # (a second dtype of that shape)
    except KeyError:
        return _shared(shape, dtype)[0]


def tensor_meta(t) -> tuple:
    """``(shape, dtype)`` of Tensor ``t``: its metadata in a node (shared)."""
    return _metas(t)[0]


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
    known. ``record_node`` for one fresh output (Note [one way to wire a node])."""
    node = op.node_cls()
    node._sequence_nr = next_sequence_nr()
    node.needs_input_grad = needs
    try:  # (``_shared``'s tuples, without its call)
        shared = _by_shape[shape]
        if shared[4] is not out_dt:
            shared = _meta_tables[id(out_dt)][shape]
    except KeyError:
        shared = _shared(shape, out_dt)
    # ``dtype`` given: every Tensor operand has ``shape`` and ``dtype`` (Note [plain float path])
    connect(node, operands, needs, None if dtype is None else shared if dtype is out_dt
            else _shared(shape, dtype))
    if attrs:
        node._attrs = attrs
    node._output_meta = shared[0]
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
    inputs' at index ``mask`` (shared by the nodes of one plan and shape). ``record_node`` for
    one fresh output (Note [one way to wire a node])."""
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
        needs = tuple(needs)
        stashed = vars(ctx)
        if len(operands) == 1 and len(outs) == 1 and not op.save:
            record_one(op, operands[0], outs[0], {**attrs, **stashed} if stashed else attrs)
            return outs[0]
        node = op.node_cls()
        if op.save:
            node._saved = {}
        if op.edge_inputs is None:
            record_node(node, operands, needs, outs)
        else:  # edges for the differentiable inputs only; the backward still sees all needs
            record_node(node, [operands[k] for k in op.edge_inputs],
                        tuple(needs[k] for k in op.edge_inputs), outs, needs_input_grad=needs)
        node._attrs = {**attrs, **stashed}
        for name in op.save:
            if name != "result":
                node._saved[name] = SavedTensor(operands[op.inputs.index(name)])
        if "result" in op.save:
            node._saved["result"] = SavedTensor(outs[0], is_output=True)
    return outs[0] if op.n_outputs == 1 else tuple(outs)


def record_one(op, operand, out, attrs) -> None:
    """``record_composite``'s node for its commonest call: one Tensor ``operand`` that requires
    grad, one output ``out``, nothing saved (``op.save`` empty); ``attrs``: the node's
    attributes (the call's and what the forward stashed). ``record_node`` for one fresh
    output (Note [one way to wire a node])."""
    node = op.node_cls()
    node._sequence_nr = next_sequence_nr()
    node.needs_input_grad = _NEEDS_ONE
    node._next_edges = (operand_edge(operand, node),)
    data, out_data = operand._data, out._data
    dtype = _dtype_of(data.dtype) or operand.dtype  # (the property's look-up, without its call)
    # (fresh metadata tuples, not the shared ones: two dict look-ups by shape cost these
    # single-operand rows (slices, sums, rolls) ~0.1 us more than the tuples, measured 2026-12-07)
    node._next_meta = ((data.shape, dtype),)
    node._attrs = attrs
    out_dtype = out_data.dtype
    if out_dtype is data.dtype:  # a view or a reduction: its input's dtype, which requires grad
        node._output_meta = ((out_data.shape, dtype),)
        out._grad_fn, out._requires_grad = node, True
        return
    node._output_meta = _metas(out)
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
