"""``jitgrad.while_loop``: a value-decided trip count, reverse mode through a tape of carries
kept under a memory cap (Note [while tape] in compile/while_loop.py)."""
import numpy as np
import pytest

import jitgrad as jg


def cube_root(a, tol=1e-13):
    """Newton's method for x^3 = a, iterated until the step is below ``tol``."""
    def cond(state):
        x, step = state
        return step.abs().max() > tol

    def body(state):
        x, _ = state
        step = (x ** 3 - a) / (3 * x ** 2)
        return x - step, step
    x, _ = jg.while_loop(cond, body, (jg.ones_like(a) * 2, jg.ones_like(a)))
    return x


def test_newton_solve_and_its_gradient_match_finite_differences():
    a = jg.tensor([2.0, 5.0, 9.0], requires_grad=True)
    x = cube_root(a)
    np.testing.assert_allclose(x.detach().numpy(), np.cbrt([2.0, 5.0, 9.0]), rtol=1e-14)
    (g,) = jg.autograd.grad(x.sum(), a)
    # the converged iteration's derivative is the implicit one: dx/da = 1 / (3 x^2)
    np.testing.assert_allclose(g.numpy(), 1 / (3 * np.cbrt([2.0, 5.0, 9.0]) ** 2), rtol=1e-12)
    h = 1e-6
    for i in range(3):
        up, down = a.detach().clone(), a.detach().clone()
        up[i] += h
        down[i] -= h
        fd = (cube_root(up).sum() - cube_root(down).sum()).item() / (2 * h)
        assert abs(fd - g[i].item()) < 1e-10 * max(1.0, abs(fd)) + 1e-9


def _damped(w, x0, steps):
    def body(state):
        x, k = state
        return jg.tanh(w * x) + 0.1 * x, k + 1
    return jg.while_loop(lambda s: s[1] < steps, body, (x0, jg.tensor(0)))[0]


@pytest.mark.parametrize("cap", [None, 3 * 8 * 8])
def test_gradients_equal_the_python_loop_under_any_cap(cap):
    rng = np.random.default_rng(0)
    w = jg.tensor(rng.standard_normal(8), requires_grad=True)
    x0 = jg.tensor(rng.standard_normal(8), requires_grad=True)
    ref = x0
    for _ in range(37):
        ref = jg.tanh(w * ref) + 0.1 * ref
    want = jg.autograd.grad((ref * ref).sum(), (w, x0))
    kwargs = {} if cap is None else {"max_tape_bytes": cap}

    def body(state):
        x, k = state
        return jg.tanh(w * x) + 0.1 * x, k + 1
    out, count = jg.while_loop(lambda s: s[1] < 37, body, (x0, jg.tensor(0)), **kwargs)
    assert count.item() == 37 and not count.requires_grad
    got = jg.autograd.grad((out * out).sum(), (w, x0))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-15)
    if cap is not None:  # the tape stayed under the cap: 3 carries of 8 float64 + a counter
        loop = out.grad_fn.loop
        assert loop.tape_bytes() <= cap and loop.stride > 1


def test_zero_trips_and_plain_mode():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    out = jg.while_loop(lambda c: c.sum() < 0, lambda c: c * 2, x)
    (g,) = jg.autograd.grad((out * 3).sum(), x)
    assert out.tolist() == [1.0, 2.0] and g.tolist() == [3.0, 3.0]
    with jg.no_grad():
        y = jg.while_loop(lambda c: c.sum() < 100, lambda c: c * 2, x)
    assert y.tolist() == [64.0, 128.0] and not y.requires_grad


def test_errors_name_the_problem():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="same shapes"):
        jg.while_loop(lambda c: c.sum() < 10, lambda c: c.sum(), x)
    with pytest.raises(ValueError, match="one-element"):
        jg.while_loop(lambda c: c < 10, lambda c: c * 2, x)
    with pytest.raises(ValueError, match="fewer than two carries"):
        jg.while_loop(lambda c: c.sum() < 10, lambda c: c * 2, x, max_tape_bytes=8)
    out = jg.while_loop(lambda c: c.sum() < 10, lambda c: c * c, x)
    with pytest.raises(RuntimeError, match="second derivative"):
        jg.autograd.grad(out.sum(), x, create_graph=True)


def _scalar_root(a):
    """cube_root of a 0-d ``a`` with a per-example trip count under vmap (a counter too)."""
    def cond(state):
        x, step, n = state
        return (step.abs() > 1e-13) & (n < 60)

    def body(state):
        x, _, n = state
        step = (x ** 3 - a) / (3 * x ** 2)
        return x - step, step, n + 1
    x, _, n = jg.while_loop(cond, body, (a * 0 + 2.0, a * 0 + 1.0, jg.tensor(0)))
    return x, n


def test_under_vmap_each_example_runs_its_own_trip_count():
    a = jg.tensor([0.5, 8.0, 1000.0])
    x, n = jg.func.vmap(_scalar_root)(a)
    per_example = [_scalar_root(jg.tensor(v)) for v in (0.5, 8.0, 1000.0)]
    np.testing.assert_allclose(x.numpy(), np.cbrt([0.5, 8.0, 1000.0]), rtol=1e-14)
    np.testing.assert_array_equal(n.numpy(), [int(m) for _, m in per_example])
    assert len(set(n.tolist())) > 1  # the examples stop at different steps
    g = jg.func.vmap(jg.func.grad(lambda v: _scalar_root(v)[0]))(a)
    np.testing.assert_allclose(g.numpy(), 1 / (3 * np.cbrt([0.5, 8.0, 1000.0]) ** 2), rtol=1e-12)


def test_forward_mode_and_jacobians_through_the_loop():
    a = jg.tensor([2.0, 5.0, 9.0])
    want = np.diag(1 / (3 * np.cbrt([2.0, 5.0, 9.0]) ** 2))
    for jac in (jg.func.jacfwd, jg.func.jacrev):
        np.testing.assert_allclose(jac(cube_root)(a).numpy(), want, rtol=1e-12, atol=1e-15)
    # a tangent entering only through a closure the body reads
    t = jg.tensor([1.0, -2.0, 0.5])
    _, tangent = jg.func.jvp(lambda s: cube_root(a * s), (jg.tensor(1.0),), (jg.tensor(1.0),))
    h = 1e-6
    fd = (cube_root(a * (1 + h)) - cube_root(a * (1 - h))).numpy() / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), fd, rtol=1e-8)
    _, tangent = jg.func.jvp(cube_root, (a,), (t,))
    np.testing.assert_allclose(tangent.numpy(), want @ t.numpy(), rtol=1e-12)
