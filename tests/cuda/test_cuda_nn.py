"""jitgrad.nn and jitgrad.optim on CUDA (simulated or real) against the CPU: training steps,
module moves, running statistics, state dicts and checkpoints across devices."""
import io
import os

import numpy as np
import pytest

import jitgrad
from jitgrad import nn, optim
from jitgrad.testing import assert_close

DEV = "cuda:0"


@pytest.fixture(scope="module", autouse=True)
def _cuda():
    assert jitgrad.cuda.is_available(), "the CUDA tests need a GPU or NUMBA_ENABLE_CUDASIM=1"


def _mlp(seed=0, dtype=jitgrad.float64):
    jitgrad.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 5, dtype=dtype), nn.ReLU(), nn.Linear(5, 3, dtype=dtype))


def _data(dtype=np.float64):
    rng = np.random.default_rng(1)
    return rng.standard_normal((6, 4)).astype(dtype), np.array([0, 2, 1, 1, 0, 2])


def _train(model, make_opt, device, steps=3, dtype=np.float64):
    x, y = _data(dtype)
    xb, yb = jitgrad.tensor(x, device=device), jitgrad.tensor(y, device=device)
    opt = make_opt(model.parameters())
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, opt


OPTIMIZERS = {
    "sgd": lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "adam": lambda p: optim.Adam(p, lr=0.05, amsgrad=True),
    "adamw": lambda p: optim.AdamW(p, lr=0.05),
    "rmsprop": lambda p: optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda p: optim.Adagrad(p, lr=0.1),
}
# ~5 s an optimizer under the simulator: there only SGD and Adam train the MLP, unless
# JITGRAD_TEST_CUDA_ALL=1 (all of them on a GPU, JITGRAD_TEST_CUDA=1); every optimizer's kernel
# still runs, and is recorded for the PTX check, in test_optimizer_steps_match_cpu
_ALL_OPTIMIZERS = (os.environ.get("JITGRAD_TEST_CUDA") == "1"
                   or os.environ.get("JITGRAD_TEST_CUDA_ALL") == "1"
                   or os.environ.get("NUMBA_ENABLE_CUDASIM") != "1")
_SIMULATOR_SKIP = pytest.mark.skipif(not _ALL_OPTIMIZERS, reason=(
    "under the simulator only sgd and adam train the MLP (~5 s each); "
    "JITGRAD_TEST_CUDA_ALL=1 runs all"))


@pytest.mark.parametrize("make_opt", [
    pytest.param(make, id=name, marks=() if name in ("sgd", "adam") else _SIMULATOR_SKIP)
    for name, make in OPTIMIZERS.items()])
def test_mlp_training_matches_cpu(make_opt):
    cpu = _mlp()
    dev = _mlp().to(DEV)
    cpu_losses, _ = _train(cpu, make_opt, "cpu")
    dev_losses, opt = _train(dev, make_opt, DEV)
    assert_close(np.array(dev_losses), np.array(cpu_losses), rtol=1e-10, atol=1e-12)
    for (name, pc), pd in zip(cpu.named_parameters(), dev.parameters()):
        assert pd.device == DEV
        assert_close(pd.cpu(), pc, rtol=1e-10, atol=1e-12, msg=name)
    for state in opt.state.values():  # state buffers on the parameter's device, step on the CPU
        for key, value in state.items():
            assert value.device == ("cpu" if key == "step" else DEV), key


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps_match_cpu(name):
    """Two steps of each optimizer on one parameter: cheap under the simulator, where the MLP
    training above runs only some of them."""
    rng = np.random.default_rng(2)
    x0, w = rng.standard_normal(7), rng.standard_normal(7)
    params = {}
    for device in ("cpu", DEV):
        p = jitgrad.tensor(x0, device=device, requires_grad=True)
        opt = OPTIMIZERS[name]([p])
        for _ in range(2):
            opt.zero_grad()
            (p * p * jitgrad.tensor(w, device=device)).sum().backward()
            opt.step()
        params[device] = p
    assert params[DEV].device == DEV
    assert_close(params[DEV].cpu(), params["cpu"], rtol=1e-10, atol=1e-12)


def test_float32_adam_step_matches_cpu():
    cpu, dev = _mlp(dtype=jitgrad.float32), _mlp(dtype=jitgrad.float32).to(DEV)
    make = (lambda p: optim.Adam(p, lr=0.01))
    cpu_losses, _ = _train(cpu, make, "cpu", dtype=np.float32)
    dev_losses, _ = _train(dev, make, DEV, dtype=np.float32)
    assert_close(np.array(dev_losses), np.array(cpu_losses), rtol=1e-5, atol=1e-6)
    for pc, pd in zip(cpu.parameters(), dev.parameters()):
        assert pd.dtype == jitgrad.float32
        assert_close(pd.cpu(), pc, rtol=1e-5, atol=1e-6)


def test_module_to_cuda_cpu_keeps_parameter_objects():
    model = _mlp()
    params = list(model.parameters())
    model(jitgrad.tensor(_data()[0])).sum().backward()
    before = [p.detach().numpy().copy() for p in params]
    assert model.cuda() is model
    assert [id(p) for p in model.parameters()] == [id(p) for p in params]
    for p, b in zip(params, before):
        assert p.device == DEV and p.grad.device == DEV and p.is_leaf and p.requires_grad
        assert_close(p.cpu(), b)
    model.to(DEV, jitgrad.float32)
    assert all(p.dtype == jitgrad.float32 and p.device == DEV for p in params)
    model.cpu()
    assert all(p.device == "cpu" and p.grad.device == "cpu" for p in params)
    model.to(0)  # an int is cuda:N, as PyTorch
    assert all(p.device == DEV for p in params)


def test_device_constructors():
    for layer in (nn.Linear(3, 2, device=DEV), nn.Conv2d(1, 2, 3, device="cuda"),
                  nn.Embedding(5, 2, padding_idx=1, device=DEV), nn.BatchNorm1d(3, device=DEV),
                  nn.LayerNorm(4, device=DEV)):
        for t in list(layer.parameters()) + list(layer.buffers()):
            assert t.device == DEV, (layer, t)
    jitgrad.manual_seed(3)
    a = nn.Linear(3, 2, device=DEV)
    jitgrad.manual_seed(3)
    b = nn.Linear(3, 2)
    assert_close(a.weight.cpu(), b.weight)  # same seed, same values on every device
    emb = nn.Embedding(5, 2, padding_idx=1, device=DEV)
    assert np.all(emb.weight.cpu().numpy()[1] == 0)


def test_batch_norm_running_stats_update_on_device():
    cpu, dev = nn.BatchNorm1d(3), nn.BatchNorm1d(3, device=DEV)
    x = np.random.default_rng(2).standard_normal((5, 3, 2))
    for _ in range(2):
        out_c = cpu(jitgrad.tensor(x))
        out_d = dev(jitgrad.tensor(x, device=DEV))
    assert_close(out_d.cpu(), out_c, rtol=1e-12, atol=1e-12)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        got = getattr(dev, name)
        assert got.device == DEV, name
        assert_close(got.cpu(), getattr(cpu, name), rtol=1e-12, atol=1e-14, msg=name)
    cpu.eval()
    dev.eval()
    assert_close(dev(jitgrad.tensor(x, device=DEV)).cpu(), cpu(jitgrad.tensor(x)), rtol=1e-12,
                 atol=1e-12)


def test_conv_net_forward_backward_matches_cpu():
    def net():
        jitgrad.manual_seed(5)
        return nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8, 3))
    cpu, dev = net(), net().to(DEV)
    x = np.random.default_rng(4).standard_normal((2, 1, 4, 4))
    y = np.array([2, 0])
    for model, device in ((cpu, "cpu"), (dev, DEV)):
        nn.functional.cross_entropy(model(jitgrad.tensor(x, device=device)),
                                    jitgrad.tensor(y, device=device)).backward()
    for (name, pc), pd in zip(cpu.named_parameters(), dev.parameters()):
        assert_close(pd.grad.cpu(), pc.grad, rtol=1e-10, atol=1e-12, msg=name)


@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.1},
                                    {"reduction": "sum", "ignore_index": 1},
                                    {"weight": [0.2, 1.0, 3.0], "reduction": "none"}])
def test_cross_entropy_module_matches_cpu(kwargs):
    kw = dict(kwargs)
    x, y = _data()
    results = []
    for device in ("cpu", DEV):
        if "weight" in kwargs:
            kw["weight"] = jitgrad.tensor(kwargs["weight"], device=device)
        xt = jitgrad.tensor(x[:, :3], device=device, requires_grad=True)
        loss = nn.CrossEntropyLoss(**kw)(xt, jitgrad.tensor(y, device=device))
        loss.sum().backward()
        results.append((loss.cpu(), xt.grad.cpu()))
    assert_close(results[1][0], results[0][0], rtol=1e-12, atol=1e-13)
    assert_close(results[1][1], results[0][1], rtol=1e-12, atol=1e-13)


def test_state_dict_round_trip_across_devices():
    src = _mlp(seed=1).to(DEV)
    dst_cpu, dst_dev = _mlp(seed=2), _mlp(seed=3).to(DEV)
    dst_cpu.load_state_dict(src.state_dict())  # CUDA values into CPU parameters
    dst_dev.load_state_dict(_mlp(seed=1).state_dict())  # CPU values into CUDA parameters
    for a, b, c in zip(src.parameters(), dst_cpu.parameters(), dst_dev.parameters()):
        assert b.device == "cpu" and c.device == DEV
        assert_close(b, a.cpu())
        assert_close(c.cpu(), a.cpu())
    buf = io.BytesIO()
    jitgrad.save(src.state_dict(), buf)
    for loc, want in ((None, DEV), ("cpu", "cpu"), ({DEV: "cpu"}, "cpu"), ("cuda", DEV)):
        buf.seek(0)
        sd = jitgrad.load(buf, map_location=loc)
        assert all(t.device == want for t in sd.values()), loc
        model = _mlp(seed=4)
        model.load_state_dict(sd)
        for a, b in zip(src.parameters(), model.parameters()):
            assert_close(b, a.cpu())


def test_optimizer_state_dict_moves_to_parameter_device():
    model = _mlp()
    _, opt = _train(model, lambda p: optim.Adam(p, lr=0.01), "cpu", steps=1)
    sd = opt.state_dict()
    model.to(DEV)
    opt2 = optim.Adam(model.parameters(), lr=0.01)
    opt2.load_state_dict(sd)
    for p in model.parameters():
        assert opt2.state[p]["exp_avg"].device == DEV
        assert opt2.state[p]["step"].device == "cpu"
    _train(model, lambda p: opt2, DEV, steps=1)  # steps with the moved state


def test_out_of_range_targets_and_indices_raise_at_the_next_host_read():
    """Note [device asserts]: the kernels flag bad indices instead of reading out of bounds."""
    import jitgrad.nn.functional as F

    x = jitgrad.randn(3, 4, device="cuda", requires_grad=True)
    bad = jitgrad.tensor([0, 7, 1], device="cuda")
    loss = F.nll_loss(F.log_softmax(x, dim=1), bad)
    with pytest.raises(RuntimeError, match="device-side assert triggered: nll_loss: a target is "
                                           "out of bounds"):
        loss.item()
    # the flag is cleared: the device keeps working
    good = F.nll_loss(F.log_softmax(x, dim=1), jitgrad.tensor([0, 3, 1], device="cuda"))
    ref = F.nll_loss(F.log_softmax(x.detach().cpu(), dim=1), jitgrad.tensor([0, 3, 1]))
    assert abs(good.item() - ref.item()) < 1e-12
    w = jitgrad.randn(5, 2, device="cuda")
    out = F.embedding(jitgrad.tensor([1, 5], device="cuda"), w)
    with pytest.raises(RuntimeError, match="embedding: an index is out of range"):
        out.cpu()
    with pytest.raises(RuntimeError, match="embedding: an index is out of range"):
        F.embedding(jitgrad.tensor([-1], device="cuda"), w)
        jitgrad.cuda.synchronize()
