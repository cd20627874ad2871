"""Fixes for NumPy / HIPS-autograd users: ``jitgrad.numpy.full`` with a fill value that requires
grad, complex ``matmul``/``dot``/``@`` with PyTorch's conjugate-Wirtinger gradients (values
pinned from PyTorch 2.13), and ``jitgrad.scipy.integrate.odeint`` with pytrees of parameters in
``args``."""
import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.autograd import gradcheck, gradgradcheck
from jitgrad.scipy.integrate import odeint

RNG5 = np.random.default_rng(5)
A = RNG5.standard_normal((2, 3)) + 1j * RNG5.standard_normal((2, 3))
B = RNG5.standard_normal((3, 2)) + 1j * RNG5.standard_normal((3, 2))
R = RNG5.standard_normal((3, 2))
# PyTorch 2.13: d/dA, d/dB of sum |A @ B|^2; of sum(Re(A R) * Im(A R)) for real R; of |dot(v, w)|
GA = np.array([[(5.095189060961948-3.8562864227360487j), (-9.922727624187319+0.17280249505587725j),
                (-3.903568537879629+3.281851786445987j)],
               [(-7.364971108570689+17.115782993357122j), (13.506259833279621-11.60959824116404j),
                (-0.9918010080384358-10.391672171117545j)]])
GB = np.array([[(-8.74458154273658-8.46398984228159j), (9.20428321319639+11.278033861682129j)],
               [(-1.050586676555529-11.411685468442872j), (-5.386920055891602+14.32077970271245j)],
               [(9.17647058161204+1.4596166372851402j), (-11.871758423869952-5.403325138583168j)]])
GA2 = np.array([[(-0.18633292779182747+0.6221487661500511j), (-0.4407559038140843-3.3630924710666514j),
                 (-0.25539382706351005-2.001860728816278j)],
                [(1.8311454994709906-0.7063863379611867j), (-2.7364468876607546+2.950767206033619j),
                 (-1.6632961243405042+1.7605992921936258j)]])
GR = np.array([[-3.763241368636211, 1.1595652724264514], [-0.942037212330757, 2.4486220389387197],
               [3.863368052823983, 0.001955053036913304]])
GV = np.array([(-0.4376506662617756-1.0595931311582372j), (-0.7387523363904805+0.06497873724299924j),
               (-0.046202875510086124-0.09407543165153492j)])
GW = np.array([(-0.3918088747165078-0.8916270954823473j), (-0.5214482976478084-1.4484124510358518j),
               (0.7821124513864673-0.10297493825669828j)])


# --- full -----------------------------------------------------------------------------------
def test_full_differentiates_a_tensor_fill_value():
    g = jitgrad.tensor(2.0, requires_grad=True)
    y = jnp.full((2, 3), g)
    np.testing.assert_array_equal(y.numpy(), np.full((2, 3), 2.0))
    (y * jitgrad.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    assert g.grad.item() == 15.0
    v = np.array([1.0, -2.0, 0.5])
    assert gradcheck(lambda a: jnp.full((2, 3), a) ** 3, (jitgrad.tensor(v, requires_grad=True),))
    assert gradgradcheck(lambda a: jnp.full((4, 3), a) ** 3,
                         (jitgrad.tensor(v, requires_grad=True),))
    assert gradcheck(lambda a: jnp.full_like(np.zeros((2, 2)), a) ** 2,
                     (jitgrad.tensor(0.7, requires_grad=True),))


def test_full_dtypes_shapes_and_constants():
    v = jitgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = jnp.full((2, 3), v, dtype="float32")
    assert z.dtype == jitgrad.float32 and z.requires_grad
    np.testing.assert_array_equal(z.numpy(), np.full((2, 3), [1.0, 2.0, 3.0], np.float32))
    assert jnp.full_like(jitgrad.zeros(2, 2, dtype=jitgrad.float32), v[0]).dtype == \
        jitgrad.float32
    np.testing.assert_array_equal(jnp.full(3, 1.5).numpy(), np.full(3, 1.5))
    assert not jnp.full((2,), 1.0).requires_grad
    with pytest.raises(ValueError, match="could not broadcast"):
        jnp.full((2, 2), v)


# --- complex matrix products -----------------------------------------------------------------
def test_complex_matmul_gradients_match_torch():
    a, b = jitgrad.tensor(A, requires_grad=True), jitgrad.tensor(B, requires_grad=True)
    np.testing.assert_allclose((a @ b).detach().numpy(), A @ B, rtol=1e-12)
    ((a @ b).abs() ** 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), GA, rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), GB, rtol=1e-10)


def test_complex_times_real_matmul_gives_the_real_input_a_real_gradient():
    a, r = jitgrad.tensor(A, requires_grad=True), jitgrad.tensor(R, requires_grad=True)
    c = jnp.matmul(a, r)
    (c.real * c.imag).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), GA2, rtol=1e-10)
    assert r.grad.dtype == jitgrad.float64
    np.testing.assert_allclose(r.grad.numpy(), GR, rtol=1e-10)


def test_complex_dot_and_finite_differences():
    v = jitgrad.tensor(A[0], requires_grad=True)
    w = jitgrad.tensor(B[:, 0], requires_grad=True)
    jnp.dot(v, w).abs().backward()
    np.testing.assert_allclose(v.grad.numpy(), GV, rtol=1e-10)
    np.testing.assert_allclose(w.grad.numpy(), GW, rtol=1e-10)
    a, b = jitgrad.tensor(A, requires_grad=True), jitgrad.tensor(B, requires_grad=True)
    assert gradcheck(lambda x, y: x @ y, (a, b))
    assert gradgradcheck(lambda x, y: jnp.matmul(x, y), (a, b))
    batch = jitgrad.tensor(np.stack([A, A * 1j]), requires_grad=True)
    assert gradcheck(lambda x, y: x @ y, (batch, b))


def test_complex_einsum_and_tensordot_gradients():
    a, b = jitgrad.tensor(A, requires_grad=True), jitgrad.tensor(B, requires_grad=True)
    out = jnp.einsum("ij,jk->ik", a, b)
    np.testing.assert_allclose(out.detach().numpy(), A @ B, rtol=1e-12)
    (out.abs() ** 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), GA, rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), GB, rtol=1e-10)
    r = jitgrad.tensor(R, requires_grad=True)
    assert gradcheck(lambda x, y: jnp.tensordot(x, y, 1), (jitgrad.tensor(A, requires_grad=True), r))
    assert gradgradcheck(lambda x, y: jnp.einsum("ij,jk->i", x, y),
                         (jitgrad.tensor(A, requires_grad=True), jitgrad.tensor(B, requires_grad=True)))


# --- odeint with pytrees of parameters ------------------------------------------------------
def _mlp(y, t, layers):
    h = y
    for W, b in layers:
        h = jnp.tanh(W @ h + b)
    return h


def _layers(arrays, grad):
    return [(jitgrad.tensor(W, requires_grad=grad), jitgrad.tensor(b, requires_grad=grad))
            for W, b in arrays]


def test_odeint_differentiates_a_list_of_layer_pairs():
    rng = np.random.default_rng(0)
    arrays = [(rng.standard_normal((2, 2)) * 0.5, rng.standard_normal(2) * 0.1)
              for _ in range(2)]
    y0, t = jitgrad.tensor([1.0, -0.5]), jitgrad.tensor([0.0, 0.5, 1.0])
    layers = _layers(arrays, True)
    ys = odeint(_mlp, y0, t, (layers,), rtol=1e-10, atol=1e-12)
    (ys ** 2).sum().backward()

    def loss(arrs):
        out = odeint(_mlp, y0, t, (_layers(arrs, False),), rtol=1e-11, atol=1e-12)
        return float((out.numpy() ** 2).sum())
    eps = 1e-6
    for k in range(2):
        for which in (0, 1):
            grad = layers[k][which].grad.numpy()
            numeric = np.zeros_like(grad)
            for idx in np.ndindex(grad.shape):
                plus = [[a.copy() for a in pair] for pair in arrays]
                minus = [[a.copy() for a in pair] for pair in arrays]
                plus[k][which][idx] += eps
                minus[k][which][idx] -= eps
                numeric[idx] = (loss(plus) - loss(minus)) / (2 * eps)
            np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


def test_odeint_dict_args_and_constants():
    k = jitgrad.tensor(0.7, requires_grad=True)

    def decay(y, t, p, scale):
        return -p["k"] * y * scale
    ys = odeint(decay, jitgrad.tensor([1.0]), jitgrad.tensor([0.0, 1.0]), ({"k": k}, 2.0),
                rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(ys.detach().numpy()[:, 0], [1.0, np.exp(-1.4)], rtol=1e-8)
    ys[-1, 0].backward()
    np.testing.assert_allclose(k.grad.item(), -2.0 * np.exp(-1.4), rtol=1e-6)
    with pytest.raises(ValueError, match="closure"):
        odeint(lambda y, t: -k * y, jitgrad.tensor([1.0]), jitgrad.tensor([0.0, 1.0]))
