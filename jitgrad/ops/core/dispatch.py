"""Dispatch: the entry points that run a registry op on Tensors and scalars.

``elementwise`` and ``composite`` (and their ``out=`` forms) tie the jobs of the modules below
together, each in a file of its own:

- ``ops/core/devices.py``: which device an op runs on, moves between devices (Note [lazy cuda]);
- ``ops/core/operands.py``: operand coercion, dtype promotion, broadcast checks (Note [plain float
  path], Note [complex support]);
- ``ops/core/recording.py``: the node an op records and what it saves (Note [view tracking]);
- ``ops/core/writes.py``: ``out=`` and in-place writes into existing tensors;
- ``ops/core/allocation.py``: new Tensors without history (zeros, filled, copies);
- ``ops/core/upper.py``: what the layers above register into ops (Note [upper registrations]).

This module re-exports the names of those modules that call sites read as ``dispatch.<name>``.

Note [transform hooks]: while vmap runs, a forward-AD dual level is open, anomaly mode is on or a
checkpoint collects its inputs, every registry op goes through ``transform_hook(run, op, args,
attrs)`` (installed by ``autograd/transforms.py`` with ``upper.set_transform_hook``), which may
run the op batched, attach tangents to its outputs or note where its node was made; ``run`` is
the op itself. None otherwise, so plain ops pay one global lookup.
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from ...graph.grad_mode import is_grad_enabled, no_grad
from ...kernels.cpu import elementwise as cpu
from . import devices, upper
from .allocation import copy_data, full_like, zeros
from .fastpath import (
    basic_view, elementwise_fast, fresh_result, full_sum, run_body_entry, run_body_fast,
    unrolled_fast)
from .devices import (
    MIXED_DEVICES_MSG, backend_for, cuda_backend, cuda_kernels, device_of, move, on_cuda,
    shares_memory)
from .operands import (
    broadcast_shapes, check_complex_ok, complex_error, compute_dtype, operand, plain_float_args,
    prepare, result_shape, tensor_operand)
from .recording import (
    CompositeCtx, gradient_edge, needs_grad, record_composite, record_elementwise, refresh_view,
    save_plan, view_tensor)
from .upper import register_tensor_type as set_tensor_type
from .writes import (
    OVERLAP_WRITE_MSG, add_into, check_cast, check_out_device, check_out_tensor, check_writable,
    compute_into, prepare_out, scalar_type_name, write_out)

# the registered class and hook, kept current by ops/core/upper.py (Note [upper registrations]): plain
# globals for the hot path, and read as ``dispatch.Tensor`` / ``dispatch.transform_hook`` elsewhere
Tensor = make_tensor = transform_hook = None
upper.bind(globals(), "Tensor", "make_tensor", "transform_hook")

# the names call sites used before the split, under their new public names
_Ctx = CompositeCtx
_result_shape = result_shape
_save_plan = save_plan

__all__ = [
    "Tensor", "transform_hook", "set_tensor_type", "elementwise", "unary", "binary", "composite",
    "binary_operator", "run_body", "records_nothing", "full_sum", "basic_view", "fresh_result",
    "run_body_entry",
    "copy_data", "full_like", "zeros", "MIXED_DEVICES_MSG", "backend_for", "cuda_backend",
    "cuda_kernels", "device_of", "move", "on_cuda", "shares_memory", "broadcast_shapes",
    "complex_error", "compute_dtype", "operand", "tensor_operand", "gradient_edge", "refresh_view",
    "view_tensor", "OVERLAP_WRITE_MSG", "add_into", "check_cast", "check_writable",
    "compute_into", "prepare_out", "scalar_type_name", "write_out"]


def elementwise(op, *args, out=None, **attrs):
    """Run an elementwise registry op on Tensors/scalars and record its node.

    ``out``: a Tensor to write the result into (PyTorch's ``out=``: no autograd, the result is
    cast to ``out``'s dtype when NumPy's same-kind rule allows, ``out`` is resized when its
    shape differs)."""
    if out is not None:
        return _elementwise_out(op, args, attrs, out)
    if transform_hook is not None:  # Note [transform hooks]
        return transform_hook(_elementwise, op, args, attrs)
    # Note [eager fast path]
    if attrs:
        result = elementwise_fast(op, args, attrs)
    elif len(args) == 2:
        result = unrolled_fast(op, args[0], args[1])
    elif len(args) == 1:
        result = unrolled_fast(op, args[0])
    else:
        result = elementwise_fast(op, args)
    if result is not None:
        return result
    return _elementwise(op, *args, **attrs)


def unary(op, x):
    """``elementwise(op, x)`` for a row of one operand without attributes (``tanh(x)``): its
    fast path first, without the argument packing (Note [eager fast path]); a declined call
    goes to the general path at once (not through ``elementwise``'s fast path again)."""
    if transform_hook is not None:  # Note [transform hooks]
        return transform_hook(_elementwise, op, (x,), {})
    result = unrolled_fast(op, x)
    return result if result is not None else _elementwise(op, x)


def binary(op, x, y):
    """``elementwise(op, x, y)`` for a row of two operands without attributes (``x * y``)."""
    if transform_hook is not None:
        return transform_hook(_elementwise, op, (x, y), {})
    result = unrolled_fast(op, x, y)
    return result if result is not None else _elementwise(op, x, y)


def binary_operator(op, public):
    """The Tensor operator (``__add__``) of ``op``, a row of two operands without attributes:
    ``public(x, y)`` (its public function, whose docstring it takes), that is ``binary(op, x,
    y)``, with two frames fewer on the eager hot path."""
    def operator(x, y):
        if transform_hook is not None:
            return transform_hook(_elementwise, op, (x, y), {})
        result = unrolled_fast(op, x, y)
        return result if result is not None else _elementwise(op, x, y)

    operator.__name__ = operator.__qualname__ = public.__name__
    operator.__doc__ = public.__doc__
    return operator


def _elementwise(op, *args, **attrs):
    plain = None if op.attrs else plain_float_args(args)  # Note [plain float path]
    if plain is not None:
        operands = args
        values, dt, shape = plain
        attr_values = []
        out_dt = dtypes.bool_ if op.dtype_rule == "bool" else dt
    else:
        operands, values, attr_values, dt, out_dt, shape = prepare(op, args, attrs)
    if plain is None and on_cuda(values, op.name, operands):
        if dt.is_complex:  # e.g. cuda_tensor * 1j (Note [complex support]: CPU only for now)
            raise NotImplementedError(f"{op.name}: complex results are not supported on CUDA "
                                      f"yet (dtype {dt.name}); compute on the CPU")
        data = devices.loaded_cuda.elementwise(op.forward, values + attr_values, shape,
                                               out_dt.np, dt.np)
    else:
        data = cpu.elementwise(op.forward, values + attr_values, shape, out_dt.np, dt.np,
                               ufunc=op.cpu_ufunc)
    out = Tensor._make(data)
    if not (op.differentiable and out_dt.is_differentiable and is_grad_enabled()):
        return out
    needs = needs_grad(operands)
    if any(needs):
        record_elementwise(op, operands, needs, attrs, out, shape, out_dt,
                           dt if plain is not None else None)
    return out


def records_nothing(g) -> bool:
    """Whether an op on ``g`` now would record nothing and run on the host: grad mode off, no
    transform active, ``g`` a CPU tensor (what a plain ``backward()`` runs its rules in). A
    rule may then build its result from arrays directly, without the ops' bookkeeping (the same
    values: no node, view tracking or alias checks to make)."""
    return type(g._data) is np.ndarray and not is_grad_enabled() and transform_hook is None


def run_body(body, args, dtype):
    """Run a scalar body as one fused kernel over Tensors/scalars (no graph recorded)."""
    result = run_body_fast(body, args, dtype.np)  # Note [eager fast path]
    if result is not None:
        return result
    values = [a._data if isinstance(a, Tensor) else a for a in args]
    shape = result_shape(body.__name__, values)
    backend = backend_for(values, body.__name__.strip("_"))
    return Tensor._make(backend.elementwise(body, values, shape, dtype.np, dtype.np))


def composite(op, *args, out=None, **attrs):
    """Run a composite registry op: array-level forward, Tensor-level backward.

    ``out``: as for ``elementwise`` (single-output, non-view ops)."""
    if out is not None:
        return _composite_out(op, args, attrs, out)
    if transform_hook is not None:  # Note [transform hooks]
        return transform_hook(_composite, op, args, attrs)
    return _run_composite(op, args, attrs)  # (the call's own tuple and dict: no repacking)


def _composite(op, *args, **attrs):
    """The composite op itself, in the form transform hooks call it."""
    return _run_composite(op, args, attrs)


def _run_composite(op, args, attrs):
    operands = []
    arrays = []
    host = True  # every operand a CPU array: no device questions (Note [eager fast path])
    for a in args:
        if type(a) is not Tensor:
            a = tensor_operand(a, op.name)
        operands.append(a)
        data = a._data
        arrays.append(data)
        if type(data) is not np.ndarray:
            host = False
        elif not op.complex_ok and data.dtype.kind == "c":
            raise complex_error(op.name, dtypes.to_dtype(data.dtype))  # Note [complex support]
    ctx = CompositeCtx()
    if not host:
        check_complex_ok(op, arrays)
        if on_cuda(arrays, op.name, operands):
            return _composite_cuda(op, operands, arrays, ctx, attrs)
    result = op.forward(ctx, *arrays, **attrs)
    if type(result) is np.ndarray:
        outs = [view_tensor(operands[0], result, is_grad_enabled()) if op.view
                else make_tensor(result)]
    else:
        results = result if isinstance(result, tuple) else (result,)
        outs = _outputs(op, operands, [
            r if type(r) is np.ndarray or devices.is_cuda_array(r) else np.asarray(r)
            for r in results])  # to_device makes CUDA arrays
    return record_composite(op, operands, arrays, ctx, attrs, outs)


def _outputs(op, operands, results) -> list:
    """The Tensors of a composite ``op``'s result arrays: the first a view of the first operand
    for a view op (``view_tensor``)."""
    first = results[0]
    head = view_tensor(operands[0], first, is_grad_enabled()) if op.view else make_tensor(first)
    return [head] + [make_tensor(r) for r in results[1:]]


def _composite_cuda(op, operands, arrays, ctx, attrs):
    if op.cuda_forward is None:
        raise NotImplementedError(
            f"{op.name}: no CUDA kernel yet for this op (inputs on {arrays[0].device}, shapes "
            f"{[tuple(a.shape) for a in arrays]}); run it on the CPU with .cpu() and move the "
            "result back with .to(device)")
    result = op.cuda_forward(ctx, *arrays, **attrs)
    results = result if isinstance(result, tuple) else (result,)
    return record_composite(op, operands, arrays, ctx, attrs, _outputs(op, operands, results))


def _elementwise_out(op, args, attrs, out):
    operands, values, attr_values, dt, _, shape = prepare(op, args, attrs)
    check_out_tensor(op.name, out, operands)
    check_cast(np.dtype(bool) if op.dtype_rule == "bool" else dt.np, out._data.dtype)
    check_out_device(out, next((device_of(v) for v in values if device_of(v) != "cpu"), "cpu"))
    prepare_out(op.name, out, shape)
    compute_into(op, values, attr_values, shape, dt, out._data)
    out._version_counter.bump()
    return out


def _composite_out(op, args, attrs, out):
    if op.view or op.n_outputs != 1:
        raise TypeError(f"{op.name}() does not take an out= argument")
    operands = [tensor_operand(a, op.name) for a in args]
    check_out_tensor(op.name, out, operands)
    with no_grad():
        result = composite(op, *operands, **attrs)._data
    write_out(op.name, out, result)
    return out
