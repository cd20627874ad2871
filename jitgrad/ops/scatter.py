"""Index-driven reads and writes along a dim, PyTorch's: ``masked_fill``, ``index_select`` /
``index_add``, ``gather`` / ``scatter_add``.

Each writing op has a *writer* ``(ctx, out, *others, **attrs)`` that updates ``out`` in place;
the out-of-place op runs it on a copy and the in-place method (``ops/inplace.py``) on the
tensor's own storage. The pairs are each other's derivatives (``index_select`` <->
``index_add``, ``gather`` <-> ``scatter_add``), so gradients of any order are recorded with
Tensor ops.
"""
from __future__ import annotations

import numpy as np

from ..kernels.cpu import pool
from .core import dispatch, upper
from . import scatter_cuda
from . import shape as _shape
from .index_common import batch_all, copy_array, host_index, index_kernels, positions
from .indexing import put_flat
from .core.registry import LINEAR, def_composite, public
from .shape import wrap_dim


def _tensor(x, name):
    return dispatch.tensor_operand(x, name)


def long_index(name: str, index, what="index") -> np.ndarray:
    # a CUDA index tensor comes to the host (a sync): it is validated there (host_index)
    if isinstance(index, dispatch.Tensor):
        upper.host_read(index, f"{name}() with a tensor {what}")
        a = host_index(index._data)
    else:
        a = np.asarray(index)
    if a.dtype.kind not in "iu":
        if a.size == 0 and a.dtype.kind == "f":
            return a.astype(np.intp)
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for {what} but got: "
                           f"{dispatch.scalar_type_name(a.dtype)}")
    return a.astype(np.intp, copy=False)


# --- masked_fill ---------------------------------------------------------------------------
def _masked_fill_write(ctx, out, *value, mask, fill=None):
    if dispatch.device_of(out) != "cpu":
        return _masked_fill_write_cuda(ctx, out, value[0] if value else fill, mask)
    np.copyto(out, value[0] if value else fill, where=mask, casting="unsafe")
    return out


def _select(m, v, x):
    """``v`` where the mask ``m`` is set, else ``x`` (masked_fill's CUDA body)."""
    return v if m else x


def _masked_fill_write_cuda(ctx, out, value, mask):
    """``out = where(mask, value, out)`` in one elementwise kernel; a host mask is uploaded
    once and kept (``ctx.mask``) for the backward, which runs on the device too."""
    be = dispatch.cuda_backend()
    if not isinstance(mask, be.CudaArray):
        mask = be.to_device(np.asarray(mask), out.index)
    if not isinstance(value, be.CudaArray):
        value = out.dtype.type(value)  # cast like NumPy's unsafe copyto
    ctx.mask = mask
    be.elementwise(_select, [mask, value, out], out.shape, out.dtype, out=out)
    return out


def _masked_fill_fwd(ctx, x, *value, mask, fill=None):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    if dispatch.device_of(x) != "cpu":
        out = dispatch.cuda_backend().empty(shape, x.dtype, x.index)
        dispatch.cuda_backend().copy_into(out, x)
    else:
        out = pool.empty(shape, x.dtype)
        np.copyto(out, x)
    return _masked_fill_write(ctx, out, *value, mask=mask, fill=fill)


def _masked_fill_back(ctx, g):
    from .binary import where

    mask = dispatch.Tensor._make(ctx.mask)
    gx = where(mask, 0.0, g) if ctx.needs_input_grad[0] else None
    if len(ctx.needs_input_grad) == 1:
        return (gx,)
    return gx, (where(mask, g, 0.0) if ctx.needs_input_grad[1] else None)


# forward mode (autograd/forward_ad.py): the rows below are all linear in their tensor inputs
# but masked_fill(scalar)
def _masked_fill_jvp(tangents, primals, outs, mask, fill=None):
    if tangents[0] is None:
        return dispatch.zeros(outs[0].shape, outs[0].dtype, outs[0].device)
    return dispatch.composite(MASKED_FILL, tangents[0], mask=mask, fill=0)  # filled: constant


# Batch rules (vmap, func/_batching.py): the batch is dim 0 of every batched input; `dim`
# moves up by one, and index arrays (the same for every example) are repeated per example
# (``batch_all``, from ops/index_common.py: every argument batched, the unbatched ones expanded).
def per_example(index: np.ndarray, size: int) -> np.ndarray:
    return np.ascontiguousarray(np.broadcast_to(index[None], (size,) + index.shape))


def _index_select_batch(args, batched, dim, index):
    return dispatch.composite(INDEX_SELECT, args[0], dim=dim + 1, index=index)


def _index_add_batch(args, batched, dim, index, alpha):
    _, (x, source) = batch_all(args, batched)
    return dispatch.composite(INDEX_ADD, x, source, dim=dim + 1, index=index, alpha=alpha)


def _gather_batch(args, batched, dim, index):
    x = args[0]
    return dispatch.composite(GATHER, x, dim=dim + 1, index=per_example(index, x.shape[0]))


def _scatter_add_batch(args, batched, dim, index):
    size, (x, src) = batch_all(args, batched)
    return dispatch.composite(SCATTER_ADD, x, src, dim=dim + 1, index=per_example(index, size))


def _masked_batch(x, mask):
    """x with its batch first and the mask lined up behind it (the mask may have more dims than
    one example of x: the example then broadcasts up to the mask)."""
    extra = mask.ndim - (x.ndim - 1)
    if extra > 0:
        x = _shape.reshape(x, (x.shape[0],) + (1,) * extra + tuple(x.shape[1:]))
    return x, mask.reshape((1,) + mask.shape)


def _masked_fill_batch(args, batched, mask, fill=None):
    x, mask = _masked_batch(args[0], mask)
    return dispatch.composite(MASKED_FILL, x, mask=mask, fill=fill)


def _masked_fill_tensor_batch(args, batched, mask):
    size, (x, value) = batch_all(args, batched)
    x, mask = _masked_batch(x, mask)
    value = _shape.reshape(value, (size,) + (1,) * (x.ndim - 1))  # one fill value per example
    return dispatch.composite(MASKED_FILL_T, x, value, mask=mask)


# PyTorch: masked_fill.Scalar records MaskedFillBackward0, masked_fill.Tensor MaskedFillBackward1
MASKED_FILL = def_composite("masked_fill", "MaskedFillBackward0", ("x",), _masked_fill_fwd,
                            _masked_fill_back, attrs=("mask", "fill"), jvp=_masked_fill_jvp,
                            batch_rule=_masked_fill_batch, cuda_forward=_masked_fill_fwd,
                            method=True)
MASKED_FILL_T = def_composite("masked_fill_tensor", "MaskedFillBackward1", ("x", "value"),
                              _masked_fill_fwd, _masked_fill_back, attrs=("mask",), jvp=LINEAR,
                              batch_rule=_masked_fill_tensor_batch, cuda_forward=_masked_fill_fwd)


def masked_fill_args(name: str, x, mask, value):
    """``(op, others, attrs)`` for ``masked_fill(x, mask, value)`` after PyTorch's checks."""
    if isinstance(mask, dispatch.Tensor):
        upper.host_read(mask, f"{name}() with a tensor mask")  # the mask is an attribute
        m = mask._data
    else:
        m = np.asarray(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{m.dtype.name}")
    if isinstance(value, dispatch.Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        # a value that needs a gradient, or may carry a tangent or a batch while a transform
        # runs (Note [transform hooks]), is an input of the op, not a constant
        if value._requires_grad or dispatch.transform_hook is not None:
            return MASKED_FILL_T, (value,), {"mask": m}
        upper.host_read(value, f"{name}() with a tensor value")
        value = value._data[()]
    elif isinstance(value, np.ndarray) and value.ndim:
        raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor "
                           f"with {value.ndim} dimension(s).")
    dispatch.broadcast_shapes(name, x.shape, m.shape)
    return MASKED_FILL, (), {"mask": m, "fill": value}


@public(MASKED_FILL)
def masked_fill(x, mask, value):
    """``x`` with ``value`` where the boolean ``mask`` (broadcast with ``x``) is True.

    Derivatives: ``g`` where the mask is False (0 where filled); for a tensor ``value``, the
    sum of ``g`` over the filled elements.
    """
    x = _tensor(x, "masked_fill")
    op, others, attrs = masked_fill_args("masked_fill", x, mask, value)
    return dispatch.composite(op, x, *others, **attrs)


# --- index_select / index_add --------------------------------------------------------------
def _check_index_vector(name: str, index: np.ndarray, dtype_name: str) -> np.ndarray:
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} "
                         f"with type: {dtype_name} and size: {list(index.shape)}")
    return index.reshape(-1)


def _check_bounds(index: np.ndarray, size: int) -> None:
    if index.size and (index.min() < 0 or index.max() >= size):
        raise IndexError("index out of range in self")


def _index_select_fwd(ctx, x, dim, index):
    ctx.input_shape = x.shape
    return np.take(x, index, axis=dim)


def _index_select_back(ctx, g):
    return (index_add(dispatch.zeros(ctx.input_shape, g.dtype, g.device), ctx.dim, ctx.index, g),)


INDEX_SELECT = def_composite("index_select", "IndexSelectBackward0", ("x",), _index_select_fwd,
                             _index_select_back, attrs=("dim", "index"), jvp=LINEAR,
                             batch_rule=_index_select_batch,
                             cuda_forward=scatter_cuda.index_select_forward, method=True)


@public(INDEX_SELECT)
def index_select(x, dim, index, *, out=None):
    """``x`` restricted to the entries ``index`` (a vector) along ``dim``:
    ``out[..., i, ...] = x[..., index[i], ...]``. Derivative: ``g`` added back along ``dim``
    at ``index`` (``index_add`` into zeros; repeated indices accumulate). ``out``: write the
    result there (no autograd)."""
    x = _tensor(x, "index_select")
    if x.ndim == 0:
        raise IndexError("index_select(): self must have at least one dimension here; reshape "
                         "a 0-d tensor to shape (1,) first")
    d = wrap_dim("index_select", dim, x.ndim)
    raw = long_index("index_select", index)
    idx = _check_index_vector("index_select", raw, dispatch.scalar_type_name(raw.dtype))
    _check_bounds(idx, x.shape[d])
    return dispatch.composite(INDEX_SELECT, x, dim=d, index=idx, out=out)


def _index_add_write(ctx, out, source, dim, index, alpha):
    if dispatch.device_of(out) != "cpu":  # atomic adds along dim
        return index_kernels().dim_scatter_add(out, dim, index, source, vector=True, alpha=alpha)
    np.add.at(out, (slice(None),) * dim + (index,), source if alpha == 1 else source * alpha)
    return out


def _index_add_fwd(ctx, x, source, dim, index, alpha):
    return _index_add_write(ctx, copy_array(x), source, dim, index, alpha)


def _index_add_back(ctx, g):
    need_x, need_s = ctx.needs_input_grad
    gs = None
    if need_s:
        gs = index_select(g, ctx.dim, ctx.index)
        if ctx.alpha != 1:
            gs = gs * ctx.alpha
    return (g if need_x else None), gs


INDEX_ADD = def_composite("index_add", "IndexAddBackward0", ("x", "source"), _index_add_fwd,
                          _index_add_back, attrs=("dim", "index", "alpha"), jvp=LINEAR,
                          batch_rule=_index_add_batch, cuda_forward=_index_add_fwd, method=True)


def index_add_args(name: str, x, dim, index, source, alpha) -> tuple:
    """``(source, attrs)`` for ``index_add`` after PyTorch's checks."""
    if x.ndim == 0:
        raise IndexError(f"{name}(): self must have at least one dimension here; reshape a 0-d "
                         "tensor to shape (1,) first")
    d = wrap_dim(name, dim, x.ndim)
    raw = long_index(name, index)
    idx = _check_index_vector(name, raw, dispatch.scalar_type_name(raw.dtype))
    source = _tensor(source, name)
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"{name}(): self ({dispatch.scalar_type_name(x._data.dtype)}) and "
                           f"source ({dispatch.scalar_type_name(source._data.dtype)}) must have "
                           "the same scalar type")
    src_shape = source.shape if source.ndim else (1,)
    if len(src_shape) != x.ndim or any(a != b for k, (a, b) in enumerate(zip(src_shape, x.shape))
                                       if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x.shape)} source.shape "
                           f"= {list(source.shape)}")
    if idx.size != src_shape[d]:
        raise RuntimeError(f"{name}(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({src_shape[d]}), for dim: {d}")
    _check_bounds(idx, x.shape[d])
    return source, {"dim": d, "index": idx, "alpha": alpha}


@public(INDEX_ADD)
def index_add(x, dim, index, source, alpha=1):
    """``out = x.clone(); out[..., index[i], ...] += alpha * source[..., i, ...]`` along
    ``dim`` (repeated indices accumulate). Derivatives: ``g`` for ``x`` and
    ``alpha * g.index_select(dim, index)`` for ``source``."""
    x = _tensor(x, "index_add")
    source, attrs = index_add_args("index_add", x, dim, index, source, alpha)
    if source.ndim == 0:
        from .shape import reshape

        source = reshape(source, (1,))
    return dispatch.composite(INDEX_ADD, x, source, **attrs)


# --- gather / scatter_add ------------------------------------------------------------------
def check_scatter_index(name: str, index: np.ndarray, dim: int, size: int) -> None:
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index[(index < 0) | (index >= size)].reshape(-1)[0]
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {dim} with size "
                           f"{size}")


def box(shape) -> tuple:
    return tuple(slice(0, n) for n in shape)


def _gather_fwd(ctx, x, dim, index):
    ctx.input_shape = x.shape
    return np.take_along_axis(x[tuple(slice(None) if k == dim else slice(0, n)
                                      for k, n in enumerate(index.shape))], index, axis=dim)


def _gather_back(ctx, g):
    return (scatter_add(dispatch.zeros(ctx.input_shape, g.dtype, g.device), ctx.dim, ctx.index,
                        g),)


GATHER = def_composite("gather", "GatherBackward0", ("x",), _gather_fwd, _gather_back,
                       attrs=("dim", "index"), jvp=LINEAR, batch_rule=_gather_batch,
                       cuda_forward=scatter_cuda.gather_forward, method=True, export=True)


@public(GATHER)
def gather(x, dim, index, *, out=None):
    """``out[i][j][k] = x[index[i][j][k]][j][k]`` for ``dim=0`` (likewise for other dims);
    ``index`` has ``x``'s number of dims and is no larger than ``x`` outside ``dim``.
    Derivative: ``g`` scatter-added into zeros of ``x``'s shape at ``index``. ``out``: write
    the result there (no autograd)."""
    x = _tensor(x, "gather")
    idx = long_index("gather", index)
    if x.ndim == 0 or idx.ndim == 0:
        raise RuntimeError("gather(): 0-d tensors are not supported here; reshape to 1-d first")
    d = wrap_dim("gather", dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for k in range(x.ndim):
        if k != d and idx.shape[k] > x.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(idx.shape)} to be no larger than self {list(x.shape)} "
                               f"apart from dimension {d}")
    check_scatter_index("gather", idx, d, x.shape[d])
    return dispatch.composite(GATHER, x, dim=d, index=idx, out=out)


def _scatter_add_write(ctx, out, src, dim, index):
    if dispatch.device_of(out) != "cpu":  # atomic adds along dim
        return index_kernels().dim_scatter_add(out, dim, index, src, vector=False)
    nd = index.ndim
    coords = tuple(index if k == dim else
                   np.arange(n, dtype=np.intp).reshape((1,) * k + (n,) + (1,) * (nd - k - 1))
                   for k, n in enumerate(index.shape))
    np.add.at(out, coords, src[box(index.shape)])
    return out


def _scatter_add_fwd(ctx, x, src, dim, index):
    return _scatter_add_write(ctx, copy_array(x), src, dim, index)


def _scatter_add_back(ctx, g):
    need_x, need_s = ctx.needs_input_grad
    gs = None
    if need_s:
        gs = gather(g, ctx.dim, ctx.index)
        src_shape = ctx._next_meta[1][0]
        if tuple(src_shape) != tuple(ctx.index.shape):  # src elements outside index: no grad
            gs = put_flat(dispatch.zeros(src_shape, g.dtype, g.device),
                          positions(src_shape, box(ctx.index.shape)), gs, unique=True)
    return (g if need_x else None), gs


SCATTER_ADD = def_composite("scatter_add", "ScatterAddBackward0", ("x", "src"), _scatter_add_fwd,
                            _scatter_add_back, attrs=("dim", "index"), jvp=LINEAR,
                            batch_rule=_scatter_add_batch, cuda_forward=_scatter_add_fwd,
                            method=True, export=True)


def scatter_add_args(name: str, x, dim, index, src) -> tuple:
    """``(src, attrs)`` for ``scatter_add`` after PyTorch's checks."""
    idx = long_index(name, index)
    src = _tensor(src, name)
    if x.ndim == 0:
        raise RuntimeError(f"{name}(): 0-d tensors are not supported here; reshape to 1-d first")
    d = wrap_dim(name, dim, x.ndim)
    if idx.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if src.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if src._data.dtype != x._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if any(idx.shape[k] > src.shape[k] or (k != d and idx.shape[k] > x.shape[k])
           for k in range(x.ndim)):
        raise RuntimeError(f"Expected index {list(idx.shape)} to be no larger than self "
                           f"{list(x.shape)} apart from dimension {d} and to be no larger size "
                           f"than src {list(src.shape)}")
    check_scatter_index(name, idx, d, x.shape[d])
    return src, {"dim": d, "index": idx}


@public(SCATTER_ADD)
def scatter_add(x, dim, index, src):
    """``out = x.clone(); out[index[i][j][k]][j][k] += src[i][j][k]`` for ``dim=0`` (likewise
    for other dims; repeated indices accumulate). Derivatives: ``g`` for ``x`` and
    ``g.gather(dim, index)`` for ``src`` (0 outside ``index``'s extent)."""
    x = _tensor(x, "scatter_add")
    src, attrs = scatter_add_args("scatter_add", x, dim, index, src)
    return dispatch.composite(SCATTER_ADD, x, src, **attrs)


WRITERS = {"masked_fill": _masked_fill_write, "masked_fill_tensor": _masked_fill_write,
           "index_add": _index_add_write, "scatter_add": _scatter_add_write}
