"""Tensor constructors (``tensor``, ``zeros``, ``randn``...) and the global random generator."""
from __future__ import annotations

import json

import numpy as np

from .. import dtypes
from .._device import Device, canonical
from ..graph.grad_mode import is_grad_enabled
from ..kernels.cpu import pool
from .core import dispatch, upper

class Generator:
    """A random number generator (PyTorch's ``torch.Generator``): a seeded NumPy ``PCG64``
    generator. ``manual_seed``/``seed``/``initial_seed`` and ``get_state``/``set_state`` (a
    uint8 tensor) as PyTorch; pass it as ``generator=`` to ``rand``, ``randn``, ``randint``,
    ``randperm``, the in-place random fillers and ``nn.init``. The draws themselves are
    NumPy's (``normal``, ``uniform``, ``integers``... are those of its NumPy generator)."""

    def __init__(self, device="cpu"):
        self.device = Device(canonical(device))
        self.seed()

    def manual_seed(self, seed) -> "Generator":
        """Reseed with ``seed`` (an int); returns the generator."""
        self._initial = int(seed)
        self._np = np.random.default_rng(self._initial)
        return self

    def seed(self) -> int:
        """Reseed from a fresh nondeterministic seed; returns it."""
        seed = int(np.random.SeedSequence().entropy) % (1 << 64)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._initial

    def get_state(self):
        """The generator's state as a uint8 tensor (for ``set_state``)."""
        text = json.dumps(self._np.bit_generator.state).encode()
        return dispatch.Tensor._make(np.frombuffer(text, dtype=np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        """Restore a state ``get_state`` returned."""
        data = new_state._data if isinstance(new_state, dispatch.Tensor) else np.asarray(new_state)
        if data.dtype != np.uint8 or data.ndim != 1:
            raise TypeError("set_state: expected a 1-d uint8 tensor from get_state(), got "
                            f"{data.dtype} of shape {tuple(data.shape)}")
        self._np.bit_generator.state = json.loads(bytes(np.asarray(data)).decode())
        return self

    def numpy_generator(self):
        """The NumPy generator the draws come from."""
        return self._np

    def __getattr__(self, name):
        if name.startswith("_"):  # (no recursion before ``_np`` is set)
            raise AttributeError(name)
        return getattr(self._np, name)  # NumPy's draws: normal, uniform, integers...

    def __repr__(self):
        return f"<jitgrad.Generator device={self.device!s} initial_seed={self._initial}>"


# random tensors made with device="cuda" draw from their own generator (PyTorch keeps one per
# device): ``jitgrad.cuda.manual_seed`` seeds it, ``manual_seed`` seeds both. Samples are drawn
# on the host and copied once to the device.
_rng = default_generator = Generator()
_cuda_rng = Generator()


def manual_seed(seed: int):
    """Seed jitgrad's random generators (``rand``, ``randn``, ``randint``, on every device);
    returns the default generator."""
    _rng.manual_seed(seed)
    cuda_manual_seed(seed)
    return _rng


def cuda_manual_seed(seed: int) -> None:
    """Seed the generator of random tensors made on CUDA devices."""
    _cuda_rng.manual_seed(seed)


def generator(device=None):
    """The generator that random tensors made on ``device`` draw from. Every draw asks for it
    here, so jitgrad.compile's trace is told of each (``upper.random_hook``: Note [compile
    tracing])."""
    if upper.random_hook is not None:
        upper.random_hook()
    return _cuda_rng if device is not None and _device(device) != "cpu" else _rng


def _source(gen, device):
    """``generator=`` when given, else the generator of ``device``."""
    if gen is None:
        return generator(device)
    if upper.random_hook is not None:
        upper.random_hook()
    return gen


def to_array(data, dtype=None) -> np.ndarray:
    """Convert ``data`` to a fresh ndarray following PyTorch/NumPy dtype inference.

    Python floats give the default float dtype, Python ints int64, bools bool; NumPy arrays
    and scalars keep their dtype; a sequence takes the promotion of its elements' dtypes, a
    float one winning over integers (PyTorch's ``infer_scalar_type``). Tensors nested in
    sequences are copied by value, so one that requires grad raises (``refuse_graph_cut``).
    """
    Tensor = dispatch.Tensor
    if isinstance(data, Tensor):
        arr = pool.copy(data._host("tensor"))
    elif holds_tensor(data):
        refuse_graph_cut(data, "tensor()")
        inferred = _infer_dtype(data) if dtype is None else None
        arr = np.array(_tensors_to_lists(data), dtype=inferred)
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.array(data)
    else:
        inferred = _infer_dtype(data) if dtype is None else None
        arr = np.array(data, dtype=inferred)
        if arr.dtype.kind == "f" and dtype is None and inferred is None:  # e.g. []
            arr = arr.astype(dtypes.get_default_dtype().np)
        elif arr.dtype.kind in "iu" and arr.dtype != np.int64 and dtype is None and inferred is None:
            arr = arr.astype(np.int64)
        elif arr.dtype.kind == "c" and dtype is None and inferred is None:  # Python complex
            arr = arr.astype(dtypes.default_complex().np)  # follows the default float, as torch
    checked(arr, "tensor()", data)  # the data's own dtype, as torch (not the one asked for)
    if dtype is not None:
        arr = arr.astype(dtypes.to_dtype(dtype).np, copy=False)
    return arr


def checked(arr: np.ndarray, who: str, data=None) -> np.ndarray:
    """``arr`` itself when jitgrad has a dtype for it; else a TypeError naming the NumPy dtype
    and the supported ones. Every constructor from user data (``tensor``, ``as_tensor``,
    ``from_numpy``, ``Tensor(...)``, ``jitgrad.numpy.array``...) ends here, so a tensor of
    object, string, datetime or structured dtype is never made (its ops would fail later)."""
    try:
        dtypes.to_dtype(arr.dtype)
    except TypeError:
        got = "" if data is None else f"data of type {type(data).__name__}, "
        raise TypeError(f"{who}: could not convert {got}NumPy dtype {arr.dtype} to a tensor; "
                        f"the supported dtypes are {', '.join(_SUPPORTED)}") from None
    return arr


_SUPPORTED = ("float16", "float32", "float64", "complex64", "complex128", "bool", "uint8", "int8",
              "int16", "int32", "int64")


def _infer_dtype(data):
    """The dtype PyTorch infers for nested sequences/scalars, or None to let NumPy decide."""
    if isinstance(data, dispatch.Tensor):
        return data._data.dtype
    if isinstance(data, np.generic):
        return data.dtype
    if isinstance(data, bool):
        return np.dtype(bool)
    if isinstance(data, int):
        return np.dtype(np.int64)
    if isinstance(data, float):
        return dtypes.get_default_dtype().np
    if not isinstance(data, (list, tuple)) or not data:
        return None
    kinds = set(map(type, data))
    if kinds <= {bool, int, float}:  # fast path: plain Python numbers
        return (dtypes.get_default_dtype().np if float in kinds else
                np.dtype(np.int64) if int in kinds else np.dtype(bool))
    result = None
    for d in data:
        dt = _infer_dtype(d)
        if dt is None:
            return None
        if result is None or (dt.kind == "f") != (result.kind == "f"):
            result = dt if result is None or dt.kind == "f" else result  # float beats integers
        else:
            result = np.promote_types(result, dt)
    return result


def _is_container(data) -> bool:
    """A list/tuple, or an object ndarray (which may hold Tensors)."""
    return isinstance(data, (list, tuple)) or (isinstance(data, np.ndarray) and
                                               data.dtype == object)


def _flat(data):
    for d in (data.ravel() if isinstance(data, np.ndarray) else data):
        if _is_container(d):
            yield from _flat(d)
        else:
            yield d


def holds_tensor(data) -> bool:
    """Whether the container ``data`` holds a Tensor at any nesting depth."""
    return _is_container(data) and any(isinstance(d, dispatch.Tensor) for d in _flat(data))


def refuse_graph_cut(data, who: str) -> None:
    """Raise when copying ``data`` by value would cut a Tensor that records the graph.

    ``torch.tensor([x, y])`` copies the values and silently drops ``x``'s graph; jitgrad
    refuses instead (outside ``no_grad``), pointing at the differentiable alternatives."""
    if is_grad_enabled() and any(isinstance(d, dispatch.Tensor) and d.requires_grad
                                 for d in _flat(data)):
        raise RuntimeError(
            f"{who}: the data holds a tensor that requires grad, and {who} copies values, "
            "which would cut it from the graph. Use jitgrad.stack (or jitgrad.numpy.array, "
            "which differentiates through nested lists), or detach() the elements")


def _tensors_to_lists(data):
    if _is_container(data):
        return [_tensors_to_lists(d) for d in data]
    return data.tolist() if isinstance(data, dispatch.Tensor) else data


def stack_nested(data, constant):
    """A Tensor for ``data`` (a Tensor, or lists/tuples/object arrays nesting Tensors,
    numbers and arrays at any depth) that records the graph through every Tensor in it.

    Each level is built element by element and stacked, ``out[i] = element_i``, so the
    derivative sends ``g[i]`` back to element ``i`` (a Tensor in several slots gets the sum).
    The elements of a level must share one shape (ragged data raises ValueError, as NumPy);
    their dtypes are promoted as NumPy promotes arrays. ``constant`` turns a Tensor-free
    element into a constant Tensor (it decides how Python numbers are typed)."""
    from . import shape, unary

    if isinstance(data, dispatch.Tensor):
        return data
    if not holds_tensor(data):
        return constant(data)
    parts = [stack_nested(d, constant) for d in data]
    for i, part in enumerate(parts):
        if part.shape != parts[0].shape:
            raise ValueError(
                "setting an array element with a sequence: the requested array has an "
                f"inhomogeneous shape (entry 0 has shape {tuple(parts[0].shape)}, entry {i} has "
                f"shape {tuple(part.shape)})")
    result = parts[0]._data.dtype
    for part in parts[1:]:
        result = np.promote_types(result, part._data.dtype)
    parts = [part if part._data.dtype == result else unary.cast(part, dtypes.to_dtype(result))
             for part in parts]
    return shape.stack(parts, 0)


def _device(device) -> str:
    from .._device import canonical

    return canonical(device)


_default_device = [None]  # ``set_default_device``: the device of constructors given none


def set_default_device(device) -> None:
    """Make ``device`` (None: the CPU) where constructors given no ``device`` put tensors."""
    _default_device[0] = None if device is None else canonical(device)


def get_default_device():
    """Where constructors given no ``device`` put tensors."""
    return Device(_default_device[0] or "cpu")


def _finish(arr, requires_grad, device=None):
    """A tensor over ``arr``, moved to ``device`` (None: the default device, the CPU unless
    ``set_default_device`` says otherwise)."""
    if device is None:
        device = _default_device[0]
    if device is not None and _device(device) != "cpu":
        arr = dispatch.move(arr, _device(device))
    t = dispatch.Tensor._make(arr)
    if requires_grad:
        t.requires_grad = True
    return t


@upper.constant_maker
def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays or tensors)."""
    return _finish(to_array(data, dtype), requires_grad, device)


@upper.constant_maker
def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with an ndarray (or returns a tensor) when possible."""
    if isinstance(data, dispatch.Tensor):
        return data.to(device=device, dtype=dtype)
    if device is not None and _device(device) != "cpu":
        return tensor(data, dtype, device)
    if isinstance(data, np.ndarray) and (dtype is None or dtypes.to_dtype(dtype).np == data.dtype):
        return dispatch.Tensor._make(checked(data, "as_tensor()"))
    return tensor(data, dtype)


@upper.constant_maker
def from_numpy(ndarray: np.ndarray):
    """A tensor sharing memory with ``array`` (writes through either are seen by both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(ndarray).__name__})")
    return dispatch.Tensor._make(checked(ndarray, "from_numpy()"))




def _size(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"size must be non-negative integers, got {size}")
    return tuple(int(s) for s in size)


def _float(dtype):
    return dtypes.to_dtype(dtype).np if dtype is not None else dtypes.get_default_dtype().np


@upper.constant_maker
def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros (default float dtype)."""
    return _filled(_size(size), 0, _float(dtype), device, requires_grad)


@upper.constant_maker
def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones (default float dtype)."""
    return _filled(_size(size), 1, _float(dtype), device, requires_grad)


@upper.constant_maker
def empty(*size, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor."""
    return _filled(_size(size), None, _float(dtype), device, requires_grad)


@upper.constant_maker
def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """A tensor filled with ``fill_value``; its dtype is inferred from the value like PyTorch."""
    if dtype is None:
        dtype = dtypes.result_type(fill_value)
    size = (size,) if isinstance(size, int) else tuple(size)
    return _filled(_size(size), fill_value, dtypes.to_dtype(dtype).np, device, requires_grad)


@upper.constant_maker
def zeros_like(input, dtype=None, device=None, requires_grad=False):
    return _filled(tuple(input.shape), 0, _like(input, dtype), _like_device(input, device), requires_grad)


@upper.constant_maker
def ones_like(input, dtype=None, device=None, requires_grad=False):
    return _filled(tuple(input.shape), 1, _like(input, dtype), _like_device(input, device), requires_grad)


@upper.constant_maker
def empty_like(input, dtype=None, device=None, requires_grad=False):
    return _filled(tuple(input.shape), None, _like(input, dtype), _like_device(input, device), requires_grad)


@upper.constant_maker
def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    return _filled(tuple(input.shape), fill_value, _like(input, dtype), _like_device(input, device),
                   requires_grad)


def _like_device(t, device):
    """A ``*_like`` result lives where ``t`` does unless ``device`` says otherwise."""
    if device is not None or not isinstance(t, dispatch.Tensor):
        return device
    return t.device


def _filled(shape, value, np_dtype, device, requires_grad):
    """A new tensor of ``shape`` filled with ``value`` (None: uninitialised), made on ``device``
    (None: the default device)."""
    if device is None:
        device = _default_device[0]
    if device is not None and _device(device) != "cpu":
        backend, index = dispatch.cuda_backend(), int(_device(device).split(":")[1])
        backend.check_index(index)
        arr = (backend.empty(shape, np_dtype, index) if value is None
               else backend.full(shape, value, np_dtype, index))
        return _finish(arr, requires_grad)
    arr = (pool.empty(shape, np_dtype) if value is None else pool.zeros(shape, np_dtype)
           if value == 0 else pool.full(shape, value, np_dtype))
    return _finish(arr, requires_grad)


def _like(t, dtype):
    if dtype is not None:
        return dtypes.to_dtype(dtype).np
    return t._data.dtype if isinstance(t, dispatch.Tensor) else np.asarray(t).dtype


@upper.constant_maker
def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a float is given."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = dtypes.result_type(start, end, step)
    return _finish(np.arange(start, end, step, dtype=dtypes.to_dtype(dtype).np), requires_grad,
                   device)


@upper.constant_maker
def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _finish(np.linspace(start, end, int(steps), dtype=_float(dtype)), requires_grad, device)


@upper.constant_maker
def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The identity matrix (``n x m``)."""
    return _finish(np.eye(n, m, dtype=_float(dtype)), requires_grad, device)


@upper.constant_maker
def template(shape, dtype) -> "dispatch.Tensor":
    """A CPU tensor of ``shape`` and ``dtype`` whose values are never read (a read-only
    broadcast zero, no memory): the input of a row that needs only a shape (a random draw)."""
    return dispatch.Tensor._make(np.broadcast_to(np.zeros((), dtype), tuple(shape)))


def row_draw(generator, dtype, device) -> bool:
    """Whether ``rand``/``randn`` with these arguments draw through the random row
    (``random_rows.samples``, which ``jitgrad.compile`` captures): while a trace may run
    (``upper.tracing()``), from the default generator, in a float dtype, on the CPU
    (``device``, else the default device). Both ways draw the same numbers; the direct draw
    costs 4 us, the row 20 us."""
    if not upper.tracing() or generator is not None:
        return False
    if device is None:
        device = _default_device[0]
    return _float(dtype).kind == "f" and (device is None or _device(device) == "cpu")


def size_of(size) -> tuple:
    """The shape a constructor's ``*size`` names (``rand(2, 3)`` or ``rand((2, 3))``), checked."""
    return _size(size)


def float_dtype(dtype) -> np.dtype:
    """The NumPy dtype a float constructor makes (``dtype``, else the default dtype)."""
    return _float(dtype)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1) from ``generator`` (default: the one ``manual_seed`` seeds)."""
    return _finish(_source(generator, device).random(_size(size)).astype(_float(dtype)),
                   requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples from ``generator`` (default: the one ``manual_seed`` seeds)."""
    samples = _source(generator, device).standard_normal(_size(size))
    return _finish(samples.astype(_float(dtype)), requires_grad, device)


def randint(low, high=None, size=(), *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers in ``[low, high)`` (int64), ``randint(high, size)`` drawing from 0."""
    if high is None or isinstance(high, (tuple, list)):  # randint(high, size) overload
        low, high, size = 0, low, size if high is None else high
    dt = dtypes.to_dtype(dtype).np if dtype is not None else np.int64
    return _finish(_source(generator, device).integers(
        low, high, size=_size((size,) if isinstance(size, int) else size), dtype=np.int64
    ).astype(dt), requires_grad, device)

