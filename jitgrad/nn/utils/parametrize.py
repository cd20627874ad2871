"""Parametrizations (PyTorch's ``torch.nn.utils.parametrize``): a module's tensor computed
from stored ones by modules, ``weight = f_n(...f_1(original))``.

``register_parametrization(module, "weight", f)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (the same Parameter object, so optimizers keep
working; after ``f.right_inverse`` when ``f`` has one) and makes ``module.weight`` a property
that evaluates the chain on every access (once per ``cached()`` block). Assigning
``module.weight = value`` stores ``right_inverse(value)`` into the original. The module's class
is swapped for a subclass ``Parametrized<Class>`` holding the properties, as PyTorch does, so
that other instances of the class are untouched.
"""
from __future__ import annotations

import contextlib
import copy

from ...graph.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList"]

_cache_depth = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within this block each parametrized tensor is computed once (on first access) and
    reused: for a parametrized weight used several times per step (e.g. in an RNN)."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _set_into(target: Tensor, value: Tensor, what: str) -> None:
    """Write ``value`` into ``target`` in place (not recorded)."""
    if tuple(value.shape) != tuple(target.shape) or value.dtype != target.dtype:
        raise ValueError(f"{what}: the value to store has shape {tuple(value.shape)} and dtype "
                         f"{value.dtype}, the original tensor has shape {tuple(target.shape)} "
                         f"and dtype {target.dtype}")
    with no_grad():
        target.copy_(value)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the tensor(s) they start
    from: ``original`` (or ``original0``, ``original1``... when the first ``right_inverse``
    returns a sequence)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:  # taken as the identity, as PyTorch
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, (tuple, list)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if tuple(new.shape) == tuple(original.shape) and new.dtype == original.dtype:
                _set_into(original, new, "register_parametrization")
                self._register("original", original)
            else:
                self._register("original", self._like(original, new))
        else:
            for i, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors. Got element {i} of type {type(value).__name__}")
                self._register(f"original{i}", self._like(original, value))
        if not unsafe:
            self._check_forward(original)

    @staticmethod
    def _like(original, value):
        """``value`` as a Parameter when ``original`` was one (with its requires_grad)."""
        if isinstance(original, Parameter):
            return Parameter(value.detach().clone(), original.requires_grad)
        return value.detach().clone().requires_grad_(original.requires_grad)

    def _register(self, name, tensor):
        if isinstance(tensor, Parameter):
            self.register_parameter(name, tensor)
        else:
            self.register_buffer(name, tensor)

    def _check_forward(self, original):
        """The chain must give back a tensor of the original's shape and dtype (PyTorch's
        consistency checks, skipped with ``unsafe=True``)."""
        with no_grad():
            out = self()
        if not isinstance(out, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got "
                             f"{type(out).__name__}.")
        if tuple(out.shape) != tuple(original.shape) or out.dtype != original.dtype:
            raise ValueError("Registering a parametrization may not change the shape or dtype "
                             f"of the tensor, unless `unsafe` flag is enabled.\nunparametrized "
                             f"shape: {tuple(original.shape)}, dtype: {original.dtype}\n"
                             f"parametrized shape: {tuple(out.shape)}, dtype: {out.dtype}")

    def right_inverse(self, value):
        """Store ``value`` as the parametrized tensor: the chain's ``right_inverse``s, last
        parametrization first, give the originals, written in place."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                _set_into(self.original, value, "right_inverse")
            else:
                if not isinstance(value, (tuple, list)) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of "
                                     f"{self.ntensors} tensors")
                for i, v in enumerate(value):
                    _set_into(getattr(self, f"original{i}"), v, "right_inverse")

    def forward(self):
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


def _no_pickle(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(): pickle the state_dict and register the parametrizations "
                       "again on a fresh module before load_state_dict.")


def _deepcopy(self, memo):
    """A copy of a parametrized module (of the same generated class)."""
    new = type(self).__new__(type(self))
    memo[id(self)] = new
    new.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return new


def _property(tensor_name):
    def get(self):
        plist = self.parametrizations[tensor_name]
        if not _cache_depth:
            return plist()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = plist()
        return _cache[key]

    def set_(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    return property(get, set_, doc=f"``{tensor_name}`` computed by its parametrizations")


def is_parametrized(module, tensor_name=None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given)."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module) -> type:
    """The module's class before any parametrization was registered."""
    cls = type(module)
    return cls.__bases__[0] if is_parametrized(module) else cls


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrize ``module.<tensor_name>`` by the module ``parametrization`` (appended to
    its chain when it has one). ``unsafe``: skip the checks that the result keeps the
    tensor's shape and dtype. Returns ``module``."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: the parametrization must be a "
                        f"jitgrad.nn.Module, got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            with no_grad():
                current = getattr(module, tensor_name)
                out = parametrization(current)
            if not isinstance(out, Tensor) or tuple(out.shape) != tuple(current.shape) \
                    or out.dtype != current.dtype:
                raise ValueError("Registering a parametrization may not change the shape or "
                                 "dtype of the tensor, unless `unsafe` flag is enabled.")
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module._get_name()}' does not have a parameter, a buffer, "
                         f"or a parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,),
                                {"__getstate__": _no_pickle, "__deepcopy__": _deepcopy})
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _property(tensor_name))
    module.parametrizations[tensor_name] = plist
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations of ``module.<tensor_name>``: it becomes a plain parameter
    (or buffer) again, holding the current parametrized value (``leave_parametrized``,
    written into the original Parameter object when it has the same shape and dtype) or the
    original. Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module._get_name()} does not have a parametrization on "
                         f"{tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            if tuple(value.shape) == tuple(original.shape) and value.dtype == original.dtype:
                _set_into(original, value, "remove_parametrizations")
            else:
                original = ParametrizationList._like(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        original = ParametrizationList._like(plist.original0, value)
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
