"""PyTorch-style ``repr`` of tensors: ``tensor([1., 2.], grad_fn=<MulBackward0>)``.

The layout is NumPy's ``array2string`` (line width 80, ", " separators, summarised above 1000
elements with 3 edge items); only the element format follows PyTorch's printing rules, decided
once per tensor from its finite non-zero values:

* all integral (and spanning at most 1000x, below 1e8): ``1.`` / ``-2.``;
* otherwise 4 decimals (``0.5000``), or scientific ``1.0000e-05`` when the magnitudes span more
  than 1000x, exceed 1e8 or go below 1e-4;

and every element is right-aligned to the widest finite non-zero one (``tensor([-1.,  2.])``).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes

_PREFIX = "tensor("
_THRESHOLD, _EDGE, _WIDTH = 1000, 3, 80


def _float_style(shown: np.ndarray):
    """The format function for the elements that will be shown."""
    vals = shown[np.isfinite(shown) & (shown != 0)].astype(np.float64)
    if vals.size == 0:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    mags = np.abs(vals)
    wide = mags.max() / mags.min() > 1000.0 or mags.max() > 1.0e8
    if np.all(vals == np.round(vals)):
        if not wide:
            return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    elif not (wide or mags.min() < 1.0e-4):
        return lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)
    return lambda v: f"{v:.4e}" if np.isfinite(v) else str(v)


def _shown(arr: np.ndarray, summarize: bool) -> np.ndarray:
    """The elements a summarised repr shows (the edge items of every dimension)."""
    if not summarize:
        return arr.reshape(-1)
    for axis in range(arr.ndim):
        if arr.shape[axis] > 2 * _EDGE:
            arr = np.concatenate([arr.take(range(_EDGE), axis),
                                  arr.take(range(arr.shape[axis] - _EDGE, arr.shape[axis]), axis)],
                                 axis)
    return arr.reshape(-1)


def _part_style(part: np.ndarray):
    """The style of one part (real or imaginary) of complex elements, and its column width."""
    style = _float_style(part)
    finite = part[np.isfinite(part) & (part != 0)]
    return style, max([len(style(v)) for v in finite.tolist()] + [1])


def _complex_style(shown: np.ndarray):
    """PyTorch's complex format: each part has its own float style; the real part is
    right-aligned to its column, the imaginary part follows with its sign: ``1.+2.j``."""
    re_style, re_width = _part_style(shown.real)
    im_style, _ = _part_style(shown.imag)

    def style(v):
        im = im_style(v.imag)
        return re_style(v.real).rjust(re_width) + ("" if im[0] in "+-" else "+") + im + "j"
    return style


def _body(arr: np.ndarray) -> str:
    summarize = arr.size > _THRESHOLD
    shown = _shown(arr, summarize)
    if arr.dtype.kind == "c":
        style = _complex_style(shown)
        return _layout(arr, summarize, style, 1)
    if arr.dtype.kind == "f":
        style = _float_style(shown)
    elif arr.dtype.kind == "b":
        style = str
    else:
        style = lambda v: str(int(v))  # noqa: E731
    if arr.dtype.kind == "f":  # PyTorch sizes the column by the finite non-zero values only
        shown = shown[np.isfinite(shown) & (shown != 0)]
    width = max([len(style(v)) for v in shown.tolist()] + [1])
    return _layout(arr, summarize, style, width)


def _layout(arr: np.ndarray, summarize: bool, style, width: int) -> str:
    text = np.array2string(arr, max_line_width=_WIDTH, separator=", ", prefix=_PREFIX,
                           threshold=_THRESHOLD if summarize else arr.size + 1, edgeitems=_EDGE,
                           formatter={"all": lambda v: style(v.item()).rjust(width)})
    return text.replace(", ...,", ",  ...,")  # PyTorch pads the ellipsis like an element


def format_tensor(t) -> str:
    arr = t._host()
    if arr.dtype == np.float16:  # printed through float32, like PyTorch
        arr = arr.astype(np.float32)
    dt = t.dtype
    suffixes = [f"device='{t.device}'"] if t.is_cuda else []
    if arr.size == 0:
        body = "[]"
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dt not in (dtypes.get_default_dtype(), dtypes.default_complex()):
            suffixes.append(f"dtype={dt!r}")
    else:
        body = _body(arr)
        if dt not in (dtypes.get_default_dtype(), dtypes.default_complex(), dtypes.int64,
                      dtypes.bool_):
            suffixes.append(f"dtype={dt!r}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    text = _PREFIX + body
    for suffix in suffixes:  # a suffix that does not fit on the last line starts a new one
        last = len(text) - text.rfind("\n") - 1
        text += (",\n" + " " * len(_PREFIX) if last + len(suffix) + 3 > _WIDTH else ", ") + suffix
    return text + ")"
