"""Gaussian-process regression with kernel hyperparameters fitted by maximizing the log
marginal likelihood (after HIPS autograd's examples/gaussian_process.py).

The model: ``y = m + f(x) + noise`` with ``f ~ GP(0, k)``, ``k`` a squared-exponential
(RBF) kernel ``s^2 exp(-|x - x'|^2 / (2 l^2))``, and the likelihood
``log N(y; m 1, K + sigma^2 I)`` from ``jitgrad.scipy.stats.multivariate_normal``. The
parameters are one vector ``(m, log sigma^2, log s^2, log l)``; ``jitgrad.scipy.optimize``
minimizes the negative log likelihood with exact gradients, then the predictive mean and
variance are ``m + K*^T (K + sigma^2 I)^-1 (y - m)`` and ``K** - K*^T (K + sigma^2 I)^-1 K*``.

Run from the repository root: PYTHONPATH=. python examples/hips/gaussian_process.py [--plot]
"""
import sys

import numpy as onp

import jitgrad.numpy as np
from jitgrad.numpy.linalg import solve
from jitgrad.scipy.optimize import minimize
from jitgrad.scipy.stats import multivariate_normal as mvn


def make_gp_funs(cov_func, num_cov_params):
    """``(num_params, predict, log_marginal_likelihood)`` for the covariance ``cov_func``."""
    def unpack_kernel_params(params):
        mean = params[0]
        cov_params = params[2:]
        noise_scale = np.exp(params[1]) + 0.0001
        return mean, cov_params, noise_scale

    def predict(params, x, y, xstar):
        """Predictive mean and covariance of the latent f at ``xstar``."""
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_f_f = cov_func(cov_params, xstar, xstar)
        cov_y_f = cov_func(cov_params, x, xstar)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        weights = solve(cov_y_y, cov_y_f)
        return mean + np.dot(weights.T, y - mean), cov_f_f - np.dot(weights.T, cov_y_f)

    def log_marginal_likelihood(params, x, y):
        mean, cov_params, noise_scale = unpack_kernel_params(params)
        cov_y_y = cov_func(cov_params, x, x) + noise_scale * np.eye(len(y))
        return mvn.logpdf(y, mean * np.ones(len(y)), cov_y_y)

    return num_cov_params + 2, predict, log_marginal_likelihood


def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


def build_toy_dataset(n_data=20, noise_std=0.1, seed=0):
    rs = onp.random.RandomState(seed)
    inputs = onp.concatenate([onp.linspace(0, 3, num=n_data // 2),
                              onp.linspace(6, 8, num=n_data - n_data // 2)])
    targets = (onp.cos(inputs) + rs.randn(n_data) * noise_std) / 2.0
    inputs = ((inputs - 4.0) / 2.0).reshape(-1, 1)
    return inputs, targets


def main(n_data=20, seed=0, plot=False):
    """Fit the hyperparameters; print the likelihood before and after; return
    ``(params, log_likelihood)``."""
    num_params, predict, log_marginal_likelihood = make_gp_funs(rbf_covariance, num_cov_params=2)
    X, y = build_toy_dataset(n_data, seed=seed)
    objective = lambda params: -log_marginal_likelihood(params, X, y)  # noqa: E731
    init = 0.1 * onp.random.RandomState(seed).randn(num_params)
    print(f"initial log marginal likelihood {-objective(init):10.4f}")
    result = minimize(objective, init, method="L-BFGS-B")
    params = result.x
    print(f"optimized log marginal likelihood {-objective(params):10.4f}  "
          f"(mean {params[0]:.3f}, noise var {onp.exp(params[1]):.4f}, "
          f"signal var {onp.exp(params[2]):.3f}, lengthscale {onp.exp(params[3]):.3f})")
    if plot:
        import matplotlib.pyplot as plt

        grid = np.reshape(np.linspace(-7, 7, 300), (300, 1))
        pred_mean, pred_cov = predict(params, X, y, grid)
        marg_std = np.sqrt(np.diag(pred_cov))
        fig, ax = plt.subplots(figsize=(8, 4))
        ax.plot(grid, pred_mean, "b")  # tensors straight to matplotlib
        ax.fill_between(np.ravel(grid), pred_mean - 1.96 * marg_std,
                        pred_mean + 1.96 * marg_std, color="b", alpha=0.2)
        ax.plot(X, y, "kx")
        plt.show()
    return params, float(-objective(params))


if __name__ == "__main__":
    main(plot="--plot" in sys.argv)
