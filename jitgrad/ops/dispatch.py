"""Dispatch: promote dtypes, broadcast, run the kernel, record the node.

``tensor.py`` registers the Tensor class here (``set_tensor_type``) so that this layer can build
results without importing the layer above it.

Note [view tracking]: a view op (``def_composite(..., view=True)``) whose NumPy result shares
memory with its input makes a view: ``_base`` is the root tensor (never itself a view), the
version counter is shared, the view joins ``root._views`` (a WeakSet) and remembers the version
at which its ``grad_fn`` was made (``_view_version``) and whether grad mode was off
(``_view_nograd``). An in-place op recorded on the root or on any of its views rebases the
root's history (``ops/inplace.py``); a view's ``grad_fn`` is then stale, which
``gradient_edge`` notices by the version and fixes by asking ``ops/views.py`` for a fresh
``AsStridedBackward0`` over the root's current history (PyTorch regenerates it the same way).
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.node import SavedTensor
from ..device import cpu, pool

Tensor = None  # set by jitgrad.tensor
refresh_view = None  # set by ops/views.py: refresh_view(view) regenerates a stale view's grad_fn
# Note [transform hooks]: while vmap runs, a forward-AD dual level is open, anomaly mode is on or a
# checkpoint collects its inputs, every registry op goes through ``transform_hook(run, op, args,
# attrs)`` (installed by ``autograd/forward_ad.py``), which may run the op batched, attach
# tangents to its outputs or note where its node was made; ``run`` is the op itself. None
# otherwise, so plain ops pay one global lookup.
transform_hook = None
# Note [lazy cuda]: ``device.cuda`` (and numba.cuda) is imported when the first CUDA tensor is made
# (``cuda_backend()``); until then every op pays one global check for it.
_cuda = None

MIXED_DEVICES_MSG = ("Expected all tensors to be on the same device, but found at least two "
                     "devices, {0} and {1}! (in {2}: move the operands to one device with "
                     ".to(device) first)")


def cuda_backend():
    """``device.cuda``, loaded on first use (Note [lazy cuda])."""
    global _cuda
    if _cuda is None:
        from ..device import cuda as backend
        from . import smath

        smath.register_cuda()
        _cuda = backend
    return _cuda


def cuda_kernels(name: str):
    """A CUDA kernel module of the device layer (``"cuda_reduce"`` -> ``device.cuda_reduce``),
    imported on first use like ``device.cuda`` itself (Note [lazy cuda])."""
    import importlib

    cuda_backend()
    return importlib.import_module(f"jitgrad.device.{name}")


def device_of(data) -> str:
    """``"cpu"`` or ``"cuda:N"`` for a tensor's data."""
    return "cpu" if _cuda is None or not isinstance(data, _cuda.CudaArray) else data.device


def on_cuda(values: list, name: str, operands=None) -> bool:
    """True when an op over these operand arrays runs on CUDA (then every array is on one CUDA
    device). A 0-d CPU tensor that needs no grad counts as a scalar there, as in PyTorch: it is
    replaced in ``values`` by its device copy. Any other mix raises PyTorch's error."""
    if _cuda is None:
        return False
    device = next((v.device for v in values if isinstance(v, _cuda.CudaArray)), None)
    if device is None:
        return False
    index = int(device.split(":")[1])
    for k, v in enumerate(values):
        if isinstance(v, _cuda.CudaArray):
            if v.device != device:
                raise RuntimeError(MIXED_DEVICES_MSG.format(device, v.device, name))
        elif isinstance(v, np.ndarray):
            needs = operands is not None and getattr(operands[k], "_requires_grad", False)
            if v.ndim or needs:
                raise RuntimeError(MIXED_DEVICES_MSG.format(device, "cpu", name))
            values[k] = _cuda.to_device(v, index)
    return True


def move(data, device: str):
    """``data`` (NumPy or CUDA array) copied to ``device``."""
    if device == "cpu":
        return data.get() if device_of(data) != "cpu" else data
    if data.dtype.kind == "c":  # Note [complex support]: CPU only for now
        raise NotImplementedError(f"to({device}): complex tensors are not supported on CUDA yet "
                                  f"(dtype {data.dtype.name}); keep them on the CPU")
    backend = cuda_backend()
    index = int(device.split(":")[1])
    backend.check_index(index)
    host = data.get() if device_of(data) != "cpu" else data
    return backend.to_device(host, index)


def _backend(values: list, name: str, operands=None):
    return _cuda if on_cuda(values, name, operands) else cpu


def set_tensor_type(cls) -> None:
    global Tensor
    Tensor = cls


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
                raise RuntimeError(
                    f"{op}: the size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {d}; shapes {' and '.join(str(tuple(s)) for s in shapes)} "
                    "cannot be broadcast together") from None
        raise


def gradient_edge(t) -> tuple:
    """The ``(node, input_nr)`` a gradient for ``t`` flows into (Note [view tracking])."""
    if t._base is not None and t._view_version != t._version_counter.value:
        refresh_view(t)
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (t._grad_accumulator(), 0)
    return (None, 0)


def _connect(node, operands, needs, dtype=None) -> None:
    """Edges and input metadata of ``node`` (``dtype``: every Tensor operand's, when known)."""
    node.needs_input_grad = needs
    edges, meta = [], []
    for o, need in zip(operands, needs):
        if need:
            edges.append(gradient_edge(o))
            meta.append((o._data.shape, dtype or o.dtype))
        else:
            edges.append((None, 0))
            meta.append(None)
    node._next_edges, node._next_meta = tuple(edges), tuple(meta)


def _needs(operands) -> tuple:
    return tuple(isinstance(o, Tensor) and o._requires_grad for o in operands)


def _result_shape(op: str, values) -> tuple:
    """The broadcast shape of the array operands (a fast path when they all agree)."""
    shapes = [v.shape for v in values if isinstance(v, np.ndarray)
              or (_cuda is not None and isinstance(v, _cuda.CudaArray))]
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


def elementwise(op, *args, out=None, **attrs):
    """Run an elementwise registry op on Tensors/scalars and record its node.

    ``out``: a Tensor to write the result into (PyTorch's ``out=``: no autograd, the result is
    cast to ``out``'s dtype when NumPy's same-kind rule allows, ``out`` is resized when its
    shape differs)."""
    if out is not None:
        return _elementwise_out(op, args, attrs, out)
    if transform_hook is not None:  # Note [transform hooks]
        return transform_hook(_elementwise, op, args, attrs)
    return _elementwise(op, *args, **attrs)


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
                     "supported: + - * / neg, x**2, exp, abs, real, imag, conj, angle, sum, "
                     "mean, shape ops and jitgrad.numpy.fft (see docs/numpy.md)")


def _prepare(op, args, attrs):
    """Operands, their values, attribute values, compute and result dtypes and the broadcast
    shape of an elementwise call (any operands: the general path)."""
    operands = [operand(a, op.name) for a in args]
    values = [o._data if isinstance(o, Tensor) else o for o in operands]
    attr_values = [attrs[a] for a in op.attrs]
    dt = dtypes.result_type(*values, *(a for a in attr_values if a is not None))
    if op.dtype_rule == "float":
        dt = dtypes.float_type_for(dt)
    elif callable(op.dtype_rule):  # a row's own rule (NumPy's dtypes: ops/elementwise_np.py)
        dt = op.dtype_rule(dt)
    if dt.is_complex and not op.complex_ok:  # Note [complex support]
        raise complex_error(op.name, dt)
    out_dt = dtypes.bool_ if op.dtype_rule == "bool" else dt
    return operands, values, attr_values, dt, out_dt, _result_shape(op.name, values)


def _plain_float_args(args):
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
    return ([a._data if type(a) is Tensor else a for a in args], dtypes.to_dtype(first.dtype),
            first.shape)


def _elementwise(op, *args, **attrs):
    plain = None if op.attrs else _plain_float_args(args)
    if plain is not None:
        operands = args
        values, dt, shape = plain
        attr_values = []
        out_dt = dtypes.bool_ if op.dtype_rule == "bool" else dt
    else:
        operands, values, attr_values, dt, out_dt, shape = _prepare(op, args, attrs)
    if plain is None and on_cuda(values, op.name, operands):
        if dt.is_complex:  # e.g. cuda_tensor * 1j (Note [complex support]: CPU only for now)
            raise NotImplementedError(f"{op.name}: complex results are not supported on CUDA "
                                      f"yet (dtype {dt.name}); compute on the CPU")
        data = _cuda.elementwise(op.forward, values + attr_values, shape, out_dt.np, dt.np)
    else:
        data = cpu.elementwise(op.forward, values + attr_values, shape, out_dt.np, dt.np,
                               ufunc=op.cpu_ufunc)
    out = Tensor._make(data)
    if not (op.differentiable and out_dt.is_differentiable and is_grad_enabled()):
        return out
    needs = _needs(operands)
    if not any(needs):
        return out
    node = op.node_cls()
    _connect(node, operands, needs, dt if plain is not None else None)
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
    backend = _backend(values, body.__name__.strip("_"))
    return Tensor._make(backend.elementwise(body, values, shape, dtype.np, dtype.np))


class _Ctx:
    """What a composite forward may stash for its backward (copied onto the node)."""


def composite(op, *args, out=None, **attrs):
    """Run a composite registry op: array-level forward, Tensor-level backward.

    ``out``: as for ``elementwise`` (single-output, non-view ops)."""
    if out is not None:
        return _composite_out(op, args, attrs, out)
    if transform_hook is not None:  # Note [transform hooks]
        return transform_hook(_composite, op, args, attrs)
    return _composite(op, *args, **attrs)


def _composite(op, *args, **attrs):
    operands = [tensor_operand(a, op.name) for a in args]
    ctx = _Ctx()
    arrays = [o._data for o in operands]
    if not op.complex_ok:  # Note [complex support]
        for a in arrays:
            if a.dtype.kind == "c":
                raise complex_error(op.name, dtypes.to_dtype(a.dtype))
    if on_cuda(arrays, op.name, operands):
        return _composite_cuda(op, operands, arrays, ctx, attrs)
    result = op.forward(ctx, *arrays, **attrs)
    results = result if isinstance(result, tuple) else (result,)
    outs = [Tensor._make(r if type(r) is np.ndarray or (
        _cuda is not None and isinstance(r, _cuda.CudaArray)) else np.asarray(r))
        for r in results]  # to_device makes CUDA arrays
    return _record_composite(op, operands, arrays, ctx, attrs, outs)


def _composite_cuda(op, operands, arrays, ctx, attrs):
    if op.cuda_forward is None:
        raise NotImplementedError(
            f"{op.name}: no CUDA kernel yet for this op (inputs on {arrays[0].device}, shapes "
            f"{[tuple(a.shape) for a in arrays]}); run it on the CPU with .cpu() and move the "
            "result back with .to(device)")
    result = op.cuda_forward(ctx, *arrays, **attrs)
    results = result if isinstance(result, tuple) else (result,)
    return _record_composite(op, operands, arrays, ctx, attrs, [Tensor._make(r) for r in results])


def shares_memory(a, b) -> bool:
    """Whether two arrays (NumPy or CUDA) may overlap in memory."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.may_share_memory(a, b)
    return getattr(a, "buffer", None) is not None and getattr(a, "buffer", None) is getattr(
        b, "buffer", None)


def _record_composite(op, operands, arrays, ctx, attrs, outs):
    """Views, alias copies and the node of a composite op whose outputs are ``outs``."""
    if op.view:
        base = operands[0]
        d = outs[0]._data
        if getattr(d, "base", None) is base._data or shares_memory(d, base._data):
            track_view(outs[0], base)
    else:
        for o in outs:  # a result aliasing an input would let an in-place op on it write there
            d = o._data
            if getattr(d, "base", d) is None and all(d is not a for a in arrays):
                continue  # a fresh array of its own (the common case)
            if any(d is a or shares_memory(d, a) for a in arrays):
                o._data = d.copy()
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
            if o._data.dtype.kind in "fc":
                o._grad_fn, o._requires_grad, o._output_nr = node, True, nr
        if "result" in op.save:
            node._saved["result"] = SavedTensor(outs[0], is_output=True)
    return outs[0] if op.n_outputs == 1 else tuple(outs)


def track_view(view, base) -> None:
    """Make ``view`` (whose array shares ``base``'s memory) a view of ``base``'s root: shared
    version counter, ``_base``, registration in ``root._views`` (Note [view tracking])."""
    root = base._base if base._base is not None else base
    view._version_counter = base._version_counter
    view._base = root
    view._view_version = base._version_counter.value
    # PyTorch's CreationMeta.NO_GRAD_MODE, inherited by views of such views
    view._view_nograd = not is_grad_enabled() or (base._base is not None and base._view_nograd)
    if root._views is None:
        root._views = weakref.WeakSet()
    root._views.add(view)


# --- writing into existing tensors (out= and in-place ops) ----------------------------------
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
    data = t._data
    if data.dtype.kind == "c":
        raise complex_error("in-place/out= write", dtypes.to_dtype(data.dtype))
    if _cuda is not None and isinstance(data, _cuda.CudaArray):
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
    if _cuda is not None and (isinstance(target, _cuda.CudaArray)
                              or any(isinstance(v, _cuda.CudaArray) for v in values)):
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
    if not isinstance(target, _cuda.CudaArray):
        device = next(v.device for v in values if isinstance(v, _cuda.CudaArray))
        raise RuntimeError(MIXED_DEVICES_MSG.format(device, "cpu", op.name))
    values = list(values) + [target]
    on_cuda(values, op.name)  # one device; a 0-d CPU operand becomes a device scalar
    values.pop()
    direct = not any(
        isinstance(v, _cuda.CudaArray) and v is not target and shares_memory(v, target)
        and (v.shape, v.elem_strides, v.offset) != (target.shape, target.elem_strides,
                                                    target.offset)
        for v in values)
    if direct:
        _cuda.elementwise(op.forward, values + attr_values, shape, target.dtype, dt.np,
                          out=target)
    else:
        tmp = _cuda.elementwise(op.forward, values + attr_values, shape, target.dtype, dt.np)
        _cuda.copy_into(target, tmp)


def _check_out_device(out, result_device: str) -> None:
    if device_of(out._data) != result_device:
        raise RuntimeError(f"Expected out tensor to have device {result_device}, but got "
                           f"{device_of(out._data)} instead")


def _out_tensor(name: str, out, operands) -> None:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (out._requires_grad or any(_needs(operands))):
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
        out._data = _cuda.empty(shape, out._data.dtype, out._data.index)
        return
    out._data = pool.empty(shape, out._data.dtype)


def _elementwise_out(op, args, attrs, out):
    operands, values, attr_values, dt, _, shape = _prepare(op, args, attrs)
    _out_tensor(op.name, out, operands)
    check_cast(np.dtype(bool) if op.dtype_rule == "bool" else dt.np, out._data.dtype)
    _check_out_device(out, next((device_of(v) for v in values if device_of(v) != "cpu"), "cpu"))
    prepare_out(op.name, out, shape)
    compute_into(op, values, attr_values, shape, dt, out._data)
    out._version_counter.bump()
    return out


def _composite_out(op, args, attrs, out):
    if op.view or op.n_outputs != 1:
        raise TypeError(f"{op.name}() does not take an out= argument")
    operands = [tensor_operand(a, op.name) for a in args]
    _out_tensor(op.name, out, operands)
    with no_grad():
        result = composite(op, *operands, **attrs)._data
    write_out(op.name, out, result)
    return out


def write_out(name: str, out, result: np.ndarray) -> None:
    """Copy an already computed ``result`` into ``out`` (the checks of ``elementwise``'s out=)."""
    check_cast(result.dtype, out._data.dtype)
    _check_out_device(out, device_of(result))
    prepare_out(name, out, result.shape)
    if device_of(result) != "cpu":
        _cuda.copy_into(out._data, result)
        out._version_counter.bump()
        return
    np.copyto(out._data, result, casting="unsafe")
    out._version_counter.bump()


def zeros(shape, dtype, device="cpu"):
    if device != "cpu":
        return Tensor._make(cuda_backend().zeros(shape, dtype.np, int(device.split(":")[1])))
    return Tensor._make(pool.zeros(shape, dtype.np))


def copy_data(t):
    """A new Tensor (no history) holding a copy of ``t``'s values in a buffer of its own."""
    return Tensor._make(t._data.copy() if device_of(t._data) != "cpu" else pool.copy(t._data))


def add_into(dst, src) -> None:
    """``dst += src`` on the raw data (no graph, no version bump): gradient accumulation."""
    if device_of(dst._data) != "cpu" or device_of(src._data) != "cpu":
        values = [dst._data, src._data]
        on_cuda(values, "add_")
        _cuda.elementwise(_add, values, dst.shape, dst._data.dtype, out=dst._data)
        return
    np.add(dst._data, src._data, out=dst._data, casting="unsafe")


def _add(a, b):
    return a + b


def full_like(t, value):
    if device_of(t._data) != "cpu":
        return Tensor._make(_cuda.full(t.shape, value, t.dtype.np, t._data.index))
    return Tensor._make(pool.full(t.shape, value, t.dtype.np))
