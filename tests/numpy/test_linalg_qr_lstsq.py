"""jitgrad.numpy.linalg.qr and lstsq: forward against NumPy, gradients against central
differences (float64) and against closed forms."""
import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.autograd import gradgradcheck
from jitgrad.testing import checks


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (2, 4), (2, 4, 3), (2, 2, 5), (1, 1)])
def test_qr_forward_and_gradient(shape):
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    q, r = jnp.linalg.qr(_leaf(a))
    nq, nr = np.linalg.qr(a)
    checks.assert_close(q, nq, rtol=1e-12, atol=1e-12)
    checks.assert_close(r, nr, rtol=1e-12, atol=1e-12)
    k = min(shape[-2:])
    checks.assert_close(np.swapaxes(q.numpy(), -1, -2) @ q.numpy(), np.broadcast_to(np.eye(k), shape[:-2] + (k, k)),
                        atol=1e-12)
    checks.gradcheck(lambda x: tuple(jnp.linalg.qr(x)), (_leaf(a),))


@pytest.mark.parametrize("shape", [(4, 3), (2, 3)])
def test_qr_double_backward(shape):
    a = np.random.default_rng(1).standard_normal(shape)
    assert gradgradcheck(lambda x: tuple(jnp.linalg.qr(x)), (_leaf(a),))


def test_qr_gradient_closed_form_logabsdet():
    """sum log|R_ii| = log|det A| for square A, whose gradient is A^-T."""
    a = np.random.default_rng(2).standard_normal((4, 4))
    x = _leaf(a)
    r = jnp.linalg.qr(x).R
    jnp.sum(jnp.log(jnp.abs(jnp.diagonal(r)))).backward()
    checks.assert_close(x.grad, np.linalg.inv(a).T, rtol=1e-10)


def test_qr_gradient_closed_form_projection():
    """f(A) = sum(Q Q^T b b^T) = |Q^T b|^2 (tall A): the projection of b onto range(A);
    df/dA = 2 (I - Q Q^T) b b^T Q R^-T."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((5, 2)), rng.standard_normal(5)
    x = _leaf(a)
    q = jnp.linalg.qr(x).Q
    jnp.sum(jnp.matmul(jnp.matrix_transpose(q), b) ** 2).backward()
    nq, nr = np.linalg.qr(a)
    expected = 2 * (np.eye(5) - nq @ nq.T) @ np.outer(b, b) @ nq @ np.linalg.inv(nr).T
    checks.assert_close(x.grad, expected, rtol=1e-10)


def test_qr_modes():
    a = np.random.default_rng(3).standard_normal((4, 2))
    checks.assert_close(jnp.linalg.qr(_leaf(a), mode="r"), np.linalg.qr(a, mode="r"))
    checks.gradcheck(lambda x: jnp.linalg.qr(x, mode="r"), (_leaf(a),))
    w = a.T.copy()
    for got, exp in zip(jnp.linalg.qr(_leaf(w), mode="complete"), np.linalg.qr(w, mode="complete")):
        checks.assert_close(got, exp)
    with pytest.raises(NotImplementedError, match=r"complete.*\(4, 2\)"):
        jnp.linalg.qr(_leaf(a), mode="complete")
    with pytest.raises(NotImplementedError, match="raw"):
        jnp.linalg.qr(_leaf(a), mode="raw")


def test_qr_through_numpy_protocol():
    a = np.random.default_rng(4).standard_normal((3, 2))
    x = _leaf(a)
    q, r = np.linalg.qr(x)
    assert isinstance(q, jitgrad.Tensor) and q.grad_fn is not None
    (q.sum() + r.sum()).backward()
    y = _leaf(a)
    q2, r2 = jnp.linalg.qr(y)
    (q2.sum() + r2.sum()).backward()
    checks.assert_close(x.grad, y.grad.numpy(), rtol=0, atol=0)


LSTSQ = [
    ("tall-vec", (6, 3), (6,)),
    ("tall-mat", (6, 3), (6, 2)),
    ("square", (3, 3), (3,)),
    ("wide", (2, 4), (2,)),
]


@pytest.mark.parametrize("name,sa,sb", LSTSQ, ids=[c[0] for c in LSTSQ])
def test_lstsq_matches_numpy_and_gradchecks(name, sa, sb):
    rng = np.random.default_rng(len(name))
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    got = jnp.linalg.lstsq(_leaf(a), _leaf(b))
    exp = np.linalg.lstsq(a, b)
    assert got[2] == exp[2]
    for i in (0, 1, 3):
        assert got[i].shape == exp[i].shape
        checks.assert_close(got[i], exp[i], rtol=1e-9, atol=1e-12)

    def f(x, y):
        sol, res, _, s = jnp.linalg.lstsq(x, y)
        return (sol, res, s) if res.shape[0] else (sol, s)

    checks.gradcheck(f, (_leaf(a), _leaf(b)))


def test_lstsq_rank_deficient_forward():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((5, 2))
    a = np.c_[a, a[:, :1] * 2.0]  # rank 2
    b = rng.standard_normal(5)
    got, exp = jnp.linalg.lstsq(a, b), np.linalg.lstsq(a, b)
    assert got[2] == exp[2] == 2 and got[1].shape == exp[1].shape == (0,)
    checks.assert_close(got[0], exp[0], rtol=1e-9)


def test_lstsq_gradient_closed_form():
    """Tall full rank: x = (A^T A)^-1 A^T b, so d(sum x)/db = A (A^T A)^-1 1, and the residual
    sum of squares |b - A x|^2 has gradient -2 r x^T in A and 2 r in b."""
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal(6)
    A, B = _leaf(a), _leaf(b)
    jnp.sum(jnp.linalg.lstsq(A, B)[0]).backward()
    checks.assert_close(B.grad, a @ np.linalg.solve(a.T @ a, np.ones(3)), rtol=1e-10)
    A, B = _leaf(a), _leaf(b)
    jnp.linalg.lstsq(A, B)[1].sum().backward()
    x = np.linalg.lstsq(a, b)[0]
    r = b - a @ x
    checks.assert_close(A.grad, -2 * np.outer(r, x), rtol=1e-8, atol=1e-10)
    checks.assert_close(B.grad, 2 * r, rtol=1e-8, atol=1e-10)
