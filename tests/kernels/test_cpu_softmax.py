"""kernels/cpu/softmax.py: softmax, log_softmax and logsumexp along the middle axis of an
(outer, r, inner) array, against float64 NumPy formulas, on every layout path (short slices
through the transposed block, long slices lane by lane, columns), with the special values, and
the serial and parallel copies bit for bit."""
import numpy as np
import pytest

from jitgrad.kernels.cpu import softmax as ks

# short rows (r < _ROW_MIN, several blocks of _BLK), long rows with a ragged tail, columns
# (inner > 1, more than one column chunk), single elements
SHAPES = [(1000, 3, 1), (7, 5, 1), (600, 2, 1), (3, 100, 1), (2, 37, 1), (4, 3, 5),
          (2, 6, 1500), (1, 1, 1), (300, 1, 1), (1, 1, 7)]


def _reference(x, mode):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = x - m
        s = np.exp(z).sum(axis=1, keepdims=True)
        if mode == ks.LOGSUMEXP:
            return (m + np.log(s))[:, 0, :]
        return np.exp(z) / s if mode == ks.SOFTMAX else z - np.log(s)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_the_float64_formulas(shape, dtype):
    x = (np.random.default_rng(7).standard_normal(shape) * 4).astype(dtype)
    tol = 1e-14 if dtype == np.float64 else 3e-6
    for mode in (ks.LOGSUMEXP, ks.SOFTMAX, ks.LOG_SOFTMAX):
        got = ks.slices(x, mode)
        want = _reference(x, mode)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"mode {mode}")


def test_no_overflow_for_huge_inputs():
    x = np.array([1000.0, 1001.0, 999.0]).reshape(1, 3, 1)
    np.testing.assert_allclose(ks.slices(x, ks.LOGSUMEXP)[0, 0],
                               1001.0 + np.log(1 + np.exp(-1.0) + np.exp(-2.0)), rtol=1e-15)
    p = ks.slices(x, ks.SOFTMAX).ravel()
    np.testing.assert_allclose(p, np.exp([-1.0, 0.0, -2.0]) / (1 + np.exp(-1) + np.exp(-2)),
                               rtol=1e-15)


@pytest.mark.parametrize("r", [3, 40])  # the short-slice and the long-slice paths
def test_special_values(r):
    """+inf in a slice: logsumexp +inf, softmax NaN (inf - inf, as PyTorch); NaN: NaN; all
    -inf: logsumexp -inf, softmax NaN; -inf entries among finite ones: probability 0."""
    x = np.zeros((4, r, 1))
    x[0, 1] = np.inf
    x[1, 2] = np.nan
    x[2] = -np.inf
    x[3, 0] = -np.inf
    lse = ks.slices(x, ks.LOGSUMEXP)[:, 0]
    assert lse[0] == np.inf and np.isnan(lse[1]) and lse[2] == -np.inf
    np.testing.assert_allclose(lse[3], np.log(r - 1), rtol=1e-15)
    for mode in (ks.SOFTMAX, ks.LOG_SOFTMAX):
        y = ks.slices(x, mode)[:, :, 0]
        assert np.isnan(y[:3]).all()
    p = ks.slices(x, ks.SOFTMAX)[3, :, 0]
    assert p[0] == 0.0 and np.allclose(p[1:], 1.0 / (r - 1), rtol=1e-15)
    assert ks.slices(x, ks.LOG_SOFTMAX)[3, 0, 0] == -np.inf


@pytest.mark.parametrize("shape", [(1000, 3, 1), (300, 70, 1), (5, 64, 2100)], ids=str)
def test_serial_and_parallel_copies_give_the_same_bits(shape, monkeypatch):
    x = np.random.default_rng(3).standard_normal(shape) * 5
    for mode in (ks.LOGSUMEXP, ks.SOFTMAX, ks.LOG_SOFTMAX):
        monkeypatch.setattr(ks, "PAR_MIN_SIZE", 1 << 62)
        serial = ks.slices(x, mode)
        monkeypatch.setattr(ks, "PAR_MIN_SIZE", 0)
        np.testing.assert_array_equal(ks.slices(x, mode), serial)
