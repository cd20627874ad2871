"""Runs the CUDA test suite (tests/cuda) under Numba's CUDA simulator, in its own process.

The simulator has to be chosen before ``numba.cuda`` is first imported, so it cannot share a
process with the CPU tests; this test starts ``pytest tests/cuda`` with
``NUMBA_ENABLE_CUDASIM=1`` and fails with the tail of its output when any CUDA test fails. On a
machine with a GPU, run ``JITGRAD_TEST_CUDA=1 python -m pytest tests/cuda`` directly instead.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_cuda_suite_under_the_simulator():
    pytest.importorskip("numba.cuda", reason="the jitgrad[cuda] extra (numba-cuda) is not installed")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env.pop("JITGRAD_TEST_CUDA", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
         "-p", "no:xdist", str(ROOT / "tests" / "cuda")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, f"CUDA simulator suite failed:\n{tail}"
    assert " passed" in proc.stdout, tail
