"""The CPU program of a traced graph: forward and backward steps over one value table.

A program runs as a list of steps, each ``step(env)`` reading and writing ``env`` (a list of
arrays indexed by value id): a fused elementwise kernel (``codegen.py``: a run of elementwise
nodes as one loop, generated from the rows' scalar bodies), or a composite row's array-level
forward called directly (no dispatch, no Tensor, no node). The backward steps are the traced
backward rules, the same kinds of steps.

Outputs join the eager graph through ONE node, ``CompiledFunctionBackward``: it holds the
values the backward steps read (nothing else: ``saved``), runs those steps for a plain
backward, and for ``create_graph=True`` replays the function eagerly while recording, so
double backward works as in eager.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from ..autograd import api as autograd_api
from ..graph.grad_mode import is_grad_enabled
from ..graph.node import SECOND_BACKWARD_MSG, Node, SavedTensor
from ..kernels.cpu import elementwise as cpu
from ..func._pytree import tree_flatten, tree_unflatten, unflattener
from ..ops.core.recording import CompositeCtx, record_node
from ..tensor import Tensor
from . import codegen, guards, native
from .trace import CtxRef

class _Local(threading.local):
    """Per-thread state; class attributes are each thread's defaults (``getattr`` with a
    default on a plain ``threading.local`` costs a caught AttributeError per call)."""
    disabled = False  # replaying or running eagerly on purpose


_local = _Local()


@contextlib.contextmanager
def disabled():
    """Compiled functions called inside run eagerly (the create_graph replay)."""
    before = _local.disabled
    _local.disabled = True
    try:
        yield
    finally:
        _local.disabled = before


def is_disabled() -> bool:
    """Whether compiled functions run eagerly on this thread now (inside ``disabled``)."""
    return _local.disabled


def diff_outputs(out) -> list:
    """The output tensors that gradients flow back from, in output order."""
    leaves, _ = tree_flatten(out)
    return [o for o in leaves if isinstance(o, Tensor) and o._requires_grad
            and o.dtype.is_floating_point]


def _elementwise_step(node, weak: set):
    op = node.op
    forward, ufunc = op.forward, op.cpu_ufunc
    shape, out_dt, dt = node.shape, node.out_dtype, node.compute_dtype
    attr_values = [node.attrs[a] for a in op.attrs]
    plan = [(r[0] == "v", r[1], r[0] == "v" and r[1] in weak) for r in node.args]
    out = node.outputs[0]

    def step(env):
        values = [(float(env[x]) if w else env[x]) if v else x for v, x, w in plan]
        env[out] = cpu.elementwise(forward, values + attr_values, shape, out_dt, dt, ufunc=ufunc)
    return step


def _resolve(attrs: dict):
    """Attributes with stashed-array references (``CtxRef``), resolved per call."""
    refs = {k: v.vid for k, v in attrs.items() if isinstance(v, CtxRef)}
    if not refs:
        return lambda env: attrs
    fixed = {k: v for k, v in attrs.items() if k not in refs}
    return lambda env: {**fixed, **{k: env[vid] for k, vid in refs.items()}}


def _composite_step(node):
    op = node.op
    forward = op.forward
    plan = [(True, r[1]) if r[0] == "v" else (False, np.asarray(r[1])) for r in node.args]
    attrs_of = _resolve(node.attrs)
    outs = tuple(node.outputs)
    ctx_items = tuple(node.ctx.items())
    view = op.view

    def step(env):
        ctx = CompositeCtx()
        arrays = [env[x] if v else x for v, x in plan]
        result = forward(ctx, *arrays, **attrs_of(env))
        results = result if isinstance(result, tuple) else (result,)
        for vid, r in zip(outs, results):
            r = r if type(r) is np.ndarray else np.asarray(r)
            if not view and any(np.may_share_memory(r, a) for a in arrays):
                r = r.copy()  # as eager: only a view op's result shares its input's memory
            env[vid] = r
        for key, vid in ctx_items:
            env[vid] = getattr(ctx, key)
    return step


def _identity_view(graph, node) -> bool:
    """A view row that changes nothing (its row's ``identity`` says so, as ``permute`` in the
    same order, or a reshaping view to the same shape): its result is its input's array (a
    view's outputs are copied when returned). Note [what compile knows of a row]."""
    op = node.op
    if not op.view or len(node.args) != 1 or node.args[0][0] != "v":
        return False
    shape = graph.values[node.args[0][1]].shape
    if op.identity is not None:
        return op.identity(node.attrs, len(shape))
    return op.alias == "reshape" and graph.values[node.outputs[0]].shape == shape


def _alias_step(node):
    source, out = node.args[0][1], node.outputs[0]

    def step(env):
        env[out] = env[source]
    return step


def build_steps(graph, nodes, weak: set, live: set) -> list:
    """Steps running ``nodes``: each maximal run of fusible elementwise nodes is one generated
    kernel (``codegen``), every other node a step of its own, and each run of those with a
    native form one generated function (Note [native segments]). ``live``: the values needed
    after the steps."""
    def make_step(group):
        if hasattr(group, "make_step"):  # a loop (``loop.py``)
            return group.make_step(graph, weak, build_steps)
        if isinstance(group, codegen.FusedGroup):
            return group.step()
        if group.op.elementwise:
            return _elementwise_step(group, weak)
        if _identity_view(graph, group):
            return _alias_step(group)
        return _composite_step(group)

    items = codegen.partition(graph, nodes, weak, live)
    if not native.ENABLED:
        return [make_step(item) for item in items]
    return native.segment_steps(graph, items, weak, live, make_step, _identity_view)


def run_steps(steps, env) -> None:
    for step in steps:
        step(env)


class CompiledFunctionBackward(Node):
    """The one node joining a compiled call's outputs to the eager graph."""

    def __init__(self, program, env, inputs, read, call):
        super().__init__()
        self._program = program
        self._env = env  # the values the backward steps read, by value id (others None)
        self._call = call  # (function, args, kwargs): replayed for create_graph
        # tensors the backward reads, with their versions now (Note [saved tensor versions])
        self._saved_inputs = [SavedTensor(t) for t in read]
        self._inputs = inputs

    def apply(self, grad_outputs):
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        for saved in self._saved_inputs:
            saved.unpack(self)  # raises PyTorch's error if changed in place since the call
        if is_grad_enabled():  # create_graph: the eager graph of the same call, recorded
            return self._replay(grad_outputs)
        program = self._program
        env = list(self._env)
        for vid, g, (shape, dtype) in zip(program.cotangents, grad_outputs, self._output_meta):
            env[vid] = g._data if g is not None else np.zeros(shape, dtype.np)
        run_steps(program.backward_steps, env)
        return [None if vid is None else Tensor._make(_fresh(env[vid]))
                for vid in program.input_grads]

    def _replay(self, grad_outputs):
        fn, args, kwargs = self._call
        with disabled():
            outputs = diff_outputs(fn(*args, **kwargs))
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None]
        grads = autograd_api.grad([o for o, _ in pairs], self._inputs, [g for _, g in pairs],
                                  create_graph=True, allow_unused=True)
        return list(grads)

    def _release(self):
        self._released = True
        self._env = None
        self._call = None


def _fresh(a):
    """An array the caller may own: a fresh one, or a copy of a broadcast or shared one."""
    if type(a) is not np.ndarray:
        return np.asarray(a)
    return a if a.base is None and a.flags.writeable else a.copy()


# --- capture: a traced run -> a Program ----------------------------------------------------
def capture(tracer, out, leaves, kinds):
    """The Program of ``tracer``'s run, whose result was ``out``: the backward traced too
    (the rows' backward rules, run with ``create_graph=True`` through the same tracer), dead
    nodes dropped, forward and backward steps built."""
    from .trace import GraphBreak

    graph = tracer.graph
    tracer.mutations.finish()
    for value in graph.values:
        array = value.info.get("array")
        tensor = value.info.get("tensor")
        if (tensor is not None and type(tensor._data) is not np.ndarray) or (
                array is not None and type(array) is not np.ndarray):
            raise GraphBreak("a CUDA tensor: compiled functions run CUDA tensors eagerly for now")
    out_leaves, out_spec = tree_flatten(out)
    outputs = []  # per output leaf: (kind, payload)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            outputs.append(("static", o))
            continue
        if type(o._data) is not np.ndarray:
            raise GraphBreak("a CUDA tensor: compiled functions run CUDA tensors eagerly for now")
        vid = tracer.ids.get(id(o))
        if vid is None:
            (_, vid), _ = tracer.ref(o)
        if vid in tracer.mutations.root_of:
            raise GraphBreak("an output is a tensor from outside the function that it changed "
                             "in place")
        outputs.append(("value", vid))
    # (an output whose graph a backward() inside consumed: Note [backward under compile])
    diff_out = [k for k, o in enumerate(out_leaves) if isinstance(o, Tensor) and o._requires_grad
                and o.dtype.is_floating_point and outputs[k][1] not in tracer.weak
                and not (o._grad_fn is not None and o._grad_fn._released)]
    diff_in = [vid for vid, v in enumerate(graph.values)
               if v.kind in ("input", "closure") and v.info.get("requires_grad")]
    cotangents, input_grads = [], []
    if diff_out and diff_in and is_grad_enabled():
        if tracer.mutations.saved:  # the create_graph replay would write again
            raise GraphBreak("a function that writes in place returns outputs requiring grad")
        tracer.phase = "backward"
        seeds = [tracer.cotangent(outputs[k][1]) for k in diff_out]
        cotangents = [tracer.ids[id(s)] for s in seeds]
        proxies = [tracer.tensor_of(vid) for vid in diff_in]
        with tracer.saved_floats():
            grads = autograd_api.grad([out_leaves[k] for k in diff_out], proxies, seeds,
                                      create_graph=True, allow_unused=True)
        input_grads = [None if g is None else tracer.ref(g)[0][1] for g in grads]
    else:
        diff_out = []
    return Program(tracer, outputs, out_spec, diff_out, diff_in, cotangents, input_grads,
                   out, kinds)


def needed_nodes(nodes, wanted: set) -> list:
    """The nodes (in order) that ``wanted`` values depend on; ``wanted`` grows by their
    arguments."""
    kept = []
    for node in reversed(nodes):
        made = set(node.outputs) | set(node.ctx.values())
        if made & wanted:
            kept.append(node)
            wanted.update(node.value_args())
            wanted.update(v.vid for v in node.attrs.values() if isinstance(v, CtxRef))
    kept.reverse()
    return kept


def _reads(nodes, extra=()) -> set:
    read = {v for v in extra if v is not None}
    for n in nodes:
        read.update(n.value_args())
        read.update(v.vid for v in n.attrs.values() if isinstance(v, CtxRef))
    return read


def _recompute(graph, backward_nodes) -> list:
    """Note [recompute, don't save]: forward values the backward reads that cheap fusible
    elementwise nodes (rows with ``cheap``: Note [what compile knows of a row]) make are
    recomputed at the start of the backward (inside its fused loops) instead of stored by the
    forward, as AOTAutograd's partitioner does: a value saved costs a write and a read of
    memory, a value recomputed a few flops. Transcendental
    results are saved: recomputing them cost more than the memory traffic they save (W5 wide,
    docs/compile.md). The chain is followed back to inputs and other nodes' results, which
    are saved."""
    producer = {v: n for n in graph.nodes if n.phase == "forward" for v in n.outputs}
    made = {v for n in backward_nodes for v in n.outputs}
    chosen: set = set()
    pending = list(_reads(backward_nodes) - made)
    while pending:
        node = producer.get(pending.pop())
        if (node is None or id(node) in chosen or not node.op.cheap
                or not codegen.fusible(graph, node)):
            continue
        chosen.add(id(node))
        pending.extend(node.value_args())
    recomputed = [n for n in graph.nodes if id(n) in chosen]
    return recomputed + backward_nodes


class Program:
    """A captured function for one input signature: forward and backward steps, what the
    inputs are, what the outputs are, and the guards on the tensors it reads from closures."""

    def __init__(self, tracer, outputs, out_spec, diff_out, diff_in, cotangents, input_grads,
                 first_out, kinds):
        graph = tracer.graph
        self.graph = graph
        self.n_values = len(graph.values)
        self.outputs, self.out_spec, self.weak = outputs, out_spec, frozenset(tracer.weak)
        self.diff_out = diff_out  # output leaf indices that get the backward node
        self.cotangents, self.input_grads = cotangents, input_grads
        values = graph.values
        self.tensor_inputs = [(vid, v.info["path"]) for vid, v in enumerate(values)
                              if v.kind == "input"]
        self.scalar_inputs = [(vid, v.info["path"]) for vid, v in enumerate(values)
                              if v.kind == "scalar"]
        # Note [functionalised writes] (mutations.py): guards, gradient reads, write-back
        self.plan = tracer.mutations.plan()
        grad_reads = self.plan.grad_read_vids if self.plan is not None else ()
        self.closures = [(vid, v.info["tensor"]) for vid, v in enumerate(values)
                         if v.kind == "closure" and vid not in grad_reads]
        # the value table each call starts from: the constants in place
        self._env = [v.info["array"] if v.kind == "const" else None for v in values]
        self.guards = [(t, t._data.shape, t._data.dtype, t._requires_grad)
                       for _, t in self.closures]
        self.paths: list = []  # (closure tensor, where the function finds it): api.py sets
        # Note [value guards]: (input path or closure tensor, values read on the host)
        self.value_guards = [(values[vid].info.get("path"), values[vid].info.get("tensor"), a)
                             for vid, a in tracer.value_guards.items()]
        self.diff_in = diff_in
        backward_nodes = needed_nodes([n for n in graph.nodes if n.phase == "backward"],
                                 {g for g in input_grads if g is not None})
        backward_nodes = _recompute(graph, backward_nodes)
        made_in_backward = {v for n in backward_nodes for v in n.outputs} | set(cotangents)
        self.saved = sorted(_reads(backward_nodes, input_grads) - made_in_backward)
        wanted = {vid for kind, vid in outputs if kind == "value"} | set(self.saved)
        # Note [random rows] (trace.py), Note [value checks] (ops/checks.py): a draw or a check
        # runs even when its result is unused, as eager's
        wanted |= {v for n in graph.nodes if n.phase == "forward"
                   and (n.op.random or n.op.check) for v in n.outputs}
        if self.plan is not None:
            wanted |= self.plan.wanted
        forward_nodes = needed_nodes([n for n in graph.nodes if n.phase == "forward"], set(wanted))
        self._output_plan = self._plan_outputs(forward_nodes)
        self._rebuild = unflattener(out_spec)
        self.forward_steps = build_steps(graph, forward_nodes, tracer.weak, wanted)
        self.backward_steps = build_steps(graph, backward_nodes, tracer.weak,
                                          {g for g in input_grads if g is not None})
        self.n_nodes = (len(forward_nodes), len(backward_nodes))
        self._first = (first_out, tracer)

    def guards_hold(self, fn) -> bool:
        """The closure tensors are where the trace found them (Note [closure guards]) and have
        the traced shapes, dtypes and requires_grad."""
        for t, path in self.paths:
            if guards.resolve(fn, path) is not t:
                return False
        for t, shape, dtype, requires_grad in self.guards:
            data = t._data
            if (type(data) is not np.ndarray or data.shape != shape or data.dtype != dtype
                    or t._requires_grad != requires_grad):
                return False
        return True

    def values_hold(self, leaves) -> bool:
        """Note [value guards]: the integer and boolean tensors whose values the trace read in
        Python (an index, a mask) hold the same values now."""
        for path, closure, want in self.value_guards:
            t = closure if path is None else leaves[path]
            data = t._data
            if type(data) is not np.ndarray:
                data = data.get()
            if not np.array_equal(data, want):
                return False
        return True

    def first_result(self, leaves):
        """The trace run's own (eager) result, with proxies of inputs mapped back to the
        inputs and float-derived values as Python floats."""
        out, tracer = self._first
        self._first = None
        values = self.graph.values
        out_leaves, _ = tree_flatten(out)
        result = []
        for o, (kind, vid) in zip(out_leaves, self.outputs):
            if kind == "static":
                result.append(vid)
            elif vid in tracer.weak:
                result.append(float(o._data))
            elif values[vid].kind == "input":
                result.append(leaves[values[vid].info["path"]])
            elif values[vid].kind == "closure":
                result.append(values[vid].info["tensor"])
            else:
                result.append(o)
        return tree_unflatten(result, self.out_spec)

    def _plan_outputs(self, forward_nodes) -> list:
        """Per output leaf, how a call makes it: ``(0, value)`` a static value, ``(1, vid)`` a
        float, ``(2, path)`` an input tensor itself, ``(3, tensor)`` a closure tensor itself,
        ``(4, vid)`` a fresh array of the program, ``(5, vid)`` an array that may share an
        input's or a constant's memory (a view of one: copied, so every call returns buffers
        of its own)."""
        values = self.graph.values
        root = {}  # value -> the value whose memory it may share (views followed back)
        for n in forward_nodes:
            if getattr(n.op, "view", False) and n.args and n.args[0][0] == "v":
                source = n.args[0][1]
                for v in n.outputs:
                    root[v] = root.get(source, source)
        plan = []
        for kind, vid in self.outputs:
            if kind == "static":
                plan.append((0, vid))
            elif vid in self.weak:
                plan.append((1, vid))
            elif values[vid].kind == "input":
                plan.append((2, values[vid].info["path"]))
            elif values[vid].kind == "closure":
                plan.append((3, values[vid].info["tensor"]))
            elif values[vid].kind != "op" or values[root.get(vid, vid)].kind != "op":
                plan.append((5, vid))
            else:
                plan.append((4, vid))
        return plan

    def run(self, leaves, spec, call):
        env = self._env.copy()
        for vid, path in self.tensor_inputs:
            env[vid] = leaves[path]._data
        for vid, path in self.scalar_inputs:
            env[vid] = leaves[path]
        for vid, t in self.closures:
            env[vid] = t._data
        plan = self.plan
        if plan is not None:
            plan.read(env, leaves)
        for step in self.forward_steps:
            step(env)
        if plan is not None:
            plan.write_back(env, leaves)
        make = Tensor._make
        result = []
        for how, what in self._output_plan:
            if how == 4:
                data = env[what]
                # (a broadcast view of a fresh array is read-only: the caller gets its own)
                result.append(make(data if data.flags.writeable else data.copy()))
            elif how == 5:
                result.append(make(env[what].copy()))
            elif how == 2:
                result.append(leaves[what])
            elif how == 1:
                result.append(float(env[what]))
            else:
                result.append(what)
        if self.diff_out and is_grad_enabled():
            self._attach(env, leaves, result, call)
        return self._rebuild(result)

    def _attach(self, env, leaves, result, call):
        values = self.graph.values

        def tensor(vid):
            info = values[vid].info
            return leaves[info["path"]] if values[vid].kind == "input" else info["tensor"]
        diff_inputs = [tensor(vid) for vid in self.diff_in]
        if not any(t._requires_grad for t in diff_inputs):
            return
        saved = [None] * self.n_values
        for vid in self.saved:
            saved[vid] = env[vid]
        read = [tensor(vid) for vid in self.saved if values[vid].kind in ("input", "closure")]
        node = CompiledFunctionBackward(self, saved, diff_inputs, read, call)
        # Note [one way to wire a node] (ops/core/recording.py)
        record_node(node, diff_inputs, tuple(t._requires_grad for t in diff_inputs),
                    [result[k] for k in self.diff_out])
