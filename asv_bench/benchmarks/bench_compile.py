"""Compile latency: the first forward+backward of W2 (n=1e6, float64) in a fresh interpreter.

``timeraw_`` benchmarks run in a new process; the timed statement imports jitgrad, compiles (cold:
empty kernel cache) or loads (warm: a cache filled in ``setup``) every kernel W2 needs, and runs it.
Interpreter start-up and ``import numpy`` are in the untimed set-up.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from .workloads import first_backward_code, first_backward_script

_KEY, _DTYPE = "W2", "float64"
_WARM = {}


def _with_cache_dir(setup, cache_dir_expr):
    return ("import os, atexit, shutil, tempfile\n"
            f"os.environ['JITGRAD_CACHE_DIR'] = {cache_dir_expr}\n") + setup


def timeraw_first_backward_cold():
    """Empty kernel cache: import + compile every kernel + run."""
    stmt, setup = first_backward_code("jitgrad", _KEY, None, _DTYPE)
    setup = _with_cache_dir(setup, "tempfile.mkdtemp(prefix='jitgrad-asv-cold-')")
    setup += "atexit.register(shutil.rmtree, os.environ['JITGRAD_CACHE_DIR'], True)\n"
    return stmt, setup


timeraw_first_backward_cold.repeat = (1, 3, 120.0)
timeraw_first_backward_cold.number = 1
timeraw_first_backward_cold.timeout = 600


def _fill_warm_cache():
    _WARM["dir"] = tempfile.mkdtemp(prefix="jitgrad-asv-warm-")
    env = dict(os.environ, JITGRAD_CACHE_DIR=_WARM["dir"])
    subprocess.run([sys.executable, "-c", first_backward_script("jitgrad", _KEY, None, _DTYPE)],
                   env=env, check=True, capture_output=True)


def _remove_warm_cache():
    shutil.rmtree(_WARM.pop("dir", ""), ignore_errors=True)


def timeraw_first_backward_warm():
    """Kernel cache filled by an earlier process: import + load every kernel + run."""
    stmt, setup = first_backward_code("jitgrad", _KEY, None, _DTYPE)
    return stmt, _with_cache_dir(setup, repr(_WARM.get("dir", "")))


timeraw_first_backward_warm.setup = _fill_warm_cache
timeraw_first_backward_warm.teardown = _remove_warm_cache
timeraw_first_backward_warm.repeat = (2, 5, 60.0)
timeraw_first_backward_warm.number = 1
timeraw_first_backward_warm.timeout = 600


# --- jitgrad.compile: trace + code generation of W6 and W7 in a new process -----------------
_COMPILE_WARM = {}


def _compile_script(key):
    """A script printing the seconds of the first compiled call of ``key`` (trace, generated
    code, first run), after the untimed import and one untimed eager op: Numba's own start-up
    (~1 s here, paid by the first kernel of any process) is not part of compiling ``key``."""
    stmt, setup = first_backward_code("jitgrad-compile", key, None, _DTYPE)
    stmt_import, stmt_run = stmt.splitlines()
    return (setup + stmt_import + "\nimport jitgrad\n(jitgrad.tensor([1.0]) * 2.0).sum()\n"
            "_t0 = time.perf_counter()\n" + stmt_run + "\nprint(time.perf_counter() - _t0)\n")


def _first_compiled_call(key, cache_dir):
    env = dict(os.environ, JITGRAD_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", _compile_script(key)], env=env, check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


class CompileTime:
    """Seconds of the first ``jitgrad.compile`` call of W6 / W7 / W10 in a new process: ``cold``
    with an empty kernel cache, ``cached`` with the cache an earlier process filled."""

    params = [["W6", "W7", "W10"]]
    param_names = ["workload"]
    timeout = 900
    unit = "seconds"

    def setup(self, key):
        self.dir = tempfile.mkdtemp(prefix="jitgrad-asv-compile-")

    def teardown(self, key):
        shutil.rmtree(self.dir, ignore_errors=True)

    def track_cold(self, key):
        return _first_compiled_call(key, self.dir)

    def track_cached(self, key):
        _first_compiled_call(key, self.dir)
        return _first_compiled_call(key, self.dir)
