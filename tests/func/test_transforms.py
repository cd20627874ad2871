"""jitgrad.func transforms against hand-derived results and float64 finite differences."""
import numpy as np
import pytest

import jitgrad as jg
import jitgrad.func as F
from jitgrad.testing import assert_close

RNG = np.random.default_rng(0)


def T(a):
    return jg.tensor(np.asarray(a, dtype=np.float64))


def fd_grad(f, x, eps=1e-6):
    """Central differences of a scalar function of an ndarray."""
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.reshape(-1)[k] = eps
        g.reshape(-1)[k] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def fd_jac(f, x, eps=1e-6):
    """Central-difference Jacobian of an array function: shape f(x).shape + x.shape."""
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.reshape(-1)[k] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    out = np.stack(cols, -1)
    return out.reshape(out.shape[:-1] + x.shape)


# --- grad -----------------------------------------------------------------------------------
def test_grad_hand_derived():
    x = T([0.3, -1.2, 2.0])
    g = F.grad(lambda x: (x.sin() * x).sum())(x)
    xs = x._data
    assert_close(g, np.cos(xs) * xs + np.sin(xs), rtol=1e-12)
    assert not g.requires_grad and g.grad_fn is None


def test_grad_argnums_pytrees_and_aux():
    w, b = T(RNG.standard_normal((3, 2))), T(RNG.standard_normal(2))
    x = T(RNG.standard_normal(3))

    def loss(params, x):
        y = (x @ params["w"] + params["b"]).tanh()
        return (y * y).sum(), y

    g, aux = F.grad(loss, has_aux=True)({"w": w, "b": b}, x)
    assert set(g) == {"w", "b"} and g["w"].shape == (3, 2)
    y = np.tanh(x._data @ w._data + b._data)
    dy = 2 * y * (1 - y * y)
    assert_close(g["b"], dy, rtol=1e-12)
    assert_close(g["w"], np.outer(x._data, dy), rtol=1e-12)
    assert_close(aux, y, rtol=1e-12)
    gx, gp = F.grad(lambda p, x: loss(p, x)[0], argnums=(1, 0))({"w": w, "b": b}, x)
    assert_close(gx, w._data @ dy, rtol=1e-12)
    assert_close(gp["w"], g["w"], rtol=1e-15)
    gl = F.grad(lambda ps: (ps[0] * ps[1]).sum())([w, w])  # a list pytree
    assert isinstance(gl, list)
    assert_close(gl[0], w)
    assert_close(gl[1], w)


def test_grad_and_value_value_and_grad():
    x = T([1.0, 2.0])
    g, v = F.grad_and_value(lambda x: (x ** 3).sum())(x)
    assert_close(g, [3.0, 12.0])
    assert v.item() == 9.0
    v2, g2 = F.value_and_grad(lambda x: ((x ** 3).sum(), x * 2), has_aux=True)(x)
    assert v2[0].item() == 9.0
    assert_close(v2[1], [2.0, 4.0])
    assert_close(g2, g)


def test_grad_unused_input_is_zero_and_numpy_in_out():
    g = F.grad(lambda x, y: (x * 2).sum(), argnums=(0, 1))(T([1.0, 2.0]), T([5.0]))
    assert_close(g[1], [0.0])
    a = np.array([0.5, 1.5])
    out = F.grad(lambda x: (x.exp() * x).sum())(a)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, np.exp(a) * (1 + a), rtol=1e-12)


def test_grad_errors():
    with pytest.raises(RuntimeError, match="scalar Tensor, got tensor with 1 dims"):
        F.grad(lambda x: x * 2)(T([1.0, 2.0]))
    with pytest.raises(TypeError, match="floating point"):
        F.grad(lambda x: x.sum())(jg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="argnums=3"):
        F.grad(lambda x: x.sum(), argnums=3)(T([1.0]))
    with pytest.raises(RuntimeError, match=r"\(output, aux\)"):
        F.grad(lambda x: x.sum(), has_aux=True)(T([1.0]))


def test_higher_order_grad_third_derivative():
    f = lambda x: x.sin() * x ** 2  # noqa: E731
    d3 = F.grad(F.grad(F.grad(f)))(T(0.7)).item()
    x = 0.7
    assert d3 == pytest.approx(-np.cos(x) * x * x - 6 * x * np.sin(x) + 6 * np.cos(x), rel=1e-12)
    # against finite differences of the second derivative
    d2 = lambda v: F.grad(F.grad(f))(T(v)).item()  # noqa: E731
    assert d3 == pytest.approx((d2(x + 1e-5) - d2(x - 1e-5)) / 2e-5, rel=1e-6)


def test_grad_composes_with_autograd_of_closed_over_tensor():
    w = jg.tensor([2.0, 3.0], requires_grad=True)
    g = F.grad(lambda x: (w * x * x).sum())(T([1.0, 4.0]))  # 2 w x
    assert g.requires_grad
    g.sum().backward()
    assert_close(w.grad, [2.0, 8.0])


# --- vjp / jvp / linearize ------------------------------------------------------------------
def test_vjp_matches_finite_differences():
    x = RNG.standard_normal((2, 3))
    f = lambda t: (t.tanh() @ T(np.ones((3, 2))) * 1.5).exp()  # noqa: E731
    out, vjp_fn = F.vjp(f, T(x))
    v = RNG.standard_normal(out.shape)
    (g,) = vjp_fn(T(v))
    J = fd_jac(lambda a: f(T(a))._data, x)
    assert_close(g, np.tensordot(v, J, axes=2), rtol=1e-7)
    (g2,) = vjp_fn(T(v))  # callable again
    assert_close(g2, g, rtol=0)


def test_vjp_tuple_outputs_and_has_aux():
    out, fn, aux = F.vjp(lambda x, y: ((x * y, x + y), "aux"), T([1.0, 2.0]), T([3.0, 4.0]),
                         has_aux=True)
    gx, gy = fn((T([1.0, 1.0]), T([2.0, 0.0])))
    assert aux == "aux"
    assert_close(gx, [3.0 + 2.0, 4.0])
    assert_close(gy, [1.0 + 2.0, 2.0])
    with pytest.raises(RuntimeError, match="structure"):
        fn(T([1.0, 1.0]))


def test_jvp_hand_derived_and_errors():
    x, t = T([0.1, 0.2]), T([1.0, -2.0])
    out, tout = F.jvp(lambda x: x.exp() * x, (x,), (t,))
    assert_close(tout, np.exp(x._data) * (1 + x._data) * t._data, rtol=1e-12)
    assert_close(out, np.exp(x._data) * x._data, rtol=1e-12)
    o, to = F.jvp(lambda x: T([1.0]), (x,), (t,))
    assert_close(to, [0.0])
    with pytest.raises(RuntimeError, match="independent"):
        F.jvp(lambda x: T([1.0]), (x,), (t,), strict=True)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        F.jvp(lambda x: x, x, (t,))
    with pytest.raises(RuntimeError, match="same shape"):
        F.jvp(lambda x: x, (x,), (T([1.0]),))


def test_jvp_of_jvp_second_derivative():
    x = T([0.1, 0.7])
    one = T([1.0, 1.0])
    _, d2 = F.jvp(lambda y: F.jvp(lambda z: z.sin() * z, (y,), (one,))[1], (x,), (one,))
    xs = x._data
    assert_close(d2, 2 * np.cos(xs) - xs * np.sin(xs), rtol=1e-12)


def test_linearize_replays_without_recomputing():
    calls = []

    def f(x):
        calls.append(1)
        return (x.sin() * x).sum() + (x @ x)

    x = T([0.3, 0.5])
    out, jvp_fn = F.linearize(f, x)
    assert len(calls) == 1
    xs = x._data
    grad = np.cos(xs) * xs + np.sin(xs) + 2 * xs
    for t in ([1.0, 0.0], [0.5, -2.0]):
        assert jvp_fn(T(t)).item() == pytest.approx(grad @ t, rel=1e-12)
    assert len(calls) == 1
    assert out.item() == pytest.approx(f(x).item())


def test_hvp_forward_over_reverse():
    x, v = T([1.0, 2.0, 0.5]), T([1.0, -1.0, 2.0])
    value, (hv,) = F.hvp(lambda x: (x ** 3).sum() * x[0], (x,), (v,))
    xs = x._data
    H = np.diag(6 * xs * xs[0])
    H[0] += 3 * xs ** 2
    H[:, 0] += 3 * xs ** 2
    assert_close(hv, H @ v._data, rtol=1e-12)
    assert value.item() == pytest.approx((xs ** 3).sum() * xs[0])


# --- Jacobians and Hessians -------------------------------------------------------------------
FUNCS = {
    "tanh_matmul": (lambda x: (T(np.arange(12.0).reshape(4, 3) / 10) @ x).tanh() * x.sum(), (3,)),
    "softmax": (lambda x: jg.softmax(x, 0) * x, (4,)),
    "reductions": (lambda x: jg.stack([x.max(), x.var(), x.logsumexp(0), x.prod()]), (3,)),
    "shape_index": (lambda x: x.reshape(2, 3).t()[1:] * x[[0, 5]].sum(), (6,)),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jacrev_equals_jacfwd_equals_fd(name):
    f, shape = FUNCS[name]
    x = RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)
    jr, jf = F.jacrev(f)(T(x)), F.jacfwd(f)(T(x))
    ref = fd_jac(lambda a: f(T(a))._data, x)
    assert jr.shape == ref.shape == jf.shape
    assert_close(jr, jf, rtol=1e-12, atol=1e-13)
    assert_close(jr, ref, rtol=1e-6, atol=1e-8)


def test_jacobian_seed_shapes_and_pytrees():
    # seed 001: jacrev(model, argnums=1)(params, x)
    W, b = T(RNG.standard_normal((3, 5))), T(RNG.standard_normal(3))
    x = T(RNG.standard_normal((10, 5)))
    model = lambda p, x: x @ p[0].T + p[1]  # noqa: E731
    jx = F.jacrev(model, argnums=1)((W, b), x)
    assert jx.shape == (10, 3, 10, 5)
    assert_close(jx[2, :, 2], W)  # d out[2, i] / d x[2, j] = W[i, j]
    assert_close(jx[2, :, 3], np.zeros((3, 5)))
    jp = F.jacfwd(model)((W, b), x)
    assert isinstance(jp, tuple) and jp[0].shape == (10, 3, 3, 5) and jp[1].shape == (10, 3, 3)
    jr = F.jacrev(lambda x: {"a": x * 2, "b": x.sum()})(T([1.0, 2.0]))
    assert_close(jr["a"], 2 * np.eye(2))
    assert_close(jr["b"], [1.0, 1.0])


def test_jacrev_has_aux_chunk_and_numpy():
    x = np.array([0.2, 0.4, 0.6])
    j, aux = F.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True, chunk_size=2)(x)
    assert type(j) is np.ndarray and type(aux) is np.ndarray
    np.testing.assert_allclose(j, np.diag(np.exp(x)), rtol=1e-12)
    jf, aux = F.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(x)
    np.testing.assert_allclose(jf, j, rtol=1e-12)
    np.testing.assert_allclose(aux, 1.2)


def test_hessian_of_scalar_function_of_matrix():
    X = RNG.standard_normal((2, 3))

    def f(x):
        return (jg.softmax(x, 1) * x.tanh()).sum() + (x @ x.T).sum() * 0.1

    H = F.hessian(f)(T(X))
    assert H.shape == (2, 3, 2, 3)
    h = H._data.reshape(6, 6)
    np.testing.assert_allclose(h, h.T, rtol=1e-10, atol=1e-12)  # symmetric
    gfun = lambda a: F.grad(f)(T(a))._data  # noqa: E731
    ref = fd_jac(gfun, X)  # finite differences of the gradient
    assert_close(H, ref, rtol=1e-6, atol=1e-8)
    assert_close(F.jacrev(F.jacrev(f))(T(X)), H, rtol=1e-10, atol=1e-12)
    assert_close(F.jacfwd(F.jacfwd(f))(T(X)), H, rtol=1e-10, atol=1e-12)


def test_hessian_vector_function_and_argnums():
    f = lambda x, y: (x * y.exp()).sin()  # noqa: E731
    x, y = T([0.3, 0.6]), T([0.1, -0.2])
    Hxy = F.hessian(f, argnums=(0, 1))(x, y)
    assert Hxy[0][1].shape == (2, 2, 2)
    ref = fd_jac(lambda b: F.jacrev(f, argnums=0)(x, T(b))._data, y._data)
    assert_close(Hxy[0][1], ref, rtol=1e-6, atol=1e-8)
