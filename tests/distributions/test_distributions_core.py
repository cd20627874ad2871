"""jitgrad.distributions against PyTorch's pinned values (log_prob, cdf, icdf, entropy, moments,
KL divergences), gradients against finite differences, shapes, expand and validation."""
import math
import pathlib
import sys

import numpy as np
import pytest

import jitgrad
import jitgrad.distributions as D
from jitgrad.autograd import gradcheck

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _cases_core import CASES, ICDF_AT, KL_CASES, METHODS  # noqa: E402
from _pinned_core import KL, PINNED  # noqa: E402

BY_ID = {case[0]: case for case in CASES}


def build(cls, params, requires_grad=False, validate_args=None):
    kwargs = {}
    for k, v in params.items():
        if isinstance(v, tuple):
            kwargs[k] = v[1]
        else:
            kwargs[k] = jitgrad.tensor(v, requires_grad=requires_grad and k != "total_count")
    return getattr(D, cls)(**kwargs, validate_args=validate_args)


def statistic(dist, method, value):
    if method == "log_prob":
        return dist.log_prob(jitgrad.tensor(value))
    if method == "cdf":
        return dist.cdf(jitgrad.tensor(value))
    if method == "icdf":
        return dist.icdf(jitgrad.tensor(ICDF_AT))
    if method == "entropy":
        return dist.entropy()
    return getattr(dist, method)


def assert_values(ours, expected, what, rtol=1e-9):
    ours = np.asarray(ours.detach().numpy(), dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert ours.shape == expected.shape, f"{what}: shape {ours.shape} != {expected.shape}"
    np.testing.assert_allclose(ours, expected, rtol=rtol, atol=1e-11, err_msg=what)


# PyTorch's VonMises computes log I0 with a polynomial approximation good to about 1e-8;
# jitgrad's uses the scaled Bessel function of jitgrad.scipy.special (checked against SciPy in
# test_von_mises_against_scipy)
RTOL = {"vonmises": 1e-7}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_statistics_match_pytorch(case):
    case_id, cls, params, value = case
    dist = build(cls, params)
    checked = 0
    for method in METHODS:
        expected = PINNED[case_id][method]
        if expected is None:
            continue
        assert_values(statistic(dist, method, value), expected, f"{case_id}.{method}",
                      RTOL.get(case_id, 1e-9))
        checked += 1
    assert checked >= 1


# PyTorch's KL between a continuous Bernoulli and a uniform gives inf when the uniform's end
# points touch [0, 1] (it tests the nesting of the supports with >= / <=); the divergence is
# finite there, and jitgrad computes it: those elements are checked by quadrature instead
BOUNDARY = {"cb_uniform": [0, 1], "uniform01_cb": [0]}


def _kl_by_quadrature(p, q, i, low, high):
    integrate = pytest.importorskip("scipy.integrate")

    def integrand(x):
        v = jitgrad.tensor([x] * 3)
        lp, lq = p.log_prob(v).numpy()[i], q.log_prob(v).numpy()[i]
        return math.exp(lp) * (lp - lq)

    return integrate.quad(integrand, low, high, epsabs=1e-12, epsrel=1e-10)[0]


@pytest.mark.parametrize("kl_case", KL_CASES, ids=[c[0] for c in KL_CASES])
def test_kl_divergence_matches_pytorch(kl_case):
    kl_id, p_spec, q_spec = kl_case
    p = build(*BY_ID[p_spec][1:3]) if isinstance(p_spec, str) else build(*p_spec)
    q = build(*q_spec)
    ours = D.kl_divergence(p, q)
    expected = np.array(KL[kl_id], dtype=float)
    for i in BOUNDARY.get(kl_id, []):
        assert expected[i] == math.inf
        p_ = build(*(BY_ID[p_spec][1:3] if isinstance(p_spec, str) else p_spec),
                   validate_args=False)
        q_ = build(*q_spec, validate_args=False)
        lo, hi = (0.0, 1.0) if kl_id.startswith("cb") else (p.low[i].item(), p.high[i].item())
        expected[i] = _kl_by_quadrature(p_, q_, i, lo, hi)
    assert_values(ours, expected, kl_id, rtol=1e-9 if kl_id not in BOUNDARY else 1e-7)


# gradients: every differentiable statistic against finite differences -----------------------

GRAD_CASES = [c for c in CASES if c[0] not in ("categorical_p", "onehot", "multinomial")]


def _sym(a):
    return (a + a.mT) / 2


# matrix parameters are read through one triangle: differentiate through the map that makes an
# unconstrained matrix a valid one, so that finite differences see every entry
SHAPERS = {"covariance_matrix": _sym, "precision_matrix": _sym, "scale_tril": jitgrad.tril}


def _shaped(names, ts):
    return {k: SHAPERS.get(k, lambda t: t)(t) for k, t in zip(names, ts)}


def _grad_inputs(case_id, params, value):
    """The float parameters and (for continuous cases) the value, as leaves requiring grad."""
    names = [k for k, v in params.items() if not isinstance(v, tuple) and k != "total_count"]
    leaves = [jitgrad.tensor(params[k], requires_grad=True) for k in names]
    return names, leaves


DISCRETE = {"Bernoulli", "Geometric", "Poisson", "Binomial", "NegativeBinomial", "Categorical",
            "OneHotCategorical", "Multinomial"}
# parameterisations whose value is constrained by more than a box (gradcheck would leave it)
STRUCTURED = {"Dirichlet", "MultivariateNormal", "LowRankMultivariateNormal"}


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_log_prob_and_entropy_gradients(case):
    case_id, cls, params, value = case
    names, leaves = _grad_inputs(case_id, params, value)
    fixed = {k: v for k, v in params.items() if k not in names}
    with_value = cls not in DISCRETE | STRUCTURED

    def make(*ts):
        kwargs = {k: (v[1] if isinstance(v, tuple) else jitgrad.tensor(v))
                  for k, v in fixed.items()}
        kwargs.update(_shaped(names, ts))
        return getattr(D, cls)(**kwargs, validate_args=False)

    if with_value:
        leaves.append(jitgrad.tensor(value, requires_grad=True))

        def log_prob(*ts):
            return make(*ts[:-1]).log_prob(ts[-1])
    else:
        v = jitgrad.tensor(value)

        def log_prob(*ts):
            return make(*ts).log_prob(v)
    assert gradcheck(log_prob, tuple(leaves))
    params_only = tuple(leaves[:len(names)])
    dist = make(*params_only)
    for method in ("entropy", "mean", "variance"):
        try:
            out = getattr(dist, method)() if method == "entropy" else getattr(dist, method)
        except NotImplementedError:
            continue
        if not np.isfinite(out.detach().numpy()).all():
            continue  # (a nan mean or infinite variance has no derivative)
        if method == "entropy":
            assert gradcheck(lambda *ts: make(*ts).entropy(), params_only)
        else:
            assert gradcheck(lambda *ts, m=method: getattr(make(*ts), m), params_only)


@pytest.mark.parametrize("cls, params, value", [
    ("Normal", {"loc": [0.1, -0.4], "scale": [0.7, 1.5]}, [0.3, 0.2]),
    ("Gamma", {"concentration": [0.7, 2.5], "rate": [0.5, 1.5]}, [0.3, 2.2]),
    ("Laplace", {"loc": [0.1, -0.4], "scale": [0.7, 1.5]}, [0.3, 0.2]),
    ("StudentT", {"df": [2.5, 6.0], "loc": [0.1, -0.4], "scale": [0.7, 1.5]}, [0.3, 0.2]),
    ("Beta", {"concentration1": [0.7, 2.5], "concentration0": [3.0, 1.5]}, [0.3, 0.8]),
])
def test_second_order_gradients(cls, params, value):
    from jitgrad.autograd import gradgradcheck
    names = list(params)
    leaves = tuple(jitgrad.tensor(params[k], requires_grad=True) for k in names) \
        + (jitgrad.tensor(value, requires_grad=True),)

    def log_prob(*ts):
        return getattr(D, cls)(**dict(zip(names, ts[:-1])), validate_args=False).log_prob(ts[-1])

    assert gradgradcheck(log_prob, leaves)
    assert gradgradcheck(lambda *ts: getattr(D, cls)(**dict(zip(names, ts))).entropy(),
                         leaves[:-1])


@pytest.mark.parametrize("cls, params", [
    ("Normal", {"loc": [0.1, -0.4], "scale": [0.7, 1.5]}),
    ("Laplace", {"loc": [0.1, -0.4], "scale": [0.7, 1.5]}),
    ("Cauchy", {"loc": [0.1, -0.4], "scale": [0.7, 1.5]}),
    ("Exponential", {"rate": [0.7, 1.5]}),
    ("Uniform", {"low": [0.1, -0.4], "high": [0.7, 1.5]}),
    ("ContinuousBernoulli", {"probs": [0.3, 0.8]}),
    ("ContinuousBernoulli", {"probs": [0.4995, 0.5005]}),  # inside lims: the Taylor forms
])
def test_cdf_icdf_gradients_and_round_trip(cls, params):
    names = list(params)
    leaves = tuple(jitgrad.tensor(params[k], requires_grad=True) for k in names)
    x = jitgrad.tensor([0.35, 0.45], requires_grad=True)
    q = jitgrad.tensor([0.2, 0.7], requires_grad=True)

    def make(ts):
        return getattr(D, cls)(**dict(zip(names, ts)), validate_args=False)

    assert gradcheck(lambda *ts: make(ts[:-1]).cdf(ts[-1]), leaves + (x,))
    assert gradcheck(lambda *ts: make(ts[:-1]).icdf(ts[-1]), leaves + (q,))
    d = make(leaves)
    np.testing.assert_allclose(d.cdf(d.icdf(q)).detach().numpy(), q.detach().numpy(),
                               rtol=1e-12)


def test_gamma_cdf_is_differentiable_once_in_the_concentration():
    a = jitgrad.tensor([0.3, 1.5, 7.0], requires_grad=True)
    rate = jitgrad.tensor([1.0, 2.0, 0.5], requires_grad=True)
    x = jitgrad.tensor([0.2, 1.0, 9.0], requires_grad=True)
    assert gradcheck(lambda a, r, x: D.Gamma(a, r).cdf(x), (a, rate, x))
    g, = jitgrad.autograd.grad(D.Gamma(a, rate).cdf(x).sum(), a, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiable once"):
        jitgrad.autograd.grad(g.sum(), a)


def test_gamma_rsample_is_differentiable_once_in_the_concentration():
    a = jitgrad.tensor([0.5, 3.0], requires_grad=True)
    x = D.Gamma(a, 2.0).rsample((3,))
    g, = jitgrad.autograd.grad(x.sum(), a, create_graph=True)
    assert np.all(np.isfinite(g.detach().numpy()))
    with pytest.raises(RuntimeError, match="differentiable once"):
        jitgrad.autograd.grad(g.sum(), a)


@pytest.mark.parametrize("kl_id", ["normal_normal", "gamma_gamma", "beta_beta", "mvn_mvn",
                                   "dirichlet_dirichlet", "laplace_normal", "exp_gamma",
                                   "bernoulli_bernoulli", "categorical_categorical",
                                   "mvn_lowrank", "poisson_poisson", "uniform_normal",
                                   "normal_laplace", "beta_normal", "uniform01_beta",
                                   "cb_cb", "beta_cb", "gumbel_gumbel",
                                   "gamma_gumbel", "gumbel_normal",
                                   "wishart_wishart", "lognormal_lognormal", "geometric_geometric",
                                   "binomial_binomial", "cauchy_cauchy", "laplace_laplace"])
def test_kl_gradients(kl_id):
    _, p_spec, (q_cls, q_params) = next(c for c in KL_CASES if c[0] == kl_id)
    p_cls, p_params = BY_ID[p_spec][1:3] if isinstance(p_spec, str) else p_spec
    p_names = [k for k, v in p_params.items() if not isinstance(v, tuple) and k != "total_count"]
    q_names = [k for k, v in q_params.items() if not isinstance(v, tuple) and k != "total_count"]
    leaves = tuple(jitgrad.tensor(p_params[k], requires_grad=True) for k in p_names) + tuple(
        jitgrad.tensor(q_params[k], requires_grad=True) for k in q_names)

    def kl(*ts):
        p = getattr(D, p_cls)(**_shaped(p_names, ts[:len(p_names)]), validate_args=False)
        q = getattr(D, q_cls)(**_shaped(q_names, ts[len(p_names):]), validate_args=False)
        return D.kl_divergence(p, q)

    assert gradcheck(kl, leaves)
