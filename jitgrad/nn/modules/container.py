"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` and ``ParameterList``."""
from __future__ import annotations

import operator
from collections import OrderedDict

from ..parameter import Parameter
from .module import Module, _addindent


class _ModuleSequence(Module):
    """What ``Sequential`` and ``ModuleList`` share: integer positions over the registered
    modules (negative counted from the end), deletion with renumbering, append/extend."""

    def _key(self, idx) -> str:
        n = len(self)
        idx = operator.index(idx)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules)[idx % n]

    def _renumber(self, modules) -> None:
        self._modules.clear()
        for i, m in enumerate(modules):  # PyTorch renumbers after a deletion or insertion
            self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._from_slice(list(self._modules.items())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module):
        self.add_module(self._key(idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._key(idx)]
        for key in keys:
            del self._modules[key]
        self._renumber(list(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self


class Sequential(_ModuleSequence):
    """Modules applied in order: ``Sequential(a, b, c)(x) == c(b(a(x)))``. Built from modules
    or from one ``OrderedDict`` of named modules; indexing with a slice gives a Sequential."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _from_slice(self, items):
        return type(self)(OrderedDict(items))

    def insert(self, index, module):
        items = list(self._modules.values())
        n = len(items)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items.insert(index, module)  # a negative index counts from the end, as list.insert
        self._renumber(items)
        return self

    def forward(self, input):  # noqa: A002 - PyTorch's argument name
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of sub-modules, registered so their parameters are found; no ``forward``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _from_slice(self, items):
        return type(self)([m for _, m in items])

    def __iadd__(self, modules):
        return self.extend(modules)

    def insert(self, index, module):
        items = list(self._modules.values())
        items.insert(index, module)
        self._renumber(items)

    def __repr__(self):
        # runs of identical reprs are folded into "(0-2): 3 x Linear(...)", as PyTorch
        lines, items = [], [(k, repr(m)) for k, m in self._modules.items()]
        i = 0
        while i < len(items):
            j = i
            while j + 1 < len(items) and items[j + 1][1] == items[i][1]:
                j += 1
            text = _addindent(items[i][1], 2)
            if j > i:
                lines.append(f"({items[i][0]}-{items[j][0]}): {j - i + 1} x {text}")
            else:
                lines.append(f"({items[i][0]}): {text}")
            i = j + 1
        if not lines:
            return self._get_name() + "()"
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of named sub-modules; no ``forward``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        return self._modules.pop(key)

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module


class ParameterList(Module):
    """A list of parameters, registered (as ``"0"``, ``"1"``...) so ``parameters()`` and
    ``state_dict`` find them. A Tensor that is not a Parameter is wrapped in one; any other
    object is kept as a plain attribute (as PyTorch)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _index(self, idx) -> int:
        idx = operator.index(idx)
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return idx % self._size

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(*idx.indices(self._size))])
        return getattr(self, str(self._index(idx)))

    def __setitem__(self, idx, param):
        self._set(str(self._index(idx)), param)

    def _set(self, key, value):
        from ...tensor import Tensor

        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, key, value)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(self._size))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Add ``value`` at the end."""
        self._size += 1
        self._set(str(self._size - 1), value)
        return self

    def extend(self, values):
        """Add every item of the iterable ``values`` at the end."""
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        lines = []
        for i, p in enumerate(self):
            if isinstance(p, Parameter):
                size = "x".join(str(s) for s in p.shape)
                lines.append(f"  ({i}): Parameter containing: [{p.dtype} of size {size}]")
            else:
                lines.append(f"  ({i}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")
