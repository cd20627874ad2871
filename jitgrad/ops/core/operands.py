"""Operand coercion and dtype promotion: what an op's arguments become before its kernel runs.

Tensors stay Tensors; Python scalars stay weak for promotion (NumPy's NEP 50 rules); NumPy arrays
and lists become Tensors. ``prepare`` is the general path of an elementwise call (promotion,
complex support, broadcast shape), ``plain_float_args`` its fast path (Note [plain float path]).
"""
from __future__ import annotations

import numpy as np

from ... import dtypes
from . import devices, upper

Tensor = None  # the registered class: ops/core/upper.py keeps it current (Note [upper registrations])
upper.bind(globals(), "Tensor")


def operand(x, op: str):
    """A Tensor, or a Python scalar kept weak for promotion (NumPy's NEP 50 rules)."""
    if isinstance(x, Tensor) or type(x) in (bool, int, float, complex):
        return x
    if isinstance(x, (np.ndarray, np.generic)):  # before the loop: np.float64 subclasses float
        return Tensor._make(np.asarray(x))  # but NumPy scalars are strongly typed (NEP 50)
    for kind in (bool, int, float, complex):  # subclasses of Python numbers become plain
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
                listed = " and ".join(str(tuple(s)) for s in shapes)
                raise RuntimeError(
                    f"{op}: the size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {d}; shapes {listed} cannot be broadcast together"
                ) from None
        raise


def result_shape(op: str, values) -> tuple:
    """The broadcast shape of the array operands (a fast path when they all agree)."""
    cuda = devices.loaded_cuda
    shapes = [v.shape for v in values if isinstance(v, np.ndarray)
              or (cuda is not None and isinstance(v, cuda.CudaArray))]
    if not shapes:
        return ()
    first = shapes[0]
    for sh in shapes:
        if sh != first:
            return broadcast_shapes(op, *shapes)
    return first


# Note [complex support]: complex tensors reach only the rows flagged ``complex_ok`` (checked
# here, once per call, for every registry op: a dtype test, so real tensors pay nothing more).
# Elementwise rows flagged ``holomorphic`` get PyTorch's convention ``grad_in = grad_out *
# conj(f'(z))`` by conjugating their saved operands before the same backward body runs
# (``registry.OpNode._apply_elementwise``); the non-holomorphic ops (abs, real, imag, conj,
# angle) and the FFTs are composite rows with their own rules (``ops/complex.py``, ``ops/fft.py``).
# A real input whose gradient comes back complex gets its real part: the engine casts every
# gradient to its input's dtype, and ``cast`` from complex to real takes the real part.
def complex_error(name: str, dt) -> TypeError:
    """The error for an op that has no complex implementation (Note [complex support])."""
    return TypeError(f"{name}: complex tensors are not supported yet (dtype {dt.name}); "
                     "supported: + - * / neg, x**2, exp, log, sin, cos, sinh, cosh, tanh, "
                     "reciprocal, abs, real, imag, conj, angle, sum, mean, shape ops and "
                     "jitgrad.numpy.fft (see docs/numpy.md)")


def check_complex_ok(op, arrays) -> None:
    """Refuse complex arrays for a row not flagged ``complex_ok`` (Note [complex support])."""
    if not op.complex_ok:
        for a in arrays:
            if a.dtype.kind == "c":
                raise complex_error(op.name, dtypes.to_dtype(a.dtype))


def compute_dtype(op, values, attr_values):
    """The dtype an elementwise row computes in: NumPy's promotion of its operands and
    attributes, then the row's ``dtype_rule`` ("float": the float type for it; a callable:
    the row's own rule, e.g. NumPy's result dtypes in ops/elementwise_np.py)."""
    dt = dtypes.result_type(*values, *(a for a in attr_values if a is not None))
    if op.dtype_rule == "float":
        return dtypes.float_type_for(dt)
    if callable(op.dtype_rule):
        return op.dtype_rule(dt)
    return dt


def prepare(op, args, attrs):
    """Operands, their values, attribute values, compute and result dtypes and the broadcast
    shape of an elementwise call (any operands: the general path)."""
    operands = [operand(a, op.name) for a in args]
    values = [o._data if isinstance(o, Tensor) else o for o in operands]
    attr_values = [attrs[a] for a in op.attrs]
    dt = compute_dtype(op, values, attr_values)
    if dt.is_complex and not op.complex_ok:  # Note [complex support]
        raise complex_error(op.name, dt)
    out_dt = dtypes.bool_ if op.dtype_rule == "bool" else dt
    return operands, values, attr_values, dt, out_dt, result_shape(op.name, values)


# Note [plain float path]: most elementwise calls are CPU Tensors of one float dtype and shape,
# with Python scalars; they skip operand coercion, promotion and the device checks.
def plain_float_args(args):
    """The common case of an elementwise call, or None: CPU Tensors (not subclasses) of one
    float32/float64 dtype and one shape, with Python int/float scalars (weak: they take the
    tensors' dtype). Returns ``(values, dtype, shape)`` without the general path's checks."""
    first = None
    for a in args:
        kind = type(a)
        if kind is Tensor:
            data = a._data
            if type(data) is not np.ndarray:
                return None
            if first is None:
                first = data
            elif data.shape != first.shape or data.dtype != first.dtype:
                return None
        elif kind is not float and kind is not int:
            return None
    if first is None or first.dtype.kind != "f" or first.dtype.itemsize < 4:
        return None
    return ([a._data if type(a) is Tensor else a for a in args],
            dtypes.to_dtype(first.dtype), first.shape)
