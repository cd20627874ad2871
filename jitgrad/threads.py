"""Thread and determinism settings, named like PyTorch's.

* kernel (intra-op) threads: how many threads one parallel kernel uses
  (``set_num_threads``, env ``JITGRAD_NUM_THREADS``);
* inter-op threads: how many threads run nodes of one backward graph at once, the calling thread
  included (``set_num_interop_threads``, env ``JITGRAD_NUM_INTEROP_THREADS``);
* ``use_deterministic_algorithms``: fixed gradient accumulation order, bitwise-reproducible
  backward results whatever the thread timing.

How the two thread counts share the cores is described in docs/engine.md.
"""
from __future__ import annotations

import operator

from . import _config
from .engine import workers

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled"]


def _positive(n, fn: str) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fn}(): argument must be int, not {type(n).__name__}") from None
    if n < 1:
        raise RuntimeError(f"{fn}(): expected a positive number of threads, got {n}")
    return n


def set_num_threads(n: int) -> None:
    """Set the number of threads a parallel kernel uses (intra-op parallelism).

    Parameters
    ----------
    n : int
        At least 1. ``1`` makes every kernel serial. Numba's thread pool is sized when it
        starts (``NUMBA_NUM_THREADS``, default: the number of cores); a larger ``n`` is capped
        at that size. Takes effect on every thread at its next parallel kernel.
    """
    _config.NUM_THREADS = _positive(n, "set_num_threads")
    _config._threads_generation += 1


def get_num_threads() -> int:
    """The number of threads a parallel kernel uses (see ``set_num_threads``)."""
    return _config.NUM_THREADS


def set_num_interop_threads(n: int) -> None:
    """Set how many threads may run nodes of one backward graph at the same time.

    Parameters
    ----------
    n : int
        At least 1: the thread that calls ``backward()`` plus ``n - 1`` worker threads, which
        start when first needed. ``1`` runs every node on the calling thread (PyTorch's CPU
        behaviour). Unlike PyTorch's, it may be changed at any time; surplus workers go idle.
    """
    _config.NUM_INTEROP_THREADS = _positive(n, "set_num_interop_threads")
    workers.POOL.resize()


def get_num_interop_threads() -> int:
    """How many threads may run nodes of one backward graph at once (see
    ``set_num_interop_threads``)."""
    return _config.NUM_INTEROP_THREADS


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make backward results bitwise reproducible from run to run.

    With ``mode=True`` the engine adds the gradients that meet at a node in a fixed order (by
    the producing node's ``sequence_nr`` and edge), whichever thread finished first, and with
    any number of inter-op threads. Reductions are already deterministic (fixed blocking,
    independent of the thread count). Applies to backward calls started afterwards.

    Parameters
    ----------
    mode : bool
        Turn deterministic mode on or off.
    warn_only : bool
        Kept for ``is_deterministic_algorithms_warn_only_enabled``; jitgrad has no
        nondeterministic op to warn about.
    """
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got "
                        f"{type(mode).__name__}")
    _config.DETERMINISTIC = mode
    _config.DETERMINISTIC_WARN_ONLY = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _config.DETERMINISTIC
