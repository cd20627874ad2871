"""jitgrad.numpy.fft: every transform against numpy.fft (norm x n/s x axes, 1-D to 3-D),
gradients against finite differences (complex inputs: real and imaginary parts perturbed
separately, PyTorch's convention ``grad = dL/dRe + i dL/dIm``), closed-form gradients of
classic losses (Parseval, circular convolution), double backward and the protocol path."""
import itertools
import warnings

import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)
NORMS = [None, "backward", "ortho", "forward"]
C2C_1D = ["fft", "ifft"]
REAL_IN = {"rfft", "rfft2", "rfftn", "ihfft"}  # transforms of real input


def data(shape, name, dtype=np.float64):
    a = RNG.standard_normal(shape)
    if name not in REAL_IN:
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype if name in REAL_IN else np.result_type(dtype, 1j))


def check_forward(name, a, **kw):
    got = getattr(jnp.fft, name)(jitgrad.tensor(a), **kw)
    want = getattr(np.fft, name)(a, **kw)
    assert got.shape == want.shape and got.dtype.np == want.dtype, (got.dtype, want.dtype)
    tol = 1e-4 if want.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


# --- forward ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape, axis", [((8,), -1), ((5,), 0), ((4, 6), -1), ((4, 6), 0),
                                         ((3, 4, 5), 1)])
@pytest.mark.parametrize("n", [None, 3, 7, 10])
def test_1d_forward(name, norm, shape, axis, n):
    check_forward(name, data(shape, name), n=n, axis=axis, norm=norm)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
                                  "irfftn"])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("shape, s, axes", [
    ((4, 6), None, None), ((3, 4, 5), None, None), ((4, 6), (3, 8), (0, 1)),
    ((3, 4, 5), (5, 3), (2, 0)), ((3, 4, 5), None, (0, 2)), ((3, 4, 5), (4, 4, 7), (0, 1, 2)),
    ((4, 5), (-1, 6), (0, 1)), ((4, 6), None, (1,)), ((3, 4, 5), None, (1, 1)),
])
def test_nd_forward(name, norm, shape, s, axes):
    if name.endswith("2") and (axes is None or len(axes) != 2):
        axes = (-2, -1) if s is None or len(s) == 2 else None
        if axes is None:
            pytest.skip("2-D transforms take two axes")
    check_forward(name, data(shape, name), s=s, axes=axes, norm=norm)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "rfftn", "irfftn"])
def test_single_precision_stays_single(name):
    check_forward(name, data((4, 6), name, np.float32))


def test_integer_input_gives_complex128():
    a = np.arange(6)
    check_forward("fft", a)
    check_forward("rfft", a)


def test_s_without_axes_warns_like_numpy():
    a = data((4, 6), "fftn")
    with pytest.warns(DeprecationWarning, match="`axes` should not be `None`") as record:
        got = jnp.fft.fftn(jitgrad.tensor(a), s=(3, 3))
    assert record[0].filename == __file__  # reported at the caller, like NumPy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        np.testing.assert_allclose(got.numpy(), np.fft.fftn(a, s=(3, 3)))


def test_argument_errors():
    x = jitgrad.tensor(np.ones(4))
    with pytest.raises(ValueError, match="Invalid norm value"):
        jnp.fft.fft(x, norm="bad")
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        jnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(x, s=(4, 4), axes=(0,))
    with pytest.raises(np.exceptions.AxisError):
        jnp.fft.fft(x, axis=2)
    with pytest.raises(TypeError, match="rfft: expected a real input"):
        jnp.fft.rfft(jitgrad.tensor(np.ones(4) * 1j))
    with pytest.raises(TypeError, match="out= is not supported"):
        jnp.fft.fft(x, out=jitgrad.tensor(np.ones(4) * 1j))


# --- gradients vs finite differences ----------------------------------------------------------------
GRAD_CASES_1D = [(name, n, norm) for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
                 for n in (None, 3, 6, 7) for norm in ("backward", "ortho", "forward")]


@pytest.mark.parametrize("name, n, norm", GRAD_CASES_1D)
def test_1d_gradcheck(name, n, norm):
    x = jitgrad.tensor(data((2, 5), name), requires_grad=True)
    fn = getattr(jnp.fft, name)
    assert gradcheck(lambda a: fn(a, n=n, axis=-1, norm=norm), (x,))


@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_c2c_of_real_input_gets_real_gradient(name):
    x = jitgrad.tensor(RNG.standard_normal(5), requires_grad=True)
    assert gradcheck(lambda a: getattr(jnp.fft, name)(a, n=7), (x,))
    jnp.fft.fft(x).real.sum().backward()
    assert x.grad.dtype is jitgrad.float64


ND_CASES = [
    ((3, 4), None, None), ((3, 4), (5, 3), (0, 1)), ((2, 3, 4), (3, 5), (2, 0)),
    ((2, 3, 5), None, (0, 2)), ((3, 4), None, (1, 1)), ((2, 3, 4), (2, 4, 3), (0, 1, 2)),
]


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("shape, s, axes", ND_CASES)
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_nd_gradcheck(name, shape, s, axes, norm):
    x = jitgrad.tensor(data(shape, name), requires_grad=True)
    fn = getattr(jnp.fft, name)
    assert gradcheck(lambda a: fn(a, s=s, axes=axes, norm=norm), (x,))


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
def test_2d_gradcheck(name):
    x = jitgrad.tensor(data((3, 5), name), requires_grad=True)
    fn = getattr(jnp.fft, name)
    assert gradcheck(lambda a: fn(a, norm="ortho"), (x,))
    assert gradcheck(lambda a: fn(a, s=(4, 4)), (x,))


@pytest.mark.parametrize("name, kw", [("fft", {"n": 6}), ("rfft", {"n": 7}), ("irfft", {"n": 6}),
                                      ("irfftn", {"s": (3, 5), "axes": (0, 1)}),
                                      ("rfftn", {"norm": "ortho"})])
def test_double_backward(name, kw):
    x = jitgrad.tensor(data((3, 4), name), requires_grad=True)
    fn = getattr(jnp.fft, name)
    assert gradgradcheck(lambda a: fn(a, **kw), (x,))
    # a real loss whose Hessian is not zero: |F x|^4
    assert gradgradcheck(lambda a: (abs(fn(a, **kw)) ** 2) ** 2, (x,))


def test_node_names_follow_pytorch():
    x = jitgrad.tensor(np.ones(4), requires_grad=True)
    assert jnp.fft.fft(x).grad_fn.name() == "FftC2CBackward0"
    assert jnp.fft.ifft2(x.reshape(2, 2)).grad_fn.name() == "FftC2CBackward0"
    assert jnp.fft.rfft(x).grad_fn.name() == "FftR2CBackward0"
    assert jnp.fft.irfft(jnp.fft.rfft(x)).grad_fn.name() == "FftC2RBackward0"


# --- closed-form gradients ---------------------------------------------------------------------------
@pytest.mark.parametrize("norm, scale", [(None, lambda n: n), ("ortho", lambda n: 1),
                                         ("forward", lambda n: 1 / n)])
@pytest.mark.parametrize("n", [7, 8])
def test_parseval(norm, scale, n):
    """sum |fft(x)|^2 = c n sum |x|^2: gradient 2 c n x (real x and complex z)."""
    xn = RNG.standard_normal(n)
    x = jitgrad.tensor(xn, requires_grad=True)
    (abs(jnp.fft.fft(x, norm=norm)) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * scale(n) * xn, rtol=1e-12)
    zn = data(n, "fft")
    z = jitgrad.tensor(zn, requires_grad=True)
    (abs(jnp.fft.fft(z, norm=norm)) ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * scale(n) * zn, rtol=1e-12)


def _correlate(w, h):
    """Gradient of sum(w * circconv(x, h)) with respect to x: the circular correlation."""
    return np.real(np.fft.ifftn(np.fft.fftn(w) * np.conj(np.fft.fftn(h))))


@pytest.mark.parametrize("n", [7, 8])
def test_circular_convolution_via_fft(n):
    xn, hn, wn = RNG.standard_normal((3, n))
    x = jitgrad.tensor(xn, requires_grad=True)
    H = jitgrad.tensor(np.fft.fft(hn))
    y = jnp.real(jnp.fft.ifft(jnp.fft.fft(x) * H))
    np.testing.assert_allclose(y.detach().numpy(),
                               [sum(xn[j] * hn[(k - j) % n] for j in range(n)) for k in range(n)],
                               atol=1e-12)
    (y * jitgrad.tensor(wn)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _correlate(wn, hn), atol=1e-12)


@pytest.mark.parametrize("n", [7, 8])
def test_circular_convolution_via_rfft(n):
    xn, hn, wn = RNG.standard_normal((3, n))
    x = jitgrad.tensor(xn, requires_grad=True)
    y = jnp.fft.irfft(jnp.fft.rfft(x) * jitgrad.tensor(np.fft.rfft(hn)), n)
    (y * jitgrad.tensor(wn)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _correlate(wn, hn), atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 6), (5, 7), (3, 4, 5)])
def test_nd_convolution_via_rfftn(shape):
    xn, hn, wn = (RNG.standard_normal(shape) for _ in range(3))
    x = jitgrad.tensor(xn, requires_grad=True)
    axes = tuple(range(len(shape)))
    y = jnp.fft.irfftn(jnp.fft.rfftn(x) * jitgrad.tensor(np.fft.rfftn(hn)), shape, axes)
    np.testing.assert_allclose(y.detach().numpy(),
                               np.real(np.fft.ifftn(np.fft.fftn(xn) * np.fft.fftn(hn))),
                               atol=1e-12)
    (y * jitgrad.tensor(wn)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _correlate(wn, hn), atol=1e-12)


def _fd(loss, z, eps=1e-6):
    z = np.array(z)
    out = np.zeros(z.shape, z.dtype)
    dirs = (1, 1j) if z.dtype.kind == "c" else (1,)
    for idx in itertools.product(*map(range, z.shape)):
        for d in dirs:
            p, m = z.copy(), z.copy()
            p[idx] += eps * d
            m[idx] -= eps * d
            out[idx] += (loss(p) - loss(m)) / (2 * eps) * d
    return out


@pytest.mark.parametrize("n", [5, 6])
def test_irfft_of_complex_spectrum_vs_finite_differences(n):
    """The half-spectrum input (imaginary parts of bins 0 and n/2 ignored by the forward)."""
    zn, wn = data(4, "irfft"), RNG.standard_normal(n)
    z = jitgrad.tensor(zn, requires_grad=True)
    ((jnp.fft.irfft(z, n) * jitgrad.tensor(wn)) ** 2).sum().backward()
    want = _fd(lambda a: float(np.sum((np.fft.irfft(a, n) * wn) ** 2)), zn)
    np.testing.assert_allclose(z.grad.numpy(), want, atol=1e-6)


def test_complex_loss_through_fft2_vs_finite_differences():
    zn, hn = data((3, 4), "fft2"), data((3, 4), "fft2")
    z = jitgrad.tensor(zn, requires_grad=True)
    out = jnp.fft.ifft2(jnp.fft.fft2(z) * jitgrad.tensor(hn), s=(3, 5))
    (jnp.angle(out + 2) + abs(out)).sum().backward()

    def f(a):
        o = np.fft.ifft2(np.fft.fft2(a) * hn, s=(3, 5))
        return float(np.sum(np.angle(o + 2) + np.abs(o)))
    np.testing.assert_allclose(z.grad.numpy(), _fd(f, zn), atol=1e-6)


# --- protocol path and helpers ----------------------------------------------------------------------
@pytest.mark.parametrize("name, kw", [("fft", {"n": 6}), ("ifft", {}), ("rfft", {"norm": "ortho"}),
                                      ("irfft", {"n": 7}), ("fft2", {}), ("rfftn", {}),
                                      ("irfftn", {"s": (3, 4), "axes": (0, 1)}), ("hfft", {}),
                                      ("ihfft", {})])
def test_protocol_path_matches_namespace(name, kw):
    a = data((3, 4), name)
    t1 = jitgrad.tensor(a, requires_grad=True)
    t2 = jitgrad.tensor(a, requires_grad=True)
    r1 = getattr(jnp.fft, name)(t1, **kw)
    r2 = getattr(np.fft, name)(t2, **kw)
    assert isinstance(r2, jitgrad.Tensor) and r1.grad_fn.name() == r2.grad_fn.name()
    np.testing.assert_allclose(r1.detach().numpy(), r2.detach().numpy())
    (abs(r1) ** 2).sum().backward()
    (abs(r2) ** 2).sum().backward()
    np.testing.assert_allclose(t1.grad.numpy(), t2.grad.numpy())


def test_shifts_and_frequencies():
    zn = data((4, 5), "fft")
    z = jitgrad.tensor(zn, requires_grad=True)
    np.testing.assert_allclose(jnp.fft.fftshift(z).detach().numpy(), np.fft.fftshift(zn))
    np.testing.assert_allclose(jnp.fft.ifftshift(z, axes=1).detach().numpy(),
                               np.fft.ifftshift(zn, axes=1))
    assert gradcheck(lambda a: jnp.fft.fftshift(jnp.fft.fft(a)), (z,))
    np.testing.assert_allclose(np.fft.fftshift(z).detach().numpy(), np.fft.fftshift(zn))
    np.testing.assert_allclose(jnp.fft.fftfreq(7, 0.5).numpy(), np.fft.fftfreq(7, 0.5))
    np.testing.assert_allclose(jnp.fft.rfftfreq(8).numpy(), np.fft.rfftfreq(8))
    for name in np.fft.__all__:
        assert callable(getattr(jnp.fft, name)), name
