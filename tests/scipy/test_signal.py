"""jitgrad.scipy.signal: convolve/correlate (N-d, every mode and method), fftconvolve,
convolve2d/correlate2d (fill boundary, any fillvalue) against SciPy in float64, gradients and
second derivatives in both inputs against central differences."""
import numpy as np
import pytest
import scipy.signal

import jitgrad
from jitgrad.scipy import signal as jsig
from jitgrad.testing import checks

RNG = np.random.default_rng(1919)


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


SHAPES = [((7,), (3,)), ((6,), (4,)), ((3,), (5,)), ((4, 5), (2, 3)), ((3, 4), (3, 2))]


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("sx,sw", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
def test_convolve_correlate(fn, mode, sx, sw):
    x, w = RNG.standard_normal(sx), RNG.standard_normal(sw)
    for method in ("direct", "fft"):
        checks.assert_close(getattr(jsig, fn)(_leaf(x), _leaf(w), mode, method),
                            getattr(scipy.signal, fn)(x, w, mode, method), rtol=1e-10,
                            atol=1e-12)
    checks.gradcheck(lambda a, b: getattr(jsig, fn)(a, b, mode, "direct"), (_leaf(x), _leaf(w)))


def test_second_derivatives_and_fft():
    x, w = RNG.standard_normal(6), RNG.standard_normal(3)
    checks.gradgradcheck(lambda a, b: jsig.convolve(a, b, "same"), (_leaf(x), _leaf(w)))
    checks.gradgradcheck(lambda a, b: jsig.correlate(a, b, "valid") ** 2, (_leaf(x), _leaf(w)))
    checks.assert_close(jsig.fftconvolve(x, w, "same"), scipy.signal.fftconvolve(x, w, "same"))
    checks.gradcheck(lambda a: jsig.fftconvolve(a, w), (_leaf(x),))


@pytest.mark.parametrize("fn", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_2d(fn, mode):
    x, w = RNG.standard_normal((4, 5)), RNG.standard_normal((2, 3))
    for fill in (0, 1.5):
        checks.assert_close(getattr(jsig, fn)(x, w, mode, fillvalue=fill),
                            getattr(scipy.signal, fn)(x, w, mode, fillvalue=fill), rtol=1e-12)
    checks.gradcheck(lambda a, b, c: getattr(jsig, fn)(a, b, mode, fillvalue=c),
                     (_leaf(x), _leaf(w), _leaf(0.7)))


def test_errors():
    with pytest.raises(NotImplementedError, match="boundary='wrap' is not supported"):
        jsig.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="same number of dimensions"):
        jsig.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="at least as large"):
        jsig.convolve(np.ones((3, 2)), np.ones((2, 3)), "valid")
