"""Tensor hooks, post-accumulate hooks, node hooks/pre-hooks and retain_grad (PyTorch's
semantics, values checked against PyTorch 2.13)."""
import numpy as np
import pytest

import jitgrad as jg

NO_GRAD_HOOK = "cannot register a hook on a tensor that doesn't require gradient"


def leaf(values=(1.0, 2.0)):
    return jg.tensor(list(values), requires_grad=True)


def error_message(fn, exc=RuntimeError):
    """The message of the ``exc`` that ``fn()`` raises."""
    with pytest.raises(exc) as info:
        fn()
    return str(info.value)


def test_leaf_hook_replaces_grad_and_remove():
    x = leaf()
    handle = x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    handle.remove()  # removing twice is harmless
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_leaf_hook_runs_before_accumulation():
    x = leaf()
    order = []
    x.register_hook(lambda g: order.append(("hook", x.grad)))
    x.register_post_accumulate_grad_hook(lambda t: order.append(("post", t.grad.tolist())))
    (x * 2).sum().backward()
    assert order == [("hook", None), ("post", [2.0, 2.0])]


def test_hooks_chain_in_registration_order():
    x = leaf()
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]  # (3 + 1) * 2

    x = leaf()
    y = x * 3
    y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: g * 2)
    (y * 1).sum().backward()
    assert x.grad.tolist() == [12.0, 12.0]  # ((1 + 1) * 2) * 3


def test_hook_returning_none_observes_only():
    x = leaf()
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    (y * 2).sum().backward()
    assert seen == [[2.0, 2.0]]
    assert x.grad.tolist() == [6.0, 6.0]


def test_hook_sees_the_summed_gradient_once():
    x = leaf()
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 2 + x * 3).sum().backward()
    assert seen == [[5.0, 5.0]]

    x = leaf()
    y = x * 1
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    (y * 2 + y * 3).sum().backward()
    assert seen == [[5.0, 5.0]]


def test_non_leaf_hook_modifies_what_flows_upstream():
    x = leaf()
    w = jg.tensor([0.5, 0.5], requires_grad=True)
    y = x * w
    y.register_hook(lambda g: g.clamp(min=-0.5, max=0.5))
    y.sum().backward()
    assert w.grad.tolist() == [0.5, 1.0]
    assert x.grad.tolist() == [0.25, 0.25]


def test_hook_on_tensor_not_requiring_grad():
    assert error_message(lambda: jg.tensor([1.0]).register_hook(lambda g: g)) == NO_GRAD_HOOK


def test_hook_runs_on_every_backward_with_retain_graph():
    x = leaf()
    y = x * 2
    calls = []
    y.register_hook(lambda g: calls.append(1))
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert len(calls) == 2


def test_hooks_apply_to_autograd_grad():
    x = leaf()
    y = x * 2
    y.register_hook(lambda g: g * 100)
    assert jg.autograd.grad(y.sum(), x)[0].tolist() == [200.0, 200.0]
    x.register_hook(lambda g: g * 7)
    assert jg.autograd.grad((x * 2).sum(), x)[0].tolist() == [14.0, 14.0]
    assert x.grad is None


def test_hook_registered_before_and_after_inplace():
    x = leaf()
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(("first", g.tolist())))
    y.mul_(3)
    y.register_hook(lambda g: seen.append(("second", g.tolist())))
    y.sum().backward()
    # the later hook belongs to the new version of y and runs first
    assert seen == [("second", [1.0, 1.0]), ("first", [3.0, 3.0])]
    assert x.grad.tolist() == [6.0, 6.0]


def test_handle_as_context_manager():
    x = leaf()
    with x.register_hook(lambda g: g * 5):
        pass
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_hook_changing_size_or_type_errors():
    x = leaf()
    y = x * 2
    y.register_hook(lambda g: jg.ones(3))
    assert error_message(y.sum().backward) == "hook '<lambda>' has changed the size of value"

    def on_leaf(g):
        return jg.ones(3)

    x = leaf()
    x.register_hook(on_leaf)
    with pytest.raises(RuntimeError, match="hook 'on_leaf' has changed the size of value"):
        (x * 2).sum().backward()
    assert x.grad is None

    x = leaf()
    y = x * 2
    y.register_hook(lambda g: g.float())
    assert error_message(y.sum().backward) == (
        "hook '<lambda>' has changed the type of value (was float64 got float32)")

    y = x * 2
    y.register_hook(lambda g: 3.0)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'float'"):
        y.sum().backward()


def test_exception_in_hook_propagates():
    x = leaf()
    y = x * 2

    def bad(g):
        raise ValueError("boom")

    y.register_hook(bad)
    with pytest.raises(ValueError, match="boom"):
        y.sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# --- post-accumulate-grad hooks -------------------------------------------------------------------
def test_post_accumulate_grad_hook():
    x = leaf()
    calls = []
    handle = x.register_post_accumulate_grad_hook(lambda t: calls.append((t is x, t.grad.tolist())))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert calls == [(True, [3.0, 3.0]), (True, [6.0, 6.0])]
    handle.remove()
    (x * 3).sum().backward()
    assert len(calls) == 2


def test_post_accumulate_grad_hook_optimizer_style():
    # the hook can update the parameter in place and clear its grad (fused optimizer pattern)
    p = leaf([1.0, 2.0])

    def step(t):
        with jg.no_grad():
            t.sub_(0.1 * t.grad)
        t.grad = None

    p.register_post_accumulate_grad_hook(step)
    (p * p).sum().backward()
    assert np.allclose(p.detach().numpy(), [0.8, 1.6])
    assert p.grad is None


def test_post_accumulate_grad_hook_not_called_by_autograd_grad():
    x = leaf()
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append(1))
    jg.autograd.grad((x * 2).sum(), x)
    assert calls == []


def test_post_accumulate_grad_hook_errors():
    y = leaf() * 2
    assert error_message(lambda: y.register_post_accumulate_grad_hook(lambda t: None)) == (
        "post accumulate grad hooks cannot be registered on non-leaf tensors")
    assert error_message(
        lambda: jg.tensor([1.0]).register_post_accumulate_grad_hook(lambda t: None)) == NO_GRAD_HOOK


# --- node hooks -----------------------------------------------------------------------------------
def test_node_hook_signatures():
    x = leaf()
    y = x * 3
    log = []

    def post(grad_inputs, grad_outputs):
        log.append(("post", [None if g is None else g.tolist() for g in grad_inputs],
                    [g.tolist() for g in grad_outputs]))

    def pre(grad_outputs):
        log.append(("pre", [g.tolist() for g in grad_outputs]))

    h1 = y.grad_fn.register_hook(post)
    h2 = y.grad_fn.register_prehook(pre)
    assert type(h1).__name__ == "RemovableHandle"
    y.sum().backward(retain_graph=True)
    # grad_inputs has one entry per next_functions edge (None for the constant 3)
    assert log == [("pre", [[1.0, 1.0]]), ("post", [[3.0, 3.0], None], [[1.0, 1.0]])]
    h1.remove()
    h2.remove()
    y.sum().backward()
    assert len(log) == 2


def test_node_hooks_receive_tuples():
    x = leaf()
    y = x * 3
    kinds = []
    y.grad_fn.register_prehook(lambda go: kinds.append(type(go)))
    y.grad_fn.register_hook(lambda gi, go: kinds.extend([type(gi), type(go)]))
    y.sum().backward()
    assert kinds == [tuple, tuple, tuple]


def test_node_prehook_replaces_grad_outputs():
    x = leaf()
    y = x * 3
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_node_post_hook_replaces_grad_inputs():
    x = leaf()
    y = x * 3
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, None))
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_node_post_hook_sees_input_shaped_grads():
    a = jg.tensor([[1.0], [2.0]], requires_grad=True)
    b = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a * b
    shapes = []
    y.grad_fn.register_hook(lambda gi, go: shapes.append([tuple(g.shape) for g in gi]))
    y.sum().backward()
    assert shapes == [[(2, 1), (3,)]]
    assert a.grad.tolist() == [[6.0], [6.0]] and b.grad.tolist() == [3.0, 3.0, 3.0]


def test_accumulate_grad_node_hooks():
    x = leaf()
    y = x * 3
    acc = y.grad_fn.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad"
    log = []
    acc.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    acc.register_hook(lambda gi, go: log.append(("post", gi, [g.tolist() for g in go])))
    y.sum().backward()
    assert log == [("pre", [3.0, 3.0]), ("post", (), [[3.0, 3.0]])]

    x = leaf()
    y = x * 3
    y.grad_fn.next_functions[0][0].register_prehook(lambda go: (go[0] * 10,))
    y.sum().backward()
    assert x.grad.tolist() == [30.0, 30.0]


def test_node_hook_wrong_number_of_values():
    x = leaf()
    y = x * 3
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    assert error_message(y.sum().backward) == (
        "hook '<lambda>' has returned an incorrect number of values (got 1, but expected 2)")
    y = x * 3
    y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    assert error_message(y.sum().backward) == (
        "hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)")
    y = x * 3
    y.grad_fn.register_prehook(lambda go: [go[0]])
    with pytest.raises(TypeError, match="expected tuple, but hook returned 'list'"):
        y.sum().backward()


# --- retain_grad ----------------------------------------------------------------------------------
def test_retain_grad_sees_hook_result_whatever_the_order():
    for retain_first in (True, False):
        x = leaf()
        y = x * 3
        if retain_first:
            y.retain_grad()
        y.register_hook(lambda g: g * 2)
        if not retain_first:
            y.retain_grad()
        (y * 1).sum().backward()
        assert y.grad.tolist() == [2.0, 2.0]
        assert x.grad.tolist() == [6.0, 6.0]


def test_retain_grad_accumulates_and_is_idempotent():
    x = leaf()
    y = x * 2
    y.retain_grad()
    y.retain_grad()
    (y * y).sum().backward(retain_graph=True)
    assert y.grad.tolist() == [4.0, 8.0]
    (y * y).sum().backward()
    assert y.grad.tolist() == [8.0, 16.0]


def test_retain_grad_on_leaf_is_noop_and_errors():
    x = leaf()
    x.retain_grad()
    assert x.retains_grad is False
    assert error_message(lambda: jg.tensor([1.0]).retain_grad()) == (
        "can't retain_grad on Tensor that has requires_grad=False")


def test_retain_grad_after_removed_hook():
    x = leaf()
    y = x * 2
    h = y.register_hook(lambda g: g * 0)
    h.remove()
    y.retain_grad()
    y.sum().backward()
    assert y.grad.tolist() == [1.0, 1.0]
    assert x.grad.tolist() == [2.0, 2.0]


def test_non_leaf_grad_warns_without_retain_grad():
    x = leaf()
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None
