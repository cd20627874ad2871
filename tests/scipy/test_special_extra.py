"""The jitgrad.scipy.special functions whose forward is SciPy's own (erfc erfinv erfcinv
log_ndtr ndtri i0 i1 i0e i1e gammainc gammaincc betainc) and the composites (softmax,
log_softmax, log_expit, multigammaln, logsumexp(return_sign)): forward vs SciPy in float64,
gradients and second derivatives vs central differences."""
import numpy as np
import pytest
import scipy.special

import jitgrad
from jitgrad.scipy import special as jsp
from jitgrad.testing import checks

RNG = np.random.default_rng(19)


def _leaf(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


UNARY = [
    ("erfc", RNG.uniform(-3, 3, (2, 3))), ("erfinv", RNG.uniform(-0.95, 0.95, (2, 3))),
    ("erfcinv", RNG.uniform(0.05, 1.95, (5,))), ("log_ndtr", RNG.uniform(-8, 4, (5,))),
    ("ndtri", RNG.uniform(0.02, 0.98, (5,))), ("i0", RNG.uniform(-3, 3, (5,))),
    ("i1", np.array([-2.0, -0.3, 0.0, 0.4, 2.5])), ("i0e", np.array([-2.0, -0.3, 0.4, 2.5])),
    ("i1e", np.array([-2.0, -0.3, 0.0, 0.4, 2.5])),
]


@pytest.mark.parametrize("name,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_forward_grad_gradgrad(name, x):
    fn = getattr(jsp, name)
    checks.assert_close(fn(_leaf(x)), getattr(scipy.special, name)(x), rtol=1e-12, atol=1e-14)
    checks.gradcheck(fn, (_leaf(x),))
    x2 = x[x != 0] if name in ("i0e",) else x
    checks.gradgradcheck(fn, (_leaf(x2),))


def test_tails_are_accurate():
    checks.assert_close(jsp.erfc(np.array([10.0, 26.0])), scipy.special.erfc([10.0, 26.0]),
                        rtol=1e-13, atol=0)
    checks.assert_close(jsp.ndtr(np.array([-12.0, -30.0])), scipy.special.ndtr([-12.0, -30.0]),
                        rtol=1e-11, atol=0)  # was 0 through 1 + erf
    x = _leaf([-40.0, -10.0])
    y = jsp.log_ndtr(x)
    checks.assert_close(y, scipy.special.log_ndtr([-40.0, -10.0]), rtol=1e-13)
    y.sum().backward()
    # d/dx log ndtr(x) -> -x (Mills ratio) in the left tail
    checks.assert_close(x.grad, np.exp(-0.5 * np.array([1600.0, 100.0]) - 0.5 * np.log(2 * np.pi)
                                       - scipy.special.log_ndtr([-40.0, -10.0])), rtol=1e-12)


def test_bessel_derivative_at_zero_is_a_half():
    for fn in (jsp.i1, jsp.i1e):
        x = _leaf([0.0])
        fn(x).sum().backward()
        checks.assert_close(x.grad, [0.5])


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma(name):
    a = np.array([0.7, 1.0, 3.5])
    x = RNG.uniform(0.1, 4.0, (2, 3))
    fn = getattr(jsp, name)
    checks.assert_close(fn(a, _leaf(x)), getattr(scipy.special, name)(a, x), rtol=1e-12)
    checks.gradcheck(lambda t: fn(a, t), (_leaf(x),))
    checks.gradgradcheck(lambda t: fn(a, t), (_leaf(x),))
    with pytest.raises(NotImplementedError, match=f"{name}: the derivative with respect to the "
                                                  "shape parameter a"):
        fn(_leaf(a), x)


def test_incomplete_beta():
    a, b = np.array([0.6, 2.0, 3.0]), 1.7
    x = RNG.uniform(0.05, 0.95, (2, 3))
    checks.assert_close(jsp.betainc(a, b, _leaf(x)), scipy.special.betainc(a, b, x), rtol=1e-12)
    checks.gradcheck(lambda t: jsp.betainc(a, b, t), (_leaf(x),))
    checks.gradgradcheck(lambda t: jsp.betainc(a, b, t), (_leaf(x),))
    with pytest.raises(NotImplementedError, match="betainc: .* shape parameter b"):
        jsp.betainc(a, _leaf(b), x)


def test_softmax_log_softmax_log_expit_multigammaln():
    z = RNG.standard_normal((2, 3))
    for axis in (None, 0, 1, (0, 1)):
        checks.assert_close(jsp.softmax(_leaf(z), axis=axis), scipy.special.softmax(z, axis=axis))
        checks.assert_close(jsp.log_softmax(_leaf(z), axis=axis),
                            scipy.special.log_softmax(z, axis=axis))
        checks.gradcheck(lambda t, axis=axis: jsp.log_softmax(t, axis=axis) * t, (_leaf(z),))
    x = np.array([-60.0, -2.0, 0.0, 3.0, 60.0])
    checks.assert_close(jsp.log_expit(_leaf(x)), scipy.special.log_expit(x), rtol=1e-13)
    checks.gradcheck(jsp.log_expit, (_leaf(x[1:4]),))
    a = np.array([2.5, 4.0])
    checks.assert_close(jsp.multigammaln(_leaf(a), 3), scipy.special.multigammaln(a, 3))
    checks.gradcheck(lambda t: jsp.multigammaln(t, 3), (_leaf(a),))
    with pytest.raises(ValueError, match="a > \\(d-1\\)/2"):
        jsp.multigammaln(0.5, 3)


def test_logsumexp_return_sign():
    a = RNG.standard_normal((2, 3))
    b = np.array([[1.0, -2.0, 0.5], [-1.0, -1.0, 0.2]])
    for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}):
        out, sign = jsp.logsumexp(_leaf(a), b=b, return_sign=True, **kw)
        ref, ref_sign = scipy.special.logsumexp(a, b=b, return_sign=True, **kw)
        checks.assert_close(out, ref)
        checks.assert_close(sign, ref_sign)
        checks.gradcheck(lambda t, kw=kw: jsp.logsumexp(t, b=b, return_sign=True, **kw)[0],
                         (_leaf(a),))


def test_forward_mode_and_vmap():
    import jitgrad.func as func
    from jitgrad.scipy import linalg as jla
    from jitgrad.scipy import signal as jsig

    x = np.array([0.2, -0.4, 0.7])
    v = np.array([1.0, -0.5, 2.0])
    rows = [jsp.erfinv, jsp.i1e, jsp.log_ndtr, lambda t: jsp.gammainc(np.array([0.5, 2.0, 3.0]),
                                                                        t * t + 0.1)]
    for fn in rows:
        out, tangent = func.jvp(fn, (jitgrad.tensor(x),), (jitgrad.tensor(v),))
        leaf = _leaf(x)
        (fn(leaf) * jitgrad.tensor(v)).sum().backward()  # elementwise: jvp = grad * v
        checks.assert_close(tangent, leaf.grad.numpy(), rtol=1e-12)
        batch = np.stack([x, 0.5 * x])
        checks.assert_close(func.vmap(fn)(jitgrad.tensor(batch)),
                            np.stack([fn(jitgrad.tensor(r)).numpy() for r in batch]))
    checks.assert_close(func.jacfwd(jsp.erfc)(jitgrad.tensor(x)),
                        func.jacrev(jsp.erfc)(jitgrad.tensor(x)), rtol=1e-12)
    w = np.array([0.5, -1.0])
    for f, args in ((lambda a, b: jsig.convolve(a, b, "same"), (x, w)),
                    (jla.sqrtm, (np.array([[2.0, 0.3], [0.1, 1.0]]),)),
                    (jla.solve_sylvester, (np.diag([2.0, 3.0]), np.array([[1.0, 0.2], [0.0, 1.5]]),
                                           np.ones((2, 2))))):
        tangents = tuple(jitgrad.tensor(RNG.standard_normal(np.shape(a))) for a in args)
        _, tangent = func.jvp(f, tuple(jitgrad.tensor(a) for a in args), tangents)
        eps = 1e-6  # central difference along the tangent
        plus = f(*(jitgrad.tensor(a + eps * t.numpy()) for a, t in zip(args, tangents)))
        minus = f(*(jitgrad.tensor(a - eps * t.numpy()) for a, t in zip(args, tangents)))
        checks.assert_close(tangent, (plus.numpy() - minus.numpy()) / (2 * eps), rtol=1e-6,
                            atol=1e-8)


@pytest.mark.parametrize("name", ["j0", "j1", "y0", "y1"])
def test_bessel_integer_order(name):
    x = np.array([0.3, 1.2, 2.5, 7.0])
    fn = getattr(jsp, name)
    checks.assert_close(fn(_leaf(x)), getattr(scipy.special, name)(x), rtol=1e-12, atol=1e-15)
    checks.gradcheck(fn, (_leaf(x),))


@pytest.mark.parametrize("name", ["jv", "yv", "iv", "ive", "jn", "yn"])
def test_bessel_real_order(name):
    x = np.array([0.4, 1.3, 3.0])
    v = np.array([2.0, 0.0, 3.0]) if name in ("jn", "yn") else np.array([0.5, 1.5, -0.7])
    fn = getattr(jsp, name)
    checks.assert_close(fn(v, _leaf(x)), getattr(scipy.special, name)(v, x), rtol=1e-12)
    checks.gradcheck(lambda t: fn(v, t), (_leaf(x),))
    checks.gradgradcheck(lambda t: fn(v, t), (_leaf(x),))
    with pytest.raises(NotImplementedError, match=f"{name}: .* shape parameter v"):
        fn(_leaf(v), x)


def test_ive_negative_x_and_rgamma_gammasgn():
    x = np.array([-2.0, -0.5, 0.7])
    checks.assert_close(jsp.ive(2.0, x), scipy.special.ive(2.0, x), rtol=1e-12)
    checks.gradcheck(lambda t: jsp.ive(2.0, t), (_leaf(x),))
    p = np.array([0.4, 1.5, 4.0])
    checks.assert_close(jsp.rgamma(_leaf(p)), scipy.special.rgamma(p), rtol=1e-12)
    checks.gradcheck(jsp.rgamma, (_leaf(p),))
    g = np.array([-1.5, -0.5, 2.0])
    checks.assert_close(jsp.gammasgn(g), scipy.special.gammasgn(g))
    t = _leaf(g)
    jsp.gammasgn(t).sum().backward()
    checks.assert_close(t.grad, np.zeros(3))


@pytest.mark.parametrize("name,params", [("gammaincinv", ([0.7, 2.0, 3.0],)),
                                         ("betaincinv", (1.5, [0.7, 2.0, 3.0])),
                                         ("stdtrit", ([0.7, 2.0, 30.0],))])
def test_inverse_incomplete(name, params):
    q = np.array([0.1, 0.5, 0.8])
    params = tuple(np.asarray(p) for p in params)
    fn = getattr(jsp, name)
    checks.assert_close(fn(*params, _leaf(q)), getattr(scipy.special, name)(*params, q),
                        rtol=1e-12)
    checks.gradcheck(lambda t: fn(*params, t), (_leaf(q),))
    checks.gradgradcheck(lambda t: fn(*params, t), (_leaf(q),))
    t = np.array([-1.0, 0.4, 2.0])
    checks.assert_close(jsp.stdtr(3.0, t), scipy.special.stdtr(3.0, t), rtol=1e-12)
