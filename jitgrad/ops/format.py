"""PyTorch-style ``repr`` of tensors: ``tensor([1., 2.], grad_fn=<MulBackward0>)``.

A port of ``torch/_tensor_str.py`` (default print options: precision 4, linewidth 80, summarize
above 1000 elements with 3 edge items), so that values print exactly as PyTorch prints them:
one element width per tensor, integer-valued floats as ``1.``, scientific notation when the
magnitudes span more than 1000x (or exceed 1e8, or go below 1e-4).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


class _Formatter:
    """Picks int/fixed/scientific mode and one width for all elements (PyTorch's rules)."""

    def __init__(self, arr: np.ndarray):
        self.floating = arr.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = arr.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if vals.size == 0:
            return
        absv = np.abs(vals)
        vmin, vmax = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if self.int_mode:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8
            fmt = (lambda v: f"{v:.{PRECISION}e}") if self.sci_mode else (lambda v: f"{v:.0f}.")
        else:
            self.sci_mode = vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4
            fmt = (lambda v: f"{v:.{PRECISION}e}") if self.sci_mode else (
                lambda v: f"{v:.{PRECISION}f}")
        for v in vals.tolist():
            self.max_width = max(self.max_width, len(fmt(v)))

    def format(self, value) -> str:
        if not self.floating:
            ret = f"{value}"
        elif self.sci_mode:
            ret = f"{value:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            ret = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                ret += "."
        else:
            ret = f"{value:.{PRECISION}f}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The edge items of every dimension (what a summarized repr shows)."""
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return np.concatenate((arr[:EDGEITEMS], arr[-EDGEITEMS:])) if arr.shape[0] > 2 * EDGEITEMS \
            else arr
    rows = list(range(EDGEITEMS)) + list(range(arr.shape[0] - EDGEITEMS, arr.shape[0])) \
        if arr.shape[0] > 2 * EDGEITEMS else range(arr.shape[0])
    return np.stack([_summarized(arr[i]) for i in rows])


def _vector_str(arr, indent, summarize, fmt) -> str:
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / (fmt.max_width + 2))))
    if summarize and arr.shape[0] > 2 * EDGEITEMS:
        data = ([fmt.format(v) for v in arr[:EDGEITEMS].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-EDGEITEMS:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(arr, indent, summarize, fmt) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    n = arr.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        slices = ([_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)]
                  + ["..."]
                  + [_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(n - EDGEITEMS, n)])
    else:
        slices = [_tensor_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes, indent: int) -> str:
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(t) -> str:
    arr = t._data
    prefix = "tensor("
    indent = len(prefix)
    dt = t.dtype
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dt is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if dt not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={dt!r}")
        summarize = arr.size > THRESHOLD
        data = arr.astype(np.float32) if arr.dtype == np.float16 else arr
        fmt = _Formatter(_summarized(data) if summarize else data)
        body = _tensor_str(data, indent, summarize, fmt)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
