"""HIPS autograd's extension API and misc helpers in jitgrad.numpy.functional: custom
primitives (primitive/defvjp/defjvp) under grad, forward mode and second order; flatten /
flatten_func; fixed_point's implicit-function-theorem gradient vs finite differences."""
import math

import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad import func as jfunc
from jitgrad.numpy import functional as F


@F.primitive
def logsumexp(x):
    """log(sum(exp(x))) on NumPy data, stabilised."""
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


# d lse / dx = softmax(x) = exp(x - lse): written with jitgrad.numpy so it nests
F.defvjp(logsumexp, lambda ans, x: lambda g: g * jnp.exp(x - ans))
F.defjvp(logsumexp, lambda g, ans, x: jnp.sum(g * jnp.exp(x - ans)))

X = np.array([0.1, 0.5, -0.3])
SOFTMAX = np.exp(X) / np.sum(np.exp(X))


def test_primitive_is_the_plain_function_on_numpy_and_records_on_tensors():
    assert logsumexp(X) == pytest.approx(math.log(np.sum(np.exp(X))))
    assert isinstance(logsumexp(X), np.floating)
    assert logsumexp.__name__ == "logsumexp" and "stabilised" in logsumexp.__doc__
    t = jitgrad.tensor(X, requires_grad=True)
    out = logsumexp(t)
    assert isinstance(out, jitgrad.Tensor) and out.requires_grad
    out.backward()
    np.testing.assert_allclose(t.grad.numpy(), SOFTMAX, rtol=1e-13)


def test_primitive_under_grad_and_second_order():
    np.testing.assert_allclose(F.grad(lambda x: 2 * logsumexp(x * 3))(X),
                               6 * np.exp(3 * X) / np.sum(np.exp(3 * X)), rtol=1e-12)
    # the vjp rule is traced: the Hessian is diag(s) - s s^T
    np.testing.assert_allclose(F.hessian(logsumexp)(X),
                               np.diag(SOFTMAX) - np.outer(SOFTMAX, SOFTMAX), rtol=1e-12)
    d3 = F.grad(F.grad(F.grad(lambda a: logsumexp(jnp.stack([a, 2 * a])))))(0.3)
    # lse(a, 2a) = log(e^a + e^2a); third derivative by differences of the closed-form second
    s = lambda a: math.exp(a) / (math.exp(a) + math.exp(2 * a))  # noqa: E731
    d2 = lambda a: s(a) * (1 - s(a))  # noqa: E731  (d/da of 2 - s(a))
    assert d3 == pytest.approx((d2(0.3 + 1e-5) - d2(0.3 - 1e-5)) / 2e-5, rel=1e-6)


def test_primitive_under_forward_mode_uses_defjvp():
    v = np.array([1.0, -2.0, 0.5])
    value, tangent = F.make_jvp(logsumexp)(X)(v)
    assert value == pytest.approx(logsumexp(X))
    assert tangent == pytest.approx(SOFTMAX @ v, rel=1e-13)
    _, t2 = jfunc.jvp(logsumexp, (jitgrad.tensor(X),), (jitgrad.tensor(v),))
    assert t2.item() == pytest.approx(SOFTMAX @ v, rel=1e-13)

    @F.primitive
    def cube(x):
        return x ** 3

    F.defjvp(cube, lambda g, ans, x: 3 * x ** 2 * g)  # only a jvp: forward mode works
    assert F.make_jvp(cube)(2.0)(1.0)[1] == pytest.approx(12.0)
    assert F.deriv(F.deriv(cube))(2.0) == pytest.approx(12.0)  # forward over forward
    with pytest.raises(NotImplementedError, match="primitive 'cube' has no vjp for positional "
                                                  "argument 0"):
        F.grad(cube)(2.0)


def test_primitive_with_several_arguments_argnums_and_missing_rules():
    @F.primitive
    def scaled_sq(x, scale, tag="unused"):
        return scale * x ** 2

    F.defvjp(scaled_sq, lambda ans, x, scale, tag="unused": lambda g: g * 2 * scale * x,
             argnums=(0,))
    F.defjvp(scaled_sq, None, lambda g, ans, x, scale, tag="unused": g * x ** 2)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(F.elementwise_grad(scaled_sq)(x, 3.0, tag="t"), 6 * x)
    assert F.deriv(scaled_sq, 1)(x, 3.0)[1] == pytest.approx(4.0)
    with pytest.raises(NotImplementedError, match="no vjp for positional argument 1"):
        F.grad(lambda s: jnp.sum(scaled_sq(x, s)))(3.0)
    with pytest.raises(TypeError, match="wrapped by primitive"):
        F.defvjp(np.sin, None)


def test_defvjp_argnum():
    @F.primitive
    def prod(a, b):
        return a * b

    F.defvjp_argnum(prod, lambda argnum, ans, args, kwargs: (
        lambda g: g * args[1 - argnum]))
    assert F.grad(lambda a: prod(a, 4.0) + prod(2.0, a))(1.5) == pytest.approx(6.0)


def test_flatten_roundtrip_sorted_keys_and_differentiable():
    value = {"b": [np.ones((2, 2)), (3.0,)], "a": np.arange(3.0)}
    flat, unflatten = F.flatten(value)
    assert type(flat) is np.ndarray and flat.shape == (8,)
    np.testing.assert_array_equal(flat, [0, 1, 2, 1, 1, 1, 1, 3])  # "a" first (sorted)
    back = unflatten(flat * 2)
    np.testing.assert_array_equal(back["b"][0], 2 * np.ones((2, 2)))
    assert float(back["b"][1][0]) == 6.0 and isinstance(back["b"], list)
    empty, unflat_empty = F.flatten([])
    assert empty.shape == (0,) and unflat_empty(empty) == []
    # gradient through flatten: d/dp sum(flatten(p)^2) = 2 p, in p's structure
    g = F.grad(lambda p: jnp.sum(F.flatten(p)[0] ** 2))(value)
    np.testing.assert_allclose(g["a"], 2 * value["a"])
    assert g["b"][1][0] == pytest.approx(6.0)
    flat_func, unflat, example = F.flatten_func(
        lambda p, s: {"y": p["a"] * s, "z": p["b"][0]}, value)
    np.testing.assert_allclose(flat_func(example, 2.0), np.concatenate([2 * value["a"],
                                                                        np.ones(4)]))
    with pytest.raises(ValueError, match="unflatten: the vector has 3 entries"):
        unflatten(np.ones(3))


def newton_sqrt(a):
    """sqrt(a) as the fixed point of Newton's map x -> (x + a / x) / 2."""
    return F.fixed_point(lambda a: lambda x: 0.5 * (x + a / x), a, 1.0,
                         lambda x, y: jnp.abs(x - y), 1e-12)


def test_fixed_point_value_gradient_and_second_derivative():
    assert newton_sqrt(2.0) == pytest.approx(math.sqrt(2.0), rel=1e-14)
    assert type(newton_sqrt(2.0)) is np.ndarray or isinstance(newton_sqrt(2.0), np.floating)
    assert F.grad(newton_sqrt)(2.0) == pytest.approx(0.5 / math.sqrt(2.0), rel=1e-10)
    assert F.grad(F.grad(newton_sqrt))(2.0) == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-8)


def test_fixed_point_of_a_contraction_vs_finite_differences():
    # x = tanh(W x + a): a contraction for small W; gradient w.r.t. a vector a and a matrix
    # W (in a tuple: containers are flattened) vs central differences of the iteration
    rng = np.random.default_rng(1)
    W = 0.3 * rng.normal(size=(3, 3))
    a = rng.normal(size=3)
    c = np.array([1.0, -2.0, 0.5])

    def solve(params):
        return F.fixed_point(lambda p: lambda x: jnp.tanh(p[0] @ x + p[1]), params, np.zeros(3),
                             lambda x, y: jnp.max(jnp.abs(x - y)), 1e-13)

    loss = lambda params: jnp.sum(solve(params) * c)  # noqa: E731
    gW, ga = F.grad(loss)((W, a))
    h = 1e-6
    for arr, g, k in ((W, gW, 0), (a, ga, 1)):
        for idx in np.ndindex(*arr.shape):
            e = np.zeros_like(arr)
            e[idx] = h
            plus = [W, a]
            minus = [W, a]
            plus[k], minus[k] = arr + e, arr - e
            fd = (float(loss(tuple(plus))) - float(loss(tuple(minus)))) / (2 * h)
            assert g[idx] == pytest.approx(fd, rel=1e-6, abs=1e-9)


def test_make_jvp_falls_back_to_reverse_mode_where_the_tangent_is_lost():
    # a custom Function whose forward works on raw data: forward mode cannot see inside, so
    # make_jvp takes J v by the double-vjp trick instead of returning a zero tangent (an output
    # mixing such a Function with traced ops still loses that part: jitgrad.func.jvp too)
    from jitgrad.autograd import Function
    from jitgrad.tensor import Tensor

    class RawCube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return Tensor._make(x.numpy() ** 3)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    x = np.array([1.0, 2.0])
    value, tangent = F.make_jvp(lambda y: RawCube.apply(y) * 2)(x)(np.array([1.0, -1.0]))
    np.testing.assert_allclose(value, 2 * x ** 3)
    np.testing.assert_allclose(tangent, 6 * x ** 2 * np.array([1.0, -1.0]))
    assert F.deriv(lambda y: RawCube.apply(y))(2.0) == pytest.approx(12.0)
