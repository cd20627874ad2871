"""CUDA reductions and matmul beyond the op database: rows long enough to need several passes,
strided inputs, ties and NaN in max/min, empty reductions, broadcast batched and transposed
matmul, float32. Each case runs on CUDA and on the CPU and compares (sizes stay small: the
simulator runs every thread as a Python thread)."""
import numpy as np
import pytest

import jitgrad
from jitgrad.kernels.cuda import reduce as cuda_reduce
from jitgrad.ops import reduce as R
from jitgrad.ops import shape as S
from jitgrad.testing import assert_close

DEV = "cuda:0"


@pytest.fixture(scope="module", autouse=True)
def _cuda():
    assert jitgrad.cuda.is_available(), "the CUDA tests need a GPU or NUMBA_ENABLE_CUDASIM=1"


def _both(a, requires_grad=False):
    return (jitgrad.tensor(a, requires_grad=requires_grad),
            jitgrad.tensor(a, device=DEV, requires_grad=requires_grad))


def _same(fn, a, rtol=1e-12, atol=1e-13):
    c, d = _both(a)
    rc, rd = fn(c), fn(d)
    rc, rd = (rc, rd) if isinstance(rc, tuple) else ((rc,), (rd,))
    for x, y in zip(rc, rd):
        assert str(y.device) == DEV
        assert y.dtype == x.dtype and y.shape == x.shape
        assert_close(y.cpu(), x, rtol=rtol, atol=atol)


REDUCTIONS = {
    "sum": lambda x: R.sum(x, -1),
    "mean": lambda x: R.mean(x),
    "prod": lambda x: R.prod(x, -1),
    "max": lambda x: R.max(x, -1),
    "amin": lambda x: R.amin(x),
    "argmax": lambda x: R.argmax(x),
    "argmin": lambda x: R.argmin(x, -1),
    "var": lambda x: R.var(x, -1),
    "std": lambda x: R.std(x),
    "logsumexp": lambda x: R.logsumexp(x, -1),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_long_rows_take_several_passes(name):
    """Rows longer than CHUNK with few rows are split into partials and a second pass."""
    k = 5 * cuda_reduce.CHUNK + 3
    rng = np.random.default_rng(0)
    a = rng.uniform(0.9, 1.1, (2, k)) if name == "prod" else rng.standard_normal((2, k))
    assert cuda_reduce._plan(2, k)[1] > 1
    _same(REDUCTIONS[name], a, rtol=1e-11)


@pytest.mark.parametrize("name", ["sum", "max", "var", "logsumexp", "argmin"])
def test_float32(name):
    a = np.random.default_rng(1).standard_normal((3, 2 * cuda_reduce.CHUNK)).astype(np.float32)
    _same(REDUCTIONS[name], a, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("view", ["transpose", "step", "permute"])
def test_noncontiguous_inputs(view):
    a = np.random.default_rng(2).standard_normal((4, 5, 6))
    make = {"transpose": lambda x: S.transpose(x, 0, 2),
            "step": lambda x: x[:, ::2, 1:],
            "permute": lambda x: S.permute(x, 1, 2, 0)}[view]
    for fn in (lambda x: R.sum(make(x), (0, 2)), lambda x: R.max(make(x), 1),
               lambda x: R.var(make(x), 0), lambda x: R.amax(make(x), (1, 2)),
               lambda x: R.prod(make(x), 2), lambda x: R.argmin(make(x))):
        _same(fn, a)


def test_max_min_ties_and_nan():
    nan = np.nan
    a = np.array([[1.0, 3.0, 3.0, 0.0, 3.0, -1.0],
                  [2.0, nan, 5.0, nan, 5.0, 1.0],
                  [-0.0, 0.0, -0.0, 0.0, -2.0, -2.0],
                  [4.0, 4.0, 4.0, 4.0, 4.0, 4.0]])
    for fn in (lambda x: R.max(x, 1), lambda x: R.min(x, 1), lambda x: R.max(x, 0),
               lambda x: R.argmax(x), lambda x: R.argmin(x, 1), lambda x: R.amax(x, 1),
               lambda x: R.max(x), lambda x: R.logsumexp(x, 1)):
        _same(fn, a)
    # NaN wins with its first index; ties go to the first index, also across passes
    long = np.zeros(3 * cuda_reduce.CHUNK)
    long[[7, 40, 90]] = 2.0
    _same(lambda x: R.max(x, 0), long)
    long[[50, 60]] = nan
    _same(lambda x: R.max(x, 0), long)
    _same(lambda x: R.argmin(x), long)


def test_max_gradient_with_ties():
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]])
    c, d = _both(a, requires_grad=True)
    for fn in (lambda x: R.max(x), lambda x: R.amax(x, 1), lambda x: R.max(x, 1)[0]):
        gc = jitgrad.autograd.grad(R.sum(fn(c) * 2.0), [c])[0]
        gd = jitgrad.autograd.grad(R.sum(fn(d) * 2.0), [d])[0]
        assert_close(gd.cpu(), gc)


def test_empty_reductions():
    a = np.zeros((3, 0))
    for fn in (lambda x: R.sum(x, 1), lambda x: R.prod(x, 1), lambda x: R.sum(x, 0),
               lambda x: R.mean(x, 1), lambda x: R.logsumexp(x, 1), lambda x: R.amax(x, 0)):
        _same(fn, a)
    with pytest.warns(UserWarning):
        _same(lambda x: R.var(x, 1), a)
    for fn in (lambda x: R.max(x, 1), lambda x: R.amax(x), lambda x: R.argmax(x),
               lambda x: R.max(x)):
        with pytest.raises((IndexError, RuntimeError)):
            fn(jitgrad.tensor(a, device=DEV))


def test_int_and_bool_inputs():
    a = np.arange(12).reshape(3, 4) % 5
    for fn in (lambda x: R.sum(x, 0), lambda x: R.prod(x, 1), lambda x: R.max(x, 1),
               lambda x: R.argmax(x), lambda x: R.sum(x > 2), lambda x: R.amax(x > 2, 1)):
        _same(fn, a)


def test_prod_gradient_with_zeros():
    """The plain backward runs the exclusive prefix/suffix kernel: exact with zeros."""
    a = np.random.default_rng(3).uniform(0.5, 1.5, (3, 2 * cuda_reduce.CHUNK))
    a[0, 5] = 0.0
    a[1, [3, 40]] = 0.0
    c, d = _both(a, requires_grad=True)
    for fn in (lambda x: R.prod(x, 1), lambda x: R.prod(S.transpose(x, 0, 1), 0),
               lambda x: R.prod(x[:, :9])):
        gc = jitgrad.autograd.grad(R.sum(fn(c)), [c])[0]
        gd = jitgrad.autograd.grad(R.sum(fn(d)), [d])[0]
        assert_close(gd.cpu(), gc, rtol=1e-11)


def test_sum_to_shape():
    a = np.random.default_rng(4).standard_normal((2, 3, 4))
    for shape in [(3, 1), (1, 4), (4,), (2, 1, 1), ()]:
        _same(lambda x, s=shape: R.sum_to_shape(x, s), a)


MATMUL_SHAPES = [((7, 5), (5, 6)), ((3, 2, 5), (1, 5, 4)), ((2, 1, 3, 5), (4, 5, 2)),
                 ((5,), (3, 5, 6)), ((3, 6, 5), (5,)), ((40,), (40,)),
                 ((0, 3), (3, 2)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_shapes(shapes, dtype):
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    tol = dict(rtol=1e-12, atol=1e-13) if dtype == "float64" else dict(rtol=2e-6, atol=1e-5)
    ca, da = _both(a)
    cb, db = _both(b)
    out = jitgrad.matmul(da, db)
    assert out.dtype == jitgrad.matmul(ca, cb).dtype and str(out.device) == DEV
    assert_close(out.cpu(), jitgrad.matmul(ca, cb), **tol)


def test_matmul_transposed_operands_and_gradients():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((1, 5, 4))
    ca, da = _both(a, requires_grad=True)
    cb, db = _both(b, requires_grad=True)

    def f(x, y):  # x^T (batched) @ y, y broadcast over the batch
        return jitgrad.matmul(S.transpose(x, -1, -2), y)

    assert_close(f(da, db).cpu(), f(ca, cb))
    seed = rng.standard_normal((2, 3, 4))
    gc = jitgrad.autograd.grad(f(ca, cb), [ca, cb], jitgrad.tensor(seed))
    gd = jitgrad.autograd.grad(f(da, db), [da, db], jitgrad.tensor(seed, device=DEV))
    for c, d in zip(gc, gd):
        assert d.shape == c.shape
        assert_close(d.cpu(), c)


def test_matmul_int_and_bool():
    a = np.arange(12).reshape(3, 4) % 3
    b = np.arange(8).reshape(4, 2) % 4
    _same(lambda x: jitgrad.matmul(x, jitgrad.tensor(b, device=x.device)), a)
    _same(lambda x: jitgrad.matmul(x > 0, jitgrad.tensor(b > 1, device=x.device)), a)
