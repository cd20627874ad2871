"""``Optimizer``: parameter groups, per-parameter state, ``zero_grad`` and ``state_dict``.

Each concrete optimizer's ``step`` runs one fused Numba kernel per parameter
(``jitgrad.kernels.cpu.optim.optimizer_step``, or its CUDA twin ``kernels.cuda.optim`` for CUDA
parameters) that reads the gradient and updates the parameter and its state arrays in place,
in the parameter's dtype. State buffers live on their parameter's device; ``step`` counters
stay 0-d float32 CPU tensors (as PyTorch's non-capturable optimizers).

Note [optimizers under compile]: a fused kernel writes outside the ops, which a
``jitgrad.compile`` trace cannot record. While this thread traces (``tracing()``: the hooks
jitgrad.compile registers with ``register_trace_hooks``), an optimizer that has a
``_traced_update`` (Adam, AdamW, SGD) writes the same update with in-place Tensor ops, which
the trace functionalises (Note [functionalised writes] in jitgrad/compile/mutations.py). The
``step`` counter is incremented as a tensor and the bias corrections are computed from it
with ops, so the program reads the counter at each call (a Python number would be baked in).
State is created outside the trace (it then lives on, read as closures), and what the traced
step decided in Python (hyper-parameters, which parameters have a gradient, the state
objects) is guarded at each call. ``zero_grad()`` reports its resets. Other optimizers still
ask ``guard_writes``, and the trace falls back to eager.
"""
from __future__ import annotations

import copy
from collections import defaultdict

import numpy as np

from ..graph.grad_mode import enable_grad, no_grad
from ..kernels.cpu import optim as cpu_optim
from ..ops.core import dispatch
from ..ops.core.upper import guard_writes
from ..tensor import Tensor


_trace_hooks = None  # jitgrad.compile's (Note [optimizers under compile])


def register_trace_hooks(hooks) -> None:
    """jitgrad.compile registers ``hooks``: ``active()`` (this thread traces),
    ``outside(fn, *args)`` (run ``fn`` unrecorded), ``grad_reset(p)``, ``grad_observed(p)`` and
    ``guard(fn)`` (``fn()``'s result, taken at the end of the trace, must hold at each call)."""
    global _trace_hooks
    _trace_hooks = hooks


def tracing():
    """The trace hooks when this thread runs a jitgrad.compile trace, else None."""
    hooks = _trace_hooks
    return hooks if hooks is not None and hooks.active() else None


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()
_SET_MSG = ("optimizer parameters need to be organized in ordered collections, but the ordering "
            "of tensors in sets will change between runs. Please use a list instead.")


_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_nonnegative(**hyper) -> None:
    """PyTorch's constructor checks: each named hyperparameter must be >= 0 (its message)."""
    for name, value in hyper.items():
        if value < 0.0:
            raise ValueError(f"Invalid {_LABELS.get(name, name + ' value')}: {value}")


def _flat_pair(p):
    """Flat C-contiguous views of the parameter and of its gradient (same element order)."""
    data = p._data  # device read: updated in place by the step kernel (write guarded)
    if not data.flags.c_contiguous:
        raise RuntimeError("jitgrad optimizers need C-contiguous parameters")
    g = p._grad._data  # device read: the step kernel's operand
    if dispatch.device_of(g) != dispatch.device_of(data):
        raise RuntimeError(dispatch.MIXED_DEVICES_MSG.format(
            dispatch.device_of(data), dispatch.device_of(g), "optimizer step (grad)"))
    if g.dtype != data.dtype or not g.flags.c_contiguous:
        g = (g.astype(data.dtype) if dispatch.device_of(g) != "cpu"
             else np.ascontiguousarray(g, dtype=data.dtype))
    return data.reshape(-1), g.reshape(-1)


class Optimizer:
    """Base class: ``Optimizer(params, defaults)`` where ``params`` is an iterable of
    Tensors or of dicts (parameter groups with their own hyper-parameters)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        if isinstance(params, set):
            raise TypeError(_SET_MSG)
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group: ``{"params": [...], **hyper-parameters}`` (missing ones from
        ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(_SET_MSG)
        else:
            params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", UserWarning, stacklevel=3)
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's gradient: to None (default) or to zeros in place."""
        hooks = tracing() if set_to_none else None
        for group in self.param_groups:
            for p in group["params"]:
                if hooks is not None:  # Note [optimizers under compile]
                    hooks.grad_reset(p)
                    p._grad = None
                    continue
                if p._grad is None:
                    continue
                guard_writes(p)  # (a trace would not replay the reset)
                if set_to_none:
                    p._grad = None
                else:
                    g = p._grad
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def _closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _params_with_grad(self, group):
        """The group's parameters that have a gradient: each is updated in place (with its
        state), so the write guard is asked first (jitgrad.compile refuses steps it traces)."""
        for p in group["params"]:
            if p._grad is not None:
                guard_writes(p)
                yield p

    @staticmethod
    def _zeros_state(p):
        """A zero state buffer shaped like ``p``, on ``p``'s device."""
        if p.is_cuda:
            return dispatch.zeros(p.shape, p.dtype, p.device)
        return Tensor._make(np.zeros_like(p._data, order="C"))  # device read: shape, dtype

    @staticmethod
    def _empty_flat(p):
        """The placeholder for an absent state buffer (an empty flat array of p's kind)."""
        return p._data.reshape(-1)[:0]  # device read: an empty operand of p's kind

    @staticmethod
    def _bump(p):
        p._version_counter.bump()

    @staticmethod
    def _step_count(state):
        """Increment and return the float32 0-d ``state['step']`` tensor (as PyTorch)."""
        step = state["step"]
        guard_writes(step)
        step._data += np.float32(1)  # device read: counted in place (write guarded)
        return float(step._host("optimizer.step"))

    @staticmethod
    def _run(kind, p, *args):
        pd, gd = _flat_pair(p)
        if p.is_cuda:
            dispatch.cuda_kernels("optim").optimizer_step(kind, pd, gd, *args)
        else:
            cpu_optim.optimizer_step(kind, pd, gd, *args)
        p._version_counter.bump()

    def step(self, closure=None):
        raise NotImplementedError

    _traced_update = None  # (self, p, group, state) -> None: the update with Tensor ops
    # whether the state a step makes is data the update reads (zeros, a counter), so the
    # step's Python is the same before and after it exists: the structure is then guarded
    # as at the end of the trace, else also as at the start of the step
    _state_is_data = True

    def _traced_step(self, hooks, closure):
        """``step`` while a trace runs (Note [optimizers under compile])."""
        loss = self._closure(closure)
        hooks.guard(self._structure)
        if not self._state_is_data:  # a program that makes state serves that call only
            hooks.guard(self._structure, at_end=False)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    hooks.grad_observed(p)
                    if p._grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        hooks.outside(self._init_state, p, group, state)
                    self._traced_update(p, group, state)
        return loss

    def _structure(self) -> list:
        """What a traced step decided in Python: the groups, their parameters and
        hyper-parameters, the state objects (compared with ``same_structure``)."""
        out = [self.state, len(self.param_groups)]
        for group in self.param_groups:
            out.append(group)
            out.extend(sorted((k, v) for k, v in group.items() if k != "params"))
            out.append(len(group["params"]))
            for p in group["params"]:
                out.append(p)
                state = self.state.get(p)
                out.append(sorted(state.items()) if state else None)
        return out

    # --- state dict ------------------------------------------------------------------------
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``:
        parameters are referred to by their index in group order. The state tensors are
        shared (not copied)."""
        index, groups, i = {}, [], 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                if id(p) not in index:
                    index[id(p)] = i
                    i += 1
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self._state_items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def _state_items(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state:
                    yield p, self.state[p]

    def load_state_dict(self, state_dict):
        """Restore hyper-parameters and state saved by ``state_dict`` (deep-copied; state
        tensors cast to their parameter's float dtype, ``step`` kept as is)."""
        state_dict = copy.deepcopy(dict(state_dict))
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(self.param_groups, saved):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        id_map = {}
        for g, s in zip(self.param_groups, saved):
            for p, i in zip(g["params"], s["params"]):
                id_map[i] = p
        self.state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            key = int(key)
            if key not in id_map:
                continue
            p = id_map[key]
            self.state[p] = {k: self._cast_state(p, k, v) for k, v in value.items()}
        for g, s in zip(self.param_groups, saved):
            g.update({k: v for k, v in s.items() if k != "params"})

    @staticmethod
    def _cast_state(p, key, value):
        if isinstance(value, Tensor):
            if key == "step":
                return value
            if value.device != p.device:  # state follows its parameter's device (PyTorch)
                value = Tensor._make(dispatch.move(value._data,  # device read: a device copy
                                                   p.device))
            if value.is_cuda:
                d = value._data  # device read: cast or copied on its device
                if d.dtype.kind == "f" and d.dtype != p._data.dtype:
                    d = d.astype(p._data.dtype)
                return Tensor._make(d if d.is_contiguous() else d.copy())
            if value._data.dtype.kind == "f" and value._data.dtype != p._data.dtype:
                return Tensor._make(np.ascontiguousarray(value._host("load_state_dict"),
                                                         p._data.dtype))
            return Tensor._make(np.ascontiguousarray(value._host("load_state_dict")))
        return value

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


class TensorRuleOptimizer(Optimizer):
    """Base of the optimizers whose update is written with Tensor ops (under ``no_grad``)
    rather than one fused kernel: they work on any device at the cost of a few temporaries.

    ``_direction`` gives the step's gradient term ``d = g`` (``-g`` when ``maximize``) plus the
    coupled L2 term ``weight_decay * p``; ``_new_state`` starts a parameter's state with its
    ``step`` counter."""

    @staticmethod
    def _direction(p, group, coupled=True):
        d = p.grad.detach()
        if group.get("maximize", False):
            d = -d
        wd = float(group.get("weight_decay", 0.0))
        if coupled and wd != 0.0:
            d = d + wd * p.detach()
        return d

    @staticmethod
    def _scalar_state(value, dtype=np.float64):
        """A 0-d CPU tensor holding a scalar of the state (``eta``, ``mu_product``...)."""
        return Tensor._make(np.asarray(value, dtype))

    def _new_state(self, p):
        state = self.state[p]
        if not state:
            state["step"] = Tensor._make(np.zeros((), np.float32))
            return state, True
        return state, False

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                for p in self._params_with_grad(group):
                    state, fresh = self._new_state(p)
                    self._update(p, group, state, fresh)
        return loss

    def _update(self, p, group, state, fresh):
        raise NotImplementedError
