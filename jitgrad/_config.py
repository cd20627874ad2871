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
                         ``$XDG_CACHE_HOME/jitgrad/<version>`` (``~/.cache/jitgrad/<version>``).
JITGRAD_THREADING_LAYER  Numba threading layer to ask for: "tbb" (default), "omp" or "workqueue".
JITGRAD_FAST_MATH        "1" (default): kernels use jitgrad's vectorised transcendentals
                         (``device/vmath.py``, <= 1.5 ulp); "0": libm through Numba's ``math.*``,
                         bitwise what a plain Numba loop gives (docs/fastmath.md).
JITGRAD_POOL, JITGRAD_POOL_LIMIT_MB   the buffer pool switch and cap (``device/pool.py``).
JITGRAD_FUSION           "1" (default): backward runs each region of elementwise nodes with large
                         gradients as one generated kernel (Note [fused backward],
                         ``ops/fusion.py``); "0": one kernel per node and input.
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
    # Keyed by version: a changed helper in another module can leave cached callers stale.
    return os.path.join(base, "jitgrad", __version__)


NUM_THREADS = max(1, int(os.environ.get("JITGRAD_NUM_THREADS", "0") or 0) or (os.cpu_count() or 1))
NUM_INTEROP_THREADS = max(1, int(os.environ.get("JITGRAD_NUM_INTEROP_THREADS", "0") or 0)
                          or (os.cpu_count() or 1))
DETERMINISTIC = False  # jitgrad.use_deterministic_algorithms
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
KERNEL_CACHE_DIR = ""  # CACHE_DIR/<math tag>: set by _configure_numba


def _math_tag() -> str:
    """Compiled kernels inline the scalar math they call, and Numba's cache checks only the
    kernel's own source file: key the compiled-code dir by the math mode and the math sources,
    so switching JITGRAD_FAST_MATH or editing vmath/smath/special_scalar/optim_updates never
    loads a stale kernel."""
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1()
    # optim_updates.py: the update formulas inlined into the optimizer loops (device/cpu_optim.py)
    # smath.py and vmath.py in both modes: smath's overloads hold the integer and libm forms
    # too, and some of those (rint) live in vmath; special_scalar.py: the gamma family's
    sources = [("device", "optim_updates.py"), ("ops", "smath.py"), ("device", "vmath.py"),
               ("device", "special_scalar.py")]
    for rel in sources:
        with open(os.path.join(here, *rel), "rb") as fh:
            digest.update(fh.read())
    return ("fastmath-" if FAST_MATH else "libm-") + digest.hexdigest()[:10]
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


def _writable_cache_dir(path: str) -> str:
    """``path`` if it can be created and written, else a per-user temporary dir (with a
    warning): a read-only home must not make ``import jitgrad`` fail."""
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    user = os.getuid() if hasattr(os, "getuid") else "user"
    fallback = os.path.join(tempfile.gettempdir(), f"jitgrad-{user}", __version__)
    warnings.warn(f"jitgrad: kernel cache dir {path!r} is not writable; using {fallback!r} "
                  "(set JITGRAD_CACHE_DIR to choose another)", RuntimeWarning, stacklevel=3)
    os.makedirs(fallback, exist_ok=True)
    return fallback


def _configure_numba() -> None:
    global THREADING_LAYER_WARNING, CACHE_DIR, KERNEL_CACHE_DIR
    CACHE_DIR = _writable_cache_dir(CACHE_DIR)
    KERNEL_CACHE_DIR = os.path.join(CACHE_DIR, _math_tag())
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
