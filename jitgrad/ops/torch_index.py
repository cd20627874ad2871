"""PyTorch's shape and index functions that jitgrad lacked (issue 35), composed of existing
rows (PyTorch composes them too: ``hstack`` is a ``cat``, ``tensor_split`` slices):

- joins and splits: ``atleast_1d/2d/3d``, ``hstack vstack dstack column_stack row_stack``,
  ``tensor_split hsplit vsplit dsplit``, ``meshgrid``, ``cartesian_prod``, ``block_diag``;
- writes into a copy at computed flat positions (the ``put`` row: ``g`` flows to the input
  where it was not overwritten and to the source where it was written): ``index_copy``,
  ``masked_scatter``, ``diagonal_scatter``, ``select_scatter``, ``slice_scatter``,
  ``diag_embed``, ``diagflat``; ``index_fill`` (``masked_fill``);
- reads: ``masked_select``, ``take_along_dim`` (``take``/``gather``), ``select``,
  ``narrow_copy`` and the ``*_copy`` forms of the views (a ``clone`` of the view);
- ``rot90 fliplr flipud``, ``inner vdot mv``, ``cdist``; ``argwhere``, ``tril_indices``,
  ``triu_indices`` (integer results, no gradient).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from . import binary, extrema, indexing, linalg, npfuncs, reduce as _reduce, scatter, unary
from . import shape as _shape
from .core import dispatch, methods
from .torch_common import constant, host_arrays, tensor


def _tensors(op, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return [tensor(t, op) for t in tensors]


def _atleast(op, ndim, tensors):
    ts = _tensors(op, tensors)
    out = []
    for t in ts:
        if t.ndim < ndim:
            # 0-d -> (1,)*ndim; 1-d (n,) -> (1, n) / (1, n, 1); 2-d (m, n) -> (m, n, 1)
            shape = {0: (1,) * ndim, 1: ((1,) + tuple(t.shape) + (1,))[:ndim] if ndim == 3
                     else (1,) + tuple(t.shape), 2: tuple(t.shape) + (1,)}[t.ndim]
            t = _shape.reshape(t, shape)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    """Each tensor viewed with at least 1 dim (0-d -> (1,)); one tensor in, one out."""
    return _atleast("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    """Each tensor viewed with at least 2 dims ((n,) -> (1, n))."""
    return _atleast("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    """Each tensor viewed with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast("atleast_3d", 3, tensors)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def hstack(tensors):
    """Concatenate along dim 1 (dim 0 for 1-D tensors). Derivative: the slices of ``g``."""
    ts = _as_tuple(atleast_1d(*_tensors("hstack", tensors)))
    return _shape.cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenate along dim 0 after ``atleast_2d`` (1-D tensors become rows)."""
    return _shape.cat(_as_tuple(atleast_2d(*_tensors("vstack", tensors))), 0)


def row_stack(tensors):
    """``vstack`` (PyTorch's alias)."""
    return vstack(tensors)


def dstack(tensors):
    """Concatenate along dim 2 after ``atleast_3d``."""
    return _shape.cat(_as_tuple(atleast_3d(*_tensors("dstack", tensors))), 2)


def column_stack(tensors):
    """1-D and 0-d tensors become columns, then concatenate along dim 1."""
    ts = [(_shape.reshape(t, (-1, 1)) if t.ndim <= 1 else t)
          for t in _tensors("column_stack", tensors)]
    return _shape.cat(ts, 1)


def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` split along ``dim``: into ``n`` nearly equal parts (the first
    ``size % n`` one longer) for an int, or at the given indices (a list or 1-D tensor)."""
    x = tensor(input, "tensor_split")
    d = _shape.wrap_dim("tensor_split", dim, x.ndim)
    size = x.shape[d]
    spec = indices_or_sections
    if isinstance(spec, dispatch.Tensor):
        (a,) = host_arrays("tensor_split", spec)
        spec = int(a) if a.ndim == 0 else [int(v) for v in a]
    if isinstance(spec, (int, np.integer)):
        n = int(spec)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = np.cumsum([0] + [q + 1] * r + [q] * (n - r))
    else:
        bounds = [0] + [int(i) for i in spec] + [size]
    lead = (slice(None),) * d
    return tuple(x[lead + (slice(min(max(lo, 0), size), min(max(hi, lo, 0), size)),)]
                 for lo, hi in zip(bounds[:-1], bounds[1:]))


def _split_n(op, input, spec, dim, min_ndim):
    x = tensor(input, op)
    if x.ndim < min_ndim:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_ndim} dimension, "
                           f"but got a tensor with {x.ndim} dimensions!")
    if isinstance(spec, (int, np.integer)) and x.shape[dim] % int(spec):
        raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {x.shape[dim]} is not divisible by the split_size "
                           f"{spec}!")
    return tensor_split(x, spec, dim)


def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 for 1-D); an int must divide the size."""
    x = tensor(input, "hsplit")
    return _split_n("hsplit", x, indices_or_sections, 0 if x.ndim == 1 else 1, 1)


def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 of a tensor with at least 2 dims."""
    return _split_n("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 of a tensor with at least 3 dims."""
    return _split_n("dsplit", input, indices_or_sections, 2, 3)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-D (or 0-d) tensors: ``indexing="ij"`` (PyTorch's default)
    gives shape ``(n1, n2, ...)``, ``"xy"`` swaps the first two. Each grid is an ``expand``
    view; its gradient is summed back."""
    ts = [_shape.reshape(t, (-1,)) for t in _tensors("meshgrid", tensors)]
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(_shape.expand(_shape.reshape(t, tuple(view)), shape))
    if swap:  # ("xy": the grids of (y, x, ...) with the first two given back in order)
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views; gradients summed back)."""
    ts = _tensors("broadcast_tensors", tensors)
    shape = dispatch.broadcast_shapes("broadcast_tensors", *[tuple(t.shape) for t in ts])
    return tuple(t if tuple(t.shape) == shape else _shape.expand(t, shape) for t in ts)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-D ``input``, one per row (in
    ``itertools.combinations`` order): a gather of ``input``, so the gradient is summed back."""
    import itertools

    x = tensor(input, "combinations")
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(pick(range(x.shape[0]), r)), dtype=np.intp).reshape(-1, r)
    if idx.size == 0:
        return dispatch.zeros((0,) if r else (0,), x._data.dtype, x.device)
    return indexing.take_flat(x, idx)


def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source``'s slices added at ``index`` along ``dim``
    (repeats accumulate): the ``index_add`` row."""
    return scatter.index_add(input, dim, index, source, alpha=alpha)


def cartesian_prod(*tensors):
    """The Cartesian product of 1-D tensors: rows of all combinations (a 1-D tensor for one
    input)."""
    ts = _tensors("cartesian_prod", tensors)
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return _shape.stack([_shape.reshape(g, (-1,)) for g in grids], 1)


def block_diag(*tensors):
    """A block-diagonal matrix of the (at most 2-D) tensors, zeros elsewhere."""
    ts = [(_shape.reshape(t, (1, -1)) if t.ndim < 2 else t)
          for t in _tensors("block_diag", tensors)]
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    cols = sum(t.shape[1] for t in ts)
    dt = dtypes.to_dtype(np.result_type(*[t._data.dtype for t in ts]))
    rows, left = [], 0
    for t in ts:
        pieces = []
        if left:
            pieces.append(dispatch.zeros((t.shape[0], left), dt, t.device))
        pieces.append(unary.cast(t, dt) if t.dtype != dt else t)
        right = cols - left - t.shape[1]
        if right:
            pieces.append(dispatch.zeros((t.shape[0], right), dt, t.device))
        rows.append(_shape.cat(pieces, 1) if len(pieces) > 1 else pieces[0])
        left += t.shape[1]
    return _shape.cat(rows, 0)


# --- writes at computed positions (the put row) ------------------------------------------
def _positions(shape) -> np.ndarray:
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.intp).reshape(shape)


def _put(op, input, pos, src):
    x = tensor(input, op)
    src = tensor(src, op)
    if tuple(src.shape) != pos.shape:
        raise RuntimeError(f"{op}(): expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, slice size = {list(pos.shape)}")
    return indexing.put_flat(x, np.ascontiguousarray(pos), src, unique=True)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written on its diagonal (``diagonal``'s
    arguments). Derivatives: ``g`` off the diagonal, the diagonal of ``g`` for ``src``."""
    x = tensor(input, "diagonal_scatter")
    pos = np.diagonal(_positions(x.shape), offset, dim1, dim2)
    return _put("diagonal_scatter", x, pos, src)


def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim``."""
    x = tensor(input, "select_scatter")
    d = _shape.wrap_dim("select_scatter", dim, x.ndim)
    return _put("select_scatter", x, np.take(_positions(x.shape), index, axis=d), src)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` written at ``start:end:step`` along ``dim``."""
    x = tensor(input, "slice_scatter")
    d = _shape.wrap_dim("slice_scatter", dim, x.ndim)
    pos = _positions(x.shape)[(slice(None),) * d + (slice(start, end, step),)]
    return _put("slice_scatter", x, pos, src)


def _index_vector(op, index):
    idx = scatter.long_index(op, index)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    return idx.reshape(-1)


def index_copy(input, dim, index, source):
    """A copy of ``input`` whose slices ``index[i]`` along ``dim`` are ``source``'s slice
    ``i``. Derivatives: ``g`` outside those slices; ``g.index_select(dim, index)`` for
    ``source``."""
    x = tensor(input, "index_copy")
    d = _shape.wrap_dim("index_copy", dim, max(x.ndim, 1))
    idx = _index_vector("index_copy", index)
    pos = np.take(_positions(x.shape), idx, axis=d) if x.ndim else _positions(()).reshape(())
    return _put("index_copy", x, pos, source)


def index_fill(input, dim, index, value):
    """A copy of ``input`` with ``value`` in the slices ``index`` along ``dim``. Derivative:
    ``g`` outside them (and their sum for a tensor ``value``)."""
    x = tensor(input, "index_fill")
    d = _shape.wrap_dim("index_fill", dim, max(x.ndim, 1))
    mask = np.zeros(x.shape, dtype=bool)
    np.put(mask, np.take(_positions(x.shape), _index_vector("index_fill", index), axis=d)
           if x.ndim else 0, True)
    return scatter.masked_fill(x, mask, value)


def _mask(op, mask, shape):
    (m,) = host_arrays(op, mask)
    if m.dtype.kind != "b":
        raise RuntimeError(f"{op}: expected BoolTensor for mask")
    return m


def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` is True (broadcast together), as a 1-D
    tensor. Derivative: ``g`` scattered back (summed over broadcast copies)."""
    x = tensor(input, "masked_select")
    m = _mask("masked_select", mask, x.shape)
    shape = np.broadcast_shapes(tuple(x.shape), m.shape)
    pos = np.broadcast_to(_positions(x.shape), shape)[np.broadcast_to(m, shape)]
    return indexing.take_flat(x, np.ascontiguousarray(pos))


def masked_scatter(input, mask, source):
    """A copy of ``input`` with the leading elements of ``source`` written, in order, where
    ``mask`` (broadcast to ``input``) is True. Derivatives: ``g`` where the mask is False;
    ``g`` at the written positions for ``source`` (0 for unused elements)."""
    x = tensor(input, "masked_scatter")
    m = np.broadcast_to(_mask("masked_scatter", mask, x.shape), tuple(x.shape))
    pos = np.flatnonzero(m)
    src = _shape.reshape(tensor(source, "masked_scatter"), (-1,))
    if src.shape[0] < pos.size:
        raise RuntimeError(f"masked_scatter: expected source to have at least {pos.size} "
                           f"elements (the number of True mask elements), got {src.shape[0]}")
    return indexing.put_flat(x, pos, src[:pos.size], unique=True)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose ``(dim1, dim2)`` diagonals (at ``offset``) hold the last dim of
    ``input``, zeros elsewhere. Derivative: that diagonal of ``g``."""
    x = tensor(input, "diag_embed")
    n = x.shape[-1] + abs(offset) if x.ndim else 1 + abs(offset)
    ndim = x.ndim + 1
    d1, d2 = (_shape.wrap_dim("diag_embed", dim1, ndim), _shape.wrap_dim("diag_embed", dim2, ndim))
    if d1 == d2:
        raise RuntimeError("diagonal dimensions cannot be identical")
    shape = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    zeros = dispatch.zeros(tuple(shape), x.dtype, x.device)
    return _put("diag_embed", zeros, np.diagonal(_positions(tuple(shape)), offset, d1, d2), x)


def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on its ``offset`` diagonal."""
    x = _shape.reshape(tensor(input, "diagflat"), (-1,))
    return diag_embed(x, offset, 0, 1)


# --- reads ---------------------------------------------------------------------------------
def take_along_dim(input, indices, dim=None):
    """``input`` gathered at ``indices`` along ``dim`` (the two broadcast outside it); with
    ``dim=None`` both are flattened. Derivative: ``g`` added back at the indices."""
    x = tensor(input, "take_along_dim")
    if dim is None:
        return indexing.take(_shape.reshape(x, (-1,)), _shape.reshape(indices, (-1,))
                             if isinstance(indices, dispatch.Tensor) else np.ravel(indices))
    idx = scatter.long_index("take_along_dim", indices)
    d = _shape.wrap_dim("take_along_dim", dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x.ndim} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    xs, ids = list(x.shape), list(idx.shape)
    xs[d] = ids[d] = 1
    common = list(np.broadcast_shapes(tuple(xs), tuple(ids)))
    x_shape = common.copy()
    x_shape[d] = x.shape[d]
    i_shape = common.copy()
    i_shape[d] = idx.shape[d]
    if tuple(x.shape) != tuple(x_shape):
        x = _shape.expand(x, tuple(x_shape))
    idx = np.ascontiguousarray(np.broadcast_to(idx, tuple(i_shape)))
    return scatter.gather(x, d, idx)


def select(input, dim, index):
    """``input[..., index, ...]`` along ``dim`` (a view without that dim)."""
    return _shape.select(tensor(input, "select"), dim, index)


def narrow_copy(input, dim, start, length):
    """A copy of ``narrow(input, dim, start, length)``."""
    return unary.clone(_shape.narrow(tensor(input, "narrow_copy"), dim, start, length))


def _copy_of(view, name):
    def copy(input, *args, **kwargs):
        return unary.clone(view(tensor(input, name), *args, **kwargs))

    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"A copy (own storage) of the view ``{name[:-5]}(input, ...)``."
    return copy


permute_copy = _copy_of(_shape.permute, "permute_copy")
transpose_copy = _copy_of(_shape.transpose, "transpose_copy")
t_copy = _copy_of(_shape.t, "t_copy")
diagonal_copy = _copy_of(_shape.diagonal, "diagonal_copy")
expand_copy = _copy_of(_shape.expand, "expand_copy")
squeeze_copy = _copy_of(_shape.squeeze, "squeeze_copy")
unsqueeze_copy = _copy_of(_shape.unsqueeze, "unsqueeze_copy")
view_copy = _copy_of(_shape.view, "view_copy")
select_copy = _copy_of(_shape.select, "select_copy")
detach_copy = _copy_of(lambda x: x.detach(), "detach_copy")
alias_copy = _copy_of(lambda x: x, "alias_copy")


def _strided_positions(op, x, size, stride, storage_offset):
    """The flat positions ``as_strided(size, stride, storage_offset)`` reads in the storage
    of the contiguous ``x``."""
    data, base = x._data, x._base
    whole = base is None or (type(data) is np.ndarray and base._data.size == data.size
                             and data.ctypes.data == base._data.ctypes.data)
    if not data.flags.c_contiguous or not whole:
        raise RuntimeError(f"{op}(): only contiguous tensors that span their whole storage are "
                           "supported here (their storage is their flattened values); call "
                           ".contiguous() first, or use the view's base")
    size, stride = tuple(int(v) for v in size), tuple(int(v) for v in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({len(stride)} vs "
                           f"{len(size)})")
    offset = int(storage_offset or 0)
    pos = offset + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - i - 1)) * s
                       for i, (n, s) in enumerate(zip(size, stride)))
    pos = np.broadcast_to(np.asarray(pos, dtype=np.intp), size)
    if pos.size and (pos.min() < 0 or pos.max() >= x._data.size):
        raise RuntimeError(f"{op}(): setStorage: sizes {list(size)}, strides {list(stride)}, "
                           f"storage offset {offset} are out of bounds for storage of "
                           f"{x._data.size} elements")
    return np.ascontiguousarray(pos)


def as_strided_copy(input, size, stride, storage_offset=None):
    """A copy of ``input.as_strided(size, stride, storage_offset)``: element ``i`` is the
    storage element ``offset + sum_k i_k stride_k`` (elements may repeat). Derivative: ``g``
    added back at those positions."""
    x = tensor(input, "as_strided_copy")
    pos = _strided_positions("as_strided_copy", x, size, stride, storage_offset)
    return indexing.take_flat(x, pos)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written at the storage positions of
    ``as_strided(size, stride, storage_offset)``."""
    x = tensor(input, "as_strided_scatter")
    pos = _strided_positions("as_strided_scatter", x, size, stride, storage_offset)
    return _put("as_strided_scatter", x, pos, src)


unfold_copy = _copy_of(lambda x, dimension, size, step: x.unfold(dimension, size, step),
                       "unfold_copy")


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """A copy of ``input[start:end:step]`` along ``dim``."""
    x = tensor(input, "slice_copy")
    d = _shape.wrap_dim("slice_copy", dim, x.ndim)
    return unary.clone(x[(slice(None),) * d + (slice(start, end, step),)])


def _copies(parts):
    return tuple(unary.clone(p) for p in parts)


def unbind_copy(input, dim=0):
    """Copies of the slices of ``input`` along ``dim``."""
    x = tensor(input, "unbind_copy")
    return _copies(_shape.select(x, dim, i) for i in range(x.shape[dim]))


def split_copy(input, split_size, dim=0):
    """Copies of ``input.split(split_size, dim)``."""
    return _copies(tensor(input, "split_copy").split(split_size, dim))


def split_with_sizes(input, split_sizes, dim=0):
    """Views of ``input`` of lengths ``split_sizes`` (which must add up to its size) along
    ``dim``."""
    x = tensor(input, "split_with_sizes")
    d = _shape.wrap_dim("split_with_sizes", dim, x.ndim)
    if sum(split_sizes) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{x.shape[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={list(split_sizes)}")
    return tensor_split(x, [int(v) for v in np.cumsum(split_sizes)[:-1]], d)


def split_with_sizes_copy(input, split_sizes, dim=0):
    """Copies of the pieces of ``input`` of lengths ``split_sizes`` along ``dim``."""
    return _copies(split_with_sizes(input, split_sizes, dim))


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first towards the
    second axis), as flips and a transpose."""
    x = tensor(input, "rot90")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    a, b = (_shape.wrap_dim("rot90", d, x.ndim) for d in dims)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and "
                           f"dim1 = {b}")
    k = k % 4
    if k == 1:
        return _shape.transpose(npfuncs.flip(x, (b,)), a, b)
    if k == 2:
        return npfuncs.flip(x, (a, b))
    if k == 3:
        return npfuncs.flip(_shape.transpose(x, a, b), (b,))
    return unary.clone(x)


def fliplr(input):
    """Reverse the columns (dim 1) of a tensor with at least 2 dims."""
    x = tensor(input, "fliplr")
    if x.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return npfuncs.flip(x, (1,))


def flipud(input):
    """Reverse the rows (dim 0) of a tensor with at least 1 dim."""
    x = tensor(input, "flipud")
    if x.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return npfuncs.flip(x, (0,))


def inner(input, other):
    """The sum of products over the last dims: shape ``input.shape[:-1] + other.shape[:-1]``
    (a product with a 0-d operand)."""
    x, y = tensor(input, "inner"), tensor(other, "inner")
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(x.shape)} and {list(y.shape)}")
    n = x.shape[-1]
    out = linalg.matmul(_shape.reshape(x, (-1, n)), _shape.transpose(_shape.reshape(y, (-1, n)),
                                                                     0, 1))
    return _shape.reshape(out, tuple(x.shape[:-1]) + tuple(y.shape[:-1]))


def vdot(input, other):
    """``sum(conj(input) * other)`` of two 1-D tensors."""
    x, y = tensor(input, "vdot"), tensor(other, "vdot")
    if x.ndim != 1 or y.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {x.ndim}D and {y.ndim}D tensors")
    return linalg.dot(x.conj() if x.dtype.is_complex else x, y)


def mv(input, vec):
    """Matrix-vector product of a 2-D ``input`` and a 1-D ``vec``."""
    x, v = tensor(input, "mv"), tensor(vec, "mv")
    if x.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {x.ndim}, {v.ndim}")
    return linalg.matmul(x, v)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """Pairwise ``p``-norm distances between the rows of ``x1`` (``..., P, M``) and ``x2``
    (``..., R, M``): shape ``(..., P, R)``. The gradient is 0 where a distance is 0 (as
    PyTorch), the ``p``-norm's elsewhere."""
    a, b = tensor(x1, "cdist"), tensor(x2, "cdist")
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"cdist only supports at least 2D tensors with the same number of "
                           f"columns, got X1: {list(a.shape)} and X2: {list(b.shape)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = _shape.unsqueeze(a, -2) - _shape.unsqueeze(b, -3)
    if p == 0:
        return _reduce.sum(unary.cast(binary.compare("ne", diff, 0), a.dtype), -1)
    magnitude = unary.abs(diff)
    if p == float("inf"):
        return extrema.amax(magnitude, -1)
    if p == 1:
        return _reduce.sum(magnitude, -1)
    total = _reduce.sum(magnitude ** p, -1)
    positive = total > 0
    safe = binary.where(positive, total, 1.0)
    return binary.where(positive, safe ** (1.0 / p), 0.0)


def argwhere(input):
    """The indices of the nonzero elements, one row each (int64, shape ``(n, ndim)``)."""
    (a,) = host_arrays("argwhere", input)
    return constant(np.argwhere(a).astype(np.int64), input)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, n)`` indices of the lower triangle of a ``row x col`` matrix (``offset``:
    diagonals above the main one included)."""
    r, c = np.tril_indices(row, offset, col)
    return _indices(r, c, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, n)`` indices of the upper triangle of a ``row x col`` matrix."""
    r, c = np.triu_indices(row, offset, col)
    return _indices(r, c, dtype, device)


def _indices(r, c, dtype, device):
    from ..dtypes import to_dtype

    out = np.stack([r, c]).astype(np.int64 if dtype is None else to_dtype(dtype).np)
    t = dispatch.Tensor._make(np.ascontiguousarray(out))
    return t if device is None else t.to(device)


FUNCTIONS = (atleast_1d, atleast_2d, atleast_3d, hstack, vstack, row_stack, dstack, column_stack,
             tensor_split, broadcast_tensors, combinations, index_add, hsplit, vsplit, dsplit,
             meshgrid, cartesian_prod, block_diag, diagonal_scatter, select_scatter, slice_scatter,
             index_copy, index_fill, masked_select, masked_scatter, diag_embed, diagflat,
             take_along_dim, select, narrow_copy, permute_copy, transpose_copy, t_copy,
             diagonal_copy, expand_copy, squeeze_copy, unsqueeze_copy, view_copy, select_copy,
             detach_copy, alias_copy, slice_copy, as_strided_copy, as_strided_scatter, unfold_copy,
             unbind_copy, split_copy, split_with_sizes_copy, rot90, fliplr, flipud, inner, vdot,
             mv, cdist, argwhere, tril_indices, triu_indices)
#: the functions that are also Tensor methods in PyTorch
#: (hsplit, vsplit, dsplit, index_copy, masked_scatter and narrow_copy take other parameter
#: names as methods: ops/torch_extra.py declares those)
METHODS = (tensor_split, diagonal_scatter, select_scatter, slice_scatter, index_fill,
           masked_select, diag_embed, diagflat, take_along_dim, rot90, fliplr, flipud, inner, vdot,
           argwhere, as_strided_scatter)
methods.declare({fn.__name__: fn for fn in METHODS}, __name__)
