"""``python -m jitgrad demo`` / ``info`` run end to end in a fresh interpreter."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    # Inherit the environment (JITGRAD_CACHE_DIR included) so kernels compiled by other tests
    # are reused; run from the repo root so the checkout, not another install, is imported.
    return subprocess.run([sys.executable, "-m", "jitgrad", *args], cwd=REPO, env=dict(os.environ),
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def demo_out() -> str:
    proc = _run("demo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def info_out() -> str:
    proc = _run("info")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_no_subcommand_prints_help_and_exits_2():
    proc = _run()
    assert proc.returncode == 2
    assert "demo" in proc.stderr and "info" in proc.stderr


def test_demo_chain(demo_out):
    assert "PowBackward0 -> AddBackward0 -> MulBackward0 -> AccumulateGrad" in demo_out
    assert "AccumulateGrad.variable is x: True" in demo_out
    assert "y = tensor(100., grad_fn=<PowBackward0>)" in demo_out


def test_demo_gradients(demo_out):
    assert re.search(r"^y\.backward\(\); x\.grad = 60$", demo_out, re.M)
    assert "dy/dx = 60" in demo_out
    assert re.search(r"g1 = dy/dx .*= 60$", demo_out, re.M)
    assert re.search(r"g2 = d2y/dx2 .*= 18$", demo_out, re.M)
    assert "x.grad = 120" in demo_out
    assert "Trying to backward through the graph a second time" in demo_out
    assert "grad_fn = None" in demo_out


def test_demo_is_short(demo_out):
    assert len(demo_out.splitlines()) <= 30


def test_info(info_out):
    from jitgrad._config import __version__

    lines = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in info_out.splitlines()
                 if re.match(r"^\S.*\s{2,}\S", line))
    assert lines["jitgrad"] == __version__
    for key in ("Python", "NumPy", "Numba", "llvmlite", "kernel threads", "default dtype",
                "kernel cache dir", "CUDA"):
        assert key in lines, info_out
    assert "tbb" in lines["threading layer"], info_out
    assert "(requested" not in lines["threading layer"], info_out
    assert int(lines["kernel threads"]) >= 1
    assert int(lines["interop threads"]) >= 1
    assert lines["fast math"].startswith("on") == (os.environ.get("JITGRAD_FAST_MATH", "1") != "0")
    assert os.path.basename(lines["kernel cache dir"]).startswith(("fastmath-", "libm"))
