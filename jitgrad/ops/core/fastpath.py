"""The eager fast path of elementwise ops on small CPU arrays (Note [eager fast path]).

Note [eager fast path]: most eager calls are small same-shape CPU tensors of one float dtype,
with Python scalars: ``x * 1.5``, ``x + y``, ``tanh(x)``, and the fused backward kernels of the
same rows. For them the general path (operand coercion, NEP 50 promotion, broadcasting, device
checks, kernel choice) always reaches the same answer, so it is asked once per (op, dtype,
operand pattern) and the answer cached on the row (``OpDef.fast_plans``): the compiled serial
flat kernel's entry point (Note [direct kernel entry] in kernels/cpu/elementwise.py), the result dtype and
whether the op records a node. ``run_body_fast`` does the same for the fused backward bodies
(keyed by body, dtype and pattern).
A call then checks only what the key does not fix (every Tensor operand a plain CPU ndarray of
the first one's shape and dtype, C-contiguous; a size above zero and below the flat-entry
limit) and otherwise returns None, leaving the call to the general path untouched: nothing
was allocated, written or recorded, so errors, warnings and every rare case (broadcasting,
mixed dtypes, subclasses, CUDA, views of other strides, big arrays) stay where they were.

The key's operand pattern has one letter per argument: ``r`` an array (typed read-only, which
the kernel's inputs are: the compiled entry takes a writeable array as well, Note [direct kernel
entry]), ``s`` a Python float or int. Node recording is the
registry's own (``recording.record_elementwise``, ``record_unrolled`` for one or two operands,
from the same save plans), so node names, saved values, edges and version checks are those of
the general path; the rows stay the only source of what an op computes.
"""
from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ... import dtypes
from ...graph.grad_mode import state as _grad_mode  # ``.enabled``: is_grad_enabled()
from ...kernels.cpu import elementwise as cpu, reduce as cpu_reduce
from . import upper
from .recording import record_elementwise, record_one, record_unrolled, save_plan, view_tensor

# the registered class, its bound ``_make`` and the hook: ops/core/upper.py keeps them current (Note
# [upper registrations])
Tensor = make_tensor = transform_hook = None
upper.bind(globals(), "Tensor", "make_tensor", "transform_hook")

_ndarray = np.ndarray
_LIMIT = cpu.FLAT_ENTRY_MAX_BYTES
_UFUNC_LIMIT = cpu.UFUNC_MIN_SIZE

# needs_input_grad tuples by (bit mask, 1 << number of operands): bit k, operand k needs grad
_needs: dict = {}


_UNROLLED = ("r", "rr", "rs")  # the patterns of ``unrolled_fast``, by ``op.unrolled_plans`` index


class _Plan:
    """What a cached (op, dtype, pattern) call does (Note [eager fast path]); for the patterns
    of ``unrolled_fast``, ``saves``: what the node saves (``save_plan``) by the mask of the
    operands that require grad, and ``metas``: its nodes' metadata tuples by shape."""

    __slots__ = ("entry", "max_size", "out_np", "out_dt", "dt", "records", "cast", "saves",
                 "metas")


def _plan(op, dtype: np.dtype, pattern: str):
    """The cached decision for ``op`` over operands of ``pattern`` in ``dtype``, or False."""
    key = (dtype, pattern)
    plan = op.fast_plans.get(key)
    if plan is not None:
        return plan
    dt = dtypes.to_dtype(dtype) if dtype.kind == "f" and dtype.itemsize >= 4 else None
    if dt is None or (callable(op.dtype_rule) and op.dtype_rule(dt) != dt):
        plan = False  # (a row's own dtype rule may compute in another dtype: the general path)
    else:
        out_dt = dtypes.bool_ if op.dtype_rule == "bool" else dt
        plan = _Plan()
        plan.out_np = out_dt.np
        plan.out_dt = out_dt
        plan.dt = dt
        plan.records = op.differentiable and out_dt.is_differentiable
        # float64 kernels take Python scalars as they are (unboxed as doubles, as np.float64()
        # rounds them); float32 ones get them rounded once, as the general path does
        plan.cast = None if dtype.itemsize == 8 else dtype.type
        limit = _LIMIT // max(dtype.itemsize, plan.out_np.itemsize)
        if cpu.use_ufunc(op.cpu_ufunc):  # Note [NumPy forward]: big ones go to NumPy
            limit = min(limit, _UFUNC_LIMIT)
        plan.max_size = limit
        plan.entry = cpu.flat_entry(op.forward, pattern, dtype, plan.out_np)
        unrolled = plan.records and pattern in _UNROLLED  # (what ``unrolled_fast`` records by)
        plan.saves = _saves_by_mask(op, pattern) if unrolled else ()
        plan.metas = {}
    op.fast_plans[key] = plan
    return plan


def _saves_by_mask(op, pattern: str) -> tuple:
    """``save_plan(op, needs)`` for each mask of the Tensor operands (``r`` in ``pattern``)
    that require grad: bit k, operand k (None where a bit is not a Tensor's)."""
    tensors = sum(1 << k for k, letter in enumerate(pattern) if letter == "r")
    return tuple(save_plan(op, tuple(bool(mask >> k & 1) for k in range(len(pattern))))
                 if mask and mask & tensors == mask else None
                 for mask in range(1 << len(pattern)))


_UNARY = object()  # ``unrolled_fast``'s second operand when there is none


def unrolled_fast(op, x, y=_UNARY):
    """``elementwise_fast(op, (x,))`` or ``elementwise_fast(op, (x, y))``: one or two
    operands, no attributes (``tanh(x)``, ``x * y``, ``x * 1.5``), unrolled, its plans keyed
    by dtype alone (``op.unrolled_plans``, one table per pattern); a Python number first
    (``1.5 - x``) takes ``elementwise_fast``."""
    if type(x) is not Tensor:
        return None if y is _UNARY else elementwise_fast(op, (x, y))
    a = x._data
    if type(a) is not _ndarray or not a.flags.c_contiguous:
        return None
    shape, dtype = a.shape, a.dtype  # (each read of an ndarray attribute costs ~30 ns)
    if y is _UNARY:
        form = 0
        mask = x._requires_grad
    else:
        kind = type(y)
        if kind is Tensor:
            b = y._data
            if (type(b) is not _ndarray or b.shape != shape or b.dtype is not dtype
                    or not b.flags.c_contiguous):
                return None  # (an equal dtype that is another object: the general path)
            form = 1
            mask = x._requires_grad | (y._requires_grad << 1)
        elif kind is float or kind is int:
            b = y
            form = 2
            mask = x._requires_grad
        else:
            return None
    plans = op.unrolled_plans[form]
    plan = plans.get(dtype)
    if plan is None:
        plan = plans[dtype] = _plan(op, dtype, _UNROLLED[form])
    size = a.size
    if plan is False or size == 0 or size > plan.max_size:
        return None
    out = np.empty(shape, plan.out_np)
    if len(shape) != 1 or plan.cast is not None:  # rarer: n-d arrays, float32 scalars
        plan.entry(out.reshape(-1), *_flat_values((a,) if form == 0 else (a, b), plan.cast))
    elif form == 0:
        plan.entry(out, a)
    else:
        plan.entry(out, a, b)
    result = make_tensor(out)
    if mask and plan.records and _grad_mode.enabled:
        metas = plan.metas.get(shape)
        if metas is None:
            metas = _node_metas(plan, shape, form)
        record_unrolled(op, x, None if form == 0 else y, mask, plan.saves[mask], result, metas)
    return result


def _node_metas(plan, shape, form) -> tuple:
    """The metadata tuples of ``plan``'s nodes over operands of ``shape``, shared by them (they
    are the same every time; fewer objects per node for the cyclic collector to walk): index 0
    the output's ``((shape, dtype),)``, index ``mask`` the inputs' by the mask of the operands
    that require grad."""
    metas = plan.metas
    if len(metas) >= 256:  # (bounded: programs of ever new shapes)
        metas.clear()
    meta = (shape, plan.out_dt)
    one = (meta,)
    metas[shape] = found = (one, one) if form == 0 else (one, (meta, None), (None, meta),
                                                          (meta, meta))
    return found


def elementwise_fast(op, args, attrs=None):
    """``op(*args, **attrs)`` through the cached plan (Note [eager fast path]), or None to take
    the general path. ``args``: the call's positional operands; ``attrs``: the row's attributes,
    each a Python float or int (the kernel's trailing scalar operands, as in the general
    path)."""
    first = None
    pattern = ""
    values = []
    mask = 0
    bit = 1
    for a in args:
        kind = type(a)
        if kind is Tensor:
            data = a._data
            if type(data) is not _ndarray:
                return None
            if first is None:
                first = data
            elif data.shape != first.shape or data.dtype != first.dtype:
                return None
            if not data.flags.c_contiguous:
                return None
            pattern += "r"
            values.append(data)
            if a._requires_grad:
                mask |= bit
        elif kind is float or kind is int:
            pattern += "s"
            values.append(a)
        else:
            return None
        bit <<= 1
    if first is None:
        return None
    if attrs:
        for name in op.attrs:
            value = attrs.get(name)
            kind = type(value)
            if kind is not float and kind is not int:
                return None
            pattern += "s"
            values.append(value)
    elif op.attrs:
        return None
    plan = op.fast_plans.get((first.dtype, pattern))
    if plan is None:
        plan = _plan(op, first.dtype, pattern)
    if plan is False:
        return None
    size = first.size
    if size == 0 or size > plan.max_size:
        return None
    shape = first.shape
    out = np.empty(shape, plan.out_np)
    if first.ndim == 1 and plan.cast is None:
        plan.entry(out, *values)
    else:  # rarer: n-d arrays run flat, float32 kernels take scalars rounded once
        plan.entry(out.reshape(-1), *_flat_values(values, plan.cast))
    result = make_tensor(out)
    if mask and plan.records and _grad_mode.enabled:
        needs = _needs.get((mask, bit))
        if needs is None:
            needs = _needs[(mask, bit)] = tuple(bool(mask & (1 << k)) for k in range(len(args)))
        record_elementwise(op, args, needs, attrs if attrs else {}, result, shape, plan.out_dt,
                           plan.dt)
    return result


def _flat_values(values, cast):
    """The kernel operands of an n-d or float32 call: arrays raveled (C-contiguous: views),
    scalars rounded to the kernel's dtype (``cast``, None: kept)."""
    return [v.reshape(-1) if type(v) is _ndarray else v if cast is None else cast(v)
            for v in values]


# (body, dtype, pattern) -> (entry point, largest size) for ``run_body_fast``
_body_plans: dict = {}


def run_body_fast(body, args, np_dtype):
    """``dispatch.run_body(body, args, dtype)`` (``np_dtype``: ``dtype.np``) for small
    same-shape C-contiguous operands (Tensors or arrays of that dtype, Python scalars) through
    the kernel's entry point (Note [eager fast path]: the fused backward kernels of a chain), or
    None for the general path. A broadcast scalar (every stride 0: the gradient of a full sum)
    is read as the scalar it repeats, as the general path does."""
    shape = None
    pattern = ""
    values = []
    for a in args:
        kind = type(a)
        if kind is float or kind is int:
            pattern += "s"
            values.append(a)
            continue
        if kind is Tensor:
            a = a._data
            kind = type(a)
        if kind is not _ndarray or a.dtype != np_dtype:
            return None
        if shape is None:
            shape = a.shape
        elif a.shape != shape:
            return None
        if a.flags.c_contiguous:
            pattern += "r"
            values.append(a)
        elif a.size > 1 and not any(a.strides):
            pattern += "s"
            values.append(a[(0,) * a.ndim])  # a NumPy scalar of the kernel's dtype
        else:
            return None
    if shape is None:
        return None
    size = 1
    for n in shape:
        size *= n
    out = run_body_entry(body, values, pattern, shape, size, np_dtype)
    return None if out is None else make_tensor(out)


def run_body_entry(body, values, pattern, shape, size, np_dtype):
    """The array of the Tensor ``run_body_fast`` returns, from operands it has checked:
    ``values``, of ``pattern``, C-contiguous arrays of ``shape`` (``size`` elements) and
    ``np_dtype``, and scalars; or None where the body's kernel has no entry point for them
    (not a float dtype, empty, above the flat-entry limit)."""
    key = (body, np_dtype, pattern)
    plan = _body_plans.get(key)
    if plan is None:
        if np_dtype.kind != "f" or np_dtype.itemsize < 4:
            plan = (None, -1)
        else:
            plan = (cpu.flat_entry(body, pattern, np_dtype, np_dtype), _LIMIT // np_dtype.itemsize)
        _body_plans[key] = plan
    if size == 0 or size > plan[1]:
        return None
    out = np.empty(shape, np_dtype)
    if len(shape) == 1 and np_dtype.itemsize == 8:
        plan[0](out, *values)
    else:
        plan[0](out.reshape(-1), *_flat_values(values, None if np_dtype.itemsize == 8
                                               else np_dtype.type))
    return out


# input shape -> the attributes of its full sum's node (read-only: nodes share them)
_full_sum_attrs: dict = {}


def full_sum(op, x):
    """``x.sum()`` (``op``: the ``sum`` row) of a small C-contiguous float CPU Tensor, or None
    for the general path (Note [eager fast path]): the serial fold kernel through its entry
    point (``cpu_reduce.sum_all``: the general path's kernel and bits) and the node
    ``dispatch.composite`` records, with the attributes its forward stashes."""
    if type(x) is not Tensor or transform_hook is not None:
        return None
    data = x._data
    if not data.ndim:
        return None
    total = cpu_reduce.sum_all(data)
    if total is None:
        return None
    result = make_tensor(total)
    if x._requires_grad and _grad_mode.enabled:
        shape = data.shape
        attrs = _full_sum_attrs.get(shape)
        if attrs is None:
            if len(_full_sum_attrs) >= 1024:  # (bounded: programs of ever new shapes)
                _full_sum_attrs.clear()
            attrs = _full_sum_attrs[shape] = MappingProxyType({
                "dims": tuple(range(data.ndim)), "keepdim": False, "dtype": None,
                "in_shape": shape, "keep_shape": (1,) * data.ndim})
        record_one(op, x, result, attrs)
    return result


def fresh_result(op, x, data, attrs):
    """The Tensor of ``data``, a fresh array ``op`` (a composite row of one operand that saves
    nothing) computed from the Tensor ``x``, with the node ``dispatch.composite`` would record
    (``attrs``: the call's and what the forward stashes): for a fast path that has run the
    row's forward itself (Note [eager fast path])."""
    result = make_tensor(data)
    if x._requires_grad and _grad_mode.enabled:
        record_one(op, x, result, attrs)
    return result


def basic_view(op, x, index, kind):
    """``x[index]`` for a normalised basic ``index`` of ``kind`` (``op``: its getitem row) of a
    CPU Tensor, or None for the general path (a transform active, not a CPU ndarray, or an index
    NumPy rejects: the general path raises its own error): NumPy's view, with the view tracking
    and the node ``dispatch.composite`` gives it, attributes included (Note [eager fast
    path])."""
    if type(x) is not Tensor or transform_hook is not None:
        return None
    data = x._data
    if type(data) is not _ndarray:
        return None
    try:
        view = data[index]
    except IndexError:
        return None
    enabled = _grad_mode.enabled  # (a thread-local read: ~35 ns, once)
    out = view_tensor(x, view, enabled)
    if enabled and x._requires_grad:  # (``input_shape``: what the forward stashes)
        record_one(op, x, out, {"index": index, "kind": kind, "input_shape": data.shape})
    return out

