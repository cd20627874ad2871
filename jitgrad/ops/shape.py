"""Shape ops: views (view, reshape, squeeze, unsqueeze, expand, transpose, permute, t) and
joins (cat, stack).

Every op here is linear, so each derivative is the "inverse" shape op applied to the incoming
gradient ``g``: reshape back, inverse permutation, sum over broadcast dims, slices of ``g``.
Backward rules use Tensor ops only, so double backward records its own graph.

View ops are ``def_composite(..., view=True)`` rows: when NumPy returns a view the output
shares the input's storage and version counter (``_base`` is set), as in PyTorch.
Shapes accept varargs or one tuple/list (``x.view(2, 3)`` or ``x.view((2, 3))``), with one
``-1`` inferred.
"""
from __future__ import annotations

import operator

import numpy as np

from .core import dispatch
from . import shape_cuda
from .core.registry import LINEAR, def_composite, public


# --- argument helpers ----------------------------------------------------------------------
def _shape_arg(shape) -> tuple:
    """``(2, 3)`` from varargs ``(2, 3)`` or ``((2, 3),)``; sizes may be Tensors with __index__."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be a sequence of ints, got {tuple(shape)!r}") from None


def wrap_dim(op: str, dim, ndim: int) -> int:
    """PyTorch's dim wrapping: ``dim`` in ``[-ndim, ndim - 1]`` (a 0-d tensor acts as 1-d)."""
    n = max(ndim, 1)
    dim = operator.index(dim)
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim % n


def infer_shape(op: str, shape: tuple, numel: int) -> tuple:
    """Resolve a single ``-1`` in ``shape`` so that its product is ``numel``; check sizes."""
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred")
    bad = [s for s in shape if s < -1]
    if bad:
        raise RuntimeError(f"{op}: invalid shape dimension {bad[0]}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if unknown:
        if known == 0:
            if numel == 0:
                raise RuntimeError(
                    f"{op}: cannot reshape tensor of 0 elements into shape {list(shape)} because "
                    "the unspecified dimension size -1 can be any value and is ambiguous")
        elif numel % known == 0:
            shape = shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1:]
            return shape
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
    if known != numel:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _reshape_view(a: np.ndarray, shape: tuple):
    """``a`` reshaped without copying, or None when NumPy would have to copy."""
    if dispatch.device_of(a) != "cpu":  # the same rule for CUDA arrays' strides
        return dispatch.cuda_kernels("index").reshape_view(a, shape)
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        return None


# --- view / reshape ------------------------------------------------------------------------
def _view_fwd(ctx, a, shape):
    ctx.input_shape = a.shape
    return np.reshape(a, shape, copy=False)


def _copy_reshape_fwd(ctx, a, shape):
    ctx.input_shape = a.shape
    return np.reshape(a, shape, copy=True)


def _reshape_back(ctx, g):
    return (reshape(g, ctx.input_shape),)


# Batch rules (vmap, func/_batching.py): inputs arrive with the batch as dim 0; every rule
# returns outputs with the batch as dim 0. All the ops here are linear (jvp=LINEAR).
def _reshape_batch(args, batched, shape):
    return reshape(args[0], (args[0].shape[0],) + tuple(shape))


def _alias_batch(x):
    return dispatch.composite(VIEW, x, shape=tuple(x.shape))


VIEW = def_composite("view", "ViewBackward0", ("x",), _view_fwd, _reshape_back, attrs=("shape",),
                     view=True, jvp=LINEAR, batch_rule=_reshape_batch,
                     cuda_forward=shape_cuda.view_forward, method=True, export=True,
                     complex_ok=True, alias="reshape")
UNSAFE_VIEW = def_composite("reshape_copy", "UnsafeViewBackward0", ("x",), _copy_reshape_fwd,
                            _reshape_back, attrs=("shape",), jvp=LINEAR, batch_rule=_reshape_batch,
                            cuda_forward=shape_cuda.reshape_copy_forward, complex_ok=True,
                            alias="reshape")


@public(VIEW)
def view(x, *shape):
    """A view of ``x`` with a new shape (same elements in row-major order, shared storage).

    ``y[i] = x.flatten()[i]``; derivative: ``g.reshape(x.shape)``. Raises when the strides of
    ``x`` cannot express the new shape without a copy (use ``reshape``).
    """
    x = dispatch.tensor_operand(x, "view")
    new = infer_shape("view", _shape_arg(shape), x._data.size)
    if _reshape_view(x._data, new) is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return dispatch.composite(VIEW, x, shape=new)


def reshape(input, *shape):
    """``x`` with a new shape: a view when the strides allow it (ViewBackward0), else a copy
    (UnsafeViewBackward0). Derivative: ``g.reshape(x.shape)``."""
    input = dispatch.tensor_operand(input, "reshape")
    new = infer_shape("reshape", _shape_arg(shape), input._data.size)
    if _reshape_view(input._data, new) is not None:
        return dispatch.composite(VIEW, input, shape=new)
    return dispatch.composite(UNSAFE_VIEW, input, shape=new)


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a 0-d tensor becomes shape ``(1,)``).

    A reshape: derivative ``g.reshape(x.shape)``.
    """
    input = dispatch.tensor_operand(input, "flatten")
    shp = input.shape
    if len(shp) == 0:
        return reshape(input, (1,))
    s, e = wrap_dim("flatten", start_dim, len(shp)), wrap_dim("flatten", end_dim, len(shp))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    return reshape(input, shp[:s] + (int(np.prod(shp[s:e + 1])),) + shp[e + 1:])


# --- squeeze / unsqueeze -------------------------------------------------------------------
def _squeeze_fwd(ctx, a, dims):
    ctx.input_shape = a.shape
    return np.squeeze(a, axis=dims)


def _squeeze_batch(args, batched, dims):
    return dispatch.composite(SQUEEZE_DIMS, args[0], dims=tuple(d + 1 for d in dims))


SQUEEZE_ALL = def_composite("squeeze", "SqueezeBackward0", ("x",), _squeeze_fwd, _reshape_back,
                            attrs=("dims",), view=True, jvp=LINEAR, batch_rule=_squeeze_batch,
                            cuda_forward=shape_cuda.squeeze_forward, method=True, export=True,
                            complex_ok=True)
SQUEEZE_DIM = def_composite("squeeze_dim", "SqueezeBackward1", ("x",), _squeeze_fwd,
                            _reshape_back, attrs=("dims",), view=True, jvp=LINEAR,
                            batch_rule=_squeeze_batch, cuda_forward=shape_cuda.squeeze_forward,
                            complex_ok=True)
SQUEEZE_DIMS = def_composite("squeeze_dims", "SqueezeBackward2", ("x",), _squeeze_fwd,
                             _reshape_back, attrs=("dims",), view=True, jvp=LINEAR,
                             batch_rule=_squeeze_batch, cuda_forward=shape_cuda.squeeze_forward,
                             complex_ok=True)


@public(SQUEEZE_ALL)
def squeeze(input, dim=None):
    """Remove size-1 dims: all of them (``dim=None``) or those listed in ``dim`` (int or tuple;
    a listed dim whose size is not 1 is left alone, as in PyTorch). Derivative:
    ``g.reshape(x.shape)``."""
    input = dispatch.tensor_operand(input, "squeeze")
    shp = input.shape
    if dim is None:
        op = SQUEEZE_ALL
        dims = tuple(i for i, s in enumerate(shp) if s == 1)
    else:
        many = isinstance(dim, (tuple, list))
        op = SQUEEZE_DIMS if many else SQUEEZE_DIM
        wanted = [wrap_dim("squeeze", d, len(shp)) for d in (dim if many else (dim,))]
        if len(set(wanted)) != len(wanted):
            raise RuntimeError(f"squeeze: dim {wanted} appears multiple times in the list of dims")
        dims = tuple(sorted(d for d in wanted if len(shp) and shp[d] == 1))
    return dispatch.composite(op, input, dims=dims)


def _unsqueeze_fwd(ctx, a, dim):
    ctx.input_shape = a.shape
    return np.expand_dims(a, dim)


UNSQUEEZE = def_composite("unsqueeze", "UnsqueezeBackward0", ("x",), _unsqueeze_fwd,
                          _reshape_back, attrs=("dim",), view=True, jvp=LINEAR,
                          batch_rule=lambda args, batched, dim: dispatch.composite(
                              UNSQUEEZE, args[0], dim=dim + 1),
                          cuda_forward=shape_cuda.unsqueeze_forward, method=True, export=True,
                          complex_ok=True)


@public(UNSQUEEZE)
def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim`` (in ``[-ndim-1, ndim]``). Derivative: ``g.squeeze(dim)``
    (written as a reshape back to ``x.shape``)."""
    input = dispatch.tensor_operand(input, "unsqueeze")
    n = input.ndim + 1
    d = operator.index(dim)
    if not -n <= d < n:
        raise IndexError(f"unsqueeze: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {d})")
    return dispatch.composite(UNSQUEEZE, input, dim=d % n)


# --- expand --------------------------------------------------------------------------------
def _expand_fwd(ctx, a, shape):
    ctx.input_shape = a.shape
    return np.broadcast_to(a, shape)


def _expand_back(ctx, g):
    # ``ops.reduce.sum_to_shape`` through the gradient's own method (the engine's protocol for
    # gradients: ops.reduce builds on this module, so this module does not import it)
    return (g._sum_to_shape(ctx.input_shape),)


def _expand_batch(args, batched, shape):
    x = args[0]
    pad = len(shape) - (x.ndim - 1)  # new leading dims go after the batch dim
    if pad:
        x = reshape(x, (x.shape[0],) + (1,) * pad + tuple(x.shape[1:]))
    return dispatch.composite(EXPAND, x, shape=(x.shape[0],) + tuple(shape))


EXPAND = def_composite("expand", "ExpandBackward0", ("x",), _expand_fwd, _expand_back,
                       attrs=("shape",), view=True, jvp=LINEAR, batch_rule=_expand_batch,
                       cuda_forward=shape_cuda.expand_forward, method=("expand", "broadcast_to"),
                       export=("expand", "broadcast_to"), complex_ok=True, alias="broadcast")


@public(EXPAND)
def expand(x, *sizes):
    """Broadcast ``x`` to ``sizes`` without copying (a read-only view; ``-1`` keeps a dim, new
    dims are prepended). ``y[..., i, ...] = x[..., 0, ...]`` along expanded dims; derivative:
    ``g`` summed over the expanded dims (``sum_to_shape(g, x.shape)``)."""
    x = dispatch.tensor_operand(x, "expand")
    sizes = _shape_arg(sizes)
    shp = x.shape
    lead = len(sizes) - len(shp)
    if lead < 0:
        raise RuntimeError(f"expand({x.dtype.name}{list(shp)}, size={list(sizes)}): the number "
                           f"of sizes provided ({len(sizes)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(shp)})")
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"expand: The expanded size of the tensor ({s}) isn't allowed "
                                   f"in a leading, non-existing dimension {i}")
            out.append(s)
            continue
        cur = shp[i - lead]
        if s == -1:
            s = cur
        elif cur != s and cur != 1 or s < 0:
            raise RuntimeError(
                f"expand: The expanded size of the tensor ({s}) must match the existing size "
                f"({cur}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(shp)}")
        out.append(s)
    return dispatch.composite(EXPAND, x, shape=tuple(out))


# --- transpose / permute / t ---------------------------------------------------------------
def _transpose_fwd(ctx, a, dim0, dim1):
    return np.swapaxes(a, dim0, dim1) if a.ndim else a.view()


def _transpose_back(ctx, g):
    return (transpose(g, ctx.dim0, ctx.dim1),)


def _transpose_batch(args, batched, dim0, dim1):
    x = args[0]
    if x.ndim == 1:  # a 0-d example: transpose is the identity
        return _alias_batch(x)
    return dispatch.composite(TRANSPOSE, x, dim0=dim0 + 1, dim1=dim1 + 1)


TRANSPOSE = def_composite("transpose", "TransposeBackward0", ("x",), _transpose_fwd,
                          _transpose_back, attrs=("dim0", "dim1"), view=True, jvp=LINEAR,
                          batch_rule=_transpose_batch, cuda_forward=shape_cuda.transpose_forward,
                          method=("transpose", "swapdims"), export=("transpose", "swapdims"),
                          complex_ok=True)


@public(TRANSPOSE)
def transpose(input, dim0, dim1):
    """Swap dims ``dim0`` and ``dim1`` (a view). Derivative: ``g.transpose(dim0, dim1)``."""
    input = dispatch.tensor_operand(input, "transpose")
    d0, d1 = wrap_dim("transpose", dim0, input.ndim), wrap_dim("transpose", dim1, input.ndim)
    return dispatch.composite(TRANSPOSE, input, dim0=d0, dim1=d1)


def _permute_fwd(ctx, a, dims):
    return np.transpose(a, dims)


def _permute_back(ctx, g):
    return (permute(g, tuple(int(i) for i in np.argsort(ctx.dims))),)


PERMUTE = def_composite("permute", "PermuteBackward0", ("x",), _permute_fwd, _permute_back,
                        attrs=("dims",), view=True, jvp=LINEAR,
                        batch_rule=lambda args, batched, dims: dispatch.composite(
                            PERMUTE, args[0], dims=(0,) + tuple(d + 1 for d in dims)),
                        cuda_forward=shape_cuda.permute_forward, method=True, export=True,
                        complex_ok=True, identity=lambda attrs, ndim: (
                            tuple(attrs.get("dims", ())) == tuple(range(ndim))))


@public(PERMUTE)
def permute(x, *dims):
    """Reorder dims: ``y.shape[i] = x.shape[dims[i]]`` (a view). Derivative: ``g`` permuted by
    the inverse permutation ``argsort(dims)``."""
    x = dispatch.tensor_operand(x, "permute")
    dims = _shape_arg(dims)
    if len(dims) != x.ndim:
        raise RuntimeError(f"permute(): number of dimensions in the tensor input does not match "
                           f"the length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{x.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim("permute", d, x.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dispatch.composite(PERMUTE, x, dims=dims)


def _t_fwd(ctx, a):
    return a.T


def _t_back(ctx, g):
    return (t(g),)


def _t_batch(args, batched):
    x = args[0]
    if x.ndim < 3:  # 0-d and 1-d examples are returned unchanged
        return _alias_batch(x)
    return dispatch.composite(TRANSPOSE, x, dim0=1, dim1=2)


T = def_composite("t", "TBackward0", ("x",), _t_fwd, _t_back, view=True, jvp=LINEAR,
                  batch_rule=_t_batch, cuda_forward=shape_cuda.t_forward, method=True, export=True,
                  complex_ok=True)


@public(T)
def t(input):
    """Transpose of a matrix; 0-d and 1-d tensors are returned as views unchanged.
    Derivative: ``g.t()``."""
    input = dispatch.tensor_operand(input, "t")
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return dispatch.composite(T, input)


# --- cat / stack ---------------------------------------------------------------------------
def _tensor_list(op: str, tensors, empty_msg: str) -> list:
    if isinstance(tensors, dispatch.Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(empty_msg)
    Tensor = dispatch.Tensor
    return [a if type(a) is Tensor else dispatch.tensor_operand(a, op) for a in tensors]


def _cat_fwd(ctx, *arrays, dim, ndim):
    # None marks a legacy 1-d empty tensor that PyTorch skips when joining n-d tensors
    sizes, kept = [], []
    for a in arrays:  # (one loop, no generators: W6 concatenates every Euler step)
        if ndim != 1 and a.shape == (0,):
            sizes.append(None)
        else:
            sizes.append(a.shape[dim])
            kept.append(a)
    ctx.sizes = tuple(sizes)
    return np.concatenate(kept, axis=dim)


def _cat_back(ctx, g):
    out, offset = [], 0
    lead = (slice(None),) * ctx.dim
    # a plain backward: the same views of g's array, without the view op's bookkeeping
    data = g._data if dispatch.records_nothing(g) else None
    for need, size, meta in zip(ctx.needs_input_grad, ctx.sizes, ctx._next_meta):
        if size is None:  # a skipped legacy empty tensor
            out.append(dispatch.zeros(meta[0], meta[1], g.device) if need else None)
            continue
        if not need:
            out.append(None)
        elif data is not None:
            out.append(dispatch.Tensor._make(data[lead + (slice(offset, offset + size),)]))
        else:
            out.append(g[lead + (slice(offset, offset + size),)])
        offset += size
    return tuple(out)


def _with_batch(args, batched):
    """The batched arguments, the unbatched ones broadcast to the batch size."""
    size = next(a.shape[0] for a, b in zip(args, batched) if b)
    return [a if b else expand(unsqueeze(a, 0), (size,) + tuple(a.shape))
            for a, b in zip(args, batched)]


def _cat_batch(args, batched, dim, ndim):
    # a legacy 1-d empty example is skipped, as cat skips it
    kept = [(a, b) for a, b in zip(args, batched)
            if ndim == 1 or tuple(a.shape[1:] if b else a.shape) != (0,)]
    if not any(b for _, b in kept):
        kept = [(a, b) for a, b in zip(args, batched) if b][:1]
    ts = _with_batch([a for a, _ in kept], [b for _, b in kept])
    return dispatch.composite(CAT, *ts, dim=dim + 1, ndim=ndim + 1)


CAT = def_composite("cat", "CatBackward0", ("tensors",), _cat_fwd, _cat_back, attrs=("dim", "ndim"),
                    jvp=LINEAR, batch_rule=_cat_batch, cuda_forward=shape_cuda.cat_forward,
                    export=("cat", "concat", "concatenate"), complex_ok=True)


def _cat_vectors(ts):
    """``cat(ts)`` of 1-d CPU tensors (W6 joins its chain to the walls every Euler step), or
    None for the general path: nothing to check for them (any lengths, dim 0), so the general
    path's forward and node without its checks and dispatch (Note [eager fast path])."""
    arrays = []
    for t_ in ts:
        a = t_._data
        if type(a) is not np.ndarray or a.ndim != 1:
            return None
        arrays.append(a)
    ctx = dispatch.CompositeCtx()
    outs = [dispatch.Tensor._make(_cat_fwd(ctx, *arrays, dim=0, ndim=1))]
    return dispatch.record_composite(CAT, ts, arrays, ctx, {"dim": 0, "ndim": 1}, outs)


@public(CAT)
def cat(tensors, dim=0, *, out=None):
    """Concatenate along ``dim`` (dtypes promote as NumPy's; 1-d empty tensors are skipped as
    in PyTorch). Derivative: input ``i`` gets the slice of ``g`` it occupied along ``dim``.
    ``out``: write the result there (no autograd; see ``dispatch.elementwise``)."""
    ts = _tensor_list("cat", tensors, "cat(): expected a non-empty list of Tensors")
    if out is None and (dim == 0 or dim == -1) and dispatch.transform_hook is None:
        result = _cat_vectors(ts)
        if result is not None:
            return result
    shapes = []
    ref = None  # the first shape that is not a legacy 1-d empty one
    for t_ in ts:  # (loops, no generators: W6 concatenates every Euler step)
        s = t_._data.shape
        if not s:
            raise RuntimeError(f"cat(): zero-dimensional tensor (at position {len(shapes)}) "
                               "cannot be concatenated")
        if ref is None and s != (0,):
            ref = s
        shapes.append(s)
    if ref is None:
        ref = shapes[0]
    ndim = len(ref)
    d = wrap_dim("cat", dim, ndim)
    for i in range(len(shapes)):
        s = shapes[i]
        if s == ref or (s == (0,) and ndim != 1):
            continue
        if len(s) != ndim:
            raise RuntimeError(f"cat(): Tensors must have same number of dimensions: got "
                               f"{ndim} and {len(s)}")
        for k in range(ndim):
            if k != d and s[k] != ref[k]:
                raise RuntimeError(
                    f"cat(): Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref[k]} but got size {s[k]} for tensor number {i} in the list.")
    return dispatch.composite(CAT, *ts, dim=d, ndim=ndim, out=out)


def _stack_fwd(ctx, *arrays, dim):
    return np.stack(arrays, axis=dim)


def _stack_back(ctx, g):
    lead = (slice(None),) * ctx.dim
    return tuple(g[lead + (i,)] if need else None for i, need in enumerate(ctx.needs_input_grad))


STACK = def_composite("stack", "StackBackward0", ("tensors",), _stack_fwd, _stack_back,
                      attrs=("dim",), jvp=LINEAR,
                      batch_rule=lambda args, batched, dim: dispatch.composite(
                          STACK, *_with_batch(args, batched), dim=dim + 1),
                      cuda_forward=shape_cuda.stack_forward, export=True, complex_ok=True)


@public(STACK)
def stack(tensors, dim=0, *, out=None):
    """Join equal-shaped tensors along a new dim ``dim`` (in ``[-ndim-1, ndim]``). Derivative:
    input ``i`` gets ``g.select(dim, i)``. ``out``: as for ``cat``."""
    ts = _tensor_list("stack", tensors, "stack expects a non-empty TensorList")
    shp = ts[0].shape
    for i, t_ in enumerate(ts):
        if t_.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} "
                               f"at entry 0 and {list(t_.shape)} at entry {i}")
    n = len(shp) + 1
    d = operator.index(dim)
    if not -n <= d < n:
        raise IndexError(f"stack: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {d})")
    return dispatch.composite(STACK, *ts, dim=d % n, out=out)


# --- diagonal / narrow / select ------------------------------------------------------------
def _diagonal_view(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """The diagonal of ``a`` over ``dim1``/``dim2`` as a *writable* view (NumPy's own
    ``np.diagonal`` is read-only; PyTorch's is a regular view), moved to the last dim."""
    if offset >= 0:
        sub = a[(slice(None),) * dim2 + (slice(offset, None),)]
    else:
        sub = a[(slice(None),) * dim1 + (slice(-offset, None),)]
    length = min(sub.shape[dim1], sub.shape[dim2])
    other = [k for k in range(a.ndim) if k not in (dim1, dim2)]
    return np.lib.stride_tricks.as_strided(
        sub, tuple(a.shape[k] for k in other) + (length,),
        tuple(a.strides[k] for k in other) + (a.strides[dim1] + a.strides[dim2],),
        writeable=sub.flags.writeable)


def _diagonal_fwd(ctx, a, offset, dim1, dim2):
    ctx.input_shape = a.shape
    return _diagonal_view(a, offset, dim1, dim2)


def _diagonal_back(ctx, g):
    return (dispatch.composite(DIAGONAL_BACKWARD, g, shape=ctx.input_shape, offset=ctx.offset,
                               dim1=ctx.dim1, dim2=ctx.dim2),)


def _diagonal_backward_fwd(ctx, g, shape, offset, dim1, dim2):
    out = np.zeros(shape, g.dtype)
    _diagonal_view(out, offset, dim1, dim2)[...] = g
    return out


def _diagonal_backward_back(ctx, gg):
    return (diagonal(gg, ctx.offset, ctx.dim1, ctx.dim2),)


# batch rules: the diagonal goes last and the other dims keep their order, so a leading batch
# stays first
DIAGONAL = def_composite(
    "diagonal", "DiagonalBackward0", ("x",), _diagonal_fwd, _diagonal_back,
    attrs=("offset", "dim1", "dim2"), view=True, jvp=LINEAR,
    batch_rule=lambda args, batched, offset, dim1, dim2: dispatch.composite(
        DIAGONAL, args[0], offset=offset, dim1=dim1 + 1, dim2=dim2 + 1),
    cuda_forward=shape_cuda.diagonal_forward, method=True, export=True, complex_ok=True)
DIAGONAL_BACKWARD = def_composite(
    "diagonal_backward", "DiagonalBackwardBackward0", ("g",), _diagonal_backward_fwd,
    _diagonal_backward_back, attrs=("shape", "offset", "dim1", "dim2"), jvp=LINEAR,
    batch_rule=lambda args, batched, shape, offset, dim1, dim2: dispatch.composite(
        DIAGONAL_BACKWARD, args[0], shape=(args[0].shape[0],) + tuple(shape), offset=offset,
        dim1=dim1 + 1, dim2=dim2 + 1),
    cuda_forward=shape_cuda.diagonal_backward_forward, complex_ok=True)


@public(DIAGONAL)
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``y[..., i] = x[..., i, i + offset]`` over dims ``dim1``/``dim2`` (a
    writable view; those dims are removed and the diagonal becomes the last dim; ``offset > 0``
    is above the main diagonal). Derivative: zeros of ``x``'s shape with ``g`` on the diagonal.
    """
    input = dispatch.tensor_operand(input, "diagonal")
    d1, d2 = wrap_dim("diagonal", dim1, input.ndim), wrap_dim("diagonal", dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return dispatch.composite(DIAGONAL, input, offset=operator.index(offset), dim1=d1, dim2=d2)


def narrow(input, dim, start, length):
    """The slice ``start:start + length`` of ``x`` along ``dim`` (a view; a negative ``start``
    counts from the end). Derivative: ``g`` placed back into zeros (SliceBackward0)."""
    input = dispatch.tensor_operand(input, "narrow")
    d = wrap_dim("narrow", dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    start, length = operator.index(start), operator.index(length)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    start %= n if n else 1
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]  # ops.indexing.getitem


def select(x, dim, index):
    """``x[..., index, ...]`` along ``dim`` (a view without that dim; negative ``index`` counts
    from the end). Derivative: ``g`` placed back into zeros (SelectBackward0)."""
    x = dispatch.tensor_operand(x, "select")
    d = wrap_dim("select", dim, x.ndim)
    i = operator.index(index)
    n = x.shape[d] if x.ndim else 1
    if not -n <= i < n:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(x.shape)} at "
                         f"dimension {d}")
    return x[(slice(None),) * d + (i,)]  # ops.indexing.getitem (which builds on this module)
