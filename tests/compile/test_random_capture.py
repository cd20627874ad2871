"""Random draws under ``jitgrad.compile`` (Note [random rows] in jitgrad/compile/trace.py):
dropout, ``rand_like`` and ``randn_like`` are captured, a compiled call draws what the eager
call draws under the same seed and leaves the generator where eager leaves it."""
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
