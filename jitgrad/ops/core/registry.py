"""The op registry: one declarative row per op, and the node classes generated from the rows.

An **elementwise** row gives scalar bodies::

    def _tanh(x):            return math.tanh(x)
    def _tanh_dx(g, result): return g * (1.0 - result * result)
    def_elementwise("tanh", "TanhBackward0", ("x",), _tanh, {"x": _tanh_dx})

The forward body becomes a Numba kernel (``kernels.cpu.elementwise``). Each backward body names what it
needs by its parameters (``g`` first, then input names, ``result`` or attribute names), so only
that is saved. Without ``create_graph`` the body is compiled into one fused kernel; with it, the
same body is called on Tensors and records its own graph (double backward for free).

A **composite** row (reductions, shape ops, matmul...) gives ``forward(ctx, *arrays, **attrs)``
returning the output array(s), and ``backward(ctx, g, **saved)`` written with Tensor ops, which
serves both plain and ``create_graph`` backward.

Every property of a row is a keyword of its ``def_*`` call (``jvp=``, ``batch_rule=``,
``cuda_forward=``...): nothing is attached to a row after it is built. The row also says where
its public function appears (Note [derived surface]).

Node classes are named like PyTorch's (``MulBackward0``...). Broadcast gradients are NOT reduced
here: the engine sums them to the inputs' shapes (Note [broadcast reduction]).
"""
from __future__ import annotations

import dis
import inspect
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ... import _config
from ...graph.grad_mode import is_grad_enabled
from ...graph.node import SECOND_BACKWARD_MSG, Node, SavedTensor, unshared
from . import dispatch, fusion
from .bodies import passthrough

OPS: dict = {}


#: ``jvp=LINEAR``: the op is linear in its inputs, so its jvp is the op applied to the tangents
LINEAR = "linear"


@dataclass(kw_only=True)
class OpDef:
    """One op: its name, node class, inputs, kernels and derivative rules."""

    name: str
    node_name: str
    inputs: tuple
    forward: object
    backward: object = None  # elementwise: {input: body}; composite: fn(ctx, *grads, **saved)
    attrs: tuple = ()
    elementwise: bool = True
    # "promote" | "float" | "bool" (bool: not differentiable) | fn(promoted dtype) -> dtype
    dtype_rule: object = "promote"
    save: tuple = ()  # composite: names among inputs/"result" saved as tensors
    view: bool = False  # composite: output 0 is a view of input 0 (shares its version counter)
    n_outputs: int = 1
    params: dict = field(default_factory=dict)  # elementwise: input -> parameter names of its body
    cpu_ufunc: object = None  # elementwise: NumPy ufunc for large CPU forwards (Note [NumPy forward])
    save_plans: dict = field(default_factory=dict)  # needs_input_grad -> what to save (dispatch)
    # (dtype, operand pattern) -> the cached eager decision (Note [eager fast path] in
    # ops/core/fastpath.py)
    fast_plans: dict = field(default_factory=dict)
    # the same plans of ``fastpath.unrolled_fast``'s three patterns, each keyed by dtype alone
    unrolled_plans: tuple = field(default_factory=lambda: ({}, {}, {}))
    # needs_input_grad -> the backward steps of the plain step (``ElementwiseNode``)
    plain_steps: dict = field(default_factory=dict)
    node_cls: type = None
    # forward-mode rule (autograd/forward_ad.py): LINEAR, or fn(tangents, primals, outs, **attrs)
    # -> output tangent(s); elementwise rows derive it from their backward bodies
    jvp: object = None
    # vmap rule (func/_batching.py): fn(args, batched, **attrs) -> output(s), batch dim first;
    # elementwise rows are batched by broadcasting
    batch_rule: object = None
    # composite: the forward over CUDA arrays (``kernels.cuda.backend.CudaArray``), same contract as
    # ``forward``; None: the op raises a clear error on CUDA tensors. Elementwise rows need none:
    # their scalar bodies compile for CUDA too.
    cuda_forward: object = None
    # Note [complex support] (ops/core/operands.py): the row accepts complex tensors; ``holomorphic``
    # (elementwise rows): its backward bodies are ``g * f'(...)`` with real coefficients, so the
    # complex gradient ``g * conj(f'(z))`` is the same body run on conjugated saved operands
    complex_ok: bool = False
    holomorphic: bool = False
    # Note [derived surface]: where the row's public function (bound by ``@public``) appears;
    # each None, True (the function's name) or a name / tuple of names (aliases)
    method: object = None  # a Tensor method
    inplace: object = None  # an in-place Tensor method (True: each method name + "_")
    export: object = None  # a top-level ``jitgrad`` name
    numpy: object = None  # a ``jitgrad.numpy`` name (a unary row: ``f(x)`` on ``asarray(x)``)
    # Note [what compile knows of a row] (jitgrad.compile reads these, never lists of names):
    # ``cheap``: elementwise, a few flops per element (derived: the forward body is arithmetic,
    # comparisons and ``abs`` only), so a compiled backward recomputes it instead of saving it;
    # ``alias``: a view that computes nothing, "reshape" (``view``, ``reshape_copy``) or
    # "broadcast" (``expand``), read through inside a fused run; ``identity``: a view row's
    # ``fn(attrs, ndim) -> bool``, whether the view changes nothing (``permute`` in order);
    # ``value_dependent_shape``: the output shape depends on input values (a compiled program
    # has fixed shapes: the tracer refuses the row).
    cheap: bool = False
    alias: object = None
    identity: object = None
    value_dependent_shape: bool = False
    # ``random``: the forward draws from jitgrad's default generator (a compiled program draws
    # at each call, in the traced order; never folded, dropped or recomputed)
    random: bool = False
    # ``check``: the forward raises on bad values and computes nothing used (Note [value checks]
    # in ops/checks.py: a compiled program runs it at each call; never folded or dropped)
    check: bool = False
    # composite: the positions of the inputs that get an edge (PyTorch's differentiable inputs:
    # ``NllLossBackward0`` has one edge, not one for the target and the weight); None: all
    edge_inputs: tuple = None

    @property
    def differentiable(self) -> bool:
        return self.dtype_rule != "bool"


class _AttrReader:
    """``node.<name>``: the node's attribute ``name`` (``node._attrs[name]``), for the
    ctx-style reads of backward rules (Note [attribute readers]). A non-data descriptor: an
    attribute set on the instance itself still wins, as before."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, node, owner=None):
        if node is None:
            return self
        try:
            return node._attrs[self.name]
        except KeyError:
            raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"'{self.name}'") from None


# Note [attribute readers]: a composite row's backward reads what its forward stashed and the
# call's attributes as ``ctx.<name>`` (the node is the ctx), which ``node._attrs`` holds. Each
# node class gets an ``_AttrReader`` per such name when it is made (``_make_node_class``), so
# a read is a descriptor call, never a failed look-up (an ``AttributeError`` raised and caught
# inside the interpreter, ~0.4 us, several per backward rule), and no class changes after it
# is made. The names are the row's ``attrs`` and those its functions (``forward``,
# ``cuda_forward``, ``backward``) read or store as ``<ctx>.<name>``
# on their first parameter, followed into the module functions they call that take a ``ctx``
# parameter (``stash_reduction(ctx, ...)``) and into nested functions: ``ctx_names``. A name
# found nowhere is still served (``OpNode.__getattr__``, at the cost of the failed look-up);
# tests/ops/test_attr_readers.py runs the op database and checks none is.
_CTX_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_DEREF",
                        "LOAD_CLOSURE", "LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
_ATTR_OPS = frozenset({"LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD"})


def _last_name(argval):
    """The variable a load instruction leaves on top of the stack (a pair load: the second)."""
    return argval[-1] if isinstance(argval, tuple) else argval


def _attr_name(ins) -> str:
    """The attribute an attribute instruction names (``LOAD_ATTR``'s argval, or its argrepr's
    last word where an interpreter decorates it)."""
    value = ins.argval
    return value if isinstance(value, str) else ins.argrepr.split()[-1]


_scans: dict = {}  # (code, tracked) -> (names, global names of functions it reads)


def _scan(code, tracked: frozenset) -> tuple:
    """``(names, calls)`` of ``code``: the attribute names it reads or stores as ``<v>.<name>``
    for ``v`` in ``tracked`` (nested code objects: ``ctx`` too), the global names it reads
    (the functions it may call). Memoized: rows share their helpers."""
    key = (code, tracked)
    found = _scans.get(key)
    if found is not None:
        return found
    names: set = set()
    calls: set = set()
    previous = None
    for ins in dis.get_instructions(code):
        op = ins.opname
        if (previous is not None and op in _ATTR_OPS and previous.opname in _CTX_LOADS
                and _last_name(previous.argval) in tracked):
            names.add(_attr_name(ins))
        elif op == "LOAD_GLOBAL":
            calls.add(_attr_name(ins))
        previous = ins
    for const in code.co_consts:
        if inspect.iscode(const):
            inner_names, inner_calls = _scan(const, tracked | {"ctx"})
            names |= inner_names
            calls |= inner_calls
    found = _scans[key] = (frozenset(names), frozenset(calls))
    return found


def ctx_names(functions) -> frozenset:
    """The attribute names ``functions`` read or store on their ctx (Note [attribute
    readers]): on each one's first parameter, and on the ``ctx`` parameter of the module
    functions they reach."""
    names: set = set()
    todo = [(fn, True) for fn in functions if inspect.isfunction(fn)]
    seen: set = set()
    while todo:
        fn, first = todo.pop()
        if (fn, first) in seen:
            continue
        seen.add((fn, first))
        code = fn.__code__
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        tracked = {"ctx"} if "ctx" in params else set()
        if first and params:
            tracked.add(params[0])
        if not tracked:  # no ctx here to read, nor to pass on
            continue
        found, calls = _scan(code, frozenset(tracked))
        names |= found
        module_globals = fn.__globals__
        for name in calls:
            target = module_globals.get(name)
            if inspect.isfunction(target):
                todo.append((target, False))
        for cell in fn.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if inspect.isfunction(value):
                todo.append((value, first))
    return frozenset(names)


class OpNode(Node):
    """The backward node of a registry op; subclasses are generated per op row."""

    _op: OpDef
    _plain_apply = True  # Note [plain step]: apply reads only its gradients and saved values
    # what a node without attributes or saved values keeps (the eager recorders skip the stores
    # and the two dicts; read-only, so no node writes into another's)
    _attrs = _saved = MappingProxyType({})

    # a recorder (ops/core/recording.py) sets every field of its node itself: the class call then
    # allocates without an ``__init__`` frame (``new_node``, Note [eager fast path])
    __init__ = object.__init__
    needs_input_grad: tuple = ()

    def _release(self):
        self._released = True
        if self._saved:  # (one that saved nothing keeps its empty table)
            self._saved = {}
        # arrays a composite forward stashed (indices, masks) go with the saved tensors (the
        # attributes are copied only when there is one: most nodes stash none)
        attrs = self._attrs
        if attrs:
            for value in attrs.values():
                if isinstance(value, np.ndarray):
                    self._attrs = {k: v for k, v in attrs.items() if not isinstance(v, np.ndarray)}
                    break

    def _unpack(self, name):
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        value = self._saved[name]
        return value.unpack(self) if hasattr(value, "unpack") else value

    def __getattr__(self, name):
        # ctx-style access to an attribute a composite forward stored (``ctx.dim``) that its
        # class has no reader for (Note [attribute readers]): served, at the cost of the
        # failed look-up that got here; the class is not changed. (``_attrs`` has a class
        # default: no recursion, and no instance ``__dict__`` made by asking for it.)
        attrs = self._attrs
        if name in attrs:
            return attrs[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def apply(self, grad_outputs: list) -> list:
        op = self._op
        grads = grad_outputs
        if len(grads) == 1:  # one output: the common case, without generators
            if grads[0] is None:
                return [None] * len(self._next_edges)
            if op.elementwise:
                return self._apply_elementwise(grads[0])
        elif all(g is None for g in grads):  # (not ``count``: Tensor ==)
            return [None] * len(self._next_edges)
        elif any(g is None for g in grads):  # missing ones: zeros on the outputs' device
            device = next(g.device for g in grad_outputs if g is not None)
            grads = [g if g is not None else dispatch.zeros(shape, dtype, device)
                     for g, (shape, dtype) in zip(grad_outputs, self._output_meta)]
        if op.save:
            result = op.backward(self, *grads, **{name: self._unpack(name) for name in op.save})
        else:
            result = op.backward(self, *grads)
        needs = self.needs_input_grad
        if not isinstance(result, (tuple, list)):
            result = (result,)
        if len(result) == 1 and len(needs) == 1:
            return [result[0] if needs[0] else None]
        if op.edge_inputs is not None:  # one gradient per edge (``no_grad`` inputs have none)
            return [result[k] if needs[k] else None for k in op.edge_inputs]
        return [r if need else None for r, need in zip(result, needs)]

    def _apply_fused(self, region, g):
        """Note [fused backward] (ops/core/fusion.py): this node and the ``FusedRegion`` below it at
        once, from this node's gradient ``g``: ``FusedGradients``, or None to decline."""
        return fusion.apply_fused(region, g)

    def _apply_elementwise(self, g):
        op = self._op
        out = []
        # create_graph, or a transform (tangents, batched gradients) is active: the bodies run
        # on Tensors and record their own graph (Note [transform hooks])
        recording = is_grad_enabled() or dispatch.transform_hook is not None
        for name, need in zip(op.inputs, self.needs_input_grad):
            if not need:
                out.append(None)
                continue
            body = op.backward[name]
            if body is passthrough:
                out.append(g)
                continue
            if recording:
                args = [self._unpack(p) for p in op.params[name]]
                if op.holomorphic and g._data.dtype.kind == "c":  # Note [complex support]
                    args = [_conj(a) for a in args]
                res = body(g, *args)
                out.append(res if isinstance(res, dispatch.Tensor) else dispatch.full_like(g, res))
            else:  # the kernel reads arrays: no tensors built for the saved values
                args = [g]
                for p in op.params[name]:
                    args.append(self._saved_value(p))
                if op.holomorphic and g._data.dtype.kind == "c":
                    args = [g] + [_conj_value(a) for a in args[1:]]
                res = dispatch.run_body_fast(body, args, g._data.dtype)  # Note [eager fast path]
                out.append(res if res is not None else dispatch.run_body(body, args, g.dtype))
        return out

    def _saved_value(self, name):
        """A saved value as its array (or scalar) for a kernel: ``_unpack`` without building a
        tensor; raises as ``_unpack`` does (freed, or changed in place since saved)."""
        value = self._saved.get(name)
        kind = type(value)
        if kind is SavedTensor:
            return value.data(self)
        if (kind is float or kind is int) and not self._released:  # a saved Python scalar
            return value
        value = self._unpack(name)
        return value._data if isinstance(value, dispatch.Tensor) else value


class ElementwiseNode(OpNode):
    """The backward node of an elementwise row: fusible (Note [fused regions]) and with the
    engine's plain step (Note [plain step] in engine/engine.py)."""

    _fusible = True

    def _apply_plain(self, grad_outputs: list):
        """``apply`` and the engine's ``validate_outputs`` at once, or None: for a small
        C-contiguous (or broadcast scalar) float gradient whose every input shares its shape
        and dtype (nothing to reduce or cast), saved values that are Python scalars or
        C-contiguous arrays of that shape and dtype, no transform active: each needed body
        through its kernel's entry point (``fastpath.run_body_entry``, the operand checks of
        ``run_body_fast`` done here once for the gradient; a ``passthrough`` body passes the
        gradient on whatever its layout, as ``apply`` does). With one body to run, the incoming
        gradient's Tensor carries the result when nobody else can see it (``unshared``).
        Raises as ``apply`` does (saved values changed in place); a released node declines
        (``apply`` raises the error)."""
        g = grad_outputs[0]
        if type(g) is not dispatch.Tensor or self._released or dispatch.transform_hook is not None:
            return None
        data = g._data
        if type(data) is not np.ndarray:
            return None
        size = data.size
        if size >= _config.FUSION_MIN_ELEMENTS:  # the engine fuses a region from here
            return None
        op = self._op
        steps = op.plain_steps.get(self.needs_input_grad)
        if steps is None:
            steps = op.plain_steps[self.needs_input_grad] = _plain_steps(op, self.needs_input_grad)
        shape, np_dtype = data.shape, data.dtype
        metas, saved = self._next_meta, self._saved
        out = [None] * len(metas)
        head = None  # the gradient as a kernel operand, once a body needs it
        for i, body, params in steps:
            meta = metas[i]
            if meta is None or meta[0] != shape or meta[1].np is not np_dtype:
                return None
            if body is passthrough:  # (any layout: the general path passes it on as it is)
                out[i] = g
                continue
            if head is None:
                if data.flags.c_contiguous:  # (typed read-only: Note [direct kernel entry])
                    head, first = data, "r"
                elif size > 1 and not any(data.strides):  # broadcast (a full sum's): a scalar
                    head, first = data[(0,) * data.ndim], "s"
                else:
                    return None
            values = [head]
            pattern = first
            for p in params:
                value = saved[p]
                kind = type(value)
                if kind is float or kind is int:
                    pattern += "s"
                elif kind is SavedTensor:
                    value = value.data(self)
                    if (type(value) is not np.ndarray or value.dtype is not np_dtype
                            or value.shape != shape):
                        return None
                    if not value.flags.c_contiguous:
                        return None
                    pattern += "r"
                else:
                    return None
                values.append(value)
            res = dispatch.run_body_entry(body, values, pattern, shape, size, np_dtype)
            if res is None:
                return None
            if len(steps) == 1 and unshared(g, 2):  # 2: ``grad_outputs`` and ``g``
                # the engine's gradient, seen by nobody else and used by no other step:
                # the Tensor carries the new gradient (no Tensor made and freed per node)
                g._data = res
                out[i] = g
            else:
                out[i] = dispatch.Tensor._make(res)
        return out


def _plain_steps(op: OpDef, needs: tuple) -> tuple:
    """``(input index, backward body, its saved parameters)`` of each input that ``needs``
    says needs a gradient (``ElementwiseNode._apply_plain``)."""
    return tuple((i, op.backward[name], op.params[name])
                 for i, (name, need) in enumerate(zip(op.inputs, needs)) if need)


def _conj(v):
    """``conj(v)`` of a saved operand: a recorded ``conj`` for complex Tensors (so double
    backward sees it), ``v.conjugate()`` for a Python complex, ``v`` itself when real."""
    if isinstance(v, dispatch.Tensor):
        if v._data.dtype.kind != "c":
            return v
        return dispatch.composite(OPS["conj"], v)
    return v.conjugate() if type(v) is complex else v


def _conj_value(v):
    """``conj(v)`` of a saved array or scalar (``v`` itself when real)."""
    if isinstance(v, np.ndarray):
        return np.conj(v) if v.dtype.kind == "c" else v
    return v.conjugate() if isinstance(v, complex) else v


def _make_node_class(op: OpDef) -> type:
    """The node class of ``op``, with its attribute readers (Note [attribute readers])."""
    base = ElementwiseNode if op.elementwise else OpNode
    names = set(op.attrs)
    if not op.elementwise:
        names |= ctx_names((op.forward, op.cuda_forward, op.backward))
    namespace = {"_op": op, "__module__": "jitgrad.autograd"}
    for name in sorted(names):
        # (not a node's own field, ``_next_meta``..., nor anything its class has)
        if (not name.startswith("_") or name in op.attrs) and not hasattr(base, name):
            namespace[name] = _AttrReader(name)
    saved = set(op.save) if not op.elementwise else {p for ps in op.params.values() for p in ps}
    for name in saved - set(op.attrs):
        reader = "_saved_" + _torch_saved_name(op, name)
        if not hasattr(base, reader):  # (never a node's own method, ``_saved_value``)
            namespace[reader] = _saved_reader(name)
    return type(op.node_name, (base,), namespace)


def _torch_saved_name(op: OpDef, name: str) -> str:
    """PyTorch's name of a saved value on a node (``_saved_self``, ``_saved_other``,
    ``_saved_result``): the row's first input is ``self``, a second one ``other``."""
    if name in op.inputs[:2] and name != "condition":
        return ("self", "other")[op.inputs.index(name)]
    return name


def _saved_reader(name: str):
    """Note [saved-value readers]: ``grad_fn._saved_self`` (PyTorch's attribute) unpacks the
    value the node saved as ``name`` (checked for in-place changes; an error once freed)."""
    def read(node):
        if name not in node._saved and not node._released:
            raise AttributeError(f"'{type(node).__name__}' saved no '{name}' for this call "
                                 "(only what the needed gradients read is saved)")
        return node._unpack(name)

    return property(read)


def arithmetic_only(body) -> bool:
    """Whether a scalar body computes with arithmetic, comparisons and ``abs`` only: no call
    of another function and no ``**`` (a ``pow``); ``OpDef.cheap``."""
    calls = set(body.__code__.co_names) - {"builtins", "abs", "bool"}
    power = any(i.opname == "BINARY_OP" and i.argrepr in ("**", "**=")
                for i in dis.get_instructions(body))
    return not calls and not power


def def_elementwise(name, node_name, inputs, forward, backward=None, attrs=(), dtype_rule="promote",
                    cpu_ufunc=None, jvp=None, complex_ok=False, holomorphic=False, method=None,
                    inplace=None, export=None, numpy=None):
    """Declare an elementwise op from scalar bodies (see the module docstring); ``complex_ok``
    and ``holomorphic``: Note [complex support] (ops/core/operands.py); ``method``, ``inplace``,
    ``export``, ``numpy``: Note [derived surface]."""
    backward = backward or {}
    params = {inp: tuple(inspect.signature(body).parameters)[1:] for inp, body in backward.items()}
    for inp, names in params.items():
        unknown = set(names) - set(inputs) - set(attrs) - {"result"}
        if unknown:
            raise TypeError(f"{name}: backward body for {inp} takes unknown parameters {unknown}")
    op = OpDef(name=name, node_name=node_name, inputs=tuple(inputs), forward=forward,
               backward=backward, attrs=tuple(attrs), elementwise=True, dtype_rule=dtype_rule,
               params=params, cpu_ufunc=cpu_ufunc, jvp=jvp, complex_ok=complex_ok or holomorphic,
               holomorphic=holomorphic, method=method, inplace=inplace, export=export,
               numpy=numpy, cheap=arithmetic_only(forward))
    op.node_cls = _make_node_class(op)
    OPS[name] = op
    return op


def def_composite(name, node_name, inputs, forward, backward, attrs=(), save=(), view=False,
                  n_outputs=1, dtype_rule="promote", jvp=None, batch_rule=None, cuda_forward=None,
                  complex_ok=False, method=None, inplace=None, export=None, numpy=None, alias=None,
                  identity=None, value_dependent_shape=False, no_grad=(), random=False,
                  check=False):
    """Declare a non-elementwise op: an array-level forward and a Tensor-level backward
    (optionally a ``jvp`` rule for forward mode, a ``batch_rule`` for vmap, a
    ``cuda_forward`` over CUDA arrays, Note [derived surface]'s ``method``, ``inplace``,
    ``export``, ``numpy``, and Note [what compile knows of a row]'s ``alias``, ``identity``,
    ``value_dependent_shape``, ``random``, ``check``). ``no_grad``: names of inputs that are never
    differentiated (class targets, weights): the node has no edge for them, as PyTorch's."""
    op = OpDef(name=name, node_name=node_name, inputs=tuple(inputs), forward=forward,
               backward=backward, attrs=tuple(attrs), elementwise=False, dtype_rule=dtype_rule,
               save=tuple(save), view=view, n_outputs=n_outputs, jvp=jvp, batch_rule=batch_rule,
               cuda_forward=cuda_forward, complex_ok=complex_ok, method=method, inplace=inplace,
               export=export, numpy=numpy, alias=alias, identity=identity,
               value_dependent_shape=value_dependent_shape, random=random, check=check,
               edge_inputs=tuple(k for k, n in enumerate(inputs) if n not in no_grad)
               if no_grad else None)
    op.node_cls = _make_node_class(op)
    OPS[name] = op
    return op


# Note [derived surface]: the Tensor methods, the in-place methods, the top-level ``jitgrad``
# names and the ``jitgrad.numpy`` names of the ops are derived from the rows, not listed by
# hand. A row says where its public function appears (``method=``, ``inplace=``, ``export=``,
# ``numpy=`` on ``def_*``); the family file binds that function to the row with ``@public(ROW)``
# (one function per row); tensor.py, ops/inplace.py, jitgrad/__init__.py and
# jitgrad/numpy/__init__.py build their tables with ``surface(kind)``. The public function is
# installed as it is (a method is the function itself: no wrapper on the hot path). Functions
# that no single row backs (convenience wrappers over several ops) are listed explicitly, once
# per module.
PUBLIC: dict = {}  # row name -> the public function implementing the row


def public(op):
    """Decorator: bind the public function ``fn`` to the row ``op`` (returns ``fn`` unchanged)."""
    def bind(fn):
        if op.name in PUBLIC:
            raise TypeError(f"{op.name}: a public function is already bound "
                            f"({PUBLIC[op.name].__name__})")
        PUBLIC[op.name] = fn
        return fn
    return bind


def _names(value, fn) -> tuple:
    if value is True:
        return (fn.__name__,)
    return (value,) if isinstance(value, str) else tuple(value)


def surface(kind: str) -> list:
    """``[(names, fn, op)]`` for the rows declared so far whose ``kind`` (``"method"``,
    ``"inplace"``, ``"export"``, ``"numpy"``) is set, in declaration order; ``inplace=True``
    names each method name + ``"_"``. A flagged row without a bound function raises."""
    out = []
    for op in OPS.values():
        value = getattr(op, kind)
        if value is None or value is False:
            continue
        fn = PUBLIC.get(op.name)
        if fn is None:
            raise TypeError(f"{op.name}: {kind}= is set but no public function is bound "
                            "(decorate it with @public)")
        if kind == "inplace" and value is True:
            names = tuple(n + "_" for n in _names(op.method or True, fn))
        else:
            names = _names(value, fn)
        out.append((names, fn, op))
    return out
