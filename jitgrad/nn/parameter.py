"""``Parameter``: a Tensor that a ``Module`` registers as one of its parameters."""
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

    def __init__(self, data=None, requires_grad=True):  # all done in __new__
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


def _rebuild_parameter(data, requires_grad, device="cpu"):
    if device != "cpu":
        from ..ops.core import dispatch

        data = dispatch.move(data, device)
    return Parameter(Tensor._make(data), requires_grad)

