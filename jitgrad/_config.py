"""Every environment setting jitgrad reads, read once at import.

Importing this module must stay cheap: it configures Numba (threading layer, cache dir)
but compiles nothing.

Variables
---------
JITGRAD_NUM_THREADS      kernel (intra-op) threads; default: the number of cores.
JITGRAD_NUM_INTEROP_THREADS  threads that run backward nodes of one graph at once (the calling
                         thread and workers); default: the number of cores (docs/engine.md).
JITGRAD_DEFAULT_DTYPE    "float64" (default) or "float32": the dtype Python floats become.
JITGRAD_CACHE_DIR        where compiled kernels are cached on disk; default
                         ``$XDG_CACHE_HOME/jitgrad`` (``~/.cache/jitgrad``). Kernels go to its
                         subdir ``<math mode>-<hash of jitgrad's sources>`` (Note [cache key]);
                         a read-only one is read, and what is missing compiles in memory.
JITGRAD_THREADING_LAYER  Numba threading layer to ask for: "tbb" (default), "omp" or "workqueue".
JITGRAD_FAST_MATH        "1" (default): kernels use jitgrad's vectorised transcendentals
                         (``kernels/cpu/vmath.py``, <= 1.5 ulp); "0": libm through Numba's ``math.*``,
                         bitwise what a plain Numba loop gives (docs/fastmath.md).
JITGRAD_POOL, JITGRAD_POOL_LIMIT_MB   the buffer pool switch and cap (``kernels/cpu/pool.py``).
JITGRAD_FUSION           "1" (default): backward runs each region of elementwise nodes with large
                         gradients as one generated kernel (Note [fused backward],
                         ``ops/core/fusion.py``); "0": one kernel per node and input.
JITGRAD_COMPILE          "1" (default); "0": functions wrapped by ``jitgrad.compile`` run eagerly.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import tempfile
import threading
import warnings

__version__ = "0.1.0"


def _default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    # (not keyed by version: the kernel dir inside is keyed by the sources, Note [cache key])
    return os.path.join(base, "jitgrad")


NUM_THREADS = max(1, int(os.environ.get("JITGRAD_NUM_THREADS", "0") or 0) or (os.cpu_count() or 1))
NUM_INTEROP_THREADS = max(1, int(os.environ.get("JITGRAD_NUM_INTEROP_THREADS", "0") or 0)
                          or (os.cpu_count() or 1))
DETERMINISTIC = False  # jitgrad.use_deterministic_algorithms
DETERMINISTIC_WARN_ONLY = False  # its warn_only
# How kernels inside a threaded backward choose serial vs parallel (docs/engine.md, 'Kernel
# threads vs engine workers', has the measured alternatives):
# "adaptive": parallel only while one thread does backward work; "parallel": always (threads
# oversubscribe the cores); "serial": never inside a backward.
KERNEL_POLICY = "adaptive"
engine_busy = 0  # threads doing backward work now (Note [engine busy count], engine/workers.py)
_threads_generation = 0  # bumped by set_num_threads: each thread re-applies it to Numba
DEFAULT_DTYPE = os.environ.get("JITGRAD_DEFAULT_DTYPE", "float64")
CACHE_DIR = os.path.abspath(os.environ.get("JITGRAD_CACHE_DIR") or _default_cache_dir())
REQUESTED_THREADING_LAYER = os.environ.get("JITGRAD_THREADING_LAYER", "tbb")
FAST_MATH = os.environ.get("JITGRAD_FAST_MATH", "1") != "0"
FUSION = os.environ.get("JITGRAD_FUSION", "1") != "0"
# JITGRAD_COMPILE=0: every jitgrad.compile'd function runs as plain eager calls
COMPILE = os.environ.get("JITGRAD_COMPILE", "1") != "0"
# Note [fused backward]: regions are fused from this many gradient elements on. Each new region
# shape compiles a kernel once (cached on disk); below this size the per-node costs it saves are
# small next to that (tests lower it to exercise fusion on small tensors).
FUSION_MIN_ELEMENTS = 1 << 14
KERNEL_CACHE_DIR = ""  # CACHE_DIR/<math mode>-<package digest>: set by _configure_numba
# True when KERNEL_CACHE_DIR exists but cannot be written (a read-only populated cache): it is
# read, never written, and what it lacks compiles in memory (Note [healing cache])
CACHE_READ_ONLY = False


def package_digest() -> str:
    """sha1 (hex) of jitgrad's own ``.py`` sources, names and contents.

    Note [cache key]: compiled kernels inline code from other modules (scalar bodies, vmath,
    smath, the optimizer formulas...), and Numba's cache checks only the kernel's own file; so
    the kernel cache dir is keyed by this hash of the whole package (an edit, or an upgrade
    between two commits of one version, starts a fresh dir), together with the math mode.
    Generated kernels also carry the hash of each body they inline (``kernels/sources.py``),
    which covers bodies defined outside jitgrad. Hashing the ~2 MB of sources takes a few
    milliseconds of ``import jitgrad`` (docs/design.md, 'Measurements behind the code').
    """
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1()
    found = False
    for dirpath, dirnames, filenames in os.walk(here):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        rel = os.path.relpath(dirpath, here).replace(os.sep, "/")
        for name in sorted(filenames):
            if name.endswith(".py"):
                try:
                    with open(os.path.join(dirpath, name), "rb") as fh:
                        data = fh.read()
                except OSError:
                    continue
                digest.update(f"{rel}/{name}\0{len(data)}\0".encode())
                digest.update(data)
                found = True
    if not found:  # no sources to read (a frozen or bytecode-only install): the version
        digest.update(__version__.encode())
    return digest.hexdigest()


def _cache_tag() -> str:
    """The kernel cache subdir: math mode (JITGRAD_FAST_MATH switches the scalar math every
    kernel inlines) and the package digest (Note [cache key])."""
    return ("fastmath-" if FAST_MATH else "libm-") + package_digest()[:16]


THREADING_LAYER_WARNING: str | None = None


def _preload_tbb() -> bool:
    """Make ``libtbb.so.12`` from the ``tbb`` wheel findable by Numba's tbbpool.

    Note [tbb preload]: ``pip install tbb`` puts the library in ``<prefix>/lib``, which has no
    RPATH from Numba's extension, so Numba silently falls back to ``omp``. Loading it first with
    RTLD_GLOBAL lets the later ``dlopen`` by name succeed.
    """
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix, sys.exec_prefix)):
        for name in ("libtbb.so.12", "libtbb.12.dylib", "tbb12.dll"):
            path = os.path.join(prefix, "lib", name)
            if os.path.exists(path):
                try:
                    ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
                    return True
                except OSError:
                    pass
    try:  # a system-wide install
        ctypes.CDLL("libtbb.so.12", mode=getattr(ctypes, "RTLD_GLOBAL", 0))
        return True
    except OSError:
        return False


KEEP_CACHE_DIRS = 4  # kernel dirs of other source digests kept (the most recently used)


def _prune_cache_dirs(base: str, current: str) -> None:
    """Note [cache key]: every edit or upgrade of jitgrad starts a kernel dir of its own; when
    one is made, the other digests' dirs beyond the KEEP_CACHE_DIRS most recently used are
    removed, unless used in the last hour (a process of another install may be using them)."""
    import re
    import shutil
    import time

    found = []
    try:
        with os.scandir(base) as entries:
            for entry in entries:
                if (entry.name != current and re.fullmatch(r"(fastmath|libm)-[0-9a-f]{16}",
                                                            entry.name)
                        and entry.is_dir(follow_symlinks=False)):
                    found.append((entry.stat().st_mtime, entry.path))
    except OSError:
        return
    found.sort(reverse=True)
    now = time.time()
    for used, path in found[KEEP_CACHE_DIRS:]:
        if now - used > 3600:
            shutil.rmtree(path, ignore_errors=True)


def _kernel_cache_dir(base: str, tag: str) -> tuple:
    """``(cache dir, kernel cache dir, read only)``: ``base/tag``, made if need be. A dir that
    exists but cannot be written (a read-only populated cache) is used for reading; when
    ``base/tag`` can neither be made nor found, a per-user temporary dir (with a warning): a
    read-only home must not make ``import jitgrad`` fail."""
    path = os.path.join(base, tag)
    made = not os.path.isdir(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        pass
    if os.path.isdir(path):
        read_only = not os.access(path, os.W_OK)
        if not read_only:
            try:
                os.utime(path)  # "last used": what _prune_cache_dirs goes by
            except OSError:
                pass
            if made:
                _prune_cache_dirs(base, tag)
        return base, path, read_only
    user = os.getuid() if hasattr(os, "getuid") else "user"
    fallback = os.path.join(tempfile.gettempdir(), f"jitgrad-{user}")
    warnings.warn(f"jitgrad: kernel cache dir {base!r} is not writable; using {fallback!r} "
                  "(set JITGRAD_CACHE_DIR to choose another)", RuntimeWarning, stacklevel=3)
    os.makedirs(os.path.join(fallback, tag), exist_ok=True)
    return fallback, os.path.join(fallback, tag), False


def _configure_numba() -> None:
    global THREADING_LAYER_WARNING, CACHE_DIR, KERNEL_CACHE_DIR, CACHE_READ_ONLY
    CACHE_DIR, KERNEL_CACHE_DIR, CACHE_READ_ONLY = _kernel_cache_dir(CACHE_DIR, _cache_tag())
    import numba

    numba.config.CACHE_DIR = KERNEL_CACHE_DIR
    layer = REQUESTED_THREADING_LAYER
    if layer == "tbb" and not _preload_tbb():
        THREADING_LAYER_WARNING = (
            "jitgrad: the tbb threading layer is not available (pip install tbb); "
            "falling back to Numba's 'omp' layer, which stalls under contention")
        warnings.warn(THREADING_LAYER_WARNING, RuntimeWarning, stacklevel=3)
        layer = "omp"
    # Numba's default 'workqueue' layer aborts the process when two threads enter parallel
    # kernels at once (DESIGN-NUMBA.md); never let it be picked implicitly.
    numba.config.THREADING_LAYER = layer
    # numba.set_num_threads is applied by the device layer before the first parallel kernel:
    # calling it here would start the thread pool at import.


class _KernelThreadState(threading.local):
    generation = -1  # the _threads_generation applied to Numba on this thread


_kernel_tls = _KernelThreadState()
_SAFE_LAYERS = ("tbb", "omp", "threadsafe")


def parallel_kernels() -> bool:
    """Whether a kernel about to run on this thread may use its parallel variant.

    The device layer asks this (only for inputs above its size threshold) before launching a
    parallel kernel. False when kernels are set to one thread; while several threads do backward
    work, unless KERNEL_POLICY says otherwise (no oversubscription: each runs serial kernels);
    and off the main thread when the threading layer is one that aborts the process on two
    concurrent parallel regions (Numba's workqueue): then only the main thread ever enters one.
    Applies ``set_num_threads`` to Numba on this thread (Numba's setting is per thread).
    """
    if NUM_THREADS <= 1:
        return False
    if engine_busy and KERNEL_POLICY != "parallel":
        if engine_busy > 1 or KERNEL_POLICY == "serial":
            return False
    import numba

    if (numba.config.THREADING_LAYER not in _SAFE_LAYERS
            and threading.current_thread() is not threading.main_thread()):
        return False
    if _kernel_tls.generation != _threads_generation:
        numba.set_num_threads(min(NUM_THREADS, numba.config.NUMBA_NUM_THREADS))
        _kernel_tls.generation = _threads_generation
    return True


def threading_layer() -> str:
    """The Numba threading layer in use (or requested, if no parallel kernel ran yet)."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:  # no parallel kernel launched yet
        return f"{numba.config.THREADING_LAYER} (requested; no parallel kernel has run yet)"


_configure_numba()
