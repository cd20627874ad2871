"""The distributions built from transforms (LogNormal, HalfNormal, HalfCauchy, Gumbel, Weibull,
Pareto, InverseGamma, Kumaraswamy, GeneralizedPareto, LogisticNormal, RelaxedBernoulli,
RelaxedOneHotCategorical) against PyTorch 2.13's values pinned in ``_pinned_transforms.py``,
their gradients against finite differences, and seeded sample moments."""
import math

import numpy as np
import pytest

import jitgrad
import jitgrad.distributions as D
from jitgrad.autograd import gradcheck, gradgradcheck
from jitgrad.distributions.relaxed_bernoulli import LogitRelaxedBernoulli

from _pinned_transforms import PINNED

t = jitgrad.tensor

MAKERS = {
    "LogNormal": (lambda: D.LogNormal(t([0.3, -0.5]), t([0.7, 1.3])), [0.5, 2.0]),
    "HalfNormal": (lambda: D.HalfNormal(t([0.7, 1.3])), [0.5, 2.0]),
    "HalfCauchy": (lambda: D.HalfCauchy(t([0.7, 1.3])), [0.5, 2.0]),
    "Gumbel": (lambda: D.Gumbel(t([0.3, -0.5]), t([0.7, 1.3])), [0.5, 2.0]),
    "Weibull": (lambda: D.Weibull(t([0.7, 1.3]), t([1.5, 2.5])), [0.5, 2.0]),
    "Pareto": (lambda: D.Pareto(t([0.4, 1.1]), t([2.5, 3.5])), [0.5, 2.0]),
    "InverseGamma": (lambda: D.InverseGamma(t([2.5, 3.5]), t([0.7, 1.3])), [0.5, 2.0]),
    "Kumaraswamy": (lambda: D.Kumaraswamy(t([2.0, 0.5]), t([3.0, 2.0])), [0.3, 0.6]),
    "GeneralizedPareto": (lambda: D.GeneralizedPareto(t([0.0, 1.0, 0.0]), t([1.0, 2.0, 1.5]),
                                                      t([0.25, -0.25, 0.0])), [1.0, 2.0, 0.7]),
    "LogisticNormal": (lambda: D.LogisticNormal(t([0.2, -0.4, 0.1]), t([0.5, 1.0, 1.5])),
                       [0.1, 0.2, 0.3, 0.4]),
    "RelaxedBernoulli": (lambda: D.RelaxedBernoulli(t(0.7), probs=t([0.3, 0.8])), [0.2, 0.9]),
    "RelaxedOneHotCategorical": (lambda: D.RelaxedOneHotCategorical(t(0.5),
                                                                    probs=t([0.2, 0.3, 0.5])),
                                 [0.1, 0.6, 0.3]),
}
QUANTILES = {"Kumaraswamy": [0.2, 0.7], "GeneralizedPareto": [0.2, 0.7, 0.4]}


def _cases():
    for name, row in PINNED.items():
        if name in MAKERS:
            for quantity in row:
                yield name, quantity


@pytest.mark.parametrize("name,quantity", list(_cases()))
def test_matches_pytorch(name, quantity):
    make, x = MAKERS[name]
    d = make()
    expected = np.asarray(PINNED[name][quantity], dtype=np.float64)
    if quantity in ("mean", "variance", "mode"):
        got = getattr(d, quantity)
    elif quantity == "entropy":
        got = d.entropy()
    elif quantity == "icdf":
        got = d.icdf(t(QUANTILES.get(name, [0.2, 0.7])))
    else:
        got = getattr(d, quantity)(t(x))
    got = np.asarray(got.detach().numpy(), dtype=np.float64)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12, equal_nan=True)


def test_kumaraswamy_mode_is_the_density_maximum():
    # PyTorch 2.13 returns NaN here; the mode ((a-1)/(ab-1))^(1/a) maximises the density
    d = D.Kumaraswamy(t([2.0, 3.0]), t([3.0, 1.5]))
    mode = d.mode.numpy()
    grid = np.linspace(1e-3, 1 - 1e-3, 20001)
    for i in range(2):
        lp = D.Kumaraswamy(t(float([2.0, 3.0][i])), t(float([3.0, 1.5][i]))).log_prob(t(grid))
        assert abs(grid[int(np.argmax(lp.numpy()))] - mode[i]) < 1e-4
    assert math.isnan(float(D.Kumaraswamy(t(0.5), t(2.0)).mode))


def test_weibull_mode_below_one_is_zero():
    assert float(D.Weibull(t(1.3), t(0.8)).mode) == 0.0


def test_generalized_pareto_outside_support_is_minus_inf():
    d = D.GeneralizedPareto(t([0.0, 0.0]), t([1.0, 1.0]), t([0.5, -0.5]), validate_args=False)
    lp = d.log_prob(t([-1.0, 3.0])).numpy()
    assert lp[0] == -math.inf and lp[1] == -math.inf


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_support_and_shapes_of_samples(name):
    jitgrad.manual_seed(0)
    d = MAKERS[name][0]()
    s = d.sample((5,))
    assert tuple(s.shape) == (5,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(d.support.check(s).all())
    e = d.expand((3,) + tuple(d.batch_shape))
    assert tuple(e.batch_shape) == (3,) + tuple(d.batch_shape)
    np.testing.assert_allclose(e.log_prob(s[0]).numpy()[0], d.log_prob(s[0]).numpy(), rtol=1e-12)


MOMENTS = [
    ("LogNormal", lambda: D.LogNormal(t(0.2), t(0.4))),
    ("HalfNormal", lambda: D.HalfNormal(t(1.5))),
    ("Gumbel", lambda: D.Gumbel(t(0.3), t(1.2))),
    ("Weibull", lambda: D.Weibull(t(1.3), t(2.0))),
    ("Pareto", lambda: D.Pareto(t(1.0), t(5.0))),
    ("InverseGamma", lambda: D.InverseGamma(t(6.0), t(2.0))),
    ("Kumaraswamy", lambda: D.Kumaraswamy(t(2.0), t(3.0))),
    ("GeneralizedPareto", lambda: D.GeneralizedPareto(t(0.5), t(1.0), t(0.1))),
]


@pytest.mark.parametrize("name,make", MOMENTS, ids=[m[0] for m in MOMENTS])
def test_seeded_sample_moments(name, make):
    jitgrad.manual_seed(1234)
    d = make()
    s = d.sample((200000,)).numpy()
    mean, var = float(d.mean), float(d.variance)
    se = math.sqrt(var / s.size)
    assert abs(s.mean() - mean) < 6 * se
    assert abs(s.var() / var - 1) < 0.1


def test_relaxed_samples_concentrate_at_low_temperature():
    jitgrad.manual_seed(3)
    s = D.RelaxedBernoulli(t(0.05), probs=t(0.3)).sample((20000,)).numpy()
    assert abs((s > 0.5).mean() - 0.3) < 0.02
    oh = D.RelaxedOneHotCategorical(t(0.05), probs=t([0.2, 0.3, 0.5])).sample((20000,)).numpy()
    np.testing.assert_allclose(np.bincount(oh.argmax(-1), minlength=3) / 20000, [0.2, 0.3, 0.5],
                               atol=0.02)
    np.testing.assert_allclose(oh.sum(-1), 1.0, rtol=1e-12)


def test_logit_relaxed_bernoulli_density_integrates_to_one():
    d = LogitRelaxedBernoulli(t(0.7), logits=t(0.4))
    grid = np.linspace(-60, 60, 200001)
    p = np.exp(d.log_prob(t(grid)).numpy())
    assert abs(np.trapezoid(p, grid) - 1) < 1e-6


def _leaf(values):
    return t(values, requires_grad=True)


GRADS = [
    ("LogNormal", lambda a, b: D.LogNormal(a, b.exp()), [0.5, 2.0]),
    ("HalfNormal", lambda a, b: D.HalfNormal(a.exp()), [0.5, 2.0]),
    ("HalfCauchy", lambda a, b: D.HalfCauchy(a.exp()), [0.5, 2.0]),
    ("Gumbel", lambda a, b: D.Gumbel(a, b.exp()), [0.5, 2.0]),
    ("Weibull", lambda a, b: D.Weibull(a.exp(), b.exp()), [0.5, 2.0]),
    ("Pareto", lambda a, b: D.Pareto(a.exp() * 0.3, b.exp()), [0.5, 2.0]),
    ("Kumaraswamy", lambda a, b: D.Kumaraswamy(a.exp(), b.exp()), [0.3, 0.6]),
    ("GeneralizedPareto", lambda a, b: D.GeneralizedPareto(a * 0.1, b.exp(), a * 0.2), [1.0, 2.0]),
    ("RelaxedBernoulli", lambda a, b: D.RelaxedBernoulli(b.exp(), logits=a), [0.2, 0.9]),
]


@pytest.mark.parametrize("name,make,x", GRADS, ids=[g[0] for g in GRADS])
def test_log_prob_gradients(name, make, x):
    a, b = _leaf([0.3, -0.2]), _leaf([-0.1, 0.4])
    value = t(x)
    assert gradcheck(lambda a, b: make(a, b).log_prob(value), (a, b))


@pytest.mark.parametrize("name,make,x", GRADS[:5], ids=[g[0] for g in GRADS[:5]])
def test_log_prob_second_order(name, make, x):
    a, b = _leaf([0.3, -0.2]), _leaf([-0.1, 0.4])
    value = t(x)
    assert gradgradcheck(lambda a, b: make(a, b).log_prob(value), (a, b))


@pytest.mark.parametrize("name,make,x", GRADS[:7], ids=[g[0] for g in GRADS[:7]])
def test_rsample_is_reparameterised(name, make, x):
    a, b = _leaf([0.3, -0.2]), _leaf([-0.1, 0.4])

    def draw(a, b):
        jitgrad.manual_seed(7)
        return make(a, b).rsample((3,))
    assert gradcheck(draw, (a, b))


def test_inverse_gamma_gradients_of_log_prob_and_entropy():
    a, b = _leaf([2.5, 3.5]), _leaf([0.7, 1.3])
    value = t([0.5, 2.0])
    assert gradcheck(lambda a, b: D.InverseGamma(a, b).log_prob(value), (a, b))
    assert gradcheck(lambda a, b: D.InverseGamma(a, b).entropy(), (a, b))


def test_logistic_normal_and_relaxed_one_hot_gradients():
    loc, scale = _leaf([0.2, -0.4, 0.1]), _leaf([0.5, 1.0, 1.5])
    y = t([0.1, 0.2, 0.3, 0.4])
    assert gradcheck(lambda m, s: D.LogisticNormal(m, s).log_prob(y), (loc, scale))
    logits, temp = _leaf([0.2, -0.3, 0.5]), _leaf(0.5)
    z = t([0.1, 0.6, 0.3])
    assert gradcheck(lambda l, tt: D.RelaxedOneHotCategorical(tt, logits=l).log_prob(z),
                     (logits, temp))


def test_validation_errors_name_the_parameter():
    with pytest.raises(ValueError, match="scale"):
        D.LogNormal(t(0.0), t(-1.0))
    with pytest.raises(ValueError, match="support"):
        D.HalfNormal(t(1.0)).log_prob(t(-1.0))
