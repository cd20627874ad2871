"""jitgrad.func transforms of complex inputs, PyTorch's convention (Note [complex transforms] in
jitgrad/func/_common.py), and jitgrad.numpy.functional.holomorphic_grad (HIPS autograd's).

Checked three ways: analytic derivatives (for a real L of z = x + iy, grad = dL/dx + i dL/dy;
a holomorphic f has vjp(v) = v conj(f'(z)) and jvp(t) = f'(z) t), central finite differences on
the real and imaginary parts in float64, and values computed with torch.func 2.13 (pinned: CI
has no torch).
"""
import numpy as np
import pytest

import jitgrad
import jitgrad.func as jf
import jitgrad.numpy as jnp
from jitgrad.numpy.functional import grad as np_grad
from jitgrad.numpy.functional import holomorphic_grad

Z = np.array([0.7 - 1.3j, -0.2 + 0.4j, 1.5 + 0.1j])
T = np.array([0.5 + 0.25j, -1j, 2.0])
V = np.array([1 + 2j, -0.5j, 0.3])

# holomorphic f and f'
HOLO = {
    "square": (lambda z: z * z, lambda z: 2 * z),
    "exp": (jitgrad.exp, np.exp),
    "sin": (jitgrad.sin, np.cos),
    "cos": (jitgrad.cos, lambda z: -np.sin(z)),
    "sinh": (jitgrad.sinh, np.cosh),
    "cosh": (jitgrad.cosh, np.sinh),
    "tanh": (jitgrad.tanh, lambda z: 1 - np.tanh(z) ** 2),
    "log": (jitgrad.log, lambda z: 1 / z),
    "reciprocal": (lambda z: 1 / z, lambda z: -1 / z ** 2),
    "div": (lambda z: (z + 1j) / (z - 2.0), lambda z: (-2.0 - 1j) / (z - 2.0) ** 2),
    "poly_exp": (lambda z: z * z * jitgrad.exp(z) - 3j * z,
                 lambda z: (2 * z + z * z) * np.exp(z) - 3j),
}


def ct(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.complex128))


def num_grad(L, z, h=1e-6):
    """dL/dx + i dL/dy by central differences, per element (L: ndarray -> float)."""
    g = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e.flat[k] = 1.0
        dx = (L(z + h * e) - L(z - h * e)) / (2 * h)
        dy = (L(z + 1j * h * e) - L(z - 1j * h * e)) / (2 * h)
        g.flat[k] = dx + 1j * dy
    return g


def num_jvp(f, z, t, h=1e-6):
    return (f(z + h * t) - f(z - h * t)) / (2 * h)


def on_array(fn):
    """A jitgrad function as an ndarray -> ndarray one (for the finite differences)."""
    return lambda a: fn(ct(a)).numpy()


# --- grad of a real loss ---------------------------------------------------------------------
@pytest.mark.parametrize("loss", [lambda z: (z * z.conj()).real.sum(),
                                  lambda z: (jitgrad.abs(z) ** 2).sum()],
                         ids=["z_conj_z", "abs_squared"])
def test_grad_of_squared_modulus_is_two_z(loss):
    g = jf.grad(loss)(ct(Z))
    assert g.dtype is jitgrad.complex128
    np.testing.assert_allclose(g.numpy(), 2 * Z, rtol=1e-14)


@pytest.mark.parametrize("name", sorted(HOLO))
def test_grad_of_real_and_imag_parts_of_holomorphic(name):
    f, df = HOLO[name]
    d = df(Z)
    g_re = jf.grad(lambda z: f(z).real.sum())(ct(Z)).numpy()
    g_im = jf.grad(lambda z: f(z).imag.sum())(ct(Z)).numpy()
    np.testing.assert_allclose(g_re, np.conj(d), rtol=1e-12)  # dRe/dx + i dRe/dy = conj(f')
    np.testing.assert_allclose(g_im, 1j * np.conj(d), rtol=1e-12)
    fd = num_grad(lambda a: float(on_array(lambda z: f(z).real.sum())(a)), Z)
    np.testing.assert_allclose(g_re, fd, rtol=1e-6, atol=1e-8)


def test_grad_of_non_holomorphic_loss_matches_finite_differences_and_torch():
    def L(z):
        return (jitgrad.sin(z) * jitgrad.exp(z)).real.sum() + (jitgrad.abs(z) ** 2 *
                                                               jnp.angle(z)).sum()

    g = jf.grad(L)(ct(Z)).numpy()
    np.testing.assert_allclose(g, num_grad(lambda a: float(on_array(L)(a)), Z), rtol=1e-6)
    torch_value = [0.890864573749 + 8.998845543226j, -0.731119922008 + 0.793113564013j,
                   4.928643578905 + 1.446929108554j]  # torch.func.grad, torch 2.13
    np.testing.assert_allclose(g, torch_value, rtol=1e-10)


def test_grad_numpy_style_and_real_input_with_complex_intermediates():
    g = jf.grad(lambda z: (z * z.conj()).real.sum())(Z)
    assert isinstance(g, np.ndarray) and g.dtype == np.complex128
    np.testing.assert_allclose(g, 2 * Z)
    # a real input: the gradient stays real (|x (1 + 2i)|^2 = 5 x^2)
    g = jf.grad(lambda x: jitgrad.abs(x * (1 + 2j)) ** 2)(jitgrad.tensor(2.0))
    assert g.dtype is jitgrad.float64 and g.item() == pytest.approx(20.0)


def test_grad_of_a_complex_output_raises():
    with pytest.raises(RuntimeError, match="real scalar outputs but got jitgrad.complex128"):
        jf.grad(lambda z: (z * z).sum())(ct(Z))


# --- vjp -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(HOLO))
def test_vjp_of_holomorphic_is_v_times_conj_derivative(name):
    f, df = HOLO[name]
    out, fn = jf.vjp(f, ct(Z))
    (g,) = fn(ct(V))
    np.testing.assert_allclose(out.numpy(), on_array(f)(Z))
    np.testing.assert_allclose(g.numpy(), V * np.conj(df(Z)), rtol=1e-12)


def test_vjp_pinned_to_torch_and_real_part_identity():
    def f(z):
        return jitgrad.log(z) * jitgrad.tanh(z) + 1 / z

    _, fn = jf.vjp(f, ct(Z))
    (g,) = fn(ct(V))
    torch_value = [5.648778264822 + 1.757755338703j, 0.917186918237 - 1.382970391686j,
                   0.071654090088 - 0.008731963095j]  # torch.func.vjp, torch 2.13
    np.testing.assert_allclose(g.numpy(), torch_value, rtol=1e-10)
    # vjp(v) is the gradient of the real loss Re(sum(conj(v) f(z)))
    fd = num_grad(lambda a: float((np.conj(V) * on_array(f)(a)).real.sum()), Z)
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6)


def test_vjp_cotangent_must_match_complex_or_real():
    _, fn = jf.vjp(lambda z: jitgrad.abs(z), ct(Z))
    with pytest.raises(RuntimeError, match="both grad_output and output are required to have"):
        fn(ct(V))
    _, fn = jf.vjp(lambda z: z * z, ct(Z))
    with pytest.raises(RuntimeError, match="both grad_output and output are required to have"):
        fn(jitgrad.ones(3, dtype=jitgrad.float64))
    # autograd.grad follows the same rule (PyTorch's)
    z = ct(Z).requires_grad_()
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a dtype of jitgrad.complex128"):
        jitgrad.autograd.grad(jitgrad.abs(z), z, ct(V))


# --- jvp -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(HOLO))
def test_jvp_of_holomorphic_is_derivative_times_tangent(name):
    f, df = HOLO[name]
    out, tangent = jf.jvp(f, (ct(Z),), (ct(T),))
    np.testing.assert_allclose(out.numpy(), on_array(f)(Z))
    np.testing.assert_allclose(tangent.numpy(), df(Z) * T, rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), num_jvp(on_array(f), Z, T), rtol=1e-6)


@pytest.mark.parametrize("fn", [jnp.real, jnp.imag, jnp.conj, jitgrad.abs,
                                jnp.angle, lambda z: jitgrad.abs(z) * jnp.angle(z)],
                         ids=["real", "imag", "conj", "abs", "angle", "abs_angle"])
def test_jvp_of_non_holomorphic_rows_matches_finite_differences(fn):
    _, tangent = jf.jvp(fn, (ct(Z),), (ct(T),))
    np.testing.assert_allclose(tangent.numpy(), num_jvp(on_array(fn), Z, T), rtol=1e-6,
                               atol=1e-9)


def test_jvp_pinned_to_torch_and_real_tangents():
    def f(z):
        return jitgrad.log(z) * jitgrad.tanh(z) + 1 / z

    _, tangent = jf.jvp(f, (ct(Z),), (ct(T),))
    torch_value = [0.439438834676 + 1.412194566206j, -1.834373836474 - 2.765940783372j,
                   0.477693933921 + 0.058213087298j]  # torch.func.jvp, torch 2.13
    np.testing.assert_allclose(tangent.numpy(), torch_value, rtol=1e-10)
    _, tangent = jf.jvp(lambda z: jitgrad.abs(z) * jnp.angle(z), (ct(Z),), (ct(T),))
    np.testing.assert_allclose(tangent.numpy(), [5.405270505426e-01, -1.372448379241e+00,
                                                 -1.965694449780e-04], rtol=1e-9)
    # a real tangent of a complex primal is cast to complex (the derivative along x), as torch
    _, tangent = jf.jvp(lambda z: z * z, (ct(1 + 2j),), (jitgrad.tensor(1.0),))
    assert tangent.item() == 2 + 4j


def test_jvp_complex_tangent_of_real_primal_raises():
    with pytest.raises(RuntimeError, match="complex tangent"):
        jf.jvp(lambda x: x * x, (jitgrad.tensor([1.0, 2.0]),), (ct([1j, 1j]),))


def test_linearize_of_complex_primal():
    f, df = HOLO["sin"]
    out, jvp_fn = jf.linearize(f, ct(Z))
    np.testing.assert_allclose(out.numpy(), np.sin(Z))
    np.testing.assert_allclose(jvp_fn(ct(T)).numpy(), df(Z) * T, rtol=1e-12)


# --- jacrev / jacfwd -------------------------------------------------------------------------
def test_jacrev_of_real_outputs_stacks_their_gradients():
    def f(z):
        return jitgrad.stack([jitgrad.abs(z).sum(), (jitgrad.exp(z) * z).real.sum(),
                              jnp.angle(z[0] * z[1])])

    jac = jf.jacrev(f)(ct(Z))
    assert tuple(jac.shape) == (3, 3) and jac.dtype is jitgrad.complex128
    for i in range(3):
        row = jf.grad(lambda z: f(z)[i])(ct(Z)).numpy()
        np.testing.assert_allclose(jac.numpy()[i], row, rtol=1e-13)
        fd = num_grad(lambda a: float(on_array(f)(a)[i]), Z)
        np.testing.assert_allclose(jac.numpy()[i], fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jf.jacrev(jitgrad.abs)(ct(Z)).numpy(), np.diag(Z / np.abs(Z)))


def test_jacrev_of_complex_outputs_and_jacfwd_of_complex_inputs_raise():
    with pytest.raises(RuntimeError, match="jacrev: Expected all outputs to be real"):
        jf.jacrev(lambda z: z * z)(ct(Z))
    with pytest.raises(RuntimeError, match="jacrev: Expected all outputs to be real"):
        jf.jacrev(lambda x: x * (1 + 1j))(jitgrad.tensor([1.0, 3.0]))
    with pytest.raises(RuntimeError, match="jacfwd: Expected all inputs to be real"):
        jf.jacfwd(jitgrad.abs)(ct(Z))
    with pytest.raises(RuntimeError, match="jacfwd: Expected all inputs to be real"):
        jf.hessian(lambda z: jitgrad.abs(z).sum())(ct(Z))


def test_jacfwd_of_real_input_to_complex_output():
    jac = jf.jacfwd(lambda x: jitgrad.exp(x * 1j))(jitgrad.tensor([0.3, -1.2]))
    np.testing.assert_allclose(jac.numpy(), np.diag(1j * np.exp(1j * np.array([0.3, -1.2]))))


# --- compositions ----------------------------------------------------------------------------
def test_grad_of_grad_and_jvp_of_grad_pinned_to_torch():
    def g(z):
        return (z * z.conj() * z * z.conj()).real.sum()  # |z|^4: grad 4 |z|^2 z

    np.testing.assert_allclose(jf.grad(g)(ct(Z)).numpy(), 4 * np.abs(Z) ** 2 * Z, rtol=1e-13)
    gg = jf.grad(lambda z: jf.grad(g)(z).real.sum())(ct(Z)).numpy()
    np.testing.assert_allclose(gg, [12.64 - 7.28j, 1.12 - 0.64j, 27.04 + 1.2j], rtol=1e-12)

    def L(z):
        return (jitgrad.sin(z) * jitgrad.exp(z)).real.sum() + (jitgrad.abs(z) ** 2 *
                                                               jnp.angle(z)).sum()

    _, hv = jf.jvp(jf.grad(L), (ct(Z),), (ct(T),))
    torch_value = [3.305796002349 - 0.154284706131j, 1.398687914854 - 1.722948733067j,
                   1.447671665437 + 3.637288131619j]  # jvp of grad, torch 2.13
    np.testing.assert_allclose(hv.numpy(), torch_value, rtol=1e-9)
    fd = num_jvp(lambda a: jf.grad(L)(ct(a)).numpy(), Z, T)
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-6)


def test_jvp_of_vjp_and_vmap_of_grad():
    def h(z):
        return jf.vjp(lambda w: w * w, z)[1](ct(1.0 + 0j))[0]  # conj(2 z)

    _, t = jf.jvp(h, (ct(1 + 2j),), (ct(0.5 + 0.25j),))
    assert t.item() == pytest.approx(1 - 0.5j)
    per = jf.vmap(jf.grad(lambda z: (jitgrad.cosh(z) * jitgrad.sinh(z)).imag.sum()))(
        ct(Z.reshape(3, 1)))
    torch_value = [[-0.981670036360 - 1.843080704634j], [-0.294655682766 + 0.753190374750j],
                   [1.990244507817 + 9.866979039064j]]  # vmap(grad), torch 2.13
    np.testing.assert_allclose(per.numpy(), torch_value, rtol=1e-10)


# --- jitgrad.numpy.functional ----------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(HOLO))
def test_holomorphic_grad_is_the_complex_derivative(name):
    f, df = HOLO[name]
    for z in Z:
        d = holomorphic_grad(f)(complex(z))
        assert d == pytest.approx(df(z), rel=1e-12)
    h = 1e-6  # the complex derivative by differences along x and along y agree for holomorphic f
    fz = on_array(f)
    assert (fz(Z[0] + h) - fz(Z[0] - h)) / (2 * h) == pytest.approx(
        holomorphic_grad(f)(Z[0]), rel=1e-6)
    assert (fz(Z[0] + 1j * h) - fz(Z[0] - 1j * h)) / (2j * h) == pytest.approx(
        holomorphic_grad(f)(Z[0]), rel=1e-6)


def test_holomorphic_grad_with_argnum_jnp_and_hips_semantics():
    d = holomorphic_grad(lambda a, z: a * jnp.exp(z) + jnp.sin(z), argnum=1)(2.0, 0.3 + 0.4j)
    z = 0.3 + 0.4j
    assert d == pytest.approx(2.0 * np.exp(z) + np.cos(z), rel=1e-13)
    # HIPS's value for any f: conj of the gradient of Re f (conj(z): Re = x, so 1)
    assert holomorphic_grad(jnp.conj)(z) == pytest.approx(1.0)


def test_holomorphic_grad_refuses_real_input_and_real_output():
    with pytest.raises(TypeError, match="holomorphic_grad: the differentiated argument must be "
                                        "complex"):
        holomorphic_grad(lambda z: z * z)(1.5)
    with pytest.raises(TypeError, match="must return a complex scalar"):
        holomorphic_grad(jitgrad.abs)(1 + 1j)
    with pytest.raises(TypeError, match="must return a scalar"):
        holomorphic_grad(lambda z: z * z)(Z)


def test_numpy_functional_grad_keeps_complex_inputs():
    # was: the input cast to float64, dropping the imaginary part (a wrong gradient)
    g = np_grad(lambda z: jnp.sum(jnp.abs(z) ** 2))(Z)
    np.testing.assert_allclose(g, 2 * Z)


# --- forward mode through the FFT rows (before: a real input's tangent was dropped silently
# at the first complex output, so jvp of abs(rfft(x)) was 0) ----------------------------------
@pytest.mark.parametrize("name, fn", [
    ("rfft", lambda x: jnp.abs(jnp.fft.rfft(x))),
    ("irfft", lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * (1 + 2j), n=6)),
    ("fft_pad", lambda x: jnp.real(jnp.fft.fft(x, n=8) * jnp.conj(jnp.fft.fft(x, n=8)))),
    ("ifft_crop", lambda x: jnp.imag(jnp.fft.ifft(x * 1j + x * x, n=3))),
    ("hfft", lambda x: jnp.fft.hfft(x * (0.5 - 1j))),
    ("rfft2", lambda x: jnp.abs(jnp.fft.rfft2(x.reshape(2, 3), norm="ortho"))),
])
def test_jvp_through_fft_rows_of_a_real_input(name, fn):
    x = np.array([1.0, 2.0, -0.5, 3.0, 0.25, -1.5])
    t = np.array([0.1, 0.2, 0.3, -0.4, 1.0, 0.5])
    _, tangent = jf.jvp(fn, (jitgrad.tensor(x),), (jitgrad.tensor(t),))
    f = lambda a: fn(jitgrad.tensor(a)).numpy()  # noqa: E731
    np.testing.assert_allclose(tangent.numpy(), num_jvp(f, x, t), rtol=1e-6, atol=1e-8)


def test_jvp_of_fft_of_a_complex_input_and_jacfwd_of_real_to_complex():
    _, tangent = jf.jvp(lambda z: jnp.fft.fft(z * z), (ct(Z),), (ct(T),))
    np.testing.assert_allclose(tangent.numpy(), np.fft.fft(2 * Z * T), rtol=1e-12)
    jac = jf.jacfwd(jnp.fft.fft)(jitgrad.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(jac.numpy(), np.fft.fft(np.eye(3), axis=0), atol=1e-15)


def test_vmap_of_fft_rows():
    batch = np.array([[1.0, 2.0, -0.5, 3.0], [0.5, -1.0, 2.0, 0.0], [3.0, 1.0, 1.0, -2.0]])
    for fn, ref in [(lambda x: jnp.fft.rfft(x, n=6), lambda a: np.fft.rfft(a, n=6)),
                    (lambda x: jnp.fft.irfft(jnp.fft.fft(x)[:3], n=4),
                     lambda a: np.fft.irfft(np.fft.fft(a)[:3], n=4)),
                    (lambda x: jnp.fft.ifft2(x.reshape(2, 2) * 1j, s=(3, 2)),
                     lambda a: np.fft.ifft2(a.reshape(2, 2) * 1j, s=(3, 2)))]:
        out = jf.vmap(fn)(jitgrad.tensor(batch)).numpy()
        np.testing.assert_allclose(out, np.stack([ref(a) for a in batch]), atol=1e-14)
    # per-example gradients through a spectrum
    g = jf.vmap(jf.grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2)))(jitgrad.tensor(batch))
    for k, a in enumerate(batch):
        L = lambda v: float(np.sum(np.abs(np.fft.rfft(v)) ** 2))  # noqa: E731
        h, eye = 1e-6, np.eye(a.size)
        fd = np.array([(L(a + h * e) - L(a - h * e)) / (2 * h) for e in eye])
        np.testing.assert_allclose(g.numpy()[k], fd, rtol=1e-6, atol=1e-6)


def test_real_functions_through_complex_intermediates_in_forward_mode():
    # before: the tangent stopped at the first complex value: these were all 0
    x = jitgrad.tensor([0.3, -1.2, 2.0])
    t = jitgrad.tensor([1.0, 0.5, -2.0])
    _, tan = jf.jvp(lambda a: jitgrad.abs(a * (1 + 2j)).sum(), (x,), (t,))
    assert tan.item() == pytest.approx(np.sqrt(5) * np.sum(np.sign(x.numpy()) * t.numpy()))
    jac = jf.jacfwd(lambda a: jnp.real(jitgrad.exp(1j * a)))(x)
    np.testing.assert_allclose(jac.numpy(), np.diag(-np.sin(x.numpy())), atol=1e-15)
    hess = jf.hessian(lambda a: (jitgrad.abs(jitgrad.exp(1j * a) * a) ** 2).sum())(x)
    np.testing.assert_allclose(hess.numpy(), 2 * np.eye(3), atol=1e-13)
    _, hv = jf.hvp(lambda a: jnp.real(jitgrad.sin(a * (1 - 1j))).sum(), (x,), (t,))
    xa = x.numpy()  # Re sin(x - ix) = sin(x) cosh(x): second derivative 2 cos(x) sinh(x)
    np.testing.assert_allclose(hv[0].numpy(), 2 * np.cos(xa) * np.sinh(xa) * t.numpy(), rtol=1e-12)
