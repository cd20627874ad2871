"""Container parameters in jitgrad.numpy.functional: the gradient w.r.t. a nested list / tuple /
dict of arrays has the same structure (HIPS examples keep network weights as lists of (W, b)
tuples), checked against float64 finite differences through flatten/unflatten."""
from collections import namedtuple

import numpy as np
import pytest

import jitgrad.numpy as jnp
from jitgrad.numpy import functional as F


def fd_tree(loss, params, h=1e-6):
    """Finite-difference gradient of loss(params) in params' structure (via flatten)."""
    flat, unflatten = F.flatten(params)
    flat = np.asarray(flat, dtype=np.float64)
    g = np.zeros_like(flat)
    for i in range(flat.size):
        e = np.zeros_like(flat)
        e[i] = h
        g[i] = (float(loss(unflatten(flat + e))) - float(loss(unflatten(flat - e)))) / (2 * h)
    return unflatten(g)


def assert_same_tree(got, ref, rtol=1e-6, atol=1e-8):
    """Same containers; leaves NumPy (a 0-d leaf may be a NumPy scalar) and close."""
    if isinstance(ref, (list, tuple, dict)):
        assert type(got) is type(ref), (type(got), type(ref))
    if isinstance(ref, dict):
        assert sorted(got) == sorted(ref)
        for k in ref:
            assert_same_tree(got[k], ref[k], rtol, atol)
    elif isinstance(ref, (list, tuple)):
        assert len(got) == len(ref)
        for a, b in zip(got, ref):
            assert_same_tree(a, b, rtol, atol)
    else:
        assert isinstance(got, (np.ndarray, np.floating)), type(got)
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


def mlp(params, x):
    for W, b in params:
        x = jnp.tanh(x @ W + b)
    return x


RNG = np.random.default_rng(0)
LAYERS = [(RNG.normal(size=(3, 4)), RNG.normal(size=4)),
          (RNG.normal(size=(4, 2)), RNG.normal(size=2))]
X = RNG.normal(size=(5, 3))


def test_list_of_weight_tuples():
    loss = lambda p: jnp.sum(mlp(p, X) ** 2)  # noqa: E731
    g = F.grad(loss)(LAYERS)
    assert isinstance(g, list) and all(isinstance(layer, tuple) for layer in g)
    assert [tuple(a.shape for a in layer) for layer in g] == [((3, 4), (4,)), ((4, 2), (2,))]
    ref = fd_tree(lambda p: np.sum(np.asarray(mlp(p, X)) ** 2),
                  [(np.asarray(W), np.asarray(b)) for W, b in LAYERS])
    for (gW, gb), (rW, rb) in zip(g, ref):
        np.testing.assert_allclose(gW, rW, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gb, rb, rtol=1e-6, atol=1e-8)


def test_nested_dict_list_tuple_and_scalar_leaves():
    params = {"net": [(np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([0.1, -0.1]))],
              "scale": 1.7,
              "extra": {"w": np.array([1.0, 2.0, 3.0]), "pair": (0.4, np.array(2.0))}}

    def loss(p):
        (W, b), = p["net"]
        y = jnp.sum(jnp.sin(np.array([1.0, -1.0]) @ W + b))
        e = p["extra"]
        return (y * p["scale"] + jnp.sum(e["w"] ** 2) * e["pair"][0]
                + jnp.exp(e["pair"][1]) * p["scale"] ** 2)

    g = F.grad(loss)(params)
    assert list(g) == ["net", "scale", "extra"]  # insertion order kept
    assert list(g["extra"]) == ["w", "pair"]
    assert_same_tree(g, fd_tree(loss, params))  # flatten/unflatten use sorted keys, as HIPS


def test_namedtuple_value_and_grad_and_second_order_in_containers():
    Params = namedtuple("Params", "a b")
    p = Params(np.array([0.3, -0.5]), 2.0)
    loss = lambda q: jnp.sum(q.a ** 3) * q.b  # noqa: E731
    v, g = F.value_and_grad(loss)(p)
    assert isinstance(g, Params)
    assert v == pytest.approx(np.sum(p.a ** 3) * 2.0)
    np.testing.assert_allclose(g.a, 3 * p.a ** 2 * 2.0)
    assert g.b == pytest.approx(np.sum(p.a ** 3))
    # grad of a function of the container gradient: d/db sum(dL/da) = sum(3 a^2)
    assert F.grad(lambda b: jnp.sum(F.grad(loss)(Params(p.a, b)).a))(2.0) == pytest.approx(
        np.sum(3 * p.a ** 2))


def test_grad_and_aux_elementwise_grad_make_vjp_with_containers():
    p = [np.array([1.0, 2.0]), (np.array(0.5),)]
    g, aux = F.grad_and_aux(lambda q: (jnp.sum(q[0] * q[1][0]), {"y": q[0] * 2}))(p)
    np.testing.assert_allclose(g[0], [0.5, 0.5])
    assert g[1][0] == pytest.approx(3.0)
    assert type(aux["y"]) is np.ndarray  # aux's Tensors come back as NumPy
    eg = F.elementwise_grad(lambda q: q[0] * q[1][0])(p)
    np.testing.assert_allclose(eg[0], [0.5, 0.5])
    vjp, ans = F.make_vjp(lambda q: {"s": q[0] ** 2, "t": q[1][0] * 3})(p)
    out = vjp({"s": np.array([1.0, 1.0]), "t": np.array(2.0)})
    np.testing.assert_allclose(out[0], 2 * p[0])
    assert out[1][0] == pytest.approx(6.0)


def test_unused_leaves_get_zero_gradients_and_int_leaves_are_floats():
    g = F.grad(lambda q: jnp.sum(q["x"] ** 2))({"x": np.array([1, 2]), "unused": np.ones(3)})
    np.testing.assert_allclose(g["x"], [2.0, 4.0])
    np.testing.assert_array_equal(g["unused"], np.zeros(3))


def test_jacobian_refuses_a_dict():
    with pytest.raises(TypeError, match="jacobian: the argument must be a scalar or an array"):
        F.jacobian(lambda q: q["a"])({"a": np.ones(2)})
