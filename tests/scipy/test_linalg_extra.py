"""jitgrad.scipy.linalg additions (sqrtm, solve_sylvester, solve_continuous_lyapunov,
expm_frechet) and the gradients of expm, cho_factor/cho_solve and solve_triangular: forward vs
SciPy in float64, gradients (second order where cheap) vs central differences."""
import numpy as np
import pytest
import scipy.linalg

import jitgrad
from jitgrad.scipy import linalg as jla
from jitgrad.testing import checks

RNG = np.random.default_rng(1190)


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


M = RNG.standard_normal((3, 3))
SPD = M @ M.T + np.eye(3)
# non-symmetric with positive real eigenvalues: a real principal root
NONSYM = np.triu(RNG.uniform(0.5, 2.0, (3, 3))) + 0.1 * RNG.standard_normal((3, 3))


@pytest.mark.parametrize("a", [SPD, NONSYM], ids=["spd", "nonsymmetric"])
def test_sqrtm(a):
    checks.assert_close(jla.sqrtm(_leaf(a)), scipy.linalg.sqrtm(a), rtol=1e-10, atol=1e-12)
    checks.gradcheck(jla.sqrtm, (_leaf(a),))
    checks.gradgradcheck(jla.sqrtm, (_leaf(a),))


def test_sqrtm_complex_root_raises():
    with pytest.raises(ValueError, match="sqrtm: the principal square root .* complex"):
        jla.sqrtm(np.diag([1.0, -2.0]))


def test_sylvester_and_lyapunov():
    a, b, q = M + 3 * np.eye(3), RNG.standard_normal((2, 2)), RNG.standard_normal((3, 2))
    checks.assert_close(jla.solve_sylvester(a, b, q), scipy.linalg.solve_sylvester(a, b, q),
                        rtol=1e-11)
    checks.gradcheck(jla.solve_sylvester, (_leaf(a), _leaf(b), _leaf(q)))
    checks.gradgradcheck(jla.solve_sylvester, (_leaf(a), _leaf(b), _leaf(q)))
    q2 = RNG.standard_normal((3, 3))
    checks.assert_close(jla.solve_continuous_lyapunov(a, q2),
                        scipy.linalg.solve_continuous_lyapunov(a, q2), rtol=1e-11)
    checks.gradcheck(jla.solve_continuous_lyapunov, (_leaf(a), _leaf(q2)))
    with pytest.raises(ValueError, match="solve_sylvester: need square a"):
        jla.solve_sylvester(a, b, q.T)


def test_expm_frechet_and_expm_gradient():
    e = RNG.standard_normal((3, 3))
    expm_a, frechet = jla.expm_frechet(_leaf(M), _leaf(e))
    ref_e, ref_l = scipy.linalg.expm_frechet(M, e)
    checks.assert_close(expm_a, ref_e, rtol=1e-12)
    checks.assert_close(frechet, ref_l, rtol=1e-11, atol=1e-13)
    checks.assert_close(jla.expm_frechet(M, e, compute_expm=False), ref_l, rtol=1e-11, atol=1e-13)
    checks.gradcheck(lambda a, b: jla.expm_frechet(a, b, compute_expm=False), (_leaf(M), _leaf(e)))
    # the gradient of <G, expm(A)> is the Frechet derivative at A^T in the direction G
    g = RNG.standard_normal((3, 3))
    a = _leaf(M * 1.5)
    (jla.expm(a) * jitgrad.tensor(g)).sum().backward()
    checks.assert_close(a.grad, scipy.linalg.expm_frechet(1.5 * M.T, g)[1], rtol=1e-10)
    checks.gradgradcheck(jla.expm, (_leaf(M * 0.5),))


def test_cho_solve_and_solve_triangular_gradients():
    b = RNG.standard_normal((3, 2))
    for lower in (True, False):
        checks.gradcheck(lambda s, v, lower=lower: jla.cho_solve(
            jla.cho_factor((s + s.T) * 0.5, lower=lower), v), (_leaf(SPD), _leaf(b)))
        c = scipy.linalg.cho_factor(SPD, lower=lower)
        checks.assert_close(jla.cho_solve((c[0], lower), b), scipy.linalg.cho_solve(c, b),
                            rtol=1e-12)
        checks.gradcheck(lambda cc, v, lower=lower: jla.cho_solve((cc, lower), v),
                         (_leaf(np.tril(c[0]) if lower else np.triu(c[0])), _leaf(b)))
    a = M + 3 * np.eye(3)
    for trans in (0, 1, "T"):
        for unit in (False, True):
            checks.assert_close(jla.solve_triangular(a, b, trans=trans, lower=True,
                                                     unit_diagonal=unit),
                                scipy.linalg.solve_triangular(a, b, trans=trans, lower=True,
                                                              unit_diagonal=unit), rtol=1e-12)
            checks.gradcheck(lambda m, v, trans=trans, unit=unit: jla.solve_triangular(
                m, v, trans=trans, lower=True, unit_diagonal=unit), (_leaf(a), _leaf(b)))
    checks.gradgradcheck(lambda m, v: jla.solve_triangular(m, v, lower=False), (_leaf(a), _leaf(b)))
