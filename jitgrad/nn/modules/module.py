"""``Module``: the base class of layers and models, with PyTorch's registration rules.

Assigning a ``Parameter`` to an attribute registers it, a ``Module`` becomes a child, and
``register_buffer`` adds state that is not trained (running statistics). Everything else is a
plain attribute. Traversals (``named_parameters``, ``state_dict``...) follow registration order.
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np

from ... import dtypes
from ...graph.grad_mode import no_grad
from ...graph.node import HookDict
from ..._device import Device
from ...ops.core import dispatch, upper
from ...tensor import Tensor
from ...ops.core.upper import guard_writes
from ..parameter import Buffer, Parameter
from . import hooks
from .hooks import ModuleHooks, add_hook, run_registration_hooks
from .hooks import (register_module_backward_hook,  # noqa: F401 - PyTorch's home for them
                    register_module_buffer_registration_hook, register_module_forward_hook,
                    register_module_forward_pre_hook, register_module_full_backward_hook,
                    register_module_full_backward_pre_hook,
                    register_module_module_registration_hook,
                    register_module_parameter_registration_hook)

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class IncompatibleKeys(_IncompatibleKeys):
    """What ``load_state_dict`` returns: the keys it did not find and the ones it did not
    use."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _parse_to(args, kwargs):
    """``(device or None, dtype or None)`` from ``to(device)``, ``to(dtype)``,
    ``to(device, dtype)``, ``to(tensor)`` and keywords (``"cpu"``, ``"cuda[:N]"``, an int N)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda", "meta", "mps"):
            device = a
        elif isinstance(a, int) and not isinstance(a, bool):
            device = a
        elif a is not None:
            dtype = a
    if device is not None:
        device = Device(device)  # raises for unknown devices, naming the accepted ones
    if dtype is not None:
        dtype = dtypes.to_dtype(dtype)
        if not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                            f"desired dtype={dtype}")
    return device, dtype


def _check_cuda(device) -> None:
    """Refuse a move to ``device`` up front (nothing moved yet) when it does not exist."""
    backend = dispatch.cuda_backend()
    if not backend.is_available():
        raise RuntimeError(f"cannot move the module to {device}: jitgrad.cuda.is_available() is "
                           "False (no CUDA GPU or driver, or the jitgrad[cuda] extra is missing), "
                           "so it stays on the CPU")
    backend.check_index(device.index or 0)


# the hook tables every module has (name -> its empty table)
_HOOK_TABLES = {"_forward_hooks": HookDict, "_forward_hooks_with_kwargs": dict,
                "_forward_hooks_always_called": dict, "_forward_pre_hooks": HookDict,
                "_forward_pre_hooks_with_kwargs": dict, "_backward_hooks": HookDict,
                "_backward_pre_hooks": HookDict, "_state_dict_pre_hooks": HookDict,
                "_state_dict_hooks": HookDict, "_load_state_dict_pre_hooks": HookDict,
                "_load_state_dict_post_hooks": HookDict}


class Module(ModuleHooks):
    """Base class of every layer and model (PyTorch's ``nn.Module``).

    Subclasses call ``super().__init__()`` first, assign parameters/sub-modules as attributes
    and define ``forward``. Calling the module runs forward pre-hooks, ``forward`` and forward
    hooks.
    """

    training: bool
    _version = 1
    call_super_init = False  # PyTorch's flag (Module.__init__ takes no arguments here)
    dump_patches = False

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", OrderedDict())
        setattr_(self, "_buffers", OrderedDict())
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", OrderedDict())
        setattr_(self, "_is_full_backward_hook", None)
        for name, table in _HOOK_TABLES.items():
            setattr_(self, name, table())

    def __setstate__(self, state):
        # a module pickled before a hook table existed gets an empty one
        self.__dict__.update(state)
        for name, table in _HOOK_TABLES.items():
            self.__dict__.setdefault(name, table())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    # --- registration ----------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._drop(name, keep="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(jitgrad.nn.Parameter or None expected)")
            params[name] = None
            return
        if isinstance(value, Buffer):
            if d.get("_buffers") is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._drop(name, keep="_buffers")
            self.register_buffer(name, value, value.persistent)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._drop(name, keep="_modules")
            modules[name] = run_registration_hooks(hooks.GLOBAL.module_registration_hooks,
                                                   self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (jitgrad.nn.Module or None expected)")
            modules[name] = None
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(jitgrad.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, ()):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def _drop(self, name, keep):
        """Forget ``name`` everywhere but in the store ``keep`` (where a reassignment keeps
        its place in the registration order, as PyTorch)."""
        self.__dict__.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                self.__dict__[store].pop(name, None)
        if keep != "_buffers":
            self._non_persistent_buffers_set.discard(name)

    def _check_name(self, kind, name):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name, param):
        """Add ``param`` (a ``Parameter`` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (jitgrad.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly.")
        self._parameters[name] = run_registration_hooks(
            hooks.GLOBAL.parameter_registration_hooks, self, name, param)

    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer (state that is not a parameter, e.g. running statistics); persistent
        buffers are part of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                            f"'{name}' (jitgrad.Tensor or None required)")
        self._buffers[name] = run_registration_hooks(hooks.GLOBAL.buffer_registration_hooks,
                                                     self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module under ``name`` (also ``register_module``)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = run_registration_hooks(hooks.GLOBAL.module_registration_hooks,
                                                     self, name, module)

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The sub-module at the dotted path ``target`` ("" is this module)."""
        mod = self
        for item in target.split(".") if target else ():
            if item not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def set_submodule(self, target: str, module, strict=False) -> None:
        """Put ``module`` at the dotted path ``target``; ``strict``: only replace an existing
        sub-module."""
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and name not in parent._modules:
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if not isinstance(module, Module):
            raise TypeError(f"`module` is not an nn.Module, found {type(module).__name__}")
        setattr(parent, name, module)

    def get_buffer(self, target: str):
        """The buffer at the dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    def get_parameter(self, target: str):
        """The parameter at the dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not a parameter")
        return mod._parameters[name]

    # --- traversal -------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(dotted name, module)`` for this module and every descendant (each once)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for mod_prefix, mod in mods:
            for name, value in get(mod):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(dotted name, Parameter)`` pairs in registration order (shared ones once)."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """Call ``fn`` on every child (recursively) and then on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- mode and gradients ----------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (``training``) on this module and its descendants."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """``train(False)``: dropout off, batch norm uses its running statistics."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter: to None (default), or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # --- state -----------------------------------------------------------------------------
    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not Module.get_extra_state

    def get_extra_state(self):
        """Extra state to save in ``state_dict`` under ``_extra_state`` (any picklable
        object); a subclass that overrides it overrides ``set_extra_state`` too."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called: override get_extra_state (and set_extra_state) to keep "
                           "extra state in the state_dict")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned (called by ``load_state_dict``)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called: override set_extra_state together with get_extra_state")

    def _own_state(self):
        """``(name, tensor)`` of this module's parameters and persistent buffers."""
        for name, p in self._parameters.items():
            if p is not None:
                yield name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                yield name, b

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, t in self._own_state():
            destination[prefix + name] = t if keep_vars else t.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered ``{dotted name: tensor}`` of parameters and persistent buffers (and the
        ``_extra_state`` of modules that define ``get_extra_state``). The tensors are detached
        but share storage with the module (copy them to snapshot). State-dict pre-hooks run
        before a module's entries are added, post-hooks after its children's."""
        if args:
            raise TypeError("state_dict() takes its arguments as keywords (destination=, "
                            "prefix=, keep_vars=)")
        if destination is None:
            destination = OrderedDict()
        for hook in tuple(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in tuple(self._state_dict_hooks.values()):
            if hook(self, destination, prefix, {}) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _state_targets(self):
        """``{key: (module, name, tensor or None)}`` of everything ``state_dict`` holds
        (``tensor`` None for extra state), without running hooks."""
        out = OrderedDict()
        for path, module in self.named_modules():
            prefix = path + "." if path else ""
            for name, value in module._own_state():
                out[prefix + name] = (module, name, value)
            if module._has_extra_state():
                out[prefix + "_extra_state"] = (module, "_extra_state", None)
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` (in place, without recording) and
        hand ``_extra_state`` entries to ``set_extra_state``.

        ``strict``: raise when keys are missing or unexpected (after loading the rest, as
        PyTorch). Shape mismatches raise before anything is loaded. ``assign``: take the given
        tensors instead of copying into the existing ones. Load pre-hooks see (and may edit)
        a copy of ``state_dict``; post-hooks get the ``IncompatibleKeys`` (and may edit its
        lists) before the strict check. Returns ``IncompatibleKeys(missing_keys,
        unexpected_keys)``.
        """
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict = OrderedDict(state_dict)
        missing, unexpected, errors = [], [], []
        for path, module in self.named_modules():
            if module._load_state_dict_pre_hooks:
                prefix = path + "." if path else ""
                # each module's hooks see the entries under its prefix, as PyTorch's
                view = OrderedDict((k, v) for k, v in state_dict.items() if k.startswith(prefix))
                for hook in tuple(module._load_state_dict_pre_hooks.values()):
                    hook(module, view, prefix, {}, strict, missing, unexpected, errors)
                for k in [k for k in state_dict if k.startswith(prefix) and k not in view]:
                    del state_dict[k]
                state_dict.update(view)
        targets = self._state_targets()
        missing += [k for k in targets if k not in state_dict and k not in missing]
        unexpected += [k for k in state_dict if k not in targets and k not in unexpected]
        pending = []
        for key, (_, _, current) in targets.items():
            if key not in state_dict or current is None:
                continue
            value = state_dict[key]
            # the values are copied into the module's tensors (those writes are guarded below)
            arr = (value._data  # device read: copied in on its device
                   if isinstance(value, Tensor) else np.asarray(value))
            if dispatch.device_of(arr) != dispatch.device_of(current._data):  # device read: where
                arr = dispatch.move(arr, current.device)  # values load onto the module's device
            if arr.shape != current.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{list(arr.shape)} from checkpoint, the shape in current model "
                              f"is {list(current.shape)}.")
                continue
            pending.append((key, current, value, arr))
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t"
                               + "\n\t".join(self._key_errors(missing, unexpected, strict)
                                              + errors))
        self._load_pending(pending, assign)
        for key, (module, _, current) in targets.items():
            if current is None and key in state_dict:
                module.set_extra_state(state_dict[key])
        keys = IncompatibleKeys(missing, unexpected)
        for _, module in self.named_modules():
            for hook in tuple(module._load_state_dict_post_hooks.values()):
                if hook(module, keys) is not None:
                    raise RuntimeError("load_state_dict post-hooks must modify the "
                                       "IncompatibleKeys in place and return None")
        key_errors = self._key_errors(missing, unexpected, strict)
        if key_errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t"
                               + "\n\t".join(key_errors))
        return keys

    @staticmethod
    def _key_errors(missing, unexpected, strict):
        errors = []
        if strict and missing:
            errors.append("Missing key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in missing) + ". ")
        if strict and unexpected:
            errors.append("Unexpected key(s) in state_dict: "
                          + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        return errors

    def _load_pending(self, pending, assign):
        """Write each ``(key, current, value, arr)`` into the module (guarded, unrecorded)."""
        guard_writes(*(current for _, current, _, _ in pending))
        with no_grad():
            for key, current, value, arr in pending:
                if assign:
                    self._assign(key, current, value, arr)
                elif current.is_cuda:
                    dispatch.cuda_backend().copy_into(current._data, arr)  # device read: write
                    current._version_counter.bump()
                else:
                    np.copyto(current._data, arr, casting="unsafe")  # device read: write
                    current._version_counter.bump()

    # --- state hooks -----------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` adds this module's
        entries."""
        return add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` runs after
        ``state_dict`` added this module's and its children's entries (it may edit them in
        place; ``local_metadata`` is an empty dict: jitgrad keeps no state-dict versions)."""
        return add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before ``load_state_dict`` loads anything; it may
        edit ``state_dict`` (a copy of the one given) and append to the lists."""
        return add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys) -> None`` runs after ``load_state_dict`` loaded
        the values and before its strict check; clearing the key lists in place lets the load
        pass."""
        return add_hook(self._load_state_dict_post_hooks, hook)

    def _assign(self, key, current, value, arr):
        path, _, name = key.rpartition(".")
        mod = self.get_submodule(path)
        if name in mod._parameters:
            mod._parameters[name] = Parameter(Tensor._make(arr), current.requires_grad)
        else:
            mod._buffers[name] = value if isinstance(value, Tensor) else Tensor._make(arr)

    # --- dtype / device --------------------------------------------------------------------
    def _apply_arrays(self, fn):
        """Replace every parameter's, gradient's and buffer's array by ``fn`` of it (moved or
        cast on its device: a write into each, guarded)."""
        if upper.write_guard is not None:
            guard_writes(*(t for m in self.modules() for t in (*m._parameters.values(),
                                                                 *m._buffers.values())
                           if t is not None))
        for module in self.modules():
            for p in module._parameters.values():
                if p is not None:
                    p._data = fn(p._data)  # device read: moved/cast on its device
                    if p._grad is not None:
                        p._grad._data = fn(p._grad._data)  # device read: moved/cast
            for name, b in module._buffers.items():
                if b is not None:
                    b._data = fn(b._data)  # device read: moved/cast on its device
        return self

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)``: move every
        parameter, gradient and buffer to ``device`` and cast the floating-point ones to
        ``dtype``, in place: the Parameter and buffer objects stay the same (optimizers and
        other references keep working), only their data is replaced, as PyTorch."""
        device, dtype = _parse_to(args, dict(kwargs))
        if device is None and dtype is None:
            return self
        if device is not None and device != "cpu":
            _check_cuda(device)
        target = None if dtype is None else dtype.np

        def convert(a):
            if device is not None and dispatch.device_of(a) != device:
                a = dispatch.move(a, device)
            if target is not None and a.dtype.kind == "f" and a.dtype != target:
                a = a.astype(target)
            return a
        return self._apply_arrays(convert)

    def to_empty(self, *, device, recurse=True):
        """Move the parameters and buffers to ``device`` without promising their values
        (PyTorch's for modules built on the meta device; here they are moved as ``to``)."""
        if not recurse:
            raise NotImplementedError("to_empty(recurse=False) is not supported: jitgrad "
                                      "moves a module's parameters together with its children's")
        return self.to(device)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def cpu(self):
        """Move every parameter and buffer to the CPU (in place, see ``to``)."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move every parameter and buffer to CUDA device ``device`` (default ``cuda:0``; an
        int or ``"cuda:N"``), in place (see ``to``)."""
        return self.to(Device("cuda" if device is None else device))

    # --- repr ------------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's repr (subclasses override)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): {_addindent(repr(module), 2)}"
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    def __dir__(self):
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())
