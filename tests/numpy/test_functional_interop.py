"""Tensors inside ordinary Python and plotting code (what HIPS-style programs do with the values
jitgrad.numpy returns): format specs on 0-d tensors, ``== None`` / ``!= None`` as PyTorch (a
bool), ``float()`` of a many-element tensor raising PyTorch's ValueError, matplotlib taking
1-d and 2-d tensors."""
import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp


def test_format_spec_on_0d_tensors_as_pytorch():
    loss = jnp.sum(jnp.array([1.25, 2.0]))
    assert f"{loss:10.4f}" == f"{3.25:10.4f}"
    assert f"{loss:.2e}" == "3.25e+00"
    assert f"{loss}" == "3.25"  # PyTorch: a 0-d tensor formats as its item
    assert f"{jnp.array(7):4d}" == "   7"
    assert format(jitgrad.tensor(True)) == "True"
    assert f"{jnp.ones(2)}" == str(jnp.ones(2))  # other shapes: str, as before
    with pytest.raises(TypeError):
        f"{jnp.ones(2):.3f}"


def test_comparison_with_none_is_a_bool():
    t = jnp.ones(3)
    assert (t == None) is False  # noqa: E711  (the point of the test)
    assert (t != None) is True  # noqa: E711
    assert t is not None
    assert (t == jnp.ones(3)).dtype == jitgrad.bool  # elementwise otherwise


def test_float_of_many_elements_raises_value_error():
    with pytest.raises(ValueError, match="only one element tensors can be converted"):
        float(jnp.ones(3))
    with pytest.raises(ValueError, match="only one element tensors can be converted"):
        int(jnp.ones(2))
    assert float(jnp.ones(1) * 2) == 2.0


def test_matplotlib_takes_tensors():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = jnp.linspace(-2, 2, 9)
    X, Y = jnp.meshgrid(x, x)
    Z = jnp.exp(-X ** 2 - Y ** 2)
    fig, ax = plt.subplots()
    try:
        (line,) = ax.plot(x, jnp.sin(x))
        np.testing.assert_allclose(line.get_ydata(), np.sin(np.linspace(-2, 2, 9)))
        ax.contour(X, Y, Z)  # was: RuntimeError from float() of a row in unit conversion
        ax.contourf(X, Y, Z)
        ax.scatter(x, x, c=x)
        ax.imshow(Z)
        ax.set_xlim(jnp.min(x), jnp.max(x))
        ax.plot(x, x, alpha=float(jnp.array(0.5)))
        fig.canvas.draw()
    finally:
        plt.close(fig)


def test_tensor_reductions_take_numpy_keyword_names():
    a = np.arange(6.0).reshape(2, 3)
    t = jitgrad.tensor(a, requires_grad=True)
    assert t.sum(keepdims=True).shape == (1, 1)
    np.testing.assert_allclose(t.sum(axis=0, keepdims=True).detach().numpy(),
                               a.sum(axis=0, keepdims=True))
    np.testing.assert_allclose(t.mean(axis=1).detach().numpy(), a.mean(axis=1))
    np.testing.assert_allclose(t.prod(axis=1, keepdims=True).detach().numpy(),
                               a.prod(axis=1, keepdims=True))
    np.testing.assert_allclose(t.std(axis=0).detach().numpy(), a.std(axis=0, ddof=1))
    np.testing.assert_array_equal(t.argmax(axis=1).numpy(), a.argmax(axis=1))
    np.testing.assert_allclose(t.max(axis=0).values.detach().numpy(), a.max(axis=0))
    t.sum(axis=1, keepdims=True).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.ones((2, 3)))
    assert t.sum.__name__ == "sum" and "Sum over" in t.sum.__doc__
