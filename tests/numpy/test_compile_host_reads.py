"""Issue 32: jitgrad.numpy / jitgrad.scipy glue code reads tensor values only through
``Tensor._host`` (Note [compile tracing]), so a compiled function whose result depends on such a
read is never stale: called on a second input that differs in values, it returns eager's result
(falling back to eager, with a warning, where the read cannot be captured). The static scan of
``._data`` reads is ``tests/compile/test_host_reads.py``."""
import warnings

import numpy
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.scipy import linalg as jsl
from jitgrad.scipy import special as jss

A = jitgrad.tensor(numpy.array([0.0, 1.5, 0.0, -2.0, 3.0]))
B = jitgrad.tensor(numpy.array([1.0, 0.0, 2.0, 0.0, -1.0]))
M1 = jitgrad.tensor(numpy.array([[0.1, 0.2], [0.3, 0.4]]))
M2 = jitgrad.tensor(numpy.array([[1.0, 2.0], [3.0, 4.0]]))

CASES = {
    "nonzero": (lambda x: x[jnp.nonzero(x)] * 2, A, B),
    "unique": (lambda x: jnp.unique(x) + 1, A, B),
    "argwhere": (lambda x: jnp.argwhere(x > 0) + 0, A, B),
    "allclose_branch": (lambda x: x * 2 if jnp.allclose(x, A) else x * 3, A, B),
    "array_equal_branch": (lambda x: x + 1 if jnp.array_equal(x, A) else x - 1, A, B),
    "mask_index": (lambda x: x[x > 0] * 3, A, B),
    "sort": (lambda x: jnp.sort(x) * 2, A, B),
    "take_by_argmax": (lambda x: jnp.take(x, jnp.argmax(x)) * 2, A, B),
    "real_if_close": (lambda x: jnp.real_if_close(x * (1 + 0j)) * 1.0, A, B),
    "lstsq_rank": (lambda x: jnp.linalg.lstsq(x, jnp.ones(2))[0] * 1.0, M1, M2),
    "gamma_domain_check": (lambda x: jss.gamma(x * x + 1.0), A, B),
    "expm_squarings": (lambda x: jsl.expm(x) * 1.0, M1, M2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_call_returns_eagers_result(name):
    fn, first, second = CASES[name]
    compiled = jitgrad.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a fallback to eager warns)
        compiled(first)
        got = compiled(second)
    want = fn(second)
    assert tuple(got.shape) == tuple(want.shape)
    numpy.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())


@pytest.mark.parametrize("fn", [
    lambda x: jss.logsumexp(x) * 2,  # the shift is computed by the ops, not read on the host
    lambda x: jnp.triu(x) + jnp.tril(x, -1) * 2,  # masks from shapes: constants
    lambda x: x + jnp.zeros_like(x) + jnp.linspace(0.0, 1.0, x.shape[-1]),  # constructors
    lambda x: jnp.cumulative_sum(x, axis=-1, include_initial=True),
], ids=["logsumexp", "triu_tril", "constructors", "cumulative_sum"])
def test_constants_and_ops_are_captured(fn):
    compiled = jitgrad.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback
        compiled(M1)
        got = compiled(M2)
    numpy.testing.assert_allclose(got.numpy(), fn(M2).numpy())
