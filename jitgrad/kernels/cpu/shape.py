"""Numba kernels of shape ops on CPU arrays: the flat roll.

``roll_flat`` is ``np.roll(a, shift)`` of a 1-D C-contiguous array: two contiguous copies in one
compiled call through the kernel's entry point (Note [direct kernel entry] in kernels/cpu/elementwise.py).
NumPy's ``np.roll`` spends most of a small roll on its argument handling, and two slice copies
still make four views and two assignments per call; the kernel's argument types are known from
the array, so its compiled specialisation is called directly (``nogil``; no state of its own:
thread-safe). Other arrays (n-d, strided, object or datetime dtypes) get None: the caller's
NumPy path.
"""
from __future__ import annotations

import numba
import numpy as np

from .kernel_cache import njit as cached_njit  # the healing disk cache


def _roll_copy(out, a, shift):
    """``out[(i + shift) % n] = a[i]`` for ``0 <= shift < n = a.size``: the elements of ``a``
    moved ``shift`` places along, the last ``shift`` wrapping round to the front."""
    n = a.size
    head = a[:n - shift]
    tail = a[n - shift:]
    moved = out[shift:]
    front = out[:shift]
    for i in range(head.size):  # (slice views: the loops vectorise, Note [slices] in cpu_reduce)
        moved[i] = head[i]
    for i in range(tail.size):
        front[i] = tail[i]


_roll_kernel = cached_njit(nogil=True)(_roll_copy)
_roll_entries: dict = {}  # dtype -> the compiled entry point, or False


def _roll_entry(dtype: np.dtype):
    entry = False
    if dtype.kind in "biufc":
        scalar = numba.from_dtype(dtype)
        # the input typed read-only: the entry takes writeable arrays too (Note [direct kernel
        # entry])
        sig = (numba.types.Array(scalar, 1, "C"),
               numba.types.Array(scalar, 1, "C", readonly=True), numba.types.int64)
        entry = _roll_kernel.compile(sig)
    _roll_entries[dtype] = entry
    return entry


def roll_flat(a, shift: int):
    """``np.roll(a, shift)`` as a new array for a 1-D C-contiguous ndarray of a numeric or bool
    dtype, or None for any other array."""
    if type(a) is not np.ndarray or a.ndim != 1:
        return None
    if not a.flags.c_contiguous:
        return None
    entry = _roll_entries.get(a.dtype)
    if entry is None:
        entry = _roll_entry(a.dtype)
    if entry is False:
        return None
    n = a.size
    out = np.empty(n, a.dtype)
    if n:
        entry(out, a, shift % n)
    return out
