"""The CPU device layer: generated elementwise kernels, broadcasting modes, threading layer."""
import os
import subprocess
import sys

import numpy as np
import pytest

from jitgrad import _config
from jitgrad.kernels.cpu import elementwise as cpu


def _add(x, y):
    return x + y


def _fma(x, y, z):
    return x * y + z


SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((3, 4), (3, 1)), ((2, 3, 4), (3, 4)),
          ((2, 3, 4), (2, 1, 4)), ((2, 3), ()), ((), ()), ((1,), (5,)), ((0, 3), (3,))]


@pytest.mark.parametrize("sa,sb", SHAPES)
def test_binary_broadcast_modes_match_numpy(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    shape = np.broadcast_shapes(sa, sb)
    np.testing.assert_array_equal(cpu.elementwise(_add, [a, b], shape, np.float64, np.float64), a + b)
    np.testing.assert_array_equal(cpu.elementwise(_add, [b, a], shape, np.float64, np.float64), b + a)


def test_non_contiguous_and_scalar_operands():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 3)).T  # F-ordered view
    b = rng.standard_normal((3, 4))[:, ::-1]
    out = cpu.elementwise(_fma, [a, b, 0.5], (3, 4), np.float64, np.float64)
    np.testing.assert_allclose(out, a * b + 0.5)


def test_float32_constants_stay_float32():
    x = np.arange(5, dtype=np.float32)
    out = cpu.elementwise(_fma, [x, x, 0.1], x.shape, np.float32, np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x * x + np.float32(0.1))


def test_parallel_kernel_above_threshold_matches_serial():
    x = np.random.default_rng(2).standard_normal(cpu.PARALLEL_MIN_SIZE + 17)
    big = cpu.elementwise(_fma, [x, x, x], x.shape, np.float64, np.float64)
    np.testing.assert_allclose(big, x * x + x)
    mat = x[: 17 * (x.size // 17)].reshape(17, -1)
    row = np.random.default_rng(3).standard_normal(mat.shape[1])
    grid = cpu.elementwise(_add, [mat, row], mat.shape, np.float64, np.float64)
    np.testing.assert_allclose(grid, mat + row)


def test_threading_layer_is_tbb():
    cpu.warm_parallel()
    assert _config.threading_layer() == "tbb"


def test_kernels_are_generated_as_cached_source_files():
    kern = cpu.get_kernel(_add, "ff", False, False)
    assert kern.py_func.__code__.co_filename.startswith(os.path.join(_config.KERNEL_CACHE_DIR, "kernels"))
    assert kern.targetoptions.get("nogil") is True  # kernels release the GIL
    assert cpu.get_kernel(_add, "ff", False, True).targetoptions.get("parallel") is True


def test_import_compiles_nothing_and_is_fast(tmp_path):
    code = ("import time; t=time.perf_counter(); import jitgrad, numba; "
            "dt=time.perf_counter()-t; import jitgrad.kernels.cpu.elementwise as c; "
            "print(len(c._kernels), dt)")
    env = dict(os.environ, JITGRAD_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    assert out[0] == "0"  # no kernel was built at import
    assert not any(tmp_path.glob("*/kernels/*"))


def test_broadcast_views_are_read_in_place_not_copied():
    """A stride-0 operand (np.broadcast_to, e.g. the expanded gradient of a sum) is read as the
    scalar/row/column it repeats; values match the materialised computation."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4))
    for small in (np.array(2.5), rng.standard_normal(4), rng.standard_normal((3, 1))):
        view = np.broadcast_to(small, (3, 4))
        assert 0 in view.strides
        out = cpu.elementwise(_fma, [view, x, view], (3, 4), np.float64, np.float64)
        np.testing.assert_array_equal(out, np.ascontiguousarray(view) * x + view)


@pytest.mark.parametrize("shape, other", [((1000,), (1000,)), ((20, 50), (50,)), ((20, 50), ()),
                                          ((4, 5, 50), (5, 50))])
def test_operand_that_is_the_output_is_read_from_it(shape, other):
    """Note [in-place operands]: an operand that is ``out`` itself (an in-place op) is read
    through ``out`` (mode ``o``), flat and broadcast (grid) alike; values as NumPy's."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape)
    y = rng.standard_normal(other) if other else 1.5
    expected = x * y + x
    got = cpu.elementwise(_fma, [x, y, x], shape, np.float64, np.float64, out=x)
    assert got is x
    np.testing.assert_array_equal(x, expected)
    assert any("o" in key[1] for key in cpu._kernels if key[0] is _fma)


def _hypot_body(a, b):
    return (a * a + b * b) ** 0.5


def test_read_only_and_writeable_inputs_share_one_compiled_kernel():
    """Note [read-only inputs]: every mix of read-only and writeable inputs runs the one
    specialisation with read-only inputs (up to four compiles before), with the same values."""
    kern = cpu.get_kernel(_hypot_body, "ff", False, False)
    a, b = np.array([3.0, 5.0, -8.0]), np.array([4.0, 12.0, 15.0])
    ra, rb = a.copy(), b.copy()
    ra.flags.writeable = rb.flags.writeable = False
    for x, y in [(a, b), (ra, b), (a, rb), (ra, rb)]:
        out = np.empty(3)
        kern(out, x, y)
        np.testing.assert_array_equal(out, [5.0, 13.0, 17.0])
    assert len(kern.overloads) == 1
    (sig,) = kern.overloads
    assert [t.mutable for t in sig] == [True, False, False]  # the output stays writeable
    ints = np.array([3, 5]), np.array([4, 12])  # other dtypes: a specialisation of their own
    out = np.empty(2)
    kern(out, *ints)
    np.testing.assert_array_equal(out, [5.0, 13.0])
    assert len(kern.overloads) == 2
