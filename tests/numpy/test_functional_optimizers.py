"""jitgrad.numpy.optimizers (HIPS's adam / sgd / rmsprop): the first three steps equal the
published update equations written out here by hand, on containers of parameters, with the
callback's arguments; and the optimizers differentiate (a hypergradient)."""
import math

import numpy as np
import pytest

import jitgrad.numpy as jnp
from jitgrad.numpy import functional as F
from jitgrad.numpy import optimizers

# a tiny problem: L(w) = sum(c * w^2) + w0 * w1 with the parameters as a dict
C = np.array([1.0, 3.0])


def loss(params):
    w = params["w"]
    return jnp.sum(C * w ** 2) + w[0] * w[1] + params["b"] ** 2


def grad_np(w, b):
    """dL/dw and dL/db written out."""
    return np.array([2 * C[0] * w[0] + w[1], 2 * C[1] * w[1] + w[0]]), 2 * b


P0 = {"w": np.array([1.0, -0.5]), "b": 0.7}
GRAD = F.grad(lambda p, i: loss(p))  # HIPS's signature grad(params, iteration)


def run(optimizer, num_iters, **kwargs):
    seen = []

    def callback(params, i, g):
        seen.append((i, np.array(params["w"]), float(params["b"]), np.array(g["w"])))

    out = optimizer(GRAD, P0, callback=callback, num_iters=num_iters, **kwargs)
    return out, seen


def test_sgd_with_momentum_first_steps_equal_the_equations():
    step, mass = 0.1, 0.9
    out, seen = run(optimizers.sgd, 3, step_size=step, mass=mass)
    w, b = P0["w"].copy(), P0["b"]
    vw, vb = np.zeros(2), 0.0
    for i in range(3):
        gw, gb = grad_np(w, b)
        assert seen[i][0] == i
        np.testing.assert_allclose(seen[i][1], w, rtol=1e-15)
        np.testing.assert_allclose(seen[i][3], gw, rtol=1e-15)
        vw = mass * vw - (1 - mass) * gw  # v <- mass v - (1 - mass) g
        vb = mass * vb - (1 - mass) * gb
        w, b = w + step * vw, b + step * vb  # x <- x + step v
    assert set(out) == {"w", "b"}
    np.testing.assert_allclose(out["w"], w, rtol=1e-15)
    assert float(out["b"]) == pytest.approx(b, rel=1e-15)


def test_rmsprop_first_steps_equal_the_equations():
    step, gamma, eps = 0.1, 0.9, 1e-8
    out, _ = run(optimizers.rmsprop, 3, step_size=step, gamma=gamma, eps=eps)
    w, b = P0["w"].copy(), P0["b"]
    rw, rb = np.ones(2), 1.0  # HIPS starts the running average at 1
    for _ in range(3):
        gw, gb = grad_np(w, b)
        rw = gamma * rw + (1 - gamma) * gw ** 2
        rb = gamma * rb + (1 - gamma) * gb ** 2
        w = w - step * gw / (np.sqrt(rw) + eps)
        b = b - step * gb / (math.sqrt(rb) + eps)
    np.testing.assert_allclose(out["w"], w, rtol=1e-14)
    assert float(out["b"]) == pytest.approx(b, rel=1e-14)


def test_adam_first_steps_equal_the_equations():
    step, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    out, seen = run(optimizers.adam, 3, step_size=step, b1=b1, b2=b2, eps=eps)
    w, b = P0["w"].copy(), P0["b"]
    m, v = np.zeros(3), np.zeros(3)
    for i in range(3):
        gw, gb = grad_np(w, b)
        g = np.concatenate([[gb], gw])  # flatten order: sorted keys, "b" then "w"
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        mhat, vhat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
        x = np.concatenate([[b], w]) - step * mhat / (np.sqrt(vhat) + eps)
        b, w = x[0], x[1:]
    np.testing.assert_allclose(out["w"], w, rtol=1e-14)
    assert float(out["b"]) == pytest.approx(b, rel=1e-14)
    assert len(seen) == 3
    # the first Adam step moves every coordinate by about step_size (mhat/sqrt(vhat) = sign g)
    np.testing.assert_allclose(np.abs(seen[1][1] - P0["w"]), step, rtol=1e-5)


def test_optimizers_reach_the_minimum_and_take_arrays_lists():
    out = optimizers.adam(lambda w, i: F.grad(lambda x: jnp.sum((x - 3.0) ** 2))(w),
                          np.zeros(2), num_iters=300, step_size=0.1)
    np.testing.assert_allclose(out, [3.0, 3.0], atol=1e-2)
    out = optimizers.sgd(lambda p, i: F.grad(lambda q: jnp.sum((q[0] - 1) ** 2) + q[1] ** 2)(p),
                         [np.zeros(2), 2.0], num_iters=400, step_size=0.5)
    assert isinstance(out, list)
    np.testing.assert_allclose(out[0], [1.0, 1.0], atol=1e-3)
    assert abs(float(out[1])) < 1e-3


def test_hypergradient_through_sgd():
    # d/d(step) of the loss after 2 plain gradient steps (mass=0) on L(x) = x^2 / 2:
    # with mass 0, v = -g and x <- x - s g = x (1 - s), so x2 = x0 (1 - s)^2
    def final_loss(s):
        x = optimizers.sgd(lambda x, i: F.grad(lambda y: 0.5 * jnp.sum(y ** 2))(x),
                           np.array([2.0]), num_iters=2, step_size=s, mass=0.0)
        return 0.5 * jnp.sum(x ** 2)

    s = 0.3
    # L2 = x0^2 (1 - s)^4 / 2 -> dL2/ds = -2 x0^2 (1 - s)^3
    assert F.grad(final_loss)(s) == pytest.approx(-2 * 4.0 * (1 - s) ** 3, rel=1e-12)
