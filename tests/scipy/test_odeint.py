"""jitgrad.scipy.integrate.odeint: forward vs SciPy and closed forms, adjoint gradients for y0,
t and args vs the exact solution's autodiff (a linear ODE: expm) and vs central differences
(Lotka-Volterra; a time-dependent forcing)."""
import numpy as np
import pytest
import scipy.integrate
import scipy.linalg

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.scipy.integrate import odeint
from jitgrad.scipy.linalg import expm
from jitgrad.testing import checks

TOL = dict(rtol=1e-10, atol=1e-10)


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


A = np.array([[-0.5, 1.0], [-1.0, -0.3]])
W = np.array([[0.3, -1.0], [2.0, 0.5], [1.0, 1.0]])


def _linear(y, t, a):
    return jnp.dot(a, y)


def test_linear_ode_matches_expm_and_its_gradients():
    y0, a, t = _leaf([1.0, 0.5]), _leaf(A), _leaf([0.2, 0.9, 1.6])
    ys = odeint(_linear, y0, t, (a,), **TOL)
    ref = np.stack([scipy.linalg.expm(A * (s - 0.2)) @ [1.0, 0.5] for s in (0.2, 0.9, 1.6)])
    checks.assert_close(ys, ref, rtol=1e-9, atol=1e-10)
    (ys * jitgrad.tensor(W)).sum().backward()
    # the same loss through the closed form y(t_i) = expm(A (t_i - t_0)) y0, differentiated by
    # jitgrad's reverse mode (expm is exact to 1e-16)
    y0r, ar, tr = _leaf([1.0, 0.5]), _leaf(A), _leaf([0.2, 0.9, 1.6])
    loss = sum((jnp.dot(expm(ar * (tr[i] - tr[0])), y0r) * jitgrad.tensor(W[i])).sum()
               for i in range(3))
    loss.backward()
    for got, want in ((y0, y0r), (a, ar), (t, tr)):
        checks.assert_close(got.grad, want.grad, rtol=1e-7, atol=1e-8)


def _lotka_volterra(y, t, theta):
    prey, pred = y[0], y[1]
    return jnp.stack([theta[0] * prey - theta[1] * prey * pred,
                      -theta[2] * pred + theta[3] * prey * pred])


def test_lotka_volterra_gradients_vs_finite_differences():
    y0, theta = np.array([1.0, 0.6]), np.array([1.1, 0.4, 0.9, 0.5])
    t = np.array([0.0, 0.5, 1.3, 2.0])
    got = odeint(_lotka_volterra, y0, t, (jitgrad.tensor(theta),), **TOL)
    ref = scipy.integrate.odeint(
        lambda y, s: [theta[0] * y[0] - theta[1] * y[0] * y[1],
                      -theta[2] * y[1] + theta[3] * y[0] * y[1]], y0, t, **TOL)
    checks.assert_close(got, ref, rtol=1e-9, atol=1e-10)
    # one backward pass: the gradient of a random projection of every output
    proj = jitgrad.tensor(np.random.default_rng(0).standard_normal((4, 2)))
    checks.gradcheck(lambda a, b, c: (odeint(_lotka_volterra, a, c, (b,), **TOL) * proj).sum(),
                     (_leaf(y0), _leaf(theta), _leaf(t)))


def test_time_dependent_tfirst_list_output_and_constant_args():
    def forced(t, y, k, c):  # tfirst; c a plain float constant; a list of scalars returned
        return [-k[0] * y[0] + c * jnp.sin(3.0 * t), y[0] - k[1] * y[1]]

    y0, k, t = np.array([0.3, -0.2]), np.array([0.8, 0.4]), np.array([0.1, 0.6, 1.4])
    ref = scipy.integrate.odeint(lambda y, s: [-k[0] * y[0] + 2.0 * np.sin(3.0 * s),
                                               y[0] - k[1] * y[1]], y0, t, **TOL)
    checks.assert_close(odeint(forced, y0, t, (jitgrad.tensor(k), 2.0), tfirst=True, **TOL), ref,
                        rtol=1e-9, atol=1e-10)
    proj = jitgrad.tensor(np.random.default_rng(1).standard_normal((3, 2)))
    checks.gradcheck(lambda a, b, c: (odeint(forced, a, c, (b, 2.0), tfirst=True, **TOL)
                                      * proj).sum(), (_leaf(y0), _leaf(k), _leaf(t)))


def test_second_derivatives_and_unsupported_options_raise():
    y0 = _leaf([1.0, 0.5])
    ys = odeint(_linear, y0, [0.0, 1.0], (jitgrad.tensor(A),))
    with pytest.raises(NotImplementedError, match="odeint: second derivatives"):
        jitgrad.autograd.grad(ys.sum(), y0, create_graph=True)
    k = _leaf(0.5)
    with pytest.raises(ValueError, match="odeint: func uses a Tensor that requires grad"):
        odeint(lambda y, t: -k * y, y0, [0.0, 1.0])
    with pytest.raises(NotImplementedError, match="full_output is not supported"):
        odeint(_linear, y0, [0.0, 1.0], (A,), full_output=True)
