"""PyTorch-style ``repr`` of tensors: ``tensor([1., 2.], grad_fn=<MulBackward0>)``."""
from __future__ import annotations

import numpy as np

from .. import dtypes


def _float_formatter(arr: np.ndarray):
    finite = arr[np.isfinite(arr)]
    if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e16:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    amax = np.abs(finite).max() if finite.size else 0.0
    amin = np.abs(finite[finite != 0]).min() if np.any(finite != 0) else 0.0
    if amax >= 1e8 or (amin and amin < 1e-4) or (amin and amax / amin > 1e5):
        return lambda v: f"{v:.4e}"
    return lambda v: f"{v:.4f}"


def format_tensor(t) -> str:
    arr = t._data
    prefix = "tensor("
    if arr.dtype.kind == "f":
        fmt = {"float_kind": _float_formatter(arr)}
    else:
        fmt = None
    if arr.size == 0:
        body = "[]"
    else:
        body = np.array2string(arr, separator=", ", prefix=prefix, formatter=fmt, threshold=1000,
                               edgeitems=3, max_line_width=80)
    extras = []
    dt = t.dtype
    if arr.size == 0 and arr.ndim != 1:
        extras.append(f"size={tuple(arr.shape)}")
    if dt not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
        extras.append(f"dtype={dt!r}")
    if t._grad_fn is not None:
        extras.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return prefix + ", ".join([body] + extras) + ")"
