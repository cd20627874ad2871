"""Runs the CUDA test suite (tests/cuda) under Numba's CUDA simulator, in its own process, and
then compiles every kernel it launched to PTX for a real GPU.

The simulator has to be chosen before ``numba.cuda`` is first imported, so it cannot share a
process with the CPU tests: ``pytest tests/cuda`` runs in a child with ``NUMBA_ENABLE_CUDASIM=1``
and records its kernel launches. The simulator runs kernels as Python and accepts code NVVM
would reject, so a second child (no simulator) compiles each recorded kernel and signature for
compute capability 9.0 (``jitgrad.testing.ptx_check``); that needs NVVM (a CUDA toolkit or the
``nvidia-nvvm`` wheel), not a GPU. On a machine with a GPU, run
``JITGRAD_TEST_CUDA=1 python -m pytest tests/cuda`` directly instead.

The simulated suite takes about five minutes on one core, so a run that includes this file starts
that child at its very beginning (tests/conftest.py's ``pytest_configure``), in parallel with the
other tests, instead of when xdist reaches this file near the end (which left the end of the run
to the child alone, on one core); the fixture then only waits for its result. Without that early
start (this file's tests selected by ``-k``, say) the fixture runs the child itself.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(args, env, timeout):
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr


def _wait_for(rundir, timeout):
    """The exit status and output of the child tests/conftest.py started, once it is done."""
    deadline = time.monotonic() + timeout
    while not (rundir / "rc").exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the early CUDA simulator suite ({rundir}) was not done in {timeout} s")
        time.sleep(1.0)
    rc = (rundir / "rc").read_text()
    out = (rundir / "output.log").read_text(errors="replace")
    if rc == "timeout":
        pytest.fail(f"the CUDA simulator suite ran past {timeout} s:\n{out[-6000:]}")
    return int(rc), out


@pytest.fixture(scope="module")
def simulated_suite(tmp_path_factory, cudasim):
    pytest.importorskip("numba.cuda",
                        reason="the jitgrad[cuda] extra (numba-cuda) is not installed")
    if cudasim.early is not None:  # started with the run (tests/conftest.py)
        rc, out = _wait_for(cudasim.early, cudasim.timeout)
        return rc, out, cudasim.early / "launches.jsonl"
    records = tmp_path_factory.mktemp("cuda") / "launches.jsonl"
    args, env = cudasim.command(records)
    rc, out = _run(args, env, cudasim.timeout)
    return rc, out, records


def test_cuda_suite_under_the_simulator(simulated_suite):
    rc, out, _ = simulated_suite
    assert rc == 0, f"CUDA simulator suite failed:\n{out[-6000:]}"
    assert " passed" in out, out[-3000:]


def test_every_launched_kernel_compiles_to_ptx(simulated_suite):
    rc, out, records = simulated_suite
    if not records.exists():
        pytest.skip(f"no kernel launches were recorded (simulator suite rc={rc})")
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    probe_rc, probe = _run(["-m", "jitgrad.testing.ptx_check", "--probe"], env, 300)
    if probe_rc != 0:
        pytest.skip("no CUDA compiler toolchain (install a CUDA toolkit, or the cuda-ptx extra's "
                    "nvidia-nvvm and nvidia-cuda-nvrtc wheels, to compile kernels to PTX without "
                    f"a GPU): {probe.strip().splitlines()[-1:]}")
    rc, out = _run(["-m", "jitgrad.testing.ptx_check", str(records)], env, 1500)
    assert rc == 0, out[-8000:]
    assert "0 failed" in out, out[-3000:]
