"""SciPy's OpenBLAS thread pool, held at one thread around jitgrad's calls on small matrices.

Note [two BLAS pools]: the NumPy and SciPy wheels each bundle an OpenBLAS, each with a pool of
one thread per core whose threads keep spinning a while after a call. jitgrad's matrix
products go through NumPy's, its triangular solves and LAPACK factorizations through SciPy's;
on a program alternating them on small matrices the two pools' spinning threads take the cores
from each other. A Gaussian-process likelihood and its gradient at n = 200 (W12) took 7.7 ms
with both pools at two threads on 2 cores and 1.9 ms with SciPy's at one (docs/benchmarks.md);
a multithreaded BLAS gains little on such matrices anyway. So a call of SciPy's BLAS or LAPACK
on matrices of order at most ``SMALL_ORDER`` runs with SciPy's pool set to one thread, and the
pool's setting is put back after the call (a user's own SciPy calls keep theirs). Setting the
count within the pool's size only writes OpenBLAS's thread-count variable (no thread is made),
so a call on another thread at the same moment is at worst run with the other count. Where
SciPy's OpenBLAS is not found (another BLAS, another layout), nothing is changed.
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import os

#: matrices of at most this order run SciPy's BLAS/LAPACK single-threaded
SMALL_ORDER = 512

_pool: list = []  # [(set_num_threads, get_num_threads) or None], found on first use


def _find():
    try:
        import scipy
    except ImportError:  # pragma: no cover (scipy is a dependency)
        return None
    site = os.path.dirname(os.path.dirname(scipy.__file__))
    for path in glob.glob(os.path.join(site, "scipy.libs", "libscipy_openblas*.so*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_", ""):
            setter = getattr(lib, prefix + "openblas_set_num_threads", None)
            getter = getattr(lib, prefix + "openblas_get_num_threads", None)
            if setter is not None and getter is not None:
                setter.argtypes, getter.restype = [ctypes.c_int], ctypes.c_int
                return setter, getter
    return None


@contextlib.contextmanager
def small_call(order: int):
    """Note [two BLAS pools]: SciPy's pool at one thread during a call on matrices of
    ``order`` at most ``SMALL_ORDER``; its setting restored after."""
    if order > SMALL_ORDER:
        yield
        return
    if not _pool:
        _pool.append(_find())
    pool = _pool[0]
    before = pool[1]() if pool is not None else 1
    if before <= 1:
        yield
        return
    pool[0](1)
    try:
        yield
    finally:
        pool[0](before)
