"""In-place ops (``add_``, ``mul_``, ``relu_``, ``+=``...): write into the tensor's storage,
bump its version counter, and rebase its autograd history onto the new node.

With autograd involved, the op is recorded out of place on a snapshot of the old value (which
carries the tensor's old ``grad_fn``), then the result is written back and the tensor's
``grad_fn`` becomes the new node. Nodes that saved the old value see the version bump and raise
PyTorch's "modified by an inplace operation" error when backward unpacks it
(Note [saved tensor versions]).
"""
from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..device import pool
from . import binary, dispatch, unary
from .registry import def_composite

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MSG = ("a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation.")


def _fill_forward(ctx, x, value):
    return np.full_like(x, value)


def _zero_grad(ctx, g):
    return (dispatch.zeros(g.shape, g.dtype),)  # the old value is overwritten: no gradient


def _copy_forward(ctx, x, src):
    return np.broadcast_to(src, x.shape).astype(x.dtype)


def _copy_backward(ctx, g):
    return (dispatch.zeros(g.shape, g.dtype), g)


# PyTorch names the node of fill_(Scalar) FillBackward2 (fill.Scalar is FillBackward0)
FILL = def_composite("fill_", "FillBackward2", ("x",), _fill_forward, _zero_grad, attrs=("value",))
ZERO = def_composite("zero_", "ZeroBackward0", ("x",), _fill_forward, _zero_grad, attrs=("value",))
COPY = def_composite("copy_", "CopyBackwards", ("x", "src"), _copy_forward, _copy_backward)


def apply_inplace(self, name, compute, *others):
    """Run ``compute(old_value) -> Tensor`` and write the result into ``self``."""
    Tensor = dispatch.Tensor
    involved = is_grad_enabled() and (
        self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others))
    if involved and self._grad_fn is None and self._requires_grad:
        raise RuntimeError(LEAF_MSG)
    if not involved:
        with no_grad():
            result = compute(self)
        _write(self, name, result)
        return self
    if self._base is not None:
        base = self._base
        if base._grad_fn is None and base._requires_grad:
            raise RuntimeError(VIEW_OF_LEAF_MSG)
        raise RuntimeError(
            f"{name}: in-place operations on a view of a tensor that requires grad are not "
            "supported yet; apply the operation out of place (y = op(y)) or to the base tensor")
    if self._views:
        # the views would keep the old history (and requires_grad): silently wrong gradients
        raise RuntimeError(
            f"{name}: in-place operation on a tensor that has live views ({len(self._views)}), "
            "with autograd recording: rebasing the views' history is not supported yet; apply "
            "the operation out of place (y = op(y)), or drop the views first")
    old = Tensor._make(pool.copy(self._data), self._requires_grad)
    old._grad_fn, old._output_nr = self._grad_fn, self._output_nr
    result = compute(old)
    _write(self, name, result)
    self._grad_fn, self._output_nr, self._requires_grad = result._grad_fn, result._output_nr, True
    return self


def _write(self, name, result) -> None:
    if result.shape != self.shape:
        raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match the "
                           f"broadcast shape {list(result.shape)}")
    if not np.can_cast(result._data.dtype, self._data.dtype, "same_kind"):
        raise RuntimeError(f"{name}: result type {result.dtype} can't be cast to the desired "
                           f"output type {self.dtype}")
    if not self._data.flags.writeable:
        raise RuntimeError(f"{name}: unsupported operation: the tensor is a read-only view (for "
                           "example from expand, where elements share memory); clone() it first")
    np.copyto(self._data, result._data, casting="same_kind")
    self._version_counter.bump()


def _binary_method(name, fn):
    def method(self, other, **kwargs):
        return apply_inplace(self, name, lambda t: fn(t, other, **kwargs), other)

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{fn.__name__}``."
    return method


def _unary_method(name, fn):
    def method(self, *args, **kwargs):
        return apply_inplace(self, name, lambda t: fn(t, *args, **kwargs))

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{fn.__name__}``."
    return method


def _fill_(self, value):
    value = value.item() if isinstance(value, dispatch.Tensor) else value
    return apply_inplace(self, "fill_", lambda t: dispatch.composite(FILL, t, value=value))


def _zero_(self):
    return apply_inplace(self, "zero_", lambda t: dispatch.composite(ZERO, t, value=0))


def _copy_(self, src):
    src = dispatch.tensor_operand(src, "copy_")
    dispatch.broadcast_shapes("copy_", src.shape, self.shape)
    return apply_inplace(self, "copy_", lambda t: dispatch.composite(COPY, t, src), src)


def install(Tensor) -> None:
    """Attach the in-place methods to the Tensor class."""
    for name, fn in (("add_", binary.add), ("sub_", binary.sub), ("mul_", binary.mul),
                     ("div_", binary.div), ("pow_", binary.pow), ("maximum_", binary.maximum),
                     ("minimum_", binary.minimum)):
        setattr(Tensor, name, _binary_method(name, fn))
    for name, fn in (("neg_", unary.neg), ("exp_", unary.exp), ("log_", unary.log),
                     ("sin_", unary.sin), ("cos_", unary.cos), ("tan_", unary.tan),
                     ("tanh_", unary.tanh), ("sigmoid_", unary.sigmoid), ("relu_", unary.relu),
                     ("abs_", unary.abs), ("sqrt_", unary.sqrt), ("clamp_", binary.clamp)):
        setattr(Tensor, name, _unary_method(name, fn))
    Tensor.clip_ = Tensor.clamp_
    Tensor.fill_ = _fill_
    Tensor.zero_ = _zero_
    Tensor.copy_ = _copy_
