"""Environment settings and the Numba threading-layer choice (jitgrad/_config.py)."""
import os
import re
import subprocess
import sys

import numpy as np

import jitgrad
from jitgrad import _config


def _run(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full,
                          check=True)


def test_tbb_is_requested_and_used_by_default():
    import numba

    assert numba.config.THREADING_LAYER == "tbb"
    jitgrad.kernels.cpu.elementwise.warm_parallel()
    assert numba.threading_layer() == "tbb"


def test_missing_tbb_falls_back_to_omp_with_a_warning(tmp_path):
    code = ("import warnings, jitgrad._config as c\n"
            "c._preload_tbb = lambda: False\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    c._configure_numba()\n"
            "import numba\n"
            "print(numba.config.THREADING_LAYER, '|', w[0].message)\n")
    out = _run(code, JITGRAD_CACHE_DIR=str(tmp_path)).stdout
    layer, message = out.split("|")
    assert layer.strip() == "omp"
    assert "tbb threading layer is not available" in message


def test_env_settings_are_read(tmp_path):
    code = ("import jitgrad, jitgrad._config as c; "
            "print(c.NUM_THREADS, c.CACHE_DIR, jitgrad.get_default_dtype(), jitgrad.tensor(1.5).dtype)")
    out = _run(code, JITGRAD_NUM_THREADS="1", JITGRAD_CACHE_DIR=str(tmp_path / "k"),
               JITGRAD_DEFAULT_DTYPE="float32").stdout.split()
    assert out == ["1", str(tmp_path / "k"), "jitgrad.float32", "jitgrad.float32"]


def test_kernel_cache_dir_is_keyed_by_the_sources(monkeypatch):
    """Note [cache key]: the kernel dir is keyed by the math mode and jitgrad's source digest
    (not the version: two commits of one version must not share compiled code)."""
    monkeypatch.delenv("JITGRAD_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert _config._default_cache_dir() == os.path.join("/somewhere", "jitgrad")
    mode = "fastmath" if _config.FAST_MATH else "libm"
    assert re.fullmatch(mode + r"-[0-9a-f]{16}", os.path.basename(_config.KERNEL_CACHE_DIR))
    assert len(_config.package_digest()) == 40  # (tests/compile/test_cache_faults.py: an
    # edited copy of the package gets a dir of its own)


def test_unwritable_cache_dir_falls_back_with_a_warning(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")  # a dir cannot be made below a file, even by root
    code = ("import warnings\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import jitgrad, jitgrad._config as c\n"
            "print(c.CACHE_DIR, '|', [str(x.message) for x in w if 'not writable' in str(x.message)])\n"
            "print(jitgrad.tensor([1.0, 2.0]).exp().sum().item())")
    out = _run(code, JITGRAD_CACHE_DIR=str(blocker / "cache"), TMPDIR=str(tmp_path)).stdout
    first, second = out.splitlines()
    cache_dir, warned = first.split("|")
    assert cache_dir.strip().startswith(str(tmp_path / "jitgrad-")) and "not writable" in warned
    assert abs(float(second) - (np.e + np.e ** 2)) < 1e-12
