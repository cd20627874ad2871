"""Maximum-likelihood fit with jitgrad.scipy.optimize.minimize: logistic regression of O-ring
damage on launch temperature for the 23 pre-Challenger Space Shuttle flights (Dalal, Fowlkes
and Hoadley, JASA 1989). The model is plain NumPy code written against ``jitgrad.numpy``; the
optimiser gets exact gradients and Hessian-vector products, and standard errors come from the
exact Hessian of the negative log-likelihood.

Run from the repository root: PYTHONPATH=. python examples/fit_mle.py
"""
import time

import numpy as onp

import jitgrad.numpy as np
from jitgrad.numpy.functional import hessian
from jitgrad.scipy.optimize import minimize
from jitgrad.scipy.special import expit

# launch temperature (deg F) and whether any O-ring showed thermal distress
TEMP = onp.array([66, 70, 69, 68, 67, 72, 73, 70, 57, 63, 70, 78, 67, 53, 67, 75, 70, 81, 76, 79,
                  75, 76, 58], dtype=float)
DAMAGE = onp.array([0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1],
                   dtype=float)


def neg_log_likelihood(params, t, y):
    """-sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)], p_i = expit(a + b t_i), written stably
    as sum_i [logaddexp(0, eta_i) - y_i eta_i]."""
    a, b = params[0], params[1]
    eta = a + b * t
    return np.sum(np.logaddexp(0.0, eta) - y * eta)


def main():
    results = {}
    for method in ("BFGS", "trust-ncg", "Newton-CG"):
        start = time.perf_counter()
        res = minimize(neg_log_likelihood, onp.zeros(2), args=(TEMP, DAMAGE), method=method,
                       options={"xtol": 1e-10} if method == "Newton-CG" else None)
        results[method] = res
        print(f"{method:10s} success={res.success} a={res.x[0]:.4f} b={res.x[1]:.5f} "
              f"-logL={res.fun:.5f} nfev={res.nfev} ({time.perf_counter() - start:.3f} s)")
    best = results["trust-ncg"]
    H = hessian(neg_log_likelihood)(best.x, TEMP, DAMAGE)
    se = onp.sqrt(onp.diag(onp.linalg.inv(H)))
    print(f"MLE: intercept {best.x[0]:.4f} (se {se[0]:.4f}), slope {best.x[1]:.5f} per deg F "
          f"(se {se[1]:.5f})")
    p31 = float(expit(best.x[0] + best.x[1] * 31.0).item())
    print(f"Estimated probability of O-ring damage at 31 deg F (the launch morning): {p31:.4f}")


if __name__ == "__main__":
    main()
