"""jitgrad.scipy against SciPy (forward, float64) and finite differences (gradients), plus
minimize with exact gradients and the HIPS-style functional operators."""
import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import scipy.special
import scipy.stats

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.numpy import functional as F
from jitgrad.scipy import linalg as jla
from jitgrad.scipy import optimize as jopt
from jitgrad.scipy import special as jsp
from jitgrad.scipy import stats as jst
from jitgrad.testing import checks

RNG = np.random.default_rng(7)


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), dtype=jitgrad.float64, requires_grad=True)


POS = np.abs(RNG.standard_normal((2, 3))) + 0.5
UNIT = 1 / (1 + np.exp(-RNG.standard_normal((2, 3))))
SPECIAL = [
    ("erf", RNG.standard_normal((2, 3))), ("erfc", RNG.standard_normal((2, 3))),
    ("gammaln", POS), ("digamma", POS), ("expit", RNG.standard_normal((2, 3))),
    ("logit", UNIT), ("ndtr", RNG.standard_normal(4)), ("gamma", POS),
]


@pytest.mark.parametrize("name,x", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_special_unary(name, x):
    fn = getattr(jsp, name)
    checks.assert_close(fn(_leaf(x)), getattr(scipy.special, name)(x))
    checks.gradcheck(fn, (_leaf(x),))


def test_special_polygamma_and_higher_derivatives():
    x = _leaf(POS)
    for n in (0, 1, 2):
        checks.assert_close(jsp.polygamma(n, x), scipy.special.polygamma(n, POS))
        checks.gradcheck(lambda t, n=n: jsp.polygamma(n, t), (x,))
    checks.gradgradcheck(jsp.gammaln, (x,))


def test_special_binary_and_logsumexp():
    a, b = POS, np.abs(RNG.standard_normal(3)) + 0.2
    checks.assert_close(jsp.betaln(_leaf(a), _leaf(b)), scipy.special.betaln(a, b))
    checks.gradcheck(jsp.betaln, (_leaf(a), _leaf(b)))
    x = np.array([[0.0, 1.5, 2.0], [0.0, 0.3, 0.0]])
    y = np.array([[0.0, 0.5, 2.0], [1.0, 0.3, 3.0]])
    checks.assert_close(jsp.xlogy(_leaf(x), _leaf(y)), scipy.special.xlogy(x, y))
    xt, yt = _leaf(x), _leaf(y)
    jsp.xlogy(xt, yt).sum().backward()
    with np.errstate(all="ignore"):
        # log y at x == 0 too (x log y is smooth there), as PyTorch; 0 where x == 0 and y == 0
        checks.assert_close(xt.grad, np.where((x == 0) & (y == 0), 0.0, np.log(y)))
        checks.assert_close(yt.grad, np.where(x == 0, 0.0, x / y))
    checks.assert_close(jsp.xlog1py(_leaf(x), _leaf(y)), scipy.special.xlog1py(x, y))
    z = RNG.standard_normal((2, 3)) * 5
    w = np.abs(RNG.standard_normal((2, 3)))
    for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"axis": (0, 1)}):
        checks.assert_close(jsp.logsumexp(_leaf(z), **kw), scipy.special.logsumexp(z, **kw))
        checks.gradcheck(lambda t, kw=kw: jsp.logsumexp(t, **kw), (_leaf(z),))
    checks.assert_close(jsp.logsumexp(_leaf(z), axis=1, b=w), scipy.special.logsumexp(z, axis=1, b=w))
    with pytest.raises(AttributeError, match="scipy.special.kv is not covered"):
        jsp.kv  # noqa: B018


def test_stats():
    x, loc, scale = RNG.standard_normal(4), 0.3, 1.7
    for fn in ("logpdf", "pdf", "cdf", "logcdf"):
        checks.assert_close(getattr(jst.norm, fn)(_leaf(x), loc, scale),
                            getattr(scipy.stats.norm, fn)(x, loc, scale))
    checks.gradcheck(lambda a, s: jst.norm.logpdf(a, 0.3, s), (_leaf(x), _leaf(scale)))
    checks.gradcheck(lambda a: jst.norm.cdf(a, loc, scale), (_leaf(x),))
    df = 3.5
    checks.assert_close(jst.t.logpdf(_leaf(x), df, loc, scale), scipy.stats.t.logpdf(x, df, loc, scale))
    checks.gradcheck(lambda a, d: jst.t.logpdf(a, d, loc, scale), (_leaf(x), _leaf(df)))
    a = RNG.standard_normal((3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    mean = RNG.standard_normal(3)
    for pts in (RNG.standard_normal(3), RNG.standard_normal((4, 3))):
        checks.assert_close(jst.multivariate_normal.logpdf(_leaf(pts), mean, cov),
                            scipy.stats.multivariate_normal.logpdf(pts, mean, cov))
    pts = RNG.standard_normal((2, 3))
    checks.gradcheck(lambda p, m, c: jst.multivariate_normal.logpdf(p, m, (c + c.T) * 0.5),
                     (_leaf(pts), _leaf(mean), _leaf(cov)))


def test_scipy_linalg():
    a = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((3, 2))
    for lower in (True, False):
        for trans in (0, 1):
            checks.assert_close(jla.solve_triangular(_leaf(a), _leaf(b), trans=trans, lower=lower),
                                scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower))
        checks.gradcheck(lambda m, v, lower=lower: jla.solve_triangular(m, v, lower=lower),
                         (_leaf(a), _leaf(b)))
    spd = a @ a.T + np.eye(3)
    for lower in (True, False):
        c = jla.cho_factor(_leaf(spd), lower=lower)
        checks.assert_close(jla.cho_solve(c, _leaf(b)), np.linalg.solve(spd, b))
    checks.assert_close(jla.cholesky(_leaf(spd)), scipy.linalg.cholesky(spd))
    m = RNG.standard_normal((3, 3))
    checks.assert_close(jla.expm(_leaf(m)), scipy.linalg.expm(m), rtol=1e-12)
    checks.assert_close(jla.expm(_leaf(m * 4)), scipy.linalg.expm(m * 4), rtol=1e-11)
    checks.gradcheck(jla.expm, (_leaf(m * 0.5),))


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 2))
    y = x @ np.array([1.5, -2.0]) + 0.5 + 0.3 * rng.standard_normal(40)
    return x, y


def _nll(p, x, y):
    w, b, log_s = p[:2], p[2], p[3]
    return -jnp.sum(jst.norm.logpdf(y, jnp.dot(x, w) + b, jnp.exp(log_s)))


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B", "Newton-CG", "trust-ncg", "trust-krylov",
                                    "trust-constr", "Nelder-Mead"])
def test_minimize_matches_scipy_with_numeric_gradients(method):
    x, y = _data()
    res = jopt.minimize(_nll, np.zeros(4), args=(x, y), method=method,
                        options={"maxiter": 5000} if method == "Nelder-Mead" else None)

    def nll_np(p):
        mu = x @ p[:2] + p[2]
        return -np.sum(scipy.stats.norm.logpdf(y, mu, np.exp(p[3])))

    ref = scipy.optimize.minimize(nll_np, np.zeros(4), method="BFGS")
    assert res.success, res.message
    np.testing.assert_allclose(res.x, ref.x, atol=1e-3)
    assert isinstance(res.x, np.ndarray) and res.x.dtype == np.float64


def test_minimize_gradient_is_exact_and_shapes_kept():
    x, y = _data()
    calls = []
    vg = jopt.value_and_grad_np(_nll, (4,), (x, y))
    p = np.array([0.3, -0.2, 0.1, 0.05])
    f, g = vg(p)
    num = scipy.optimize.approx_fprime(p, lambda q: vg(q)[0], 1e-7)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-5)
    res = jopt.minimize(lambda m: jnp.sum((m - jnp.eye(2)) ** 2), np.zeros((2, 2)),
                        callback=lambda xk: calls.append(1))
    assert res.x.shape == (2, 2)
    np.testing.assert_allclose(res.x, np.eye(2), atol=1e-6)
    cons = [{"type": "ineq", "fun": lambda q: 1.0 - jnp.sum(q)}]
    res = jopt.minimize(lambda q: jnp.sum((q - 2.0) ** 2), np.zeros(2), method="SLSQP",
                        constraints=cons)
    np.testing.assert_allclose(res.x, [0.5, 0.5], atol=1e-6)
    with pytest.raises(TypeError, match="must return a jitgrad Tensor"):
        jopt.minimize(lambda q: float(np.sum(q)), np.zeros(2))


def test_functional_operators():
    def f(x, c):
        return jnp.sum(jnp.sin(x) * x ** 2) * c

    x = np.array([0.3, -1.2, 2.0])
    g = F.grad(f)(x, 2.0)
    np.testing.assert_allclose(g, 2 * (np.cos(x) * x ** 2 + 2 * x * np.sin(x)))
    np.testing.assert_allclose(F.grad(f, argnum=1)(x, 2.0), np.sum(np.sin(x) * x ** 2))
    v, g2 = F.value_and_grad(f)(x, 2.0)
    np.testing.assert_allclose(v, 2 * np.sum(np.sin(x) * x ** 2))
    np.testing.assert_allclose(g2, g)
    ga, aux = F.grad_and_aux(lambda t: (jnp.sum(t ** 2), "aux"))(x)
    np.testing.assert_allclose(ga, 2 * x)
    assert aux == "aux"
    d2 = -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)
    H = F.hessian(f)(x, 1.0)
    np.testing.assert_allclose(H, np.diag(d2), atol=1e-12)
    vec = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(F.hessian_vector_product(f)(x, 1.0, vec), d2 * vec)
    np.testing.assert_allclose(F.elementwise_grad(jnp.tanh)(x), 1 - np.tanh(x) ** 2)
    J = F.jacobian(lambda t: jnp.outer(t, t))(x)
    ref = np.einsum("ik,j->ijk", np.eye(3), x) + np.einsum("i,jk->ijk", x, np.eye(3))
    np.testing.assert_allclose(J, ref)
    vjp, ans = F.make_vjp(lambda t: jnp.exp(t) * 2)(x)
    np.testing.assert_allclose(ans, 2 * np.exp(x))
    np.testing.assert_allclose(vjp(vec), 2 * np.exp(x) * vec)
    out, jv = F.make_jvp(lambda t: jnp.cumsum(t ** 2))(x)(vec)
    np.testing.assert_allclose(jv, np.cumsum(2 * x * vec))
    assert F.grad(lambda t: t ** 3)(2.0) == pytest.approx(12.0)
    with pytest.raises(TypeError, match="must return a scalar"):
        F.grad(lambda t: t * 2)(x)
