"""functional_call: a module as a function of its parameters and buffers."""
import numpy as np
import pytest

import jitgrad as jg
import jitgrad.func as F
from jitgrad.testing import assert_close


class Linear:
    """A minimal module in PyTorch's layout (``_parameters``, ``_buffers``, submodules)."""

    def __init__(self, w, b):
        self._parameters = {"weight": w, "bias": b}
        self._buffers = {"scale": jg.tensor(2.0, dtype=jg.float64)}

    def __getattr__(self, name):
        for table in ("_parameters", "_buffers"):
            d = self.__dict__.get(table, {})
            if name in d:
                return d[name]
        raise AttributeError(name)

    def named_parameters(self, remove_duplicate=True):
        return list(self._parameters.items())

    def named_buffers(self, remove_duplicate=True):
        return list(self._buffers.items())

    def __call__(self, x):
        return (x @ self.weight.t() + self.bias) * self.scale


class Net:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.lin = Linear(jg.tensor(rng.standard_normal((2, 3))), jg.tensor(rng.standard_normal(2)))

    def named_parameters(self, remove_duplicate=True):
        return [("lin." + k, v) for k, v in self.lin.named_parameters()]

    def named_buffers(self, remove_duplicate=True):
        return [("lin." + k, v) for k, v in self.lin.named_buffers()]

    def __call__(self, x):
        return self.lin(x).tanh()


def test_swap_restore_and_grad_wrt_parameters():
    net = Net()
    x = jg.tensor(np.random.default_rng(1).standard_normal((4, 3)))
    params = dict(net.named_parameters())
    orig_w = params["lin.weight"]
    new = {k: v * 0.5 for k, v in params.items()}
    out = F.functional_call(net, new, (x,))
    assert net.lin.weight is orig_w  # restored
    ref = np.tanh((x._data @ new["lin.weight"]._data.T + new["lin.bias"]._data) * 2.0)
    assert_close(out, ref, rtol=1e-13)
    g = F.grad(lambda p: F.functional_call(net, p, x).sum())(params)
    y = np.tanh((x._data @ orig_w._data.T + params["lin.bias"]._data) * 2.0)
    dpre = (1 - y * y) * 2.0
    assert_close(g["lin.bias"], dpre.sum(0), rtol=1e-12)
    assert_close(g["lin.weight"], dpre.T @ x._data, rtol=1e-12)
    # per-example gradients of a module (vmap over the batch, grad over the parameters)
    pe = F.vmap(F.grad(lambda p, xi: F.functional_call(net, p, (xi,)).sum()),
                in_dims=(None, 0))(params, x)
    assert pe["lin.weight"].shape == (4, 2, 3)
    assert_close(pe["lin.weight"].sum(0), g["lin.weight"], rtol=1e-12)


def test_buffers_several_dicts_strict_and_errors():
    net = Net()
    x = jg.tensor(np.ones((1, 3)))
    out = F.functional_call(net, ({"lin.scale": jg.tensor(0.0, dtype=jg.float64)}, {}), (x,))
    assert_close(out, np.zeros((1, 2)))
    with pytest.raises(ValueError, match="multiple"):
        F.functional_call(net, ({"lin.scale": x}, {"lin.scale": x}), (x,))
    with pytest.raises(RuntimeError, match="missing keys"):
        F.functional_call(net, {"lin.scale": x}, (x,), strict=True)
    with pytest.raises(AttributeError, match="no submodule"):
        F.functional_call(net, {"nope.w": x}, (x,))
    assert net.lin.scale.item() == 2.0  # restored after the failed call
