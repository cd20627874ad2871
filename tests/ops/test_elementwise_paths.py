"""Elementwise ops take different kernel paths by size (serial Numba, parallel Numba, NumPy SIMD
forward for exp/log/tanh): every path must give the same values and gradients."""
import warnings

import numpy as np
import pytest

import jitgrad
from jitgrad.kernels.cpu import elementwise as cpu
from jitgrad.testing import assert_close

SIZES = [7, cpu.UFUNC_MIN_SIZE + 3, 2 * cpu.PARALLEL_MIN_SIZE + 5]  # parallel in both dtypes


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,ref,dref", [
    ("exp", np.exp, np.exp),
    ("log", np.log, lambda x: 1 / x),
    ("tanh", np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    ("sin", np.sin, np.cos),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
])
def test_values_and_gradients_agree_across_paths(name, ref, dref, n, dtype):
    rng = np.random.default_rng(n)
    x0 = rng.uniform(0.1, 3.0, n).astype(dtype)
    x = jitgrad.tensor(x0, requires_grad=True)
    y = getattr(jitgrad, name)(x)
    tol = dict(rtol=1e-12, atol=0) if dtype == "float64" else dict(rtol=2e-6, atol=1e-7)
    assert y.dtype.name == dtype
    assert_close(y, ref(x0.astype(np.float64)).astype(dtype), **tol)
    y.sum().backward()
    assert_close(x.grad, dref(x0.astype(np.float64)).astype(dtype), **tol)


def test_log_of_zero_and_negative_without_warnings():
    for n in (3, cpu.UFUNC_MIN_SIZE + 1):
        x = jitgrad.tensor(np.r_[[0.0, -1.0, 1.0], np.ones(n - 3)])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = jitgrad.log(x).numpy()
        assert y[0] == -np.inf and np.isnan(y[1]) and y[2] == 0.0


@pytest.mark.parametrize("shape_a,shape_b", [((600, 300), (300,)), ((600, 1), (1, 300)),
                                             ((cpu.PARALLEL_MIN_SIZE + 1,), ())])
def test_parallel_broadcast_kernels_and_reduced_gradients(shape_a, shape_b):
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    a = jitgrad.tensor(a0, requires_grad=True)
    b = jitgrad.tensor(b0, requires_grad=True)
    ((a * b + b) ** 2).sum().backward()
    g = 2 * (a0 * b0 + b0)
    assert_close(a.grad, _sum_to(g * b0, shape_a), rtol=1e-9)
    assert_close(b.grad, _sum_to(g * (a0 + 1), shape_b), rtol=1e-9)


def _sum_to(full, shape):
    """NumPy reference: sum a broadcast gradient back to an input's shape."""
    lead = full.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1)
    return full.sum(axis=axes).reshape(shape)
