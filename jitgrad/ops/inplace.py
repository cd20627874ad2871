"""In-place ops (``add_``, ``mul_``, ``masked_fill_``, ``x[i] = v``, ``+=``...): write into the
tensor's own storage, bump the version counter it shares with its views, and rebase the
autograd history (PyTorch's design).

How a call runs: every check happens first (dtype, shape, writability, autograd rules), so a
failed call changes nothing. Then the result is written straight into the storage (elementwise
kernels get ``out=``; index ops write with NumPy in place). Only when the backward needs the
*old* value (``x.mul_(w)`` with ``w`` requiring grad needs ``x`` for ``w``'s gradient; ``log_``
needs its input) is that value copied first, and then only the tensor's own elements, never its
base's. Finally the node is recorded:

* on a tensor that is not a view, its ``grad_fn`` becomes the op's node (input 0 = its previous
  history);
* on a view, the *base* gets ``CopySlices(node)`` (``ops/views.py``) and every view of the base
  regenerates its ``grad_fn`` (``AsStridedBackward0``) when next used, found by the version
  counter (Note [view tracking] in ``recording.py``).

Nodes that saved a value overwritten here see the version bump and raise PyTorch's "modified
by an inplace operation" error when backward unpacks it (Note [saved tensor versions]).
Operands are saved *before* the write, so ``a.mul_(b)`` with ``b`` aliasing ``a`` raises
instead of differentiating with the new values.
"""
from __future__ import annotations

import contextlib
import inspect

import numpy as np

from .. import dtypes
from ..graph.grad_mode import is_grad_enabled, no_grad
from ..graph.node import SavedTensor
from . import binary, indexing, scatter, scatter_reduce, views
from .core import dispatch, methods, recording, upper
from .core.registry import LINEAR, def_composite

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MSG = ("a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation.")
NO_GRAD_VIEW_MSG = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block (if "
    "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked).")


# --- rows of the ops that only exist in place ------------------------------------------------
def _on_device(a) -> bool:
    return dispatch.device_of(a) != "cpu"


def _fill_write(ctx, out, *value, value_scalar=None):
    v = value[0] if value else value_scalar
    if _on_device(out):
        be = dispatch.cuda_backend()
        be.copy_into(out, v) if isinstance(v, be.CudaArray) else be.fill(out, v)
        return out
    out[...] = v
    return out


def _copy_write(ctx, out, src):
    if _on_device(out):
        write_data(out, src)
        return out
    np.copyto(out, src, casting="unsafe")  # NumPy buffers overlapping src (x[1:] = x[:-1])
    return out


def write_data(dst, src) -> None:
    """``dst[...] = src`` (broadcast, cast) for NumPy or CUDA arrays; an overlapping source
    is read before anything is written, as NumPy's buffered copy."""
    if not _on_device(dst):
        np.copyto(dst, src, casting="unsafe")
        return
    if dispatch.shares_memory(src, dst) and (src.shape, src.elem_strides, src.offset) != (
            dst.shape, dst.elem_strides, dst.offset):
        src = src.copy()
    dispatch.cuda_backend().copy_into(dst, src)


def _copy_of(write):
    return lambda ctx, x, *others, **attrs: write(ctx, indexing.copy_array(x), *others, **attrs)


def _zero_grad(ctx, g):
    grads = (dispatch.zeros(g.shape, g.dtype, g.device),)  # the old value is overwritten: no gradient
    return grads if len(ctx.needs_input_grad) == 1 else grads + (g if ctx.needs_input_grad[1]
                                                                 else None,)


def _zero_tangent(tangents, primals, outs, **attrs):
    """``fill_(number)``'s tangent: 0 (the result is a constant)."""
    return dispatch.zeros(outs[0].shape, outs[0].dtype, outs[0].device)


# PyTorch: fill_(Scalar) is FillBackward2, fill_(Tensor) FillBackward3, copy_ CopyBackwards.
# The writers above serve both devices (cuda_forward: the same function). Forward mode
# (autograd/forward_ad.py): copy/fill-from-tensor/zero are linear in their inputs.
_FILL_FORWARD, _COPY_FORWARD = _copy_of(_fill_write), _copy_of(_copy_write)
FILL = def_composite("fill_", "FillBackward2", ("x",), _FILL_FORWARD, _zero_grad,
                     attrs=("value_scalar",), jvp=_zero_tangent, cuda_forward=_FILL_FORWARD)
FILL_T = def_composite("fill_tensor_", "FillBackward3", ("x", "value"), _FILL_FORWARD,
                       _zero_grad, jvp=LINEAR, cuda_forward=_FILL_FORWARD)
ZERO = def_composite("zero_", "ZeroBackward0", ("x",), _FILL_FORWARD, _zero_grad,
                     attrs=("value_scalar",), jvp=LINEAR, cuda_forward=_FILL_FORWARD)
COPY = def_composite("copy_", "CopyBackwards", ("x", "src"), _COPY_FORWARD, _zero_grad,
                     jvp=LINEAR, cuda_forward=_COPY_FORWARD)
WRITERS = {"fill_": _fill_write, "fill_tensor_": _fill_write, "zero_": _fill_write,
           "copy_": _copy_write, **indexing.WRITERS, **scatter.WRITERS}


# --- the shared steps ------------------------------------------------------------------------
def _needs(self, operands, differentiable=True):
    """``needs_input_grad`` when the call is recorded (after PyTorch's checks), else None."""
    if not (differentiable and is_grad_enabled() and self._data.dtype.kind == "f"):
        return None
    T = dispatch.Tensor
    needs = tuple(isinstance(o, T) and o._requires_grad for o in operands)
    if self._base is not None and self._view_nograd and (self._base._requires_grad or any(needs)):
        # PyTorch refuses this even with no operand requiring grad (its no_grad views of a
        # tensor that requires grad report requires_grad=True; jitgrad's report False)
        raise RuntimeError(NO_GRAD_VIEW_MSG)
    if not any(needs):
        return None
    if self._base is not None:
        root = self._base
        if root._requires_grad and root._grad_fn is None:  # the base would stop being a leaf
            raise RuntimeError(VIEW_OF_LEAF_MSG)
        if self._requires_grad and not root._requires_grad:  # requires_grad_() on a view: a leaf
            raise RuntimeError(LEAF_MSG)
    elif self._requires_grad and self._grad_fn is None:
        raise RuntimeError(LEAF_MSG)
    return needs


def _check_shape(name: str, self, shape) -> None:
    if tuple(shape) != self.shape:
        raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")


def _new_node(op, operands, needs, attrs, self):
    """``op``'s node wired to the operands' current histories (taken before the write); the
    written tensor takes it as its history after the write (``rebase``)."""
    node = recording.new_node(op)
    node._saved = {}
    recording.record_node(node, operands, needs, output_meta=(recording.tensor_meta(self),))
    node._attrs = attrs
    return node


def _result_alias(self, node):
    """``self`` after the write, as the output of ``node`` (for saving the result)."""
    return dispatch.Tensor._from_saved(self._data, self._version_counter, node, 0)


def rebase(self, node, output_nr=0) -> None:
    """Make output ``output_nr`` of ``node`` the history of ``self``'s new value (CopySlices on
    the base for a view: ``node`` must then be the in-place op's own node, input 0 = self)."""
    if self._base is None:
        recording.take_history(self, node, output_nr)
        tracked = self._views
    else:
        root = self._base
        recording.take_history(root, views.CopySlices(root, self, node))
        tracked = root._views
    if tracked:  # every view now depends on the new history (regenerated lazily)
        for v in list(tracked):
            v._requires_grad = True


# --- elementwise in-place ops ----------------------------------------------------------------
def elementwise_(self, name, op, others=(), attrs=None):
    """``self = op(self, *others, **attrs)`` computed into ``self``'s storage."""
    T = dispatch.Tensor
    attrs = attrs or {}
    if dispatch.transform_hook is not None:  # Note [transform hooks]: the op must see the hook
        return apply_inplace(self, name, lambda t: dispatch.elementwise(op, t, *others, **attrs),
                             *others)
    operands = [self, *(dispatch.operand(o, name) for o in others)]
    values = [o._data if isinstance(o, T) else o for o in operands]
    attr_values = [attrs[a] for a in op.attrs]
    dt = dispatch.compute_dtype(op, values, attr_values)
    dispatch.check_cast(dt.np, self._data.dtype)
    _check_shape(name, self, dispatch.result_shape(name, values))
    dispatch.check_writable(self)
    needs = _needs(self, operands, op.differentiable)
    if needs is None:
        dispatch.compute_into(op, values, attr_values, self.shape, dt, self._data)
        self._version_counter.bump()
        return self
    node = _new_node(op, operands, needs, attrs, self)
    plan = dispatch.save_plan(op, needs)
    saved = node._saved
    for pname, src in plan:
        if src == "attr":
            saved[pname] = attrs[pname]
        elif src == 0:  # the old value: a copy of this tensor's elements, before the write
            old = T._make(indexing.copy_array(self._data), needs[0])
            old._grad_fn, old._output_nr = node._next_edges[0]
            values[0] = old._data
            saved[pname] = SavedTensor(old)
        elif src != "result":
            v = operands[src]
            saved[pname] = SavedTensor(v) if isinstance(v, T) else v
    dispatch.compute_into(op, values, attr_values, self.shape, dt, self._data)
    self._version_counter.bump()
    for pname, src in plan:
        if src == "result":
            saved[pname] = SavedTensor(_result_alias(self, node), is_output=True)
    rebase(self, node)
    return self


# --- any op, computed out of place --------------------------------------------------------------
def apply_inplace(self, name, compute, *others):
    """``self = compute(self)`` for any out-of-place ``compute(t) -> Tensor`` (``others``: the
    other tensors it reads, for the autograd checks): computed out of place, then written into
    ``self``'s storage. With autograd the computation runs on a copy of the old value; a tensor
    that is not a view takes over the result's history, a view gets it through
    ``CopySlices(CopyBackwards)`` on its base (what PyTorch records for ``view.copy_(r)``).
    Used by ``nn.functional``'s ``inplace=True`` and while a transform hook is active."""
    T = dispatch.Tensor
    dispatch.check_writable(self)
    operands = [self, *(o for o in others if isinstance(o, T))]
    needs = _needs(self, operands)
    fwd = _forward_ad()
    if needs is None:
        # with a dual level open, grad mode stays: a tangent may require grad (vjp of jvp)
        with _tangent_grad_mode(fwd):
            result = compute(self)
            _check_result(name, self, result)
            root_new = _root_after(self, result) if fwd else None
        write_data(self._data, result._data)
        self._version_counter.bump()
        _take_tangents(fwd, self, result, root_new)
        return self
    old = T._make(indexing.copy_array(self._data), self._requires_grad)
    if self._requires_grad:
        old._grad_fn, old._output_nr = dispatch.gradient_edge(self)
    if fwd:
        fwd.copy_tangents(self, old)
    result = compute(old)
    _check_result(name, self, result)
    with _tangent_grad_mode(fwd):
        root_new = _root_after(self, result) if fwd else None
    if self._base is None and result._grad_fn is not None:
        node, nr = result._grad_fn, result._output_nr
    else:
        node, nr = _new_node(COPY, [self, result], (needs[0], result._requires_grad), {}, self), 0
    write_data(self._data, result._data)
    self._version_counter.bump()
    rebase(self, node, nr)
    _take_tangents(fwd, self, result, root_new)
    return self


def _tangent_grad_mode(fwd):
    """``no_grad()``, except while a dual level is open: the tangents computed alongside
    (the base's, after a write through a view) are recorded when they require grad."""
    return no_grad() if fwd is None else contextlib.nullcontext()


def _check_result(name, self, result) -> None:
    _check_shape(name, self, result.shape)
    dispatch.check_cast(result._data.dtype, self._data.dtype)


def _forward_ad():
    """Forward AD's in-place interface while a dual level is open (tangents must follow
    in-place writes), else None: registered with the transform hook (ops/core/upper.py)."""
    tangents = upper.inplace_tangents
    return tangents if tangents is not None and tangents.has_levels() else None


def _root_after(self, result):
    """For a view: its base's value after ``result`` is written into the view, computed out of
    place (its tangent is the base's tangent with the view's region replaced)."""
    if self._base is None:
        return None
    root = self._base
    index = views.flat_index(views.geometry(root._data, self._data))
    return indexing.put_flat(root, index, result, unique=True)


def _take_tangents(fwd, self, result, root_new) -> None:
    """After the write: ``self`` (and its base) carry the tangents of what was written."""
    if fwd is None:
        return
    fwd.inplace_update(self, result)
    if root_new is not None:
        fwd.inplace_update(self._base, root_new)


# --- index/fill in-place ops -------------------------------------------------------------------
def composite_(self, name, op, others=(), attrs=None):
    """Run ``op``'s writer on ``self``'s storage (inputs: ``self, *others``); the caller has
    checked the arguments."""
    attrs = attrs or {}
    if dispatch.transform_hook is not None:  # Note [transform hooks]
        return apply_inplace(self, name, lambda t: dispatch.composite(op, t, *others, **attrs),
                             *others)
    write = WRITERS[op.name]
    dispatch.check_writable(self)
    operands = [self, *others]
    needs = _needs(self, operands, op.differentiable)
    arrays = [self._data] + [o._data for o in others]
    dispatch.on_cuda(arrays, name, operands)  # one device; a 0-d CPU operand is uploaded
    arrays = arrays[1:]
    if needs is None:
        write(dispatch.CompositeCtx(), self._data, *arrays, **attrs)
        self._version_counter.bump()
        return self
    node = _new_node(op, operands, needs, None, self)
    for pname in op.save:
        if pname != "result":
            node._saved[pname] = SavedTensor(operands[op.inputs.index(pname)])
    ctx = dispatch.CompositeCtx()
    write(ctx, self._data, *arrays, **attrs)
    self._version_counter.bump()
    node._attrs = {**attrs, **vars(ctx)}
    if "result" in op.save:
        node._saved["result"] = SavedTensor(_result_alias(self, node), is_output=True)
    rebase(self, node)
    return self


def fill_(self, value):
    """Set every element to ``value`` (a number or a 0-d tensor). Derivative: 0 for the old
    value; the sum of ``g`` for a tensor ``value``."""
    if isinstance(value, dispatch.Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        if value._requires_grad:
            return composite_(self, "fill_", FILL_T, (value,))
        value = value._data[()]
    return composite_(self, "fill_", FILL, (), {"value_scalar": value})


def zero_(self):
    """Set every element to 0. Derivative: 0."""
    return composite_(self, "zero_", ZERO, (), {"value_scalar": 0})


def copy_(self, src, name="copy_"):
    """Copy ``src`` (broadcast to ``self``'s shape, cast to its dtype) into ``self``.
    Derivatives: 0 for the old value, ``g`` (summed over broadcast dims) for ``src``."""
    src = dispatch.tensor_operand(src, name)
    _check_shape(name, self, dispatch.broadcast_shapes(name, self.shape, src.shape))
    return composite_(self, name, COPY, (src,))


def masked_fill_(self, mask, value):
    """Set the elements where ``mask`` is True to ``value`` (see ``scatter.masked_fill``)."""
    op, others, attrs = scatter.masked_fill_args("masked_fill_", self, mask, value)
    _check_shape("masked_fill_", self, np.broadcast_shapes(self.shape, attrs["mask"].shape))
    attrs["mask"] = indexing.broadcast(attrs["mask"], self.shape)
    return composite_(self, "masked_fill_", op, others, attrs)


def index_add_(self, dim, index, source, alpha=1):
    """``self[..., index[i], ...] += alpha * source[..., i, ...]`` (see ``scatter.index_add``)."""
    source, attrs = scatter.index_add_args("index_add_", self, dim, index, source, alpha)
    if source.ndim == 0:
        from .shape import reshape

        source = reshape(source, (1,))
    return composite_(self, "index_add_", scatter.INDEX_ADD, (source,), attrs)


def scatter_add_(self, dim, index, src):
    """``self[index[i][j]][j] += src[i][j]`` for ``dim=0`` (see ``scatter.scatter_add``)."""
    src, attrs = scatter.scatter_add_args("scatter_add_", self, dim, index, src)
    return composite_(self, "scatter_add_", scatter.SCATTER_ADD, (src,), attrs)


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """``self[index[i][j]][j] = src[i][j]`` for ``dim=0`` (``src`` a tensor or a number;
    ``reduce="add"/"multiply"``: accumulated), see ``scatter_reduce.scatter``."""
    op, others, attrs = scatter_reduce.scatter_args("scatter_", self, dim, index, src, value,
                                                    reduce)
    return apply_inplace(self, "scatter_", lambda t: dispatch.composite(op, t, *others, **attrs),
                         *others)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In place ``scatter_reduce`` (``"sum" "prod" "mean" "amax" "amin"``, see
    ``scatter_reduce.scatter_reduce``)."""
    src, attrs = scatter_reduce.scatter_reduce_args("scatter_reduce_", self, dim, index, src,
                                                    reduce, include_self)
    return apply_inplace(self, "scatter_reduce_", lambda t: dispatch.composite(
        scatter_reduce.SCATTER_REDUCE, t, src, **attrs), src)


def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (``+=`` with ``accumulate``), see ``indexing.index_put``."""
    idx = indexing.index_put_index("index_put_", indices)
    return _index_put(self, idx, dispatch.tensor_operand(values, "index_put_"), accumulate)


def _index_put(self, idx, values, accumulate):
    pos = indexing.positions(self.shape, idx)  # checks the index before anything is written
    indexing.broadcast_value(values._data, pos.shape)
    return composite_(self, "index_put_", indexing.INDEX_PUT, (values,),
                      {"index": idx, "accumulate": bool(accumulate)})


def setitem(x, index, value):
    """``x[index] = value`` in place, with NumPy semantics: ``value`` is broadcast to
    ``x[index]`` and cast to ``x``'s dtype; with repeated indices the last write wins. Bumps
    the version counter shared by ``x`` and its views.

    Differentiable like PyTorch: a basic index writes through a view (the base's grad_fn
    becomes ``CopySlices``), an advanced one records ``IndexPutBackward0``. Derivatives: ``g``
    zeroed on the written elements for ``x``; ``g[index]`` for ``value`` (summed over its
    broadcast dims; 0 for writes that a later repeated index overwrote).
    """
    idx, kind = indexing.normalize_index(index)
    if dispatch.transform_hook is not None or (
            is_grad_enabled() and x._data.dtype.kind == "f"
            and (x._requires_grad or (isinstance(value, dispatch.Tensor) and value._requires_grad)
                 or (x._base is not None and x._view_nograd and x._base._requires_grad))):
        setitem_tracked(x, idx, kind, value)  # autograd (or a transform) must see the write
    else:
        indexing.setitem_untracked(x, idx, kind, value)


def setitem_tracked(x, idx, kind, value) -> None:
    """``x[idx] = value`` when autograd (or a transform) must see it (``setitem``
    decides): a basic index copies into a view (CopySlices), an advanced one is an
    ``index_put_``."""
    T = dispatch.Tensor
    if not isinstance(value, T):
        value = T._make(np.asarray(value, dtype=x._data.dtype))
        if _on_device(x._data):
            value = T._make(dispatch.move(value._data, x.device))
    if kind == "advanced":
        _index_put(x, idx, value, False)
        return
    target = indexing.getitem(x, idx)
    indexing.broadcast_value(value._data, target.shape)  # NumPy's rule, PyTorch's message
    if value.ndim > target.ndim:  # the leading 1s NumPy drops
        from .shape import reshape

        value = reshape(value, value.shape[value.ndim - target.ndim:])
    copy_(target, value, name="setitem")


# --- methods ---------------------------------------------------------------------------------
def _add_like(name, op):
    def method(self, other, *, alpha=1):
        if alpha != 1:
            other = other * alpha if type(other) in (bool, int, float) else binary.mul(other, alpha)
        return elementwise_(self, name, op, (other,))

    method.__name__ = name
    method.__doc__ = (f"In place: ``self {'+' if name == 'add_' else '-'}= alpha * other`` (see "
                      f"``{op.name}``).")
    return method


def _binary_method(name, op):
    def method(self, other):
        return elementwise_(self, name, op, (other,))

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{op.name}`` (same value and derivatives)."
    return method


def _unary_method(name, op):
    def method(self):
        return elementwise_(self, name, op)

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{op.name}`` (same value and derivatives)."
    return method


def pow_(self, exponent):
    """In place ``self **= exponent`` (see ``binary.pow``)."""
    if self._data.dtype.kind in "biu" and type(exponent) is int and exponent < 0:
        raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
    if type(exponent) in (int, float):
        return elementwise_(self, "pow_", binary.POW_SCALAR, (), {"exponent": exponent})
    return elementwise_(self, "pow_", binary.POW, (exponent,))


def clamp_(self, min=None, max=None):  # noqa: A002 - PyTorch's argument names
    """In place ``clamp`` (see ``binary.clamp``): number bounds in one kernel; tensor bounds as
    ``maximum_`` then ``minimum_`` (both checked before either writes)."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    T = dispatch.Tensor
    if isinstance(min, T) or isinstance(max, T):
        for bound in (min, max):
            if bound is not None:
                b = dispatch.operand(bound, "clamp_")
                values = [self._data, b._data if isinstance(b, T) else b]
                dispatch.check_cast(dtypes.result_type(*values).np, self._data.dtype)
                _check_shape("clamp_", self, dispatch.result_shape("clamp_", values))
        if min is not None:
            elementwise_(self, "clamp_", binary.MAXIMUM, (min,))
        if max is not None:
            elementwise_(self, "clamp_", binary.MINIMUM, (max,))
        return self
    if self._data.dtype.kind in "iu":
        info = np.iinfo(self._data.dtype)
        lo, hi = info.min, info.max
    else:
        lo, hi = -float("inf"), float("inf")
    return elementwise_(self, "clamp_", binary.CLAMP, (),
                        {"min": lo if min is None else min, "max": hi if max is None else max})


def _elementwise_method(names, fn, op):
    """The in-place method of an elementwise row flagged ``inplace=`` (Note [derived surface]
    in ops/core/registry.py), named ``names[0]``: one operand, two, or two with ``alpha`` (as the
    row's public function takes)."""
    name = names[0]
    params = tuple(inspect.signature(fn).parameters)
    if op.attrs or len(params) > len(op.inputs) + ("alpha" in params):
        return inplace_method(name, fn)
    if len(op.inputs) == 1:
        return _unary_method(name, op)
    if "alpha" in params:
        return _add_like(name, op)
    return _binary_method(name, op)


def inplace_method(name, fn):
    """The in-place method ``name`` of an out-of-place ``fn(t, *args, **kwargs)`` (a row's
    public function taking more than its operands, ``logit(input, eps)``, or a function no row
    backs, ``tril``): computed out of place, then written into ``self`` (``apply_inplace``: the
    same autograd rules and version counter)."""
    def method(self, *args, **kwargs):
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, dispatch.Tensor)]
        return apply_inplace(self, name, lambda t: fn(t, *args, **kwargs), *tensors)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"In-place version of ``{getattr(fn, '__name__', name[:-1])}`` (same value "
                      "and derivatives).")
    return method


# In-place methods with their own argument handling (several rows, or checks of their own)
_OWN_METHODS = {"pow_": pow_, "clamp_": clamp_, "clip_": clamp_, "fill_": fill_, "zero_": zero_,
                "copy_": copy_, "masked_fill_": masked_fill_, "index_add_": index_add_,
                "index_put_": index_put_, "scatter_add_": scatter_add_, "scatter_": scatter_,
                "scatter_reduce_": scatter_reduce_}


# Tensor's method table (Note [tensor methods] in ops/core/methods.py): the rows' in-place
# methods are made by ``_elementwise_method``, the others are declared here
methods.set_inplace_maker(_elementwise_method)
methods.declare(_OWN_METHODS, __name__)
