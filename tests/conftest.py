"""Starts the CUDA simulator suite of tests/test_cuda_simulator.py at the very beginning of a run.

That suite (``pytest tests/cuda`` under ``NUMBA_ENABLE_CUDASIM=1``) runs in a child process of
its own for about five minutes on one core. Run from the test's fixture, it would start only
when xdist reaches that file, late in the run, and the end of the run would be that child alone
on one core while the other cores idle. So the controller (or a run without xdist) starts it in
``pytest_configure``, before any test or xdist worker, whenever the run includes
tests/test_cuda_simulator.py, and publishes the directory it writes to in ``JITGRAD_CUDASIM_EARLY``
(set before the workers start, so they inherit it): ``output.log`` (its stdout and stderr),
``launches.jsonl`` (the kernel launches it recorded) and, once it is done, ``rc`` (its exit
status, written by tests/cudasim_supervise.py). The fixture then waits for ``rc``; without the
variable it runs the child itself, as before. ``pytest_unconfigure`` kills a child that is still
running (an interrupted run, or one that never reached the test) and removes the directory.
"""
import fnmatch
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SIMULATOR_TESTS = ROOT / "tests" / "test_cuda_simulator.py"
EARLY_ENV = "JITGRAD_CUDASIM_EARLY"
TIMEOUT = 1500  # seconds, for the simulator suite
# options with which no test runs, or which may leave the simulator tests out: no early start
_NO_EARLY_OPTIONS = ("collectonly", "help", "version", "showfixtures", "show_fixtures_per_test",
                     "markers", "setupplan", "keyword", "markexpr", "lf", "stepwise", "pyargs")
_EARLY = pytest.StashKey[subprocess.Popen]()


def simulator_command(records):
    """The arguments (after the interpreter) and environment of the simulator suite's child:
    ``pytest tests/cuda`` under Numba's simulator, recording kernel launches to ``records``."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", JITGRAD_RECORD_LAUNCHES=str(records))
    env.pop("JITGRAD_TEST_CUDA", None)
    env.pop(EARLY_ENV, None)
    args = ["-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "-p", "no:xdist",
            str(ROOT / "tests" / "cuda")]
    return args, env


@pytest.fixture(scope="session")
def cudasim():
    """How tests/test_cuda_simulator.py gets its child: ``command(records)`` (see
    ``simulator_command``) and ``early``, the directory of the child started by
    ``pytest_configure`` (None when there is none)."""
    early = os.environ.get(EARLY_ENV)
    early = Path(early) if early and Path(early).is_dir() else None
    return types.SimpleNamespace(command=simulator_command, early=early, timeout=TIMEOUT)


def _resolve(base, arg):
    path = Path(arg)
    return (path if path.is_absolute() else base / path).resolve()


def _includes_simulator_tests(config):
    """Would this run collect and run tests/test_cuda_simulator.py? False when unsure."""
    if any(getattr(config.option, name, None) for name in _NO_EARLY_OPTIONS):
        return False
    base = config.invocation_params.dir
    wanted = False
    for arg in config.args:
        path = _resolve(base, arg.split("::")[0])
        if path == SIMULATOR_TESTS or path in SIMULATOR_TESTS.parents:
            wanted = True
    if not wanted:
        return False
    inside = [SIMULATOR_TESTS, *SIMULATOR_TESTS.parents]
    for ignored in config.getoption("ignore") or ():
        if _resolve(base, ignored) in inside:
            return False
    for pattern in config.getoption("ignore_glob") or ():
        glob = str(_resolve(base, pattern))
        if any(fnmatch.fnmatch(str(path), glob) for path in inside):
            return False
    nodeid = SIMULATOR_TESTS.relative_to(config.rootpath).as_posix() + "::"
    if any(nodeid.startswith(prefix) for prefix in config.getoption("deselect") or ()):
        return False
    return True


def _numba_cuda_installed():
    try:  # imports numba, not numba.cuda: the simulator is not chosen in this process
        return importlib.util.find_spec("numba.cuda") is not None
    except (ImportError, ValueError):
        return False


# Note [slowest files first]: ``--dist loadfile`` hands a worker one file at a time as it runs
# dry. In xdist's default order (most tests first) files of few but slow tests came last, the
# stale sweep (2 tests, 100 s) among them, and one worker ran alone at the end: in CI on
# 2026-12-07 the last 1% of the tests took 4m21s of 16m13s. The files measured slowest (worker
# seconds, cold kernel cache, 2026-12-07: 409, 149, 123, 102, 93, 68, 63 s ...) go first instead,
# the rest in collection order (``--no-loadscope-reorder`` in pyproject.toml keeps this order).
SLOWEST_FIRST = (
    "tests/compile/test_compile_ops.py", "tests/kernels/test_cpu_reduce.py",
    "tests/ops/test_ops.py", "tests/compile/test_stale_sweep.py",
    "tests/func/test_mixed_modes.py", "tests/compile/test_loop_edge_cases.py",
    "tests/compile/test_compile_linalg.py", "tests/compile/test_compile_nn_losses.py",
    "tests/compile/test_train_step.py", "tests/compile/test_cache_faults.py",
    "tests/compile/test_native.py", "tests/numpy/test_numpy.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {path: k for k, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # an xdist worker: the controller decided
        return
    os.environ.pop(EARLY_ENV, None)  # never one inherited from an enclosing run
    if os.name != "posix" or not _includes_simulator_tests(config) or not _numba_cuda_installed():
        return
    rundir = Path(tempfile.mkdtemp(prefix="jitgrad-cudasim-"))
    args, env = simulator_command(rundir / "launches.jsonl")
    supervise = [sys.executable, str(Path(__file__).with_name("cudasim_supervise.py")),
                 str(rundir), str(TIMEOUT), sys.executable, *args]
    # its own session: the child and its supervisor are one process group, killed together
    with open(rundir / "supervise.log", "wb") as log:  # the supervisor's own errors, if any
        config.stash[_EARLY] = subprocess.Popen(supervise, cwd=ROOT, env=env,
                                                stdin=subprocess.DEVNULL, stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True)
    os.environ[EARLY_ENV] = str(rundir)


def pytest_unconfigure(config):
    proc = config.stash.get(_EARLY, None)
    if proc is None:
        return
    del config.stash[_EARLY]
    if proc.poll() is None:  # not reaped yet, so proc.pid is still this group's id
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        try:  # what is left of the group (its id stays reserved while it has members)
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    rundir = os.environ.pop(EARLY_ENV, None)
    if rundir:
        shutil.rmtree(rundir, ignore_errors=True)
