"""``Variable``: PyTorch's deprecated wrapper, kept for old code. Since PyTorch 0.4 every
Tensor is a Variable: ``Variable(t, requires_grad=True)`` returns a Tensor (a leaf sharing
``t``'s data) and ``isinstance(t, Variable)`` holds for every Tensor."""
from __future__ import annotations

from ..ops.core import upper


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, upper.Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            return upper.Tensor()
        if not isinstance(data, upper.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        return out.requires_grad_(requires_grad) if requires_grad else out


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: ``data`` as a leaf Tensor (the same storage)
    that requires grad when asked; a Tensor, not a Variable instance."""
