"""Lazy leaf edges (Note [lazy leaf edges] in graph/node.py): an op on a leaf with no live
sink records the leaf itself; ``next_functions`` and the engine see the leaf's ``AccumulateGrad``,
one per leaf per graph, with PyTorch's lifetimes and hooks."""
import gc
import weakref

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd.gradcheck import gradcheck


def leaf(values=(1.0, 2.0, 3.0)):
    return jg.tensor(np.array(values), requires_grad=True)


def test_forward_records_the_leaf_and_makes_no_sink():
    x = leaf()
    y = x * 2.0
    assert y.grad_fn._leaf_edges and y.grad_fn._next_edges[0][0] is x
    assert x._grad_acc_ref is None  # no sink made by the forward


@pytest.mark.parametrize("make", [lambda x, y: x + y, lambda x, y: x * y,
                                  lambda x, y: jg.tanh(x)[1:] * y[:2].sum(),
                                  lambda x, y: jg.roll(x, 1) - y])
def test_next_functions_give_one_sink_per_leaf(make):
    x, y = leaf(), leaf((4.0, 5.0, 6.0))
    out = make(x, y)
    sinks = {}
    stack, seen = [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            assert not isinstance(nxt, jg.Tensor)
            if nxt.name() == "AccumulateGrad":
                sinks.setdefault(id(nxt.variable), set()).add(id(nxt))
            stack.append(nxt)
    assert {len(ids) for ids in sinks.values()} == {1}  # one sink per leaf in the graph
    first = out.grad_fn.next_functions
    assert out.grad_fn.next_functions is first  # bound once, then the same tuple


def test_sinks_bound_by_the_engine_equal_next_functions():
    x = leaf()
    a, b = x * 2.0, x * 3.0
    out = a + b
    out.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0, 5.0])
    sink = a.grad_fn.next_functions[0][0]
    assert sink is b.grad_fn.next_functions[0][0] and sink.variable is x
    assert x._grad_accumulator() is sink


def test_graph_keeps_the_leaf_alive_and_frees_it_without_the_collector():
    gc.disable()
    try:
        x = leaf()
        ref = weakref.ref(x)
        y = x * 2.0
        del x
        assert ref() is not None  # the graph holds the leaf, as AccumulateGrad.variable does
        assert y.grad_fn.next_functions[0][0].variable is ref()
        del y
        assert ref() is None  # no reference cycle: freed by reference counting
    finally:
        gc.enable()


def test_a_live_sink_is_the_edge_and_its_hooks_fire():
    x = leaf()
    calls = []
    holder = x * 1.0
    sink = holder.grad_fn.next_functions[0][0]
    sink.register_prehook(lambda grads: calls.append(grads[0].numpy().copy()))
    y = x * 2.0  # recorded while the sink is alive: its edge is that sink
    assert not y.grad_fn._leaf_edges and y.grad_fn._next_edges[0][0] is sink
    del sink, holder  # the new graph keeps it, as PyTorch's does
    y.sum().backward()
    assert len(calls) == 1
    np.testing.assert_array_equal(calls[0], [2.0, 2.0, 2.0])


def test_leaf_hooks_and_post_accumulate_hooks_fire_through_a_bound_sink():
    x = leaf()
    seen, after = [], []
    x.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 10.0)
    x.register_post_accumulate_grad_hook(lambda t: after.append(t.grad.numpy().copy()))
    (x * x).sum().backward()
    np.testing.assert_array_equal(seen[0], [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x.grad.numpy(), [20.0, 40.0, 60.0])
    np.testing.assert_array_equal(after[0], [20.0, 40.0, 60.0])


def test_inputs_and_autograd_grad_capture_lazy_leaves():
    x, y = leaf(), leaf((4.0, 5.0, 6.0))
    out = (x * y + jg.tanh(x)).sum()
    gx, gy = jg.autograd.grad(out, (x, y), retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), y.numpy() + 1 - np.tanh(x.numpy()) ** 2)
    np.testing.assert_array_equal(gy.numpy(), x.numpy())
    assert x.grad is None and y.grad is None
    out.backward(inputs=[y])
    assert x.grad is None
    np.testing.assert_array_equal(y.grad.numpy(), x.numpy())


def test_gradients_match_finite_differences_and_double_backward():
    def fn(x, y):
        return (x * y + jg.tanh(x)[1:].sum() * y - jg.roll(x, 1) / y) ** 2

    x, y = leaf((0.3, -0.7, 1.1)), leaf((1.5, 2.0, -0.5))
    assert gradcheck(fn, (x, y), eps=1e-6, atol=1e-6)
    (gx,) = jg.autograd.grad((x * x * x).sum(), (x,), create_graph=True)
    (ggx,) = jg.autograd.grad(gx.sum(), (x,))
    np.testing.assert_allclose(ggx.numpy(), 6 * x.numpy())


def test_second_backward_without_retain_graph_still_raises():
    x = leaf()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
