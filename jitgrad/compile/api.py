"""``jitgrad.compile``: trace a function once per input signature, run it as a program after.

The cache key (``_key``) holds, per argument leaf: a tensor's shape, dtype, device,
requires_grad and memory layout class, and which tensor leaves share storage; a float's kind
only (floats are runtime inputs, unless the function used one as a Python number: then its
value); any other leaf by value (static). Plus the grad mode, the default dtype and the
fast-math mode. Tensors read from closures are guarded at each call (shape, dtype,
requires_grad) and read fresh. After ``MAX_TRACES`` traces of one function it warns once,
naming what kept changing, and runs eagerly from then on.
"""
from __future__ import annotations

import functools
import threading
import warnings

import numpy as np

from .. import _config, dtypes
from ..autograd import forward_ad, transforms
from ..graph.grad_mode import is_grad_enabled
from ..ops import creation
from ..func._pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor
from . import guards
from . import program as program_module
from .program import is_disabled
from .trace import GraphBreak, Tracer

MAX_TRACES = 8
#: traces longer than this warn (``_warn_if_long``)
LONG_TRACE_NODES = 1000


class CompileError(RuntimeError):
    """A ``fullgraph=True`` function could not be captured whole."""


def compile(fn=None, *, static_argnums=(), static_argnames=(), fullgraph=False):
    """Compile ``fn``: the first call for an input signature traces it through the registry
    ops (forward and backward); later calls with that signature run the traced program.

    Parameters
    ----------
    fn : callable taking and returning Tensors (nested in tuples, lists, dicts), Python
        numbers and other static values.
    static_argnums, static_argnames : arguments that are part of the cache key by value
        (their changes retrace) instead of runtime inputs.
    fullgraph : raise ``CompileError`` where capture stops, instead of warning once and
        running eagerly.

    Usable as ``@jitgrad.compile`` or ``@jitgrad.compile(fullgraph=True)``; see
    docs/compile.md for what is captured and the cache key.
    """
    if fn is None:
        return functools.partial(compile, static_argnums=static_argnums,
                                 static_argnames=static_argnames, fullgraph=fullgraph)
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    return CompiledFunction(fn, tuple(static_argnums), tuple(static_argnames), fullgraph)


class CompiledFunction:
    """The callable ``jitgrad.compile`` returns; ``stats()`` tells what it traced and why."""

    def __init__(self, fn, static_argnums, static_argnames, fullgraph):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._static_argnums = static_argnums
        self._static_argnames = static_argnames
        self._fullgraph = fullgraph
        self._entries: dict = {}  # key -> Program, or a reason string (that signature is eager)
        self._specialized: set = set()  # float leaves whose values joined the key
        self._keys: list = []  # keys traced, in order (to name what keeps changing)
        self._eager_reason = None  # set after MAX_TRACES traces
        self._lock = threading.Lock()
        self.traces = 0
        self.fallbacks: list = []  # (reason, source line) of each capture that stopped

    def __get__(self, obj, objtype=None):  # a compiled method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def stats(self) -> dict:
        """Traces so far, the signatures cached, the fallbacks and why."""
        return {"traces": self.traces, "cached": sum(isinstance(e, program_module.Program)
                                                     for e in self._entries.values()),
                "eager_signatures": sum(isinstance(e, str) for e in self._entries.values()),
                "fallbacks": list(self.fallbacks), "gave_up": self._eager_reason}

    def __call__(self, *args, **kwargs):
        if not _config.COMPILE or is_disabled() or self._eager_reason or _under_transform():
            return self._fn(*args, **kwargs)
        fast = None if kwargs or self._static_argnums else _shallow(args)
        if fast is not None:  # the common call, without the pytree walk
            leaves, spec = fast  # (Tensors and floats only: their kinds, as ``_kinds`` gives)
            specialized = self._specialized
            kinds = ["tensor" if type(leaf) is Tensor else
                     "static" if specialized and i in specialized else "scalar"
                     for i, leaf in enumerate(leaves)]
        else:
            leaves, spec = tree_flatten((args, kwargs))
            kinds = self._kinds(args, kwargs, leaves)
        key = _key(spec, leaves, kinds)
        entry = self._entries.get(key)
        if (isinstance(entry, program_module.Program) and entry.guards_hold(self._fn)
                and (not entry.value_guards or entry.values_hold(leaves))
                and (entry.plan is None or entry.plan.holds(leaves))):
            return entry.run(leaves, spec, (self._fn, args, kwargs))
        if isinstance(entry, str):
            return self._fn(*args, **kwargs)
        return self._trace(args, kwargs, leaves, spec, kinds, key)

    # --- arguments -------------------------------------------------------------------------
    def _kinds(self, args, kwargs, leaves) -> list:
        """Per leaf: "tensor", "scalar" (a runtime float) or "static"."""
        static = set()
        if self._static_argnums or self._static_argnames:
            # leaves of static arguments, found by flattening each argument
            index = 0
            for i, a in enumerate(args):
                n = len(tree_flatten(a)[0])
                if i in self._static_argnums:
                    static.update(range(index, index + n))
                index += n
            for name in kwargs:
                n = len(tree_flatten(kwargs[name])[0])
                if name in self._static_argnames:
                    static.update(range(index, index + n))
                index += n
        kinds = []
        for i, leaf in enumerate(leaves):
            if i in static:
                kinds.append("static")
            elif isinstance(leaf, Tensor):
                kinds.append("tensor")
            elif isinstance(leaf, float) and i not in self._specialized:
                kinds.append("scalar")
            else:
                kinds.append("static")
        return kinds

    # --- tracing ---------------------------------------------------------------------------
    def _trace(self, args, kwargs, leaves, spec, kinds, key):
        with self._lock:
            self.traces += 1
            self._keys.append(key)
            if self.traces > MAX_TRACES:
                self._give_up()
                return self._fn(*args, **kwargs)
        tracer = Tracer()
        rng = creation.default_generator
        before = rng.get_state()  # Note [random rows] (trace.py)
        try:
            with tracer:
                traced = []
                for i, (leaf, kind) in enumerate(zip(leaves, kinds)):
                    if kind == "tensor":
                        traced.append(tracer.input_tensor(leaf, i))
                    elif kind == "scalar":
                        traced.append(tracer.scalar_placeholder(leaf, i))
                    else:
                        traced.append(leaf)
                targs, tkwargs = tree_unflatten(traced, spec)
                out = self._fn(*targs, **tkwargs)
                program = program_module.capture(tracer, out, leaves, kinds)
            self._warn_if_long(len(tracer.graph.nodes))
        except GraphBreak as brk:
            rng.set_state(before)
            if brk.specialize is not None:
                self._specialized.add(brk.specialize)
                return self(*args, **kwargs)
            return self._fallback(key, brk, args, kwargs)
        except Exception:
            rng.set_state(before)
            # a float argument entered as a placeholder tensor can take another path in code
            # that tests for numbers (``value=`` vs ``src=``): retry with the floats as values
            floats = {i for i, kind in enumerate(kinds) if kind == "scalar"}
            if not floats:
                raise
            self._specialized.update(floats)
            return self(*args, **kwargs)
        if tracer.failure is not None:  # found after the run: its (eager) result stands
            self._fallback(key, tracer.failure, None, None)
            return program.first_result(leaves)
        program.paths = [(t, path) for _, t in program.closures
                         for path in [guards.locate(self._fn, t)] if path is not None]
        self._entries[key] = program
        return program.first_result(leaves)

    def _fallback(self, key, brk, args, kwargs):
        message = (f"jitgrad.compile: {getattr(self._fn, '__qualname__', self._fn)} cannot be "
                   f"captured: {brk.reason} (at {brk.where})")
        if self._fullgraph:
            raise CompileError(message + "; fullgraph=True asks for the whole function")
        self.fallbacks.append((brk.reason, brk.where))
        self._entries[key] = brk.reason
        warnings.warn(message + "; this signature runs eagerly", stacklevel=4)
        if args is None:
            return None
        return self._fn(*args, **kwargs)

    def _warn_if_long(self, nodes: int):
        """Note [bounded kernels] (codegen.py): a long trace compiles in time linear in its
        length, but it is nearly always a Python loop traced unrolled, which a loop primitive
        compiles once whatever its trip count."""
        if nodes > LONG_TRACE_NODES:
            warnings.warn(f"jitgrad.compile: the trace of "
                          f"{getattr(self._fn, '__qualname__', self._fn)} has {nodes} operations "
                          "(a Python loop is traced unrolled); write the loop with "
                          "jitgrad.fori_loop to compile its body once", stacklevel=4)

    def _give_up(self):
        changing = _what_changed(self._keys)
        self._eager_reason = f"traced {MAX_TRACES} times ({changing} kept changing)"
        warnings.warn(f"jitgrad.compile: {getattr(self._fn, '__qualname__', self._fn)} was "
                      f"{self._eager_reason}; it runs eagerly from now on", stacklevel=4)


def _under_transform() -> bool:
    """Whether a function transform a program cannot carry is active: a forward-mode dual level
    (``jvp``, ``jacfwd``, ``hessian``) or ``vmap``. A program computes plain arrays, so it would
    drop the tangents (zero derivatives, silently) and read batched tensors as plain ones; the
    function runs eagerly inside them instead. (Reverse mode, ``grad``/``jacrev``, runs the
    program: its backward node carries the gradients.)"""
    return forward_ad.levels_open() or transforms.batch_runner is not None


_LEAF_TYPES = (Tensor, float)


def _shallow(args):
    """``(leaves, spec)`` of ``(args, {})`` when each argument is a Tensor or float, or a
    tuple / list of them (the common calls), else None."""
    shape, leaves = [], []
    for a in args:
        kind = type(a)
        if kind is Tensor or kind is float:
            shape.append(None)
            leaves.append(a)
        elif kind is tuple or kind is list:
            for x in a:
                if type(x) is not Tensor and type(x) is not float:
                    return None
            shape.append((kind, len(a)))
            leaves.extend(a)
        else:
            return None
    return leaves, _shallow_spec(tuple(shape))


@functools.lru_cache(maxsize=None)
def _shallow_spec(shape: tuple):
    """The tree spec of ``(args, {})`` for arguments shaped as ``shape`` (see ``_shallow``)."""
    example = tuple(0 if s is None else s[0](range(s[1])) for s in shape)
    return tree_flatten((example, {}))[1]


def _layout(a) -> str:
    if type(a) is not np.ndarray:
        return "device"
    flags = a.flags
    return "C" if flags.c_contiguous else "F" if flags.f_contiguous else "strided"


def _key(spec, leaves, kinds) -> tuple:
    parts = [spec, is_grad_enabled(), dtypes.get_default_dtype().name, _config.FAST_MATH]
    roots: dict = {}
    for i, (leaf, kind) in enumerate(zip(leaves, kinds)):
        if kind == "tensor":  # (inline: this runs for every argument of every call)
            data = leaf._data
            if type(data) is np.ndarray:
                base = data.base
                alias = roots.setdefault(id(data if base is None else base), i)
                parts.append(("tensor", data.shape, data.dtype, "cpu", leaf._requires_grad,
                              "C" if data.flags.c_contiguous else _layout(data), alias))
                continue
            base = getattr(data, "base", None)
            # leaves sharing storage: the first's index
            alias = roots.setdefault(id(data if base is None else base), i)
            parts.append(("tensor", data.shape, data.dtype, str(leaf.device),
                          leaf._requires_grad, "device", alias))
        elif kind == "scalar":
            parts.append(("scalar",))
        else:
            parts.append(("static", _static_key(leaf)))
    return tuple(parts)


def _static_key(value):
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, hash(value.tobytes()))
    if isinstance(value, slice):  # unhashable before Python 3.12; an index argument
        return ("slice", _static_key(value.start), _static_key(value.stop),
                _static_key(value.step))
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"jitgrad.compile: an argument of type {type(value).__name__} is "
                        "neither a Tensor, a number nor hashable; pass it as a Tensor or make it "
                        "static with a hashable value") from None
    return (type(value).__name__, value)


def _what_changed(keys) -> str:
    """Names the parts of the key that differ between the traces (``argument 0: shape``...)."""
    first = keys[0]
    names = ["the argument structure", "the grad mode", "the default dtype", "fast-math"]
    fields = ["kind", "shape", "dtype", "device", "requires_grad", "layout", "aliasing"]
    changed = []
    for k in keys[1:]:
        for pos, (a, b) in enumerate(zip(first, k)):
            if a == b:
                continue
            if pos < len(names):
                what = names[pos]
            elif a[0] == "tensor" and b[0] == "tensor":
                diff = [f for f, x, y in zip(fields, a, b) if x != y]
                what = f"argument leaf {pos - len(names)}: {', '.join(diff)}"
            else:
                what = f"argument leaf {pos - len(names)}"
            if what not in changed:
                changed.append(what)
    return "; ".join(changed) or ("closure tensors, or the values of integer or boolean "
                                  "tensors read in Python (Note [value guards])")
