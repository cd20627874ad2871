"""Optimizers: the first steps on a known quadratic match the published update equations
(written here in NumPy), plus param_groups, state_dict round trips, zero_grad and errors."""
import io
import math

import numpy as np
import pytest

import jitgrad
from jitgrad import nn, optim

A = np.array([1.0, 3.0, 0.5, 2.0, 4.0, 0.1])
C = np.array([0.5, -1.0, 2.0, 0.0, 1.5, -0.3])
P0 = np.array([1.0, 1.0, -1.0, 0.5, 0.0, 2.0])


def grad_fn(p):
    """f(p) = 1/2 sum a (p - c)^2  ->  g = a (p - c)."""
    return A * (p - C)


def run(opt_cls, steps=3, dtype=np.float64, **kw):
    p = nn.Parameter(jitgrad.tensor(P0.astype(dtype)))
    opt = opt_cls([p], **kw)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (jitgrad.tensor(A.astype(dtype)) * (p - jitgrad.tensor(C.astype(dtype))) ** 2).sum() * 0.5
        loss.backward()
        opt.step()
        out.append(p.numpy().copy())
    return out, opt


def ref_sgd(steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
            maximize=False):
    p, b, out = P0.copy(), None, []
    for _ in range(steps):
        g = grad_fn(p) * (-1 if maximize else 1) + weight_decay * p
        if momentum:
            b = g.copy() if b is None else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        p = p - lr * g
        out.append(p)
    return out


def ref_adam(steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
             decoupled=False):
    """Kingma & Ba with bias correction; AdamW decays the weights first (Loshchilov & Hutter)."""
    b1, b2 = betas
    p, m, v, vmax, out = P0.copy(), 0.0, 0.0, 0.0, []
    for t in range(1, steps + 1):
        g = grad_fn(p)
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        m_hat = m / (1 - b1 ** t)
        v_hat = (vmax if amsgrad else v) / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(p)
    return out


def ref_rmsprop(steps, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                centered=False):
    p, s, a, b, out = P0.copy(), 0.0, 0.0, 0.0, []
    for _ in range(steps):
        g = grad_fn(p) + weight_decay * p
        s = alpha * s + (1 - alpha) * g * g
        if centered:
            a = alpha * a + (1 - alpha) * g
            avg = np.sqrt(s - a * a) + eps
        else:
            avg = np.sqrt(s) + eps
        if momentum:
            b = momentum * b + g / avg
            p = p - lr * b
        else:
            p = p - lr * g / avg
        out.append(p)
    return out


def ref_adagrad(steps, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                eps=1e-10):
    p, s, out = P0.copy(), initial_accumulator_value, []
    for t in range(1, steps + 1):
        g = grad_fn(p) + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
        out.append(p)
    return out


CASES = [
    (optim.SGD, dict(lr=0.1), ref_sgd),
    (optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.01), ref_sgd),
    (optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True), ref_sgd),
    (optim.Adam, dict(lr=0.1), ref_adam),
    (optim.Adam, dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True), ref_adam),
    (optim.AdamW, dict(lr=0.05, weight_decay=0.1), lambda s, **k: ref_adam(s, decoupled=True, **k)),
    (optim.RMSprop, dict(lr=0.01), ref_rmsprop),
    (optim.RMSprop, dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1),
     ref_rmsprop),
    (optim.Adagrad, dict(lr=0.1), ref_adagrad),
    (optim.Adagrad, dict(lr=0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.5),
     ref_adagrad),
]


@pytest.mark.parametrize("cls,kw,ref", CASES, ids=[f"{c.__name__}-{i}" for i, (c, _, _)
                                                    in enumerate(CASES)])
def test_first_steps_match_update_equations(cls, kw, ref):
    got, _ = run(cls, 4, **kw)
    for step, (g, r) in enumerate(zip(got, ref(4, **kw))):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14, err_msg=f"step {step + 1}")


def test_float32_parameters_update_in_float32():
    got, opt = run(optim.Adam, 3, dtype=np.float32, lr=0.1)
    assert got[-1].dtype == np.float32
    np.testing.assert_allclose(got[-1], ref_adam(3, lr=0.1)[-1], rtol=1e-5, atol=1e-6)
    state = opt.state[opt.param_groups[0]["params"][0]]
    assert state["exp_avg"].dtype == jitgrad.float32
    assert state["step"].dtype == jitgrad.float32 and state["step"].item() == 3.0


def test_large_parameter_uses_the_parallel_kernel():
    n = 1 << 17  # above PAR_MIN_OPTIM
    p = nn.Parameter(jitgrad.zeros(n, dtype=jitgrad.float64))
    p.grad = jitgrad.ones(n, dtype=jitgrad.float64)
    opt = optim.SGD([p], lr=0.5, momentum=0.9)
    opt.step()
    opt.step()
    np.testing.assert_allclose(p.numpy(), -0.5 - 0.5 * 1.9)


def test_param_groups_and_skipping_params_without_grad():
    a = nn.Parameter(jitgrad.ones(2, dtype=jitgrad.float64))
    b = nn.Parameter(jitgrad.ones(2, dtype=jitgrad.float64))
    c = nn.Parameter(jitgrad.ones(2, dtype=jitgrad.float64))
    opt = optim.SGD([{"params": [a]}, {"params": [b, c], "lr": 0.5}], lr=0.1, momentum=0.0)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.0
    (a.sum() + b.sum()).backward()
    v = c._version
    opt.step()
    assert a.tolist() == [0.9, 0.9] and b.tolist() == [0.5, 0.5] and c.tolist() == [1, 1]
    assert c._version == v and c not in opt.state
    opt.add_param_group({"params": nn.Parameter(jitgrad.ones(1)), "lr": 1.0})
    assert len(opt.param_groups) == 3


def test_zero_grad_modes():
    p = nn.Parameter(jitgrad.ones(3, dtype=jitgrad.float64))
    opt = optim.SGD([p], lr=0.1)
    p.sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0, 0, 0]
    opt.zero_grad()
    assert p.grad is None


def test_state_dict_round_trip_continues_identically():
    def make():
        jitgrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4, dtype=jitgrad.float64), nn.Tanh(),
                              nn.Linear(4, 1, dtype=jitgrad.float64))
        return model, optim.Adam(model.parameters(), lr=0.05, amsgrad=True)

    x = jitgrad.tensor(np.random.default_rng(0).standard_normal((8, 3)))

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            (model(x) ** 2).mean().backward()
            opt.step()

    m1, o1 = make()
    train(m1, o1, 4)
    m2, o2 = make()
    train(m2, o2, 2)
    buf = io.BytesIO()
    jitgrad.save({"model": m2.state_dict(), "optim": o2.state_dict()}, buf)
    buf.seek(0)
    ckpt = jitgrad.load(buf)
    m3, o3 = make()
    m3.load_state_dict(ckpt["model"])
    o3.load_state_dict(ckpt["optim"])
    assert o3.state_dict()["param_groups"][0]["betas"] == (0.9, 0.999)
    train(m3, o3, 2)
    for p1, p3 in zip(m1.parameters(), m3.parameters()):
        np.testing.assert_array_equal(p1.numpy(), p3.numpy())
    sd = o1.state_dict()
    assert sd["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}


def test_errors_and_repr():
    p = nn.Parameter(jitgrad.ones(1))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD({p}, lr=0.1)
    text = repr(optim.SGD([p], lr=0.1, momentum=0.9))
    assert text.startswith("SGD (\nParameter Group 0\n    dampening: 0\n")
    assert "    lr: 0.1\n" in text and text.endswith(")")


def test_closure_is_evaluated_with_grad():
    p = nn.Parameter(jitgrad.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with jitgrad.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 4.0 and p.item() == 1.0


def test_training_reduces_a_regression_loss():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3))
    y = x @ np.array([[1.0], [-2.0], [0.5]]) + 0.3
    model = nn.Linear(3, 1, dtype=jitgrad.float64)
    for cls, kw in ((optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.Adam, dict(lr=0.1)),
                    (optim.RMSprop, dict(lr=0.05)), (optim.Adagrad, dict(lr=0.5))):
        model.reset_parameters()
        opt = cls(model.parameters(), **kw)
        first = None
        for _ in range(60):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(jitgrad.tensor(x)), jitgrad.tensor(y))
            loss.backward()
            opt.step()
            first = first if first is not None else loss.item()
        assert loss.item() < 0.05 * first, (cls.__name__, first, loss.item())
    assert math.isfinite(loss.item())
