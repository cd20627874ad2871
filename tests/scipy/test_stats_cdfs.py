"""jitgrad.scipy.stats.t (logpdf, pdf, cdf) and multivariate_normal.cdf against SciPy;
gradients against central differences and against closed forms (dF/dx = pdf)."""
import numpy as np
import pytest
import scipy.stats

import jitgrad
from jitgrad.autograd import gradgradcheck
from jitgrad.scipy import stats as jst
from jitgrad.testing import checks


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 3)) * 2.5
DF = np.array([0.7, 4.0, 45.0])


@pytest.mark.parametrize("fn", ["logpdf", "pdf", "cdf"])
def test_t_forward_matches_scipy(fn):
    for loc, scale in ((0.0, 1.0), (0.4, 1.8), (np.array([-1.0, 0.0, 2.0]), np.array([0.5, 1.0, 3.0]))):
        checks.assert_close(getattr(jst.t, fn)(X, DF, loc, scale),
                            getattr(scipy.stats.t, fn)(X, DF, loc, scale), rtol=1e-10, atol=1e-14)
    checks.assert_close(getattr(jst.t, fn)(X, 3.0), getattr(scipy.stats.t, fn)(X, 3.0), rtol=1e-10)


def test_t_cdf_gradients_fd_and_closed_form():
    loc, scale = 0.3, 1.7
    checks.gradcheck(lambda x, l, s: jst.t.cdf(x, DF, l, s), (_leaf(X), _leaf(loc), _leaf(scale)))
    assert gradgradcheck(lambda x, l, s: jst.t.cdf(x, DF, l, s), (_leaf(X), _leaf(loc), _leaf(scale)))
    x, l, s = _leaf(X), _leaf(loc), _leaf(scale)
    jst.t.cdf(x, DF, l, s).sum().backward()
    pdf = scipy.stats.t.pdf(X, DF, loc, scale)
    z = (X - loc) / scale
    checks.assert_close(x.grad, pdf, rtol=1e-10)                    # dF/dx = pdf
    checks.assert_close(l.grad, -pdf.sum(), rtol=1e-10)             # dF/dloc = -pdf
    checks.assert_close(s.grad, -(z * pdf).sum(), rtol=1e-10)       # dF/dscale = -z pdf


def test_t_cdf_df_requires_grad_raises():
    with pytest.raises(NotImplementedError, match="df"):
        jst.t.cdf(_leaf(X), _leaf(DF))
    # df as a constant Tensor is fine
    checks.assert_close(jst.t.cdf(X, jitgrad.tensor(DF)), scipy.stats.t.cdf(X, DF))


def test_t_logpdf_gradient_in_every_argument():
    checks.gradcheck(lambda x, d, l, s: jst.t.logpdf(x, d, l, s),
                     (_leaf(X), _leaf(DF), _leaf(0.2), _leaf(1.3)))
    d = _leaf(DF)
    jst.t.logpdf(X, d).sum().backward()
    # d/d df logpdf = (psi((v+1)/2) - psi(v/2) - 1/v - log1p(x^2/v) + (v+1) x^2 / (v^2 (1 + x^2/v))) / 2
    from scipy.special import digamma

    v = DF
    expected = 0.5 * (digamma((v + 1) / 2) - digamma(v / 2) - 1 / v - np.log1p(X ** 2 / v)
                      + (v + 1) * X ** 2 / (v * v * (1 + X ** 2 / v)))
    checks.assert_close(d.grad, expected.sum(0), rtol=1e-9)


C2 = np.array([[1.0, 0.5], [0.5, 2.0]])
C3 = np.array([[1.0, 0.5, 0.2], [0.5, 2.0, 0.3], [0.2, 0.3, 1.5]])


def test_mvn_cdf_bivariate_exact_forward_and_gradients():
    x, m = RNG.standard_normal((4, 2)), np.array([0.1, -0.3])
    checks.assert_close(jst.multivariate_normal.cdf(x, m, C2),
                        scipy.stats.multivariate_normal.cdf(x, m, C2), rtol=1e-12)
    checks.gradcheck(lambda a, mu: jst.multivariate_normal.cdf(a, mu, C2), (_leaf(x), _leaf(m)))
    # closed form: dF/dx_1 = phi(x_1; S_11) * Phi((x_2 - S_21 x_1 / S_11) / sqrt(S_22 - S_21^2/S_11))
    p = _leaf(x[0])
    jst.multivariate_normal.cdf(p, None, C2).backward()
    x1, x2 = x[0]
    expected = scipy.stats.norm.pdf(x1, 0, 1.0) * scipy.stats.norm.cdf(
        (x2 - 0.5 * x1) / np.sqrt(2.0 - 0.25))
    checks.assert_close(p.grad[0], expected, rtol=1e-12)


def test_mvn_cdf_univariate_and_trivariate():
    x1 = RNG.standard_normal((3, 1))
    checks.assert_close(jst.multivariate_normal.cdf(x1, None, 2.0),
                        scipy.stats.multivariate_normal.cdf(x1, None, 2.0), rtol=1e-12)
    p = _leaf(x1)
    jst.multivariate_normal.cdf(p, None, 2.0).sum().backward()
    checks.assert_close(p.grad, scipy.stats.norm.pdf(x1, 0, np.sqrt(2.0)), rtol=1e-12)
    x3 = np.array([0.3, -0.2, 0.5])
    got = jst.multivariate_normal.cdf(x3, None, C3)
    assert abs(float(got) - scipy.stats.multivariate_normal.cdf(x3, None, C3)) < 1e-5
    p = _leaf(x3)
    jst.multivariate_normal.cdf(p, None, C3, abseps=1e-9, releps=1e-9).backward()
    h = 1e-3
    fd = [(scipy.stats.multivariate_normal.cdf(x3 + h * e, cov=C3, abseps=1e-10, releps=1e-10, rng=0)
           - scipy.stats.multivariate_normal.cdf(x3 - h * e, cov=C3, abseps=1e-10, releps=1e-10, rng=0))
          / (2 * h) for e in np.eye(3)]
    checks.assert_close(p.grad, np.array(fd), rtol=1e-5, atol=1e-8)


def test_mvn_cdf_refuses_cov_gradient_and_second_derivatives():
    with pytest.raises(NotImplementedError, match="cov"):
        jst.multivariate_normal.cdf(np.zeros(2), None, _leaf(C2))
    x = _leaf(RNG.standard_normal((2, 2)))
    (g,) = jitgrad.autograd.grad(jst.multivariate_normal.cdf(x, None, C2).sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="second derivatives"):
        g.sum().backward()
