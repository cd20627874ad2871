"""Forward mode through a custom ``autograd.Function``: its ``jvp`` gives the output tangents
(checked against finite differences); without one, an input with a tangent raises PyTorch's
NotImplementedError instead of losing the tangent silently."""
import numpy as np
import pytest

import jitgrad
import jitgrad.func as jf


class Cube(jitgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.x, ctx.scale = x, scale
        return jitgrad.tensor(scale * x.numpy() ** 3)

    @staticmethod
    def backward(ctx, g):
        return g * 3.0 * ctx.scale * ctx.x ** 2, None

    @staticmethod
    def jvp(ctx, t, t_scale):
        assert t_scale is None  # a non-tensor argument gets None
        return t * 3.0 * ctx.scale * ctx.x ** 2


class CubeWithoutJvp(jitgrad.autograd.Function):
    forward = Cube.forward
    backward = Cube.backward


def f(x):
    return jitgrad.sin(Cube.apply(x, 0.5)) + x * x


def test_jvp_of_a_custom_function_mixed_with_ops_matches_finite_differences():
    x0 = np.array([0.3, -1.2, 0.8])
    t0 = np.array([1.0, 0.5, -2.0])
    _, tangent = jf.jvp(f, (jitgrad.tensor(x0),), (jitgrad.tensor(t0),))
    eps = 1e-6

    def value(x):
        return np.sin(0.5 * x ** 3) + x * x
    expected = (value(x0 + eps * t0) - value(x0 - eps * t0)) / (2 * eps)
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-8)


def test_jacfwd_equals_jacrev_through_a_custom_function():
    x = jitgrad.tensor([0.3, -1.2, 0.8])
    np.testing.assert_allclose(jf.jacfwd(f)(x).numpy(), jf.jacrev(f)(x).numpy(), rtol=1e-12)


def test_a_tangent_into_a_function_without_jvp_raises():
    x = jitgrad.tensor([0.3, -1.2])
    with pytest.raises(NotImplementedError, match="implement the jvp function"):
        jf.jvp(lambda x: CubeWithoutJvp.apply(x, 0.5) + x, (x,), (jitgrad.ones(2),))
    # reverse mode is unaffected
    g = jf.grad(lambda x: CubeWithoutJvp.apply(x, 0.5).sum())(x)
    np.testing.assert_allclose(g.numpy(), 1.5 * x.numpy() ** 2, rtol=1e-12)


def test_inputs_without_tangents_need_no_jvp():
    x = jitgrad.tensor([0.3, -1.2])
    y = jitgrad.tensor([1.0, 2.0])
    # only y carries a tangent; the Function sees x alone
    _, tangent = jf.jvp(lambda y: CubeWithoutJvp.apply(x, 0.5) * y, (y,), (jitgrad.ones(2),))
    np.testing.assert_allclose(tangent.numpy(), 0.5 * x.numpy() ** 3, rtol=1e-12)
