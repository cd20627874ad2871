"""Module hooks as PyTorch 2.13: forward pre-hooks / hooks (with_kwargs, prepend,
always_call), full backward hooks and pre-hooks, the deprecated backward hook and the global
hooks of ``nn.modules.module``. The expected call logs and values were produced by running the
same code on torch 2.13 (the tests never import torch)."""
import warnings

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.nn as nn
from jitgrad.nn.modules import module as M


def _t(values, requires_grad=False):
    return jg.tensor(values, dtype=jg.float64, requires_grad=requires_grad)


def _r(t):
    return None if t is None else [round(float(v), 6) for v in t.reshape(-1).tolist()]


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(_t([[1., 2.], [3., 4.]]))

    def forward(self, x, scale=1.0):
        return (x @ self.w) * scale


def test_forward_and_backward_hooks_order_and_values_as_torch():
    log, m = [], Lin()
    m.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
    m.register_forward_pre_hook(
        lambda mod, args, kw: (log.append(("prekw", sorted(kw))),
                               ((args[0] * 2,), {"scale": 3.0}))[1],
        with_kwargs=True)
    m.register_forward_pre_hook(lambda mod, args: log.append(("pre-first",)), prepend=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("fwd", _r(out))))
    m.register_forward_hook(lambda mod, args, kw, out: (log.append(("fwdkw", kw)), out + 1)[1],
                            with_kwargs=True)
    m.register_full_backward_pre_hook(
        lambda mod, go: (log.append(("bpre", [_r(g) for g in go])), (go[0] * 10,))[1])
    m.register_full_backward_hook(
        lambda mod, gi, go: log.append(("bwd", [_r(g) for g in gi], [_r(g) for g in go])))
    x = _t([[1., -1.]], True)
    y = m(x)
    log.append(("out", _r(y)))
    y.sum().backward()
    log.append(("xgrad", _r(x.grad), "wgrad", _r(m.w.grad)))
    assert log == [
        ("pre-first",), ("pre", 1), ("prekw", []), ("fwd", [-12.0, -12.0]),
        ("fwdkw", {"scale": 3.0}), ("out", [-11.0, -11.0]), ("bpre", [[1.0, 1.0]]),
        ("bwd", [[90.0, 210.0]], [[10.0, 10.0]]),
        ("xgrad", [180.0, 420.0], "wgrad", [60.0, 60.0, -60.0, -60.0])]


def test_full_backward_hook_when_no_input_requires_grad_as_torch():
    log, m = [], Lin()
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, [_r(g) for g in go])))
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        m(_t([[1., 1.]])).sum().backward()
    assert log == [((None,), [[2.0, 2.0]])]
    assert _r(m.w.grad) == [2.0, 2.0, 2.0, 2.0]  # the pre-hook's scaling reaches the weight

    m2 = Lin()
    m2.register_full_backward_hook(lambda mod, gi, go: (go[0],))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="no input requires gradient"):
            m2(_t([[1., 1.]])).sum().backward()


def test_backward_hook_replaces_grad_input_with_tuple_outputs_as_torch():
    log = []

    class Two(nn.Module):
        def forward(self, a, b, k):
            return a * b, a + k

    t = Two()
    t.register_full_backward_hook(
        lambda mod, gi, go: (log.append(([_r(g) for g in gi], [_r(g) for g in go])),
                             (gi[0] * 0, gi[1], None))[1])
    a, b = _t([1., 2.], True), _t([3., 4.], True)
    p, q = t(a, b, 5)
    (p.sum() + 2 * q.sum()).backward()
    assert log == [([[5.0, 6.0], [1.0, 2.0], None], [[1.0, 1.0], [2.0, 2.0]])]
    assert _r(a.grad) == [0.0, 0.0] and _r(b.grad) == [1.0, 2.0]


def test_backward_hook_returning_wrong_count_raises():
    m = Lin()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        m(_t([[1., 1.]], True)).sum().backward()


def test_old_style_backward_hook_and_mixing_error_as_torch():
    log, m = [], Lin()
    m.register_backward_hook(lambda mod, gi, go: log.append((len(gi), [_r(g) for g in go])))
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        m.register_full_backward_hook(lambda *a: None)
    m(_t([[1., 1.]], True)).sum().backward()
    assert log == [(2, [[1.0, 1.0]])]  # the hook of MulBackward0 (x @ w, scale)


def test_always_call_forward_hook_runs_when_forward_raises():
    log, m = [], Lin()
    m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("plain", out)))
    with pytest.raises(TypeError):
        m("bad")
    assert log == [("always", None)]


def test_global_hooks_run_before_the_modules_own_and_handles_remove_them():
    log, m = [], Lin()
    m.register_forward_pre_hook(lambda mod, args: log.append(("lpre",)))
    h1 = M.register_module_forward_pre_hook(
        lambda mod, args: log.append(("gpre", type(mod).__name__)))
    h2 = M.register_module_forward_hook(
        lambda mod, args, out: log.append(("gfwd", type(mod).__name__)))
    try:
        m(_t([[1., 1.]]))
    finally:
        h1.remove()
        h2.remove()
    m(_t([[1., 1.]]))
    assert log == [("gpre", "Lin"), ("lpre",), ("gfwd", "Lin"), ("lpre",)]


def test_global_full_backward_hook_sees_every_module():
    seen = []
    h = M.register_module_full_backward_hook(lambda mod, gi, go: seen.append(type(mod).__name__))
    try:
        net = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
        net(_t([[1., 2.]], True)).sum().backward()
    finally:
        h.remove()
    assert seen == ["Tanh", "Linear", "Sequential"]


def test_removing_hooks_and_their_flags():
    m, calls = Lin(), []
    h = m.register_forward_hook(lambda mod, args, kw, out: calls.append(kw), with_kwargs=True,
                                always_call=True)
    m(_t([[1., 1.]]), scale=2.0)
    h.remove()
    m(_t([[1., 1.]]))
    assert calls == [{"scale": 2.0}]
    assert not m._forward_hooks and not m._forward_hooks_with_kwargs
    assert not m._forward_hooks_always_called
    with h:  # a handle is also a context manager
        pass


def test_forward_hook_prepend_order():
    m, calls = Lin(), []
    m.register_forward_hook(lambda mod, a, o: calls.append(1))
    m.register_forward_hook(lambda mod, a, o: calls.append(0), prepend=True)
    m(_t([[1., 1.]]))
    assert calls == [0, 1]


def test_with_kwargs_pre_hook_must_return_args_and_kwargs():
    m = Lin()
    m.register_forward_pre_hook(lambda mod, args, kw: args, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"tuple of \(new_args, new_kwargs\)"):
        m(_t([[1., 1.]]))


def test_registration_hooks_can_replace_values():
    seen, made = [], []

    def on_param(mod, name, p):
        seen.append(name)
        made.append(nn.Parameter(p.detach().clone()))
        return made[-1]

    h = M.register_module_parameter_registration_hook(on_param)
    try:
        lin = nn.Linear(2, 2)
    finally:
        h.remove()
    assert seen == ["weight", "bias"]
    assert lin.weight is made[0] and lin.bias is made[1]
    hb = M.register_module_buffer_registration_hook(lambda mod, name, b: seen.append(name))
    hm = M.register_module_module_registration_hook(lambda mod, name, sub: seen.append(name))
    try:
        nn.Sequential(nn.BatchNorm1d(2))
    finally:
        hb.remove()
        hm.remove()
    assert seen[2:] == ["running_mean", "running_var", "num_batches_tracked", "0"]


def test_module_init_rejects_arguments_as_torch():
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        nn.Module(foo=1)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Tanh(3)


def test_buffer_assignment_registers_a_buffer():
    m = nn.Module()
    m.a = nn.Buffer(_t([1., 2.]))
    m.b = nn.Buffer(_t([3.]), persistent=False)
    assert list(m.state_dict()) == ["a"]
    assert [name for name, _ in m.named_buffers()] == ["a", "b"]
    assert isinstance(m.a, nn.Buffer) and m.b.persistent is False
    np.testing.assert_array_equal((m.a * 2).numpy(), [2., 4.])
    assert type(m.a * 2) is jg.Tensor


class Extra(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 1)
        self.count = 3

    def get_extra_state(self):
        return {"count": self.count}

    def set_extra_state(self, state):
        self.count = state["count"]


def test_state_dict_hooks_and_extra_state_as_torch():
    log, m = [], Extra()
    for mod in (m, m.lin):
        mod.register_state_dict_pre_hook(
            lambda mod, prefix, keep: log.append(("pre", type(mod).__name__, prefix, keep)))
        mod.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append(("post", type(mod).__name__, list(sd))))
    sd = m.state_dict()
    log.append(("keys", list(sd), sd["_extra_state"]))

    def pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        log.append(("lpre", type(mod).__name__, prefix, sorted(sd)))
        sd.pop(prefix + "junk", None)

    def post(mod, keys):
        log.append(("lpost", type(mod).__name__, list(keys.missing_keys),
                    list(keys.unexpected_keys)))
        keys.missing_keys.clear()

    m.register_load_state_dict_pre_hook(pre)
    m.lin.register_load_state_dict_pre_hook(pre)
    m.register_load_state_dict_post_hook(post)
    res = m.load_state_dict({"lin.weight": jg.ones(1, 2), "junk": jg.zeros(1),
                             "_extra_state": {"count": 9}})
    log.append(("res", res.missing_keys, res.unexpected_keys, m.count, m.lin.weight.tolist()))
    with pytest.raises(RuntimeError) as err:
        m.load_state_dict({"lin.weight": jg.ones(1, 2), "other": jg.zeros(1)})
    log.append(("err", str(err.value)))
    assert log == [  # torch 2.13's log of the same code
        ("pre", "Extra", "", False), ("pre", "Linear", "lin.", False),
        ("post", "Linear", ["_extra_state", "lin.weight", "lin.bias"]),
        ("post", "Extra", ["_extra_state", "lin.weight", "lin.bias"]),
        ("keys", ["_extra_state", "lin.weight", "lin.bias"], {"count": 3}),
        ("lpre", "Extra", "", ["_extra_state", "junk", "lin.weight"]),
        ("lpre", "Linear", "lin.", ["lin.weight"]),
        ("lpost", "Extra", ["lin.bias"], []),
        ("res", [], [], 9, [[1.0, 1.0]]),
        ("lpre", "Extra", "", ["lin.weight", "other"]),
        ("lpre", "Linear", "lin.", ["lin.weight"]),
        ("lpost", "Extra", ["_extra_state", "lin.bias"], ["other"]),
        ("err", 'Error(s) in loading state_dict for Extra:\n\tUnexpected key(s) in state_dict: '
                '"other". ')]


def test_get_buffer_set_submodule_and_to_empty():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert net.get_buffer("1.running_mean") is net[1].running_mean
    with pytest.raises(AttributeError, match="is not a buffer"):
        net.get_buffer("1.weight")
    net.set_submodule("0", nn.Tanh())
    assert isinstance(net[0], nn.Tanh)
    with pytest.raises(AttributeError, match="has no attribute `2`"):
        net.set_submodule("2", nn.Tanh(), strict=True)
    with pytest.raises(ValueError, match="without a target name"):
        net.set_submodule("", nn.Tanh())
    assert net.to_empty(device="cpu") is net
    assert nn.Module.call_super_init is False
