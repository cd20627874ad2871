"""PyTorch's Tensor methods that no row backs: constructors from a tensor (``new_zeros``...),
metadata queries, in-place forms of out-of-place functions, in-place view changes (``t_``),
the random in-place fillers, ``unfold``/``unflatten``/``sum_to_size``, and the aliases
``swapaxes``/``moveaxis``/``positive``/``ger`` (also top-level functions: ``FUNCTIONS``).

Each is written with existing differentiable ops, so its gradient is theirs; the in-place forms
go through ``ops/inplace.py`` (``apply_inplace``: version counter, leaf and view checks, the
history rebased as PyTorch's). Declared in Tensor's method table (Note [tensor methods]).
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from ._device import Size
from .graph.grad_mode import is_grad_enabled, no_grad
from .ops import binary, creation, inplace, linalg, shape
from .ops.core import dispatch, methods, recording
from .tensor import Tensor


# --- constructors from a tensor: dtype and device follow self --------------------------------
def _like_kwargs(self, dtype, device):
    return {"dtype": self.dtype if dtype is None else dtype,
            "device": self.device if device is None else device}


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor of ``data`` (copied), in ``self``'s dtype and device unless given."""
    if isinstance(data, Tensor):
        data = data.detach()._host()
    return creation.tensor(data, requires_grad=requires_grad,
                           **_like_kwargs(self, dtype, device))


def _sizes(sizes, size) -> tuple:
    """The size given positionally (``new_zeros(2, 3)``, ``new_zeros((2, 3))``) or as
    ``size=``."""
    if size is not None:
        if sizes:
            raise TypeError("new_*(): the size is given twice (positionally and as size=)")
        return (size,) if isinstance(size, int) else tuple(size)
    return sizes


def new_zeros(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    """Zeros of ``size`` in ``self``'s dtype and device unless given."""
    return creation.zeros(*_sizes(sizes, size), requires_grad=requires_grad,
                         **_like_kwargs(self, dtype, device))


def new_ones(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    """Ones of ``size`` in ``self``'s dtype and device unless given."""
    return creation.ones(*_sizes(sizes, size), requires_grad=requires_grad,
                         **_like_kwargs(self, dtype, device))


def new_empty(self, *sizes, size=None, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of ``size`` in ``self``'s dtype and device unless given."""
    return creation.empty(*_sizes(sizes, size), requires_grad=requires_grad,
                         **_like_kwargs(self, dtype, device))


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``fill_value`` everywhere in a tensor of ``size``, ``self``'s dtype and device unless
    given."""
    return creation.full(size, fill_value, requires_grad=requires_grad,
                         **_like_kwargs(self, dtype, device))


def new(self, *args, dtype=None, device=None):
    """PyTorch's legacy constructor: ``new()`` an empty tensor, ``new(2, 3)`` an uninitialised
    one of that size, ``new(data)`` a tensor of ``data``; ``self``'s dtype and device."""
    if not args:
        return new_empty(self, 0, dtype=dtype, device=device)
    if all(isinstance(a, (int, np.integer)) for a in args) or isinstance(args[0], Size):
        return new_empty(self, *args, dtype=dtype, device=device)
    if len(args) != 1:
        raise TypeError("new(): expected sizes (ints) or one sequence of data, got "
                        f"{len(args)} arguments")
    return new_tensor(self, args[0], dtype=dtype, device=device)


# --- metadata ----------------------------------------------------------------------------------
def type_as(self, tensor):
    """``self`` cast to ``tensor``'s dtype (itself when they match)."""
    return self.to(tensor.dtype)


def nelement(self) -> int:
    """The number of elements (``numel``)."""
    return self.numel()


def ndimension(self) -> int:
    """The number of dimensions (``dim``)."""
    return self.dim()


def element_size(self) -> int:
    """The size of one element in bytes."""
    return self.dtype.itemsize


def is_signed(input) -> bool:  # noqa: A002 - PyTorch's name
    """Whether the dtype holds negative values: signed integers, floats, complex."""
    return input.dtype.np.kind in "ifc"


def is_conj(input) -> bool:  # noqa: A002
    """Always False: jitgrad's ``conj`` computes the conjugate (no lazy conjugate bit)."""
    return False


def is_neg(input) -> bool:  # noqa: A002
    """Always False: jitgrad has no lazy negative bit."""
    return False


def resolve_conj(input):  # noqa: A002
    """``input`` itself (no lazy conjugate bit to materialise)."""
    return input


def resolve_neg(input):  # noqa: A002
    """``input`` itself (no lazy negative bit to materialise)."""
    return input


def _is_cpu(self) -> bool:
    return not self.is_cuda


def _output_nr(self) -> int:
    return self._output_nr


def _name(self):
    return None  # (named tensors are out of scope)


def _adjoint(self):
    """The conjugate transpose of the last two dims: ``conj(self).transpose(-2, -1)``."""
    t = shape.transpose(self, -2, -1)
    return t.conj() if self.dtype.is_complex else t


def _h(self):
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.")
    return self if self.ndim == 0 else _adjoint(self)


# --- shape -------------------------------------------------------------------------------------
def sum_to_size(self, *size):
    """``self`` summed over the dims it was broadcast along to reach ``self``'s shape from
    ``size`` (which must be expandable to it). Derivative: ``g`` broadcast back."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    try:
        np.broadcast_shapes(size, self.shape)
        ok = np.broadcast_shapes(size, self.shape) == tuple(self.shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(self.shape)}.")
    return self._sum_to_shape(tuple(size))


def unflatten(self, dim, sizes):
    """Dim ``dim`` split into ``sizes`` (one may be -1): a reshape."""
    d = shape.wrap_dim("unflatten", dim, self.ndim)
    sizes = tuple(sizes)
    return shape.reshape(self, self.shape[:d] + sizes + self.shape[d + 1:])


def unfold(self, dimension, size, step):
    """The windows of ``size`` elements every ``step`` along ``dimension``, as a new last dim:
    shape ``[..., (n - size) // step + 1, ..., size]``. Derivative: each window's ``g`` added
    back where it was read (the windows are ``narrow`` views, stacked)."""
    d = shape.wrap_dim("unfold", dimension, max(self.ndim, 1))
    n = self.shape[d] if self.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    x = self if self.ndim else shape.reshape(self, (1,))
    windows = [shape.narrow(x, d, i * step, size) for i in range((n - size) // step + 1)]
    stacked = shape.stack(windows, d)  # [..., n_windows, size (at d + 1), ...]
    return movedim(stacked, d + 1, -1)


def movedim(input, source, destination):  # noqa: A002 - PyTorch's names
    """Dims ``source`` moved to positions ``destination`` (ints or sequences), the others in
    their order: a ``permute`` view."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    n = input.ndim
    src = [shape.wrap_dim("movedim", s, n) for s in src]
    dst = [shape.wrap_dim("movedim", s, n) for s in dst]
    order = [None] * n
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [next(rest) if o is None else o for o in order]
    return shape.permute(input, *order)


def moveaxis(input, source, destination):  # noqa: A002
    """NumPy's name for ``movedim``."""
    return movedim(input, source, destination)


def swapaxes(input, axis0, axis1):  # noqa: A002
    """NumPy's name for ``transpose(input, axis0, axis1)`` (a view)."""
    return shape.transpose(input, axis0, axis1)


def positive(input):  # noqa: A002
    """``input`` itself (``+input``); refused for bool tensors, as PyTorch."""
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def ger(input, vec2):  # noqa: A002
    """The outer product of two vectors (PyTorch's older name for ``outer``)."""
    return input.outer(vec2)


def adjoint(input):  # noqa: A002
    """The conjugate transpose of the last two dims (a view for real tensors)."""
    return _adjoint(input)


# --- in-place forms ----------------------------------------------------------------------------
def put(input, index, source, accumulate=False):  # noqa: A002
    """``input`` with the elements at flat ``index`` (into the flattened tensor) replaced by
    ``source`` (added with ``accumulate``). Derivatives: ``g`` with the written elements zeroed
    (kept with ``accumulate``) for ``input``; ``g`` at ``index`` for ``source``."""
    flat = shape.reshape(input, (-1,))
    source = shape.reshape(dispatch.tensor_operand(source, "put"), (-1,))
    return shape.reshape(flat.index_put((index,), source, accumulate), input.shape)


def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal (all dims equal, or a 2-d tensor; ``wrap``:
    a tall matrix restarts its diagonal every ``ncols + 1`` rows). Derivative: 0 there."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(self.shape, dtype=bool)
    if self.ndim == 2:
        rows, cols = self.shape
        step = cols + 1
        limit = rows * cols if wrap else min(rows, cols) * cols
        mask.reshape(-1)[:limit:step] = True
    else:
        idx = np.arange(self.shape[0])
        mask[(idx,) * self.ndim] = True
    return self.masked_fill_(Tensor._make(mask).to(self.device), fill_value)


def _become_view(self, view):
    """In place view change (``t_``, ``squeeze_``...): ``self`` takes the shape and strides of
    ``view(self)`` (the same storage) and, when it is recorded, its history (PyTorch refuses
    it on a leaf that requires grad)."""
    if self._requires_grad and self._grad_fn is None and is_grad_enabled():
        raise RuntimeError(inplace.LEAF_MSG)
    v = view(self)
    self._data = v._data  # device read: the view's array becomes self's (no value read)
    if v._grad_fn is not None:
        recording.take_history(self, v._grad_fn, v._output_nr)
    return self


def t_(self):
    """In place ``t()``: ``self`` becomes its transpose (a 0-d or 1-d tensor is unchanged)."""
    return _become_view(self, shape.t)


def transpose_(self, dim0, dim1):
    """In place ``transpose(dim0, dim1)``."""
    return _become_view(self, lambda t: shape.transpose(t, dim0, dim1))


def swapdims_(self, dim0, dim1):
    """In place ``swapdims(dim0, dim1)`` (``transpose_``)."""
    return transpose_(self, dim0, dim1)


def swapaxes_(self, axis0, axis1):
    """In place ``swapaxes(axis0, axis1)`` (``transpose_``)."""
    return transpose_(self, axis0, axis1)


def squeeze_(self, dim=None):
    """In place ``squeeze(dim)``."""
    return _become_view(self, lambda t: shape.squeeze(t, dim))


def unsqueeze_(self, dim):
    """In place ``unsqueeze(dim)``."""
    return _become_view(self, lambda t: shape.unsqueeze(t, dim))


# --- random in-place fillers ---------------------------------------------------------------------
def _fill_random(self, values, generator):
    """Write ``values(rng)`` (a NumPy array of ``self``'s shape) into ``self`` (a ``copy_``:
    zero gradient for the old value; a leaf that requires grad is refused)."""
    rng = generator.numpy_generator() if hasattr(generator, "numpy_generator") else \
        generator if generator is not None else creation.generator(self.device)
    drawn = np.asarray(values(rng, tuple(self.shape)))
    return self.copy_(Tensor._make(drawn.astype(self._data.dtype)).to(self.device))


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill with U(``from``, ``to``) samples (``from`` is PyTorch's keyword)."""
    low = kwargs.pop("from", from_)
    return _fill_random(self, lambda r, s: r.uniform(low, to, s), generator)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with N(``mean``, ``std``**2) samples."""
    return _fill_random(self, lambda r, s: r.normal(mean, std, s), generator)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 Bernoulli(``p``) samples (``p`` a number or a tensor of probabilities)."""
    prob = p._host() if isinstance(p, Tensor) else p
    return _fill_random(self, lambda r, s: r.random(s) < prob, generator)


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exponential(rate ``lambd``) samples."""
    return _fill_random(self, lambda r, s: r.exponential(1.0 / lambd, s), generator)


def geometric_(self, p, *, generator=None):
    """Fill with Geometric(``p``) samples (trials up to the first success, from 1)."""
    return _fill_random(self, lambda r, s: r.geometric(p, s), generator)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with samples of ``exp(N(mean, std**2))``."""
    return _fill_random(self, lambda r, s: r.lognormal(mean, std, s), generator)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(``median``, ``sigma``) samples."""
    return _fill_random(self, lambda r, s: median + sigma * r.standard_cauchy(s), generator)


def random_(self, from_=0, to=None, *, generator=None, **kwargs):
    """Fill with integers uniform in ``[from, to)``; ``random_(to)`` draws from ``[0, to)``;
    no bound: ``[0, 2**mantissa]`` for floats, the dtype's range for integers."""
    low = kwargs.pop("from", from_)
    if to is None and ("from" in kwargs or from_ != 0):
        low, to = 0, low
    if to is None:
        kind = self._data.dtype
        to = (2 ** (np.finfo(kind).nmant + 1) + 1 if kind.kind == "f" else
              2 if kind.kind == "b" else int(np.iinfo(kind).max) + 1)
    return _fill_random(self, lambda r, s: r.integers(low, to, s), generator)


def apply_(self, callable):  # noqa: A002 - PyTorch's name
    """Replace every element ``x`` by ``callable(x)`` (CPU tensors, no autograd; slow)."""
    if self.is_cuda:
        raise TypeError("apply_ is only implemented on CPU tensors")
    if self._requires_grad and is_grad_enabled():
        raise RuntimeError("apply_ can't be used on a tensor that requires grad")
    data = self._data  # device read: apply_ runs Python per element (CPU only, as PyTorch)
    with no_grad():
        for i in np.ndindex(data.shape):
            data[i] = callable(data[i].item())
    self._version_counter.bump()
    return self


def map_(self, tensor, callable):  # noqa: A002
    """``self[i] = callable(self[i], tensor[i])`` elementwise (``tensor`` broadcast to
    ``self``; CPU tensors, no autograd; slow)."""
    if self.is_cuda or tensor.is_cuda:
        raise TypeError("map_ is only implemented on CPU tensors")
    if self._requires_grad and is_grad_enabled():
        raise RuntimeError("map_ can't be used on a tensor that requires grad")
    data = self._data  # device read: map_ runs Python per element (CPU only, like torch)
    other = np.broadcast_to(tensor._host(), data.shape)
    for i in np.ndindex(data.shape):
        data[i] = callable(data[i].item(), other[i].item())
    self._version_counter.bump()
    return self


# --- more of PyTorch's names over existing ops ---------------------------------------------------
def where(self, condition, y):
    """``Tensor.where(condition, y)``: ``self`` where ``condition``, else ``y`` (``jitgrad.where
    (condition, self, y)``)."""
    return binary.where(condition, self, y)


def mm(self, mat2):
    """The matrix product ``self @ mat2`` of two matrices (``jitgrad.mm``)."""
    return linalg.mm(self, mat2)


def mv(self, vec):
    """The matrix-vector product ``self @ vec`` (``self`` 2-d, ``vec`` 1-d)."""
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {vec.ndim}")
    return linalg.matmul(self, vec)


def detach(input):  # noqa: A002
    """``input.detach()``: the same data, no history."""
    return input.detach()


def is_nonzero(input) -> bool:  # noqa: A002
    """Whether a one-element tensor is not zero (``bool(input)``; other sizes raise)."""
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous"
                           if input.numel() == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input)


def is_same_size(self, other) -> bool:
    """Whether ``self`` and ``other`` have the same shape."""
    return tuple(self.shape) == tuple(other.shape)


def dim_order(self, *, ambiguity_check=False) -> tuple:
    """The dims from outermost to innermost in memory (by decreasing stride; ties keep the
    logical order): ``(0, 1, ..., n-1)`` for a contiguous tensor. ``ambiguity_check``: raise
    when two dims of size > 1 have equal strides (the order is then not determined)."""
    strides = self.stride()
    if ambiguity_check:
        seen = [strides[d] for d in range(self.ndim) if self.shape[d] > 1]
        if len(seen) != len(set(seen)):
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def resize_(self, *sizes):
    """Change the shape to ``sizes`` in place: the same elements in order when the number
    matches, else new storage keeping the first elements (the rest uninitialised, zeros here).
    Refused on a tensor that requires grad, as PyTorch."""
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    n = int(np.prod(sizes, dtype=np.int64))
    flat = self._host().reshape(-1)
    data = np.zeros(n, dtype=flat.dtype)
    data[:min(n, flat.size)] = flat[:min(n, flat.size)]
    moved = Tensor._make(data.reshape(sizes)).to(self.device)
    self._data = moved._data  # device read: the resized array becomes self's
    self._version_counter.bump()
    return self


def _method_call(name):
    """``t.<name>(...)``, looked up when called (the method may be installed later)."""
    def call(t, *args, **kwargs):
        return getattr(t, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _cast_method(name, dtype):
    def method(self):
        return self.to(dtype)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``self`` cast to {dtype!r} (itself when it has that dtype)."
    return method


#: also top-level functions
FUNCTIONS = (movedim, moveaxis, swapaxes, positive, ger, adjoint, is_signed, is_conj, is_neg,
             resolve_conj, resolve_neg, detach, unflatten)

methods.declare({
    "new_tensor": new_tensor, "new_zeros": new_zeros, "new_ones": new_ones,
    "new_empty": new_empty, "new_full": new_full, "new": new, "type_as": type_as,
    "nelement": nelement, "ndimension": ndimension, "element_size": element_size,
    "is_signed": is_signed, "is_conj": is_conj, "is_neg": is_neg, "resolve_conj": resolve_conj,
    "resolve_neg": resolve_neg, "is_cpu": property(_is_cpu), "output_nr": property(_output_nr),
    "name": property(_name), "H": property(_h), "mH": property(_adjoint), "adjoint": adjoint,
    "sum_to_size": sum_to_size, "unflatten": unflatten, "unfold": unfold, "movedim": movedim,
    "moveaxis": moveaxis, "swapaxes": swapaxes, "positive": positive, "ger": ger, "put": put,
    "put_": inplace.inplace_method("put_", put), "fill_diagonal_": fill_diagonal_,
    "tril_": inplace.inplace_method("tril_", _method_call("tril")),
    "triu_": inplace.inplace_method("triu_", _method_call("triu")),
    "index_fill_": inplace.inplace_method("index_fill_", _method_call("index_fill")),
    "index_copy_": inplace.inplace_method("index_copy_", _method_call("index_copy")),
    "masked_scatter_": inplace.inplace_method("masked_scatter_", _method_call("masked_scatter")),
    "t_": t_, "transpose_": transpose_, "swapdims_": swapdims_, "swapaxes_": swapaxes_,
    "squeeze_": squeeze_, "unsqueeze_": unsqueeze_,
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_,
    "exponential_": exponential_, "geometric_": geometric_, "log_normal_": log_normal_,
    "cauchy_": cauchy_, "random_": random_, "apply_": apply_, "map_": map_,
    "where": where, "mm": mm, "mv": mv, "is_nonzero": is_nonzero,
    "is_same_size": is_same_size, "dim_order": dim_order, "resize_": resize_,
    "byte": _cast_method("byte", dtypes.uint8), "char": _cast_method("char", dtypes.int8),
    "short": _cast_method("short", dtypes.int16),
    "cfloat": _cast_method("cfloat", dtypes.complex64),
    "cdouble": _cast_method("cdouble", dtypes.complex128),
    **{name + "_": inplace.inplace_method(name + "_", _method_call(name)) for name in (
        "addmm", "cumsum", "cumprod", "lerp", "logical_and", "logical_or", "logical_not",
        "nan_to_num", "round", "square")}}, __name__)
