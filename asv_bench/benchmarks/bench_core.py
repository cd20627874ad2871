"""Core autograd benchmarks: the seed example, an elementwise chain, and a deep chain of small ops.

Every benchmark warms its kernels in ``setup`` so the timings measure compiled code, not Numba's
compiler; ``timeraw_seed_example_cold`` measures the compile cost of a cold start on its own.
"""
import numpy as np

import jitgrad


def _seed_example():
    x = jitgrad.tensor(2.0, requires_grad=True)
    y = ((x * 3) + 4) ** 2
    y.backward()
    return x.grad


def _warm_seed():
    _seed_example()


def time_seed_example():
    """0-d y = (3x + 4)^2 at x = 2: forward + backward."""
    _seed_example()


time_seed_example.setup = _warm_seed


def timeraw_seed_example_cold():
    """A fresh interpreter with an empty kernel cache: import + compile + run the seed example."""
    return """
import os, shutil, tempfile
cache = tempfile.mkdtemp(prefix="jitgrad-asv-cold-")
os.environ["JITGRAD_CACHE_DIR"] = cache
import jitgrad
x = jitgrad.tensor(2.0, requires_grad=True)
y = ((x * 3) + 4) ** 2
y.backward()
assert x.grad.item() == 60.0
shutil.rmtree(cache, ignore_errors=True)
"""


timeraw_seed_example_cold.repeat = 3
timeraw_seed_example_cold.number = 1


def _elementwise_chain(x):
    return jitgrad.tanh(jitgrad.sin(x) * jitgrad.exp(-x * x) + 0.5 * x).sum()


class TimeElementwiseChain:
    """sum(tanh(sin(x) * exp(-x*x) + 0.5x)) on float64: forward + backward."""

    params = [1000, 1_000_000]
    param_names = ["n"]

    def setup(self, n):
        self.x = jitgrad.tensor(np.random.default_rng(0).standard_normal(n), requires_grad=True)
        _elementwise_chain(self.x).backward()  # compile every kernel once

    def time_forward_backward(self, n):
        _elementwise_chain(self.x).backward()

    def time_forward(self, n):
        _elementwise_chain(self.x)


def _deep_chain(x, n_ops):
    for i in range(n_ops // 2):
        x = x * 1.0001
        x = x + 0.001
    return x.sum()


class TimeDeepChain:
    """1000 small ops (alternating x * 1.0001, x + 0.001) on a (100,) vector, then backward.

    Measures per-op overhead: recording a node, dispatch, engine scheduling.
    """

    n_ops = 1000

    def setup(self):
        self.x = jitgrad.tensor(np.random.default_rng(0).standard_normal(100), requires_grad=True)
        _deep_chain(self.x, 10).backward()

    def time_forward_backward(self):
        _deep_chain(self.x, self.n_ops).backward()

    def time_forward(self):
        _deep_chain(self.x, self.n_ops)
