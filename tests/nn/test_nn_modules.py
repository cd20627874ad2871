"""nn.Module and the layer classes: registration, traversal, modes, state dicts, hooks, reprs
(PyTorch's strings), dtype conversion and default initialisations."""
import copy
import math
from collections import OrderedDict

import numpy as np
import pytest

import jitgrad
from jitgrad import nn
from jitgrad.nn import functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4, dtype=jitgrad.float64)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(4, 4, dtype=jitgrad.float64),
                                   nn.BatchNorm1d(4, dtype=jitgrad.float64))
        self.scale = nn.Parameter(jitgrad.ones(1, dtype=jitgrad.float64))
        self.register_buffer("steps", jitgrad.zeros(1, dtype=jitgrad.float64))
        self.register_buffer("scratch", jitgrad.zeros(1), persistent=False)

    def forward(self, x):
        return self.block(self.act(self.fc1(x))) * self.scale


def test_registration_and_traversal_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias", "block.1.weight",
        "block.1.bias"]
    assert [n for n, _ in net.named_buffers()] == [
        "steps", "scratch", "block.1.running_mean", "block.1.running_var",
        "block.1.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "block"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "block", "block.0",
                                                   "block.1"]
    assert list(net.state_dict()) == [
        "scale", "steps", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias",
        "block.1.weight", "block.1.bias", "block.1.running_mean", "block.1.running_var",
        "block.1.num_batches_tracked"]
    assert net.get_submodule("block.1") is net.block[1]
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, shared)
    assert len(list(seq.parameters())) == 2  # shared parameters once


def test_setattr_rules():
    m = nn.Module()
    with pytest.raises(TypeError, match="cannot assign"):
        lin = nn.Linear(2, 2)
        lin.weight = jitgrad.ones(2, 2)
    m.p = nn.Parameter(jitgrad.ones(2))
    m.p = None
    assert m.p is None and "p" in m._parameters
    m.child = nn.ReLU()
    del m.child
    assert "child" not in m._modules
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        m.missing
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", jitgrad.ones(1))


def test_train_eval_zero_grad_and_requires_grad():
    net = Net()
    assert net.training and net.block[1].training
    net.eval()
    assert not net.training and not net.block[1].training
    net.train()
    net(jitgrad.randn(5, 3, dtype=jitgrad.float64)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(np.abs(p.grad.numpy()).sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_state_dict_round_trip_and_errors():
    a, b = Net(), Net()
    a(jitgrad.randn(6, 3, dtype=jitgrad.float64))  # updates running stats
    res = b.load_state_dict(a.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and np.array_equal(va.numpy(), vb.numpy())
    x = jitgrad.randn(4, 3, dtype=jitgrad.float64)
    a.eval(), b.eval()
    assert np.array_equal(a(x).numpy(), b(x).numpy())
    sd = a.state_dict()
    assert not sd["fc1.weight"].requires_grad
    lin = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as err:
        lin.load_state_dict({"weight": jitgrad.zeros(3, 3), "foo": jitgrad.zeros(1)})
    msg = str(err.value)
    assert 'Missing key(s) in state_dict: "bias"' in msg
    assert 'Unexpected key(s) in state_dict: "foo"' in msg
    assert "size mismatch for weight: copying a param with shape [3, 3]" in msg
    res = lin.load_state_dict({"weight": jitgrad.zeros(3, 2)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == []
    assert float(lin.weight.abs().sum()) == 0


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = lin(jitgrad.ones(1, 2))
    assert calls == [(1, 2)]
    np.testing.assert_allclose(out.numpy(), lin.bias.numpy()[None] + 1, rtol=1e-6)
    h1.remove(), h2.remove()
    lin(jitgrad.ones(1, 2))
    assert calls == [(1, 2)]


def test_reprs_match_pytorch():
    model = nn.Sequential(
        nn.Linear(3, 4), nn.ReLU(), nn.Conv2d(1, 2, 3), nn.MaxPool2d(2), nn.BatchNorm1d(4),
        nn.LayerNorm(4), nn.Embedding(10, 3, padding_idx=0), nn.Dropout(0.2), nn.Flatten(),
        nn.GELU(), nn.Softplus(), nn.LeakyReLU(), nn.Softmax(dim=1), nn.LogSoftmax(1),
        nn.AvgPool2d(2), nn.Conv1d(2, 3, 3, stride=2, padding=1, bias=False), nn.Identity(),
        nn.SiLU(), nn.Tanh(), nn.Sigmoid(), nn.ModuleList([nn.ReLU()]),
        nn.ModuleDict({"a": nn.ReLU()}))
    expected = """Sequential(
  (0): Linear(in_features=3, out_features=4, bias=True)
  (1): ReLU()
  (2): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))
  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  (4): BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
  (5): LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
  (6): Embedding(10, 3, padding_idx=0)
  (7): Dropout(p=0.2, inplace=False)
  (8): Flatten(start_dim=1, end_dim=-1)
  (9): GELU(approximate='none')
  (10): Softplus(beta=1.0, threshold=20.0)
  (11): LeakyReLU(negative_slope=0.01)
  (12): Softmax(dim=1)
  (13): LogSoftmax(dim=1)
  (14): AvgPool2d(kernel_size=2, stride=2, padding=0)
  (15): Conv1d(2, 3, kernel_size=(3,), stride=(2,), padding=(1,), bias=False)
  (16): Identity()
  (17): SiLU()
  (18): Tanh()
  (19): Sigmoid()
  (20): ModuleList(
    (0): ReLU()
  )
  (21): ModuleDict(
    (a): ReLU()
  )
)"""
    assert repr(model) == expected
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
    assert repr(ml) == ("ModuleList(\n  (0-2): 3 x Linear(in_features=2, out_features=2, "
                        "bias=True)\n  (3): ReLU()\n)")
    assert repr(nn.Conv2d(2, 4, (3, 5), stride=2, padding=(1, 2), dilation=2, groups=2)) == (
        "Conv2d(2, 4, kernel_size=(3, 5), stride=(2, 2), padding=(1, 2), dilation=(2, 2), "
        "groups=2)")
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.Parameter(jitgrad.ones(2))).startswith("Parameter containing:\ntensor(")


def test_default_initialisations():
    jitgrad.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for p in (lin.weight, lin.bias):
        a = p.numpy()
        assert a.min() >= -bound and a.max() <= bound and a.max() > 0.9 * bound
    assert abs(lin.weight.numpy().std() - bound / math.sqrt(3)) < 0.02 * bound
    conv = nn.Conv2d(4, 8, 3)
    assert np.abs(conv.weight.numpy()).max() <= 1 / math.sqrt(36)
    emb = nn.Embedding(1000, 20, padding_idx=3)
    assert abs(emb.weight.numpy().std() - 1) < 0.05 and not emb.weight.numpy()[3].any()
    bn = nn.BatchNorm1d(3)
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    assert bn.num_batches_tracked.dtype == jitgrad.int64
    assert lin.weight.dtype == jitgrad.get_default_dtype()
    assert nn.Linear(2, 2, dtype=jitgrad.float32).weight.dtype == jitgrad.float32


def test_to_dtype_keeps_parameter_objects():
    net = Net()
    w = net.fc1.weight
    net.to(jitgrad.float32)
    assert net.fc1.weight is w and w.dtype == jitgrad.float32
    assert net.block[1].running_mean.dtype == jitgrad.float32
    assert net.block[1].num_batches_tracked.dtype == jitgrad.int64
    net.double()
    assert w.dtype == jitgrad.float64
    net.to("cpu")
    with pytest.raises(RuntimeError, match="CPU"):
        net.to("cuda")


def test_batchnorm_module_modes():
    bn = nn.BatchNorm1d(2, momentum=None, dtype=jitgrad.float64)
    x1, x2 = np.random.default_rng(0).standard_normal((2, 5, 2))
    bn(jitgrad.tensor(x1)), bn(jitgrad.tensor(x2))
    assert bn.num_batches_tracked.item() == 2
    # momentum=None: cumulative average of the batch statistics
    np.testing.assert_allclose(bn.running_mean.numpy(), (x1.mean(0) + x2.mean(0)) / 2, rtol=1e-12)
    bn.eval()
    y = bn(jitgrad.tensor(x1)).numpy()
    ref = (x1 - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-10)
    free = nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    free.eval()  # no running stats: batch statistics even in eval
    out = free(jitgrad.tensor(x1)).numpy()
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-7)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        bn(jitgrad.ones(2, 2, 2, 2))


def test_containers():
    seq = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    assert isinstance(seq[1], nn.Tanh) and isinstance(seq[-2], nn.ReLU) and len(seq) == 2
    assert isinstance(seq[:1], nn.Sequential) and len(seq[:1]) == 1
    seq.append(nn.Sigmoid())
    assert list(seq._modules) == ["a", "b", "2"]
    ml = nn.ModuleList([nn.ReLU()])
    ml.append(nn.Tanh())
    ml += [nn.Sigmoid()]
    ml.insert(0, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    del ml[1]
    assert list(ml._modules) == ["0", "1", "2"]
    seq2 = nn.Sequential(nn.Tanh(), nn.Sigmoid())
    seq2.insert(-1, nn.Identity())  # PyTorch: before the last module
    assert [type(m).__name__ for m in seq2] == ["Tanh", "Identity", "Sigmoid"]
    assert type(seq2[-1]).__name__ == "Sigmoid" and type(seq2[1:]) is nn.Sequential
    with pytest.raises(IndexError):
        seq2.insert(4, nn.ReLU())
    md = nn.ModuleDict({"x": nn.Linear(2, 2)})
    md["y"] = nn.ReLU()
    assert list(md.keys()) == ["x", "y"] and "x" in md and len(list(md.parameters())) == 2


def test_deepcopy_and_apply():
    net = Net()
    other = copy.deepcopy(net)
    assert isinstance(other.fc1.weight, nn.Parameter)
    assert other.fc1.weight is not net.fc1.weight
    assert np.array_equal(other.fc1.weight.numpy(), net.fc1.weight.numpy())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and "BatchNorm1d" in seen


def test_loss_modules_match_functional():
    rng = np.random.default_rng(5)
    x = jitgrad.tensor(rng.standard_normal((4, 3)))
    t = jitgrad.tensor([0, 2, 1, 2])
    w = jitgrad.tensor([1.0, 2.0, 0.5])
    assert nn.CrossEntropyLoss(weight=w, label_smoothing=0.1)(x, t).item() == \
        F.cross_entropy(x, t, weight=w, label_smoothing=0.1).item()
    assert nn.NLLLoss(reduction="sum")(x, t).item() == F.nll_loss(x, t, reduction="sum").item()
    y = jitgrad.tensor(rng.standard_normal((4, 3)))
    assert nn.HuberLoss(delta=0.5)(x, y).item() == F.huber_loss(x, y, delta=0.5).item()
    assert nn.L1Loss()(x, y).item() == F.l1_loss(x, y).item()
    assert nn.MSELoss(reduction="none")(x, y).shape == (4, 3)
