"""Dispatch: promote dtypes, broadcast, run the kernel, record the node.

``tensor.py`` registers the Tensor class here (``set_tensor_type``) so that this layer can build
results without importing the layer above it.
"""
from __future__ import annotations

import weakref

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import SavedTensor
from ..device import cpu, pool

Tensor = None  # set by jitgrad.tensor


def set_tensor_type(cls) -> None:
    global Tensor
    Tensor = cls


def operand(x, op: str):
    """A Tensor, or a Python scalar kept weak for promotion (NumPy's NEP 50 rules)."""
    if isinstance(x, Tensor) or type(x) in (bool, int, float):
        return x
    if isinstance(x, (np.ndarray, np.generic)):  # before the loop: np.float64 subclasses float
        return Tensor._make(np.asarray(x))  # but NumPy scalars are strongly typed (NEP 50)
    for kind in (bool, int, float):  # subclasses of Python numbers (IntEnum...) become plain
        if isinstance(x, kind):
            return kind(x)
    if isinstance(x, (list, tuple)):
        return Tensor._make(np.asarray(x))
    raise TypeError(f"{op}(): unsupported operand type {type(x).__name__}; expected a Tensor, "
                    "a NumPy array or a Python number")


def tensor_operand(x, op: str):
    """``operand`` for ops whose inputs must be Tensors: a Python number becomes a 0-d one."""
    x = operand(x, op)
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))


def broadcast_shapes(op: str, *shapes) -> tuple:
    """NumPy's broadcast, with PyTorch's message naming the first mismatching dimension."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        nd = max(len(s) for s in shapes)
        padded = [(1,) * (nd - len(s)) + tuple(s) for s in shapes]
        for d in range(nd - 1, -1, -1):
            sizes = [p[d] for p in padded if p[d] != 1]
            if len(set(sizes)) > 1:  # a, b: the first two differing sizes, in operand order
                a = sizes[0]
                b = next(n for n in sizes if n != a)
                raise RuntimeError(
                    f"{op}: the size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {d}; shapes {' and '.join(str(tuple(s)) for s in shapes)} "
                    "cannot be broadcast together") from None
        raise


def gradient_edge(t) -> tuple:
    """The ``(node, input_nr)`` a gradient for ``t`` flows into."""
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (t._grad_accumulator(), 0)
    return (None, 0)


def _connect(node, operands, needs) -> None:
    node.needs_input_grad = needs
    edges, meta = [], []
    for o, need in zip(operands, needs):
        if need:
            edges.append(gradient_edge(o))
            meta.append((o._data.shape, o.dtype))
        else:
            edges.append((None, 0))
            meta.append(None)
    node._next_edges, node._next_meta = tuple(edges), tuple(meta)


def _needs(operands) -> tuple:
    return tuple(isinstance(o, Tensor) and o._requires_grad for o in operands)


def _result_shape(op: str, values) -> tuple:
    """The broadcast shape of the array operands (a fast path when they all agree)."""
    shapes = [v.shape for v in values if isinstance(v, np.ndarray)]
    if not shapes:
        return ()
    first = shapes[0]
    for sh in shapes:
        if sh != first:
            return broadcast_shapes(op, *shapes)
    return first


def _save_plan(op, needs: tuple) -> tuple:
    """``(name, source)`` pairs an elementwise node saves for these ``needs_input_grad``:
    source is an input index, "attr" or "result". Computed once per op and needs pattern."""
    plan = op.save_plans.get(needs)
    if plan is None:
        names = sorted({p for inp, need in zip(op.inputs, needs) if need
                        for p in op.params.get(inp, ())})
        plan = op.save_plans[needs] = tuple(
            (n, "attr" if n in op.attrs else "result" if n == "result" else op.inputs.index(n))
            for n in names)
    return plan


def elementwise(op, *args, **attrs):
    """Run an elementwise registry op on Tensors/scalars and record its node."""
    operands = [operand(a, op.name) for a in args]
    values = [o._data if isinstance(o, Tensor) else o for o in operands]
    attr_values = [attrs[a] for a in op.attrs]
    dt = dtypes.result_type(*values, *(a for a in attr_values if a is not None))
    if op.dtype_rule == "float":
        dt = dtypes.float_type_for(dt)
    out_dt = dtypes.bool_ if op.dtype_rule == "bool" else dt
    shape = _result_shape(op.name, values)
    data = cpu.elementwise(op.forward, values + attr_values, shape, out_dt.np, dt.np,
                           ufunc=op.cpu_ufunc)
    out = Tensor._make(data)
    if not (op.differentiable and out_dt.is_floating_point and is_grad_enabled()):
        return out
    needs = _needs(operands)
    if not any(needs):
        return out
    node = op.node_cls()
    _connect(node, operands, needs)
    node._attrs = attrs
    node._output_meta = [(shape, out_dt)]
    out._grad_fn, out._requires_grad = node, True
    saved = node._saved
    for name, source in _save_plan(op, needs):
        if source == "attr":
            saved[name] = attrs[name]
        elif source == "result":
            saved[name] = SavedTensor(out, is_output=True)
        else:
            v = operands[source]
            saved[name] = SavedTensor(v) if isinstance(v, Tensor) else v
    return out


def run_body(body, args, dtype):
    """Run a scalar body as one fused kernel over Tensors/scalars (no graph recorded)."""
    values = [a._data if isinstance(a, Tensor) else a for a in args]
    shape = _result_shape(body.__name__, values)
    return Tensor._make(cpu.elementwise(body, values, shape, dtype.np, dtype.np))


class _Ctx:
    """What a composite forward may stash for its backward (copied onto the node)."""


def composite(op, *args, **attrs):
    """Run a composite registry op: array-level forward, Tensor-level backward."""
    operands = [tensor_operand(a, op.name) for a in args]
    ctx = _Ctx()
    result = op.forward(ctx, *[o._data for o in operands], **attrs)
    results = result if isinstance(result, tuple) else (result,)
    outs = [Tensor._make(np.asarray(r)) for r in results]
    if op.view:
        base = operands[0]
        if np.may_share_memory(outs[0]._data, base._data):
            root = base._base if base._base is not None else base
            outs[0]._version_counter = base._version_counter
            outs[0]._base = root
            if root._views is None:
                root._views = weakref.WeakSet()
            root._views.add(outs[0])
    needs = _needs(operands)
    if op.differentiable and any(needs) and is_grad_enabled():
        node = op.node_cls()
        _connect(node, operands, needs)
        node._attrs = {**attrs, **vars(ctx)}
        node._output_meta = [(o.shape, o.dtype) for o in outs]
        for name in op.save:
            if name != "result":
                node._saved[name] = SavedTensor(operands[op.inputs.index(name)])
        for nr, o in enumerate(outs):
            if o.dtype.is_floating_point:
                o._grad_fn, o._requires_grad, o._output_nr = node, True, nr
        if "result" in op.save:
            node._saved["result"] = SavedTensor(outs[0], is_output=True)
    return outs[0] if op.n_outputs == 1 else tuple(outs)


def zeros(shape, dtype):
    return Tensor._make(pool.zeros(shape, dtype.np))


def full_like(t, value):
    return Tensor._make(pool.full(t.shape, value, t.dtype.np))
