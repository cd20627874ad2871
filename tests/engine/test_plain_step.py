"""Note [plain step] (engine/engine.py): an elementwise node that nothing observes runs as
``_apply_plain`` (apply and validate_outputs at once) and gives exactly what the general path
gives; wherever its checks do not hold it declines, and hooks, retain_grad, captures,
anomaly detection, create_graph and freed or modified saved values behave as before."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad import _config
from jitgrad.graph.node import SECOND_BACKWARD_MSG
from jitgrad.ops.core.registry import ElementwiseNode

RNG = np.random.default_rng(7)


@pytest.fixture
def plain_calls(monkeypatch):
    """Counts the plain steps that returned gradients (None: declined)."""
    calls = {"taken": 0, "declined": 0}
    original = ElementwiseNode._apply_plain

    def counting(self, grad_outputs):
        out = original(self, grad_outputs)
        calls["taken" if out is not None else "declined"] += 1
        return out

    monkeypatch.setattr(ElementwiseNode, "_apply_plain", counting)
    return calls


def _without_plain(monkeypatch):
    monkeypatch.setattr(ElementwiseNode, "_apply_plain", None)


def _chain(x, y):
    """A chain of rows whose bodies read scalars, inputs and the result."""
    h = jg.tanh(x * 1.5 + y) ** 2
    h = jg.sin(h / y) - 0.25 * x
    return (jg.exp(-h) * y).sum()


def _grads(fn, arrays):
    leaves = [jg.tensor(a, requires_grad=True) for a in arrays]
    fn(*leaves).backward()
    return [leaf.grad.numpy().copy() for leaf in leaves]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_plain_equals_general_bitwise(dtype, plain_calls, monkeypatch):
    arrays = [RNG.uniform(0.5, 2.0, (3, 5)).astype(dtype) for _ in range(2)]
    plain = _grads(_chain, arrays)
    assert plain_calls["taken"] >= 8
    _without_plain(monkeypatch)
    general = _grads(_chain, arrays)
    for p, g in zip(plain, general):
        assert p.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(p, g)


def test_plain_gradients_match_finite_differences():
    x0, y0 = RNG.uniform(0.5, 2.0, 6), RNG.uniform(0.5, 2.0, 6)
    gx, gy = _grads(_chain, [x0, y0])

    def value(x, y):
        return float(_chain(jg.tensor(x), jg.tensor(y)))

    eps = 1e-6
    for k in range(6):
        e = np.zeros(6)
        e[k] = eps
        assert abs((value(x0 + e, y0) - value(x0 - e, y0)) / (2 * eps) - gx[k]) < 1e-7
        assert abs((value(x0, y0 + e) - value(x0, y0 - e)) / (2 * eps) - gy[k]) < 1e-7


def test_broadcast_and_mixed_dtypes_decline(plain_calls):
    """An input of another shape (a reduction) or dtype (a cast) is the general path's."""
    x = jg.tensor(RNG.standard_normal((4, 3)), requires_grad=True)
    b = jg.tensor(RNG.standard_normal(3), requires_grad=True)
    f = jg.tensor(RNG.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    ((x * b) + f).sum().backward()
    assert plain_calls["declined"] >= 2
    np.testing.assert_allclose(b.grad.numpy(), x.detach().numpy().sum(0), rtol=1e-14)
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(b.detach().numpy(), (4, 3)))
    assert f.grad.dtype == jg.float32
    np.testing.assert_array_equal(f.grad.numpy(), np.ones((4, 3), np.float32))


def test_hooks_and_retain_grad_still_see_gradients(plain_calls):
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    h = x * 3.0
    h.retain_grad()
    k = jg.tanh(h)
    seen = []
    k.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 2.0)
    node_seen = []
    h.grad_fn.register_hook(lambda grads_in, grads_out: node_seen.append(len(grads_in)))
    (k * 1.0).sum().backward()
    assert k.grad_fn._observed and h.grad_fn._observed
    np.testing.assert_array_equal(seen[0], np.ones(5))
    expected_h = 2.0 * (1.0 - np.tanh(3.0 * x.detach().numpy()) ** 2)
    np.testing.assert_allclose(h.grad.numpy(), expected_h, rtol=1e-13)
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * expected_h, rtol=1e-13)
    assert node_seen == [2]


def test_modified_saved_value_raises():
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    a = x * 1.0
    y = jg.exp(a)  # saves its result
    z = (y * 2.0).sum()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_second_backward_raises_and_retain_graph_accumulates():
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    loss = (jg.sin(x) * 2.0).sum()
    loss.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    np.testing.assert_allclose(first, 2.0 * np.cos(x.detach().numpy()), rtol=1e-15)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()
    assert "second time" in SECOND_BACKWARD_MSG


def test_anomaly_detection_checks_plain_nodes(plain_calls):
    x = jg.tensor(np.array([1.0, 0.0]), requires_grad=True)
    with jg.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="returned nan values"):
            (jg.sqrt(x * 0.0) * 1.0).sum().backward()
    assert plain_calls["taken"] == 0


def test_grad_inputs_and_create_graph_use_the_general_path(plain_calls):
    x = jg.tensor(RNG.standard_normal(4), requires_grad=True)
    (g,) = jg.autograd.grad(jg.sin(x * 2.0).sum(), x, create_graph=True)
    (gx,) = jg.autograd.grad((x * 3.0).sum(), x)  # captures: ``inputs`` given
    assert plain_calls["taken"] == 0
    np.testing.assert_array_equal(gx.numpy(), np.full(4, 3.0))
    g.sum().backward()  # the recorded backward graph, run plainly
    assert plain_calls["taken"] > 0
    np.testing.assert_allclose(x.grad.numpy(), -4.0 * np.sin(2.0 * x.detach().numpy()),
                               rtol=1e-14)


def test_fusion_threshold_goes_to_a_region(monkeypatch, plain_calls):
    """At FUSION_MIN_ELEMENTS elements the node declines: the engine fuses from there."""
    monkeypatch.setattr(_config, "FUSION_MIN_ELEMENTS", 6)
    x = jg.tensor(RNG.standard_normal(6), requires_grad=True)
    jg.tanh(jg.sin(x) * 1.5).sum().backward()
    assert plain_calls["taken"] == 0
    xv = x.detach().numpy()
    expected = (1.0 - np.tanh(1.5 * np.sin(xv)) ** 2) * 1.5 * np.cos(xv)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-14)


def test_unshared_gradient_carries_the_result_and_shared_ones_do_not(plain_calls):
    """The incoming gradient's Tensor is reused only when nothing else can see it: a node hook
    that keeps the gradient it passed on finds it unchanged after the plain step below it."""
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)
    a = x * 2.0
    b = jg.tanh(a)
    kept = []
    b.grad_fn.register_hook(lambda grads_in, grads_out: kept.append(grads_in[0]))
    (b * 3.0).sum().backward()
    assert plain_calls["taken"] >= 2  # a's MulBackward0 among them, fed the kept gradient
    av = a.detach().numpy()
    np.testing.assert_allclose(kept[0].numpy(), 3.0 * (1.0 - np.tanh(av) ** 2), rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), 6.0 * (1.0 - np.tanh(av) ** 2), rtol=1e-14)


def test_gradient_given_to_backward_is_not_changed():
    x = jg.tensor(RNG.standard_normal(4), requires_grad=True)
    seed = jg.tensor(np.array([1.0, 2.0, 3.0, 4.0]))
    jg.exp(x * 0.5).backward(seed)
    np.testing.assert_array_equal(seed.numpy(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(),
                               seed.numpy() * 0.5 * np.exp(0.5 * x.detach().numpy()), rtol=1e-14)


# --- composite nodes: apply and validate_outputs called directly (OpNode._plain_apply) -------
def _springs(x):
    """W6's step: cat, slices, differences; every node a composite row or a plain one."""
    wall = jg.zeros(1)
    xp = jg.cat([wall, x * 1.0, wall])
    d = xp[1:] - xp[:-1] - 1.0
    return ((d[1:] - d[:-1]) * d[1:]).sum() + (xp[2:] ** 2).sum()


@pytest.fixture
def composite_applies(monkeypatch):
    """Counts the composite nodes whose apply ran, by node name."""
    from jitgrad.ops.core.registry import OpNode

    seen = []
    original = OpNode.apply

    def counting(self, grad_outputs):
        if not isinstance(self, ElementwiseNode):
            seen.append(self.name())
        return original(self, grad_outputs)

    monkeypatch.setattr(OpNode, "apply", counting)
    return seen


def test_composite_plain_apply_equals_run_node_bitwise(monkeypatch, composite_applies):
    from jitgrad.ops.core.registry import OpNode

    x0 = RNG.standard_normal(9)
    plain = _grads(_springs, [x0])[0]
    assert {"CatBackward0", "SliceBackward0"} <= set(composite_applies)
    monkeypatch.setattr(OpNode, "_plain_apply", False)  # every composite node via _run_node
    general = _grads(_springs, [x0])[0]
    np.testing.assert_array_equal(plain, general)

    def value(x):
        return float(_springs(jg.tensor(x)))

    eps = 1e-6
    for k in range(9):
        e = np.zeros(9)
        e[k] = eps
        assert abs((value(x0 + e) - value(x0 - e)) / (2 * eps) - plain[k]) < 1e-6


def test_hooks_on_composite_nodes_and_leaves_still_run():
    x = jg.tensor(RNG.standard_normal(6), requires_grad=True)
    leaf_seen, slice_seen, node_seen = [], [], []
    x.register_hook(lambda g: leaf_seen.append(g.numpy().copy()))  # the sink's tensor hook
    h = x * 2.0
    s = h[1:]
    s.register_hook(lambda g: slice_seen.append(g.numpy().copy()))
    s.grad_fn.register_prehook(lambda grads: node_seen.append(len(grads)))
    (s * 3.0).sum().backward()
    np.testing.assert_array_equal(slice_seen[0], np.full(5, 3.0))
    np.testing.assert_array_equal(leaf_seen[0], np.r_[0.0, np.full(5, 6.0)])
    np.testing.assert_array_equal(x.grad.numpy(), np.r_[0.0, np.full(5, 6.0)])
    assert node_seen == [1]


def test_composite_plain_apply_runs_with_grad_mode_off():
    """A composite rule whose gradient reads a saved input that requires grad records a node
    when grad mode is on; in a plain backward it records nothing, even after a hook of an
    earlier node turned grad mode on."""
    x = jg.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    w = jg.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    y = x * 1.0
    seen = []
    y.register_hook(lambda g: seen.append(g.grad_fn))
    t = y @ w  # MmBackward0 runs between the two hooked nodes
    u = t * 2.0

    def enable_grad(g):
        jg.set_grad_enabled(True)

    u.register_hook(enable_grad)
    loss = u.sum()
    try:
        loss.backward()
    finally:
        jg.set_grad_enabled(True)  # (the hook changed this thread's mode)
    assert seen == [None]
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.ones((2, 4)) @ w.detach().numpy().T,
                               rtol=1e-14)
