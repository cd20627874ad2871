"""Functionalised writes: in-place updates and ``.grad`` changes inside a compiled function.

Note [functionalised writes]: a program is a pure function of the values it reads, but a
training step writes: the optimizer updates parameters and its state (``exp_avg``, the
``step`` counter) in place, ``backward()`` stores ``.grad``, ``zero_grad()`` resets it. The
trace records each such write as the value it produces, and the program ends with an
epilogue that writes the final values back:

- An in-place op runs, while a trace is active, as ``ops/inplace.py``'s ``apply_inplace``:
  the write guard is asked about the target ``t`` (``guard``), the new value is computed OUT
  of place by one registry op whose first argument is ``t`` (the tracer records it: the
  "candidate"), then copied into ``t``'s storage, bumping its version once. The write is
  accepted (``_commit``) only when exactly that happened, and the candidate's values equal
  what landed in ``t``; then ``t`` stands for the candidate's value from there on (reads after
  the write see the new value). Anything else is refused with a GraphBreak: a guard with no
  candidate (a raw write by code outside the ops: ``guard_writes``, ``nn.init``, a fused
  optimizer kernel), ``out=``, a write through a view, a write into memory that another
  traced value or an outside tensor shares, a write inside a loop body.
- A write whose target is an outside tensor (a closure, global, attribute or argument: an
  "external") makes the final value of that external part of the program; each compiled
  call copies it into the real tensor's storage and bumps its version, as eager's in-place
  write would (``Plan.write_back``). Writes into tensors made inside are plain values.
- ``.grad`` of an outside leaf is a slot (``_Slot``): the trace notes its object when it
  first sees the leaf, ``zero_grad`` (through ``optim``'s hooks) resets it, ``backward()``
  (Note [backward under compile]) replaces it. At the end the program sets each changed slot
  to its final value (a fresh tensor), or None. The program depends on the slot's state at
  the call (None or not: ``AccumulateGrad`` adds into an existing gradient, the optimizer
  skips parameters without one) unless the function reset the slot before anything looked
  at it; where it does, each call checks that state (``Plan.holds``), and a gradient the
  program reads is read from the leaf's ``.grad`` of that call, never from the tensor object
  the trace saw (it is replaced at every step).
- The trace run is a real eager run: its writes happen. Should the capture stop after some
  (GraphBreak, or any error), ``rollback`` restores every written array and slot, so the
  eager re-run that follows a break does not apply them twice.

Note [backward under compile]: ``loss.backward()`` inside a trace runs as if
``create_graph=True`` (``autograd/api.py``): the backward rules then run as registry ops,
which the tracer records like any other op, and ``AccumulateGrad`` stores the gradient as a
recorded clone (or sum). At the end of the trace run the stored gradients are detached, so
the first call leaves ``.grad`` as eager does; later calls get fresh tensors from the
epilogue. An output whose graph that backward consumed is returned without history (its
backward would raise in eager).
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor


class _Slot:
    """The ``.grad`` of one outside leaf during a trace."""

    __slots__ = ("leaf", "where", "before", "last", "state")

    def __init__(self, leaf, where):
        self.leaf, self.where = leaf, where  # where: ("closure", leaf) or ("input", path)
        self.before = self.last = leaf._grad
        # "open": nothing happened yet; "set": the function reset it first (its state at the
        # call does not matter); "guarded": something looked at it first
        self.state = "open"

    def observe(self):
        """A replacement of the slot since we last looked (``backward()``, ``p.grad = g``)
        observed its state (``AccumulateGrad`` adds into an existing gradient)."""
        if self.leaf._grad is not self.last:
            if self.state == "open":
                self.state = "guarded"
            self.last = self.leaf._grad


class Mutations:
    """What one trace wrote (Note [functionalised writes])."""

    def __init__(self, tracer):
        self.tracer = tracer
        self.pending = None  # [target tensor, its version at the guard, candidate value id]
        self.root_of: dict = {}  # value id -> the external value id it is the new value of
        self.final: dict = {}  # external value id -> the value id it holds now
        self.expected: dict = {}  # id(written tensor) -> its version after the write
        self.clobbered: set = set()  # values whose memory a write changed (reading one breaks)
        self.saved: list = []  # (array, copy): the arrays written, as before (``rollback``)
        self.saved_ids: set = set()
        self.written: list = []  # the arrays of committed writes
        self.slots: dict = {}  # id(leaf) -> _Slot
        self.hyper: list = []  # functions whose results a traced optimizer decided on

    def _fail(self, reason):
        return self.tracer.fail(reason)

    # --- in-place writes ---------------------------------------------------------------------
    def guard(self, t):
        """The write guard: ``t`` is about to be written (in place or ``out=``)."""
        tracer = self.tracer
        if tracer.graph.nodes is not tracer.root_nodes:
            raise self._fail("an in-place write inside a loop or branch body")
        if self.pending is not None:
            self.resolve()
        if type(t._data) is not np.ndarray:
            raise self._fail("an in-place write into a CUDA tensor")
        if id(t._data) not in self.saved_ids:
            self.saved_ids.add(id(t._data))
            self.saved.append((t._data, t._data.copy()))
        self.pending = [t, t._version_counter.value, None]

    def before_op(self, args) -> bool:
        """Called before the tracer records an op: whether it is the pending write's candidate
        (its first argument is the target, nothing else ran since the guard); any other op
        ends the pending write first."""
        p = self.pending
        if p is None:
            return False
        if p[2] is None and args and args[0] is p[0] and p[0]._version_counter.value == p[1]:
            return True
        self.resolve()
        return False

    def resolve(self):
        """End the pending write: accept it or break (never drop it: a write the trace did
        not follow would not happen on a later call)."""
        p, self.pending = self.pending, None
        if p is None:
            return
        t, version, candidate = p
        if candidate is None or t._version_counter.value != version + 1:
            raise self._fail("an in-place write the trace cannot follow (outside jitgrad's "
                             "in-place ops, out=, or a raw write such as an optimizer kernel)")
        self._commit(t, candidate)

    def _commit(self, t, new):
        tracer = self.tracer
        old = tracer.ids.get(id(t))
        result = tracer.tensors[new]
        data = t._data
        if (old is None or new in tracer.weak or t._base is not None
                or result._data.shape != data.shape or result._data.dtype != data.dtype
                or not np.array_equal(result._data, data, equal_nan=data.dtype.kind in "fc")):
            raise self._fail("an in-place write the trace cannot follow (through a view, into "
                             "a float argument, or with a cast)")
        kind = tracer.graph.values[old].kind
        root = old if kind in ("input", "closure") else self.root_of.get(old)
        proxy = tracer.proxies.get(id(t))
        mine = {id(t), id(proxy)}
        # every other traced value over this memory now holds other values than it did
        for vid, other in tracer.tensors.items():
            if vid == new or id(other) in mine or type(other._data) is not np.ndarray:
                continue
            if np.may_share_memory(other._data, data):
                if root is None and tracer.graph.values[vid].kind in ("input", "closure"):
                    raise self._fail("an in-place write into memory an outside tensor shares")
                self.clobbered.add(vid)
        self.clobbered.add(old)
        for key in [k for k, v in tracer.by_data.items() if v == old]:
            del tracer.by_data[key]
        tracer.ids[id(t)] = new
        tracer.by_data[id(data)] = new
        if proxy is not None:
            tracer.ids[id(proxy)] = new
            tracer.by_data[id(proxy._data)] = new
        self.expected[id(t)] = t._version_counter.value
        self.written.append(data)
        if root is not None:
            self.final[root] = new
            self.root_of[new] = root

    def check_new_external(self, t):
        """A tensor from outside first read after writes: it must not share their memory
        (the program would read its values as they were before the call's writes)."""
        data = t._data
        if type(data) is np.ndarray and any(np.may_share_memory(data, a) for a in self.written):
            raise self._fail("a tensor from outside shares memory with a tensor written in "
                             "place before it is read")

    def check_read(self, vid, a):
        """A read of value ``vid`` through tensor ``a``: refused when a write changed its
        memory since (a view or alias of a written tensor), or when a parameter is read with
        grad mode on after its update (its gradient would be taken w.r.t. the old value)."""
        if vid in self.clobbered:
            raise self._fail("a tensor is read after an in-place write changed its memory "
                             "(a view or an alias of the written tensor)")
        if vid in self.root_of and a._requires_grad:
            from ..graph.grad_mode import is_grad_enabled

            if is_grad_enabled():
                raise self._fail("a tensor requiring grad is used with grad mode on after an "
                                 "in-place update")

    # --- .grad slots ------------------------------------------------------------------------
    def see_leaf(self, t, where):
        """An outside leaf requiring grad entered the trace: its ``.grad`` is a slot."""
        if t._requires_grad and t._grad_fn is None and id(t) not in self.slots:
            self.slots[id(t)] = _Slot(t, where)

    def _slot(self, p):
        slot = self.slots.get(id(p))
        if slot is None:
            slot = self.slots[id(p)] = _Slot(p, ("closure", p))
        slot.observe()
        return slot

    def grad_reset(self, p):
        """``zero_grad()`` sets ``p.grad`` to None (called just before it does)."""
        slot = self._slot(p)
        if slot.state == "open":
            slot.state = "set"
        slot.last = None

    def grad_observed(self, p):
        """Python code decides on whether ``p.grad`` is None (the optimizer's step)."""
        slot = self._slot(p)
        if slot.state == "open":
            slot.state = "guarded"

    def guard_fn(self, fn, at_end):
        """``fn()`` (taken now, or at the end of the trace) must be the same at each call."""
        self.hyper.append((fn, None if at_end else fn()))

    # --- the end of the trace ---------------------------------------------------------------
    def finish(self):
        """Resolve the last write (capture, before the outputs are looked up)."""
        if self.pending is not None:
            self.resolve()

    def plan(self):
        """The program's part of the writes: ``Plan`` (None when the trace wrote nothing)."""
        tracer = self.tracer
        values = tracer.graph.values
        writes, grad_reads, grad_sets, slot_guards = [], {}, [], []
        closure_vid = {id(v.info["tensor"]): vid for vid, v in enumerate(values)
                       if v.kind == "closure"}
        for slot in self.slots.values():
            slot.observe()
            before, after = slot.before, slot.leaf._grad
            read = before is not None and id(before) in tracer.proxies
            if read:
                slot.state = "guarded"
                grad_reads[closure_vid[id(before)]] = slot.where
            if slot.state == "guarded":
                slot_guards.append((slot.where, before is None,
                                    None if before is None else (before.shape, before.dtype)))
            if after is before:
                continue
            if after is None:
                grad_sets.append((slot.where, None))
                continue
            vid = tracer.ids.get(id(after))
            if vid is None or vid in self.clobbered or vid in tracer.weak:
                raise self._fail("a .grad is set to a tensor the trace did not compute")
            grad_sets.append((slot.where, self.final.get(vid, vid)))
        for root, new in self.final.items():
            info = values[root].info
            if values[root].kind == "input":
                target = ("input", info["path"])
            elif root in grad_reads:  # the .grad of a leaf, written in place
                target = ("grad", grad_reads[root])
            else:
                target = ("closure", info["tensor"])
            writes.append((target, new))
        if not (writes or grad_reads or grad_sets or slot_guards or self.hyper):
            return None
        return Plan(writes, grad_reads, grad_sets, slot_guards,
                    [(fn, fn() if value is None else value) for fn, value in self.hyper])

    def detach_grads(self):
        """After the trace run: ``.grad`` holds no history (Note [backward under compile])."""
        for slot in self.slots.values():
            g = slot.leaf._grad
            if g is not None and (g._grad_fn is not None or g._requires_grad):
                slot.leaf._grad = g.detach()

    def rollback(self):
        """The capture stopped: undo the trace run's writes (Note [functionalised writes])."""
        for array, copy in reversed(self.saved):
            np.copyto(array, copy)
        for slot in self.slots.values():
            slot.leaf._grad = slot.before
        self.saved = []


def _leaf(where, leaves):
    return leaves[where[1]] if where[0] == "input" else where[1]


class Plan:
    """What a program does besides computing its outputs: the slot and hyper-parameter
    guards, the gradients it reads, and the epilogue (Note [functionalised writes])."""

    def __init__(self, writes, grad_reads, grad_sets, slot_guards, hyper):
        # (target, value id); target: ("input", path), ("closure", t) or ("grad", leaf)
        self.writes = writes
        self.grad_reads = list(grad_reads.items())  # (value id, leaf whose .grad it reads)
        self.grad_sets = grad_sets  # (leaf, value id or None)
        self.slot_guards = slot_guards  # (leaf, .grad was None, (shape, dtype) otherwise)
        self.hyper = hyper
        self.wanted = {v for _, v in writes} | {v for _, v in grad_sets if v is not None}
        self.grad_read_vids = {v for v, _ in self.grad_reads}

    def holds(self, leaves) -> bool:
        for fn, value in self.hyper:
            if not same_structure(fn(), value):
                return False
        for where, was_none, meta in self.slot_guards:
            g = _leaf(where, leaves)._grad
            if (g is None) != was_none:
                return False
            if g is not None and (type(g._data) is not np.ndarray or g.shape != meta[0]
                                  or g.dtype is not meta[1]):
                return False
        return True

    def read(self, env, leaves):
        """The gradients the program reads, from this call's ``.grad``."""
        for vid, where in self.grad_reads:
            env[vid] = _leaf(where, leaves)._grad._data

    def write_back(self, env, leaves):
        """The epilogue: each written outside tensor gets its final value, in place, with a
        version bump (as eager's write); each changed ``.grad`` a fresh tensor, or None."""
        for target, vid in self.writes:
            t = _leaf(target[1], leaves)._grad if target[0] == "grad" else _leaf(target, leaves)
            np.copyto(t._data, env[vid])
            t._version_counter.bump()
        taken = set()
        for where, vid in self.grad_sets:
            leaf = _leaf(where, leaves)
            if vid is None:
                leaf._grad = None
                continue
            a = env[vid]
            if (type(a) is not np.ndarray or a.base is not None or not a.flags.writeable
                    or not a.flags.c_contiguous or id(a) in taken):
                a = np.array(a, order="C")
            taken.add(id(a))
            leaf._grad = Tensor._make(a)


def same_structure(a, b) -> bool:
    """``a`` and ``b`` (lists and tuples of Python values and objects) are the same: numbers,
    strings and None equal, anything else the same object."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_structure(x, y) for x, y in zip(a, b))
    if a is None or isinstance(a, (bool, int, float, complex, str)):
        return a == b
    return a is b


class OptimizerHooks:
    """What ``jitgrad.optim`` asks of a trace (Note [optimizers under compile] in
    optim/optimizer.py), registered with it by trace.py; ``current()`` gives this thread's
    tracer."""

    def __init__(self, current):
        self._current = current

    def _mutations(self):
        tracer = self._current()
        return None if tracer is None or tracer.suspended else tracer.mutations

    def active(self) -> bool:
        return self._mutations() is not None

    def outside(self, fn, *args):
        return self._current().suspended_call(fn, *args)

    def grad_reset(self, p):
        self._mutations().grad_reset(p)

    def grad_observed(self, p):
        self._mutations().grad_observed(p)

    def guard(self, fn, at_end=True):
        self._mutations().guard_fn(fn, at_end)
