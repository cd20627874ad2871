"""vmap: batched execution equals stacking per-example results, for every op family."""
import numpy as np
import pytest

import jitgrad as jg
import jitgrad.func as F
from jitgrad.func import BatchingRuleError
from jitgrad.ops.core import dispatch
from jitgrad.ops.core.registry import OPS, def_composite
from jitgrad.testing import assert_close

RNG = np.random.default_rng(1)
X = jg.tensor(RNG.standard_normal((3, 2, 4)))  # a batch of 3 examples of shape (2, 4)
W = jg.tensor(RNG.standard_normal((4, 3)))
V = jg.tensor(RNG.standard_normal(4))


def looped(f, *xs):
    return jg.stack([f(*[x[i] for x in xs]) for i in range(xs[0].shape[0])])


FAMILIES = {
    "unary_binary": lambda x: (x.sin() * x.exp() - x / (x * x + 1.0)) ** 2 + jg.maximum(x, V),
    "where_clamp": lambda x: jg.where(x > 0, x, -x).clamp(-0.5, 2.0) + x.relu().sigmoid(),
    "reductions": lambda x: jg.stack([x.sum(), x.mean(1).sum(), x.max(), x.amin(0).sum(),
                                      x.var(), x.std(1).sum(), x.prod(), x.logsumexp(1).sum(),
                                      x.max(1).values.sum(), x.min(0, keepdim=True)[0].sum()]),
    "shape": lambda x: jg.cat([x.t().reshape(-1), x.permute(1, 0).flatten(),
                               x.unsqueeze(0).expand(3, 2, 4).sum(0).view(8),
                               x.transpose(0, 1)[..., 1], jg.stack([x, x * 2], 1).sum((0, 1)),
                               x.squeeze().reshape(-1), x[None][:, 1].squeeze(0)]),
    "indexing": lambda x: jg.cat([x[1], x[:, ::2].reshape(-1), x[[1, 0, 1]].reshape(-1),
                                  x[..., [0, 3]].reshape(-1),
                                  x[np.array([True, False])].reshape(-1), x[[0, 1], [2, 3]],
                                  x[1, ..., 2:3]]),
    "matmul": lambda x: jg.cat([(x @ W).reshape(-1), x @ V, (V @ x.t()), (x[0] @ V).reshape(1),
                                (x.t() @ x).reshape(-1), (W.t() @ x[0]).reshape(-1)]),
    "nn": lambda x: (jg.softmax(x, 1) * jg.log_softmax(x, 0)).sum(0),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_vmap_equals_loop_per_family(name):
    f = FAMILIES[name]
    out = F.vmap(f)(X)
    ref = looped(f, X)
    assert out.shape == ref.shape
    assert_close(out, ref, rtol=1e-13, atol=1e-14)


def test_vmap_grad_through_batched_ops():
    """Reverse mode through vmap: the batched graph gives the gradients of the loop."""
    x = X.detach().requires_grad_()
    F.vmap(FAMILIES["matmul"])(x).sum().backward()
    g1 = x.grad
    x2 = X.detach().requires_grad_()
    looped(FAMILIES["matmul"], x2).sum().backward()
    assert_close(g1, x2.grad, rtol=1e-13)


def test_in_dims_out_dims_kwargs_and_unbatched_outputs():
    a = jg.tensor(RNG.standard_normal((4, 3)))
    b = jg.tensor(RNG.standard_normal(4))
    out = F.vmap(lambda a, b, scale=1.0: (a * b).sum() * scale, in_dims=(1, None))(a, b,
                                                                                 scale=2.0)
    assert_close(out, (a._data * b._data[:, None]).sum(0) * 2.0, rtol=1e-13)
    out = F.vmap(lambda a: (a * 2, b), in_dims=1, out_dims=(1, 0))(a)
    assert out[0].shape == (4, 3) and out[1].shape == (3, 4)
    assert_close(out[0], a._data * 2)
    assert_close(out[1], np.broadcast_to(b._data, (3, 4)))
    nested = F.vmap(lambda d: {"y": d["a"].sum() * d["b"]}, in_dims=({"a": 0, "b": None},))
    out = nested({"a": a, "b": b[0]})
    assert_close(out["y"], a._data.sum(1) * b._data[0], rtol=1e-13)


def test_nested_vmap_and_chunks():
    A = jg.tensor(RNG.standard_normal((2, 3, 4)))
    f = lambda a, v: (a * v).sum() + a.amax()  # noqa: E731
    out = F.vmap(F.vmap(f, in_dims=(0, None)), in_dims=(1, None))(A, V)
    ref = np.array([[f(A[i, j], V).item() for i in range(2)] for j in range(3)])
    assert_close(out, ref, rtol=1e-13)
    out = F.vmap(lambda a: a.sum(0) @ W, chunk_size=2)(A)
    assert_close(out, A._data.sum(1) @ W._data, rtol=1e-13)


def test_numpy_in_numpy_out():
    out = F.vmap(lambda x: (x * x).sum())(np.arange(6.0).reshape(2, 3))
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, [5.0, 50.0])


def test_per_example_gradients():
    w = jg.tensor(RNG.standard_normal(4))
    xs = jg.tensor(RNG.standard_normal((5, 4)))
    ys = jg.tensor(RNG.standard_normal(5))

    def loss(w, x, y):
        return ((x @ w).tanh() - y) ** 2

    pe = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    ref = np.stack([F.grad(loss)(w, xs[i], ys[i])._data for i in range(5)])
    assert pe.shape == (5, 4)
    assert_close(pe, ref, rtol=1e-13)


def test_batched_jacobians():
    f = lambda x: x.sin() * (x @ x)  # noqa: E731
    xs = jg.tensor(RNG.standard_normal((3, 4)))
    ref = np.stack([F.jacrev(f)(xs[i])._data for i in range(3)])
    assert_close(F.vmap(F.jacrev(f))(xs), ref, rtol=1e-13)
    assert_close(F.vmap(F.jacfwd(f))(xs), ref, rtol=1e-13)
    href = np.stack([F.hessian(lambda x: f(x).sum())(xs[i])._data for i in range(3)])
    assert_close(F.vmap(F.hessian(lambda x: f(x).sum()))(xs), href, rtol=1e-12)


def test_vmap_of_jvp_and_jvp_of_vmap():
    xs = jg.tensor(RNG.standard_normal((3, 4)))
    ts = jg.tensor(RNG.standard_normal((3, 4)))
    f = lambda x: x.exp().sum()  # noqa: E731
    out = F.vmap(lambda x, t: F.jvp(f, (x,), (t,))[1])(xs, ts)
    assert_close(out, (np.exp(xs._data) * ts._data).sum(1), rtol=1e-13)
    _, tout = F.jvp(F.vmap(f), (xs,), (ts,))
    assert_close(tout, out, rtol=1e-13)


# --- errors -----------------------------------------------------------------------------------
def _unbatchable_fwd(ctx, x):
    return x * 2


_UNBATCHABLE = def_composite("_test_unbatchable", "TestUnbatchableBackward0", ("x",),
                             _unbatchable_fwd, lambda ctx, g: (g * 2,))
OPS.pop(_UNBATCHABLE.name)  # usable directly, but not left in the registry


def test_op_without_batching_rule_is_named():
    with pytest.raises(BatchingRuleError, match="_test_unbatchable"):
        F.vmap(lambda x: dispatch.composite(_UNBATCHABLE, x))(X)


def test_argmax_is_batched():
    got = F.vmap(lambda x: x.argmax())(X)
    assert np.array_equal(got.numpy(), np.argmax(X.numpy().reshape(X.shape[0], -1), axis=1))


def test_value_reads_raise_clear_errors():
    with pytest.raises(BatchingRuleError, match="item"):
        F.vmap(lambda x: x.sum().item())(X)
    with pytest.raises(BatchingRuleError, match="bool"):
        F.vmap(lambda x: x if x.sum() > 0 else -x)(X)
    with pytest.raises(BatchingRuleError, match="in-place"):
        F.vmap(lambda x: x.mul_(2))(X)
    with pytest.raises(BatchingRuleError, match="backward"):
        F.vmap(lambda x: x.sum().backward())(X)
    with pytest.raises(NotImplementedError, match="batched index"):
        F.vmap(lambda x, i: x[i], in_dims=(None, 0))(V, jg.tensor([[0, 1], [1, 2]]))


def test_argument_errors():
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        F.vmap(lambda a, b: a + b)(X, V)
    with pytest.raises(ValueError, match="at least one input"):
        F.vmap(lambda a: a, in_dims=None)(X)
    with pytest.raises(ValueError, match="out of range"):
        F.vmap(lambda a: a, in_dims=5)(X)
    with pytest.raises(ValueError, match="out_dims=None"):
        F.vmap(lambda a: a, out_dims=None)(X)
