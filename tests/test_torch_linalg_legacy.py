"""torch's older linear-algebra spellings (jitgrad/_torch_linalg.py) on the top level and on
Tensor: values against NumPy and the identities they solve, gradients against finite
differences (order 2)."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(7)
A = rng.standard_normal((3, 3))
SPD = A @ A.T + 3 * np.eye(3)
B = rng.standard_normal((3, 2))


def t(a, grad=False):
    return jg.tensor(a.copy(), requires_grad=grad)


def test_values_against_numpy():
    a = t(A)
    assert abs(jg.det(a).item() - np.linalg.det(A)) < 1e-14 and abs(a.det().item() - np.linalg.det(A)) < 1e-14
    np.testing.assert_allclose(jg.inverse(a).numpy(), np.linalg.inv(A), rtol=1e-12)
    sign, logabs = jg.slogdet(a)
    assert sign.item() * np.exp(logabs.item()) == pytest.approx(np.linalg.det(A), rel=1e-12)
    np.testing.assert_allclose(a.pinverse().numpy(), np.linalg.pinv(A), rtol=1e-10)
    np.testing.assert_allclose(jg.matrix_power(a, 3).numpy(), A @ A @ A, rtol=1e-12)
    U, S, V = jg.svd(a)
    np.testing.assert_allclose((U @ jg.diag(S) @ V.mT).numpy(), A, atol=1e-13)
    assert jg.svd(a, compute_uv=False).U.abs().sum().item() == 0.0
    Q, R = jg.qr(t(rng.standard_normal((4, 3))))
    assert Q.shape == (4, 3) and R.shape == (3, 3)
    with pytest.raises(NotImplementedError, match="complete"):  # Q's extra columns: not unique
        jg.qr(t(rng.standard_normal((4, 3))), some=False)
    L = jg.cholesky(t(SPD))
    np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(SPD), rtol=1e-12)
    np.testing.assert_allclose(jg.cholesky(t(SPD), upper=True).numpy(), np.linalg.cholesky(SPD).T)


def test_solves():
    L = jg.cholesky(t(SPD))
    np.testing.assert_allclose(jg.cholesky_solve(t(B), L).numpy(), np.linalg.solve(SPD, B), rtol=1e-12)
    np.testing.assert_allclose(jg.cholesky_solve(t(B), L.mT, upper=True).numpy(),
                               np.linalg.solve(SPD, B), rtol=1e-12)
    np.testing.assert_allclose(L.cholesky_inverse().numpy(), np.linalg.inv(SPD), rtol=1e-12)
    U = np.triu(A) + 3 * np.eye(3)
    for transpose in (False, True):
        x, copy = jg.triangular_solve(t(B), t(U), transpose=transpose)
        np.testing.assert_allclose(x.numpy(), np.linalg.solve(U.T if transpose else U, B), rtol=1e-12)
        np.testing.assert_allclose(copy.numpy(), U)
    LU, piv = t(A).lu()
    P, Lo, Up = jg.lu_unpack(LU, piv)
    np.testing.assert_allclose((P @ Lo @ Up).numpy(), A, atol=1e-14)
    np.testing.assert_allclose(jg.lu_solve(t(B), LU, piv).numpy(), np.linalg.solve(A, B), rtol=1e-12)
    np.testing.assert_allclose(t(B).lu_solve(LU, piv).numpy(), np.linalg.solve(A, B), rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda a, b: jg.cholesky_solve(b, jg.cholesky(a @ a.mT + 3 * jg.eye(3))),
    lambda a, b: jg.triangular_solve(b, a.triu() + 3 * jg.eye(3), transpose=True).solution,
    lambda a, b: (jg.svd(a).U[:, 0] ** 2).sum() * b.sum(),
    lambda a, b: jg.lu_unpack(*a.lu())[2].sum() + b.sum(),
    lambda a, b: jg.inverse(a + 3 * jg.eye(3)) @ b,
])
def test_gradients(fn):
    args = [t(A, True), t(B, True)]
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


def test_two_norm_gradient_at_zero_is_zero_as_pytorch():
    """torch: d||x||/dx at x = 0 is 0 (jitgrad.numpy keeps NumPy's 0/0 = nan)."""
    x = jg.zeros(3, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    y = jg.tensor([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
    n = jg.linalg.vector_norm(y, dim=1, keepdim=True)
    assert n.grad_fn.name() == "SqrtBackward0"
    (g,) = jg.autograd.grad(n.sum(), y)
    np.testing.assert_allclose(g.numpy(), [[1 / 5 ** 0.5, 2 / 5 ** 0.5, 0.0], [0.0, 0.0, 0.0]])
    z = t(A, True)
    assert gradcheck(lambda a: a.norm(dim=0), [z]) and gradgradcheck(lambda a: a.norm(), [z])
