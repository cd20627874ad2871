"""The CUDA forwards of the ``ops.npfuncs`` composite rows (``OpDef.cuda_forward``).

Each mirrors its CPU forward in ``ops.npfuncs`` (same values, special values and result dtype):
``round`` and ``stdtr`` apply a scalar body of ``kernels.cuda.special`` through
``kernels.cuda.backend.elementwise`` (reached lazily: Note [lazy cuda]); ``flip``, ``diag_embed`` and
``pad_constant`` are strided copies into (views of) a new device array; ``cumsum``/``cumprod``
run ``cuda_special.scan_kernel``. The result dtype is the CPU forward's own, read off a call on
empty host arrays of the operands' dtypes (no data moves), so NumPy's promotion rules hold as
they are (``round`` of an int64 is int64, ``cumsum`` of int32 int64). The elementwise rows
(``ops.elementwise_np``, ``ops.special``) need none: their scalar bodies compile for CUDA as they
are.
"""
from __future__ import annotations

import numpy as np

from .core import dispatch

#: stdtr's continued fraction keeps ~1e-12 relative accuracy against SciPy up to this df, and
#: loses digits above it (the measurements: docs/cuda.md, 'Measurements behind the device code');
#: larger finite df raise on CUDA
STDTR_DF_MAX = 1e4


def _special():
    return dispatch.cuda_kernels("special")


def _cpu_dtype(cpu_forward, arrays, attrs) -> np.dtype:
    """The dtype the CPU forward gives for operands of these dtypes (run on empty arrays)."""
    ctx = dispatch.CompositeCtx()
    with np.errstate(all="ignore"):
        res = cpu_forward(ctx, *[np.zeros((0,), a.dtype) for a in arrays], **attrs)
    return np.asarray(res).dtype


def _compute_dtype(out_dtype, special: bool):
    if out_dtype.kind == "c":
        raise NotImplementedError("jitgrad.numpy on CUDA: complex inputs are not supported by "
                                  "these functions yet; use .cpu()")
    if out_dtype.kind != "f":
        return out_dtype
    if special or out_dtype == np.float64:
        return np.dtype(np.float64)
    return np.dtype(np.float32)  # float32, and float16 computed in float32 as NumPy's loops do


def _apply(body_name, operands, out_dtype, special=False):
    """One generic elementwise launch: ``cuda_special.<body_name>`` over the broadcast
    ``operands`` (CudaArrays and scalars), results in ``out_dtype``."""
    arrays = [a for a in operands if not np.isscalar(a)]
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    compute = _compute_dtype(out_dtype, special)
    return dispatch.cuda_backend().elementwise(getattr(_special(), body_name), list(operands),
                                               shape, out_dtype, compute)


def round_forward(cpu_forward):
    """``round``'s CUDA forward; ``cpu_forward`` (its CPU forward) tells the result dtype."""
    def forward(ctx, x, decimals):
        out_dtype = _cpu_dtype(cpu_forward, [x], {"decimals": decimals})
        if out_dtype.kind in "iub" and decimals >= 0:
            return x.astype(out_dtype)
        if decimals == 0:
            return _apply("rint_", [x], out_dtype)
        # NumPy: y = x * 10**d (or x / 10**-d), rint, then back; the factor in the compute dtype
        compute = (_compute_dtype(out_dtype, False) if out_dtype.kind == "f"
                   else np.dtype(np.float64))
        f = compute.type(10.0 ** abs(decimals))
        body = "round_pos" if decimals > 0 else "round_neg"
        return dispatch.cuda_backend().elementwise(getattr(_special(), body), [x, f], x.shape,
                                                   out_dtype, compute)
    return forward


def flip_forward(ctx, x, axis):
    axes = range(x.ndim) if axis is None else axis
    view = x[tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))]
    return view.copy()


def scan_forward(cpu_forward, product: bool):
    """``cumsum``'s (``product``: ``cumprod``'s) CUDA forward; ``cpu_forward`` tells the result
    dtype."""
    def forward(ctx, x, axis):
        out_dtype = _cpu_dtype(cpu_forward, [x], {"axis": 0})
        return _special().scan(x, axis, out_dtype, product)
    return forward


def diag_embed_forward(ctx, v, k):
    if v.ndim != 1:
        raise NotImplementedError("diag_embed on CUDA takes a 1-d vector")
    n = v.shape[0] + abs(k)
    backend = dispatch.cuda_backend()
    out = backend.zeros((n, n), v.dtype, v.index)
    # the k-th diagonal of the contiguous (n, n) output: stride n + 1 from (0, k) or (-k, 0)
    diag = backend.CudaArray(out.buffer, v.shape, (n + 1,), k if k >= 0 else -k * n, out.index,
                             out.owner)
    backend.copy_into(diag, v)
    return out


def pad_constant_forward(ctx, x, pad_width, value):
    backend = dispatch.cuda_backend()
    shape = tuple(n + b + a for n, (b, a) in zip(x.shape, pad_width))
    out = backend.full(shape, value, x.dtype, x.index)
    inner = out[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, pad_width))]
    backend.copy_into(inner, x)
    return out


def _host_bcast_to_device(arr, index):
    """A device copy of host ``arr`` keeping its broadcast (stride-0) axes unmaterialised: the
    distinct values go over, the view broadcasts them again."""
    backend = dispatch.cuda_backend()
    arr = np.asarray(arr)
    small = arr[tuple(slice(0, 1) if st == 0 else slice(None) for st in arr.strides)]
    return backend.to_device(np.ascontiguousarray(small), index).broadcast_to(arr.shape)


def stdtr_forward(ctx, x, df):
    df_host = np.asarray(df)
    big = np.isfinite(df_host) & (df_host > STDTR_DF_MAX)
    if big.any():  # df is a host array (a constant): this check reads no device memory
        raise NotImplementedError(
            f"stdtr on CUDA: df above {STDTR_DF_MAX:g} (got {df_host[big].max():g}) is not "
            "computed to full accuracy on the device; run it on the CPU (.cpu())")
    out_dtype = x.dtype
    dfd = _host_bcast_to_device(df_host, x.index)
    return _apply("stdtr_", [x, dfd], out_dtype, special=True)

