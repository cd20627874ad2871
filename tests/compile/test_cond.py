"""``jitgrad.cond``: only the branch taken runs; gradients of any order eager; compiled, the
predicate is a constant, a value guard, or both branches are captured and the program picks
one at each call (never a stale branch)."""
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


def test_compiled_picks_the_branch_at_each_call_without_retracing():
    g = jg.compile(f, fullgraph=True)
    dg = jg.compile(func.grad(f), fullgraph=True)
    x = jg.tensor([0.5, 1.5])
    for v in (x, -x, x, -x):  # the other branch, not the traced one
        assert g(v).item() == f(v).item()
        np.testing.assert_allclose(dg(v).numpy(), func.grad(f)(v).numpy(), rtol=1e-15)
    assert g(-x).item() == -4.0
    assert g.stats()["traces"] == dg.stats()["traces"] == 1
    h = jg.compile(lambda flag, x: jg.cond(flag, expensive, cheap, x))
    for flag in (True, False, True):  # a bool argument: a program per value
        assert h(jg.tensor(flag), x).item() == (expensive(x) if flag else cheap(x)).item()


def test_compiled_runs_only_the_branch_taken():
    """The branches have different costs, and the one not taken would raise: a Cholesky
    factor of a matrix that is not positive definite."""
    def logdet_or_trace(a):
        return jg.cond(jg.linalg.eigvalsh(a)[0] > 0,
                       lambda m: 2 * jg.log(jg.diagonal(jg.linalg.cholesky(m))).sum(),
                       lambda m: jg.trace(m), a)
    g = jg.compile(func.value_and_grad(logdet_or_trace), fullgraph=True)
    spd = jg.tensor([[4.0, 1.0], [1.0, 3.0]])
    indefinite = jg.tensor([[1.0, 2.0], [2.0, 1.0]])
    for a in (spd, indefinite, spd, indefinite):
        (v, grad), (want_v, want_g) = g(a), func.value_and_grad(logdet_or_trace)(a)
        assert abs(v.item() - want_v.item()) < 1e-14
        np.testing.assert_allclose(grad.numpy(), want_g.numpy(), rtol=1e-13, atol=1e-15)
    assert abs(g(spd)[0].item() - np.log(11.0)) < 1e-14
    np.testing.assert_allclose(g(indefinite)[1].numpy(), np.eye(2))


def test_compiled_gradients_to_order_two_and_in_a_loop_body():
    def f3(x):
        return jg.cond(x.sum() > 0, expensive, lambda v: (v ** 3).sum(), x)
    g = jg.compile(f3)
    x = jg.tensor([0.5, -1.5], requires_grad=True)
    for v in (-x, x, -x):
        (d,) = jg.autograd.grad(g(v), x, create_graph=True)
        (dd,) = jg.autograd.grad(d.sum(), x)
        (want_d,) = jg.autograd.grad(f3(v), x, create_graph=True)
        (want_dd,) = jg.autograd.grad(want_d.sum(), x)
        np.testing.assert_allclose(d.detach().numpy(), want_d.detach().numpy(), rtol=1e-15)
        np.testing.assert_allclose(dd.numpy(), want_dd.numpy(), rtol=1e-15)

    def halve_or_triple(x):
        return jg.fori_loop(3, lambda c: jg.cond(c.sum() > 1.0, lambda v: v * 0.5,
                                                 lambda v: v * 3.0, c), x).sum()
    c = jg.compile(func.value_and_grad(halve_or_triple), fullgraph=True)
    for v in (jg.tensor([0.5, 1.5]), jg.tensor([0.05, 0.15])):
        (val, grad), (want_v, want_g) = c(v), func.value_and_grad(halve_or_triple)(v)
        assert abs(val.item() - want_v.item()) < 1e-15
        np.testing.assert_allclose(grad.numpy(), want_g.numpy(), rtol=1e-15)


def test_compiled_branches_of_different_shapes_run_eagerly():
    g = jg.compile(lambda x: jg.cond(x.sum() > 0, lambda v: v * 2, lambda v: v.sum(), x))
    x = jg.tensor([0.5, 1.5])
    with pytest.warns(UserWarning, match="different structures, shapes"):
        assert g(x).tolist() == [1.0, 3.0]
    assert g(-x).item() == -2.0


def test_vmap_with_an_unbatched_predicate():
    xs = jg.tensor(np.arange(6.0).reshape(3, 2))
    got = func.vmap(lambda x: jg.cond(True, lambda v: v * 3, lambda v: v, x))(xs)
    np.testing.assert_allclose(got.numpy(), xs.numpy() * 3)


def test_vmap_with_a_predicate_per_example_selects_each_examples_branch():
    xs = jg.tensor(np.array([[1.0, 2.0], [-3.0, 1.0], [0.5, -2.0]]))

    def h(x):
        return jg.cond(x.sum() > 0, lambda v: (jg.sin(v) * v).sum(), lambda v: (v ** 3).sum(), x)
    want = [h(x) for x in xs]
    np.testing.assert_allclose(func.vmap(h)(xs).numpy(), [w.item() for w in want], rtol=1e-15)
    grads = func.vmap(func.grad(h))(xs)
    for g, x in zip(grads, xs):
        np.testing.assert_allclose(g.numpy(), func.grad(h)(x).numpy(), rtol=1e-15)
    hess = func.vmap(func.hessian(h))(xs)
    for H, x in zip(hess, xs):
        np.testing.assert_allclose(H.numpy(), func.hessian(h)(x).numpy(), rtol=1e-14)
    np.testing.assert_allclose(jg.compile(func.vmap(h))(xs).numpy(), func.vmap(h)(xs).numpy())
    with pytest.raises(ValueError, match="same structure, shapes"):
        func.vmap(lambda x: jg.cond(x.sum() > 0, lambda v: v, lambda v: v.sum(), x))(xs)
