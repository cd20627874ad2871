"""Random draws under ``jitgrad.compile`` (Note [random rows] in jitgrad/compile/trace.py):
dropout, ``rand_like``, ``randn_like``, ``rand``, ``randn`` and the reparameterised samples of
``Normal``, ``Uniform`` and ``MultivariateNormal`` are captured, a compiled call draws what the
eager call draws under the same seed and leaves the generator where eager leaves it."""
import numpy as np
import pytest

import jitgrad as jg
import jitgrad.nn.functional as F
from jitgrad import func

X = jg.tensor(np.random.default_rng(0).standard_normal((8, 5)))
W = jg.tensor(np.random.default_rng(1).standard_normal((5, 4)))


def noisy(x, w):
    h = F.dropout(jg.tanh(x @ w), 0.3)
    h = F.dropout2d(h.reshape(2, 4, 2, 2), 0.5).reshape(8, 4)
    return ((h + 0.1 * jg.randn_like(h) + jg.rand_like(h)) ** 2).sum()


def _after(seed, fn, *args):
    """``fn(*args)`` from ``seed``, and the generator's next draw after it."""
    jg.manual_seed(seed)
    out = fn(*args)
    return out, jg.rand(3).tolist()


def test_compiled_draws_equal_eager_under_the_same_seed():
    w = W.clone().requires_grad_()
    compiled = jg.compile(noisy, fullgraph=True)
    grad = jg.compile(func.value_and_grad(noisy, argnums=1), fullgraph=True)
    for seed in (0, 1, 2, 0):
        (want, want_next), (got, got_next) = _after(seed, noisy, X, w), _after(seed, compiled, X, w)
        assert got.item() == want.item() and got_next == want_next
        (g_want,) = jg.autograd.grad(want, w)
        (g_got,) = jg.autograd.grad(got, w)
        np.testing.assert_array_equal(g_got.numpy(), g_want.numpy())
        (v, g), _ = _after(seed, grad, X, W)
        assert v.item() == want.item()
        np.testing.assert_array_equal(g.numpy(), g_want.numpy())
    assert compiled.stats()["traces"] == 1 and grad.stats()["traces"] == 1
    assert noisy(X, w).grad_fn.name() == "SumBackward0"
    h = F.dropout(X, 0.5)
    assert h.grad_fn is None and F.dropout(w, 0.5).grad_fn.name() == "MulBackward0"


def test_an_unused_draw_still_advances_the_generator():
    def f(x):
        F.dropout(x, 0.5)  # dropped, as eager drops it: the draw still happens
        return x * 2
    compiled = jg.compile(f, fullgraph=True)
    for seed in (3, 4):
        (want, want_next), (got, got_next) = _after(seed, f, X), _after(seed, compiled, X)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got_next == want_next


def test_a_trace_that_breaks_after_a_draw_runs_eagerly_from_the_same_state():
    def f(x):
        h = F.dropout(x, 0.5)
        if h.sum().item() > 0:  # a host read: the trace breaks after the draw
            return h * 2
        return h
    compiled = jg.compile(f)
    (want, want_next) = _after(5, f, X)
    with pytest.warns(UserWarning, match="cannot be captured"):
        got, got_next = _after(5, compiled, X)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got_next == want_next


def test_a_draw_inside_a_loop_body_runs_eagerly():
    def f(x):
        return jg.fori_loop(3, lambda c: F.dropout(c, 0.2) + c, x).sum()
    compiled = jg.compile(f)
    want, want_next = _after(6, f, X)
    with pytest.warns(UserWarning, match="random draw inside a captured loop"):
        got, got_next = _after(6, compiled, X)
    assert got.item() == want.item() and got_next == want_next


def _elbo(mu, log_sigma):
    """A Monte Carlo objective drawing with ``randn``, ``rand`` and the distributions'
    ``rsample`` (float32 draws too), validation off (its checks read values in Python)."""
    eps = jg.randn(16, 3)
    z = mu + jg.exp(log_sigma) * eps
    q = jg.distributions.Normal(mu, jg.exp(log_sigma), validate_args=False)
    w = q.rsample((4,))
    u = jg.distributions.Uniform(mu - 1.0, mu + 1.0, validate_args=False).rsample()
    m = jg.distributions.MultivariateNormal(mu, scale_tril=jg.diag(jg.exp(log_sigma)),
                                            validate_args=False).rsample((2,))
    half = jg.rand(3, dtype=jg.float32).double()
    return (-(0.5 * (z * z).sum(1) * jg.rand(16)).mean() + q.log_prob(w).sum() + (u * u).sum()
            + m.sum() * half.sum())


def test_rand_randn_and_rsample_are_captured_and_draw_as_eager():
    mu, log_sigma = jg.tensor([0.1, -0.2, 0.3]), jg.tensor([-1.0, 0.0, 0.5])
    eager = func.value_and_grad(_elbo, argnums=(0, 1))
    compiled = jg.compile(eager, fullgraph=True)
    for seed in (0, 1, 0):
        (want, want_next), (got, got_next) = (_after(seed, eager, mu, log_sigma),
                                              _after(seed, compiled, mu, log_sigma))
        assert got[0].item() == want[0].item() and got_next == want_next
        for g, w in zip(got[1], want[1]):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert compiled.stats()["traces"] == 1
    jg.manual_seed(7)  # outside a trace the draws are the generator's own, as before
    a = jg.randn(2, 3)
    jg.manual_seed(7)
    b = jg.default_generator.numpy_generator().standard_normal((2, 3))
    np.testing.assert_array_equal(a.numpy(), b)
