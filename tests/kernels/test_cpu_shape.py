"""kernels/cpu/shape.py: the compiled flat roll gives np.roll's values and dtype, and declines
the arrays it has no kernel for."""
import numpy as np
import pytest

from jitgrad.kernels.cpu import shape as cpu_shape


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int8, np.complex128,
                                   np.bool_])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
def test_roll_flat_equals_numpy(dtype, n):
    a = (np.arange(n) * 1.5 - 2).astype(dtype)
    for shift in (-13, -1, 0, 1, 3, n, 2 * n + 1):
        out = cpu_shape.roll_flat(a, shift)
        assert out.dtype == a.dtype and out.shape == a.shape
        np.testing.assert_array_equal(out, np.roll(a, shift))
        assert not np.shares_memory(out, a)


def test_roll_flat_reads_read_only_arrays():
    a = np.arange(6.0)
    a.flags.writeable = False
    np.testing.assert_array_equal(cpu_shape.roll_flat(a, 2), np.roll(a, 2))


def test_roll_flat_declines_other_arrays():
    assert cpu_shape.roll_flat(np.zeros((2, 3)), 1) is None         # n-d
    assert cpu_shape.roll_flat(np.arange(10.0)[::2], 1) is None     # strided
    assert cpu_shape.roll_flat(np.array(["a", "b"]), 1) is None     # no numeric kernel
    assert cpu_shape.roll_flat([1.0, 2.0], 1) is None               # not an ndarray
