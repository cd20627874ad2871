"""Source hashes: what a generated kernel or a cached compile was made from.

Note [source keys]: Numba's on-disk cache checks only the source file of the function it
compiles, never the bodies that function inlines (an op row's scalar body, a backward rule)
nor the helper modules those call. So every generated kernel source carries, in its text, the
``body_digest`` of each body it imports: the generated file's name is a hash of its text, so an
edited body makes a new file (compiled afresh), never a stale hit. The cache directory itself
is keyed by the hash of all of jitgrad's sources (``_config.package_digest``), which covers the
helpers inside jitgrad (``vmath``, ``smath``, ...) and an upgrade between two commits of one
version. ``kernels/cpu/elementwise.py``, ``ops/core/fusion.py``, ``compile/codegen.py`` and ``compile/loop.py``
(through codegen's imports) all key their files here, and nowhere else.

The digests are content hashes (stable across processes and file copies), memoised per file by
``(path, mtime, size)`` and per body, so a kernel build pays for each file once per process.
"""
from __future__ import annotations

import hashlib
import inspect
import marshal
import os
import sys
import threading
import types

_files: dict = {}    # path -> ((mtime_ns, size), sha1 hex of the content)
_bodies: dict = {}   # function -> digest
_lock = threading.Lock()


def file_digest(path: str) -> str:
    """sha1 (hex) of the file's bytes; "" when it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    stamp = (st.st_mtime_ns, st.st_size)
    entry = _files.get(path)
    if entry is not None and entry[0] == stamp:
        return entry[1]
    try:
        with open(path, "rb") as fh:
            digest = hashlib.sha1(fh.read()).hexdigest()
    except OSError:
        return ""
    _files[path] = (stamp, digest)
    return digest


def _module_file(name) -> str | None:
    module = sys.modules.get(name) if isinstance(name, str) else name
    path = getattr(module, "__file__", None)
    return path if path and path.endswith(".py") else None


def _names(code) -> set:
    """Global names read by ``code`` and the code objects nested in it (comprehensions,
    lambdas)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _helper_files(fn) -> list:
    """The source files of the modules ``fn`` reads helpers from: its own module, and one
    level of the modules and functions its globals name (``vmath.exp``, ``from m import f``)."""
    files = {_module_file(getattr(fn, "__module__", None))}
    glb = getattr(fn, "__globals__", {})
    for name in _names(fn.__code__):
        value = glb.get(name)
        if value is None:
            continue
        if isinstance(value, types.ModuleType):
            files.add(_module_file(value))
        else:
            owner = getattr(value, "__module__", None)
            if isinstance(owner, str):
                files.add(_module_file(owner))
    return sorted(f for f in files if f)


def body_digest(fn) -> str:
    """A 16-hex-digit hash of a scalar body's own source and of the sources of its helper
    modules (Note [source keys]). Accepts a plain function or a Numba dispatcher."""
    fn = getattr(fn, "py_func", fn)
    digest = _bodies.get(fn)
    if digest is not None:
        return digest
    h = hashlib.sha1()
    try:
        h.update(inspect.getsource(fn).encode())
    except (OSError, TypeError):  # no source file (exec'd): its compiled code stands in
        code = getattr(fn, "__code__", None)
        h.update(marshal.dumps(code) if code is not None else repr(fn).encode())
    if hasattr(fn, "__code__"):
        for path in _helper_files(fn):
            h.update(b"\0" + file_digest(path).encode())  # contents only: copies hash alike
    digest = h.hexdigest()[:16]
    with _lock:
        _bodies[fn] = digest
    return digest


def digest_of(*bodies) -> str:
    """One hash for several bodies (in the order given)."""
    return hashlib.sha1("".join(body_digest(b) for b in bodies).encode()).hexdigest()[:16]
