"""Linear algebra through ``jitgrad.compile``: captured (no fallback), equal to eager on later
calls with other values (no retrace), gradients included.

The priority is the shape of a Gaussian-process marginal likelihood: a kernel matrix, its
Cholesky factor, ``cholesky_solve`` and the log of the factor's diagonal, differentiated in the
log-hyperparameters. The backward rules' masks and identities are constants of the program
(shape-only); values computed from the data (LU pivots' permutations, the eigenvalue gaps) are
graph values, so a second input with other values (other pivots) gets its own result.
"""
import warnings

import numpy as np
import pytest

import jitgrad
import jitgrad.linalg as jla
import jitgrad.numpy as jnp
import jitgrad.scipy.linalg as jsl

N = 50
_rng = np.random.default_rng(0)
X = jitgrad.tensor(_rng.normal(size=(N, 2)))
Y = jitgrad.tensor(_rng.normal(size=(N, 1)))


def gp_nll(theta):
    """``0.5 y^T K^-1 y + sum log diag(L) + n/2 log(2 pi)``, ``K = sf^2 exp(-d / (2 l^2))
    + (sn^2 + 1e-6) I`` (RBF), ``theta = log(l, sf, sn)``."""
    ls, sf, sn = theta[0].exp(), theta[1].exp(), theta[2].exp()
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = sf ** 2 * (-0.5 * d / ls ** 2).exp() \
        + (sn ** 2 + 1e-6) * jitgrad.eye(N, dtype=jitgrad.float64)
    L = jla.cholesky(K)
    alpha = jitgrad.cholesky_solve(Y, L)
    return 0.5 * (Y * alpha).sum() + jitgrad.log(jitgrad.diagonal(L)).sum() \
        + 0.5 * N * np.log(2 * np.pi)


def _no_fallback_calls(cf, fn, inputs):
    """Call the compiled ``cf`` and eager ``fn`` on each input; compare; return ``cf``'s stats."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a fallback warns
        for x in inputs:
            got = cf(jitgrad.tensor(x))
            want = fn(jitgrad.tensor(x))
            for g, w in zip(_leaves(got), _leaves(want)):
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)
    return cf.stats()


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [tree]


def test_gp_marginal_likelihood_value_and_grad():
    vg = jitgrad.func.value_and_grad(gp_nll)
    cf = jitgrad.compile(vg)
    thetas = [np.array([0.1, 0.2, -1.0]), np.array([0.3, -0.1, -0.5])]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        for th in thetas:
            v, g = cf(jitgrad.tensor(th))
            ve, ge = vg(jitgrad.tensor(th))
            np.testing.assert_allclose(v.numpy(), ve.numpy(), rtol=1e-12)
            np.testing.assert_allclose(g.numpy(), ge.numpy(), rtol=1e-10, atol=1e-12)
            # central finite differences of the compiled value
            h = 1e-5
            fd = np.empty(3)
            for i in range(3):
                e = np.zeros(3)
                e[i] = h
                fd[i] = (cf(jitgrad.tensor(th + e))[0].item()
                         - cf(jitgrad.tensor(th - e))[0].item()) / (2 * h)
            np.testing.assert_allclose(g.numpy(), fd, rtol=1e-6, atol=1e-6)
    stats = cf.stats()
    assert not stats["fallbacks"], stats
    assert stats["traces"] == 1, stats


_B = jitgrad.tensor(np.random.default_rng(1).normal(size=(5, 2)))


def _spd(seed):
    a = np.random.default_rng(seed).normal(size=(5, 5))
    return a @ a.T + 5 * np.eye(5)


def _sq(t):
    return (t ** 2).sum()


PATHS = {
    "cholesky": lambda A: jla.cholesky(A).sum(),
    "cholesky_solve": lambda A: _sq(jitgrad.cholesky_solve(_B, jla.cholesky(A))),
    "cholesky_solve-upper": lambda A: _sq(jitgrad.cholesky_solve(
        _B, jla.cholesky(A, upper=True), upper=True)),
    "solve_triangular": lambda A: _sq(jla.solve_triangular(jla.cholesky(A), _B, upper=False)),
    "solve_triangular-right": lambda A: _sq(jla.solve_triangular(
        jla.cholesky(A), _B.mT, upper=False, left=False)),
    "solve": lambda A: _sq(jla.solve(A, _B)),
    "np.linalg.solve": lambda A: _sq(jnp.linalg.solve(A, _B)),
    "scipy.cho_solve": lambda A: _sq(jsl.cho_solve(jsl.cho_factor(A), _B)),
    "scipy.cho_solve-lower": lambda A: _sq(jsl.cho_solve(jsl.cho_factor(A, lower=True), _B)),
    "scipy.solve_triangular": lambda A: _sq(jsl.solve_triangular(A, _B, lower=True)),
    "slogdet": lambda A: jla.slogdet(A)[1],
    "eigh": lambda A: _sq(jla.eigh(A)[0]) + _sq((jla.eigh(A)[1][:, 0] * _B[:, 0]).sum()),
    "svd": lambda A: jla.svd(A, full_matrices=False)[1].sum()
    + _sq((jla.svd(A, full_matrices=False)[0][:, 0] * _B[:, 0]).sum()),
    "svd-tall": lambda A: _sq((jla.svd(A[:, :3], full_matrices=False)[0] * _B[:, :1]).sum()),
    "qr": lambda A: (jla.qr(A)[0] * _B[:, :1]).sum() + jla.qr(A)[1].sum(),
    "qr-r": lambda A: jla.qr(A[:, :3], mode="r")[1].sum(),
    "pinv": lambda A: jla.pinv(A[:, :3]).sum(),
    "lstsq": lambda A: _sq(jla.lstsq(A[:, :3], _B)[0]) * (1.0 + jla.lstsq(A, _B)[2]),
    "matrix_norm-2": lambda A: jla.matrix_norm(A, ord=2),
    "cond": lambda A: jla.cond(A),
    "lu_factor": lambda A: jla.lu_factor(A)[0].sum(),
    "lu_factor_ex": lambda A: jla.lu_factor_ex(A)[0].sum(),
    "lu": lambda A: (jla.lu(A)[1] * 2 + jla.lu(A)[2]).sum(),
    "lu_solve": lambda A: _sq(jla.lu_solve(*jla.lu_factor_ex(A)[:2], _B)),
    "lu_unpack": lambda A: sum((t * _B[:, :1]).sum()
                               for t in jitgrad.lu_unpack(*jla.lu_factor_ex(A)[:2])),
    "matrix_exp": lambda A: jla.matrix_exp(A / 10).sum(),
    "matrix_power-0": lambda A: (jla.matrix_power(A, 0) * A).sum(),
    "householder_product": lambda A: jla.householder_product(A[:, :3], A[0, :3]).sum(),
}


@pytest.mark.parametrize("name", sorted(PATHS))
def test_user_path_compiles_with_grad(name):
    fn = jitgrad.func.value_and_grad(PATHS[name])
    cf = jitgrad.compile(fn)
    stats = _no_fallback_calls(cf, fn, [_spd(1), _spd(2)])
    assert not stats["fallbacks"] and stats["traces"] == 1, stats


def test_lu_pivots_are_not_baked_in():
    """The LU backward's permutation comes from each call's pivots (a row), not the trace's."""
    def lu_terms(A):
        LU, piv, _ = jla.lu_factor_ex(A)
        P = jitgrad.lu_unpack(LU, piv).P
        return (LU * _B[:, :1]).sum() + (P * jitgrad.arange(25.0).reshape(5, 5)).sum()

    fn = jitgrad.func.value_and_grad(lu_terms)
    cf = jitgrad.compile(fn)
    a = _spd(3)
    b = a[::-1].copy()  # other row order: other pivots
    stats = _no_fallback_calls(cf, fn, [a, b, np.triu(a) + 5 * np.eye(5)])
    assert not stats["fallbacks"] and stats["traces"] == 1, stats


def test_lu_factor_singular_raises_at_each_call():
    """``lu_factor``'s check of LAPACK's ``info`` is a row of the program: a singular matrix
    raises compiled as eager (the trace ran on an invertible one)."""
    fn = lambda A: jla.lu_factor(A).LU.sum()  # noqa: E731
    cf = jitgrad.compile(fn)
    a = np.random.default_rng(6).normal(size=(4, 4))
    singular = a.copy()
    singular[:, 2] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        np.testing.assert_allclose(cf(jitgrad.tensor(a)).item(), fn(jitgrad.tensor(a)).item(),
                                   rtol=1e-12)
        for call in (cf, fn):
            with pytest.raises(jla.LinAlgError, match=r"U\[3,3\] is zero"):
                call(jitgrad.tensor(singular))
    assert cf.stats()["traces"] == 1 and not cf.stats()["fallbacks"], cf.stats()


def test_eigh_repeated_eigenvalues_raise_at_each_call():
    """The eigenvector gradient at repeated eigenvalues raises, compiled as eager: the check is
    a row of the program (``nplinalg.checked``), not a host read of the trace's values."""
    fn = jitgrad.func.grad(lambda A: jla.eigh(A)[1][:, 0].sum())
    cf = jitgrad.compile(fn)
    repeated = np.diag([1.0, 1.0, 2.0, 3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        for a in (_spd(4), _spd(5)):
            np.testing.assert_allclose(cf(jitgrad.tensor(a)).numpy(),
                                       fn(jitgrad.tensor(a)).numpy(), rtol=1e-10, atol=1e-12)
        for call in (cf, fn):
            with pytest.raises(RuntimeError, match="repeated eigenvalues"):
                call(jitgrad.tensor(repeated))
    assert cf.stats()["traces"] == 1 and not cf.stats()["fallbacks"], cf.stats()


@pytest.mark.parametrize("fn", [
    lambda A: jla.matrix_rank(A), lambda A: jla.matrix_rank(A, atol=0.5),
    lambda A: jla.matrix_rank(A[..., :4, :4] + A[..., :4, :4].mT, hermitian=True),
    lambda A: jnp.linalg.matrix_rank(A), lambda A: jnp.linalg.matrix_rank(A, tol=0.5),
    lambda A: jnp.linalg.matrix_rank(A, rtol=0.3)],
    ids=["linalg", "linalg-atol", "linalg-hermitian", "numpy", "numpy-tol", "numpy-rtol"])
def test_matrix_rank_is_computed_at_each_call(fn):
    """The rank is a count of rows' values in the program (and under vmap), never the trace's."""
    full = np.random.default_rng(7).normal(size=(3, 5, 4))
    low = full.copy()
    low[1, :, 3] = low[1, :, 0]
    low[2, :, 1:3] = 0.0
    cf = jitgrad.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        for x in (full, low):
            got, want = cf(jitgrad.tensor(x)), fn(jitgrad.tensor(x))
            assert got.dtype == want.dtype == jitgrad.int64
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(jitgrad.func.vmap(fn)(jitgrad.tensor(low)).numpy(),
                                      fn(jitgrad.tensor(low)).numpy())
    assert cf.stats()["traces"] == 1 and not cf.stats()["fallbacks"], cf.stats()


def test_gp_program_solves_triangles_only(monkeypatch):
    """The GP marginal likelihood's program (forward and recorded backward) takes the
    triangular solves (BLAS trsm, O(n^2 k)): no general ``solve`` nor ``inv`` (O(n^3) LU)."""
    from jitgrad.ops.core.registry import OPS

    def refuse(name):
        def forward(*args, **kwargs):
            raise AssertionError(f"the GP program ran the general {name!r} row")
        return forward

    for name in ("solve", "inv"):
        monkeypatch.setattr(OPS[name], "forward", refuse(name))
    cf = jitgrad.compile(jitgrad.func.value_and_grad(gp_nll))
    for th in ([0.1, 0.2, -1.0], [0.3, -0.1, -0.5]):
        cf(jitgrad.tensor(np.array(th)))
    stats = cf.stats()
    assert not stats["fallbacks"] and stats["traces"] == 1, stats
