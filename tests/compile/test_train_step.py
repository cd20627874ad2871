"""Whole training steps under ``jitgrad.compile`` (Note [functionalised writes] in
jitgrad/compile/mutations.py, Note [optimizers under compile] in jitgrad/optim/optimizer.py):
forward, ``backward()`` and the optimizer's update as one program, equal to eager."""
import warnings

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.nn as nn
import jitgrad.nn.functional as F


def _data(n=5, seed=0):
    rng = np.random.default_rng(seed)
    xs = [jg.tensor(rng.standard_normal((8, 12))) for _ in range(n)]
    ys = [jg.tensor(rng.integers(0, 4, 8)) for _ in range(n)]
    return xs, ys


def _setup(make_opt, dropout=None):
    jg.manual_seed(0)
    extra = [nn.Dropout(dropout)] if dropout else []
    model = nn.Sequential(nn.Linear(12, 10), nn.ReLU(), *extra, nn.Linear(10, 10), nn.ReLU(),
                          nn.Linear(10, 4)).double()
    opt = make_opt(model.parameters())

    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, opt, train_step


def _assert_same(m1, o1, m2, o2):
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(p2.detach().numpy(), p1.detach().numpy(), rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), rtol=1e-12, atol=1e-14)
        assert p2.grad.grad_fn is None and not p2.grad.requires_grad
        s1, s2 = o1.state[p1], o2.state[p2]
        assert sorted(s1) == sorted(s2)
        for k in s1:
            np.testing.assert_allclose(s2[k].numpy(), s1[k].numpy(), rtol=1e-12, atol=1e-14)


OPTIMIZERS = {
    "adam": lambda ps: jg.optim.Adam(ps, lr=1e-2),
    "adamw_amsgrad": lambda ps: jg.optim.AdamW(ps, lr=1e-2, weight_decay=0.1, amsgrad=True),
    "adam_l2_maximize": lambda ps: jg.optim.Adam(ps, lr=1e-2, weight_decay=0.01, maximize=True),
    "sgd_nesterov": lambda ps: jg.optim.SGD(ps, lr=1e-2, momentum=0.9, nesterov=True,
                                            weight_decay=0.01),
    "sgd": lambda ps: jg.optim.SGD(ps, lr=1e-2),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_five_compiled_steps_equal_eager(name):
    """One trace; the step counter (bias corrections) is read at every call, not baked in."""
    m1, o1, eager = _setup(OPTIMIZERS[name])
    m2, o2, step = _setup(OPTIMIZERS[name])
    compiled = jg.compile(step, fullgraph=True)
    xs, ys = _data()
    for x, y in zip(xs, ys):
        want, got = eager(x, y), compiled(x, y)
        np.testing.assert_allclose(float(got), float(want), rtol=1e-12)
    _assert_same(m1, o1, m2, o2)
    # SGD's momentum buffer starts as d in the first step: that trace serves it alone
    assert compiled.stats()["traces"] == (2 if name == "sgd_nesterov" else 1)
    assert compiled.stats()["cached"] == 1
    if "adam" in name:
        assert float(o2.state[next(iter(m2.parameters()))]["step"]) == 5.0


def test_mixed_eager_and_compiled_steps():
    """Eager steps in between (the kernel path) and compiled steps share the same state."""
    m1, o1, eager = _setup(OPTIMIZERS["adam"])
    m2, o2, step = _setup(OPTIMIZERS["adam"])
    compiled = jg.compile(step)
    xs, ys = _data(6)
    for i, (x, y) in enumerate(zip(xs, ys)):
        eager(x, y)
        (compiled if i % 2 else step)(x, y)
    _assert_same(m1, o1, m2, o2)


def _change_midway(change):
    """Eager and compiled Adam steps side by side, ``change(optimizer)`` applied to both
    before the third step; returns the compiled step function."""
    m1, o1, eager = _setup(OPTIMIZERS["adam"])
    m2, o2, step = _setup(OPTIMIZERS["adam"])
    compiled = jg.compile(step)
    xs, ys = _data(4)
    for i, (x, y) in enumerate(zip(xs, ys)):
        if i == 2:
            for o in (o1, o2):
                change(o)
        eager(x, y)
        compiled(x, y)
    _assert_same(m1, o1, m2, o2)
    return compiled


def test_changed_learning_rate_is_not_stale():
    compiled = _change_midway(lambda o: o.param_groups[0].__setitem__("lr", 0.5))
    assert compiled.stats()["traces"] == 2


def test_state_replaced_is_not_stale():
    """load_state_dict gives new state tensors: the program's guards see it."""
    _change_midway(lambda o: o.load_state_dict(o.state_dict()))


def test_backward_accumulates_across_calls():
    """No zero_grad: each call adds into the .grad the previous call left (read per call)."""
    jg.manual_seed(0)
    model = nn.Linear(12, 3).double()
    jg.manual_seed(0)
    ref = nn.Linear(12, 3).double()

    def step(m, x):
        loss = (m(x) ** 2).mean()
        loss.backward()
        return loss
    compiled = jg.compile(lambda x: step(model, x))
    xs, _ = _data(4)
    for x in xs:
        step(ref, x)
        compiled(x)
    for p, q in zip(ref.parameters(), model.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-12)
    assert compiled.stats()["traces"] <= 2


def test_in_place_updates_of_closures():
    """Reads after a write see the new value; the final values are written back."""
    c1, c2 = jg.tensor(np.arange(4.0)), jg.tensor(np.arange(4.0))
    n1, n2 = (jg.tensor(np.zeros((), np.float32)) for _ in range(2))

    def f(c, n, x):
        c.mul_(2.0)
        c.add_(x)
        n.add_(1)
        c.addcmul_(c, n)
        return (c * n).sum()
    compiled = jg.compile(lambda x: f(c2, n2, x), fullgraph=True)
    x = jg.tensor(np.ones(4))
    for _ in range(3):
        assert float(compiled(x)) == float(f(c1, n1, x))
    np.testing.assert_array_equal(c2.numpy(), c1.numpy())
    assert float(n2) == float(n1) == 3.0
    assert compiled.stats()["traces"] == 1


def _run_both(f, *args, calls=3):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = jg.compile(f)
        results = [compiled(*args) for _ in range(calls)]
    return compiled, results, [str(w.message) for w in caught]


def test_writes_it_cannot_follow_fall_back_without_double_writes():
    """A break after a write: the trace run's writes are undone before the eager re-run."""
    c = jg.tensor(np.arange(3.0))

    def f():
        c.add_(1.0)
        jg.nn.init.zeros_(jg.tensor(np.ones(2)))  # a raw write: refused
        return c.sum()
    compiled, results, messages = _run_both(f)
    assert compiled.stats()["fallbacks"] and any("cannot be captured" in m for m in messages)
    np.testing.assert_array_equal(c.numpy(), np.arange(3.0) + 3)


def test_write_through_a_view_falls_back():
    c = jg.tensor(np.arange(4.0))

    def f():
        c[:2].mul_(2.0)
        c[3] = c[2] + 1.0  # (item assignment writes through a view too)
        return c.sum()
    compiled, results, _ = _run_both(f, calls=2)
    assert compiled.stats()["fallbacks"]
    np.testing.assert_array_equal(c.numpy(), [0.0, 4.0, 2.0, 3.0])


def test_unsupported_optimizer_falls_back():
    m1, o1, eager = _setup(lambda ps: jg.optim.RMSprop(ps, lr=1e-2))
    m2, o2, step = _setup(lambda ps: jg.optim.RMSprop(ps, lr=1e-2))
    xs, ys = _data(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = jg.compile(step)
        for x, y in zip(xs, ys):
            eager(x, y)
            compiled(x, y)
    assert compiled.stats()["fallbacks"]
    _assert_same(m1, o1, m2, o2)


def test_parameter_used_after_its_update_with_grad_falls_back():
    w = jg.tensor(np.ones(3), requires_grad=True)

    def f(x):
        with jg.no_grad():
            w.mul_(2.0)
        return (w * x).sum()
    compiled, results, _ = _run_both(f, jg.tensor(np.ones(3)), calls=2)
    assert compiled.stats()["fallbacks"]
    np.testing.assert_array_equal(w.detach().numpy(), [4.0, 4.0, 4.0])


def test_compiled_steps_with_dropout_equal_eager_under_the_same_seed():
    """Note [random rows] (compile/trace.py): the program draws the masks eager draws."""
    xs, ys = _data(4)
    m1, o1, eager = _setup(OPTIMIZERS["adam"], dropout=0.25)
    m2, o2, step = _setup(OPTIMIZERS["adam"], dropout=0.25)
    compiled = jg.compile(step)
    jg.manual_seed(11)
    want = [eager(x, y).item() for x, y in zip(xs, ys)]
    jg.manual_seed(11)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [compiled(x, y).item() for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    _assert_same(m1, o1, m2, o2)
    assert compiled.stats()["traces"] == 1
