"""Fused backward regions (Note [fused regions] in engine/regions.py, Note [fused backward] in
ops/core/fusion.py).

Every test compares against finite differences or against the same backward run node by node
(``FUSION`` off), and checks that fusion did (or did not) happen by counting the regions the
nodes accepted. Thresholds are lowered so small tensors fuse; the region structures are few and
reused across tests, because each new one compiles a kernel once.
"""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad import _config
from jitgrad.autograd import Function, gradcheck
from jitgrad.ops.core import fusion

RNG = np.random.default_rng(7)
ADDED_INTO = []  # regions that added a partial sum waiting at an edge to their gradient


@pytest.fixture
def fused(monkeypatch):
    """Fuse from one element on; count the regions run as one (and their sizes)."""
    monkeypatch.setattr(_config, "FUSION", True)
    monkeypatch.setattr(_config, "FUSION_MIN_ELEMENTS", 1)
    sizes = []
    real = fusion.apply_fused

    def counting(region, g):
        out = real(region, g)
        if out is not None:
            sizes.append(len(region.nodes))
            if out.added:  # a waiting partial sum was added in by the kernel
                assert all(region.partials[t] is not None for t in out.added)
                ADDED_INTO.append(len(region.nodes))
        return out

    monkeypatch.setattr(fusion, "apply_fused", counting)
    ADDED_INTO.clear()
    return sizes


def branch(x):
    """W5w's branch: ten elementwise ops, x used twice, a square (one node, both inputs)."""
    y = jg.sin(x) * 1.5 + 0.25
    y = jg.tanh(y)
    y = y * y
    y = jg.exp(-y) + x
    return jg.cos(y) * 0.5


def w2(x):
    """W2: a DAG in which x reaches the region's one outside edge four times."""
    return jg.tanh(jg.sin(x) * jg.exp(-x * x) + 0.5 * x)


def grads(fn, arrays, fusion_on, monkeypatch, reduce=jg.sum):
    monkeypatch.setattr(_config, "FUSION", fusion_on)
    ts = [jg.tensor(a, requires_grad=True) for a in arrays]
    reduce(fn(*ts)).backward()
    return [t.grad.numpy() for t in ts]


def weighted_sum(y):
    return (y * jg.tensor(np.linspace(-1.0, 2.0, y.numel()).reshape(y.shape))).sum()


@pytest.mark.parametrize("fn, nodes", [(branch, 10), (w2, 8)], ids=["branch", "w2"])
def test_fused_gradient_matches_finite_differences(fused, fn, nodes):
    x = jg.tensor(RNG.standard_normal(6), requires_grad=True)
    assert gradcheck(lambda t: fn(t), (x,))
    assert fused and set(fused) == {nodes}  # every elementwise node ran in one region


@pytest.mark.parametrize("fn", [branch, w2], ids=["branch", "w2"])
def test_fused_equals_node_by_node(fused, fn, mode, monkeypatch):
    x = RNG.standard_normal(300)
    (ref,) = grads(fn, [x], False, monkeypatch, weighted_sum)
    assert not fused
    (got,) = grads(fn, [x], True, monkeypatch, weighted_sum)
    assert fused
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-15)


def test_float32_region(fused, monkeypatch):
    x = RNG.standard_normal(64).astype(np.float32)
    (ref,) = grads(branch, [x], False, monkeypatch)
    (got,) = grads(branch, [x], True, monkeypatch)
    assert fused and got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_broadcast_operands_and_two_outside_edges(fused, monkeypatch):
    """W3: ``(A * b + b) ** 2`` with b a row: the region has two outside edges (A's and b's),
    b's gradient is summed inside the kernel, then reduced to b's shape by the engine."""
    A, b = RNG.standard_normal((5, 4)), RNG.standard_normal(4)
    f = lambda A, b: (A * b + b) ** 2
    ref = grads(f, [A, b], False, monkeypatch)
    got = grads(f, [A, b], True, monkeypatch)
    assert fused == [3]
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-13)
    At, bt = jg.tensor(A, requires_grad=True), jg.tensor(b, requires_grad=True)
    assert gradcheck(f, (At, bt))


def test_edges_receiving_the_same_gradient_share_it(fused):
    """relu(h + bias): both outside edges receive relu's gradient itself: one output array."""
    h = jg.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    bias = jg.tensor(RNG.standard_normal(4), requires_grad=True)
    out = jg.relu(h * 1.0 + bias)
    out.backward(jg.ones_like(out))
    mask = (h.detach().numpy() + bias.detach().numpy() > 0).astype(float)
    np.testing.assert_array_equal(h.grad.numpy(), mask)
    np.testing.assert_array_equal(bias.grad.numpy(), mask.sum(0))
    assert fused == [3]


def test_input_without_grad_and_mixed_dtypes(fused, monkeypatch):
    """Only inputs that need gradients are computed; a float32 operand promoted into a float64
    region stays outside it (its gradient is cast by the engine, as node by node)."""
    x = RNG.standard_normal(8)
    c = RNG.standard_normal(8).astype(np.float32)
    xt = jg.tensor(x, requires_grad=True)
    ct = jg.tensor(c, requires_grad=True)
    w = jg.tensor(RNG.standard_normal(8))  # no gradient
    (jg.sin(xt * w) * jg.exp(ct * 2.0)).sum().backward()
    ex = np.exp(c * np.float32(2.0)).astype(np.float64)  # exp(ct * 2) runs in float32
    np.testing.assert_allclose(xt.grad.numpy(), np.cos(x * w.numpy()) * w.numpy() * ex,
                               rtol=1e-13)
    np.testing.assert_allclose(ct.grad.numpy(), np.sin(x * w.numpy()) * ex * 2.0, rtol=1e-6)
    assert ct.grad.dtype == jg.float32
    assert fused  # sin, its product and the mul by w fused; exp(ct * 2) is float32: outside


def test_observed_nodes_are_not_fused(fused):
    """A tensor hook, retain_grad and autograd.grad's inputs each see the gradient that reaches
    them, so their nodes stay out of any region."""
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    y = jg.sin(x)
    z = y * 3.0
    z.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    (jg.exp(z) * 2.0).sum().backward()
    ez = np.exp(3.0 * np.sin(x.detach().numpy()))
    np.testing.assert_allclose(z.grad.numpy(), 2.0 * ez, rtol=1e-14)
    np.testing.assert_allclose(seen[0], 6.0 * ez, rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), 6.0 * ez * np.cos(x.detach().numpy()), rtol=1e-14)
    y = jg.sin(x)
    z = y * 3.0
    (gz, gx) = jg.autograd.grad((jg.exp(z) * 2.0).sum(), (z, x))
    np.testing.assert_allclose(gz.numpy(), 2.0 * ez, rtol=1e-14)
    np.testing.assert_allclose(gx.numpy(), 6.0 * ez * np.cos(x.detach().numpy()), rtol=1e-14)


def test_gradient_from_outside_the_region(fused, monkeypatch):
    """``a = exp(x)`` feeds the region and another branch: its node joins no region (its
    gradient is not the region's alone), and both contributions arrive."""
    x = RNG.standard_normal(7)
    f = lambda x: (lambda a: jg.sin(a * 3.0) + a[::2].sum())(jg.exp(x))
    (ref,) = grads(f, [x], False, monkeypatch)
    (got,) = grads(f, [x], True, monkeypatch)
    np.testing.assert_allclose(got, ref, rtol=1e-14)
    assert fused


def test_saved_tensors_are_freed_and_checked(fused):
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    loss = branch(x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    y = jg.sin(x)
    z = jg.tanh(y * y)
    with jg.no_grad():
        y.mul_(2.0)  # saved by the mul node inside the region
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_retain_graph_runs_twice(fused):
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    loss = branch(x).sum()
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-15)


def test_create_graph_and_small_gradients_run_node_by_node(fused, monkeypatch):
    x = jg.tensor(RNG.standard_normal(4), requires_grad=True)
    (g,) = jg.autograd.grad(jg.sin(x * 2.0).sum(), x, create_graph=True)
    assert not fused
    g.sum().backward()  # second order: -4 sin(2x)
    np.testing.assert_allclose(x.grad.numpy(), -4 * np.sin(2 * x.detach().numpy()), rtol=1e-14)
    fused.clear()  # (that backward, of the recorded graph, may fuse)
    monkeypatch.setattr(_config, "FUSION_MIN_ELEMENTS", 5)
    jg.sin(x * 2.0).sum().backward()
    assert not fused


def test_fusion_switch(fused, monkeypatch):
    monkeypatch.setattr(_config, "FUSION", False)
    x = jg.tensor(RNG.standard_normal(4), requires_grad=True)
    branch(x).sum().backward()
    assert not fused


def test_bitwise_reproducible(fused, monkeypatch):
    jg.use_deterministic_algorithms(True)
    try:
        xs = [RNG.standard_normal(200) for _ in range(6)]
        f = lambda *ts: sum(branch(t).sum() for t in ts)
        first = grads(f, xs, True, monkeypatch, reduce=lambda y: y)
        for _ in range(3):
            again = grads(f, xs, True, monkeypatch, reduce=lambda y: y)
            for a, b in zip(first, again):
                np.testing.assert_array_equal(a, b)
    finally:
        jg.use_deterministic_algorithms(False)


def w5h(x):
    """Two regions reaching x: the second adds its gradient into the first's, in its kernel."""
    return jg.exp(jg.sin(x)).sum() + jg.log(jg.cosh(x)).sum()


def test_second_region_adds_into_the_waiting_gradient(fused, mode, monkeypatch):
    x = RNG.standard_normal(500)
    (ref,) = grads(w5h, [x], False, monkeypatch, reduce=lambda y: y)
    (got,) = grads(w5h, [x], True, monkeypatch, reduce=lambda y: y)
    np.testing.assert_allclose(got, ref, rtol=1e-14)
    np.testing.assert_allclose(got, np.exp(np.sin(x)) * np.cos(x) + np.tanh(x), rtol=1e-12)
    assert fused == [2, 2]
    # not in deterministic mode: each contribution stays apart until the node runs; threaded,
    # the two regions may run at once, each finding the slot empty
    if mode == "alone":
        assert ADDED_INTO == [2]
    elif mode == "deterministic":
        assert ADDED_INTO == []


class KeepGrad(Function):
    """Identity whose backward keeps the gradient it returns (so the engine does not own it)."""

    kept = []

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        out = g * 3.0
        KeepGrad.kept.append(out)
        return out


def test_a_shared_partial_sum_is_not_written(fused, mode):
    """The gradient waiting at x's edge is one a custom Function kept: the region adds to it
    out of place, and the kept tensor keeps its values."""
    KeepGrad.kept.clear()
    x = jg.tensor(RNG.standard_normal(50), requires_grad=True)
    first = jg.exp(jg.sin(x)).sum()  # runs after KeepGrad's node (created later: popped first)
    loss = first + KeepGrad.apply(x).sum()
    loss.backward()
    xs = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.sin(xs)) * np.cos(xs) + 3.0, rtol=1e-14)
    np.testing.assert_array_equal(KeepGrad.kept[0].numpy(), np.full(50, 3.0))
    assert fused == [2] and ADDED_INTO == []


def test_region_that_cannot_be_built_runs_node_by_node(fused, monkeypatch):
    """A derivative body the generated module could not import makes the region decline (the
    nodes run one by one) instead of giving no gradient."""
    monkeypatch.setattr(fusion, "_FUSED", {})
    monkeypatch.setattr(fusion, "_importable", lambda body: False)
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    (jg.sin(x) * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.cos(x.detach().numpy()), rtol=1e-15)
    assert not fused


def test_numpy_namespace_rows_fuse(fused, monkeypatch):
    """arcsin, hypot and floor (ops/elementwise_np.py) are elementwise rows: their nodes join a
    region like sin's, floor's zero gradient included, and match node by node and finite
    differences."""
    import jitgrad.numpy as jnp

    def f(x, y):
        return jnp.hypot(jnp.arcsin(x * 0.5), y) + jnp.floor(x) * y

    x, y = RNG.uniform(-1.5, 1.5, 40), RNG.uniform(0.5, 2.0, 40)
    ref = grads(f, [x, y], False, monkeypatch, weighted_sum)
    assert not fused
    got = grads(f, [x, y], True, monkeypatch, weighted_sum)
    assert fused == [7]  # mul, arcsin, hypot, floor, mul, add and the weighting: one region
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g, r, rtol=1e-13, atol=1e-15)
    xt, yt = (jg.tensor(a[:6], requires_grad=True) for a in (x, y))
    monkeypatch.setattr(_config, "FUSION", True)
    assert gradcheck(f, (xt, yt))
