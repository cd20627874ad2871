"""Graph nodes: ``Node`` (a backward function), ``AccumulateGrad``, ``SavedTensor`` and hooks.

A node is created by each recorded operation. ``next_functions`` holds one ``(node, input_nr)``
edge per differentiable forward input: the node that produced that input (its ``grad_fn``) or
the ``AccumulateGrad`` of a leaf, or ``(None, 0)`` for an input that needs no gradient.

Note [lazy leaf edges]: a leaf's sink is shared by every node of the graphs that hold it and
made again once none does (the leaf refers to it weakly, as PyTorch's does), so an eager loop
whose graphs die at once (``x + y`` on two leaves) would make, and free, a sink and its weak
reference per leaf and op (~0.3 µs each). A recorder therefore stores the edge of a leaf that
has no live sink as ``(leaf, 0)`` and sets ``node._leaf_edges``; the graph holds the leaf as
the sink's ``variable`` would. ``bind_leaf_sinks`` turns such edges into ``(sink, 0)``, taking
the leaf's live sink or making one (``Tensor._grad_accumulator``): ``next_functions`` does so
before it answers, and the engine's walks before they read a node's edges, so nothing else
ever sees a leaf in an edge, and one graph still has one sink per leaf. A sink that exists
when an op is recorded is its edge at once (a hook registered on it fires, as in PyTorch).

This module knows tensors only by duck typing (``_version_counter``, ``_data``, ``grad``...):
the autograd layer sits below ``tensor.py``.
"""
from __future__ import annotations

import itertools
from types import MappingProxyType
import re
import sys
import sysconfig
import threading
import weakref
from typing import NamedTuple

import numpy as np

from ..kernels.cpu.pool import Lease

_sequence = itertools.count()
#: the next node's ``sequence_nr`` (for node constructors outside this module)
next_sequence_nr = _sequence.__next__
_hook_ids = itertools.count()

SECOND_BACKWARD_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


class RemovableHandle:
    """Returned by ``register_hook``-style calls; ``remove()`` unregisters the hook."""

    def __init__(self, hooks: dict, key):
        self._hooks = hooks
        self.id = key

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class HookDict(dict):
    """An ordered id -> hook mapping; ``add`` returns the handle that removes the hook."""

    def add(self, fn) -> RemovableHandle:
        key = next(_hook_ids)
        self[key] = fn
        return RemovableHandle(self, key)


_NO_HOOKS = MappingProxyType({})
_INF = float("inf")


class Node:
    """A backward function in the graph (PyTorch's ``torch.autograd.graph.Node``).

    Subclasses implement ``apply(grad_outputs) -> grad_inputs``: one gradient per forward output
    in, one per ``next_functions`` edge out (``None`` where no gradient flows).
    """

    # Hook tables are created on first registration: most nodes never get one, and a node is
    # made per recorded op (read-only empty tables stand in until then).
    _pre_hooks = _NO_HOOKS
    _post_hooks = _NO_HOOKS
    _tensor_hooks = _NO_HOOKS  # output_nr -> HookDict of tensor (pre) hooks
    _retain_grad_hooks = _NO_HOOKS  # output_nr -> callable, runs after the tensor hooks
    _metadata = None
    _released = False  # True once backward freed the saved values (``_release``)
    _leaf_edges = False  # some edge is ``(leaf, 0)``: Note [lazy leaf edges]
    # set by every hook registration (tensor hooks, retain_grad, node pre/post hooks): the
    # engine's plain step (Note [plain step] in engine/engine.py) is for nodes nothing observes
    _observed = False
    # Note [plain step]: ``_apply_plain(grad_outputs)`` is ``apply`` followed by the engine's
    # ``validate_outputs``, or None where the node cannot tell cheaply (the engine then runs
    # both); None here: the engine always runs both
    _apply_plain = None
    # Note [plain step]: True where running the node is its ``apply`` alone (no hooks of its
    # own beyond those that set ``_observed``, not fusible): the engine may then call ``apply``
    # and ``validate_outputs`` directly. Not for a leaf's sink (its tensor's hooks run too)
    _plain_apply = False
    # Note [fused regions] (engine/regions.py): nodes that may run as part of a fused region
    # implement ``_apply_fused``; the engine asks no other node
    _fusible = False

    def __init__(self):
        self._next_edges: tuple = ()
        self._next_meta: tuple = ()  # (shape, dtype) of each forward input, for validation
        self._output_meta: list = []  # (shape, dtype) of each forward output
        self._sequence_nr = next(_sequence)
        self._released = False

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # --- introspection (PyTorch names) ---
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple:
        if self._leaf_edges:
            bind_leaf_sinks(self)
        return self._next_edges

    def _sequence_number(self) -> int:
        return self._sequence_nr

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def _num_outputs(self) -> int:
        return len(self._output_meta)

    # --- hooks ---
    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; a returned tuple replaces
        ``grad_inputs``."""
        if "_post_hooks" not in self.__dict__:
            self._post_hooks = HookDict()
        self._observed = True
        return self._post_hooks.add(fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; a returned tuple replaces ``grad_outputs``."""
        if "_pre_hooks" not in self.__dict__:
            self._pre_hooks = HookDict()
        self._observed = True
        return self._pre_hooks.add(fn)

    def _has_tensor_hooks(self) -> bool:
        """Whether tensor hooks or retain_grad are registered on any output (a cheap check the
        engine makes before looking per output)."""
        return bool(self._tensor_hooks or self._retain_grad_hooks)

    def _tensor_pre_hooks(self, output_nr: int):
        hooks = self._tensor_hooks.get(output_nr)
        return hooks.values() if hooks else ()

    def _add_tensor_hook(self, output_nr: int, fn) -> RemovableHandle:
        if "_tensor_hooks" not in self.__dict__:
            self._tensor_hooks = {}
        self._observed = True
        return self._tensor_hooks.setdefault(output_nr, HookDict()).add(fn)

    def _set_retain_grad_hook(self, output_nr: int, fn) -> None:
        if "_retain_grad_hooks" not in self.__dict__:
            self._retain_grad_hooks = {}
        self._observed = True
        self._retain_grad_hooks[output_nr] = fn

    # --- execution ---
    def apply(self, grad_outputs: list) -> list:
        raise NotImplementedError(f"{self.name()}.apply is not implemented")

    def __call__(self, *grad_outputs):
        return self.apply(list(grad_outputs))

    def _release(self) -> None:
        """Free saved tensors (called by the engine unless ``retain_graph``)."""
        self._released = True


def _current_grad_fn(t):
    """``t.grad_fn`` now (a view's is regenerated after in-place writes, as PyTorch's), or the
    recorded one when regenerating is refused (a no_grad view whose base was modified)."""
    try:
        return t.grad_fn
    except RuntimeError:
        return t._grad_fn


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    Note [saved tensor versions]: in-place ops bump a version counter shared by a tensor and its
    views; unpacking compares it with the saved version and raises PyTorch's error when they
    differ. An op's own output is saved without a reference to the tensor object (its data and
    version counter only), so the node does not keep itself alive through a cycle; ``unpack``
    rebuilds a tensor with ``grad_fn`` set to the node.
    """

    __slots__ = ("_tensor", "_data", "_counter", "_version", "_is_output", "_output_nr",
                 "_requires_grad", "_tensor_type", "_packed", "_unpack_hook", "_meta")

    def __init__(self, tensor, is_output: bool = False):
        self._counter = counter = tensor._version_counter
        self._version = counter.value
        self._is_output = is_output
        self._unpack_hook = None
        if is_output:
            self._tensor = None
            self._data = tensor._data
            self._output_nr = tensor._output_nr
            self._requires_grad = tensor._requires_grad
            self._tensor_type = type(tensor)  # its ``_from_saved`` rebuilds the output at unpack
        else:
            self._tensor = tensor
        if _saved_hooks_in_use and saved_hooks_state.stack:  # Note [saved tensor hooks]
            pack, self._unpack_hook = saved_hooks_state.stack[-1]
            self._packed = pack(tensor)
            # what pack returned is all that is kept (and what a version error names)
            self._meta = (list(tensor._data.shape), tensor._data.dtype.name, tensor._output_nr)
            self._tensor = self._data = None

    def data(self, node: Node):
        """``unpack(node)._data`` without building a tensor (the fused backward reads arrays);
        raises as ``unpack`` does."""
        if node._released or self._counter.value != self._version or self._unpack_hook:
            return self.unpack(node)._data
        return self._data if self._is_output else self._tensor._data

    def unpack(self, node: Node):
        if node._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        if self._counter.value != self._version:
            t = self._tensor
            if self._unpack_hook is not None:  # (packed: its tensor is not kept)
                shape, dtype, nr = self._meta
                t = None
            else:
                shape = list(self._data.shape if t is None else t.shape)
                dtype = (self._data.dtype if t is None else t._data.dtype).name
                nr = self._output_nr if self._is_output or t is None else t._output_nr
            owner = node if self._is_output or t is None else _current_grad_fn(t)
            # PyTorch names the op here without its "Backward<N>" suffix ("output 0 of Exp"), and
            # C++-only nodes by their qualified name ("torch::autograd::CopySlices")
            op = (getattr(owner, "qualified_name", None)
                  or re.sub(r"Backward\d*$", "", owner.name())) if owner is not None else ""
            where = f", which is output {nr} of {op}," if owner is not None else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{dtype} {shape}]{where} is at version {self._counter.value}; "
                f"expected version {self._version} instead. Hint: the backtrace further above shows "
                "the operation that failed to compute its gradient. The variable in question was "
                "changed in there or anywhere later. Good luck!")
        if self._unpack_hook is not None:
            return self._unpacked(node)
        if self._is_output:
            return self._tensor_type._from_saved(self._data, self._counter,
                                          node if self._requires_grad else None, self._output_nr)
        return self._tensor

    def _unpacked(self, node: Node):
        """The tensor the unpack hook gives back for what the pack hook returned (an output
        of ``node``: its values, rebuilt as that output)."""
        value = self._unpack_hook(self._packed)
        if not hasattr(value, "_data"):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(value).__name__}")
        if self._is_output:
            return self._tensor_type._from_saved(value._data, self._counter,
                                                 node if self._requires_grad else None,
                                                 self._output_nr)
        return value


class _SavedHooksState(threading.local):
    stack = ()  # (pack, unpack) pairs, innermost last (a class default: no getattr fallback)


# Note [saved tensor hooks]: ``autograd.graph.saved_tensors_hooks(pack, unpack)`` pushes a pair
# on this thread's stack; every tensor saved for backward while it is set (by a registry op, an
# in-place op or a custom Function: they all save through ``SavedTensor``) is passed to ``pack``
# and only its result is kept; backward gets ``unpack(result)`` back. The version check is the
# same. Without hooks a save costs one read of a module global more: the thread-local stack is
# looked at only while some thread has hooks set (``_saved_hooks_in_use``).
saved_hooks_state = _SavedHooksState()
_saved_hooks_in_use = 0  # saved_tensors_hooks contexts open, all threads together
_saved_hooks_lock = threading.Lock()


def push_saved_hooks(pack, unpack) -> None:
    """Note [saved tensor hooks]: this thread's tensors saved from now on go through ``pack``."""
    global _saved_hooks_in_use
    with _saved_hooks_lock:
        _saved_hooks_in_use += 1
    saved_hooks_state.stack = saved_hooks_state.stack + ((pack, unpack),)


def pop_saved_hooks() -> None:
    global _saved_hooks_in_use
    saved_hooks_state.stack = saved_hooks_state.stack[:-1]
    with _saved_hooks_lock:
        _saved_hooks_in_use -= 1


# Note [grad locks]: ``.grad`` of one tensor can be updated by several threads at once (engine
# workers, user threads running backward on graphs that share a leaf, and two AccumulateGrad
# nodes made for the same leaf by racing forwards), so the update runs under a lock chosen by
# the tensor's identity, not the node's. Striped: a fixed set of locks, no per-tensor state.
_GRAD_LOCKS = tuple(threading.Lock() for _ in range(64))


def grad_lock(tensor) -> threading.Lock:
    """The lock that guards ``tensor.grad`` updates (Note [grad locks])."""
    return _GRAD_LOCKS[(id(tensor) >> 4) % len(_GRAD_LOCKS)]


# Note [owned buffers]: PyTorch's AccumulateGrad keeps the incoming gradient as ``.grad`` instead
# of copying it, and its InputBuffer adds a node's gradients in place, when nothing else
# references the tensor or its storage (``use_count``). CPython's reference counts tell the same:
# a gradient Tensor referenced only by the engine's own variables and buffer slots, with no
# history, views or weak references, whose array is referenced only by that Tensor and owns its
# memory (its own allocation, or a pool block leased to it alone: not a view of another array,
# not wrapped foreign memory) can be seen by nobody else. Anything that could see it adds a
# reference: a hook that kept it, the caller's ``gradient=`` argument (``detach()`` shares the
# array), a second edge it was passed to (``x + y`` returns one tensor for both inputs), a saved
# tensor, a view, ``.grad`` of another tensor. Callers count the references their own frames
# hold (``known``: only variables and slots they can see, so a reference they overlook costs a
# copy, never a wrong write); the engine moves gradients out of its lists before counting.
#
# The counts are the interpreter's, so the reuse is guarded (``REUSE_BUFFERS``, decided at
# import by ``refcounts_exact`` and a probe of the counts themselves): CPython 3.11 to 3.13 with
# the GIL count every reference a frame holds, which is verified there (3.10 counts each call's
# argument twice: it over-counts, which is safe but never reuses). CPython 3.14 may leave a
# frame's reference to a local uncounted (borrowed stack references), a free-threaded build
# defers and biases its counts, and other interpreters have no counts to read: an under-count
# there would turn the reuse into a wrong in-place write, so ``unshared`` answers False (every
# gradient copied, none reused). pyproject.toml's ``requires-python`` is the supported range;
# this guard is the safety net outside it.
def refcounts_exact(implementation: str, version: tuple, gil_disabled: bool) -> bool:
    """Whether an interpreter so described (``sys.implementation.name``, ``sys.version_info``,
    a free-threaded build or its GIL off) gives the reference counts Note [owned buffers] reads:
    CPython 3.11 to 3.13 with the GIL."""
    return implementation == "cpython" and (3, 11) <= tuple(version[:2]) <= (3, 13) and not (
        gil_disabled)


def _gil_disabled() -> bool:
    """Whether this interpreter is a free-threaded build (even with its GIL turned back on: its
    counts are still deferred) or runs without the GIL."""
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return True
    enabled = getattr(sys, "_is_gil_enabled", None)
    return enabled is not None and not enabled()


def _refs(obj) -> int:
    """Strong references to ``obj``, not counting this call's argument."""
    return sys.getrefcount(obj) - _CALL_REFS


def _call_refs() -> int:
    probe = object()  # held by this one variable
    return _refs(probe) - 1


_CALL_REFS = 0
_CALL_REFS = _call_refs()  # measured, not assumed: the interpreter may borrow stack references


def _counts_hold() -> bool:
    """The engine's pattern, counted: a gradient in a list slot and one variable is seen as
    held twice, and once more with a third reference (the probe ``REUSE_BUFFERS`` also asks)."""
    grads = [object()]
    g = grads[0]
    alone = _refs(g) == 2
    extra = g
    seen = _refs(g) == 3
    del extra
    return alone and seen


#: Note [owned buffers]: whether gradient buffers may be reused where the counts say nobody
#: else sees them (False: ``unshared`` never says so, every gradient is copied; tests turn it
#: off to check that path)
REUSE_BUFFERS = refcounts_exact(sys.implementation.name, sys.version_info,
                                _gil_disabled()) and _counts_hold()


def unshared(t, known: int) -> bool:
    """Whether nobody but the caller can see gradient Tensor ``t`` (the object; its memory may
    be shared): the caller's frames hold ``known`` references to it and nothing else holds any,
    and it has no history, no views and no weak references (Note [owned buffers]). Such a
    Tensor may be given another array in place of a new Tensor. Always False where the
    interpreter's counts are not guaranteed (``REUSE_BUFFERS``)."""
    return REUSE_BUFFERS and not (
        _refs(t) > known + 1  # + this function's argument
        or t._grad_fn is not None or t._requires_grad or t._base is not None
        or weakref.getweakrefcount(t))


def sole_owner(t, known: int) -> bool:
    """Whether gradient ``t`` and its memory may be kept or written in place (Note [owned
    buffers]): the caller's frames hold ``known`` references to ``t`` and nothing else holds
    any. Device arrays other than NumPy's are never taken."""
    if not unshared(t, known + 1):  # + this function's argument
        return False
    a = t._data
    if type(a) is not np.ndarray or _refs(a) > 2 or not a.flags.writeable:  # t._data and a
        return False
    base = a.base
    if base is None:
        return a.flags.owndata
    return type(base) is Lease and _refs(base) <= 2  # a.base and base


class AccumulateGrad(Node):
    """Sink node of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    # A leaf's sink is made again whenever the last graph holding it is gone (the leaf keeps a
    # weak reference, as PyTorch's does), when something first asks a graph for it (Note [lazy
    # leaf edges]): its constant fields are class attributes, and ``sink_of`` allocates it with
    # the class call (no ``__init__`` frame) and stores the variable alone.
    __init__ = object.__init__
    _next_edges = ()
    _next_meta = ()
    # a leaf's sink runs before anything else that is ready (PyTorch gives it UINT64_MAX)
    _sequence_nr = _INF
    variable = None  # the leaf (set by ``sink_of``)

    @property
    def _output_meta(self) -> list:
        """The leaf's ``(shape, dtype)``: what a gradient reaching this sink must have."""
        variable = self.variable
        return [(variable._data.shape, variable.dtype)]

    def _has_tensor_hooks(self) -> bool:
        return bool(self.variable._leaf_hooks)

    def _tensor_pre_hooks(self, output_nr: int):
        hooks = self.variable._leaf_hooks
        return hooks.values() if hooks else ()

    def apply(self, grad_outputs: list) -> list:
        new_grad = grad_outputs[0]
        if new_grad is None:
            return []
        var = self.variable
        # 2 references are the engine's: the input buffer's slot and ``new_grad``
        owned = type(grad_outputs) is list and sole_owner(new_grad, 2)
        with grad_lock(var):
            var._accumulate_grad(new_grad, owned)
        for hook in list(var._post_accumulate_hooks.values()) if var._post_accumulate_hooks else ():
            if hook(var) is not None:
                raise TypeError("hooks registered with register_post_accumulate_grad_hook must "
                                f"return None, but {getattr(hook, '__name__', hook)} returned a value")
        return []


def sink_of(variable) -> AccumulateGrad:
    """A new ``AccumulateGrad`` of the leaf ``variable``, which keeps it as its
    ``_grad_acc_ref`` (a weak reference: made again once no graph holds it)."""
    sink = AccumulateGrad()
    sink.variable = variable
    variable._grad_acc_ref = weakref.ref(sink)
    return sink


def bind_leaf_sinks(node) -> None:
    """Replace ``node``'s edges to leaves by edges to their sinks (Note [lazy leaf edges])."""
    edges = []
    for edge in node._next_edges:
        target = edge[0]
        if target is not None and not isinstance(target, Node):
            edge = (target._grad_accumulator(), 0)
        edges.append(edge)
    node._next_edges = tuple(edges)
    node._leaf_edges = False


class GraphRoot(Node):
    """Feeds the user's ``grad_tensors`` to the roots of a backward call."""

    def __init__(self, edges, grads):
        super().__init__()
        self._next_edges = tuple(edges)
        self._next_meta = (None,) * len(edges)
        self._grads = list(grads)
        self._sequence_nr = float("inf")

    def apply(self, grad_outputs: list) -> list:
        return self._grads


# --- the fused-region interface (Note [fused regions] in engine/regions.py): the types the
# engine and a fusible node's ``_apply_fused`` (ops/core/fusion.py) exchange, kept here below both
class Destination(NamedTuple):
    """Where the gradient a region member computes for one of its inputs goes: into member
    ``index`` of the region (``outside`` False), or out of the region through its outside edge
    ``index`` (``outside`` True)."""

    outside: bool
    index: int


class FusedGradients(NamedTuple):
    """What ``_apply_fused`` returns for a ``FusedRegion``: ``grads``, per outside edge, the
    gradient leaving the region through it (None: none); ``added``, the outside edges whose
    waiting partial sum (``FusedRegion.partials``) is added into its gradient (the engine drops
    those partials and puts the others back in their slots)."""

    grads: list
    added: tuple
