"""More of PyTorch's functions jitgrad lacked (issue 35), composed of existing rows:
``clamp_min``/``clamp_max``, ``floor_divide``, ``logical_xor``, ``isneginf``/``isposinf``/
``isreal``, ``equal``, ``msort``, ``ravel``, ``vander``, ``gradient``, ``chain_matmul``,
``pdist``, ``index_reduce``, ``unique_consecutive``, ``unravel_index``, ``histogramdd``,
``view_as_real_copy``/``view_as_complex_copy``, ``asarray``, ``frombuffer``,
``empty_permuted``; and the in-place Tensor methods (``addcmul_``, ``lgamma_``...) of the
torch_* families' functions, each ``x = f(x, ...)`` written into ``x`` by ``ops/inplace.py``'s
``apply_inplace`` (version counter bumped, history rebased as PyTorch's in-place ops).
"""
from __future__ import annotations

import functools
from collections import namedtuple

import numpy as np

from .. import dtypes
from . import binary, creation, indexing, inplace, linalg, scatter, unary
from . import scatter_reduce as _scatter_reduce
from . import shape as _shape
from . import torch_index, torch_math, torch_reduce
from .core import dispatch, methods, upper
from .torch_common import constant, host_arrays, tensor

_operand = tensor  # (unsafe_split's first parameter is PyTorch's ``tensor``)

unique_consecutive_result = namedtuple("unique_consecutive", ["output", "inverse", "counts"])


def clamp_min(input, min):  # noqa: A002 - PyTorch's name
    """``max(input, min)`` (``clamp(input, min=min)``). Derivative: ``g`` where not clamped."""
    return binary.clamp(tensor(input, "clamp_min"), min=min)


def clamp_max(input, max):  # noqa: A002
    """``min(input, max)`` (``clamp(input, max=max)``). Derivative: ``g`` where not clamped."""
    return binary.clamp(tensor(input, "clamp_max"), max=max)


def floor_divide(input, other):
    """``floor(input / other)`` (integers stay integers; PyTorch's current rounding). No
    gradient (piecewise constant)."""
    a, b = host_arrays("floor_divide", input, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.floor_divide(a, b)
    holder = input if isinstance(input, dispatch.Tensor) else other
    return constant(out, holder)


def logical_xor(input, other):
    """``(input != 0) xor (other != 0)`` elementwise (bool, no gradient)."""
    a, b = host_arrays("logical_xor", input, other)
    return constant(np.logical_xor(a, b), input)


def isneginf(input):
    """Where ``input`` is -inf (bool, no gradient)."""
    (a,) = host_arrays("isneginf", input)
    return constant(np.isneginf(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool), input)


def isposinf(input):
    """Where ``input`` is +inf (bool, no gradient)."""
    (a,) = host_arrays("isposinf", input)
    return constant(np.isposinf(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool), input)


def isreal(input):
    """Where the imaginary part is 0 (True everywhere for real tensors; bool)."""
    (a,) = host_arrays("isreal", input)
    return constant(np.isreal(a), input)


def equal(input, other) -> bool:
    """Whether the two tensors have the same shape and elements (a Python bool)."""
    a, b = host_arrays("equal", input, other)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def msort(input):
    """``input`` sorted along dim 0 (ascending, NaN last). Derivative: ``g`` sent back to
    where each element came from (a ``gather``)."""
    x = tensor(input, "msort")
    (a,) = host_arrays("msort", x)
    if x.ndim == 0:
        return unary.clone(x)
    return scatter.gather(x, 0, np.argsort(a, axis=0, kind="stable"))


def ravel(input):
    """``input`` flattened to 1-D (a view when possible)."""
    return _shape.reshape(tensor(input, "ravel"), (-1,))


def vander(x, N=None, increasing=False):  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of the 1-D ``x``: columns ``x^(N-1) ... x^0`` (``increasing``:
    ``x^0 ... x^(N-1)``), built by repeated products (exact gradients, also at 0)."""
    v = tensor(x, "vander")
    if v.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = v.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if v._data.dtype.kind in "biu":
        v = unary.cast(v, dtypes.int64)
    columns = []
    power = None
    for _ in range(n):
        power = dispatch.full_like(v, 1) if power is None else power * v
        columns.append(power)
    if not columns:
        return dispatch.zeros((v.shape[0], 0), v.dtype, v.device)
    out = _shape.stack(columns, 1)
    return out if increasing else torch_index.fliplr(out)


def _edges(y, d, h, edge_order):
    n = y.shape[d]
    take = functools.partial(_shape.narrow, y, d)
    if edge_order == 1 or n < 3:
        return (take(1, 1) - take(0, 1)) / h[0], (take(n - 1, 1) - take(n - 2, 1)) / h[-1]
    first = (-1.5 * take(0, 1) + 2 * take(1, 1) - 0.5 * take(2, 1)) / h[0]
    last = (0.5 * take(n - 3, 1) - 2 * take(n - 2, 1) + 1.5 * take(n - 1, 1)) / h[-1]
    return first, last


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Second-order central differences in the interior and one-sided (``edge_order`` 1 or
    2) differences at the ends, along each of ``dim`` (all dims when None) with uniform
    ``spacing`` (a number, or one per dim): one tensor per dim. Linear in ``input``."""
    y = tensor(input, "gradient")
    dims = list(range(y.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    steps = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(steps) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {len(steps)} and a dim argument of "
                           f"length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, dispatch.Tensor):
            raise NotImplementedError("gradient(): coordinate tensors as spacing are not "
                                      "supported here; pass the (uniform) step as a number")
        d = _shape.wrap_dim("gradient", d, y.ndim)
        n = y.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        first, last = _edges(y, d, (float(h), float(h)), edge_order)
        inner = (_shape.narrow(y, d, 2, n - 2) - _shape.narrow(y, d, 0, n - 2)) / (2.0 * h)
        out.append(_shape.cat([first, inner, last], d))
    return tuple(out)


def chain_matmul(*matrices):
    """The product of the 2-D ``matrices`` from left to right (deprecated in PyTorch for
    ``linalg.multi_dot``)."""
    ms = [tensor(m, "chain_matmul") for m in matrices]
    if not ms:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    return functools.reduce(linalg.matmul, ms)


def pdist(input, p=2.0):
    """The ``p``-norm distances between the rows of the 2-D ``input``, pairs ``i < j`` in row
    order (the upper triangle of ``cdist(input, input)``)."""
    x = tensor(input, "pdist")
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    rows, cols = np.triu_indices(x.shape[0], 1)
    a = indexing.take_flat(x, (rows[:, None] * x.shape[1] + np.arange(x.shape[1])))
    b = indexing.take_flat(x, (cols[:, None] * x.shape[1] + np.arange(x.shape[1])))
    diff = torch_index.cdist(_shape.unsqueeze(a, 1), _shape.unsqueeze(b, 1), p)
    return _shape.reshape(diff, (-1,))


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with ``source``'s slices combined into the slices ``index`` along ``dim``
    by ``reduce`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``; ``include_self``: the
    input's own values take part): ``scatter_reduce`` with the index spread over the slices."""
    x, src = tensor(input, "index_reduce"), tensor(source, "index_reduce")
    d = _shape.wrap_dim("index_reduce", dim, max(x.ndim, 1))
    idx = scatter.long_index("index_reduce", index).reshape(-1)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    view = [1] * src.ndim
    view[d] = idx.size
    spread = np.ascontiguousarray(np.broadcast_to(idx.reshape(view), tuple(src.shape)))
    return _scatter_reduce.scatter_reduce(x, d, spread, src, reduce, include_self=include_self)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The elements (``dim``: the slices) with consecutive repeats collapsed, optionally
    with the inverse indices and the counts. No gradient."""
    (a,) = host_arrays("unique_consecutive", input)
    flat = a.reshape(-1) if dim is None else np.moveaxis(a, dim, 0)
    n = flat.shape[0]
    if n == 0:
        starts = np.zeros(0, dtype=np.int64)
    else:
        same = np.all((flat[1:] == flat[:-1]).reshape(n - 1, -1), axis=1)
        starts = np.flatnonzero(np.concatenate([[True], ~same]))
    output = flat[starts]
    if dim is not None:
        output = np.moveaxis(output, 0, dim)
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    inverse = (np.repeat(np.arange(starts.size), counts).astype(np.int64)
               .reshape(a.shape if dim is None else (n,)))
    out = constant(output, input)
    if not return_inverse and not return_counts:
        return out
    parts = [out]
    if return_inverse:
        parts.append(constant(inverse, input))
    if return_counts:
        parts.append(constant(counts, input))
    return tuple(parts)


def unravel_index(indices, shape):
    """The coordinates of the flat ``indices`` in a tensor of ``shape``: one int64 tensor per
    dim."""
    (a,) = host_arrays("unravel_index", indices)
    if a.dtype.kind not in "iu":
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{dispatch.scalar_type_name(a.dtype)}")
    size = int(np.prod(shape))
    if np.any((a < -size) | (a >= size)):
        raise RuntimeError("index is out of bounds for shape")
    coords = np.unravel_index(np.where(a < 0, a + size, a), tuple(shape))
    return tuple(constant(c.astype(np.int64), indices) for c in coords)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):  # noqa: A002
    """The histogram of the points in the rows of ``input`` (``(..., D)``): ``(hist,
    bin_edges)``, the edges one tensor per dim. No gradient."""
    arrays = host_arrays("histogramdd", input, *(() if weight is None else (weight,)))
    points = arrays[0].reshape(-1, arrays[0].shape[-1])
    if isinstance(bins, dispatch.Tensor) or (isinstance(bins, (list, tuple)) and bins and
                                             isinstance(bins[0], dispatch.Tensor)):
        bins = [host_arrays("histogramdd", b)[0] for b in bins]
    ranges = None if range is None else [tuple(range[i:i + 2]) for i in np.arange(0, len(range), 2)]
    hist, edges = np.histogramdd(points, bins=bins, range=ranges, density=density,
                                 weights=None if weight is None else arrays[1].reshape(-1))
    dt = arrays[0].dtype
    return torch_reduce.histogram_result(constant(hist.astype(dt), input),
                                         tuple(constant(e.astype(dt), input) for e in edges))


def view_as_real_copy(input):
    """A real copy of the complex ``input`` with a last dim of 2 (real, imaginary)."""
    x = tensor(input, "view_as_real_copy")
    if not x.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _shape.stack([torch_math.real(x), torch_math.imag(x)], -1)


def view_as_complex_copy(input):
    """A complex copy of the real ``input`` whose last dim (2) holds (real, imaginary)."""
    x = tensor(input, "view_as_complex_copy")
    if x.ndim == 0 or x.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return torch_math.complex(_shape.select(x, -1, 0), _shape.select(x, -1, 1))


@upper.constant_maker
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor: a tensor of the same dtype and device is returned as it is
    (unless ``copy=True``), anything else converted (copied from NumPy arrays only when
    ``copy=True`` or a cast is needed, as PyTorch shares their memory)."""
    target = None if dtype is None else dtypes.to_dtype(dtype)
    if isinstance(obj, dispatch.Tensor):
        out = obj
        if target is not None and obj.dtype != target:
            out = unary.cast(obj, target)
        elif copy:
            out = unary.clone(obj)
        if device is not None:
            out = out.to(device)
    elif isinstance(obj, np.ndarray) and not copy and (target is None or obj.dtype == target.np):
        out = creation.from_numpy(obj)
        out = out if device is None else out.to(device)
    else:
        out = creation.tensor(obj, dtype=target, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


@upper.constant_maker
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor over the bytes of ``buffer`` (shared memory) read as ``dtype``."""
    array = np.frombuffer(buffer, dtype=dtypes.to_dtype(dtype).np, count=count, offset=offset)
    out = dispatch.Tensor._make(array)
    if requires_grad:
        out.requires_grad_(True)
    return out


@upper.constant_maker
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised (here: zero) tensor of ``size`` whose dims are laid out in memory
    in the order ``physical_layout`` (outermost first)."""
    size = tuple(int(s) for s in size)
    order = tuple(int(d) for d in physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"physical_layout must be a permutation of the dims, got {order}")
    target = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    base = np.zeros(tuple(size[d] for d in order), dtype=target.np)
    out = dispatch.Tensor._make(np.transpose(base, np.argsort(order)))
    if device is not None:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def unsafe_split(tensor, split_size_or_sections, dim=0):
    """``split`` (PyTorch's variant without the view checks; here the same views)."""
    return _operand(tensor, "unsafe_split").split(split_size_or_sections, dim)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` (PyTorch's variant without the view checks; here the same views)."""
    return tensor(input, "unsafe_chunk").chunk(chunks, dim)


FUNCTIONS = (unsafe_split, unsafe_chunk, clamp_min, clamp_max, floor_divide, logical_xor, isneginf,
             isposinf, isreal, equal, msort, ravel, vander, gradient, chain_matmul, pdist,
             index_reduce, unique_consecutive, unravel_index, histogramdd, view_as_real_copy,
             view_as_complex_copy, asarray, frombuffer, empty_permuted)


# --- in-place methods ----------------------------------------------------------------------
def _polygamma_(self, n):
    """In-place ``polygamma``: ``self`` becomes ``polygamma(n, self)``."""
    return inplace.apply_inplace(self, "polygamma_", lambda t: torch_math.polygamma(n, t))


_INPLACE = (torch_math.addcmul, torch_math.addcdiv, torch_math.addmv, torch_math.addr,
            torch_math.addbmm, torch_math.baddbmm, torch_math.bitwise_and,
            torch_math.bitwise_or, torch_math.bitwise_xor, torch_math.bitwise_not,
            torch_math.bitwise_left_shift, torch_math.bitwise_right_shift, torch_math.deg2rad,
            torch_math.rad2deg, torch_math.digamma, torch_math.lgamma, torch_math.erfc,
            torch_math.erfinv, torch_math.i0, torch_math.igamma, torch_math.igammac,
            torch_math.float_power, torch_math.frac, torch_math.gcd, torch_math.lcm,
            torch_math.heaviside, torch_math.ldexp, torch_math.mvlgamma, torch_math.nextafter,
            torch_math.renorm, torch_math.sgn, torch_math.xlogy, torch_math.conj_physical,
            index_reduce, clamp_min, clamp_max, logical_xor, floor_divide)
methods.declare({**{fn.__name__ + "_": inplace.inplace_method(fn.__name__ + "_", fn)
                    for fn in _INPLACE},
                 "polygamma_": _polygamma_}, __name__)
methods.declare({fn.__name__: fn for fn in (clamp_min, clamp_max, logical_xor,
                                             isneginf, isposinf, isreal, equal, msort, index_reduce,
                                             unique_consecutive, unsafe_chunk,
                                             torch_index.split_with_sizes)},
                __name__)
methods.declare({"unsafe_split_with_sizes": torch_index.split_with_sizes}, __name__)


# Tensor methods whose parameters PyTorch names otherwise than its functions'
def _split_method(fn):
    def method(self, split_size_or_sections):
        return fn(self, split_size_or_sections)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = f"``{fn.__name__}(self, split_size_or_sections)``: {fn.__doc__}"
    return method


def _index_copy_method(self, dim, index, tensor2):
    """``index_copy(self, dim, index, tensor2)``: the slices ``index`` along ``dim`` replaced
    by those of ``tensor2``."""
    return torch_index.index_copy(self, dim, index, tensor2)


def _masked_scatter_method(self, mask, tensor):
    """``masked_scatter(self, mask, tensor)``: ``tensor``'s leading elements written where
    ``mask`` holds."""
    return torch_index.masked_scatter(self, mask, tensor)


def _narrow_copy_method(self, dimension, start, length):
    """``narrow_copy(self, dimension, start, length)``: a copy of the narrowed view."""
    return torch_index.narrow_copy(self, dimension, start, length)


def _unsafe_split_method(self, split_size, dim=0):
    """``unsafe_split(self, split_size, dim)``: ``split`` (the same views)."""
    return unsafe_split(self, split_size, dim)


def _floor_divide_method(self, value):
    """``floor_divide(self, value)``: ``floor(self / value)`` (no gradient)."""
    return floor_divide(self, value)


methods.declare({"hsplit": _split_method(torch_index.hsplit),
                 "vsplit": _split_method(torch_index.vsplit),
                 "dsplit": _split_method(torch_index.dsplit),
                 "index_copy": _index_copy_method, "masked_scatter": _masked_scatter_method,
                 "narrow_copy": _narrow_copy_method, "floor_divide": _floor_divide_method,
                 "unsafe_split": _unsafe_split_method},
                __name__)
