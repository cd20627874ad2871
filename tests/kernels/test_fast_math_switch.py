"""JITGRAD_FAST_MATH: vmath's vectorised transcendentals in every kernel by default, libm with 0.

Each mode runs in its own interpreter (the mode is read once at import). With libm the op results
are bitwise those of a plain Numba loop calling ``math.*``; with fast math they stay within the
stated ulp bounds of a long-double reference, forward and fused backward alike.
"""
import json
import os
import subprocess
import sys

import pytest

_SCRIPT = r'''
import json, math
import numpy as np
from numba import njit
import jitgrad
from jitgrad import _config

@njit
def libm_sin(x, out):
    for i in range(x.size):
        out[i] = math.sin(x[i])

@njit
def libm_cos(x, out):
    for i in range(x.size):
        out[i] = math.cos(x[i])

def ulp_err(got, ref):
    ref = np.asarray(ref, np.longdouble)
    spacing = np.spacing(np.abs(ref).astype(np.float64))
    return float(np.max(np.abs(got.astype(np.longdouble) - ref) / spacing))

x = np.random.default_rng(0).uniform(-50, 50, 100_000)
t = jitgrad.tensor(x, requires_grad=True)
y = jitgrad.sin(t)
y.sum().backward()
ref_sin, ref_cos = np.empty_like(x), np.empty_like(x)
libm_sin(x, ref_sin)
libm_cos(x, ref_cos)
xl = x.astype(np.longdouble)
print(json.dumps({
    "fast": _config.FAST_MATH, "tag": os.path.basename(_config.KERNEL_CACHE_DIR),
    "fwd_bitwise_libm": bool(np.array_equal(y.detach().numpy(), ref_sin)),
    "bwd_bitwise_libm": bool(np.array_equal(t.grad.numpy(), ref_cos)),
    "fwd_ulp": ulp_err(y.detach().numpy(), np.sin(xl)),
    "bwd_ulp": ulp_err(t.grad.numpy(), np.cos(xl)),
}))
'''.replace("import json, math", "import json, math, os")


def _run(fast: str, cache_dir) -> dict:
    env = dict(os.environ, JITGRAD_FAST_MATH=fast, JITGRAD_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    # one shared dir: the two modes must not load each other's kernels from it
    return tmp_path_factory.mktemp("fastmath-cache")


def test_libm_mode_is_bitwise_numba_math(cache_dir):
    r = _run("0", cache_dir)
    assert r["fast"] is False and r["tag"].startswith("libm-")
    assert r["fwd_bitwise_libm"] and r["bwd_bitwise_libm"]


def test_fast_mode_is_accurate_and_uses_its_own_cache(cache_dir):
    r = _run("1", cache_dir)
    assert r["fast"] is True and r["tag"].startswith("fastmath-")
    assert r["fwd_ulp"] <= 1.0 and r["bwd_ulp"] <= 1.0
    # and again with the same cache dir, after the libm run: still the fast kernels
    again = _run("1", cache_dir)
    assert again["fwd_ulp"] <= 1.0 and again["tag"] == r["tag"]


_HUGE = r'''
import sys
import numpy as np
import jitgrad
x = np.array([1.567225046426394e+28, 1.7976931348623157e+308, 1e30, -3e17, 3.0])
ref = {"sin": np.sin, "cos": np.cos, "tan": np.tan}
errs = []
for name in sys.argv[1:]:
    got = getattr(jitgrad, name)(jitgrad.tensor(x)).numpy()
    want = ref[name](x.astype(np.longdouble)).astype(np.float64)
    errs.append(float(np.max(np.abs(got - want) / np.spacing(np.abs(want)))))
print(max(errs))
'''


def test_cached_kernels_keep_their_own_huge_argument_paths(tmp_path):
    """Kernels built in different processes (each numbering its compiled functions from the
    start) and loaded together from the cache must not share the huge-argument reduction
    (Note [distinct symbol names] in kernels/cpu/vmath.py)."""
    env = dict(os.environ, JITGRAD_FAST_MATH="1", JITGRAD_CACHE_DIR=str(tmp_path))

    def run(*names):
        out = subprocess.run([sys.executable, "-c", _HUGE, *names], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        return float(out.stdout.strip().splitlines()[-1])

    assert run("tan") <= 1.5      # each process compiles one function's kernel first
    assert run("sin") <= 1.0
    assert run("cos") <= 1.0
    assert run("sin", "cos", "tan") <= 1.5   # all three loaded from the cache in one process
    assert run("tan", "cos", "sin") <= 1.5
