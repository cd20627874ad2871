"""Tensor: an ndarray plus autograd metadata. Operators and methods are thin calls into ops."""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from . import dtypes
from ._device import Device, Size
from .autograd import api as autograd_api
from .graph import grad_mode
from .graph.node import AccumulateGrad, HookDict, sink_of
from .graph.version import VersionCounter
from .ops import binary, indexing, linalg, reduce, shape, unary
from .ops.core import dispatch
# (declare their rows: their methods are derived below)
from .ops import elementwise_np, nn, npfuncs, nplinalg, roll, scatter, scatter_reduce  # noqa: F401
from .ops import complex as complex_ops  # noqa: F401  (declares real, imag, conj, angle)
from .ops import inplace as _inplace_ops
from .ops.core import methods, upper
from .ops.format import format_tensor

# Note [compile tracing] (jitgrad/compile/trace.py): while jitgrad.compile traces, ``_make``
# calls ``creation_hook(tensor)`` for every tensor made, and ``_host`` (the one accessor of a
# tensor's values for Python: ``item``, ``bool``, ``numpy``, ``tolist``, ``repr``...) calls
# ``host_read_hook(tensor, what)`` before the values leave the graph; None otherwise. Both are
# registered with ``ops/core/upper.py`` (``set_tracing_hooks``), which keeps these globals current.
creation_hook = host_read_hook = None


def _protocols_not_ready(self, *args):
    raise TypeError("NumPy's protocols on jitgrad Tensors are registered by jitgrad._protocols "
                    "when jitgrad is imported: import jitgrad")


#: the handlers of NumPy's dispatch protocols (``__array_ufunc__``, ``__array_function__``,
#: ``__array_namespace__``): ``jitgrad._protocols`` registers them (``set_numpy_protocols``) at
#: import; it builds on ``jitgrad.numpy``, above this module
_numpy_protocols = (_protocols_not_ready,) * 3


def set_numpy_protocols(array_ufunc, array_function, array_namespace) -> None:
    global _numpy_protocols
    _numpy_protocols = (array_ufunc, array_function, array_namespace)

_NON_LEAF_GRAD_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information.")


_dtype_of = dtypes.BY_NUMPY.get
_shape_ops = shape


class Tensor:
    """A multi-dimensional array that records operations for reverse-mode autodiff.

    Storage is a NumPy array (``numpy()`` shares it); views share storage and the version
    counter with their base (``_base``), and in-place ops on either rebase the autograd history
    (docs/views.md). ``requires_grad``, ``grad``, ``grad_fn``, ``is_leaf``, hooks and
    ``backward`` follow PyTorch.
    """

    # _view_version / _view_nograd are set only on views (Note [view tracking], ops/core/recording.py)
    __slots__ = ("_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_counter",
                 "_base", "_grad_acc_ref", "_leaf_hooks", "_post_accumulate_hooks",
                 "_retains_grad", "_views", "_view_version", "_view_nograd", "__weakref__")
    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy ufuncs on Tensors record the graph (``jitgrad._protocols``)."""
        return _numpy_protocols[0](self, ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """NumPy functions on Tensors record the graph (``jitgrad._protocols``)."""
        return _numpy_protocols[1](self, func, types, args, kwargs)

    def __array_namespace__(self, *, api_version=None):
        """The Array API namespace for Tensors: ``jitgrad.numpy``."""
        return _numpy_protocols[2](self, api_version)

    @classmethod
    def _make(cls, data: np.ndarray, requires_grad: bool = False, counter=None) -> "Tensor":
        """A Tensor of ``data`` with no history; ``counter``: the version counter it shares (a
        view's), else a new one."""
        t = object.__new__(cls)
        t._data = data
        t._requires_grad = requires_grad
        t._grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._version_counter = VersionCounter() if counter is None else counter
        t._base = None
        t._grad_acc_ref = None
        t._leaf_hooks = None
        t._post_accumulate_hooks = None
        t._retains_grad = False
        t._views = None  # LiveViews of this base (ops/core/recording.py, ops/inplace.py)
        if creation_hook is not None:  # Note [compile tracing]
            creation_hook(t)
        return t

    @classmethod
    def _from_saved(cls, data, counter, grad_fn, output_nr) -> "Tensor":
        t = cls._make(data, grad_fn is not None, counter)
        t._grad_fn, t._output_nr = grad_fn, output_nr
        return t

    def __init__(self, data=(), *, dtype=None, requires_grad=False):
        from .ops.creation import to_array

        # like torch.Tensor(data): the default float dtype whatever the data (jitgrad.tensor infers)
        src = Tensor._make(to_array(data, dtype if dtype is not None else dtypes.get_default_dtype()))
        for name in Tensor.__slots__[:-1]:
            if hasattr(src, name):
                setattr(self, name, getattr(src, name))
        if requires_grad:
            self.requires_grad = True

    # --- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def size(self, dim=None):
        return Size(self._data.shape) if dim is None else self._data.shape[dim]

    def numel(self) -> int:
        return self._data.size

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    @property
    def dtype(self) -> dtypes.dtype:
        found = _dtype_of(self._data.dtype)  # the supported dtypes: one dict lookup
        return found if found is not None else dtypes.to_dtype(self._data.dtype)

    @property
    def device(self) -> Device:
        """Where the data lives: ``"cpu"`` or ``"cuda:N"`` (a ``str`` with ``type``/``index``)."""
        return Device(dispatch.device_of(self._data))  # device read: device

    @property
    def is_cuda(self) -> bool:
        return dispatch.device_of(self._data) != "cpu"  # device read: device

    @property
    def __cuda_array_interface__(self) -> dict:
        """CUDA Array Interface (v3) of a CUDA tensor's memory, for zero-copy exchange with CuPy,
        PyTorch and Numba kernels; PyTorch's errors for CPU tensors and tensors needing grad."""
        if not self.is_cuda:
            raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: "
                                 f"{self.device} tensor; move it with .cuda() first")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                               "If gradients aren't required, use var.detach() to get Variable "
                               "that doesn't require grad.")
        return self._data.__cuda_array_interface__  # device read: CUDA interface (a pointer)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def stride(self, dim=None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def is_contiguous(self) -> bool:
        return self._data.flags.c_contiguous

    def data_ptr(self) -> int:
        """Address of the first element (views of one storage differ by their offset)."""
        if self.is_cuda:
            return self._data.data_ptr()  # device read: a pointer
        return self._data.__array_interface__["data"][0]  # device read: a pointer

    def storage_offset(self) -> int:
        """Elements between the start of the storage (the base's lowest address) and this
        tensor's first element."""
        if self.is_cuda:
            # Note [cuda storage]: views keep an element offset
            return self._data.offset  # device read: an offset
        root = (self._base if self._base is not None else self)._data  # device read: storage
        low = root.__array_interface__["data"][0] + sum(
            (n - 1) * st for n, st in zip(root.shape, root.strides) if st < 0 and n)
        return (self.data_ptr() - low) // self._data.itemsize

    def _is_view(self) -> bool:
        return self._base is not None

    def _fresh_grad_fn(self):
        """``_grad_fn``, regenerated first when this is a view whose storage was written to
        since (Note [view tracking])."""
        if self._base is not None and self._view_version != self._version_counter.value:
            dispatch.refresh_view(self)
        return self._grad_fn

    @property
    def _version(self) -> int:
        return self._version_counter.value

    # --- autograd metadata ----------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._set_requires_grad(value, "Only Tensors of floating point and complex dtype can "
                                       "require gradients")

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        # PyTorch words the method's error differently from the setter's/constructors'
        return self._set_requires_grad(
            requires_grad, "only Tensors of floating point dtype can require gradients")

    def _set_requires_grad(self, requires_grad: bool, dtype_msg: str) -> "Tensor":
        if self._fresh_grad_fn() is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use "
                    "a computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach().")
            return self
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(dtype_msg)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._fresh_grad_fn() is None

    @property
    def grad_fn(self):
        return self._fresh_grad_fn()

    @property
    def grad(self):
        if self._fresh_grad_fn() is not None and not self._retains_grad and self._grad is None:
            warnings.warn(_NON_LEAF_GRAD_MSG, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: got "
                                   f"{list(value.shape)}, expected {list(self.shape)}")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: got "
                                   f"{value.dtype}, expected {self.dtype}")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def data(self) -> "Tensor":
        """The same storage without autograd history and with its own version counter, like
        PyTorch's ``.data``: writes through it are invisible to the saved-tensor checks (use
        ``detach()`` to keep them)."""
        return Tensor._make(self._data)  # device read: a new tensor over it (creation hook)

    @data.setter
    def data(self, value: "Tensor") -> None:
        """Replace the storage (PyTorch's ``x.data = y``). The tensor stops aliasing its
        base and its views, which keep the old storage."""
        new = value._data if isinstance(value, Tensor) else np.asarray(value)  # device read: .data=
        if self._base is not None:
            if self._base._views is not None:
                self._base._views.discard(self)
            self._base = None
            self._version_counter = VersionCounter()
        if self._views:
            for v in list(self._views):
                v._base = None
            self._views = None
        self._data = new

    def _grad_accumulator(self) -> AccumulateGrad:
        """The leaf's AccumulateGrad, shared by every use of it while a graph holds it."""
        ref = self._grad_acc_ref
        acc = ref() if ref is not None else None
        if acc is None:  # made again whenever the last graph holding it died (a weak reference)
            acc = sink_of(self)
        return acc

    def _accumulate_grad(self, new_grad: "Tensor", owned: bool = False) -> None:
        """Add ``new_grad`` into ``.grad`` (PyTorch's AccumulateGrad rule, also used by
        ``retain_grad`` and ``backward(inputs=...)``).

        The first gradient is stored as a buffer of our own: ``new_grad``'s own array when
        ``owned`` (the engine found nothing else referencing it, Note [owned buffers] in
        graph/node.py) and it has this tensor's shape and dtype and is C-contiguous, else a
        copy (the incoming tensor may be shared with other edges, other leaves or the caller);
        a recorded clone when grad mode is on (``create_graph``). Later ones are added in
        place, or out of place when recording.
        """
        recording = grad_mode.is_grad_enabled()
        if self._grad is None:
            data = new_grad._data  # device read: a gradient stored
            if recording:
                self._grad = unary.clone(new_grad)
            elif (owned and data.shape == self._data.shape and data.dtype == self._data.dtype
                  and data.flags.c_contiguous):
                self._grad = Tensor._make(data)  # no copy: nobody else can see this array
            else:
                # a pooled copy: a fresh np.array faulted in new pages every step (the cost:
                # docs/design.md, 'Measurements behind the code')
                self._grad = dispatch.copy_data(new_grad)
        elif recording:
            self._grad = self._grad + new_grad
        else:
            dispatch.add_into(self._grad, new_grad)
            self._grad._version_counter.bump()

    def _add_in_place(self, other: "Tensor") -> bool:
        """The engine's in-place gradient sum: add ``other`` into this buffer (raw, unrecorded)
        when that is exactly ``self + other``, and say whether it did. Not while a transform is
        active (a dual tensor's tangent must be added too: Note [transform hooks] in
        ops/core/dispatch.py), nor for subclasses (they may define their own ``+``, as in PyTorch)."""
        if (dispatch.transform_hook is not None or type(self) is not Tensor
                or type(other) is not Tensor):
            return False
        a, b = self._data, other._data  # device read: shapes; add_into writes
        # (the arrays' dtypes first: the same object for the same dtype, no property call)
        if a.shape != b.shape or (a.dtype is not b.dtype and self.dtype is not other.dtype):
            return False
        dispatch.add_into(self, other)
        return True

    def detach(self) -> "Tensor":
        """A tensor sharing storage (and version counter) with no autograd history."""
        t = Tensor._make(self._data)  # device read: shared storage (creation hook)
        t._version_counter = self._version_counter
        return t

    def detach_(self) -> "Tensor":
        if self._base is not None and self._fresh_grad_fn() is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn, self._requires_grad, self._output_nr = None, False, 0
        return self

    def retain_grad(self) -> None:
        """Populate ``.grad`` for this non-leaf tensor during backward (a no-op on leaves)."""
        if host_read_hook is not None:
            host_read_hook(self, "Tensor.retain_grad()")
        if self._fresh_grad_fn() is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        ref = weakref.ref(self)

        def retain(grad):
            t = ref()
            if t is not None:
                t._accumulate_grad(grad)

        self._grad_fn._set_retain_grad_hook(self._output_nr, retain)
        self._retains_grad = True

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None`` runs when this tensor's gradient is computed; a
        returned tensor replaces the gradient. Returns a handle with ``remove()``."""
        if host_read_hook is not None:
            host_read_hook(self, "Tensor.register_hook()")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._fresh_grad_fn() is not None:
            return self._grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._leaf_hooks is None:
            self._leaf_hooks = HookDict()
        return self._leaf_hooks.add(hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after the gradient is accumulated into this leaf's ``.grad``."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = HookDict()
        return self._post_accumulate_hooks.add(hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into the ``.grad`` of the leaves (see autograd.backward)."""
        autograd_api.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # --- conversion ----------------------------------------------------------------------
    def _host(self, what: str = "reading Tensor values") -> np.ndarray:
        """The values on the host: the array itself on the CPU, a copy from a CUDA device.

        The one accessor through which Python code reads a tensor's values (``what`` names the
        reader, for jitgrad.compile's message): code outside the ops' kernels never reads
        ``_data`` for its values (``tests/compile/test_host_reads.py``), so a trace sees every
        value that leaves the graph (Note [compile tracing])."""
        if host_read_hook is not None:
            host_read_hook(self, what)
        return self._data.get() if self.is_cuda else self._data  # device read: the accessor itself

    def item(self, *index):
        """The element as a Python number: PyTorch's ``item()`` of a one-element tensor, or
        NumPy's ``item(i)`` / ``item(i, j)`` of a flat or multi-dimensional index."""
        if index:
            return self._host("Tensor.item()").item(*index)
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to "
                               "Scalar")
        return self._host("Tensor.item()").reshape(-1)[0].item()

    def tolist(self):
        return self._host("Tensor.tolist()").tolist()

    def numpy(self, *, force=False) -> np.ndarray:
        """The data as an ndarray sharing memory. For a tensor that requires grad this is a
        read-only view (PyTorch raises instead); writes must go through the Tensor. A CUDA
        tensor raises (PyTorch's message): copy it to the host with ``cpu()`` first."""
        if host_read_hook is not None:
            host_read_hook(self, "Tensor.numpy()")
        if self.is_cuda:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if self._requires_grad and not force:
            view = self._data.view()  # device read: hooked above
            view.flags.writeable = False
            return view
        return self._data  # device read: hooked above

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()  # read-only for a tensor that requires grad, like numpy()
        if dtype is not None and arr.dtype != dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __float__(self):
        if self._data.size != 1:  # PyTorch's ValueError (matplotlib and NumPy catch it)
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.item())

    def __int__(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._host("bool(Tensor)").reshape(-1)[0])

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __repr__(self):
        try:
            self._fresh_grad_fn()
        except RuntimeError:  # a no_grad view whose base was modified: show it as it is
            pass
        return format_tensor(self)

    def __format__(self, spec):
        """PyTorch's: a 0-d tensor formats as its Python number (``f"{loss:10.4f}"``), any
        other tensor as ``str`` (an empty spec only)."""
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __hash__(self):
        return id(self)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __reduce_ex__(self, protocol):
        if self.is_cuda:
            return (_rebuild, (self._host("pickle"), self._requires_grad, str(self.device)))
        return (_rebuild, (self._host("pickle"), self._requires_grad))

    # --- dtype and device conversion -------------------------------------------------------
    def to(self, *args, dtype=None, device=None, non_blocking=False, copy=False):
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)`` (its device and
        dtype), with keywords too. Returns ``self`` when nothing changes (unless ``copy``);
        a device move is recorded (``ToCopyBackward0``: the gradient moves back)."""
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, str) or (isinstance(a, int) and not isinstance(a, bool)):
                device = a
            else:
                dtype = a
        out = self
        if device is not None and Device(device) != self.device:
            out = unary.to_device(out, Device(device))
        if dtype is not None and dtypes.to_dtype(dtype) != out.dtype:
            out = unary.cast(out, dtypes.to_dtype(dtype))
        return out.clone() if copy and out is self else out

    def _cast(self, dtype):
        return unary.cast(self, dtype)

    def type(self, dtype=None):
        return str(self.dtype) if dtype is None else self.to(dtype)

    def float(self):
        return unary.cast(self, dtypes.float32)

    def double(self):
        return unary.cast(self, dtypes.float64)

    def long(self):
        return unary.cast(self, dtypes.int64)

    def int(self):
        return unary.cast(self, dtypes.int32)

    def bool(self):
        return unary.cast(self, dtypes.bool_)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        """A copy on CUDA device ``device`` (default: the current one, ``cuda:0``)."""
        return self.to(Device("cuda" if device is None else device))

    def clone(self):
        return unary.clone(self)

    def contiguous(self):
        return self if self._data.flags.c_contiguous else unary.clone(self)

    def _sum_to_shape(self, shape):
        return reduce.sum_to_shape(self, shape)

    # --- arithmetic -----------------------------------------------------------------------
    # The operators of two-operand rows call the fast path themselves (``binary_operator``:
    # no wrapper frames per call, these are the eager hot path)
    __add__ = __radd__ = dispatch.binary_operator(binary.ADD, binary.add)  # 3 + x: add(x, 3)
    __sub__ = dispatch.binary_operator(binary.SUB, binary.sub)

    def __rsub__(self, other):  # PyTorch: 3 - x records RsubBackward1, 3 / x reciprocal * 3
        if type(other) in (bool, int, float):
            return binary.rsub(self, other)
        return binary.sub(other, self)

    __mul__ = __rmul__ = dispatch.binary_operator(binary.MUL, binary.mul)
    __truediv__ = dispatch.binary_operator(binary.DIV, binary.div)

    def __rtruediv__(self, other):
        if type(other) in (bool, int, float):
            return binary.mul(unary.reciprocal(self), other)
        return binary.div(other, self)

    __pow__ = binary.pow

    def __rpow__(self, other):
        return binary.pow(other, self)

    __matmul__ = linalg.matmul

    def __rmatmul__(self, other):
        return linalg.matmul(other, self)

    __neg__ = unary.neg

    def __pos__(self):
        return self

    def __abs__(self):
        return unary.abs(self)

    def __lt__(self, other):
        return binary.compare("lt", self, other)

    def __le__(self, other):
        return binary.compare("le", self, other)

    def __gt__(self, other):
        return binary.compare("gt", self, other)

    def __ge__(self, other):
        return binary.compare("ge", self, other)

    def __eq__(self, other):
        if other is None:  # PyTorch: a bool, so `if t == None` and `t != None` read as Python
            return False
        return binary.compare("eq", self, other)

    def __ne__(self, other):
        if other is None:
            return True
        return binary.compare("ne", self, other)

    def __and__(self, other):
        return binary.compare("logical_and", self, other)

    def __or__(self, other):
        return binary.compare("logical_or", self, other)

    def __invert__(self):
        if self._data.dtype.kind != "b":
            raise TypeError(f"~ is only supported on bool tensors here, got {self.dtype}")
        return binary.compare("eq", self, False)

    __getitem__ = indexing.getitem

    def __setitem__(self, index, value):
        _inplace_ops.setitem(self, index, value)

    # methods no single row backs: wrappers that pick among rows by their arguments, or compose
    argmax, argmin = reduce.argmax, reduce.argmin
    reshape, narrow, select = _shape_ops.reshape, _shape_ops.narrow, _shape_ops.select

    def flatten(self, start_dim=0, end_dim=-1):
        """PyTorch's ``flatten(start_dim, end_dim)``; a string argument is NumPy's ``order``
        (``'C'`` only)."""
        if isinstance(start_dim, str):
            if start_dim != "C":
                raise NotImplementedError("jitgrad.numpy.reshape: only order='C' is supported")
            return _shape_ops.reshape(self, (-1,))
        return _shape_ops.flatten(self, start_dim, end_dim)
    matmul = linalg.matmul

    @property
    def T(self):
        return shape.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        return shape.transpose(self, -2, -1)

    def expand_as(self, other):
        return shape.expand(self, other.shape)

    def view_as(self, other):
        return shape.view(self, other.shape)

    def reshape_as(self, other):
        return shape.reshape(self, other.shape)

    # in-place operators
    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)


def _rebuild(data, requires_grad, device="cpu"):
    t = Tensor._make(data)
    if device != "cpu":
        t = unary.to_device(t, Device(device))
    t._requires_grad = requires_grad
    return t


# The rows' methods and those the ops declare (Note [tensor methods] in ops/core/methods.py)
methods.install(Tensor)
upper.register_tensor_type(Tensor)  # Note [upper registrations] (ops/core/upper.py)
upper.bind(globals(), "creation_hook", "host_read_hook")
