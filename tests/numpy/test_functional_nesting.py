"""jitgrad.numpy.functional operators nest to any order (HIPS autograd's defining feature):
before, an inner operator returned NumPy and the outer one failed with "the function must
return a jitgrad Tensor ..., got ndarray". Values against closed forms and float64 finite
differences; the outermost call must return plain NumPy."""
import math

import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.numpy import functional as F


def central(f, x, h=1e-5):
    """d f / dx by central differences, for a scalar or array x (f returns an array)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        return (np.asarray(f(x + h)) - np.asarray(f(x - h))) / (2 * h)
    out = np.zeros(np.shape(f(x)) + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        out[(Ellipsis,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return out


def f(x):
    return jnp.sin(x) * x ** 2


def test_third_derivative_matches_the_closed_form():
    x = 1.3
    s, c = math.sin(x), math.cos(x)
    d1 = F.grad(f)(x)
    d2 = F.grad(F.grad(f))(x)
    d3 = F.grad(F.grad(F.grad(f)))(x)
    assert d1 == pytest.approx(c * x ** 2 + 2 * x * s, rel=1e-13)
    assert d2 == pytest.approx(-s * x ** 2 + 4 * x * c + 2 * s, rel=1e-13)
    assert d3 == pytest.approx(-c * x ** 2 - 6 * x * s + 6 * c, rel=1e-13)
    for value in (d1, d2, d3):
        assert type(value) is np.float64  # plain NumPy at the outermost call


def test_fourth_order_of_a_polynomial_and_of_exp():
    g4 = F.grad(F.grad(F.grad(F.grad(lambda x: x ** 5))))
    assert g4(2.0) == pytest.approx(120 * 2.0)
    e4 = F.grad(F.grad(F.grad(F.grad(jnp.exp))))
    assert e4(0.7) == pytest.approx(math.exp(0.7), rel=1e-13)


def test_elementwise_grad_nested():
    x = np.array([-0.8, 0.1, 0.5, 1.7])
    t = np.tanh(x)
    d2 = F.elementwise_grad(F.elementwise_grad(jnp.tanh))(x)
    d3 = F.elementwise_grad(F.elementwise_grad(F.elementwise_grad(jnp.tanh)))(x)
    assert type(d2) is np.ndarray and type(d3) is np.ndarray
    np.testing.assert_allclose(d2, -2 * t * (1 - t ** 2), rtol=1e-12)
    np.testing.assert_allclose(d3, (1 - t ** 2) * (6 * t ** 2 - 2), rtol=1e-12)


def test_grad_of_a_function_that_calls_value_and_grad():
    def h(x):
        value, g = F.value_and_grad(lambda y: jnp.sum(jnp.sin(y) * y))(x)
        return value + jnp.sum(g ** 2)

    x = np.array([0.3, -1.1, 2.0])
    got = F.grad(h)(x)
    ref = central(lambda a: np.sum(np.sin(a) * a) + np.sum((np.cos(a) * a + np.sin(a)) ** 2), x)
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-9)
    v, g = F.value_and_grad(h)(x)  # and value_and_grad of it
    assert type(v) is np.float64 and type(g) is np.ndarray
    np.testing.assert_allclose(g, got, rtol=1e-14)


def test_hessian_and_jacobian_inside_grad():
    x = np.array([0.5, -0.4, 1.2])

    def trace_hessian(a):
        return jnp.trace(F.hessian(lambda y: jnp.sum(jnp.exp(y) * y[0]))(a))

    ref = central(lambda a: np.trace(np.diag(np.exp(a) * a[0]) + np.outer(
        np.eye(3)[0], np.exp(a)) + np.outer(np.exp(a), np.eye(3)[0])), x)
    np.testing.assert_allclose(F.grad(trace_hessian)(x), ref, rtol=1e-7, atol=1e-9)

    def jac_norm(a):
        return jnp.sum(F.jacobian(lambda y: jnp.cumsum(y ** 3))(a) ** 2)

    ref = central(lambda a: np.sum((np.tril(np.ones((3, 3))) * 3 * a ** 2) ** 2), x)
    np.testing.assert_allclose(F.grad(jac_norm)(x), ref, rtol=1e-7, atol=1e-9)


def test_hessian_of_hessian_shape_and_values():
    x = np.array([0.3, 0.7])
    # f = x0^2 x1^3: the third derivative tensor by jacobian(hessian(f))
    third = F.jacobian(F.hessian(lambda y: y[0] ** 2 * y[1] ** 3))(x)
    assert third.shape == (2, 2, 2)
    ref = central(lambda a: np.array([[2 * a[1] ** 3, 6 * a[0] * a[1] ** 2],
                                      [6 * a[0] * a[1] ** 2, 6 * a[0] ** 2 * a[1]]]), x)
    np.testing.assert_allclose(third, ref, rtol=1e-7, atol=1e-9)


def test_closure_over_the_outer_variable_no_perturbation_confusion():
    # d/dx [ d/dy (x * y) at y = x ] = d/dx x = 1 (Siskind & Pearlmutter's example)
    assert F.grad(lambda x: F.grad(lambda y: x * y)(x))(2.0) == pytest.approx(1.0)
    # d/dx [x * d/dy (x + y)]|_{y=1} = 1
    assert F.grad(lambda x: x * F.grad(lambda y: x + y)(1.0))(3.0) == pytest.approx(1.0)
    # the inner grad's argument is a closure-free constant: d/dx grad_y (x y^2)(3) = 6
    assert F.grad(lambda x: F.grad(lambda y: x * y ** 2)(3.0))(0.5) == pytest.approx(6.0)


def test_forward_and_reverse_mix():
    assert F.deriv(F.deriv(jnp.sin))(0.5) == pytest.approx(-math.sin(0.5), rel=1e-13)
    assert F.deriv(F.grad(lambda x: x ** 4))(2.0) == pytest.approx(48.0)
    assert F.grad(F.deriv(jnp.sin))(0.5) == pytest.approx(-math.sin(0.5), rel=1e-13)
    x = np.array([1.0, 2.0])
    value, tangent = F.make_jvp(F.grad(lambda y: jnp.sum(y ** 3)))(x)(np.array([1.0, -1.0]))
    np.testing.assert_allclose(value, 3 * x ** 2)
    np.testing.assert_allclose(tangent, 6 * x * np.array([1.0, -1.0]))


def test_make_vjp_and_make_jvp_nest():
    x = np.array([0.2, 0.9])

    def vjp_norm(a):
        vjp, _ = F.make_vjp(lambda y: jnp.exp(y) * y)(a)
        return jnp.sum(vjp(jnp.ones(2)) ** 2)

    ref = central(lambda a: np.sum((np.exp(a) * (1 + a)) ** 2), x)
    np.testing.assert_allclose(F.grad(vjp_norm)(x), ref, rtol=1e-7, atol=1e-9)
    vjp, ans = F.make_vjp(lambda y: jnp.exp(y) * y)(x)
    assert type(ans) is np.ndarray and type(vjp(np.ones(2))) is np.ndarray
    jv = F.make_jvp_reversemode(lambda y: jnp.sin(y) * y[0])(x)(np.array([1.0, 0.0]))
    v = np.array([1.0, 0.0])  # J v = cos(x) x0 v + sin(x) v0
    np.testing.assert_allclose(jv, np.cos(x) * x[0] * v + np.sin(x) * v[0], rtol=1e-12)


def test_hvp_tensor_jacobian_product_make_hvp_ggnvp():
    x = np.array([0.4, -0.2, 1.5])
    v = np.array([1.0, 2.0, -1.0])
    fun = lambda y: jnp.sum(jnp.sin(y) * y[1])  # noqa: E731
    hess = F.hessian(fun)(x)
    np.testing.assert_allclose(F.hessian_vector_product(fun)(x, v), hess @ v, rtol=1e-12)
    hvp_fn, g = F.make_hvp(fun)(x)
    np.testing.assert_allclose(hvp_fn(v), hess @ v, rtol=1e-12)
    np.testing.assert_allclose(g, F.grad(fun)(x))
    jac = F.jacobian(lambda y: jnp.sin(y) * y[0])(x)
    np.testing.assert_allclose(F.vector_jacobian_product(lambda y: jnp.sin(y) * y[0])(x, v),
                               v @ jac, rtol=1e-12)
    ggn = F.make_ggnvp(lambda y: jnp.sin(y) * y[0])(x)(v)
    np.testing.assert_allclose(ggn, jac.T @ jac @ v, rtol=1e-12)


def test_argnum_tuple_and_grad_named():
    fun = lambda a, b, c: jnp.sum(a * b ** 2) + c  # noqa: E731
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    ga, gb = F.grad(fun, (0, 1))(a, b, 1.0)
    np.testing.assert_allclose(ga, b ** 2)
    np.testing.assert_allclose(gb, 2 * a * b)

    def named(a, scale):
        return jnp.sum(a ** 2) * scale

    assert F.grad_named(named, "scale")(a, 2.0) == pytest.approx(5.0)
    with pytest.raises(TypeError, match="no positional parameter 'z'"):
        F.grad_named(named, "z")


def test_tensor_argument_that_requires_grad_gives_a_traced_result():
    # a torch-style caller: the result is a Tensor on the caller's graph
    x = jitgrad.tensor([0.5, 1.0], requires_grad=True)
    g = F.grad(lambda y: jnp.sum(y ** 3))(x)
    assert isinstance(g, jitgrad.Tensor) and g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy())


def test_errors_name_the_operator():
    with pytest.raises(TypeError, match="grad: the function must return a scalar"):
        F.grad(lambda y: y * 2)(np.ones(3))
    with pytest.raises(TypeError, match="must return a jitgrad Tensor"):
        F.grad(lambda y: 3.0)(1.0)
    with pytest.raises(TypeError, match="argnum 2 but the function got 1"):
        F.grad(lambda y: y, 2)(1.0)


def test_outermost_results_feed_scipy_optimize():
    # HIPS's idiom: minimize(value_and_grad(f), x0, jac=True) needs plain floats and arrays
    scipy_optimize = pytest.importorskip("scipy.optimize")
    rosen = lambda x: jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)  # noqa: E731
    result = scipy_optimize.minimize(F.value_and_grad(rosen), np.zeros(3), jac=True,
                                     method="BFGS")
    np.testing.assert_allclose(result.x, np.ones(3), atol=1e-4)
    hess = F.hessian(rosen)(result.x)
    np.testing.assert_allclose(hess, scipy_optimize.rosen_hess(result.x), rtol=1e-10)
