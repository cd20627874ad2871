"""PyTorch's functions that no single registry row backs, with PyTorch's names and signatures
(``dim=``, ``keepdim=``, named-tuple results like ``torch.return_types.sort``).

Note [derived surface] (ops/core/registry.py): a function that is one row's is derived from the row
(``export=`` / ``method=``); the functions here each span several rows (a choice among rows by
the arguments, or a composition of them), so they are listed once, here: ``jitgrad/__init__.py``
re-exports ``FUNCTIONS``, and ``METHODS`` are declared in Tensor's method table (Note [tensor
methods] in ops/core/methods.py). Most compose the same
rows as their ``jitgrad.numpy`` counterparts (NumPy's argument names there), so a gradient here
is that of the rows named in each docstring. Non-differentiable functions (``isnan``, ``sort``'s
indices, ``unique``, ``nonzero``) return bool / int64 tensors as PyTorch does.
"""
from __future__ import annotations

import builtins
import math
from collections import namedtuple

import numpy as np

from .ops import binary, checks, elementwise_np, linalg, npfuncs, scatter, shape, unary
from .ops import extrema as _extrema
from .ops.core import dispatch, methods, upper
from .ops.scatter import index_select, masked_fill  # (their rows live in scatter.py)
from .ops.shape import narrow
from .tensor import Tensor

#: ``torch.return_types``: named tuples of (values, indices)
sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])
median_result = namedtuple("median", ["values", "indices"])


def _jnp():
    import jitgrad.numpy as jnp  # (above ops: imported on first use)

    return jnp


def _t(x, op):
    return dispatch.tensor_operand(x, op)


def _host(x):
    return x._host() if isinstance(x, Tensor) else np.asarray(x)


def _index_tensor(idx, like):
    """An int64 index tensor on ``like``'s device."""
    out = Tensor._make(np.array(idx, dtype=np.int64, order="C"))  # (0-d stays 0-d)
    return out if not like.is_cuda else out.to(like.device)


# --- elementwise --------------------------------------------------------------------------
def round(input, *, decimals=0):  # noqa: A001 - PyTorch's name
    """Round half to even: ``decimals == 0`` is the ``rint`` row (RoundBackward0), otherwise
    the scaled ``round`` row (RoundBackward1). Derivative: 0."""
    if decimals == 0:
        return elementwise_np.unary("rint", input)
    return npfuncs.round_(input, decimals)


def square(input):
    """``x * x`` as ``pow(x, 2)`` (PowBackward0). Derivative: ``2 x g``."""
    return binary.pow(_t(input, "square"), 2)


def isnan(input):
    """Where ``x`` is NaN (``x != x``; bool, no gradient)."""
    x = _t(input, "isnan").detach()
    return x != x


def isinf(input):
    """Where ``x`` is +-inf (bool, no gradient)."""
    x = _t(input, "isinf").detach()
    if not x.dtype.is_floating_point:
        return binary.compare("ne", x, x)
    return binary.compare("eq", unary.abs(x), math.inf)


def isfinite(input):
    """Where ``x`` is neither NaN nor +-inf (``x - x == 0``; bool, no gradient)."""
    x = _t(input, "isfinite").detach()
    if not x.dtype.is_floating_point:
        return binary.compare("eq", x, x)
    return binary.compare("eq", x - x, 0.0)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|x - y| <= atol + rtol |y|`` elementwise (bool, no gradient)."""
    return _jnp().isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """Whether ``isclose`` holds everywhere (a Python bool)."""
    return bool(_jnp().allclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan))


def logical_and(input, other):
    """``x != 0 and y != 0`` elementwise (bool, no gradient)."""
    return binary.compare("logical_and", _t(input, "logical_and"), other)


def logical_or(input, other):
    """``x != 0 or y != 0`` elementwise (bool, no gradient)."""
    return binary.compare("logical_or", _t(input, "logical_or"), other)


def logical_not(input):
    """``x == 0`` elementwise (bool, no gradient)."""
    return binary.compare("eq", _t(input, "logical_not"), 0)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +-inf -> ``posinf`` / ``neginf`` (default: the dtype's extremes); the
    gradient passes where ``x`` was finite and is 0 at the replaced elements (a ``where``)."""
    return _jnp().nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


def lerp(input, end, weight):
    """``x + w (end - x)``. Derivatives: ``(1 - w) g``, ``w g`` and ``(end - x) g``."""
    x = _t(input, "lerp")
    return x + weight * (end - x)


# --- reductions ----------------------------------------------------------------------------
def _bool_reduce(input, dim, keepdim, kind):
    """``any``/``all``: NumPy's on the host eagerly; the row while a trace may run (Note
    [value checks] in ops/checks.py), so a compiled program computes it."""
    if upper.tracing() and isinstance(input, Tensor) and not input.is_cuda:
        return checks.bool_reduce(input, dim, keepdim, kind)
    return getattr(_jnp(), kind)(input, axis=dim, keepdims=keepdim)


def any(input, dim=None, keepdim=False):  # noqa: A001
    """Whether some element is nonzero (over ``dim``: an int or a tuple; bool, no gradient)."""
    return _bool_reduce(input, dim, keepdim, "any")


def all(input, dim=None, keepdim=False):  # noqa: A001
    """Whether every element is nonzero (over ``dim``: an int or a tuple; bool, no gradient)."""
    return _bool_reduce(input, dim, keepdim, "all")


def _argsort(d, dim, descending):
    if not descending:
        return np.argsort(d, axis=dim, kind="stable")
    # stable descending: ties keep their order (n - 1 - the reversed stable argsort)
    rev = np.flip(np.argsort(np.flip(d, dim), axis=dim, kind="stable"), dim)
    return d.shape[dim] - 1 - rev


def _dim(x, dim, op):
    return shape.wrap_dim(op, dim, x.ndim)


def argsort(input, dim=-1, descending=False, stable=False):
    """The int64 indices that sort ``x`` along ``dim`` (a stable sort; NaN sorts last). On the
    CPU the ``argsort`` row: a compiled program sorts each call's data."""
    x = _t(input, "argsort")
    if x.ndim == 0:
        return _zero_index(x)
    d = _dim(x, dim, "argsort")
    if not x.is_cuda:
        return _extrema.argsort(x, d, descending)
    return _index_tensor(_argsort(_host(x), d, descending), x)


@upper.constant_maker
def _zero_index(like):
    """The index 0 (0-d int64) on ``like``'s device: the sort of a 0-d tensor."""
    return _index_tensor(np.zeros((), np.int64), like)


def _take(x, d, idx):
    """``x`` at the indices ``idx`` along ``d`` (a permutation's prefix in each slice): the
    ``_take_along_dim`` row on the CPU (the index an input: a compiled program reads it),
    ``gather`` on CUDA. The gradient is scattered back (GatherBackward0)."""
    return scatter.gather(x, d, idx) if x.is_cuda else _extrema.take_along_dim(x, idx, d)


def sort(input, dim=-1, descending=False, stable=False):
    """``(values, indices)`` sorted along ``dim`` (stable; NaN last). The values are a gather
    by the indices (GatherBackward0): the gradient is scattered back to where each came from."""
    x = _t(input, "sort")
    idx = argsort(x, dim, descending)
    if x.ndim == 0:
        return sort_result(unary.clone(x), idx)
    return sort_result(_take(x, _dim(x, dim, "sort"), idx), idx)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their
    indices, in sorted order; the values are a gather (gradient scattered back)."""
    x = _t(input, "topk")
    d = _dim(x, dim, "topk")
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: selected index k ({k}) out of range for dimension {d} of "
                           f"size {n}")
    if x.ndim == 0:
        return topk_result(unary.clone(x), _zero_index(x))
    if x.is_cuda:
        idx = _index_tensor(np.take(_argsort(_host(x), d, largest), np.arange(k), axis=d), x)
    else:  # the first k of the argsort row's indices
        idx = narrow(_extrema.argsort(x, d, largest), d, 0, k)
    return topk_result(_take(x, d, idx), idx)


def median(input, dim=None, keepdim=False):
    """The lower median (of two middle values the smaller, as PyTorch; NaN if any). Without
    ``dim`` a 0-d tensor (TakeBackward0); with ``dim`` the named tuple ``(values, indices)``
    (a gather). The gradient goes to the selected element."""
    x = _t(input, "median")
    d = _host(x)
    if dim is None:
        flat = d.reshape(-1)
        if flat.size == 0:
            return Tensor._make(np.full((), np.nan, d.dtype))
        i = np.argsort(flat, kind="stable")[(flat.size - 1) // 2]
        nan = np.flatnonzero(np.isnan(flat)) if d.dtype.kind in "fc" else ()
        i = nan[0] if len(nan) else i
        return x.take(_index_tensor(np.int64(i), x))
    ax = _dim(x, dim, "median")
    if x.ndim == 0:
        return median_result(unary.clone(x), _index_tensor(np.zeros((), np.int64), x))
    n = d.shape[ax]
    order = np.argsort(d, axis=ax, kind="stable")
    idx = np.take(order, [(n - 1) // 2], axis=ax)
    if d.dtype.kind in "fc":  # NaN sorts last: a slice with a NaN selects its first NaN
        has_nan = np.isnan(d).any(axis=ax, keepdims=True)
        idx = np.where(has_nan, np.argmax(np.isnan(d), axis=ax, keepdims=True), idx)
    it = _index_tensor(idx, x)
    values = scatter.gather(x, ax, it)
    if not keepdim:
        values, it = shape.squeeze(values, ax), shape.squeeze(it, ax)
    return median_result(values, it)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles (``q`` in [0, 1], a float or a 1-d tensor: its values lead the
    result) along ``dim`` (the flattened tensor when None): between the sorted values at
    ``floor(q (n - 1))`` and the next, by ``interpolation`` ('linear', 'lower', 'higher',
    'nearest', 'midpoint'). Gradient: through the sort's gather to the chosen elements."""
    x = _t(input, "quantile")
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"quantile() input tensor must be either float or double dtype, "
                           f"got {x.dtype}")
    qs = np.asarray(_host(q), dtype=np.float64)
    if qs.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    src, ax = (shape.reshape(x, (-1,)), 0) if dim is None else (x, _dim(x, dim, "quantile"))
    s = sort(src, ax).values if src.ndim else shape.reshape(src, (1,))
    n = s.shape[ax]
    outs = []
    for qv in qs.reshape(-1):
        pos = qv * (n - 1)
        lo, hi = int(math.floor(pos)), int(math.ceil(pos))
        if interpolation == "nearest":
            lo = hi = int(np.round(pos))  # (half to even, as PyTorch)
        elif interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        v_lo, v_hi = shape.select(s, ax, lo), shape.select(s, ax, hi)
        frac = 0.5 if interpolation == "midpoint" else pos - lo
        out = v_lo if lo == hi else v_lo + (v_hi - v_lo) * frac
        if keepdim:
            out = shape.unsqueeze(out, ax) if dim is not None else \
                shape.reshape(out, (1,) * x.ndim)
        outs.append(out)
    return outs[0] if qs.ndim == 0 else shape.stack(outs, 0)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm``: ``p='fro'`` (or 2) the 2-norm of the elements (over ``dim``), ``'nuc'``
    the nuclear norm of matrices over ``dim`` (default the last two), a number ``p`` the
    vector p-norm; see ``jitgrad.linalg.vector_norm`` / ``matrix_norm`` for the gradients."""
    from . import linalg as jlinalg

    if p == "nuc":
        return jlinalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else dim,
                                   keepdim=keepdim, dtype=dtype)
    return jlinalg.vector_norm(input, 2 if p == "fro" else p, dim=dim, keepdim=keepdim,
                               dtype=dtype)


def dist(input, other, p=2):
    """``norm(x - y, p)`` over all elements (broadcasting)."""
    from . import linalg as jlinalg

    return jlinalg.vector_norm(_t(input, "dist") - other, p)


# --- shapes and joins ----------------------------------------------------------------------
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend`` / ``append`` joined first):
    ``out_i = x_{i+1} - x_i``; the gradient is a difference of slices of ``g``."""
    x = _t(input, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = shape.cat([_t(p, "diff") for p in parts], dim)
    return _jnp().diff(x, n, dim)


def tril(input, diagonal=0):
    """The lower triangle (``j - i <= diagonal``) of the last two dims, zeros elsewhere; the
    gradient is ``g`` masked the same way."""
    return _jnp().tril(_t(input, "tril"), diagonal)


def triu(input, diagonal=0):
    """The upper triangle (``j - i >= diagonal``) of the last two dims, zeros elsewhere."""
    return _jnp().triu(_t(input, "triu"), diagonal)


def diag(input, diagonal=0):
    """A 1-d ``x``: the square matrix with ``x`` on its ``diagonal``-th diagonal
    (DiagEmbedBackward0); a 2-d ``x``: that diagonal (DiagonalBackward0)."""
    x = _t(input, "diag")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    return _jnp().diag(x, diagonal)


def trace(input):
    """The sum of the main diagonal of a matrix; the gradient is ``g`` on the diagonal."""
    x = _t(input, "trace")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    return _jnp().trace(x)


def outer(input, vec2):
    """``out_ij = x_i y_j`` of two vectors. Derivatives: ``g y``, ``g^T x``."""
    x, y = _t(input, "outer"), _t(vec2, "outer")
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D vectors, got {x.ndim}-D and {y.ndim}-D")
    return _jnp().outer(x, y)


def kron(input, other):
    """The Kronecker product (blocks ``x_ij * y``)."""
    return _jnp().kron(_t(input, "kron"), _t(other, "kron"))


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (None: the first dim of size 3, as
    PyTorch's deprecated default). Derivatives: ``y x g`` and ``g x x``."""
    x, y = _t(input, "cross"), _t(other, "cross")
    if dim is None:
        shp = np.broadcast_shapes(x.shape, y.shape)
        dim = next((i for i, s in enumerate(shp) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"cross: no dimension of size 3 in input (shapes {list(x.shape)}"
                               f" and {list(y.shape)})")
    return _jnp().cross(x, y, axis=dim)


def tensordot(a, b, dims=2):
    """Contract the last ``dims`` dims of ``a`` with the first of ``b`` (or the two lists of
    ``dims``), as an einsum (EinsumBackward0)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    return _jnp().tensordot(_t(a, "tensordot"), _t(b, "tensordot"), axes=dims)


def einsum(equation, *operands):
    """Einstein summation over ``operands`` (also given as one list), EinsumBackward0: each
    operand's gradient is an einsum of ``g`` and the other operands."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _jnp().einsum(equation, *[_t(o, "einsum") for o in operands])


def bmm(input, mat2):
    """Batched matrix product of two 3-d tensors (BmmBackward0)."""
    x, y = _t(input, "bmm"), _t(mat2, "bmm")
    if x.ndim != 3 or y.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors, got {x.ndim}D and {y.ndim}D")
    if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
        raise RuntimeError(f"bmm: Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{x.shape[0]}, {x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}].")
    return linalg.matmul(x, y)


def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive slices along ``dim``: of size ``split_size_or_sections`` (an int;
    the last may be smaller) or of the listed sizes (which must add up to the dim's size)."""
    x = _t(tensor, "split")
    d = _dim(x, dim, "split")
    n = x.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    else:
        size = int(split_size_or_sections)
        if size <= 0 and n:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size="
                               f"{size}")
        sizes = [builtins.min(size, n - s) for s in range(0, n, size)] if n else [0]
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    """At most ``chunks`` views along ``dim`` of ``ceil(n / chunks)`` elements each."""
    x = _t(input, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x.shape[_dim(x, dim, "chunk")]
    return split(x, builtins.max(-(-n // chunks), 1), dim)


def unbind(input, dim=0):
    """The slices ``x.select(dim, i)`` for every ``i`` (views)."""
    x = _t(input, "unbind")
    d = _dim(x, dim, "unbind")
    return tuple(shape.select(x, d, i) for i in range(x.shape[d]))


def tile(input, dims):
    """``x`` repeated ``dims[k]`` times along each dim (leading ones added to the shorter);
    the gradient sums the copies."""
    return _jnp().tile(_t(input, "tile"), tuple(dims))


def repeat(input, *sizes):
    """``Tensor.repeat``: ``x`` tiled ``sizes`` times (``len(sizes) >= x.ndim``)."""
    x = _t(input, "repeat")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return _jnp().tile(x, sizes)


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Each element repeated ``repeats`` times (an int or one count per element) along ``dim``
    (the flattened tensor when None); the gradient sums the copies."""
    x = _t(input, "repeat_interleave")
    r = _host(repeats)
    if dim is None:
        x, dim = shape.reshape(x, (-1,)), 0
    return _jnp().repeat(x, r, axis=_dim(x, dim, "repeat_interleave"))


# --- indices and sets (no gradient) -------------------------------------------------------
def nonzero(input, *, as_tuple=False):
    """The int64 indices of the nonzero elements: ``(count, ndim)``, or one 1-d tensor per dim
    with ``as_tuple``."""
    x = _t(input, "nonzero")
    d = _host(x)
    if as_tuple:
        return tuple(_index_tensor(i, x) for i in np.nonzero(np.atleast_1d(d)))
    return _index_tensor(np.argwhere(d), x)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The sorted distinct values (of slices along ``dim``), with the inverse indices and the
    counts when asked (no gradient, as PyTorch)."""
    x = _t(input, "unique")
    d = _host(x)
    res = np.unique(d, return_inverse=True, return_counts=True, axis=dim)
    values = Tensor._make(np.ascontiguousarray(res[0]))
    values = values.to(x.device) if x.is_cuda else values
    inverse = res[1].reshape(d.shape if dim is None else (d.shape[dim],))
    out = (values,) + ((_index_tensor(inverse, x),) if return_inverse else ()) + \
        ((_index_tensor(res[2], x),) if return_counts else ())
    return out[0] if len(out) == 1 else out


def view_as_real(input):
    """A complex tensor as real pairs ``(..., 2)`` (real, imaginary); the gradient of each
    pair returns as ``g_re + i g_im``. (A copy here, where PyTorch returns a view.)"""
    from .ops import complex as complex_ops

    z = _t(input, "view_as_real")
    if z.dtype.np.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return shape.stack([complex_ops.real(z), complex_ops.imag(z)], -1)


FUNCTIONS = (round, square, isnan, isinf, isfinite, isclose, allclose, logical_and, logical_or,
             logical_not, nan_to_num, lerp, any, all, argsort, sort, topk, median, quantile, norm,
             dist, diff, tril, triu, diag, trace, outer, kron, cross, tensordot, einsum, bmm,
             split, chunk, unbind, tile, repeat_interleave, nonzero, unique, view_as_real,
             index_select, masked_fill, narrow)
_UNSET = object()


def round_method(self, decimals=0):
    """Round half to even to ``decimals`` (positional, as NumPy, or keyword, as PyTorch);
    zero gradient."""
    return round(self, decimals=decimals)


def argsort_method(self, dim=-1, descending=False, stable=False, *, axis=_UNSET, kind=None,
                   order=None):
    """PyTorch's ``argsort(dim, descending, stable)``; NumPy's ``argsort(axis, kind)`` (a
    string second argument is ``kind``; ``axis=None`` sorts the flattened tensor)."""
    if isinstance(descending, str):
        kind, descending = descending, False
    if order is not None:
        raise NotImplementedError("Tensor.argsort: order= (structured arrays) is not covered")
    if axis is not _UNSET or kind is not None or dim is None:
        return _jnp().argsort(self, dim if axis is _UNSET else axis, kind, descending=descending)
    return argsort(self, dim, descending, stable)


round_method.__name__ = round_method.__qualname__ = "round"
argsort_method.__name__ = argsort_method.__qualname__ = "argsort"

#: the Tensor methods among them (PyTorch has no ``Tensor.einsum``, ``tensordot``, ...);
#: ``round`` and ``argsort`` also take NumPy's signatures (Note [tensor methods])
METHODS = tuple(f for f in FUNCTIONS if f not in (
    einsum, tensordot, view_as_real, index_select, masked_fill, narrow, round, argsort)) + (
    repeat, round_method, argsort_method)
methods.declare({fn.__name__: fn for fn in METHODS}, __name__)
