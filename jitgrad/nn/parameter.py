"""``Parameter`` and ``Buffer``: Tensors that a ``Module`` registers, when assigned as its
attributes, as a parameter or a buffer."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor (``requires_grad=True`` by default) that, assigned as an attribute of a
    ``Module``, is registered in its ``parameters()``.

    ``Parameter(t)`` shares ``t``'s storage and version counter (as ``t.detach()``). Results of
    operations on a Parameter are plain Tensors.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            arr = np.empty(0, dtype=np.float32)
            counter = None
        elif isinstance(data, Tensor):
            arr, counter = data._data, data._version_counter  # device read: shared, as detach
        else:
            arr, counter = np.asarray(data), None
        p = cls._make(arr)
        if counter is not None:
            p._version_counter = counter
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, *args, **kwargs):  # all done in __new__
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        if self.is_cuda:  # pickled through a host copy; rebuilt on its device
            return (_rebuild_parameter, (self._host("pickle"), self._requires_grad,
                                         str(self.device)))
        return (_rebuild_parameter, (self._host("pickle"), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        # copies on the tensors' device (made outside the ops: a trace refuses to use them)
        p = Parameter(Tensor._make(self._data.copy()),  # device read: a copy on its device
                      self._requires_grad)
        if self._grad is not None:
            p._grad = Tensor._make(self._grad._data.copy())  # device read: a copy on its device
        memo[id(self)] = p
        return p


class Buffer(Tensor):
    """A Tensor that, assigned as an attribute of a ``Module``, is registered as a buffer
    (``register_buffer(name, t, persistent)``): module state that is not trained.

    ``Buffer(t)`` shares ``t``'s storage and version counter and keeps its ``requires_grad``;
    ``persistent=False`` leaves it out of ``state_dict``. Results of operations on a Buffer
    are plain Tensors.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops import creation

            data = creation.empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Buffer: data must be a jitgrad.Tensor, got "
                            f"{type(data).__name__}")
        b = cls._make(data._data)  # device read: shared, as detach
        b._version_counter = data._version_counter
        b.requires_grad_(data.requires_grad)
        b.persistent = persistent
        return b

    def __init__(self, *args, **kwargs):  # all done in __new__
        pass

    def __reduce_ex__(self, protocol):
        return (_rebuild_buffer, (Tensor._make(self._host("pickle")), self.persistent))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            # copies on the tensor's device (made outside the ops, as Parameter's)
            memo[id(self)] = Buffer(Tensor._make(self._data.copy()),  # device read: a copy
                                    persistent=self.persistent)
        return memo[id(self)]


def _rebuild_buffer(data, persistent):
    return Buffer(data, persistent=persistent)


def _rebuild_parameter(data, requires_grad, device="cpu"):
    if device != "cpu":
        from ..ops.core import dispatch

        data = dispatch.move(data, device)
    return Parameter(Tensor._make(data), requires_grad)

