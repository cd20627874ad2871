"""Differentiating through a fixed-point solver (after HIPS autograd's examples/fixed_points.py).

``sqrt(a)`` is computed by iterating a map whose fixed point is the square root, Newton's
``x -> (x + a / x) / 2`` or a damped gradient step ``x -> x - 0.05 (x^2 - a)``.
``fixed_point`` differentiates the *solution*, not the iterations: by the implicit function
theorem the first and second derivatives match ``d sqrt(a)/da = 1 / (2 sqrt(a))`` and
``-1 / (4 a^1.5)`` to the solver's tolerance, whatever the number of iterations.

Run from the repository root: PYTHONPATH=. python examples/hips/fixed_points.py
"""
import jitgrad.numpy as np
from jitgrad.numpy.functional import fixed_point, grad


def newton_sqrt_step(a):
    return lambda x: 0.5 * (x + a / x)


def descent_sqrt_step(a):
    return lambda x: x - 0.05 * (x ** 2 - a)


def distance(x, y):
    return np.abs(x - y)


def solver_sqrt(a, step=newton_sqrt_step, guess=10.0, tol=1e-10):
    return fixed_point(step, a, guess, distance, tol)


def main(a=2.0, tol=1e-10):
    """Print sqrt(a) and its first two derivatives, exact vs through the solver; return the
    solver's three values."""
    rows = []
    for name, step in (("newton", newton_sqrt_step), ("descent", descent_sqrt_step)):
        sqrt = lambda v: solver_sqrt(v, step, tol=tol)  # noqa: E731
        values = (sqrt(a), grad(sqrt)(a), grad(grad(sqrt))(a))
        exact = (np.sqrt(a), grad(np.sqrt)(a), grad(grad(np.sqrt))(a))
        for label, got, ref in zip(("value", "d/da", "d2/da2"), values, exact):
            print(f"{name:8s} {label:7s} solver {got: .12f}   exact {ref: .12f}")
        rows.append(values)
    return rows


if __name__ == "__main__":
    main()
