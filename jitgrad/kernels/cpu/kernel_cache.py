"""The on-disk kernel cache: generated kernel sources and Numba's compiled code, self-healing.

Note [healing cache]: jitgrad writes two kinds of files under ``_config.KERNEL_CACHE_DIR``
(a dir keyed by the math mode and jitgrad's own sources, Note [cache key] in ``_config``):

- generated kernel sources, ``kernels/<name>.py`` (``load_generated``; their names hash their
  text, which carries the hash of every body they inline: Note [source keys] in
  ``sources.py``);
- Numba's cache of compiled code for every jitgrad kernel: per function an index
  ``<module>.<function>-<line>.py<XY>.nbi`` and a data file per signature, ``<...>.nbc``, in
  ``nb_kernels/`` (generated kernels) or ``nb_jitgrad.<subpackage>/`` (hand-written ones)
  (``njit``: ``numba.njit`` with this module's cache, ``HealingCache``).

No such file can break jitgrad:

- A generated source is compared byte for byte with the text it should hold before it is run
  (never imported as it is, and no ``.pyc`` is written for it): a truncated, empty or
  overwritten file is reported once (``RuntimeWarning`` naming it) and rewritten.
- A Numba index or data file that fails to load (any exception: truncated, empty, garbage, or
  a data file the index names that is gone) is reported once, removed, and the kernel is
  recompiled and saved again. Numba itself does not guard this (numba#10434).
- Writes are atomic: a temporary file in the same dir, flushed and fsync'ed, then
  ``os.replace``; Numba's data file is written before the index entry naming it, under a
  name of its own per signature (two processes saving two signatures at once cannot swap
  their code).
- A full disk (or any failed write) gives one warning; the process then compiles in memory
  and writes nothing more. A read-only cache dir (``_config.CACHE_READ_ONLY``) is read, never
  written: what it holds loads, what it lacks compiles in memory (silently).
"""
from __future__ import annotations

import contextlib
import hashlib
import inspect
import linecache
import os
import sys
import threading
import types
import warnings

import numba
from numba.core import caching, sigutils

from ... import _config
from .. import sources

_reported: set = set()      # files reported in this process (each once)
_write_error: list = []     # the first failed write of this process: no more writes after it
_load_lock = threading.RLock()


def writes_allowed() -> bool:
    """Whether this process writes to the kernel cache (not read-only, no write failed)."""
    return not _config.CACHE_READ_ONLY and not _write_error


def _report(path: str, what: str) -> None:
    if path in _reported:
        return
    _reported.add(path)
    warnings.warn(f"jitgrad: kernel cache file {path} {what}", RuntimeWarning, stacklevel=3)


def _write_failed(path: str, exc: OSError) -> None:
    """A write into the cache failed (a full disk, a dir another user owns...): warn once,
    and write nothing more in this process (it compiles in memory)."""
    if _write_error:
        return
    _write_error.append(exc)
    warnings.warn(f"jitgrad: cannot write the kernel cache ({path}: {exc.strerror or exc}); "
                  "kernels compile in memory for the rest of this process (free some space, or "
                  "set JITGRAD_CACHE_DIR)", RuntimeWarning, stacklevel=3)


def _remove(path: str) -> bool:
    try:
        os.remove(path)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= 120 else text[:117] + "..."


@contextlib.contextmanager
def _atomic_file(path: str):
    """A binary file object whose contents replace ``path`` atomically once the block ends
    (flushed and fsync'ed first); on an error the temporary file is removed."""
    tmp = f"{path}.{os.getpid()}.{os.urandom(6).hex()}.tmp"  # (not uuid: 1-2 ms of import)
    try:
        with open(tmp, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_atomic(path: str, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically; False (after one warning per process) when the
    cache cannot be written."""
    if not writes_allowed():
        return False
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with _atomic_file(path) as fh:
            fh.write(data)
        return True
    except OSError as exc:
        _write_failed(path, exc)
        return False


# ---- generated kernel sources -------------------------------------------------------------

def kernel_dir() -> str:
    """Where generated kernel sources live."""
    return os.path.join(_config.KERNEL_CACHE_DIR, "kernels")


def load_generated(name: str, source: str):
    """The module ``jitgrad._kernels.<name>`` running generated ``source``, kept as
    ``<kernel dir>/<name>.py`` (Note [generated kernels] in ``cpu.py``: a real file, so
    Numba's disk cache works for what it defines). The file is checked against ``source``
    and rewritten when it differs (Note [healing cache]); when it cannot be written the module
    runs from memory and its kernels compile in memory."""
    modname = f"jitgrad._kernels.{name}"
    module = sys.modules.get(modname)
    if module is not None:
        return module
    with _load_lock:  # one thread runs the module; the others wait for it to be complete
        module = sys.modules.get(modname)
        if module is None:
            module = _load_file(modname, name, source)
    return module


def _damage(found: bytes, wanted: bytes) -> str:
    if not found:
        return "is empty"
    if wanted.startswith(found):
        return "is truncated"
    return "holds other bytes than jitgrad wrote"


def _load_file(modname: str, name: str, source: str):
    path = os.path.join(kernel_dir(), name + ".py")
    data = source.encode()
    try:
        with open(path, "rb") as fh:
            found = fh.read()
    except OSError:  # (missing: a cold cache)
        found = None
    filename = path
    if found != data:
        written = write_atomic(path, data)
        if found is not None:
            _report(path, f"{_damage(found, data)}; "
                    + ("it was rewritten" if written else "its kernels compile in memory"))
        if not written:
            filename = f"<jitgrad generated kernel {name}>"
            lines = source.splitlines(True)
            linecache.cache[filename] = (len(source), None, lines, filename)  # for tracebacks
    module = types.ModuleType(modname)
    module.__file__ = filename
    # run the text itself (equal to the file's): no .pyc is written, none can be damaged
    exec(compile(source, filename, "exec"), module.__dict__)
    sys.modules[modname] = module  # published once complete
    return module


# ---- Numba's compiled code ----------------------------------------------------------------

def njit(*args, **options):
    """``numba.njit(..., cache=True)`` with the healing cache of Note [healing cache]: use it
    (as a decorator, with or without options) for every kernel jitgrad caches on disk. A
    function with no source file (a generated module run from memory) is not cached."""
    options.pop("cache", None)

    def wrap(fn):
        disp = numba.njit(**options)(fn)
        enable_cache(disp)
        return disp
    if args and callable(args[0]) and not options:
        return wrap(args[0])
    return wrap


_INLINE_COPIES: dict = {}
#: the options a generated caller compiles with (Note [inlined callees] in compile/native.py)
CALLER_OPTIONS = {"nogil": True, "error_model": "numpy"}


class CheckFailed(Exception):
    """Raised by generated code whose value check failed (Note [value checks] in
    ``ops/checks.py``): its caller runs the same work again step by step, where the row's own
    forward raises the user's error with the values."""


def inline_copy(disp):
    """Dispatcher ``disp`` as generated callers call it (Note [inlined callees] in
    ``compile/native.py``): an ``inline='always'`` copy of its Python function, whose code the
    caller types and optimises once as part of its own, when ``disp`` compiles with the
    caller's options; else ``disp`` itself (a call: a fast-math or parallel kernel keeps its
    own flags)."""
    copy = _INLINE_COPIES.get(disp)
    if copy is None:
        options = disp.targetoptions
        same = (not options.get("fastmath") and not options.get("parallel")
                and not options.get("boundscheck")
                and all(options.get(k) == v for k, v in CALLER_OPTIONS.items()))
        copy = numba.njit(inline="always", **CALLER_OPTIONS)(disp.py_func) if same else disp
        _INLINE_COPIES[disp] = copy
    return copy


def read_only_inputs(disp, written):
    """Dispatcher ``disp`` (a kernel writing the arguments at positions ``written``, negative
    ones counted from the end, and only reading the others) compiling every input array typed
    read-only.

    Note [read-only inputs]: Numba types a read-only array (a broadcast view, the gradient a
    reduction's backward expands, ``Tensor.numpy()`` of a tensor that requires grad) apart
    from a writeable one, and its dispatcher compiles a specialisation per combination: a
    two-input kernel up to four times, the same machine code each time (a kernel never writes
    its inputs). Here every call compiles (or loads from the disk cache) the one
    specialisation with read-only inputs, and the argument types it was called with are
    registered to the same compiled entry, so the next such call finds it without compiling.
    Only writeable arrays are mapped onto read-only parameters (the safe direction: the code
    does not write them); outputs keep their types. Jitted callers type their calls against
    the same specialisation (Numba converts a writeable array to a read-only parameter)."""
    compile_exact = disp.compile

    def compile(sig):
        args, return_type = sigutils.normalize_signature(sig)
        outputs = {k % len(args) for k in written}
        wanted = tuple(a.copy(readonly=True) if k not in outputs
                       and isinstance(a, numba.types.Array) and a.mutable else a
                       for k, a in enumerate(args))
        entry = compile_exact(wanted if return_type is None else return_type(*wanted))
        if wanted != tuple(args):
            disp._insert([a._code for a in args], entry, False)
        return entry
    disp.compile = compile
    return disp


def enable_cache(disp) -> None:
    """Give Numba dispatcher ``disp`` the healing disk cache (what ``cache=True`` would do)."""
    try:
        path = inspect.getfile(disp.py_func)
    except TypeError:
        return
    if os.path.isfile(path):
        disp._cache = HealingCache(disp.py_func)


#: jitgrad/ (this file is jitgrad/kernels/cpu/kernel_cache.py)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Locator(caching._CacheLocator):
    """Numba's user-provided-dir scheme, rooted at ``_config.KERNEL_CACHE_DIR``, with three
    differences: a dir that is not writable still serves loads (a read-only cache); the source
    stamp is a content hash of the function's file; and the subdir of a file inside the kernel
    cache dir or inside jitgrad is named by its path relative to those (``nb_kernels``,
    ``nb_jitgrad.kernels.cpu``), not by a hash of its absolute path, so a populated cache still
    serves when it (or jitgrad) is copied or mounted elsewhere (the dir is keyed by contents:
    Note [cache key])."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(_config.KERNEL_CACHE_DIR, self._subpath(py_file))

    @classmethod
    def _subpath(cls, py_file):
        folder = os.path.dirname(os.path.abspath(py_file))
        for root, prefix in ((_config.KERNEL_CACHE_DIR, "nb_"), (_PACKAGE_DIR, "nb_jitgrad.")):
            rel = os.path.relpath(folder, root)
            if rel != os.curdir and not rel.startswith(os.pardir) and not os.path.isabs(rel):
                return prefix + rel.replace(os.sep, ".")
        return cls.get_suitable_cache_subpath(py_file)

    def ensure_cache_path(self):
        os.makedirs(self._cache_path, exist_ok=True)

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return sources.file_digest(self._py_file)

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        return cls(py_func, py_file)


class _Impl(caching.CompileResultCacheImpl):
    def __init__(self, py_func):  # (no search through Numba's locators: always ours)
        self._lineno = py_func.__code__.co_firstlineno
        source = inspect.getfile(py_func)
        self._locator = _Locator(py_func, source)
        modname = os.path.splitext(os.path.basename(source))[0]
        qualname = getattr(py_func, "__qualname__", py_func.__name__)
        self._filename_base = self.get_filename_base(f"{modname}.{qualname}",
                                                     getattr(sys, "abiflags", ""))


class _IndexDataFile(caching.IndexDataCacheFile):
    """Numba's index and data files, written data first (an index never names a data file not
    yet written), one data file per key, each fsync'ed before it replaces the old one."""

    def save(self, key, data):
        base = self._index_name[:-len(".nbi")]
        name = f"{base}.{hashlib.sha1(repr(key).encode()).hexdigest()[:16]}.nbc"
        self._save_data(name, data)
        try:
            overloads = self._load_index()
        except Exception:  # a damaged index (reported by the load before): start it afresh
            overloads = {}
        if overloads.get(key) != name:
            overloads[key] = name
            self._save_index(overloads)

    def _open_for_write(self, filepath):
        return _atomic_file(filepath)


class HealingCache(caching.FunctionCache):
    """Numba's per-function disk cache, healing (Note [healing cache])."""

    _impl_class = _Impl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _IndexDataFile(cache_path=self._cache_path,
                                          filename_base=self._impl.filename_base,
                                          source_stamp=self._impl.locator.get_source_stamp())

    def _heal(self, path: str, what: str, remove: bool = True) -> None:
        name = f"{self._impl.filename_base.split('-')[0]}"  # module.function
        if not writes_allowed():
            done = f"{name} compiles in memory"
        elif remove and _remove(path):
            done = f"removed it and recompiled {name}"
        else:
            done = f"recompiled {name}"
        _report(path, f"{what}; {done}")

    def load_overload(self, sig, target_context):
        target_context.refresh()
        if not self._enabled:
            return None
        cache_file = self._cache_file
        key = self._index_key(sig, target_context.codegen())
        try:
            overloads = cache_file._load_index()
        except Exception as exc:
            self._heal(cache_file._index_path, f"could not be loaded ({_short(exc)})")
            return None
        name = overloads.get(key)
        if name is None:
            return None
        path = cache_file._data_path(name)
        try:
            data = cache_file._load_data(name)
        except FileNotFoundError:
            self._heal(path, f"is missing (the index {cache_file._index_path} names it)",
                       remove=False)
            return None
        except Exception as exc:
            self._heal(path, f"could not be loaded ({_short(exc)})")
            return None
        try:
            cres = self._impl.rebuild(target_context, data)
        except Exception as exc:
            self._heal(path, f"could not be loaded ({_short(exc)})")
            return None
        args, _ = sigutils.normalize_signature(sig)
        if tuple(cres.signature.args) != tuple(args):  # (not this signature's code: compile)
            return None
        return cres

    def save_overload(self, sig, data):
        if not writes_allowed():
            return
        try:
            super().save_overload(sig, data)
        except OSError as exc:
            _write_failed(self._cache_path, exc)
