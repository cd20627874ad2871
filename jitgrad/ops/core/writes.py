"""Writes into existing tensors: ``out=`` results and in-place ops (casts, overlap, resizing).

Nothing here records autograd history: ``out=`` refuses inputs that need grad, and in-place ops
record their node themselves (``ops/inplace.py``).
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes
from ...graph.grad_mode import is_grad_enabled
from ...kernels.cpu import elementwise as cpu, pool
from . import devices, upper
from .devices import MIXED_DEVICES_MSG, device_of, on_cuda, shares_memory
from .operands import complex_error
from .recording import needs_grad

# the registered class and write guard: ops/core/upper.py keeps them current (Note [upper
# registrations])
Tensor = write_guard = None
upper.bind(globals(), "Tensor", "write_guard")

_SCALAR_TYPE = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
OVERLAP_WRITE_MSG = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")


def scalar_type_name(np_dtype) -> str:
    """PyTorch's name for a dtype in messages (``Double``, ``Long``...)."""
    name = np.dtype(np_dtype).name
    return _SCALAR_TYPE.get(name, name)


def check_cast(result_dtype, out_dtype) -> None:
    """A result may be written into a tensor of ``out_dtype`` under NumPy's same-kind rule (as
    PyTorch: float into int is refused, float64 into float32 allowed)."""
    if not np.can_cast(result_dtype, out_dtype, "same_kind"):
        raise RuntimeError(f"result type {scalar_type_name(result_dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(out_dtype)}")


def check_writable(t) -> None:
    """Refuse writes into memory that several elements share (expand) or that is read-only,
    and writes into complex tensors (in-place ops and ``out=``), which are not recorded for
    complex dtypes yet (Note [complex support])."""
    if write_guard is not None:  # a compile trace refuses writes (Note [compile tracing])
        write_guard(t)
    data = t._data
    if data.dtype.kind == "c":
        raise complex_error("in-place/out= write", dtypes.to_dtype(data.dtype))
    if devices.is_cuda_array(data):
        # CUDA arrays carry no read-only flag: an expanded view shows as a stride-0 dim
        if any(s == 0 and n > 1 for s, n in zip(data.elem_strides, data.shape)):
            raise RuntimeError(OVERLAP_WRITE_MSG)
        return
    if not data.flags.writeable:
        # NumPy marks expand()ed arrays (and views of them) read-only: a write would land on
        # elements that share memory
        root = t._base._data if t._base is not None else data
        if root.flags.writeable or any(s == 0 and n > 1 for s, n in zip(data.strides, data.shape)):
            raise RuntimeError(OVERLAP_WRITE_MSG)
        raise RuntimeError("unsupported operation: the written-to tensor's memory is read-only "
                           "(it wraps a read-only NumPy array). Please clone() the tensor before "
                           "performing the operation.")


def _same_layout(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.shape == b.shape and a.strides == b.strides
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def compute_into(op, values, attr_values, shape, dt, target: np.ndarray) -> None:
    """Run elementwise ``op`` over ``values`` writing the result into ``target`` (of ``shape``).

    The kernel writes straight into ``target`` when it is C-contiguous and no operand overlaps
    it other than element for element (``x.mul_(x)``); otherwise the result goes through a
    temporary the size of ``target`` (NumPy semantics for overlapping operands: ``a += a[::-1]``
    reads the old values)."""
    if devices.loaded_cuda is not None and (devices.is_cuda_array(target)
                                            or any(devices.is_cuda_array(v) for v in values)):
        _compute_into_cuda(op, values, attr_values, shape, dt, target)
        return
    direct = target.flags.c_contiguous
    if direct:
        for v in values:
            if (isinstance(v, np.ndarray) and v is not target and np.may_share_memory(v, target)
                    and not _same_layout(v, target)):
                direct = False
                break
    if direct:
        cpu.elementwise(op.forward, values + attr_values, shape, target.dtype, dt.np, out=target,
                        ufunc=op.cpu_ufunc)
    else:
        tmp = cpu.elementwise(op.forward, values + attr_values, shape, target.dtype, dt.np,
                              ufunc=op.cpu_ufunc)
        np.copyto(target, tmp, casting="unsafe")


def _compute_into_cuda(op, values, attr_values, shape, dt, target) -> None:
    """``compute_into`` on CUDA: straight into ``target`` (any strides) unless an operand
    overlaps it other than element for element, then through a temporary."""
    cuda = devices.loaded_cuda
    if not isinstance(target, cuda.CudaArray):
        device = next(v.device for v in values if isinstance(v, cuda.CudaArray))
        raise RuntimeError(MIXED_DEVICES_MSG.format(device, "cpu", op.name))
    values = list(values) + [target]
    on_cuda(values, op.name)  # one device; a 0-d CPU operand becomes a device scalar
    values.pop()
    direct = not any(
        isinstance(v, cuda.CudaArray) and v is not target and shares_memory(v, target)
        and (v.shape, v.elem_strides, v.offset) != (target.shape, target.elem_strides,
                                                    target.offset)
        for v in values)
    if direct:
        cuda.elementwise(op.forward, values + attr_values, shape, target.dtype, dt.np,
                         out=target)
    else:
        tmp = cuda.elementwise(op.forward, values + attr_values, shape, target.dtype, dt.np)
        cuda.copy_into(target, tmp)


def check_out_device(out, result_device: str) -> None:
    """``out=`` must live on the device the result is computed on."""
    if device_of(out._data) != result_device:
        raise RuntimeError(f"Expected out tensor to have device {result_device}, but got "
                           f"{device_of(out._data)} instead")


def check_out_tensor(name: str, out, operands) -> None:
    """``out=`` is a Tensor, and neither it nor an operand needs grad (out= is not recorded)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (out._requires_grad or any(needs_grad(operands))):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def prepare_out(name: str, out, shape: tuple) -> None:
    """Make ``out`` ready to receive a result of ``shape``: resized like PyTorch (a warning when
    it had elements), or checked writable."""
    if out.shape == tuple(shape):
        check_writable(out)
        return
    if out._base is not None or out._views:
        raise RuntimeError(
            f"{name}(): the out= tensor has shape {list(out.shape)} but the result has shape "
            f"{list(shape)}, and a view or a tensor with live views cannot be resized; pass an "
            f"out= tensor of shape {list(shape)}")
    if out._data.size:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out.shape)}, which does not match the required output shape {list(shape)}. "
            "This behavior is deprecated, and in a future release outputs will not be resized "
            "unless they have zero elements.", UserWarning, stacklevel=4)
    if device_of(out._data) != "cpu":
        out._data = devices.loaded_cuda.empty(shape, out._data.dtype, out._data.index)
        return
    out._data = pool.empty(shape, out._data.dtype)


def write_out(name: str, out, result: np.ndarray) -> None:
    """Copy an already computed ``result`` into ``out`` (the checks of ``elementwise``'s out=)."""
    check_cast(result.dtype, out._data.dtype)
    check_out_device(out, device_of(result))
    prepare_out(name, out, result.shape)
    if device_of(result) != "cpu":
        devices.loaded_cuda.copy_into(out._data, result)
        out._version_counter.bump()
        return
    np.copyto(out._data, result, casting="unsafe")
    out._version_counter.bump()


def add_into(dst, src) -> None:
    """``dst += src`` on the raw data (no graph, no version bump): gradient accumulation."""
    a, b = dst._data, src._data
    # (two NumPy arrays, the common case, without the device look-ups)
    if (type(a) is not np.ndarray or type(b) is not np.ndarray) and (
            device_of(a) != "cpu" or device_of(b) != "cpu"):
        values = [a, b]
        on_cuda(values, "add_")
        devices.loaded_cuda.elementwise(_add, values, dst.shape, a.dtype, out=a)
        return
    np.add(a, b, out=a, casting="unsafe")


def _add(a, b):
    return a + b
