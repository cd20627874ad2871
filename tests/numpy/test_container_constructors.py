"""Constructors from containers holding Tensors: every Tensor slot, at any nesting depth, gets
its gradient (``jitgrad.numpy``), or the constructor refuses (``jitgrad.tensor`` copies values
like ``torch.tensor``, so a Tensor that requires grad in its data raises). Never a tensor
silently cut from the graph."""
import numpy
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.numpy.functional import grad

# each case: f(x) building a container from the 0-d tensor x (and its n-d slices), and the same
# container built from plain floats by NumPy (the value reference)
CASES = {
    "depth1": lambda x, lib: [x, x * 1.0, x + 2.5],
    "depth2_issue": lambda x, lib: [[x, x * 1.0, x + 2.5], [x ** 2, x, x / 2.0]],
    "depth2_mixed_floats": lambda x, lib: [[1.0, x], [x * x, 2]],
    "depth3": lambda x, lib: [[[x, 1.0], [2.0, x ** 3]], [[x, x], [-x, 0.5]]],
    "tuple_levels": lambda x, lib: ((x, 1.0), [numpy.float64(3.0), x * 2.0]),
    "numpy_array_elements": lambda x, lib: [numpy.array([1.0, 2.0]), [x, x * 3.0]],
    "fan_out": lambda x, lib: [[x] * 4, [x] * 4, [x] * 4],
}


def _build(case, x):
    return CASES[case](x, None)


def _finite_difference(f, x0, eps=1e-6):
    return (f(x0 + eps) - f(x0 - eps)) / (2 * eps)


def _numpy_value(case, x0):
    return numpy.array(_build(case, x0), dtype=float)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("constructor", ["array", "asarray", "stack0"])
def test_gradient_matches_finite_differences(case, constructor):
    make = {"array": jnp.array, "asarray": jnp.asarray,
            "stack0": lambda data: jnp.stack(list(data))}[constructor]
    weights = numpy.random.default_rng(0).standard_normal(_numpy_value(case, 1.3).shape)

    def value(x0):
        return float((_numpy_value(case, x0) * weights).sum())

    got = grad(lambda x: jnp.sum(make(_build(case, x)) * weights))(1.3)
    numpy.testing.assert_allclose(got, _finite_difference(value, 1.3), rtol=1e-7, atol=1e-8)


def test_issue_example():
    f = lambda x: jnp.sum(jnp.array([[x, x * 1.0, x + 2.5], [x ** 2, x, x / 2.0]]))  # noqa: E731
    assert grad(f)(3.0) == pytest.approx(10.5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_value_and_dtype_as_numpy(case):
    x = jnp.array(1.3)
    got = jnp.array(_build(case, x))
    expected = numpy.array(_build(case, numpy.float64(1.3)))
    assert got.shape == expected.shape and got.dtype.np == expected.dtype
    numpy.testing.assert_allclose(got.numpy(), expected, rtol=1e-15)  # (x**3: libm vs NumPy)


def test_dtype_promotion_follows_numpy():
    x32 = jnp.array(numpy.float32(2.0))
    assert jnp.array([x32, x32]).dtype.np == numpy.float32
    assert jnp.array([x32, 1.0]).dtype.np == numpy.array([numpy.float32(2), 1.0]).dtype
    f32 = numpy.float32(2.0)
    assert jnp.array([[x32, 1], [True, x32]]).dtype.np == numpy.array([[f32, 1], [True, f32]]).dtype
    assert jnp.array([[x32, True]]).dtype.np == numpy.float32
    xi = jnp.array(3)
    assert jnp.array([[xi, 1], [2, xi]]).dtype.np == numpy.int64
    assert jnp.array([[xi, 1.5]]).dtype.np == numpy.float64
    assert jnp.array([x32, x32], dtype=numpy.float64).dtype.np == numpy.float64


def test_nd_tensor_elements():
    rng = numpy.random.default_rng(1)
    a0, b0 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    a = jitgrad.tensor(a0, requires_grad=True)
    b = jitgrad.tensor(b0, requires_grad=True)
    out = jnp.array([[a, b], [b * 2.0, a0], [a * b, numpy.ones((2, 3))]])
    assert out.shape == (3, 2, 2, 3)
    weights = rng.standard_normal(out.shape)
    jnp.sum(out * weights).backward()
    numpy.testing.assert_allclose(a.grad.numpy(), weights[0, 0] + weights[2, 0] * b0)
    numpy.testing.assert_allclose(b.grad.numpy(), weights[0, 1] + 2 * weights[1, 0]
                                  + weights[2, 0] * a0)


def test_zero_d_and_nd_mixed_at_one_level_is_ragged():
    a = jitgrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="inhomogeneous"):
        jnp.array([a, 3.0])
    with pytest.raises(ValueError, match="inhomogeneous"):
        jnp.array([[a[0], a[1]], [a[0]]])
    with pytest.raises(ValueError):  # NumPy rejects the same ragged shape
        numpy.array([[1.0, 2.0], [1.0]])


def test_second_derivative_through_nested_container():
    x = jitgrad.tensor(0.7, dtype=jitgrad.float64, requires_grad=True)
    y = jnp.sum(jnp.array([[x ** 3, 1.0], [x, [x * x, 2.0][0]]]))  # x^3 + x + x^2 + 1
    (dx,) = jitgrad.autograd.grad(y, x, create_graph=True)
    (ddx,) = jitgrad.autograd.grad(dx, x)
    assert float(dx) == pytest.approx(3 * 0.7 ** 2 + 1 + 2 * 0.7)
    assert float(ddx) == pytest.approx(6 * 0.7 + 2)


def test_object_array_of_tensors_differentiates():
    x = jitgrad.tensor(2.0, dtype=jitgrad.float64, requires_grad=True)
    holder = numpy.empty(3, dtype=object)
    holder[:] = [x, x * x, 1.0]
    jnp.sum(jnp.array(holder)).backward()
    assert float(x.grad) == pytest.approx(5.0)


def test_other_numpy_entry_points_differentiate_nested_lists():
    x = jitgrad.tensor(1.5, dtype=jitgrad.float64, requires_grad=True)
    total = (jnp.sum(jnp.concatenate([[x, 1.0], [x * 2.0]]))
             + jnp.sum(jnp.vstack([[x, x], [1.0, x]])) + jnp.sum([[x, 2.0], [x, x]]))
    total.backward()
    assert float(x.grad) == pytest.approx(3.0 + 3.0 + 3.0)


def test_numpy_creators_refuse_tensor_values_that_require_grad():
    x = jitgrad.tensor(2.0, requires_grad=True)
    (g,) = jitgrad.autograd.grad(jnp.full(3, x).sum(), x)  # full differentiates its fill value
    assert g.item() == 3.0
    with pytest.raises(RuntimeError, match="cut it from the graph"):
        jnp.linspace(0.0, x, 5)
    assert jnp.zeros_like(x).shape == ()  # only the shape of a *_like argument is read
    with jitgrad.no_grad():
        assert jnp.full(2, x).numpy().tolist() == [2.0, 2.0]


@pytest.mark.parametrize("make", [jitgrad.tensor, jitgrad.as_tensor, jitgrad.Tensor],
                         ids=["tensor", "as_tensor", "Tensor"])
def test_torch_style_constructors_refuse_to_cut_the_graph(make):
    x = jitgrad.tensor(2.0, requires_grad=True)
    for data in ([x, 1.0], [[1.0, x]], [[[x]]], ((x,),)):
        with pytest.raises(RuntimeError, match="cut it from the graph"):
            make(data)
    with jitgrad.no_grad():  # no graph is being recorded: copying the values is what is asked
        assert make([[x, 1.0]]).numpy().tolist() == [[2.0, 1.0]]
    plain = jitgrad.tensor([1.0, 2.0])  # tensors that record nothing are copied by value
    assert make([plain, plain]).numpy().tolist() == [[1.0, 2.0], [1.0, 2.0]]
