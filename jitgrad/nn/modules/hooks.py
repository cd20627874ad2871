"""Module hooks: the global hook tables (``register_module_forward_hook`` and friends, run
before every module's own hooks) and ``BackwardHook``, which makes a module's full backward
hooks see the gradients w.r.t. its inputs and outputs.

Note [module backward hooks]: a module is no node of the graph, so ``BackwardHook`` puts
identity nodes (``BackwardHookFunctionBackward``) around its forward: one over the input
tensors, one over the output tensors. A pre-hook of the output node sees the gradients w.r.t.
the outputs (``grad_output``: the module's backward pre-hooks may replace them); a post-hook
of the input node sees the gradients w.r.t. the inputs (``grad_input``: the module's full
backward hooks may replace them). When no input requires a gradient there is no input node,
and the full backward hooks run from the output node with ``grad_input`` all None.
"""
from __future__ import annotations

import functools
import warnings

from ...autograd.function import Function
from ...graph.grad_mode import is_grad_enabled
from ...graph.node import HookDict, RemovableHandle
from ...tensor import Tensor

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "ModuleHookHandle", "BackwardHook"]


class ModuleHookHandle(RemovableHandle):
    """A hook's handle whose ``remove()`` also drops the hook's flags (``with_kwargs``,
    ``always_call``) from the side tables ``extra``."""

    def __init__(self, hooks: dict, key, extra=()):
        super().__init__(hooks, key)
        self._extra = tuple(extra)

    def remove(self) -> None:
        super().remove()
        for table in self._extra:
            table.pop(self.id, None)


def add_hook(hooks: HookDict, hook, prepend=False, flags=()) -> ModuleHookHandle:
    """Add ``hook`` to ``hooks`` (first when ``prepend``); ``flags`` are the side tables in
    which the hook's id is set to True (and from which its handle removes it)."""
    key = hooks.add(hook).id
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks.update([items[-1]] + items[:-1])
    for table in flags:
        table[key] = True
    return ModuleHookHandle(hooks, key, flags)


class _Globals:
    """The global hook tables (one instance, ``GLOBAL``)."""

    def __init__(self):
        self.forward_pre_hooks = HookDict()
        self.forward_hooks = HookDict()
        self.forward_hooks_with_kwargs = {}
        self.forward_hooks_always_called = {}
        self.backward_pre_hooks = HookDict()
        self.backward_hooks = HookDict()
        self.is_full_backward_hook = None  # True / False once a (full) backward hook is set
        self.buffer_registration_hooks = HookDict()
        self.module_registration_hooks = HookDict()
        self.parameter_registration_hooks = HookDict()

    def any_call_hooks(self) -> bool:
        return bool(self.forward_pre_hooks or self.forward_hooks or self.backward_pre_hooks
                    or self.backward_hooks)


GLOBAL = _Globals()


def register_module_forward_pre_hook(hook) -> ModuleHookHandle:
    """``hook(module, args) -> None or new args`` runs before every module's ``forward``
    (before the module's own pre-hooks). Returns a handle with ``remove()``."""
    return add_hook(GLOBAL.forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """``hook(module, args, output)`` (``with_kwargs``: ``hook(module, args, kwargs,
    output)``) ``-> None or new output`` runs after every module's ``forward`` (before the
    module's own hooks); ``always_call``: also when ``forward`` raised."""
    flags = ((GLOBAL.forward_hooks_with_kwargs,) if with_kwargs else ()) + \
        ((GLOBAL.forward_hooks_always_called,) if always_call else ())
    return add_hook(GLOBAL.forward_hooks, hook, flags=flags)


def register_module_full_backward_pre_hook(hook) -> ModuleHookHandle:
    """``hook(module, grad_output) -> None or new grad_output`` runs for every module when
    the gradients w.r.t. its outputs are known (Note [module backward hooks])."""
    return add_hook(GLOBAL.backward_pre_hooks, hook)


def _backward_kind(full: bool) -> None:
    if GLOBAL.is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    GLOBAL.is_full_backward_hook = full


def register_module_full_backward_hook(hook) -> ModuleHookHandle:
    """``hook(module, grad_input, grad_output) -> None or new grad_input`` runs for every
    module when the gradients w.r.t. its inputs are computed (Note [module backward
    hooks])."""
    _backward_kind(True)
    return add_hook(GLOBAL.backward_hooks, hook)


def register_module_backward_hook(hook) -> ModuleHookHandle:
    """Deprecated form of ``register_module_full_backward_hook``: ``hook(module,
    grad_input, grad_output)`` is a hook of the node that made the module's output, so
    ``grad_input`` are that node's input gradients (not necessarily the module's)."""
    _backward_kind(False)
    return add_hook(GLOBAL.backward_hooks, hook)


def register_module_buffer_registration_hook(hook) -> ModuleHookHandle:
    """``hook(module, name, buffer) -> None or new buffer`` runs on every
    ``register_buffer``."""
    return add_hook(GLOBAL.buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> ModuleHookHandle:
    """``hook(module, name, submodule) -> None or new submodule`` runs on every
    ``add_module`` / sub-module assignment."""
    return add_hook(GLOBAL.module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> ModuleHookHandle:
    """``hook(module, name, param) -> None or new param`` runs on every
    ``register_parameter`` / parameter assignment."""
    return add_hook(GLOBAL.parameter_registration_hooks, hook)


def run_registration_hooks(hooks, module, name, value):
    """``value`` after the global registration ``hooks`` (each may return a replacement)."""
    for hook in tuple(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class BackwardHookFunction(Function):
    """The identity over several tensors, recorded as one node (Note [module backward
    hooks])."""

    @staticmethod
    def forward(ctx, *tensors):
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _pack(positions, values, size):
    """A tuple of ``size`` with ``values`` at ``positions`` and None elsewhere."""
    out = [None] * size
    for i, v in zip(positions, values):
        out[i] = v
    return tuple(out)


class BackwardHook:
    """One forward call's backward hooks: ``setup_input_hook(args)`` before ``forward`` and
    ``setup_output_hook(result)`` after it (Note [module backward hooks])."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks, self.user_pre_hooks = list(user_hooks), list(user_pre_hooks)
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = 0
        self.input_positions = self.output_positions = None

    @staticmethod
    def _wrap(args, register):
        """``args`` with its tensors passed through one identity node (``register(node)``
        hooks it), and the tensors' positions; ``args`` and None when no tensor needs a
        gradient."""
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not is_grad_enabled() or not any(args[i].requires_grad for i in positions):
            return args, None
        new = BackwardHookFunction.apply(*[args[i] for i in positions])
        node_type = BackwardHookFunction._backward_cls
        register(next(t.grad_fn for t in new if isinstance(t.grad_fn, node_type)))
        out = list(args)
        for i, t in zip(positions, new):
            out[i] = t
        return tuple(out), positions

    def _check_count(self, got, expected, pre):
        """Raise unless a hook's replacement ``got`` holds ``expected`` gradients."""
        if isinstance(got, (tuple, list)) and len(got) == expected:
            return
        n = len(got) if isinstance(got, (tuple, list)) else type(got).__name__
        kind, grads = ("pre hook", "grad_output") if pre else ("hook", "grad_input")
        raise RuntimeError(f"Backward {kind} of {type(self.module).__name__} returned an "
                           f"invalid number of {grads}, got {n}, but expected {expected}")

    def setup_input_hook(self, args):
        """``args`` with its tensors routed through the input node."""
        def register(node):
            node.register_hook(self._input_hook)
        self.n_inputs = len(args)
        args, self.input_positions = self._wrap(args, register)
        return args

    def _input_hook(self, grad_inputs, _grad_outputs):
        if self.grad_outputs is None:  # the outputs' node did not run: nothing to report
            return None
        res = _pack(self.input_positions, grad_inputs, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            self._check_count(out, len(res), pre=False)
            res = tuple(out)
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_positions)

    def setup_output_hook(self, result):
        """``result`` (a tensor or a tuple) with its tensors routed through the output
        node."""
        def register(node):
            node.register_prehook(self._output_pre_hook)
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        self.n_outputs = len(args)
        args, self.output_positions = self._wrap(args, register)
        return args if is_tuple else args[0]

    def _output_pre_hook(self, grad_outputs):
        self.grad_outputs = _pack(self.output_positions, grad_outputs, self.n_outputs)
        for hook in self.user_pre_hooks:
            out = hook(self.module, self.grad_outputs)
            if out is None:
                continue
            self._check_count(out, self.n_outputs, pre=True)
            self.grad_outputs = tuple(out)
        replaced = tuple(self.grad_outputs[i] for i in self.output_positions)
        if self.input_positions is None:  # no input needs a gradient: no input node
            if self.user_hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients "
                              "(grad_input is all None).", stacklevel=2)
            none = (None,) * self.n_inputs
            for hook in self.user_hooks:
                out = hook(self.module, none, self.grad_outputs)
                if out is not None and not (isinstance(out, (tuple, list))
                                            and all(o is None for o in out)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return replaced


class ModuleHooks:
    """``Module``'s call with its hooks and the methods that register them (a base class of
    ``Module``; it holds no state of its own: the tables are made by ``Module.__init__``)."""

    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or GLOBAL.any_call_hooks()):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        """``forward`` between the hooks, in PyTorch's order: global then own forward
        pre-hooks, the backward hooks' input node, ``forward``, global then own forward hooks,
        the backward hooks' output node (Note [module backward hooks] in hooks.py)."""
        glob = GLOBAL
        forward_hooks = [(k, h, k in glob.forward_hooks_with_kwargs,
                          k in glob.forward_hooks_always_called)
                         for k, h in glob.forward_hooks.items()]
        forward_hooks += [(k, h, k in self._forward_hooks_with_kwargs,
                           k in self._forward_hooks_always_called)
                          for k, h in self._forward_hooks.items()]
        called, result = set(), None
        try:
            pre = [(h, False) for h in glob.forward_pre_hooks.values()]
            pre += [(h, k in self._forward_pre_hooks_with_kwargs)
                    for k, h in self._forward_pre_hooks.items()]
            for hook, with_kwargs in pre:
                if with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if not (isinstance(res, tuple) and len(res) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {res}.")
                        args, kwargs = res
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            full, old_style, pre_bw = self._backward_hooks_to_run()
            bw_hook = None
            if full or pre_bw:
                bw_hook = BackwardHook(self, full, pre_bw)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for key, hook, with_kwargs, _ in forward_hooks:
                called.add(key)
                res = hook(self, args, kwargs, result) if with_kwargs else \
                    hook(self, args, result)
                if res is not None:
                    result = res
            if bw_hook is not None:
                result = bw_hook.setup_output_hook(result)
            if old_style:
                self._attach_old_backward_hooks(result, old_style)
            return result
        except Exception:
            for key, hook, with_kwargs, always in forward_hooks:
                if always and key not in called:
                    try:
                        if with_kwargs:
                            hook(self, args, kwargs, result)
                        else:
                            hook(self, args, result)
                    except Exception as exc:  # the first error is the one raised
                        warnings.warn("forward hook with ``always_call=True`` raised an "
                                      f"exception that was silenced as another error was "
                                      f"raised in forward: {exc}", stacklevel=2)
            raise

    def _backward_hooks_to_run(self):
        """(full backward hooks, old-style backward hooks, backward pre-hooks), global first."""
        glob = GLOBAL
        full, old_style = [], []
        for is_full, table in ((glob.is_full_backward_hook, glob.backward_hooks),
                               (self._is_full_backward_hook, self._backward_hooks)):
            if is_full is True:
                full += table.values()
            elif is_full is False:
                old_style += table.values()
        return full, old_style, [*glob.backward_pre_hooks.values(),
                                 *self._backward_pre_hooks.values()]

    def _attach_old_backward_hooks(self, result, old_style):
        """``register_backward_hook``'s hooks, attached to the node that made the first
        tensor of ``result``."""
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        if var.grad_fn is None:
            return
        for hook in old_style:
            var.grad_fn.register_hook(functools.partial(hook, self))

    # --- hooks -----------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args) -> None or new args`` (``with_kwargs``: ``hook(module, args,
        kwargs) -> None or (new_args, new_kwargs)``) runs before ``forward``; ``prepend`` runs
        it before the hooks already registered. Returns a handle with ``remove()``."""
        flags = (self._forward_pre_hooks_with_kwargs,) if with_kwargs else ()
        return add_hook(self._forward_pre_hooks, hook, prepend, flags)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output) -> None or new output`` (``with_kwargs``:
        ``hook(module, args, kwargs, output)``) runs after ``forward``; ``always_call``: also
        when ``forward`` or an earlier hook raised. Returns a handle with ``remove()``."""
        flags = ((self._forward_hooks_with_kwargs,) if with_kwargs else ()) + \
            ((self._forward_hooks_always_called,) if always_call else ())
        return add_hook(self._forward_hooks, hook, prepend, flags)

    def _backward_kind(self, full: bool) -> None:
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output) -> None or new grad_output`` runs when the gradients
        w.r.t. the module's outputs are known, before they flow into it (Note [module
        backward hooks] in hooks.py)."""
        return add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output) -> None or new grad_input`` runs when the
        gradients w.r.t. the module's inputs are computed (None for inputs that are not
        tensors or need no gradient). The inputs and outputs are passed through identity
        nodes, so in-place changes of them in ``forward`` raise."""
        self._backward_kind(True)
        return add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated (use ``register_full_backward_hook``): ``hook(module, grad_input,
        grad_output)`` is a hook of the node that made the module's (first) output, so
        ``grad_input`` are that node's input gradients, not necessarily the module's."""
        self._backward_kind(False)
        return add_hook(self._backward_hooks, hook)
