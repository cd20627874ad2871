"""Every behaviour described by the three autograd tutorials in shared/seeds, with PyTorch's
values, node names and messages (checked against PyTorch 2.13)."""
import gc
import re
import warnings

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import Function

SECOND_BACKWARD = ("Trying to backward through the graph a second time (or directly access saved "
                   "tensors after they have already been freed). Saved intermediate values of the "
                   "graph are freed when you call .backward() or autograd.grad(). Specify "
                   "retain_graph=True if you need to backward through the graph a second time or "
                   "if you need to access saved tensors after calling backward.")
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"


def names(next_functions):
    """next_functions with each node replaced by its class name (None stays None)."""
    return tuple((None if n is None else type(n).__name__, nr) for n, nr in next_functions)


def vals(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=np.float64)


# --- seed 000: y = (3x + 4)**2 -------------------------------------------------------------------
def chain():
    x = jg.tensor(2.0, requires_grad=True)
    a = x * 3
    b = a + 4
    y = b ** 2
    return x, a, b, y


def test_seed000_grad_fn_names():
    x, a, b, y = chain()
    assert type(y.grad_fn).__name__ == "PowBackward0"
    assert type(b.grad_fn).__name__ == "AddBackward0"
    assert type(a.grad_fn).__name__ == "MulBackward0"
    assert y.grad_fn.name() == "PowBackward0"
    assert x.grad_fn is None
    assert re.fullmatch(r"<PowBackward0 object at 0x[0-9a-f]+>", repr(y.grad_fn))
    assert repr(y) == "tensor(100., grad_fn=<PowBackward0>)"
    assert repr(x) == "tensor(2., requires_grad=True)"


def test_seed000_next_functions_exactly_as_pytorch():
    x, a, b, y = chain()
    nf = y.grad_fn.next_functions
    assert isinstance(nf, tuple) and isinstance(nf[0], tuple)
    assert names(nf) == (("AddBackward0", 0),)
    assert nf[0][0] is b.grad_fn
    # the constant 4 is an input that needs no gradient: (None, 0), exactly as PyTorch prints
    assert names(nf[0][0].next_functions) == (("MulBackward0", 0), (None, 0))
    mul = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert mul is a.grad_fn
    assert names(mul.next_functions) == (("AccumulateGrad", 0), (None, 0))
    acc = mul.next_functions[0][0]
    assert acc.variable is x
    assert acc.next_functions == ()
    assert re.fullmatch(r"\(\(<AccumulateGrad object at 0x[0-9a-f]+>, 0\), \(None, 0\)\)",
                        repr(mul.next_functions))
    # 3 * x (scalar on the left) records the same node and edges
    y2 = (3 * x + 4) ** 2
    mul2 = y2.grad_fn.next_functions[0][0].next_functions[0][0]
    assert names(mul2.next_functions) == (("AccumulateGrad", 0), (None, 0))
    assert mul2.next_functions[0][0] is acc  # one accumulator per leaf, shared by graphs


def test_seed000_backward_steps_20_20_60():
    x, a, b, y = chain()
    seen = {}
    b.register_hook(lambda g: seen.__setitem__("b", g.item()))
    a.register_hook(lambda g: seen.__setitem__("a", g.item()))
    y.backward()
    assert seen == {"b": 20.0, "a": 20.0}  # dy/db = 2b = 20, dy/da = 20 * 1
    assert x.grad.item() == 60.0  # dy/dx = 20 * 3
    assert repr(x.grad) == "tensor(60.)"
    assert x.grad.requires_grad is False and x.grad.grad_fn is None


def test_seed000_x_squared_gives_4():
    x = jg.tensor(2.0, requires_grad=True)
    y = x ** 2
    y.backward()
    assert x.grad.item() == 4.0
    assert repr(x.grad) == "tensor(4.)"


def test_seed000_pow_saves_its_input():
    x = jg.tensor(2.0, requires_grad=True)
    y = x ** 3
    assert type(y.grad_fn).__name__ == "PowBackward0"
    y.backward(retain_graph=True)
    assert x.grad.item() == 12.0  # 3 x**2 with the saved x = 2
    # the node really holds x: changing x after the forward is detected at backward time
    with jg.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[float64 \[\]\] "
                                           r"is at version 1; expected version 0 instead"):
        y.backward()


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2


def test_seed000_cube_function():
    x = jg.tensor(2.0, requires_grad=True)
    y = Cube.apply(x)
    assert y.item() == 8.0
    assert type(y.grad_fn).__name__ == "CubeBackward"
    assert repr(y) == "tensor(8., grad_fn=<CubeBackward>)"
    assert names(y.grad_fn.next_functions) == (("AccumulateGrad", 0),)
    saved, = y.grad_fn.saved_tensors
    assert saved is x
    y.backward()
    assert x.grad.item() == 12.0
    with pytest.raises(RuntimeError, match=re.escape(SECOND_BACKWARD)):
        y.grad_fn.saved_tensors


def test_seed000_accumulation_60_then_120():
    x, a, b, y = chain()
    y.backward(retain_graph=True)
    assert x.grad.item() == 60.0
    y.backward()
    assert x.grad.item() == 120.0
    x.grad.zero_()  # what optimizer.zero_grad() does (or x.grad = None)
    ((3 * x + 4) ** 2).backward()
    assert x.grad.item() == 60.0
    x.grad = None
    ((3 * x + 4) ** 2).backward()
    assert x.grad.item() == 60.0


def test_seed000_second_backward_error():
    x, a, b, y = chain()
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    assert str(info.value) == SECOND_BACKWARD
    assert x.grad.item() == 60.0  # the failed call accumulated nothing


def test_seed000_retain_graph():
    x, a, b, y = chain()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 180.0
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_seed000_leaf_and_grad_of_non_leaf():
    x = jg.tensor(1., requires_grad=True)
    y = x * 2
    assert x.is_leaf is True
    assert y.is_leaf is False
    assert jg.tensor(1.).is_leaf is True  # tensors that do not require grad are leaves too
    y.backward()
    assert x.grad.item() == 2.0
    with pytest.warns(UserWarning, match=r"The \.grad attribute of a Tensor that is not a leaf "
                                         r"Tensor is being accessed"):
        assert y.grad is None


def test_seed000_retain_grad():
    x = jg.tensor(1., requires_grad=True)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad is True and x.retains_grad is False
    z = y * y
    z.backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad.item() == 4.0  # dz/dy = 2y
    assert x.grad.item() == 8.0
    assert y.grad.grad_fn is None


def test_seed000_detach():
    x = jg.tensor([1., 2.], requires_grad=True)
    y = x * 2
    z = y.detach()
    assert z.requires_grad is False
    assert z.grad_fn is None and z.is_leaf
    assert np.shares_memory(z.numpy(), y.detach().numpy())
    assert z._version == y._version
    # gradients do not flow back through z
    w = z * 3 + y
    w.backward(jg.ones(2))
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match=NO_GRAD_FN):
        (z * 3).backward(jg.ones(2))


def test_seed000_no_grad():
    x = jg.tensor(2., requires_grad=True)
    with jg.no_grad():
        y = x * 2
        assert jg.is_grad_enabled() is False
    assert jg.is_grad_enabled() is True
    assert y.grad_fn is None
    assert y.requires_grad is False
    assert repr(y) == "tensor(4.)"


def test_seed000_view_shares_storage_and_grad_reshapes_back():
    jg.manual_seed(0)
    x = jg.randn(4, requires_grad=True)
    y = x.view(2, 2)
    assert type(y.grad_fn).__name__ == "ViewBackward0"
    assert names(y.grad_fn.next_functions) == (("AccumulateGrad", 0),)
    assert y.shape == (2, 2)
    assert np.shares_memory(x.detach().numpy(), y.detach().numpy())
    (y * jg.tensor([[1., 2.], [3., 4.]])).sum().backward()
    assert x.grad.shape == (4,)
    assert x.grad.tolist() == [1., 2., 3., 4.]


def test_seed000_dynamic_graph_loop_and_branch():
    x = jg.tensor(2., requires_grad=True)
    grads = []
    for i in range(3):
        y = x ** i
        assert type(y.grad_fn).__name__ == "PowBackward0"
        y.backward()
        grads.append(x.grad.item())
        x.grad = None
    assert grads == [0.0, 1.0, 4.0]  # d/dx x**i = i x**(i-1)

    def f(condition):
        return x * 2 if condition else x * 3

    for condition, expected in ((True, 2.0), (False, 3.0)):
        f(condition).backward()
        assert x.grad.item() == expected
        x.grad = None


def test_seed000_diamond_graph():
    # A -> (B, C) -> D: both branches' gradients meet at A
    a = jg.tensor(3., requires_grad=True)
    b = a * 2
    c = a ** 2
    d = b * c
    d.backward()
    assert a.grad.item() == 54.0  # d = 2a**3 -> 6a**2
    assert names(d.grad_fn.next_functions) == (("MulBackward0", 0), ("PowBackward0", 0))


def test_seed000_lifecycle_summary():
    x = jg.tensor(2., requires_grad=True)
    y = ((x * 3) + 4) ** 2
    chain_names = []
    node = y.grad_fn
    while node is not None:
        chain_names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    assert chain_names == ["PowBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"]
    y.backward()
    assert x.grad.item() == 60.0


# --- seed 001 -----------------------------------------------------------------------------------
def test_seed001_manual_seed_with_large_seed():
    seed = 1768615200073 % (2 ** 32)
    jg.manual_seed(seed)
    first = jg.randn(3, 4).tolist()
    jg.manual_seed(seed)
    assert jg.randn(3, 4).tolist() == first


def test_seed001_sin_sum_dim1_names():
    jg.manual_seed(1768615200073 % (2 ** 32))
    x = jg.randn(3, 4, requires_grad=True)
    y = jg.sin(x * 2 + 1)
    z = y.sum(dim=1)
    assert x.grad_fn is None
    assert type(y.grad_fn).__name__ == "SinBackward0"
    assert names(y.grad_fn.next_functions) == (("AddBackward0", 0),)
    assert type(z.grad_fn).__name__ == "SumBackward1"
    assert z.shape == (3,)
    z.backward(jg.ones(3))
    np.testing.assert_allclose(vals(x.grad), 2 * np.cos(2 * vals(x) + 1), rtol=1e-12)


def test_seed001_log_chain():
    a = jg.tensor([2.0], requires_grad=True)
    b = jg.tensor([3.0], requires_grad=True)
    c = a * b
    d = c + jg.tensor([1.0])
    loss = d.log()
    assert type(c.grad_fn).__name__ == "MulBackward0"
    assert type(d.grad_fn).__name__ == "AddBackward0"
    assert type(loss.grad_fn).__name__ == "LogBackward0"
    assert names(c.grad_fn.next_functions) == (("AccumulateGrad", 0), ("AccumulateGrad", 0))
    assert names(d.grad_fn.next_functions) == (("MulBackward0", 0), (None, 0))
    assert names(loss.grad_fn.next_functions) == (("AddBackward0", 0),)
    loss.backward()
    np.testing.assert_allclose(vals(a.grad), [3 / 7], rtol=1e-15)  # b / (ab + 1)
    np.testing.assert_allclose(vals(b.grad), [2 / 7], rtol=1e-15)
    assert repr(loss) == "tensor([1.9459], grad_fn=<LogBackward0>)"


def test_seed001_gradient_accumulator_two_uses():
    x = jg.ones(2, requires_grad=True)
    y1 = x * 2
    y2 = x * 3
    loss = (y1 + y2).sum()
    loss.backward()
    assert repr(x.grad) == "tensor([5., 5.])"
    # without zeroing, a second pass accumulates
    ((x * 2) + (x * 3)).sum().backward()
    assert x.grad.tolist() == [10.0, 10.0]


def test_seed001_memory_example_frees_graph():
    jg.manual_seed(0)
    x = jg.randn(1000, 1000, requires_grad=True)
    y = x * 2
    z = y.relu().sum()
    assert type(z.grad_fn).__name__ == "SumBackward0"
    z.backward()
    del z, y
    gc.collect()
    expected = np.where(vals(x) > 0, 2.0, 0.0)
    np.testing.assert_array_equal(vals(x.grad), expected)


def test_seed001_clipping_hook_on_non_leaf():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    w = jg.tensor([0.5, 0.5], requires_grad=True)
    y = x * w
    z = y.sum()
    seen = []

    def grad_clipping_hook(grad):
        seen.append(grad.tolist())
        return grad.clamp(min=-0.5, max=0.5)

    handle = y.register_hook(grad_clipping_hook)
    y.retain_grad()  # retain_grad sees the hook's result
    z.backward()
    assert seen == [[1.0, 1.0]]  # dz/dy is ones
    assert y.grad.tolist() == [0.5, 0.5]
    # PyTorch gives w.grad = clipped * x = [0.5, 1.0] (the tutorial's comment "[0.5, 0.5]" is a
    # slip: the clipped gradient of y is [0.5, 0.5], w.grad multiplies it by x)
    assert w.grad.tolist() == [0.5, 1.0]
    assert x.grad.tolist() == [0.25, 0.25]
    handle.remove()
    x.grad = w.grad = None
    (x * w).sum().backward()
    assert w.grad.tolist() == [1.0, 2.0]


class MyCustomLinear(Function):
    @staticmethod
    def forward(ctx, x, W, b):
        ctx.save_for_backward(x, W, b)
        return x @ W.T + b

    @staticmethod
    def backward(ctx, grad_output):
        x, W, b = ctx.saved_tensors
        grad_x = grad_output @ W
        grad_W = grad_output.T @ x
        grad_b = grad_output.sum(dim=0)
        return grad_x, grad_W, grad_b


def test_seed001_custom_linear():
    jg.manual_seed(1768615200073 % (2 ** 32))
    x = jg.randn(10, 5, requires_grad=True)
    W = jg.randn(3, 5, requires_grad=True)
    b = jg.randn(3, requires_grad=True)
    y = MyCustomLinear.apply(x, W, b)
    assert type(y.grad_fn).__name__ == "MyCustomLinearBackward"
    assert names(y.grad_fn.next_functions) == (("AccumulateGrad", 0),) * 3
    assert y.shape == (10, 3)
    np.testing.assert_allclose(vals(y), vals(x) @ vals(W).T + vals(b), rtol=1e-12)
    loss = y.sum()
    loss.backward()
    assert x.grad.shape == (10, 5)
    assert W.grad.shape == (3, 5)
    assert b.grad.shape == (3,)
    ones = np.ones((10, 3))
    np.testing.assert_allclose(vals(x.grad), ones @ vals(W), rtol=1e-12)
    np.testing.assert_allclose(vals(W.grad), ones.T @ vals(x), rtol=1e-12)
    np.testing.assert_allclose(vals(b.grad), np.full(3, 10.0))
    # same gradients as the built-in ops
    x2, W2, b2 = (jg.tensor(vals(t), requires_grad=True) for t in (x, W, b))
    (x2 @ W2.T + b2).sum().backward()
    for t, t2 in ((x, x2), (W, W2), (b, b2)):
        np.testing.assert_allclose(vals(t.grad), vals(t2.grad), rtol=1e-12)


def test_seed001_custom_linear_only_some_inputs_need_grad():
    jg.manual_seed(3)
    x = jg.randn(4, 5)
    W = jg.randn(3, 5, requires_grad=True)
    b = jg.randn(3)
    y = MyCustomLinear.apply(x, W, b)
    assert names(y.grad_fn.next_functions) == ((None, 0), ("AccumulateGrad", 0), (None, 0))
    assert y.grad_fn.needs_input_grad == (False, True, False)
    y.sum().backward()
    np.testing.assert_allclose(vals(W.grad), np.ones((3, 4)) @ vals(x), rtol=1e-12)
    assert x.grad is None and b.grad is None


def test_seed001_inplace_on_leaf_errors():
    jg.manual_seed(0)
    x = jg.randn(2, 2, requires_grad=True)
    y = x + 1
    with pytest.raises(RuntimeError) as info:
        x += 0.1
    assert str(info.value) == LEAF_INPLACE
    assert x._version == 0  # nothing was written
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_seed001_detach_gan_snippet():
    jg.manual_seed(0)

    def generator(z):
        return z * 2

    def discriminator(x):
        return x.mean()

    real_data = jg.randn(10)
    z = jg.randn(10, requires_grad=True)
    fake_data = generator(z)
    assert type(fake_data.grad_fn).__name__ == "MulBackward0"
    d_fake = discriminator(fake_data.detach())
    assert d_fake.grad_fn is None and d_fake.requires_grad is False
    gen_loss = -d_fake
    assert gen_loss.grad_fn is None
    with pytest.raises(RuntimeError) as info:
        gen_loss.backward()
    assert str(info.value) == NO_GRAD_FN
    # without detach the gradient reaches the generator's input: d(-mean(2z))/dz = -2/10
    (-discriminator(generator(z))).backward()
    np.testing.assert_allclose(vals(z.grad), np.full(10, -0.2), rtol=1e-15)
    # the discriminator still sees real data normally
    assert discriminator(real_data).grad_fn is None


def test_seed001_higher_order_grad():
    x = jg.tensor(3.0, requires_grad=True)
    y = x ** 3 + 2 * x
    grad1 = jg.autograd.grad(y, x, create_graph=True)[0]
    assert repr(grad1) == "tensor(29., grad_fn=<AddBackward0>)"
    grad2 = jg.autograd.grad(grad1, x)[0]
    assert repr(grad2) == "tensor(18.)"
    assert x.grad is None  # autograd.grad does not touch .grad


# --- seed 002 -----------------------------------------------------------------------------------
def test_seed002_add_then_mul_graph():
    a = jg.tensor(1., requires_grad=True)
    b = jg.tensor(2., requires_grad=True)
    c = jg.tensor(4., requires_grad=True)
    s = a + b
    out = s * c
    assert type(s.grad_fn).__name__ == "AddBackward0"
    assert names(out.grad_fn.next_functions) == (("AddBackward0", 0), ("AccumulateGrad", 0))
    assert out.grad_fn.next_functions[0][0] is s.grad_fn
    out.backward()
    assert (a.grad.item(), b.grad.item(), c.grad.item()) == (4.0, 4.0, 3.0)


def _mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    W1 = jg.tensor(rng.standard_normal((4, 5)) * 0.5, requires_grad=True)
    b1 = jg.tensor(rng.standard_normal(5) * 0.1, requires_grad=True)
    W2 = jg.tensor(rng.standard_normal((5, 3)) * 0.5, requires_grad=True)
    b2 = jg.tensor(rng.standard_normal(3) * 0.1, requires_grad=True)
    X = jg.tensor(rng.standard_normal((6, 4)))
    Y = np.array([0, 2, 1, 2, 0, 1])
    return X, Y, [W1, b1, W2, b2]


def _mlp_loss(X, Y, params):
    """Linear -> ReLU -> Linear -> softmax cross-entropy, written by hand."""
    W1, b1, W2, b2 = params
    h = (X @ W1 + b1).relu()
    logits = h @ W2 + b2
    m = logits.detach().max(dim=1, keepdim=True)[0]  # a constant shift, for stability
    shifted = logits - m
    log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
    one_hot = jg.tensor(np.eye(3)[Y])
    return -(log_probs * one_hot).sum() / X.shape[0]


def _np_mlp_loss(X, Y, W1, b1, W2, b2):
    h = np.maximum(X @ W1 + b1, 0)
    logits = h @ W2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(Y)), Y].mean()


def test_seed002_graph_rebuilt_each_forward():
    X, Y, params = _mlp_params()
    loss1 = _mlp_loss(X, Y, params)
    nodes1 = _all_nodes(loss1.grad_fn)
    loss2 = _mlp_loss(X, Y, params)
    nodes2 = _all_nodes(loss2.grad_fn)
    ops1 = {id(n) for n in nodes1 if type(n).__name__ != "AccumulateGrad"}
    ops2 = {id(n) for n in nodes2 if type(n).__name__ != "AccumulateGrad"}
    assert ops1 and not ops1 & ops2  # every operation node is a new instance
    assert [type(n).__name__ for n in nodes1] == [type(n).__name__ for n in nodes2]
    leaves1 = [n.variable for n in nodes1 if type(n).__name__ == "AccumulateGrad"]
    leaves2 = [n.variable for n in nodes2 if type(n).__name__ == "AccumulateGrad"]
    assert {id(t) for t in leaves1} == {id(t) for t in params}  # the parameters are reused
    assert {id(t) for t in leaves2} == {id(t) for t in params}
    assert all(p.is_leaf and p.requires_grad for p in params)
    assert X.requires_grad is False  # the input is a leaf without AccumulateGrad


def _all_nodes(root):
    """Breadth-first walk along next_functions (the graph skeleton)."""
    seen, order, queue = set(), [], [root]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        queue.extend(n for n, _ in node.next_functions)
    return order


def test_seed002_mlp_graph_skeleton():
    X, Y, params = _mlp_params()
    loss = _mlp_loss(X, Y, params)
    assert type(loss.grad_fn).__name__ == "DivBackward0"
    kinds = {type(n).__name__ for n in _all_nodes(loss.grad_fn)}
    assert {"ReluBackward0", "ExpBackward0", "LogBackward0", "SumBackward1",
            "AccumulateGrad"} <= kinds


def test_seed002_mlp_grads_match_finite_differences_and_manual_backprop():
    X, Y, params = _mlp_params()
    loss = _mlp_loss(X, Y, params)
    arrays = [vals(p).copy() for p in params]
    np.testing.assert_allclose(loss.item(), _np_mlp_loss(vals(X), Y, *arrays), rtol=1e-12)
    loss.backward()
    # finite differences, central, float64
    eps = 1e-6
    for k, p in enumerate(params):
        num = np.zeros_like(arrays[k])
        for idx in np.ndindex(arrays[k].shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            num[idx] = (_np_mlp_loss(vals(X), Y, *plus) - _np_mlp_loss(vals(X), Y, *minus)) / (2 * eps)
        np.testing.assert_allclose(vals(p.grad), num, rtol=1e-5, atol=1e-8)
    # manual backprop (the previous lesson's hand derivation)
    Xn, (W1, b1, W2, b2) = vals(X), arrays
    z1 = Xn @ W1 + b1
    h = np.maximum(z1, 0)
    logits = h @ W2 + b2
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dlogits = (p - np.eye(3)[Y]) / len(Y)
    dW2, db2 = h.T @ dlogits, dlogits.sum(0)
    dz1 = (dlogits @ W2.T) * (z1 > 0)
    dW1, db1 = Xn.T @ dz1, dz1.sum(0)
    for p_, manual in zip(params, (dW1, db1, dW2, db2)):
        np.testing.assert_allclose(vals(p_.grad), manual, rtol=1e-10, atol=1e-14)


def test_seed002_backward_frees_graph():
    X, Y, params = _mlp_params()
    loss = _mlp_loss(X, Y, params)
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_seed002_gradient_accumulation_over_micro_batches():
    X, Y, params = _mlp_params()
    _mlp_loss(X, Y, params).backward()
    full = [vals(p.grad).copy() for p in params]
    for p in params:
        p.grad = None
    # two halves, each scaled by its share of the batch, accumulate into the full-batch gradient
    for sl in (slice(0, 3), slice(3, 6)):
        (_mlp_loss(X[sl], Y[sl], params) * 0.5).backward()
    for p, g in zip(params, full):
        np.testing.assert_allclose(vals(p.grad), g, rtol=1e-12, atol=1e-15)
    # zeroing (optimizer.zero_grad) makes the next step start from scratch
    for p in params:
        p.grad.zero_()
    _mlp_loss(X, Y, params).backward()
    for p, g in zip(params, full):
        np.testing.assert_allclose(vals(p.grad), g, rtol=1e-12, atol=1e-15)


def test_seed002_structure_follows_control_flow():
    x = jg.tensor([1.0, -2.0, 3.0], requires_grad=True)

    def forward(n_layers, use_relu):
        h = x
        for _ in range(n_layers):
            h = h * 2
            if use_relu:
                h = h.relu()
        return h.sum()

    for n_layers, use_relu in ((1, False), (3, True), (2, False)):
        out = forward(n_layers, use_relu)
        kinds = [type(n).__name__ for n in _all_nodes(out.grad_fn)]
        assert kinds.count("MulBackward0") == n_layers
        assert kinds.count("ReluBackward0") == (n_layers if use_relu else 0)
        out.backward()
        expected = [2.0 ** n_layers if (v > 0 or not use_relu) else 0.0 for v in (1.0, -2.0, 3.0)]
        assert x.grad.tolist() == expected
        x.grad = None
