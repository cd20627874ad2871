"""``while_loop`` inside ``jitgrad.compile``: one loop in the program, never unrolled, the trip
count decided at each call (Note [compiled while] in compile/while_nodes.py)."""
import tracemalloc

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import func


def cube_root(a, tol=1e-24):
    """Newton's method for x^3 = a, iterated until the step's squared norm is below ``tol``."""
    def body(state):
        x, _ = state
        step = (x ** 3 - a) / (3.0 * x ** 2)
        return x - step, step
    x, _ = jg.while_loop(lambda s: (s[1] * s[1]).sum() > tol, body,
                         (a * 0.0 + 2.0, a * 0.0 + 1.0))
    return x


def loss(a):
    return (cube_root(a) ** 2).sum()


def test_value_and_gradient_equal_eager_and_finite_differences():
    a = jg.tensor(np.random.default_rng(0).uniform(1.0, 10.0, 16))
    compiled = jg.compile(func.value_and_grad(loss), fullgraph=True)
    want_v, want_g = func.value_and_grad(loss)(a)
    for _ in range(2):  # the trace run, then the program
        v, g = compiled(a)
        assert abs(v.item() - want_v.item()) < 1e-13
        np.testing.assert_allclose(g.numpy(), want_g.numpy(), rtol=1e-14)
    # d/da cbrt(a)^2 = 2/3 a^(-1/3): the converged iteration's derivative
    np.testing.assert_allclose(g.numpy(), 2 / 3 * a.numpy() ** (-1 / 3), rtol=1e-12)
    # five-point central differences on one entry at a time (truncation ~h^4, rounding ~eps/h)
    h = 1e-3
    for i in (0, 7):
        def at(d):
            return loss(a[i:i + 1] + d).item()
        fd = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h)
        assert abs(fd - g[i].item()) < 1e-10, (fd, g[i].item())


def test_trip_count_changes_between_calls_without_retracing():
    compiled = jg.compile(func.grad(loss), fullgraph=True)
    trips = []

    def count(a):
        def body(s):
            x, step, k = s
            d = (x ** 3 - a) / (3.0 * x ** 2)
            return x - d, d, k + 1
        return jg.while_loop(lambda s: (s[1] * s[1]).sum() > 1e-24, body,
                             (a * 0.0 + 2.0, a * 0.0 + 1.0, jg.tensor(0)))[2].item()
    for scale in (1.0, 50.0, 1e6, 1.0):
        a = jg.tensor([1.5, 3.0, 8.0]) * scale
        trips.append(count(a))
        np.testing.assert_allclose(compiled(a).numpy(), func.grad(loss)(a).numpy(), rtol=1e-13)
    assert len(set(trips)) >= 3  # the calls really ran different numbers of steps
    assert compiled.stats()["traces"] == 1


def test_zero_trips_and_a_trace_run_of_zero_trips():
    def f(x):
        return (jg.while_loop(lambda c: c.sum() < 10, lambda c: c * 2, x) * 3).sum()
    compiled = jg.compile(func.value_and_grad(f), fullgraph=True)
    big, small = jg.tensor([5.0, 6.0]), jg.tensor([1.0, 2.0])
    v, g = compiled(big)  # traced on a call of zero trips
    assert v.item() == 33.0 and g.tolist() == [3.0, 3.0]
    v, g = compiled(small)  # the program runs two steps: (1, 2) -> (4, 8)
    assert v.item() == 36.0 and g.tolist() == [12.0, 12.0]
    v, g = compiled(big)
    assert v.item() == 33.0 and g.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("cap", [None, 3 * 8 * 8])
def test_closure_gradients_equal_the_python_loop_under_any_cap(cap):
    rng = np.random.default_rng(0)
    w = jg.tensor(rng.standard_normal(8), requires_grad=True)
    x0 = jg.tensor(rng.standard_normal(8), requires_grad=True)
    kwargs = {} if cap is None else {"max_tape_bytes": cap}

    def body(state):
        x, k = state
        return jg.tanh(w * x) + 0.1 * x, k + 1

    def f(x0, steps):
        out, count = jg.while_loop(lambda s: s[1] < steps, body, (x0, jg.tensor(0)), **kwargs)
        assert not count.requires_grad
        return (out * out).sum()
    compiled = jg.compile(f, fullgraph=True)
    for steps in (37, 5, 37):
        ref = x0
        for _ in range(steps):
            ref = jg.tanh(w * ref) + 0.1 * ref
        want = jg.autograd.grad((ref * ref).sum(), (w, x0))
        got = jg.autograd.grad(compiled(x0, jg.tensor(steps)), (w, x0))
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13, atol=1e-15)
    assert compiled.stats()["traces"] == 1


def test_tape_memory_stays_under_the_cap():
    """2000 steps of a 8 KB carry would keep 16 MB; the tape (half the cap at most) and the
    backward's recomputed chunk (the other half) stay within the cap (Python's and numpy's
    allocations, traced: the program's kernels are compiled before)."""
    cap = 1 << 20
    w = jg.tensor(np.linspace(0.1, 0.9, 1000))

    def f(x0):
        def body(s):
            x, k = s
            return jg.sin(w * x) + x * 0.5, k + 1
        out, _ = jg.while_loop(lambda s: s[1] < 2000, body, (x0, jg.tensor(0)),
                               max_tape_bytes=cap)
        return out.sum()
    compiled = jg.compile(func.grad(f), fullgraph=True)
    x0 = jg.tensor(np.linspace(-1.0, 1.0, 1000))
    want = func.grad(f)(x0)
    compiled(x0)  # the trace run
    compiled(x0)  # the program's first run compiles its kernels
    tracemalloc.start()
    try:
        got = compiled(x0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    assert peak < cap + 40 * 8000, peak  # (40 carries: the call's other arrays)


def test_nested_fori_loop_and_branches_in_the_body():
    def f(a):
        def body(s):
            x, k = s
            x = jg.fori_loop(3, lambda y: 0.5 * (y + a / y), x)  # three Newton steps for sqrt
            return jg.where(x > 1.0, x, x * 1.5), k + 1
        x, _ = jg.while_loop(lambda s: s[1] < 4, body, (a * 0.0 + 1.0, jg.tensor(0)))
        return (x * a).sum()
    compiled = jg.compile(func.value_and_grad(f), fullgraph=True)
    a = jg.tensor([0.3, 2.0, 7.0])
    want = func.value_and_grad(f)(a)
    for _ in range(2):
        got = compiled(a)
        assert abs(got[0].item() - want[0].item()) < 1e-13
        np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), rtol=1e-13)


def test_python_condition_and_errors():
    x = jg.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="cond_fn returned a Python value"):
        out = jg.compile(lambda x: jg.while_loop(lambda c: False, lambda c: c * 2, x))(x)
    assert out.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="one-element"):
        jg.compile(lambda x: jg.while_loop(lambda c: c < 10, lambda c: c * 2, x))(x)
    with pytest.raises(TypeError, match="same shapes"):
        jg.compile(lambda x: jg.while_loop(lambda c: c.sum() < 10, lambda c: c.sum(), x))(x)


def test_a_second_derivative_raises_as_eager_does():
    def f(x):
        out, _ = jg.while_loop(lambda s: s[1] < 3, lambda s: (jg.sin(s[0]) * s[0], s[1] + 1),
                               (x, jg.tensor(0)))
        return out.sum()
    gg = func.grad(lambda x: (func.grad(f)(x) ** 2).sum())
    x = jg.tensor([0.3, 0.7])
    for fn in (gg, jg.compile(gg)):
        with pytest.raises(RuntimeError, match="second derivative"):
            fn(x)
    xr = jg.tensor([0.3, 0.7], requires_grad=True)
    y = jg.compile(f)(xr)
    with pytest.raises(RuntimeError, match="second derivative"):
        jg.autograd.grad(y, xr, create_graph=True)
