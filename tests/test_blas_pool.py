"""Note [two BLAS pools] (jitgrad/kernels/cpu/blas_pool.py): SciPy's OpenBLAS runs one thread
during jitgrad's calls on small matrices, and keeps its own setting otherwise."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.kernels.cpu import blas_pool


def _pool():
    with blas_pool.small_call(1):
        pass
    pool = blas_pool._pool[0]
    if pool is None:
        pytest.skip("SciPy's OpenBLAS was not found (another BLAS)")
    return pool


def test_small_calls_run_single_threaded_and_restore_the_setting():
    set_threads, get_threads = _pool()
    before = get_threads()
    set_threads(2)
    try:
        with blas_pool.small_call(200):
            assert get_threads() == 1
        assert get_threads() == 2
        with blas_pool.small_call(blas_pool.SMALL_ORDER + 1):
            assert get_threads() == 2
    finally:
        set_threads(before)


def test_triangular_solves_and_cholesky_are_unchanged():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 40))
    spd = jg.tensor(a @ a.T + 40 * np.eye(40), requires_grad=True)
    y = jg.tensor(rng.standard_normal((40, 3)))
    L = jg.linalg.cholesky(spd)
    x = jg.cholesky_solve(y, L)
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(spd.detach().numpy(),
                                                                   y.numpy()), rtol=1e-12)
    (g,) = jg.autograd.grad(x.sum(), spd)
    inv = np.linalg.inv(spd.detach().numpy())
    # d/dA sum(A^-1 Y) = -A^-T 1 (A^-1 Y)^T, symmetrized (A enters through its Cholesky
    # factor: PyTorch's convention)
    want = -inv.T @ np.ones((40, 3)) @ (inv @ y.numpy()).T
    np.testing.assert_allclose(g.numpy(), (want + want.T) / 2, rtol=1e-10, atol=1e-14)
