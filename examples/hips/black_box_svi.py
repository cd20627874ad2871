"""Black-box stochastic variational inference (after HIPS autograd's examples/black_box_svi.py;
Ranganath et al. 2014, arXiv:1401.0118, with the reparameterization trick).

The target is Neal's funnel in two dimensions, ``log_sigma ~ N(0, 1.35)`` and
``mu | log_sigma ~ N(0, exp(log_sigma))``, known only through its unnormalized log density. A
diagonal Gaussian ``q = N(mean, diag(exp(2 log_std)))`` is fitted by maximizing a Monte-Carlo
estimate of the evidence lower bound ``E_q[log p(x)] + H[q]`` with Adam: the samples are
``mean + exp(log_std) * eps`` for fixed standard-normal ``eps`` draws, so the estimate is a
differentiable function of the variational parameters.

Run from the repository root: PYTHONPATH=. python examples/hips/black_box_svi.py [--plot]
(``--plot`` draws the target and the fit's contours with matplotlib, passing it tensors).
"""
import sys

import numpy as onp

import jitgrad.numpy as np
from jitgrad.numpy.functional import grad
from jitgrad.numpy.optimizers import adam
from jitgrad.scipy.stats import multivariate_normal, norm


def black_box_variational_inference(logprob, D, num_samples, seed=0):
    """``(objective, gradient, unpack_params)`` for the negative ELBO of a diagonal Gaussian."""
    def unpack_params(params):
        return params[:D], params[D:]  # mean, log_std

    def gaussian_entropy(log_std):
        return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)

    rs = onp.random.RandomState(seed)

    def variational_objective(params, t):
        mean, log_std = unpack_params(params)
        samples = rs.randn(num_samples, D) * np.exp(log_std) + mean
        lower_bound = gaussian_entropy(log_std) + np.mean(logprob(samples, t))
        return -lower_bound

    return variational_objective, grad(variational_objective), unpack_params


def log_density(x, t):
    """Neal's funnel: log p(mu, log_sigma) up to a constant."""
    mu, log_sigma = x[:, 0], x[:, 1]
    return norm.logpdf(log_sigma, 0, 1.35) + norm.logpdf(mu, 0, np.exp(log_sigma))


def plot_isocontours(ax, func, xlimits=(-2, 2), ylimits=(-4, 2), numticks=101, **kwargs):
    x = np.linspace(*xlimits, num=numticks)
    y = np.linspace(*ylimits, num=numticks)
    X, Y = np.meshgrid(x, y)
    zs = func(np.concatenate([np.atleast_2d(np.ravel(X)), np.atleast_2d(np.ravel(Y))]).T)
    ax.contour(X, Y, zs.reshape(X.shape), **kwargs)  # 2-d tensors straight to matplotlib


def main(num_samples=2000, num_iters=500, step_size=0.1, seed=0, report_every=100, plot=False):
    """Fit q; print the ELBO estimate as it improves; return the final (mean, log_std)."""
    D = 2
    objective, gradient, unpack_params = black_box_variational_inference(
        log_density, D, num_samples, seed)

    def callback(params, t, g):
        if t % report_every == 0 or t == num_iters - 1:
            print(f"iteration {t:5d}   lower bound {-objective(params, t):10.4f}")

    init = np.concatenate([-1 * np.ones(D), -5 * np.ones(D)])  # mean, log_std
    params = adam(gradient, init, step_size=step_size, num_iters=num_iters, callback=callback)
    mean, log_std = unpack_params(params)
    print(f"mean {mean}, std {onp.exp(log_std)}")
    if plot:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 6))
        plot_isocontours(ax, lambda x: np.exp(log_density(x, 0)))
        plot_isocontours(ax, lambda x: multivariate_normal.pdf(
            x, mean, np.diag(np.exp(2 * np.asarray(log_std)))), colors="k",
            alpha=0.8)
        ax.set_title("target (colour) and variational fit (black)")
        plt.show()
    return mean, log_std


if __name__ == "__main__":
    main(plot="--plot" in sys.argv)
