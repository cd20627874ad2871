"""Tracing: run the user's function once, eagerly, recording every registry op into a Graph.

Note [compile tracing]: ``jitgrad.compile`` traces by running the function through the normal
dispatch while this thread's registry ops go through ``Tracer.on_op`` (the transform
dispatcher, ``autograd/transforms.py`` ``set_tracer``). The run is a real eager run (its outputs are
the first call's result), so the recorded graph holds exactly the ops, rows and attributes eager
execution chose: the compiled program cannot disagree with eager about semantics.

What the tracer cannot see it refuses, by raising ``GraphBreak`` inside the function before
anything changes:

- values leaving the graph: every read of a tensor's values for Python goes through
  ``Tensor._host`` (``item``, ``bool``, ``numpy``, ``tolist``, ``repr``, and the glue code
  of ``jitgrad.numpy``/``scipy``/``nn``...), which calls the host-read hook registered with
  ``ops/core/upper.py``; hooks registered on traced tensors;
- ops whose output shape depends on input values (``OpDef.value_dependent_shape``: mask
  indexing, ``nonzero``...): a program has fixed shapes;
- writes it cannot functionalise: in-place ops and ``.grad`` changes become values and a
  write-back epilogue (Note [functionalised writes] in mutations.py); ``out=``, raw writes
  (``guard_writes``: ``nn.init``, buffers), writes through views are refused (``ops/core/
  upper.py``'s ``write_guard``);
- random draws from jitgrad's generators (``ops/creation.py``'s ``generator`` calls the
  random hook);
- a tensor made during the trace (``Tensor._make`` reports each to the creation hook) by
  anything but a registry op or a constant constructor (``upper.constant_maker``: ``zeros``,
  ``full``, ``arange``, ``tensor`` of Python data...): a value computed outside the rows (a
  custom ``autograd.Function``).

Note [value guards]: an integer or boolean tensor that is an argument or a closure (an index,
a mask; at most ``VALUE_GUARD_MAX`` elements) may be read in Python: its values join the
program's guards (``Program.values_hold``), and a call with other values traces again (up to
``MAX_TRACES``, then eager). Values computed inside the function, and float data, are refused.

Tensors the function reads that were not made during the trace (closures, globals, module
parameters) are implicit inputs: each call reads their current values. Python floats passed as
arguments are runtime inputs: they enter as 0-d placeholder tensors, and their values are handed
to each op as Python floats (so promotion is that of a Python scalar); a placeholder used as a
Python number (``float(a)``, ``if a > 0``) asks for a retrace with its value in the cache key.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from ..autograd import transforms
from ..engine import engine
from ..graph.grad_mode import enable_grad
from ..ops.core import upper
from ..ops.core.recording import save_plan
from ..tensor import Tensor
from .graph import Graph, Node
from ..optim import optimizer as _optimizer
from .mutations import Mutations, OptimizerHooks

class _Local(threading.local):
    tracer = None  # the trace this thread runs (a class default: see program._Local)


_local = _Local()


class GraphBreak(BaseException):
    """Capture must stop here. A BaseException, so ``except Exception`` in user code cannot
    swallow it (the trace is also marked failed before it is raised)."""

    def __init__(self, reason: str, specialize=None):
        super().__init__(reason)
        self.reason = reason
        self.specialize = specialize  # the scalar input to retrace with its value in the key

    @property
    def where(self) -> str:
        """``file:line`` of the innermost frame outside jitgrad the break passed through (the
        user's source line), read from the exception's traceback."""
        found = "<unknown>"
        tb = self.__traceback__
        while tb is not None:
            name = tb.tb_frame.f_globals.get("__name__", "")
            if not (name == "jitgrad" or name.startswith("jitgrad.")):
                found = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
            tb = tb.tb_next
        return found


def current():
    """The trace this thread runs, or None."""
    return _local.tracer


# Note [random rows]: the draws of dropout, ``rand_like`` and ``randn_like`` (and, while a trace
# may run, of ``rand``, ``randn`` and the normal and uniform ``rsample``s: ``creation.row_draw``)
# are rows (``ops/random_rows.py``, ``random=True``) whose forward draws from the default
# generator. The trace records them as it records any op, and the program calls the row's
# forward at each call, in the traced order, so a compiled call draws what the eager call would
# have drawn under the same seed and leaves the generator where eager would. A draw is never
# folded as a constant, never dropped as dead (``Program``), and refused inside a loop body or
# a cond branch, whose steps are traced once (a branch not taken would draw) and recomputed by
# the backward (a second draw). When a trace breaks, the generator is set back to where it was
# before the trace, so the eager run that follows draws as a plain eager call (api.py). The
# other draws (explicit generators, ``randint``, the other distributions) break the trace
# before drawing.
def _random_draw():
    """``upper.random_hook``: a draw from jitgrad's generators on this thread breaks the trace
    (before drawing); other threads draw as usual."""
    if current() is not None:
        raise _fail(GraphBreak("a random op (jitgrad's random generator was used): "
                               "only dropout, rand, randn, rand_like, randn_like and the "
                               "normal and uniform rsample on the default generator are "
                               "captured"))


def _fail(exc: GraphBreak) -> GraphBreak:
    tracer = current()
    if tracer is not None and tracer.failure is None:
        tracer.failure = exc
    return exc


_install_lock = threading.Lock()
_active = [0]


def _created(t):
    """``upper.creation_hook``: every tensor made while this thread traces is noted, as a
    constant when a constant constructor (``upper.constant_maker``) made it or it wraps a
    constant's array (``detach``), else as a value the trace did not see computed."""
    tracer = current()
    if tracer is not None and not tracer.suspended:
        data = t._data
        constant = upper.making_constant() or id(data) in tracer.constant_arrays
        tracer.made[id(t)] = (t, constant)
        if constant:
            tracer.constant_arrays[id(data)] = data


def _host_read(t, what):
    """``upper.host_read_hook``: Python reads ``t``'s values (``Tensor._host``). A value of
    the trace, or a tensor from outside it (a closure or global: its values would be baked
    in), stops the capture; a float argument used as a number asks for a retrace with its
    value in the key; a constant made inside the trace may be read."""
    tracer = current()
    if tracer is None or tracer.suspended:
        return
    tracer.mutations.finish()
    vid = tracer.ids.get(id(t))
    if vid is None:
        made = tracer.made.get(id(t))
        if made is not None and made[1] and t._grad_fn is None:
            return  # a constant: the same at every call
        if made is None and id(t) not in tracer.proxies:  # a closure no op has read yet
            if _guardable(t):
                vid = tracer.suspended_call(tracer._external, t)[0]
            else:
                raise _fail(GraphBreak(f"{what} reads the values of a tensor from outside "
                                       "the function (a closure, global or attribute) in "
                                       "Python"))
    if vid is None:  # made during the trace by no op: a value computed outside the rows
        raise _fail(GraphBreak(f"{what} reads a tensor computed outside jitgrad's ops"))
    if vid in tracer.static:
        return  # a constant, or computed from constants only: the same at every call
    if tracer.graph.values[vid].kind in ("input", "closure") and _guardable(t):
        # Note [value guards]: an index or mask the caller passes (or a closure holds) is
        # read in Python; the program is kept for calls whose value is the same
        tracer.value_guards.setdefault(vid, np.array(t._data.get() if t.is_cuda else t._data))
        return
    scalar = tracer.scalar_input_of(vid)
    if scalar is None and vid in tracer.weak:  # computed from float arguments only (a > 0)
        scalar = tracer._weak_source(vid)
    if scalar is not None:
        raise _fail(GraphBreak(f"the float argument {scalar} is used as a Python number "
                               f"({what})", specialize=scalar))
    raise _fail(GraphBreak(f"{what} reads a traced value in Python"))


VALUE_GUARD_MAX = 4096  # elements: a value guard compares this many at each call at most


def _guardable(t) -> bool:
    """An integer or boolean tensor small enough to compare at each call (Note [value
    guards]); float data changes from call to call, so a guard on it would retrace forever."""
    data = t._data
    return data.dtype.kind in "biu" and data.size <= VALUE_GUARD_MAX


def _write_guard(t):
    tracer = current()
    if tracer is not None and not tracer.suspended:
        tracer.mutations.guard(t)  # Note [functionalised writes]


def _install():
    with _install_lock:
        _active[0] += 1
        if _active[0] == 1:
            upper.set_tracing_hooks(_created, _host_read, _random_draw)
            upper.set_write_guard(_write_guard)


def _uninstall():
    with _install_lock:
        _active[0] -= 1
        if _active[0] == 0:
            upper.set_tracing_hooks(None, None, None)
            upper.set_write_guard(None)


def record_backward(grad_outputs, compute, make_node) -> list:
    """The eager backward of a captured loop or branch (``ForiLoopBackward``,
    ``WhileLoopBackward``, ``CondBackward``): ``compute(recording)`` runs with the trace quiet
    and gives the gradients (Tensors); inside a traced backward (``recording``) the program
    node ``make_node(grads_in)`` (per gradient in, a value id or None) is recorded with them
    as its outputs, so the program runs it at each call."""
    tracer = current()
    recording = tracer is not None and not tracer.suspended
    if not recording:
        return compute(False)
    grads_in = [None if g is None else tracer.ref(g)[0][1] for g in grad_outputs]
    tracer.suspended += 1
    try:
        result = compute(True)
    finally:
        tracer.suspended -= 1
    node = make_node(grads_in)
    node.phase = tracer.phase
    node.outputs = [tracer.add(t, "op") for t in result]
    tracer.graph.nodes.append(node)
    return result


class Tracer:
    """Records the registry ops of one run into ``graph`` (Note [compile tracing])."""

    def __init__(self):
        self.graph = Graph()
        self.ids: dict = {}  # id(tensor) -> value id
        self.tensors: dict = {}  # value id -> the tensor ops ran with
        # id(array) -> value id: a saved output is unpacked as a new tensor over the same array
        self.by_data: dict = {}
        self.versions: dict = {}  # value id -> the tensor's version when recorded
        self.keep: list = []  # every tensor in ``ids`` (so ids stay unique during the trace)
        self.made: dict = {}  # id(tensor) -> (tensor, from a constant constructor)
        self.constant_arrays: dict = {}  # id(array) -> array of the constants made
        self.proxies: dict = {}  # id(closure tensor) -> its proxy
        self.scalars: dict = {}  # value id of a float placeholder -> its argument path
        self.weak: set = set()  # values computed from float placeholders only
        self.static: set = set()  # constants and values computed from constants only
        self.value_guards: dict = {}  # value id -> values read on the host (Note [value guards])
        self.ctx_arrays: dict = {}  # id(ndarray a composite forward stashed) -> (value id, array)
        self.float_patches: list = []  # (node, saved name, placeholder): ``saved_floats``
        self.root_nodes = self.graph.nodes  # (loops trace their bodies into lists of their own)
        self.suspended = 0
        self.failure = None
        self.phase = "forward"
        # > 0 while a loop's body backward is traced (``loop.trace_backward``): its
        # create_graph=True records a first derivative, as the "backward" phase does
        self.body_backward = 0
        self.mutations = Mutations(self)

    def records_own_backward(self) -> bool:
        """Whether a backward running now is the trace's own recording of a first derivative
        (the program's backward, a loop body's), not a derivative the function takes of a
        derivative (``func.grad`` of ``func.grad``): rules without a second derivative
        refuse only the latter."""
        return self.phase == "backward" or self.body_backward > 0

    def fail(self, reason: str) -> GraphBreak:
        """A GraphBreak for ``reason``, noted as this trace's failure."""
        return _fail(GraphBreak(reason))

    # --- values ----------------------------------------------------------------------------
    def add(self, t, kind, **info) -> int:
        vid = self.graph.new_value(t._data.shape, t._data.dtype, kind, **info)
        self.ids[id(t)] = vid
        self.by_data.setdefault(id(t._data), vid)
        self.tensors[vid] = t
        self.versions[vid] = t._version_counter.value
        self.keep.append(t)
        return vid

    def tensor_of(self, vid):
        return self.tensors[vid]

    def scalar_input_of(self, vid):
        return self.scalars.get(vid)

    def input_tensor(self, t, path):
        """A proxy of the argument tensor ``t``: ops run on it, its values are input ``path``.
        A proxy of a tensor requiring grad is a view of it, so the eager graph this run builds
        reaches ``t``."""
        proxy = self._proxy(t)
        self.add(proxy, "input", path=path, requires_grad=t._requires_grad)
        self.mutations.see_leaf(t, ("input", path))
        return proxy

    def scalar_placeholder(self, value: float, path):
        t = Tensor._make(np.array(value, dtype=np.float64))
        vid = self.add(t, "scalar", path=path)
        self.scalars[vid] = path
        self.weak.add(vid)
        return t

    def cotangent(self, out_vid):
        """A cotangent input for output value ``out_vid`` (the backward trace's seed)."""
        info = self.graph.values[out_vid]
        t = Tensor._make(np.ones(info.shape, info.dtype))
        self.add(t, "cotangent", output=out_vid)
        return t

    def _external(self, t):
        """The value of a tensor the trace did not make by an op: a closure (implicit input,
        read fresh each call), a constant made inside, or a break."""
        vid = self.by_data.get(id(t._data))
        if vid is not None:  # a saved tensor rebuilt over a recorded value's array
            if t._requires_grad and not self.tensors[vid]._requires_grad:
                return self._grad_alias(vid, t), t
            self.ids[id(t)] = vid
            self.keep.append(t)
            return vid, t
        stashed = self.ctx_arrays.get(id(t._data))
        if stashed is not None and stashed[1] is t._data:  # a backward wraps a stashed array
            vid = stashed[0]
            self.ids[id(t)] = vid
            self.tensors.setdefault(vid, t)
            self.keep.append(t)
            return vid, t
        made = self.made.get(id(t))
        if made is not None:
            if not made[1] or t._grad_fn is not None:
                raise _fail(GraphBreak(
                    "a tensor computed outside jitgrad's ops (a custom autograd.Function, or "
                    "code reading Tensor data directly) is used by an op"))
            vid = self.add(t, "const", array=t._data)
            self.static.add(vid)
            return vid, t
        proxy = self.proxies.get(id(t))
        if proxy is None:
            if self.mutations.written:
                self.mutations.check_new_external(t)
            proxy = self.proxies[id(t)] = self._proxy(t)
            vid = self.add(proxy, "closure", tensor=t, requires_grad=t._requires_grad)
            self.ids[id(t)] = vid
            self.keep.append(t)
            self.mutations.see_leaf(t, ("closure", t))
        return self.ids[id(t)], proxy

    def _grad_alias(self, vid, t):
        """Note [grad aliases]: ``t`` shares the array of value ``vid`` but requires grad where
        the value's tensor does not (``x.detach().requires_grad_()``: the leaf ``func.grad``
        differentiates with respect to). It gets a value of its own, an identity view of
        ``vid``, so what reads it is seen to read a tensor requiring grad (a loop's gradient
        flow, Note [carries requiring grad] in loop.py, would otherwise miss it and drop the
        gradient) and ``tensor_of`` gives the tensor the ops were run with."""
        from ..ops import shape

        node = Node(shape.VIEW, [("v", vid)], {"shape": tuple(t.shape)}, phase=self.phase)
        new = self.add(t, "op")
        node.outputs.append(new)
        for group in (self.weak, self.static):
            if vid in group:
                group.add(new)
        # beside the value's maker: a loop body traced now reads it as a captured value
        here = self.graph.nodes
        made_here = any(vid in n.outputs for n in here)
        (here if made_here else self.root_nodes).append(node)
        return new

    def ref(self, a):
        """``(ref, value to run the op with)`` for one op argument."""
        if isinstance(a, Tensor):
            vid = self.ids.get(id(a))
            if vid is not None and (self.mutations.root_of or self.mutations.clobbered):
                self.mutations.check_read(vid, a)
            if vid is None:
                vid, a = self._external(a)
            elif (a._version_counter.value != self.mutations.expected.get(id(a),
                                                                           self.versions[vid])
                  and id(a) not in self.proxies):
                raise _fail(GraphBreak("a traced tensor was changed in place"))
            else:
                a = self.proxies.get(id(a), a)
            return ("v", vid), a
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            raise _fail(GraphBreak("an op argument is a sequence of tensors"))
        return ("c", a), a

    def suspended_call(self, fn, *args):
        """``fn(*args)`` with the trace's hooks quiet (the tracer's own tensors and reads)."""
        self.suspended += 1
        try:
            return fn(*args)
        finally:
            self.suspended -= 1

    def _proxy(self, t):
        return self.suspended_call(_make_proxy, t)

    # --- ops -------------------------------------------------------------------------------
    def on_op(self, run, op, args, attrs):
        """The transform hook's call of ``run(op, *args, **attrs)``, recorded."""
        if self.suspended:
            return run(op, *args, **attrs)
        if op.random or op.check:
            self._check_top_level(op)
        candidate = self.mutations.before_op(args)
        if getattr(op, "value_dependent_shape", False):
            raise _fail(GraphBreak(f"{op.name}: its output shape depends on the input values "
                                   "(a compiled program has fixed shapes)"))
        refs, call_args = [], []
        for a in args:
            r, v = self.ref(a)
            refs.append(r)
            call_args.append(v)
        node_attrs = {}
        for name, value in attrs.items():
            node_attrs[name] = self._attr(op, name, value)
        tensor_refs = [r[1] for r in refs if r[0] == "v"]
        weak = bool(tensor_refs) and all(v in self.weak for v in tensor_refs)
        substituted = {}
        if not weak:  # placeholders enter an op beside real tensors as Python floats
            for i, r in enumerate(refs):
                if r[0] == "v" and r[1] in self.weak:
                    if not op.elementwise:
                        path = self._weak_source(r[1])
                        raise _fail(GraphBreak(f"the float argument {path} is an operand of "
                                               f"{op.name}", specialize=path))
                    substituted[i] = call_args[i]
                    call_args[i] = float(call_args[i]._data)
        out = run(op, *call_args, **node_attrs_values(node_attrs))
        outs = out if isinstance(out, tuple) else (out,)
        if substituted:
            self._note_saved_floats(op, out, substituted)
        node = Node(op, refs, node_attrs, phase=self.phase)
        static = (bool(tensor_refs) and all(v in self.static for v in tensor_refs)
                  and not op.random and not op.check)
        for o in outs:
            vid = self.add(o, "op")
            node.outputs.append(vid)
            if weak:
                self.weak.add(vid)
            if static:
                self.static.add(vid)
        if op.elementwise:
            node.elementwise_types(call_args, attrs)
        else:
            self._note_ctx(node, outs)
        self.graph.nodes.append(node)
        if candidate:  # the new value of an in-place write (Note [functionalised writes])
            self.mutations.pending[2] = node.outputs[0]
        return out

    def _check_top_level(self, op):
        """Note [random rows], Note [value checks]: a draw or a check is captured at the
        function's own level only."""
        if self.graph.nodes is not self.root_nodes or self.body_backward:
            what = "a random draw" if op.random else "a value check"
            raise _fail(GraphBreak(f"{op.name}: {what} inside a captured loop or "
                                   "cond branch (its steps are traced once and recomputed)"))

    def _note_saved_floats(self, op, out, substituted):
        """The node of ``out`` saved Python floats where placeholders were: its backward, when
        traced, must read the placeholders instead (``saved_floats``)."""
        node = out._grad_fn
        if node is None or getattr(node, "_op", None) is not op:
            return
        for name, source in save_plan(op, node.needs_input_grad):
            if type(source) is int and source in substituted:
                self.float_patches.append((node, name, substituted[source]))

    @contextlib.contextmanager
    def saved_floats(self):
        """While the backward is traced, nodes read placeholders where they saved floats."""
        old = [(node, name, node._saved[name]) for node, name, _ in self.float_patches]
        for node, name, placeholder in self.float_patches:
            node._saved[name] = placeholder
        try:
            yield
        finally:
            for node, name, value in old:
                node._saved[name] = value

    def _weak_source(self, vid):
        for path_vid, path in self.scalars.items():
            if path_vid == vid:
                return path
        return next(iter(self.scalars.values()))  # derived: specialise the first

    def _attr(self, op, name, value):
        if isinstance(value, Tensor):
            vid = self.ids.get(id(value))
            if vid is not None and vid in self.weak:
                path = self._weak_source(vid)
                raise _fail(GraphBreak(f"the float argument {path} is attribute {name!r} of "
                                       f"{op.name}", specialize=path))
            raise _fail(GraphBreak(f"{op.name}: a tensor as attribute {name!r}"))
        if isinstance(value, np.ndarray):
            stashed = self.ctx_arrays.get(id(value))
            if stashed is not None and stashed[1] is value:
                return CtxRef(stashed[0], value)
        return value

    def _note_ctx(self, node, outs):
        """Arrays a composite forward stashed for its backward (argmax indices, permutations)
        depend on the data: later ops reading them read the value computed at each call."""
        grad_fn = next((o._grad_fn for o in outs if o._grad_fn is not None), None)
        if grad_fn is None or getattr(grad_fn, "_op", None) is not node.op:
            return
        for key, value in grad_fn._attrs.items():
            if key not in node.attrs and isinstance(value, np.ndarray):
                vid = self.graph.new_value(value.shape, value.dtype, "ctx")
                node.ctx[key] = vid
                self.ctx_arrays[id(value)] = (vid, value)
                self.keep.append(value)

    # --- the run ---------------------------------------------------------------------------
    def __enter__(self):
        _install()
        _local.tracer = self
        transforms.set_tracer(self.on_op)
        self._serial = engine.serial()
        self._serial.__enter__()
        self._np_state = _legacy_rng_state()
        return self

    def __exit__(self, *exc):
        self._serial.__exit__(*exc)
        transforms.set_tracer(None)
        _local.tracer = None
        _uninstall()
        if exc[0] is not None:  # the function runs again eagerly, or the error propagates
            self.mutations.rollback()
        self.mutations.detach_grads()
        if self.failure is None and exc[0] is None and _legacy_rng_state() != self._np_state:
            self.failure = GraphBreak("NumPy's global random generator was used: compile "
                                      "cannot capture random values")
        return False


class CtxRef:
    """An attribute that is an array a composite forward stashed (value ``vid``)."""

    __slots__ = ("vid", "array")

    def __init__(self, vid, array):
        self.vid, self.array = vid, array


def node_attrs_values(attrs: dict) -> dict:
    return {k: (v.array if isinstance(v, CtxRef) else v) for k, v in attrs.items()}


def _legacy_rng_state():
    state = np.random.get_state()
    return state[2], hash(state[1].tobytes())


def _make_proxy(t):
    """A tensor with ``t``'s values for ops to run on: a view of ``t`` when ``t`` requires grad
    (the eager graph of the trace run reaches ``t``), else a tensor sharing its storage and
    version counter."""
    if t._requires_grad:
        with enable_grad():  # (first read inside no_grad: later reads still reach t)
            return t.view_as(t)
    proxy = Tensor._make(t._data, counter=t._version_counter)
    return proxy


_optimizer.register_trace_hooks(OptimizerHooks(current))  # Note [optimizers under compile]
