"""The engine: scheduling, accumulation, retain_graph, inputs=, autograd.grad, errors, hooks and
reentrant backward (values, node order and messages checked against PyTorch 2.13)."""
import threading

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import Function

NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"
SCALAR_ONLY = "grad can be implicitly created only for scalar outputs"


def leaf(values=(1.0, 2.0)):
    return jg.tensor(list(values), requires_grad=True)


# --- deep and wide graphs -----------------------------------------------------------------------
def test_100k_op_chain_no_recursion_error():
    x = jg.tensor(1.0, requires_grad=True)
    y = x
    for i in range(100_000):
        y = y * 1.0 if i % 2 else y + 0.5
    assert y.item() == 25001.0
    y.backward()
    assert x.grad.item() == 1.0


def test_deep_chain_of_nonlinear_ops_matches_numpy():
    x = jg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y.sin()
    y.backward()
    v, d = 1.0, 1.0
    for _ in range(20_000):
        d *= np.cos(v)
        v = np.sin(v)
    assert y.item() == pytest.approx(v, rel=1e-12)
    assert x.grad.item() == pytest.approx(d, rel=1e-9)


def test_deep_graph_freed_without_backward():
    x = jg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    del y  # deallocating a 100k-deep graph must not overflow the C stack


def test_diamond_accumulates():
    x = jg.tensor(3.0, requires_grad=True)
    a = x * 2
    b = a.exp()
    c = a.sin()
    d = b + c
    d.backward()
    expected = (np.exp(6.0) + np.cos(6.0)) * 2
    assert x.grad.item() == pytest.approx(expected, rel=1e-14)


def test_wide_fan_out_accumulates():
    x = leaf()
    total = x * 0
    for k in range(1, 101):
        total = total + x * float(k)
    total.sum().backward()
    assert x.grad.tolist() == [5050.0, 5050.0]


def test_same_tensor_used_twice_in_one_op():
    x = leaf([3.0])
    (x * x).backward()
    assert x.grad.tolist() == [6.0]
    x.grad = None
    (x + x).backward()
    assert x.grad.tolist() == [2.0]


def test_execution_order_matches_pytorch():
    # nodes run in reverse creation order once ready (PyTorch's sequence_nr priority)
    x = leaf()
    order = []
    a = x * 2
    b = x * 3
    c = a.exp()
    d = b.sin()
    e = c + d
    for name, t in (("a", a), ("b", b), ("c", c), ("d", d), ("e", e)):
        t.register_hook(lambda g, name=name: order.append(name))
    e.sum().backward()
    assert order == ["e", "d", "c", "b", "a"]


def test_independent_backwards_in_threads():
    results = {}

    def work(k):
        x = jg.tensor([float(k)], requires_grad=True)
        y = x
        for _ in range(200):
            y = (y * 1.0).sin() + 0.0
        y.sum().backward()
        results[k] = x.grad.item()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        v, d = float(k), 1.0
        for _ in range(200):
            d *= np.cos(v)
            v = np.sin(v)
        assert results[k] == pytest.approx(d, rel=1e-10, abs=1e-300)


# --- retain_graph / create_graph ---------------------------------------------------------------
def test_retain_graph_allows_second_backward():
    x = leaf()
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-15)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_graph_without_saved_tensors_can_run_twice():
    x = leaf()
    y = (x + 1).sum()
    y.backward()
    y.backward()  # nothing saved: PyTorch does not complain either
    assert x.grad.tolist() == [2.0, 2.0]


def test_create_graph_backward_records_grad():
    x = leaf()
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.tolist() == [3.0, 12.0]
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    g = x.grad
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_autograd_grad_second_order():
    x = jg.tensor(3.0, requires_grad=True)
    y = x ** 3 + 2 * x
    (g,) = jg.autograd.grad(y, x, create_graph=True)
    assert repr(g) == "tensor(29., grad_fn=<AddBackward0>)"
    (gg,) = jg.autograd.grad(g, x, create_graph=True)
    assert gg.item() == 18.0
    (ggg,) = jg.autograd.grad(gg, x)
    assert ggg.item() == 6.0


def test_grad_fn_of_first_derivative_is_pytorchs():
    x = jg.tensor(2.0, requires_grad=True)
    assert repr(jg.autograd.grad(x ** 3, x, create_graph=True)[0]) == \
        "tensor(12., grad_fn=<MulBackward0>)"
    assert repr(jg.autograd.grad(x ** 0, x, create_graph=True)[0]) == "tensor(0.)"
    assert repr(jg.autograd.grad(2 ** x, x, create_graph=True)[0]) == \
        "tensor(2.7726, grad_fn=<MulBackward0>)"


# --- backward(inputs=...) -----------------------------------------------------------------------
def test_backward_inputs_leaves_and_non_leaves():
    x = leaf()
    w = jg.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    z = (y * y).sum()
    z.backward(inputs=[x], retain_graph=True)
    assert x.grad.tolist() == [18.0, 64.0]
    assert w.grad is None
    z.backward(inputs=[y])
    assert y.grad.tolist() == [6.0, 16.0]  # a non-leaf input accumulates into .grad
    assert x.grad.tolist() == [18.0, 64.0] and w.grad is None


def test_backward_inputs_unused_leaf_gets_no_grad():
    a = jg.tensor([1.0], requires_grad=True)
    b = jg.tensor([1.0], requires_grad=True)
    (a * 2).sum().backward(inputs=[a, b])
    assert a.grad.tolist() == [2.0]
    assert b.grad is None


def test_backward_inputs_single_tensor():
    x = leaf()
    w = leaf([5.0, 6.0])
    (x * w).sum().backward(inputs=w)
    assert w.grad.tolist() == [1.0, 2.0] and x.grad is None


def test_backward_inputs_errors():
    x = leaf()
    with pytest.raises(RuntimeError) as info:
        (x * 2).sum().backward(inputs=[])
    assert str(info.value) == "`inputs` argument to `backward()` cannot be empty."
    with pytest.raises(RuntimeError) as info:
        (x * 2).sum().backward(inputs=[jg.tensor(1.0)])
    assert str(info.value) == "can't retain_grad on Tensor that has requires_grad=False"


# --- autograd.grad ------------------------------------------------------------------------------
def test_grad_returns_tuple_and_leaves_grad_untouched():
    x = leaf()
    out = jg.autograd.grad((x * x).sum(), x)
    assert isinstance(out, tuple) and len(out) == 1
    assert out[0].tolist() == [2.0, 4.0]
    assert out[0].requires_grad is False
    assert x.grad is None
    out = jg.autograd.grad((x * x).sum(), (x,))
    assert isinstance(out, tuple)


def test_grad_allow_unused():
    x = leaf()
    a = jg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        jg.autograd.grad((x * 2).sum(), [x, a])
    assert str(info.value) == ("The differentiated Tensor at index 1 appears to not have been used "
                               "in the graph. Set allow_unused=True if this is the desired behavior.")
    gx, ga = jg.autograd.grad((x * 2).sum(), [x, a], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and ga is None
    gx, ga = jg.autograd.grad((x * 2).sum(), [x, a], allow_unused=True, materialize_grads=True)
    assert ga.tolist() == [0.0]


def test_grad_outputs():
    x = leaf()
    (g,) = jg.autograd.grad(x * 2, x, grad_outputs=jg.tensor([1.0, 10.0]))
    assert g.tolist() == [2.0, 20.0]
    (g,) = jg.autograd.grad(x * 2, x, grad_outputs=jg.tensor([1, 2]))  # ints are accepted
    assert g.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of "):
        jg.autograd.grad(x * 2, x, grad_outputs=jg.tensor([1.0, 10.0, 3.0]))
    x32 = jg.tensor([1.0, 2.0], dtype=jg.float32, requires_grad=True)
    (g,) = jg.autograd.grad(x32 * 2, x32, grad_outputs=jg.ones(2, dtype=jg.float64))
    assert g.dtype == jg.float32 and g.tolist() == [2.0, 2.0]


def test_grad_is_grads_batched_stacks_vector_jacobian_products():
    rng = np.random.default_rng(4)
    x = jg.tensor(rng.standard_normal(3), requires_grad=True)
    w = jg.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    y = jg.tanh(w @ x)  # dy/dx = diag(1 - y^2) W
    (jac,) = jg.autograd.grad(y, x, jg.eye(3), is_grads_batched=True, retain_graph=True)
    want = (1 - np.tanh(w.numpy() @ x.numpy()) ** 2)[:, None] * w.numpy()
    np.testing.assert_allclose(jac.numpy(), want, rtol=1e-13)
    # two outputs, two inputs, a batch of 2 arbitrary cotangents
    v = jg.tensor(rng.standard_normal((2, 3)))
    gx, gw = jg.autograd.grad([y, x * 2.0], [x, w], [v, v], is_grads_batched=True,
                              retain_graph=True)
    for b in range(2):
        ex, ew = jg.autograd.grad([y, x * 2.0], [x, w], [v[b], v[b]], retain_graph=True)
        np.testing.assert_allclose(gx[b].numpy(), ex.numpy(), rtol=1e-14)
        np.testing.assert_allclose(gw[b].numpy(), ew.numpy(), rtol=1e-14)
    # create_graph: the stacked Jacobian is differentiable again (d/dx of trace(J) for y = x^3)
    z = x ** 3
    (jz,) = jg.autograd.grad(z, x, jg.eye(3), is_grads_batched=True, create_graph=True)
    (h,) = jg.autograd.grad(jz.diagonal().sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.numpy(), rtol=1e-14)
    # the graph is freed after the last element unless retained, as without batching
    y = jg.tanh(w @ x)
    jg.autograd.grad(y, x, jg.eye(3), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="second time"):
        jg.autograd.grad(y, x, jg.eye(3)[0])
    with pytest.raises(RuntimeError, match="leading batch dimension"):
        jg.autograd.grad(x * 2, x, None, is_grads_batched=True)
    with pytest.raises(RuntimeError, match="same non-zero batch size"):
        jg.autograd.grad([x * 2, x * 3], x, [jg.ones(2, 2), jg.ones(3, 2)],
                         is_grads_batched=True)


def test_grad_multiple_outputs_and_inputs():
    x = leaf()
    w = leaf([3.0, 4.0])
    (g,) = jg.autograd.grad([x * 2, x * 3], x, grad_outputs=[jg.ones(2), jg.ones(2)])
    assert g.tolist() == [5.0, 5.0]
    (g,) = jg.autograd.grad([(x * 2).sum(), (x ** 2).sum()], [x])
    assert g.tolist() == [4.0, 6.0]
    gx, gw = jg.autograd.grad((x * w).sum(), [x, w])
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]


def test_grad_with_respect_to_non_leaf():
    x = leaf()
    y = x * 2
    z = (y ** 2).sum()
    (gy,) = jg.autograd.grad(z, y, retain_graph=True)
    assert gy.tolist() == [4.0, 8.0]
    gy, gx = jg.autograd.grad(z, [y, x])
    assert gy.tolist() == [4.0, 8.0] and gx.tolist() == [8.0, 16.0]


def test_grad_of_a_leaf_itself():
    x = leaf()
    (g,) = jg.autograd.grad(x, x, grad_outputs=jg.ones(2))
    assert g.tolist() == [1.0, 1.0]
    x.sum().backward()
    x.backward(jg.tensor([3.0, 4.0]))
    assert x.grad.tolist() == [4.0, 5.0]


def test_grad_frees_graph_unless_retained():
    x = leaf()
    y = (x * x).sum()
    jg.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        jg.autograd.grad(y, x)


def test_grad_input_not_requiring_grad():
    x = leaf()
    with pytest.raises(RuntimeError) as info:
        jg.autograd.grad((x * 2).sum(), jg.tensor([1.0]))
    assert str(info.value) == "One of the differentiated Tensors does not require grad"


def test_autograd_backward_several_roots():
    x = leaf()
    jg.autograd.backward([(x * 2).sum(), x * 3], [jg.tensor(1.0), jg.tensor([1.0, 10.0])])
    assert x.grad.tolist() == [5.0, 32.0]
    with pytest.raises(RuntimeError) as info:
        jg.autograd.backward([(x * 2).sum(), x * 3])
    assert str(info.value) == SCALAR_ONLY


# --- errors -------------------------------------------------------------------------------------
def test_non_scalar_backward_needs_gradient():
    x = leaf()
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward()
    assert str(info.value) == SCALAR_ONLY
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\]"):
        (x * 2).backward(jg.ones(3))
    assert x.grad is None


def test_backward_of_tensor_without_grad_fn():
    for t in (jg.tensor([1.0]), jg.tensor(1.0), jg.tensor([1.0, 2.0]), jg.tensor(3)):
        with pytest.raises(RuntimeError) as info:
            t.backward()
        assert str(info.value) == NO_GRAD_FN
    with pytest.raises(RuntimeError) as info:
        jg.autograd.grad(jg.tensor(1.0), leaf())
    assert str(info.value) == NO_GRAD_FN


def test_requires_grad_on_int_tensor():
    with pytest.raises(RuntimeError) as info:
        jg.tensor([1, 2]).requires_grad_()
    assert str(info.value) == "only Tensors of floating point dtype can require gradients"
    with pytest.raises(RuntimeError) as info:
        jg.tensor([1, 2], requires_grad=True)
    assert str(info.value) == ("Only Tensors of floating point and complex dtype can require "
                               "gradients")
    t = jg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point and complex dtype"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype"):
        jg.arange(3, requires_grad=True)
    assert t.requires_grad_(False) is t  # turning it off is fine
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype"):
        jg.tensor([True]).requires_grad_()


def test_requires_grad_flag_on_non_leaf():
    y = leaf() * 2
    with pytest.raises(RuntimeError) as info:
        y.requires_grad_(False)
    assert str(info.value) == (
        "you can only change requires_grad flags of leaf variables. If you want to use a computed "
        "variable in a subgraph that doesn't require differentiation use var_no_grad = "
        "var.detach().")
    assert y.requires_grad_(True) is y


# --- broadcasting -------------------------------------------------------------------------------
def test_broadcast_grads_reduced_to_input_shapes():
    a = jg.ones(3, 1, requires_grad=True)
    b = jg.ones(4, requires_grad=True)
    c = jg.tensor(2.0, requires_grad=True)
    ((a * b) * c).backward(jg.ones(3, 4))
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[8.0], [8.0], [8.0]]
    assert b.grad.shape == (4,) and b.grad.tolist() == [6.0] * 4
    assert c.grad.shape == () and c.grad.item() == 12.0


def test_broadcast_with_size_one_dims_kept():
    a = jg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)  # (1, 3)
    b = jg.tensor([[1.0], [2.0]], requires_grad=True)  # (2, 1)
    (a * b).backward(jg.ones(2, 3))
    assert a.grad.tolist() == [[3.0, 3.0, 3.0]]
    assert b.grad.tolist() == [[6.0], [6.0]]


def test_broadcast_in_division_and_pow():
    a = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = jg.tensor([2.0, 4.0], requires_grad=True)
    (a / b).sum().backward()
    assert b.grad.tolist() == [-(1.0 + 3.0) / 4.0, -(2.0 + 4.0) / 16.0]
    e = jg.tensor([2.0], requires_grad=True)
    a.grad = None
    (a ** e).sum().backward()
    av = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(e.grad.numpy(), [(av ** 2 * np.log(av)).sum()], rtol=1e-14)
    np.testing.assert_allclose(a.grad.numpy(), 2 * av, rtol=1e-15)


# --- hooks and exceptions -----------------------------------------------------------------------
def test_hooks_and_backward_run_in_create_graph_mode():
    for create_graph in (False, True):
        x = leaf()
        y = x * 2
        modes = []
        y.register_hook(lambda g: modes.append(("tensor", jg.is_grad_enabled())))
        y.grad_fn.register_prehook(lambda go: modes.append(("pre", jg.is_grad_enabled())))
        y.grad_fn.register_hook(lambda gi, go: modes.append(("post", jg.is_grad_enabled())))
        x.register_post_accumulate_grad_hook(lambda t: modes.append(("acc", jg.is_grad_enabled())))
        y.sum().backward(create_graph=create_graph)
        assert modes == [("tensor", create_graph), ("pre", create_graph), ("post", create_graph),
                         ("acc", create_graph)]
        assert jg.is_grad_enabled() is True


def test_exception_in_hook_propagates_and_engine_recovers():
    class HookError(Exception):
        pass

    x = leaf()
    y = x * 2
    z = y.exp()

    def bad(g):
        raise HookError("raised inside a hook")

    y.register_hook(bad)
    with pytest.raises(HookError, match="raised inside a hook"):
        z.sum().backward()
    assert x.grad is None
    # a new graph works as usual afterwards, on this and on other tensors
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert jg.is_grad_enabled() is True


def test_exception_in_backward_restores_grad_mode():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise KeyError("in backward")

    x = leaf()
    with pytest.raises(KeyError):
        Boom.apply(x).sum().backward(create_graph=True)
    assert jg.is_grad_enabled() is True
    x2 = leaf()
    with pytest.raises(KeyError):
        Boom.apply(x2).sum().backward()
    assert jg.is_grad_enabled() is True


# --- reentrant backward -------------------------------------------------------------------------
def checkpointed(name, fn, derivative):
    """A Function class ``name`` that saves x and returns fn(x), and whose backward returns g times
    ``derivative(xd)``, run with grad enabled on a fresh leaf xd = x.detach() (checkpoint style:
    the derivative comes from a nested, reentrant backward or autograd.grad)."""

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fn(x)

    def backward(ctx, g):
        x, = ctx.saved_tensors
        with jg.enable_grad():
            d = derivative(x.detach().requires_grad_())
        return g * d

    return type(name, (Function,), {"forward": staticmethod(forward),
                                    "backward": staticmethod(backward)})


def by_backward(f):
    """A derivative for ``checkpointed``: runs f(xd).sum().backward() and returns xd.grad."""

    def derivative(xd):
        f(xd).sum().backward()
        return xd.grad

    return derivative


ReentrantCube = checkpointed("ReentrantCube", lambda x: x ** 3, by_backward(lambda xd: xd ** 3))
ReentrantGrad = checkpointed("ReentrantGrad", lambda x: x.sin(),
                             lambda xd: jg.autograd.grad(xd.sin().sum(), xd)[0])


def test_reentrant_backward_inside_function_backward():
    x = leaf([1.0, 2.0])
    y = ReentrantCube.apply(x * 1)
    (y * jg.tensor([1.0, 10.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 120.0]


def test_reentrant_autograd_grad_inside_function_backward():
    x = leaf([0.5, 1.5])
    y = ReentrantGrad.apply(x * 2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos([1.0, 3.0]), rtol=1e-15)


def test_nested_reentrant_levels():
    # x * 1 forward, whose backward runs a backward through ReentrantCube, itself reentrant
    Outer = checkpointed("Outer", lambda x: x * 1, by_backward(ReentrantCube.apply))
    x = leaf([2.0])
    Outer.apply(x).sum().backward()
    assert x.grad.tolist() == [12.0]


def test_backward_inside_hook():
    x = leaf([1.0, 2.0])
    other = leaf([3.0, 4.0])
    y = x * 2

    def hook(g):
        assert jg.is_grad_enabled() is False  # hooks run in the backward's grad mode
        with jg.enable_grad():
            (other * other).sum().backward()
        return g

    y.register_hook(hook)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert other.grad.tolist() == [6.0, 8.0]
