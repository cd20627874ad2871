"""The torch.linalg functions added for issue 35: values against NumPy/SciPy (or PyTorch 2.13's,
pinned), gradients against finite differences (gradcheck and gradgradcheck), torch's named
tuples, out= and the check_errors/info conventions."""
import math
import warnings

import numpy as np
import pytest
import scipy.linalg as sla

import jitgrad
from jitgrad import linalg as L
from jitgrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def rand(*shape):
    return RNG.standard_normal(shape)


def t(x, grad=False):
    return jitgrad.tensor(np.asarray(x, dtype=np.float64), requires_grad=grad)


def check_grads(fn, *arrays, order2=True):
    inputs = tuple(t(a, True) for a in arrays)
    assert gradcheck(fn, inputs)
    if order2:
        assert gradgradcheck(fn, inputs)


# --- PyTorch 2.13's values (float64), pinned ----------------------------------------------------
HH = [[-0.19999999999999996, 0.5340280484367919, -0.3572070280239046],
      [1.068710206508729, 0.1243989783947188, 0.20624894829153034],
      [-0.07217232311692617, -0.5039677275007454, 0.12857740257400463],
      [0.7445698797839285, -0.527287819928936, -0.08298483052793695]]
M = [[0.10541424899789856, -0.9304680447082047, -0.02925182246327349],
     [0.6953031944582878, -1.344214547285082, -0.45761576104021817],
     [-1.901222739800844, -1.289537739784976, -1.8417350377917323]]
LU = [[-1.901222739800844, -1.289537739784976, -1.8417350377917323],
      [-0.36571369566678014, -1.8158161598036322, -1.1311634881500297],
      [-0.055445501882089236, 0.5517998650231384, 0.4928081141128241]]
PIV = [3, 2, 3]
COND = [8.991976634101798, 8.991976634101798, 0.11121025339495773, 10.601633856320738, 19.65304758650596,
        15.688199751919711, 1.2587164443087837, 17.341350193048275]
RANK = [2, 1, 2, 2]
VANDER = [[1.0, 2.0, 4.0, 8.0], [1.0, -1.0, 1.0, -1.0], [1.0, 0.5, 0.25, 0.125]]
EXPGRAD = [[3.4948098377228938, 0.39576301382028256, -1.9151441001511182],
           [0.05314935796832949, 0.4278517972728676, -0.43822390992592003],
           [-0.990511657711309, -0.4044167974861296, 0.8781093192342517]]
HH_A = np.random.default_rng(7).standard_normal((4, 3))
EIG_A = np.random.default_rng(21).standard_normal((4, 4))
S = [[0.7175468160078283, 1.4633600959873196, -2.009976595718633, -0.008194883103260775],
     [1.4633600959873196, -1.5999571687503065, 0.030927461161795455, -2.653778634273995],
     [-2.009976595718633, 0.030927461161795455, 1.1681274632859406, 2.192089198545835],
     [-0.008194883103260775, -2.653778634273995, 2.192089198545835, 1.93777073091332]]
LD = [[0.7175468160078283, 0.0, 0.0, 0.0], [-2.009976595718633, 1.1681274632859406, 0.0, 0.0],
      [-0.553296161338325, -0.9255709737256133, -0.7616600846424556, 0.0],
      [-1.373117673070493, -0.48611577532484196, 0.8263249057374793, 3.512198625433461]]
LDPIV = [-3, -3, 3, 4]
EIGW = [(-0.7346572252778476+1.2146690512250893j), (-0.7346572252778476-1.2146690512250893j),
        (1.2905291856420422+0.46118393573316513j), (1.2905291856420422-0.46118393573316513j)]
EIGG = [[-2.2610594385897222, 0.19933473551683528, -2.2797889955986395, 5.399323408989921],
        [-16.333728543575983, 6.683454026867414, -6.554812898821443, -3.60971957752987],
        [-11.114550301834178, 12.66619514709689, -1.6900520263356433, -10.004904581388827],
        [-6.03111037406784, 0.5846790747734564, -1.7208246389896802, -0.5088547204852703]]


# --- solve_triangular -------------------------------------------------------------------------
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_values_and_grads(upper, left, unit):
    a = rand(2, 3, 3) + 3 * np.eye(3)
    b = rand(2, 3, 2) if left else rand(2, 2, 3)
    x = L.solve_triangular(t(a), t(b), upper=upper, left=left, unitriangular=unit).numpy()
    for i in range(2):
        tri = np.triu(a[i]) if upper else np.tril(a[i])
        if unit:
            np.fill_diagonal(tri, 1.0)
        want = sla.solve_triangular(tri, b[i], lower=not upper) if left else \
            np.linalg.solve(tri.T, b[i].T).T
        np.testing.assert_allclose(x[i], want, rtol=1e-12, atol=1e-12)
    check_grads(lambda A, B: L.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit),
                a, b)


def test_solve_triangular_gradient_only_reaches_the_triangle():
    A = t(rand(3, 3) + 3 * np.eye(3), True)
    L.solve_triangular(A, t(rand(3, 2)), upper=True, unitriangular=True).sum().backward()
    g = A.grad.numpy()
    assert np.all(np.tril(g) == 0) and np.any(np.triu(g, 1) != 0)


def test_solve_triangular_errors():
    with pytest.raises(RuntimeError, match="at least 2"):
        L.solve_triangular(t(np.eye(3)), t(np.ones(3)), upper=True)
    with pytest.raises(TypeError):
        L.solve_triangular(t(np.eye(3)), t(np.ones((3, 1))))  # upper is required


# --- LU -----------------------------------------------------------------------------------------
def test_lu_factor_matches_torch_and_scipy():
    res = L.lu_factor(t(M))
    assert type(res).__name__ == "linalg_lu_factor" and res._fields == ("LU", "pivots")
    np.testing.assert_allclose(res.LU.numpy(), LU, rtol=1e-12)
    assert res.pivots.numpy().tolist() == PIV and res.pivots.dtype == jitgrad.int32
    lu_, piv = sla.lu_factor(np.asarray(M))
    np.testing.assert_allclose(res.LU.numpy(), lu_, rtol=1e-12)
    P, Lo, U = L.lu(t(M))
    np.testing.assert_allclose((P @ Lo @ U).numpy(), M, atol=1e-14)
    ex = L.lu_factor_ex(t(M))
    assert ex._fields == ("LU", "pivots", "info") and int(ex.info) == 0


def test_lu_factor_batched_grads():
    a = rand(2, 3, 3)
    check_grads(lambda A: L.lu_factor(A).LU, a)
    check_grads(lambda A: L.lu(A).L * 2 + L.lu(A).U, a[0])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(left, adjoint):
    a, b = rand(2, 3, 3), (rand(2, 3, 2) if left else rand(2, 2, 3))
    LU_, piv = L.lu_factor(t(a))
    x = L.lu_solve(LU_, piv, t(b), left=left, adjoint=adjoint).numpy()
    op = np.swapaxes(a, -1, -2) if adjoint else a
    want = np.linalg.solve(op, b) if left else np.swapaxes(
        np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    np.testing.assert_allclose(x, want, rtol=1e-10, atol=1e-12)
    check_grads(lambda A, B: L.lu_solve(*L.lu_factor(A), B, left=left, adjoint=adjoint), a, b)


def test_lu_singular():
    s = t([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(L.LinAlgError, match="U\\[2,2\\] is zero"):
        L.lu_factor(s)
    assert int(L.lu_factor_ex(s).info) == 2
    with pytest.raises(L.LinAlgError):
        L.lu_factor_ex(s, check_errors=True)
    with pytest.raises(RuntimeError, match="without pivoting"):
        L.lu_factor(t(M), pivot=False)


# --- the *_ex variants --------------------------------------------------------------------------
def test_ex_variants_info_and_values():
    a = rand(2, 3, 3) + 3 * np.eye(3)
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(3)
    inv, info = L.inv_ex(t(a))
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv(a), rtol=1e-12)
    assert info.numpy().tolist() == [0, 0]
    chol = L.cholesky_ex(t(spd), upper=True)
    assert chol._fields == ("L", "info")
    np.testing.assert_allclose(chol.L.numpy(), np.swapaxes(np.linalg.cholesky(spd), -1, -2),
                               rtol=1e-12)
    res = L.solve_ex(t(a), t(rand(2, 3, 1)))
    assert res._fields == ("result", "info")
    check_grads(lambda A: L.inv_ex(A).inverse, a)
    check_grads(lambda A: L.cholesky_ex(A + A.mT).L, spd[0])  # (A symmetric, as PyTorch)


def test_ex_variants_report_failures():
    sing = np.stack([np.eye(2), [[1.0, 2.0], [2.0, 4.0]]])
    inv, info = L.inv_ex(t(sing))
    assert info.numpy().tolist() == [0, 2]
    np.testing.assert_allclose(inv.numpy()[0], np.eye(2))
    assert np.isnan(inv.numpy()[1]).all()
    with pytest.raises(L.LinAlgError, match="Batch element 1"):
        L.inv_ex(t(sing), check_errors=True)
    assert L.cholesky_ex(t([[1.0, 2.0], [2.0, 1.0]])).info.item() == 2
    with pytest.raises(L.LinAlgError, match="order 2"):
        L.cholesky_ex(t([[1.0, 2.0], [2.0, 1.0]]), check_errors=True)
    assert L.solve_ex(t(sing), t(np.ones((2, 2, 1)))).info.numpy().tolist() == [0, 2]
    assert issubclass(L.LinAlgError, Exception)


# --- matrix functions ---------------------------------------------------------------------------
def test_matrix_exp_values_and_grads():
    a = rand(2, 3, 3)
    np.testing.assert_allclose(L.matrix_exp(t(a)).numpy(), np.stack([sla.expm(m) for m in a]),
                               rtol=1e-12)
    x = t(M, True)
    (L.matrix_exp(x) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), EXPGRAD, rtol=1e-10)
    check_grads(L.matrix_exp, a * 0.7)


@pytest.mark.parametrize("n", [0, 1, 2, 5, -1, -3])
def test_matrix_power(n):
    a = rand(2, 3, 3) + 2 * np.eye(3)
    np.testing.assert_allclose(L.matrix_power(t(a), n).numpy(), np.linalg.matrix_power(a, n),
                               rtol=1e-10, atol=1e-12)
    if n:
        check_grads(lambda A: L.matrix_power(A, n), a * 0.5 + np.eye(3))


def test_matrix_rank_and_cond():
    near = t([[1.0, 2.0], [2.0, 4.0 + 1e-9]])
    got = [int(L.matrix_rank(near, **kw)) for kw in ({}, dict(atol=1e-6), dict(rtol=1e-12),
                                                      dict(hermitian=True))]
    assert got == RANK
    assert L.matrix_rank(t(rand(3, 4, 2))).numpy().tolist() == [2, 2, 2]
    ps = (None, 2, -2, "fro", "nuc", 1, -1, math.inf)
    np.testing.assert_allclose([float(L.cond(t(M), p)) for p in ps], COND, rtol=1e-10)
    for p in (None, -2, "fro", 1):
        check_grads(lambda A, p=p: L.cond(A, p), M)


def test_multi_dot_vecdot_vander_cross():
    a, b, c, v = rand(4, 2), rand(2, 5), rand(5, 3), rand(3)
    np.testing.assert_allclose(L.multi_dot([t(a), t(b), t(c), t(v)]).numpy(),
                               np.linalg.multi_dot([a, b, c, v]), rtol=1e-12)
    np.testing.assert_allclose(L.multi_dot([t(a[:, 0]), t(a)]).numpy(), a[:, 0] @ a, rtol=1e-12)
    check_grads(lambda *m: L.multi_dot(m), a, b, c)
    x, y = rand(3, 4), rand(4)
    np.testing.assert_allclose(L.vecdot(t(x), t(y)).numpy(), x @ y, rtol=1e-12)
    np.testing.assert_allclose(L.vecdot(t(x), t(x), dim=0).numpy(), (x * x).sum(0), rtol=1e-12)
    z = jitgrad.tensor(np.array([1 + 2j, 3 - 1j]))
    assert L.vecdot(z, z).item() == pytest.approx(15.0)
    check_grads(lambda X, Y: L.vecdot(X, Y), x, y)
    np.testing.assert_allclose(L.vander(t([2.0, -1.0, 0.5]), N=4).numpy(), VANDER)
    check_grads(lambda X: L.vander(X, N=4), [0.0, 1.5, -2.0])
    p, q = rand(2, 3), rand(2, 3)
    np.testing.assert_allclose(L.cross(t(p), t(q)).numpy(), np.cross(p, q), rtol=1e-12)
    np.testing.assert_allclose(L.cross(t(p.T), t(q.T), dim=0).numpy(), np.cross(p, q).T)
    check_grads(lambda X, Y: L.cross(X, Y), p, q)


def test_diagonal_matmul_householder_tensorinv_tensorsolve():
    a = rand(2, 3, 4)
    np.testing.assert_allclose(L.diagonal(t(a), offset=1).numpy(),
                               np.diagonal(a, 1, -2, -1))
    np.testing.assert_allclose(L.matmul(t(a), t(rand(4, 2) * 0 + 1)).numpy(), a @ np.ones((4, 2)))
    np.testing.assert_allclose(L.householder_product(t(HH_A), t([1.2, 0.4, 0.7])).numpy(), HH,
                               rtol=1e-12, atol=1e-14)
    check_grads(L.householder_product, HH_A, [1.2, 0.4])
    ta = rand(4, 6, 8, 3)
    np.testing.assert_allclose(L.tensorinv(t(ta), ind=2).numpy(), np.linalg.tensorinv(ta, 2),
                               rtol=1e-8, atol=1e-10)
    A, B = rand(2, 3, 6), rand(2, 3)
    np.testing.assert_allclose(L.tensorsolve(t(A), t(B)).numpy(), np.linalg.tensorsolve(A, B),
                               rtol=1e-10)
    A2 = rand(6, 2, 3)
    np.testing.assert_allclose(L.tensorsolve(t(A2), t(B), dims=(0,)).numpy(),
                               np.linalg.tensorsolve(A2, B, axes=(0,)), rtol=1e-10)
    check_grads(lambda X, Y: L.tensorsolve(X, Y), A, B)
    with pytest.raises(RuntimeError, match="prod"):
        L.tensorinv(t(rand(2, 3)), ind=1)


# --- LDL and eigvals ------------------------------------------------------------------------------
def test_ldl_factor_and_solve():
    ld, piv = L.ldl_factor(t(S))
    np.testing.assert_allclose(ld.numpy(), LD, rtol=1e-12, atol=1e-14)
    assert piv.numpy().tolist() == LDPIV and piv.dtype == jitgrad.int32
    ex = L.ldl_factor_ex(t(S))
    assert ex._fields == ("LD", "pivots", "info") and int(ex.info) == 0
    a = rand(2, 3, 3)
    sym = a + np.swapaxes(a, -1, -2)
    b = rand(2, 3, 2)
    x = L.ldl_solve(*L.ldl_factor(t(sym)), t(b))
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(sym, b), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="derivative is not implemented"):
        L.ldl_factor(t(S, True))
    with pytest.raises(L.LinAlgError):
        L.ldl_factor(t(np.zeros((2, 2))))


def test_eigvals_values_and_first_order_gradient():
    x = t(EIG_A, True)
    w = L.eigvals(x)
    assert w.dtype == jitgrad.complex128
    np.testing.assert_allclose(w.detach().numpy(), EIGW, rtol=1e-12)
    (w.real ** 2 + 3 * w.imag ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), EIGG, rtol=1e-9, atol=1e-12)
    assert gradcheck(lambda A: L.eigvals(A).real * L.eigvals(A).imag, (t(EIG_A, True),))
    with pytest.raises(NotImplementedError, match="double backward"):
        gradgradcheck(lambda A: L.eigvals(A).real, (t(EIG_A, True),))
    batch = np.stack([EIG_A, EIG_A.T])
    np.testing.assert_allclose(L.eigvals(t(batch)).numpy(), np.linalg.eigvals(batch), rtol=1e-12)


# --- out= ---------------------------------------------------------------------------------------
def test_out_argument():
    a = rand(3, 3) + 3 * np.eye(3)
    out = jitgrad.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out= is resized without a warning
        res = L.inv(t(a), out=out)
    assert res is out
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(a), rtol=1e-12)
    q, r = jitgrad.empty(3, 3), jitgrad.empty(3, 3)
    res = L.qr(t(a), out=(q, r))
    assert res.Q is q and res.R is r
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    o = jitgrad.empty(3, 3)
    L.solve_triangular(t(a), t(np.eye(3)), upper=False, out=o)
    np.testing.assert_allclose(o.numpy(), np.linalg.inv(np.tril(a)), rtol=1e-12)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        L.det(t(a, True), out=jitgrad.empty(()))

