"""``jitgrad.cond``: only the branch taken runs; gradients of any order eager; compiled, the
predicate is a constant, a value guard, or stops the capture (never a stale branch)."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad import func
from jitgrad.autograd import gradcheck, gradgradcheck


def expensive(x):
    calls.append("expensive")
    return (jg.sin(x) * x).sum()


def cheap(x):
    calls.append("cheap")
    return (x * 2).sum()


calls = []


def f(x):
    return jg.cond(x.sum() > 0, expensive, cheap, x)


def test_only_the_taken_branch_runs_and_gradients_to_order_two():
    calls.clear()
    x = jg.tensor([0.5, 1.5], requires_grad=True)
    assert abs(f(x).item() - (np.sin([0.5, 1.5]) * [0.5, 1.5]).sum()) < 1e-15
    assert calls == ["expensive"]
    assert abs(f(-x).item() - (-4.0)) < 1e-15 and calls[-1] == "cheap"
    assert gradcheck(f, [x]) and gradgradcheck(f, [x])
    (g,) = jg.autograd.grad(f(x), x)
    np.testing.assert_allclose(g.numpy(), np.sin([0.5, 1.5]) + [0.5, 1.5] * np.cos([0.5, 1.5]))


def test_python_bool_and_pytrees():
    out = jg.cond(True, lambda a, b: (a + b, {"d": a - b}), lambda a, b: (a, {"d": b}),
                  jg.tensor(1.0), jg.tensor(2.0))
    assert out[0].item() == 3.0 and out[1]["d"].item() == -1.0
    with pytest.raises(ValueError, match="one-element"):
        jg.cond(jg.tensor([True, False]), cheap, cheap, jg.ones(2))
    with pytest.raises(TypeError, match="must return Tensors"):
        jg.cond(True, lambda: 1.0, lambda: 2.0)


def test_compiled_never_bakes_in_a_branch():
    g = jg.compile(f)
    x = jg.tensor([0.5, 1.5])
    with pytest.warns(UserWarning, match="cond's predicate"):
        first = g(x)
    assert first.item() == f(x).item()
    assert g(-x).item() == f(-x).item() == -4.0  # the other branch, not the traced one
    h = jg.compile(lambda flag, x: jg.cond(flag, expensive, cheap, x))
    for flag in (True, False, True):  # a bool argument: a program per value
        assert h(jg.tensor(flag), x).item() == (expensive(x) if flag else cheap(x)).item()


def test_vmap_with_an_unbatched_predicate():
    xs = jg.tensor(np.arange(6.0).reshape(3, 2))
    got = func.vmap(lambda x: jg.cond(True, lambda v: v * 3, lambda v: v, x))(xs)
    np.testing.assert_allclose(got.numpy(), xs.numpy() * 3)
