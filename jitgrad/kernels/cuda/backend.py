"""The CUDA backend: device arrays and kernels through the ``numba-cuda`` package.

Imported only when a CUDA tensor is first made (``device="cuda"``): importing ``numba.cuda``
is slow (docs/cuda.md, "Measurements behind the device code") and needs the ``jitgrad[cuda]``
extra. With ``NUMBA_ENABLE_CUDASIM=1`` Numba's simulator runs the same kernels on the CPU
(slowly: tests use small sizes).

Note [cuda storage]: a :class:`CudaArray` is PyTorch's storage model: a flat 1-D device buffer
plus ``shape``, element ``strides`` and an element ``offset``. Views (reshape, transpose, basic
indexing, broadcast) are new CudaArrays over the same buffer, so they share memory exactly like
NumPy views do on the CPU, and kernels read any view through its strides (a broadcast operand
has stride 0, nothing is materialised). Only 1-D device arrays ever reach Numba, so the real GPU
and the simulator see the same code.

Elementwise kernels are generated from the op's scalar body, the same function the CPU kernels
are built from (one derivative formula, two targets): the body becomes a CUDA device function
and a grid-stride loop applies it, either flat (every operand contiguous) or through strides.
"""
from __future__ import annotations

import math
import threading

import numpy as np
from numba import config as numba_config
from numba import cuda

from ..rebind import bind

SIMULATOR = bool(numba_config.ENABLE_CUDASIM)
#: threads per block; the simulator runs every thread as a Python thread, so it gets few
THREADS_PER_BLOCK = 4 if SIMULATOR else 256
MAX_BLOCKS = 1 if SIMULATOR else 4096

NUMPY_MSG = ("can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the "
             "tensor to host memory first.")


def is_available() -> bool:
    """True when a CUDA device (or the simulator) can run kernels."""
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver install reports unavailable, like PyTorch
        return False


def device_count() -> int:
    if not is_available():
        return 0
    return len(cuda.gpus)


def synchronize(index: int | None = None) -> None:
    """Wait for every kernel queued on the device to finish."""
    if index is None:
        cuda.synchronize()
        for i in list(_error_flags):
            raise_device_errors(i)
    else:
        with cuda.gpus[index]:
            cuda.synchronize()
        raise_device_errors(index)


# --- device-side asserts -------------------------------------------------------------------
# Note [device asserts]: a kernel cannot raise. One that meets invalid input (an index out of
# range) records an error code in its device's flag (``cuda.atomic.max(flag, 0, code)``) and
# skips the element, so it never reads or writes out of bounds; the host checks the flag when it
# waits for the device anyway (a host read, ``synchronize()``) and raises the op's message there,
# as PyTorch's device-side asserts surface at the next synchronisation. The flag is then cleared,
# so the device stays usable.
_assert_messages = [""]  # code -> message; 0: no error
_error_flags: dict = {}  # device index -> its 1-element int32 device array


def assert_code(message: str) -> int:
    """The error code a kernel records for ``message`` (registered once per message)."""
    if message not in _assert_messages:
        _assert_messages.append(message)
    return _assert_messages.index(message)


def error_flag(index: int = 0):
    """Device ``index``'s error flag (a 1-element int32 device array kernels may set)."""
    flag = _error_flags.get(index)
    if flag is None:
        with cuda.gpus[index]:
            flag = _error_flags[index] = cuda.to_device(np.zeros(1, np.int32))
    return flag


def raise_device_errors(index: int = 0) -> None:
    """Raise (and clear) the error a kernel recorded on device ``index``, if any."""
    flag = _error_flags.get(index)
    if flag is None:
        return
    code = int(flag.copy_to_host()[0])
    if code:
        flag.copy_to_device(np.zeros(1, np.int32))
        raise RuntimeError(f"CUDA error: device-side assert triggered: "
                           f"{_assert_messages[code]}")


def device_name(index: int = 0) -> str:
    with cuda.gpus[index]:
        name = getattr(cuda.get_current_device(), "name", "Numba CUDA simulator")
    return name.decode() if isinstance(name, bytes) else str(name)


def check_index(index: int) -> None:
    count = device_count()
    if count == 0:
        raise RuntimeError("Found no NVIDIA driver on your system (jitgrad.cuda.is_available() is "
                           "False): CUDA tensors need a GPU and the jitgrad[cuda] extra, or "
                           "NUMBA_ENABLE_CUDASIM=1 for the simulator")
    if not 0 <= index < count:
        raise RuntimeError(f"CUDA error: invalid device ordinal: cuda:{index} requested, "
                           f"{count} device(s) available")


class _Flags:
    __slots__ = ("c_contiguous", "writeable")

    def __init__(self, c_contiguous: bool):
        self.c_contiguous = c_contiguous
        self.writeable = True


def contiguous_strides(shape) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


class CudaArray:
    """A strided view of a 1-D device buffer (Note [cuda storage]).

    Quacks like the part of ``np.ndarray`` the Tensor layer reads (``shape``, ``ndim``,
    ``size``, ``dtype``, ``itemsize``, byte ``strides``, ``flags.c_contiguous``), with the
    view methods ops need. ``np.asarray`` on it raises: data moves to the host only through
    :meth:`get` (``Tensor.cpu()``), never implicitly.
    """

    __slots__ = ("buffer", "shape", "elem_strides", "offset", "dtype", "index", "owner",
                 "__weakref__")

    def __init__(self, buffer, shape, elem_strides=None, offset=0, index=0, owner=None):
        self.buffer = buffer
        self.owner = owner  # the pool block (Note [cuda pool]): alive while any view is
        self.shape = tuple(int(n) for n in shape)
        self.elem_strides = (contiguous_strides(self.shape) if elem_strides is None
                             else tuple(int(s) for s in elem_strides))
        self.offset = int(offset)
        self.dtype = np.dtype(buffer.dtype)
        self.index = index

    # --- ndarray-like metadata ---------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def strides(self) -> tuple:
        return tuple(s * self.itemsize for s in self.elem_strides)

    @property
    def device(self) -> str:
        return f"cuda:{self.index}"

    def is_contiguous(self) -> bool:
        return all(n == 1 or s == c for n, s, c in
                   zip(self.shape, self.elem_strides, contiguous_strides(self.shape)))

    @property
    def flags(self) -> _Flags:
        return _Flags(self.is_contiguous())

    def data_ptr(self) -> int:
        return _buffer_ptr(self.buffer) + self.offset * self.itemsize

    @property
    def __cuda_array_interface__(self) -> dict:
        """Zero-copy exchange with CuPy, PyTorch, other Numba kernels (CUDA Array Interface v3)."""
        return {"shape": self.shape, "typestr": self.dtype.str, "version": 3,
                "strides": None if self.is_contiguous() else self.strides,
                "data": (self.data_ptr(), False), "stream": None}

    def __array__(self, dtype=None, copy=None):
        raise TypeError(NUMPY_MSG.format(device=self.device))

    def __repr__(self):
        return f"CudaArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"

    # --- views (share the buffer) --------------------------------------------------------------
    def _view(self, shape, strides, offset) -> "CudaArray":
        return CudaArray(self.buffer, shape, strides, offset, self.index, self.owner)

    def reshape(self, *shape) -> "CudaArray":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = _resolve_shape(shape, self.size)
        src = self if self.is_contiguous() else self.copy()
        return src._view(shape, None, src.offset)

    def transpose(self, *axes) -> "CudaArray":
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        axes = axes or tuple(reversed(range(self.ndim)))
        return self._view([self.shape[a] for a in axes], [self.elem_strides[a] for a in axes],
                          self.offset)

    @property
    def T(self) -> "CudaArray":
        return self.transpose()

    def broadcast_to(self, shape) -> "CudaArray":
        """A read view of ``shape`` repeating size-1 (and missing leading) dimensions."""
        shape = tuple(shape)
        return self._view(shape, broadcast_strides(self.shape, self.elem_strides, shape),
                          self.offset)

    def __getitem__(self, index) -> "CudaArray":
        """Basic indexing (integers, slices with steps, ``None``, ``...``): a view."""
        if not isinstance(index, tuple):
            index = (index,)
        n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
        if any(i is Ellipsis for i in index):
            pos = next(k for k, i in enumerate(index) if i is Ellipsis)
            index = index[:pos] + (slice(None),) * (self.ndim - n_real) + index[pos + 1:]
        else:
            index = index + (slice(None),) * (self.ndim - n_real)
        shape, strides, offset, dim = [], [], self.offset, 0
        for i in index:
            if i is None:
                shape.append(1)
                strides.append(0)
                continue
            n, st = self.shape[dim], self.elem_strides[dim]
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                count = len(range(start, stop, step))
                offset += start * st if count else 0
                shape.append(count)
                strides.append(st * step)
            else:
                k = int(i)
                if not -n <= k < n:
                    raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
                offset += (k % n) * st
            dim += 1
        return self._view(shape, strides, offset)

    # --- copies ----------------------------------------------------------------------------
    def copy(self) -> "CudaArray":
        out = empty(self.shape, self.dtype, self.index)
        copy_into(out, self)
        return out

    def astype(self, dtype, copy=True) -> "CudaArray":
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        out = empty(self.shape, dtype, self.index)
        copy_into(out, self)
        return out

    def get(self) -> np.ndarray:
        """A host copy (synchronises with the device)."""
        src = self if self.is_contiguous() else self.copy()
        host = np.empty(src.size, src.dtype)
        if src.size:
            src.buffer[src.offset:src.offset + src.size].copy_to_host(host)
        raise_device_errors(self.index)  # the device has caught up: report what went wrong
        return host.reshape(src.shape)


def broadcast_strides(shape, strides, target) -> list:
    """The element strides that read an array of ``shape`` and ``strides`` as ``target``
    (NumPy broadcasting: 0 on the missing leading dims and on the size-1 dims stretched)."""
    lead = len(target) - len(shape)
    out = [0] * lead
    for n, st, t in zip(shape, strides, target[lead:]):
        out.append(st if n == t else 0)
    return out


def batch_strides(x: CudaArray, bshape) -> tuple:
    """The strides of matrix stack ``x``'s batch dims (all but the last two) broadcast to the
    batch shape ``bshape``; ``(0,)`` when there are none (a kernel's tuple is never empty)."""
    return tuple(broadcast_strides(x.shape[:-2], x.elem_strides[:-2], tuple(bshape))) or (0,)


def _resolve_shape(shape, size) -> tuple:
    shape = [int(n) for n in shape]
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        shape[shape.index(-1)] = size // known if known else 0
    if math.prod(shape) != size:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {size}")
    return tuple(shape)


def _buffer_ptr(buffer) -> int:
    iface = getattr(buffer, "__cuda_array_interface__", None)
    return iface["data"][0] if iface else 0


# --- allocation: a caching pool per device -------------------------------------------------
# Note [cuda pool]: cudaMalloc/cudaFree synchronise the device and cost far more than a kernel
# launch, so (like PyTorch's caching allocator) freed buffers are kept per device and size class
# (``pool.size_class``: 8 classes per power of two) and handed out again. A ``_Block`` owns one
# device allocation; every CudaArray view of it holds the block, whose ``__del__`` returns the
# allocation to its free list when the last view is gone. Reuse is safe without events because
# every kernel and copy goes to the device's default stream, in order: a later kernel writing a
# reused block runs after the earlier kernels that read it.
_free: dict = {}  # (device index, size class) -> [device byte arrays]
_free_lock = threading.Lock()
_stats = {"allocated_bytes": 0, "cached_bytes": 0, "reuses": 0, "allocations": 0}


class _Block:
    __slots__ = ("raw", "key")

    def __init__(self, raw, key):
        self.raw, self.key = raw, key

    def __del__(self):
        try:
            with _free_lock:
                _free.setdefault(self.key, []).append(self.raw)
                _stats["cached_bytes"] += self.key[1]
        except Exception:  # interpreter shutdown: the driver frees everything anyway
            pass


def _take_block(nbytes: int, index: int) -> _Block:
    from ..cpu.pool import size_class

    key = (index, size_class(max(nbytes, 1)))
    with _free_lock:
        blocks = _free.get(key)
        if blocks:
            _stats["reuses"] += 1
            _stats["cached_bytes"] -= key[1]
            return _Block(blocks.pop(), key)
    with cuda.gpus[index]:
        try:
            raw = cuda.device_array(key[1], dtype=np.uint8)
        except Exception:  # out of memory: give the cache back to the driver and retry once
            empty_cache()
            raw = cuda.device_array(key[1], dtype=np.uint8)
    _stats["allocations"] += 1
    _stats["allocated_bytes"] += key[1]
    return _Block(raw, key)


def empty_cache() -> None:
    """Release every cached (free) block to the driver."""
    with _free_lock:
        for key, blocks in _free.items():
            _stats["allocated_bytes"] -= key[1] * len(blocks)
        _free.clear()
        _stats["cached_bytes"] = 0


def memory_stats() -> dict:
    return dict(_stats)


def empty(shape, dtype, index: int = 0) -> CudaArray:
    shape = tuple(int(n) for n in shape)
    dtype = np.dtype(dtype)
    count = max(math.prod(shape), 1)
    block = _take_block(count * dtype.itemsize, index)
    return CudaArray(block.raw.view(dtype)[:count], shape, index=index, owner=block)


def full(shape, value, dtype, index: int = 0) -> CudaArray:
    out = empty(shape, dtype, index)
    fill(out, value)
    return out


def zeros(shape, dtype, index: int = 0) -> CudaArray:
    return full(shape, 0, dtype, index)


def to_device(host: np.ndarray, index: int = 0) -> CudaArray:
    host = np.asarray(host)
    if not host.flags.c_contiguous:  # (not ascontiguousarray: it makes 0-d arrays 1-d)
        host = host.copy()
    out = empty(host.shape, host.dtype, index)
    if host.size:
        with cuda.gpus[index]:
            out.buffer.copy_to_device(host.reshape(-1))
    return out


def copy_into(dst: CudaArray, src: CudaArray) -> None:
    """``dst[...] = src`` (broadcast, cast to ``dst``'s dtype, any strides)."""
    elementwise(_identity, [src], dst.shape, dst.dtype, out=dst)


def fill(dst: CudaArray, value) -> None:
    elementwise(_identity, [dst.dtype.type(value)], dst.shape, dst.dtype, out=dst)


def _identity(x):
    return x


# --- kernels ------------------------------------------------------------------------------
def _block_tree(sm, v):
    """``_combine`` (bound per copy by ``block_reduce``) of ``v`` over the block's threads."""
    tid = cuda.threadIdx.x
    sm[tid] = v
    cuda.syncthreads()
    s = THREADS_PER_BLOCK // 2
    while s > 0:
        if tid < s:
            sm[tid] = _combine(sm[tid], sm[tid + s])
        cuda.syncthreads()
        s //= 2
    total = sm[0]
    cuda.syncthreads()  # the next reduction may overwrite sm
    return total


def block_reduce(combine, name: str):
    """A device function ``name(sm, v)``: ``v`` of every thread of the block combined by the
    device function ``combine(a, b)`` in a shared-memory tree over ``sm`` (a shared array of
    ``THREADS_PER_BLOCK`` lanes). Every thread of the block must call it; each gets the result.
    The tree's order is fixed, so the result does not depend on timing."""
    return cuda.jit(device=True)(bind(_block_tree, name, _combine=combine))


@cuda.jit(device=True)
def _add(a, b):
    """a + b"""
    return a + b


#: the sum of ``v`` over the block's threads (``block_reduce``)
block_sum = block_reduce(_add, "block_sum")


@cuda.jit(device=True)
def strided_offset(i, shape, strides):
    """Element offset of the C-order flat index ``i`` over ``shape`` in an array with element
    ``strides`` (a device function shared by the strided kernels of every family)."""
    p = 0
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        p += (i % n) * strides[d]
        i //= n
    return p



_kernels: dict = {}
_lock = threading.Lock()


def _launch_config(n: int) -> tuple:
    blocks = min(max((n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, 1), MAX_BLOCKS)
    return blocks, THREADS_PER_BLOCK


def _kernel_source(n_ops: int, modes: str, flat: bool) -> str:
    """A grid-stride loop applying ``body``: mode ``a`` reads an array operand, ``s`` a scalar.
    Flat: every array is contiguous (``a0[i]``); strided: each array brings its element offset
    and strides, and the output index is unravelled over ``shape``."""
    params, reads = ["n", "shape", "out", "out_off", "out_st"], []
    for k, m in enumerate(modes):
        if m == "s":
            params.append(f"a{k}")
            reads.append(f"a{k}")
        else:
            params += [f"a{k}", f"a{k}_off", f"a{k}_st"]
            reads.append(f"a{k}[i]" if flat else f"a{k}[p{k}]")
    lines = [f"def kernel({', '.join(params)}):",
             "    i = cuda.grid(1)",
             "    step = cuda.gridsize(1)",
             "    while i < n:"]
    if flat:
        lines.append(f"        out[i] = body({', '.join(reads)})")
    else:
        arrays = [k for k, m in enumerate(modes) if m == "a"]
        lines += ["        rem = i",
                  "        po = out_off"]
        lines += [f"        p{k} = a{k}_off" for k in arrays]
        lines += ["        for d in range(len(shape) - 1, -1, -1):",
                  "            j = rem % shape[d]",
                  "            rem = rem // shape[d]",
                  "            po += j * out_st[d]"]
        lines += [f"            p{k} += j * a{k}_st[d]" for k in arrays]
        lines.append(f"        out[po] = body({', '.join(reads)})")
    lines.append("        i += step")
    return "\n".join(lines) + "\n"


def _get_kernel(body, modes: str, flat: bool):
    key = (body, modes, flat)
    kern = _kernels.get(key)
    if kern is None:
        with _lock:
            kern = _kernels.get(key)
            if kern is None:
                namespace = {"cuda": cuda, "body": cuda.jit(device=True)(body)}
                exec(compile(_kernel_source(len(modes), modes, flat),
                             f"<jitgrad cuda kernel {body.__name__} {modes}>", "exec"), namespace)
                # where the PTX check (jitgrad.testing.ptx_check) finds this kernel again
                namespace["kernel"].jitgrad_key = ("elementwise", body.__module__,
                                                   body.__qualname__, modes, flat)
                kern = _kernels[key] = cuda.jit(namespace["kernel"])
    return kern


def tag_kernel(fn, factory, *args) -> None:
    """Note where kernel function ``fn`` came from: ``factory(*args)`` returns its dispatcher.
    ``jitgrad.testing.ptx_check`` rebuilds kernels made by factories this way (a module-level
    kernel is found by its name). ``args``: strings, numbers, NumPy dtypes or module-level
    functions."""
    def spec(a):
        if callable(a) and hasattr(a, "__qualname__") and not isinstance(a, type):
            return {"fn": [a.__module__, a.__qualname__]}
        if isinstance(a, (np.dtype, type)):
            return {"dtype": np.dtype(a).str}
        return a

    fn.jitgrad_key = ("factory", factory.__module__, factory.__qualname__,
                      [spec(a) for a in args])


def _flat_buffer(a: CudaArray, n: int):
    return a.buffer[a.offset:a.offset + n]


def elementwise(body, operands, out_shape, out_dtype, compute_dtype=None, out=None):
    """Apply the scalar ``body`` over broadcast ``operands`` (CudaArrays or scalars).

    The CUDA twin of ``kernels.cpu.elementwise.elementwise``: arrays are cast to ``compute_dtype`` when
    given, scalars converted to it (so float32 math stays float32), ``out`` may be any strided
    CudaArray of ``out_shape``. Returns ``out``.
    """
    out_shape = tuple(out_shape)
    if out is None:
        index = next((a.index for a in operands if isinstance(a, CudaArray)), 0)
        out = empty(out_shape, out_dtype, index)
    n = out.size
    if n == 0:
        return out
    cast = np.dtype(compute_dtype).type if compute_dtype is not None else None
    modes, args = [], []
    flat = out.is_contiguous()
    for a in operands:
        if isinstance(a, CudaArray):
            if cast is not None and a.dtype != compute_dtype:
                a = a.astype(compute_dtype)
            if a.shape != out_shape:
                a = a.broadcast_to(out_shape)
            flat = flat and a.is_contiguous()
            modes.append("a")
            args.append(a)
        else:
            modes.append("s")
            args.append(cast(a) if cast is not None else a)
    modes = "".join(modes)
    kern = _get_kernel(body, modes, flat)
    blocks, threads = _launch_config(n)
    if flat:
        call = [n, (n,), _flat_buffer(out, n), 0, (1,)]
        for a, m in zip(args, modes):
            call += [a] if m == "s" else [_flat_buffer(a, n), 0, (1,)]
    else:
        shape = out_shape or (1,)

        def strides(a):
            return a.elem_strides if a.ndim else (0,)

        call = [n, shape, out.buffer, out.offset, strides(out)]
        for a, m in zip(args, modes):
            call += [a] if m == "s" else [a.buffer, a.offset, strides(a)]
    with cuda.gpus[out.index]:
        kern[blocks, threads](*call)
    return out
