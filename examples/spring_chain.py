"""Gradient of a physics simulation written once against the NumPy API: the W6 workload
(asv_bench/benchmarks/workloads.py), N unit masses joined by springs between two walls, 100
explicit Euler steps from rest; the final energy as a function of the initial positions.

The same ``energy(np, ...)`` runs with ``jitgrad.numpy`` (value and gradient), with HIPS
``autograd.numpy`` (value and gradient, if installed) and with plain NumPy (forward only, the
floor), and prints the median time of each in one run.

Run from the repository root: PYTHONPATH=. python examples/spring_chain.py [N]
"""
import statistics
import sys
import time

import numpy

STEPS, K, L, DT = 100, 1.0, 1.0, 0.01


def energy(np, x, v, left, right):
    """Final kinetic + elastic energy after STEPS Euler steps (``np``: any NumPy namespace)."""
    def extensions(x):
        xp = np.concatenate([left, x, right])
        return xp[1:] - xp[:-1] - L

    for _ in range(STEPS):
        d = extensions(x)
        force = (d[1:] - d[:-1]) * K
        x, v = x + v * DT, v + force * DT
    d = extensions(x)
    return 0.5 * np.sum(v * v) + (0.5 * K) * np.sum(d * d)


def _median_time(fn, repeat):
    fn()  # warm-up (kernel compilation, caches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(n=1000, repeat=7):
    rng = numpy.random.default_rng(0)
    x0 = numpy.arange(1, n + 1) * L + 0.1 * rng.standard_normal(n)
    v0, left, right = numpy.zeros(n), numpy.array([0.0]), numpy.array([(n + 1) * L])
    results = {}

    import jitgrad.numpy as jnp
    from jitgrad.numpy.functional import value_and_grad

    jg = value_and_grad(lambda x: energy(jnp, x, v0, left, right))
    results["jitgrad.numpy (value+grad)"] = (_median_time(lambda: jg(x0), repeat), jg(x0))
    try:
        import autograd
        import autograd.numpy as anp

        ag = autograd.value_and_grad(lambda x: energy(anp, x, v0, left, right))
        results["HIPS autograd (value+grad)"] = (_median_time(lambda: ag(x0), repeat), ag(x0))
    except ImportError:
        print("HIPS autograd not installed: skipped")
    fwd = lambda: energy(numpy, x0, v0, left, right)  # noqa: E731
    results["NumPy (forward only)"] = (_median_time(fwd, repeat), (fwd(), None))

    ref_val, ref_grad = results["jitgrad.numpy (value+grad)"][1]
    for name, (t, (val, grad)) in results.items():
        same = "" if grad is None else f"  max|grad - jitgrad grad| = {numpy.abs(grad - ref_grad).max():.1e}"
        print(f"{name:28s} {t * 1e3:8.2f} ms   energy {float(val):.10f}{same}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
