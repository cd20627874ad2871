"""jitgrad.scipy.stats distributions (norm t gamma beta poisson multivariate_normal dirichlet):
real submodules (HIPS-style imports), SciPy's attribute and frozen forms, forward vs SciPy in
float64, gradients in every differentiable argument (distribution parameters included) vs
central differences."""
import numpy as np
import pytest
import scipy.stats

import jitgrad
import jitgrad.scipy.stats.multivariate_normal as mvn
import jitgrad.scipy.stats.norm as norm
from jitgrad.scipy import stats as jst
from jitgrad.testing import checks

RNG = np.random.default_rng(190)


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def test_submodules_and_frozen_form():
    import types

    assert isinstance(norm, types.ModuleType) and norm is jst.norm
    assert isinstance(mvn, types.ModuleType) and mvn is jst.multivariate_normal
    x = RNG.standard_normal(4)
    checks.assert_close(jst.norm(0.5, 2.0).logpdf(x), scipy.stats.norm(0.5, 2.0).logpdf(x))
    checks.assert_close(jst.gamma(2.0, scale=1.5).cdf(np.abs(x)),
                        scipy.stats.gamma(2.0, scale=1.5).cdf(np.abs(x)))
    checks.assert_close(jst.dirichlet([1.0, 2.0, 3.0]).mean(),
                        scipy.stats.dirichlet([1.0, 2.0, 3.0]).mean())
    checks.assert_close(jst.norm(scale=3.0).entropy(), scipy.stats.norm(scale=3.0).entropy())
    with pytest.raises(AttributeError, match="scipy.stats.norm.rvs is not covered"):
        norm.rvs  # noqa: B018


X = RNG.standard_normal(5) * 2
LOC, SCALE = 0.3, 1.7
_ALL = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
_UNIT = LOC + SCALE * RNG.uniform(0.05, 0.95, 5)
_POS = np.abs(X) + LOC + 0.1
DISTS = {  # name: (x, shape parameters, methods)
    "norm": (X, (), _ALL), "t": (X, (3.5,), _ALL), "gamma": (_POS, (2.3,), _ALL),
    "beta": (_UNIT, (1.4, 2.6), _ALL), "chi2": (_POS, (3.5,), _ALL),
    "expon": (_POS, (), _ALL), "laplace": (X, (), _ALL), "cauchy": (X, (), _ALL),
    "uniform": (_UNIT, (), ("logpdf", "pdf", "cdf", "sf")),
}
CONT = [(name, m, x, shapes) for name, (x, shapes, methods) in DISTS.items() for m in methods]


@pytest.mark.parametrize("name,method,x,shapes", CONT, ids=[f"{c[0]}.{c[1]}" for c in CONT])
def test_continuous(name, method, x, shapes):
    fn = getattr(getattr(jst, name), method)
    ref = getattr(getattr(scipy.stats, name), method)
    checks.assert_close(fn(x, *shapes, LOC, SCALE), ref(x, *shapes, LOC, SCALE), rtol=1e-11)
    checks.assert_close(fn(x, *shapes), ref(x, *shapes), rtol=1e-11)
    # x, loc, scale always; the shape parameters where the function is built from gammaln etc.
    shape_grad = method in ("logpdf", "pdf")
    leaves = [_leaf(x), _leaf(LOC), _leaf(SCALE)] + [
        _leaf(s) if shape_grad else jitgrad.tensor(s) for s in shapes]
    checks.gradcheck(lambda xx, lo, sc, *sh: fn(xx, *sh, lo, sc), leaves)
    if method == "logpdf":
        checks.gradgradcheck(lambda xx, lo, sc, *sh: fn(xx, *sh, lo, sc), leaves)


def test_norm_tails_and_quantiles():
    x = np.array([-40.0, -10.0, 0.0, 12.0])
    checks.assert_close(norm.logcdf(x), scipy.stats.norm.logcdf(x), rtol=1e-13)
    checks.assert_close(norm.logsf(x), scipy.stats.norm.logsf(x), rtol=1e-13)
    q = np.array([0.01, 0.3, 0.9])
    for fn in ("ppf", "isf"):
        checks.assert_close(getattr(norm, fn)(q, LOC, SCALE),
                            getattr(scipy.stats.norm, fn)(q, LOC, SCALE), rtol=1e-13)
        checks.gradcheck(lambda qq, lo, sc, fn=fn: getattr(norm, fn)(qq, lo, sc),
                         (_leaf(q), _leaf(LOC), _leaf(SCALE)))


QUANTILES = {"expon": (), "laplace": (), "cauchy": (), "uniform": (), "t": (3.5,),
             "gamma": (2.3,), "beta": (1.4, 2.6), "chi2": (3.5,)}


@pytest.mark.parametrize("name", sorted(QUANTILES))
def test_quantiles(name):
    q = np.array([0.05, 0.3, 0.5, 0.9])
    shapes = QUANTILES[name]
    for fn in ("ppf", "isf"):
        if fn not in getattr(jst, name).__all__:
            continue
        jfn = getattr(getattr(jst, name), fn)
        checks.assert_close(jfn(q, *shapes, LOC, SCALE),
                            getattr(getattr(scipy.stats, name), fn)(q, *shapes, LOC, SCALE),
                            rtol=1e-11)
        checks.gradcheck(lambda qq, lo, sc, jfn=jfn: jfn(qq, *shapes, lo, sc),
                         (_leaf(q[:2]), _leaf(LOC), _leaf(SCALE)))


def test_outside_support():
    checks.assert_close(jst.gamma.logpdf([-1.0, 2.0], 2.0), scipy.stats.gamma.logpdf([-1.0, 2.0], 2.0))
    checks.assert_close(jst.gamma.cdf([-1.0, 2.0], 2.0), scipy.stats.gamma.cdf([-1.0, 2.0], 2.0))
    xb = [-0.5, 0.5, 1.5]
    checks.assert_close(jst.beta.logpdf(xb, 2.0, 3.0), scipy.stats.beta.logpdf(xb, 2.0, 3.0))
    checks.assert_close(jst.beta.cdf(xb, 2.0, 3.0), scipy.stats.beta.cdf(xb, 2.0, 3.0))
    for name, x in (("expon", [-1.0, 0.5]), ("uniform", [-0.5, 0.5, 1.5]),
                    ("chi2", [-1.0, 2.0])):
        args = (3.0,) if name == "chi2" else ()
        for method in ("logpdf", "cdf", "sf"):
            checks.assert_close(getattr(getattr(jst, name), method)(x, *args),
                                getattr(getattr(scipy.stats, name), method)(x, *args))
    with pytest.raises(NotImplementedError, match="shape parameter a"):
        jst.gamma.cdf(1.0, _leaf(2.0))
    with pytest.raises(NotImplementedError, match="chi2.cdf: .* shape parameter df"):
        jst.chi2.cdf(1.0, _leaf(2.0))


def test_poisson():
    k = np.array([0.0, 1.0, 3.0, 7.0, -1.0, 2.5])
    mu = np.array([0.5, 2.0, 3.0, 4.5, 1.0, 2.0])
    for method in ("logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"):
        got = getattr(jst.poisson, method)(k, mu)
        checks.assert_close(got, getattr(scipy.stats.poisson, method)(k, mu), rtol=1e-11)
        checks.gradcheck(lambda m, method=method: getattr(jst.poisson, method)(k[:4], m),
                         (_leaf(mu[:4]),))
    checks.assert_close(jst.poisson.logpmf(k, mu, loc=1), scipy.stats.poisson.logpmf(k, mu, loc=1))
    # d cdf(k) / d mu = -pmf(k)
    m = _leaf(mu[:4])
    jst.poisson.cdf(k[:4], m).sum().backward()
    checks.assert_close(m.grad, -scipy.stats.poisson.pmf(k[:4], mu[:4]), rtol=1e-10)
    with pytest.raises(NotImplementedError, match="poisson.logpmf: k is discrete"):
        jst.poisson.logpmf(_leaf(k), mu)


def test_multivariate_normal():
    a = RNG.standard_normal((3, 3))
    cov = a @ a.T + 2 * np.eye(3)
    mean = RNG.standard_normal(3)
    x = RNG.standard_normal((4, 3))
    for c in (cov, np.array([0.5, 1.0, 2.0]), 1.5):
        checks.assert_close(mvn.logpdf(x, mean, c), scipy.stats.multivariate_normal.logpdf(x, mean, c))
        checks.assert_close(mvn(mean, c).pdf(x[0]), scipy.stats.multivariate_normal(mean, c).pdf(x[0]))
    checks.gradcheck(lambda v: mvn.logpdf(x, mean, v), (_leaf([0.5, 1.0, 2.0]),))
    checks.assert_close(mvn.logcdf(x[:2, :2], mean[:2], cov[:2, :2]),
                        scipy.stats.multivariate_normal.logcdf(x[:2, :2], mean[:2], cov[:2, :2]),
                        rtol=1e-6)
    checks.gradcheck(lambda xx: mvn.logcdf(xx, mean[:2], cov[:2, :2]), (_leaf(x[:2, :2]),),
                     atol=1e-4)
    xb = RNG.standard_normal((2, 2, 3))  # any leading dims
    checks.assert_close(mvn.logpdf(xb, mean, cov), scipy.stats.multivariate_normal.logpdf(xb, mean, cov))
    checks.gradcheck(lambda xx: mvn.logpdf(xx, mean, cov), (_leaf(xb),))
    checks.assert_close(mvn.entropy(mean, cov), scipy.stats.multivariate_normal.entropy(mean, cov))
    checks.assert_close(mvn(mean, 2.0).entropy(), scipy.stats.multivariate_normal(mean, 2.0).entropy())
    checks.gradcheck(lambda c: mvn.entropy(mean, (c + c.T) * 0.5), (_leaf(cov),))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        mvn.logpdf(x, mean, cov, allow_singular=True)


def test_dirichlet():
    alpha = np.array([0.8, 2.0, 3.5])
    x1 = np.array([0.2, 0.3, 0.5])
    xn = np.ascontiguousarray(RNG.dirichlet(alpha, 4).T)  # (K, N): SciPy's layout
    for x in (x1, xn, x1[:2]):
        checks.assert_close(jst.dirichlet.logpdf(x, alpha), scipy.stats.dirichlet.logpdf(x, alpha))
        checks.assert_close(jst.dirichlet.pdf(x, alpha), scipy.stats.dirichlet.pdf(x, alpha))
    checks.gradcheck(jst.dirichlet.logpdf, (_leaf(xn), _leaf(alpha)))
    checks.gradgradcheck(jst.dirichlet.logpdf, (_leaf(x1), _leaf(alpha)))
    for fn in ("mean", "var", "entropy"):
        checks.assert_close(getattr(jst.dirichlet, fn)(alpha), getattr(scipy.stats.dirichlet, fn)(alpha))
        checks.gradcheck(getattr(jst.dirichlet, fn), (_leaf(alpha),))
