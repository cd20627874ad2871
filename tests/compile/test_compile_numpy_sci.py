"""Scientific code written with ``jitgrad.numpy`` compiles whole: a Gaussian mixture
log-likelihood (K = 3 components, N = 500 points) through ``value_and_grad``, with the
argmax of the responsibilities as an auxiliary output (an index result: a row, not a host
read), and the NaN-aware and order-statistic helpers around it.

Each compiled function is checked against eager on two calls with different data (the second
must run the captured program: no retrace, no fallback) and the gradient against central
finite differences."""
import warnings

import numpy as np

import jitgrad
import jitgrad.func as F
import jitgrad.numpy as jnp
from jitgrad.scipy.special import logsumexp

K, N = 3, 500


def _log_joint(params, x):
    """``log w_k + log N(x_n | mu_k, sigma_k^2)``, shape (N, K)."""
    mu, log_sigma, logits = params[0], params[1], params[2]
    log_w = logits - logsumexp(logits)
    z = (x[:, None] - mu[None, :]) / jnp.exp(log_sigma)[None, :]
    return log_w[None, :] - 0.5 * z * z - log_sigma[None, :] - 0.5 * np.log(2 * np.pi)


def mixture_nll(params, x):
    """Negative mean log-likelihood, and the hard assignment ``argmax_k`` responsibility."""
    lj = _log_joint(params, x)
    ll = logsumexp(lj, axis=1)
    resp = jnp.exp(lj - ll[:, None])
    return -jnp.mean(ll), jnp.argmax(resp, axis=1)


def _data(seed):
    rng = np.random.default_rng(seed)
    centers = np.array([-2.0, 0.5, 3.0])
    x = centers[rng.integers(0, K, N)] + rng.standard_normal(N) * 0.6
    params = np.stack([centers + 0.3 * rng.standard_normal(K),
                       np.log(0.5 + 0.3 * rng.random(K)), 0.2 * rng.standard_normal(K)])
    return params, x


def _fd_grad(fn, p, eps=1e-6):
    g = np.zeros_like(p)
    for i in np.ndindex(p.shape):
        up, down = p.copy(), p.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (fn(up) - fn(down)) / (2 * eps)
    return g


def _compiled_calls(cf, calls):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warns: fail loudly here
        return [cf(*args) for args in calls]


def test_mixture_log_likelihood_compiles():
    vg = F.value_and_grad(mixture_nll, has_aux=True)
    cf = jitgrad.compile(vg)
    calls = []
    for seed in (0, 1):
        p, x = _data(seed)
        calls.append((jitgrad.tensor(p), jitgrad.tensor(x)))
    got = _compiled_calls(cf, calls)
    stats = cf.stats()
    assert not stats["fallbacks"], stats["fallbacks"]
    assert stats["traces"] == 1 and stats["cached"] == 1, stats
    for (p, x), ((value, assign), grad) in zip(calls, got):
        (want_value, want_assign), want_grad = vg(p, x)
        np.testing.assert_allclose(value.numpy(), want_value.numpy(), rtol=1e-12)
        np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=1e-10, atol=1e-13)
        assert assign.dtype == jitgrad.int64 and not assign.requires_grad
        np.testing.assert_array_equal(assign.numpy(), want_assign.numpy())
        # the index output is the data's, not the first call's
        lj = _log_joint(p, x).numpy()
        np.testing.assert_array_equal(assign.numpy(), lj.argmax(1))
        pn, xn = p.numpy(), x.numpy()
        fd = _fd_grad(lambda q: mixture_nll(jitgrad.tensor(q), jitgrad.tensor(xn))[0].item(),
                      pn)
        np.testing.assert_allclose(grad.numpy(), fd, rtol=1e-6, atol=1e-8)
    # the two data sets assign differently, so a baked-in first result would show
    assert not np.array_equal(got[0][0][1].numpy()[:50], got[1][0][1].numpy()[:50])


def robust_summary(x):
    """NaN-aware statistics and order statistics of data with missing values."""
    clean = jnp.nan_to_num(x, nan=0.0)
    return (jnp.nanmean(x, axis=1) + jnp.nanstd(x, axis=1) + jnp.nanmax(x, axis=1)
            + jnp.median(clean, axis=1) + jnp.quantile(clean, 0.25, axis=1)
            + jnp.nanmedian(x, axis=1) + jnp.fmax(clean, 0.1).sum(1)
            + jnp.sort(clean, axis=1)[:, -1]).sum()


def test_nan_reductions_and_order_statistics_compile():
    vg = F.value_and_grad(robust_summary)
    cf = jitgrad.compile(vg)
    rng = np.random.default_rng(3)
    calls = []
    for k in range(2):
        x = rng.standard_normal((4, 7))
        x[rng.random((4, 7)) < 0.2] = np.nan  # each call its own NaN pattern
        x[:, 0] = rng.standard_normal(4)  # no all-NaN row
        calls.append((jitgrad.tensor(x),))
    got = _compiled_calls(cf, calls)
    stats = cf.stats()
    assert not stats["fallbacks"], stats["fallbacks"]
    assert stats["traces"] == 1 and stats["cached"] == 1, stats
    for (x,), (value, grad) in zip(calls, got):
        want_value, want_grad = vg(x)
        np.testing.assert_allclose(value.numpy(), want_value.numpy(), rtol=1e-12)
        np.testing.assert_allclose(grad.numpy(), want_grad.numpy(), rtol=1e-12, atol=1e-14)
        xn = x.numpy()
        ref = (np.nanmean(xn, 1) + np.nanstd(xn, 1) + np.nanmax(xn, 1)
               + np.median(np.nan_to_num(xn), 1) + np.quantile(np.nan_to_num(xn), 0.25, 1)
               + np.nanmedian(xn, 1) + np.fmax(np.nan_to_num(xn), 0.1).sum(1)
               + np.sort(np.nan_to_num(xn), 1)[:, -1]).sum()
        np.testing.assert_allclose(value.numpy(), ref, rtol=1e-12)
        finite = ~np.isnan(xn)
        fd = _fd_grad(lambda q: robust_summary(jitgrad.tensor(q)).item(), xn)
        np.testing.assert_allclose(grad.numpy()[finite], fd[finite], rtol=1e-6, atol=1e-7)
        assert np.all(grad.numpy()[~finite] == 0)
