"""A caching buffer pool for large kernel outputs, gradient buffers and temporaries.

Why: faulting in a fresh page is expensive, and glibc hands every large allocation (above its
mmap threshold, at most 32 MiB) fresh pages from ``mmap`` and gives them back on ``free``. A
backward over large arrays makes many such temporaries per call, so page faults took a large
share of its time (docs/design.md, 'Memory: a caching buffer pool' and 'Measurements behind the
code'). The pool keeps freed blocks and hands them out again, so a steady-state training loop
touches no fresh pages.

How: a block is a NumPy byte array owned by the pool. ``empty`` wraps a block in a small
``Lease`` object exposing ``__array_interface__`` and returns ``np.asarray(lease)``. NumPy keeps
the lease as the array's ``base`` (it never collapses a base chain through a non-ndarray), so
every view of the array keeps the lease alive, and the lease's ``__del__`` runs only when the
last array or view using the memory is gone: then the block goes back to its free list.

Sizes are rounded up to a size class (8 classes per power of two: at most 12.5% waste) and a
block serves any request of its class. Small requests (below ``MIN_BYTES``, 64 KiB) go to
NumPy, whose malloc reuses memory without faults at those sizes. Cached (free) bytes are capped at
``limit_bytes`` (``JITGRAD_POOL_LIMIT_MB``, default 1/4 of RAM up to 4 GiB): past the cap a
freed block is released to the system. ``empty_cache()`` releases every free block, and a
``MemoryError`` while growing empties the cache and retries once. Thread-safe: free lists are
guarded by a re-entrant lock (a lease can die, and return its block, inside a pool call on the
same thread when the garbage collector runs).
"""
from __future__ import annotations

import math
import os
import threading

import numpy as np

#: Requests smaller than this many bytes bypass the pool: a lease has a fixed cost per array, and
#: glibc reuses freed heap memory below this size without faults. Above it (a few hundred KB)
#: glibc trims and re-faults its heap, so those sizes are pooled (docs/design.md, 'Measurements
#: behind the code').
MIN_BYTES = 1 << 16


def _default_limit() -> int:
    env = os.environ.get("JITGRAD_POOL_LIMIT_MB")
    if env is not None:
        return int(float(env) * (1 << 20))
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 8 << 30
    return min(ram // 4, 4 << 30)


def size_class(nbytes: int) -> int:
    """``nbytes`` rounded up to the next of 8 evenly spaced sizes per power of two."""
    if nbytes <= 4096:
        return 4096
    step = 1 << max(nbytes.bit_length() - 4, 0)  # 1/8 of the enclosing power of two
    return (nbytes + step - 1) // step * step


class Lease:
    """Owner of one pooled block while any array uses it (see the module docstring); the base
    of every pooled array, which is how ``graph.node.sole_owner`` recognises one."""

    __slots__ = ("__array_interface__", "block", "pool")

    def __del__(self):
        pool = self.pool
        if pool is not None:
            pool._give_back(self.block)


# dtype as given -> (np.dtype, itemsize, hasobject): asked per allocation, and np.dtype(),
# isinstance(.., np.dtype) and the attribute reads each cost ~0.1-0.2 us
_DTYPE_FACTS: dict = {}


def _dtype_facts(spec) -> tuple:
    dtype = np.dtype(spec)
    facts = (dtype, dtype.itemsize, dtype.hasobject)
    try:
        _DTYPE_FACTS[spec] = facts
    except TypeError:  # unhashable: not cached
        pass
    return facts


class BufferPool:
    """Size-classed cache of byte blocks for one device's arrays."""

    def __init__(self, limit_bytes: int | None = None, min_bytes: int = MIN_BYTES):
        self.limit_bytes = _default_limit() if limit_bytes is None else limit_bytes
        self.min_bytes = min_bytes
        self.enabled = os.environ.get("JITGRAD_POOL", "1") != "0"
        self._free: dict[int, list] = {}
        self._lock = threading.RLock()
        self.cached_bytes = 0   # bytes in free blocks
        self.hits = 0
        self.misses = 0

    # -- allocation ------------------------------------------------------------------------
    def _pooled(self, shape, dtype):
        """``(shape, dtype, nbytes)`` normalised, with ``nbytes`` 0 when the array is not
        pooled (small arrays, the common case, are decided first; the pool off; objects)."""
        try:
            facts = _DTYPE_FACTS.get(dtype)
        except TypeError:  # an unhashable dtype spec (structured fields)
            facts = None
        if facts is None:
            facts = _dtype_facts(dtype)
        dtype, itemsize, hasobject = facts
        if type(shape) is not tuple:
            shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        nbytes = math.prod(shape) * itemsize
        if nbytes < self.min_bytes or not self.enabled or hasobject:
            nbytes = 0
        return shape, dtype, nbytes

    def _lease(self, shape, dtype, nbytes) -> np.ndarray:
        block = self._take(size_class(nbytes))
        lease = Lease()
        lease.block = block
        lease.pool = self
        lease.__array_interface__ = {"shape": shape, "typestr": dtype.str, "version": 3,
                                     "data": (block.__array_interface__["data"][0], False)}
        return np.asarray(lease)

    def empty(self, shape, dtype) -> np.ndarray:
        """An uninitialised C-contiguous array, from a cached block when one fits."""
        shape, dtype, nbytes = self._pooled(shape, dtype)
        return self._lease(shape, dtype, nbytes) if nbytes else np.empty(shape, dtype)

    def zeros(self, shape, dtype) -> np.ndarray:
        """Like ``np.zeros``, but filled pages are reused (``calloc`` maps fresh zero pages)."""
        shape, dtype, nbytes = self._pooled(shape, dtype)
        if not nbytes:
            return np.zeros(shape, dtype)
        out = self._lease(shape, dtype, nbytes)
        out.fill(0)
        return out

    def full(self, shape, value, dtype) -> np.ndarray:
        """Like ``np.full``, in a pooled buffer."""
        out = self.empty(shape, dtype)
        out.fill(value)
        return out

    def copy(self, a: np.ndarray) -> np.ndarray:
        """A C-contiguous copy of ``a`` in a pooled buffer."""
        out = self.empty(a.shape, a.dtype)
        np.copyto(out, a)
        return out

    def _take(self, cls: int) -> np.ndarray:
        with self._lock:
            free = self._free.get(cls)
            if free:
                self.cached_bytes -= cls
                self.hits += 1
                return free.pop()
            self.misses += 1
        try:
            return self._alloc(cls)
        except MemoryError:  # under pressure: give the cached blocks back, then try once more
            self.empty_cache()
            return self._alloc(cls)

    @staticmethod
    def _alloc(nbytes: int) -> np.ndarray:
        return np.empty(nbytes, np.uint8)

    def _give_back(self, block: np.ndarray) -> None:
        cls = block.size
        with self._lock:
            if self.cached_bytes + cls > self.limit_bytes:
                return  # over the cap: let the block's memory go back to the system
            self._free.setdefault(cls, []).append(block)
            self.cached_bytes += cls

    # -- control ---------------------------------------------------------------------------
    def empty_cache(self) -> None:
        """Release every free block to the system (blocks in use are unaffected)."""
        with self._lock:
            self._free.clear()
            self.cached_bytes = 0

    def stats(self) -> dict:
        """Counters for tests and tuning: hits, misses, cached bytes and blocks."""
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "cached_bytes": self.cached_bytes,
                    "cached_blocks": sum(len(v) for v in self._free.values()),
                    "limit_bytes": self.limit_bytes, "enabled": self.enabled}


#: The CPU device's pool.
CPU = BufferPool()


def empty_cache() -> None:
    """Release the memory cached by jitgrad's buffer pool (arrays in use are unaffected);
    like ``torch.cuda.empty_cache``. Later large allocations take fresh pages again."""
    CPU.empty_cache()


def memory_stats() -> dict:
    """The CPU buffer pool's counters: ``hits``, ``misses``, ``cached_bytes``, ``cached_blocks``,
    ``limit_bytes`` and ``enabled`` (``JITGRAD_POOL=0`` turns the pool off)."""
    return CPU.stats()
empty = CPU.empty
zeros = CPU.zeros
full = CPU.full
copy = CPU.copy
