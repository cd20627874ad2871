"""Focused tests for reductions and softmax: grad_fn names, ties, errors, shapes, dtypes."""
import numpy as np
import pytest

import jitgrad
from jitgrad.ops import nn as nn_ops
from jitgrad.ops import reduce as R
from jitgrad.testing import assert_close, gradcheck, gradgradcheck


def t(data, requires_grad=False):
    return jitgrad.tensor(np.asarray(data, dtype=np.float64), requires_grad=requires_grad)


def grad_of(fn, x):
    (g,) = jitgrad.autograd.grad(fn(x), [x])
    return g.numpy()


X = np.arange(24.0).reshape(2, 3, 4)


# --- grad_fn names -------------------------------------------------------------------------
@pytest.mark.parametrize("fn, name", [
    (lambda x: R.sum(x), "SumBackward0"),
    (lambda x: R.sum(x, 1), "SumBackward1"),
    (lambda x: R.sum(x, (0, 2), keepdim=True), "SumBackward1"),
    (lambda x: R.mean(x), "MeanBackward0"),
    (lambda x: R.mean(x, -1), "MeanBackward1"),
    (lambda x: R.prod(x), "ProdBackward0"),
    (lambda x: R.prod(x, 0), "ProdBackward1"),
    (lambda x: R.max(x), "MaxBackward1"),
    (lambda x: R.max(x, 1).values, "MaxBackward0"),
    (lambda x: R.min(x), "MinBackward1"),
    (lambda x: R.min(x, 1)[0], "MinBackward0"),
    (lambda x: R.amax(x, (0, 1)), "AmaxBackward0"),
    (lambda x: R.amin(x), "AminBackward0"),
    (lambda x: R.var(x, 1), "VarBackward0"),
    (lambda x: R.std(x), "StdBackward0"),
    (lambda x: R.logsumexp(x, 1), "LogsumexpBackward0"),
    (lambda x: nn_ops.softmax(x, 1), "SoftmaxBackward0"),
    (lambda x: nn_ops.log_softmax(x, -1), "LogSoftmaxBackward0"),
])
def test_grad_fn_names(fn, name):
    assert fn(t(X, True)).grad_fn.name() == name


def test_tensor_methods():
    x = t(X, True)
    assert x.sum(1, keepdim=True).shape == (2, 1, 4)
    assert x.max(dim=2).indices.shape == (2, 3)
    assert x.softmax(0).shape == X.shape


# --- ties ----------------------------------------------------------------------------------
def test_max_full_ties_split_evenly():
    assert_close(grad_of(R.max, t([1.0, 3.0, 3.0], True)), [0, 0.5, 0.5])
    assert_close(grad_of(R.min, t([2.0, 1.0, 1.0, 1.0], True)), [0, 1 / 3, 1 / 3, 1 / 3])


def test_max_dim_ties_go_to_first_index():
    x = t([[1.0, 3.0, 3.0], [5.0, 5.0, 0.0]], True)
    out = R.max(x, 1)
    assert out.indices.tolist() == [1, 0]
    assert out.indices.dtype is jitgrad.int64
    out.values.sum().backward()
    assert_close(x.grad, [[0, 1, 0], [1, 0, 0]])


def test_amax_ties_split_per_slice():
    x = t([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]], True)
    assert_close(grad_of(lambda v: R.amax(v, 1).sum(), x), [[0, 0.5, 0.5], [1, 0, 0]])
    assert_close(grad_of(lambda v: R.amin(v, (0, 1)), x), [[0, 0, 0], [0, 0, 1]])


def test_max_nan_propagates():
    x = t([1.0, np.nan, 3.0, np.nan], True)
    assert np.isnan(R.max(x).item())
    assert R.max(x, 0).indices.item() == 1
    assert R.argmax(x).item() == 1
    assert_close(grad_of(R.max, x), [0, 0.5, 0, 0.5])


def test_max_tie_double_backward():
    x = t([[1.0, 4.0], [3.0, 2.0]], True)
    fn = lambda v: R.max(v, 1).values * 2  # noqa: E731
    assert gradcheck(fn, [x]) and gradgradcheck(fn, [x])


# --- shapes / dims -------------------------------------------------------------------------
@pytest.mark.parametrize("dim, keepdim, shape", [
    (None, False, ()), (1, False, (2, 4)), (1, True, (2, 1, 4)), (-1, False, (2, 3)),
    ((0, 2), False, (3,)), ((0, 2), True, (1, 3, 1)), ([2, 0, 1], False, ()),
    (None, True, (1, 1, 1)), ((), False, ()),
])
def test_keepdim_shapes(dim, keepdim, shape):
    x = t(X)
    for fn in (R.sum, R.mean, R.amax, R.amin, R.var, R.std):
        assert fn(x, dim, keepdim=keepdim).shape == shape, fn.__name__
    assert_close(R.sum(x, dim, keepdim=keepdim),
                 np.sum(X, None if dim in (None, ()) else tuple(np.atleast_1d(dim)),
                        keepdims=keepdim))


def test_noncontiguous_dims_values_and_grad():
    x = t(np.random.default_rng(0).standard_normal((3, 2, 4, 5)), True)
    assert_close(R.sum(x, (0, 2)), x.numpy().sum((0, 2)), rtol=1e-12)
    assert_close(R.amax(x, (1, 3)), x.numpy().max((1, 3)))
    assert_close(R.var(x, (0, 3)), x.numpy().var((0, 3), ddof=1), rtol=1e-12)
    assert gradcheck(lambda v: R.logsumexp(v, (0, 2)), [x])


def test_dim_errors():
    x = t(np.ones((2, 2)))
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-2, 1\], but got 2\)"):
        R.sum(x, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        R.max(x, -3)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        R.sum(x, (1, -1))
    with pytest.raises(TypeError, match="prod"):
        R.prod(x, (0, 1))
    with pytest.raises(TypeError, match="max"):
        R.max(x, (0, 1))
    with pytest.raises(IndexError):
        nn_ops.softmax(x, 5)


def test_zero_d_inputs():
    x = t(2.5, True)
    for fn in (R.sum, R.mean, R.prod, R.max, R.amax):
        out = fn(x)
        assert out.shape == () and out.item() == 2.5
    out = R.max(x, 0)
    assert out.values.item() == 2.5 and out.indices.item() == 0
    assert R.sum(x, -1).shape == ()
    assert nn_ops.softmax(x, 0).item() == 1.0
    assert_close(grad_of(lambda v: R.max(v, 0).values, x), 1.0)


# --- empty reductions ----------------------------------------------------------------------
def test_empty_reductions():
    e = t(np.zeros((0, 3)))
    assert R.sum(e).item() == 0 and R.prod(e).item() == 1
    assert R.sum(e, 0).tolist() == [0, 0, 0]
    assert np.isnan(R.mean(e).item())
    assert R.sum(e, 1).shape == (0,)
    assert R.amax(e, 0 + 1).shape == (0,)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        R.max(e)
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero"):
        R.max(e, 0)
    with pytest.raises(RuntimeError, match=r"amax\(\)"):
        R.amax(e)
    with pytest.raises(RuntimeError, match=r"argmin\(\)"):
        R.argmin(e)


# --- dtypes --------------------------------------------------------------------------------
def test_int_and_bool_sum_to_int64():
    assert R.sum(jitgrad.tensor(np.array([1, 2, 3], np.int32))).dtype is jitgrad.int64
    assert R.sum(jitgrad.tensor([True, True, False])).item() == 2
    assert R.sum(jitgrad.tensor([True, False]), 0).dtype is jitgrad.int64
    assert R.prod(jitgrad.tensor(np.array([2, 3], np.int32))).dtype is jitgrad.int64
    assert R.max(jitgrad.tensor([3, 7, 1])).item() == 7


def test_sum_dtype_argument():
    x = t([1.5, 2.5], True)
    out = R.sum(x, dtype=jitgrad.float32)
    assert out.dtype is jitgrad.float32 and out.item() == 4.0
    out.backward()
    assert x.grad.dtype is jitgrad.float64 and x.grad.tolist() == [1.0, 1.0]
    assert R.sum(jitgrad.tensor([1, 2]), dtype=jitgrad.float64).dtype is jitgrad.float64


def test_float32_stays_float32():
    x = jitgrad.tensor(np.ones((3, 4), np.float32), requires_grad=True)
    for fn in (R.sum, R.mean, R.prod, R.amax, R.var, R.std):
        assert fn(x, 1).dtype is jitgrad.float32
    R.var(x, 1).sum().backward()
    assert x.grad.dtype is jitgrad.float32


def test_float16_reductions():
    x = jitgrad.tensor(np.array([[1, 2], [3, 4]], np.float16))
    assert R.sum(x).dtype is jitgrad.float16 and R.sum(x).item() == 10
    assert R.amax(x, 1).tolist() == [2, 4]


def test_mean_of_int_errors():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype.*Got: Long"):
        R.mean(jitgrad.tensor([1, 2, 3]))
    assert R.mean(jitgrad.tensor([1, 2]), dtype=jitgrad.float64).item() == 1.5
    with pytest.raises(RuntimeError, match="var.*Long"):
        R.var(jitgrad.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="softmax"):
        nn_ops.softmax(jitgrad.tensor([1, 2]), 0)


def test_argmax_argmin():
    x = t([[1.0, 5.0, 5.0], [7.0, 0.0, 7.0]])
    assert R.argmax(x).item() == 3 and R.argmax(x).dtype is jitgrad.int64
    assert R.argmax(x, 1).tolist() == [1, 0]
    assert R.argmin(x, 0, keepdim=True).tolist() == [[0, 1, 0]]
    assert R.argmax(x, keepdim=True).shape == (1, 1)
    assert R.argmax(t(X, True), 1).grad_fn is None


# --- var / std -----------------------------------------------------------------------------
def test_var_std_correction():
    a = np.array([1.0, 2.0, 4.0, 7.0])
    x = t(a)
    assert_close(R.var(x), a.var(ddof=1), rtol=1e-14)
    assert_close(R.var(x, correction=0), a.var(), rtol=1e-14)
    assert_close(R.var(x, unbiased=False), a.var(), rtol=1e-14)
    assert_close(R.std(x, correction=2), a.std(ddof=2), rtol=1e-14)
    assert_close(R.std(x, 0, unbiased=True), a.std(ddof=1), rtol=1e-14)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        assert np.isnan(R.var(t([3.0])).item())  # n - correction == 0: 0 / 0, as PyTorch


def test_std_grad_is_zero_where_std_is_zero():
    x = t([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]], True)
    g = grad_of(lambda v: R.std(v, 1).sum(), x)
    assert_close(g[0], [0, 0, 0])
    assert np.all(np.isfinite(g))


def test_var_grad_formula():
    a = np.array([1.0, 2.0, 4.0, 7.0])
    g = grad_of(lambda v: R.var(v, correction=0), t(a, True))
    assert_close(g, 2 * (a - a.mean()) / 4, rtol=1e-14)


# --- prod with zeros -----------------------------------------------------------------------
def test_prod_grad_with_zeros():
    x = t([2.0, 0.0, 3.0, 4.0], True)
    assert_close(grad_of(R.prod, x), [0, 24, 0, 0])
    x2 = t([[2.0, 0.0, 0.0], [1.0, 2.0, 3.0]], True)
    assert_close(grad_of(lambda v: R.prod(v, 1).sum(), x2), [[0, 0, 0], [6, 3, 2]])


def test_prod_double_backward_with_zeros():
    x = t([2.0, 0.0, 3.0, 0.5], True)
    (g,) = jitgrad.autograd.grad(R.prod(x), [x], create_graph=True)
    assert_close(g, [0, 3, 0, 0])
    (h,) = jitgrad.autograd.grad(g[1], [x])  # d/dx (x0 x2 x3) at x = (2, 0, 3, .5)
    assert_close(h, [1.5, 0, 1.0, 6.0])


# --- logsumexp / softmax -------------------------------------------------------------------
def test_logsumexp_stable():
    x = t([1000.0, 1000.0])
    assert_close(R.logsumexp(x, 0), 1000 + np.log(2), rtol=1e-14)
    assert R.logsumexp(t([[1.0, 2.0]]), 1, keepdim=True).shape == (1, 1)
    assert R.logsumexp(jitgrad.tensor([1, 2]), 0).dtype is jitgrad.float64


def test_softmax_rows_sum_to_one():
    x = t(np.random.default_rng(0).standard_normal((4, 5)))
    for d in (0, 1, -1):
        assert_close(R.sum(nn_ops.softmax(x, d), d), np.ones(x.shape[1 - d % 2]), rtol=1e-14)
        assert_close(R.logsumexp(nn_ops.log_softmax(x, d), d), 0, atol=1e-14)


def test_softmax_large_values():
    assert_close(nn_ops.softmax(t([1000.0, 1000.0]), 0), [0.5, 0.5])
    assert_close(nn_ops.softmax(t([-1000.0, 0.0]), 0), [0.0, 1.0])
    assert_close(nn_ops.log_softmax(t([1000.0, 1000.0]), 0), [-np.log(2)] * 2, rtol=1e-14)
    y = nn_ops.softmax(jitgrad.tensor(np.array([1000, 1000], np.float32)), 0)
    assert y.dtype is jitgrad.float32 and y.tolist() == [0.5, 0.5]


def test_softmax_dim_required_and_empty():
    with pytest.raises(TypeError):
        nn_ops.softmax(t([1.0, 2.0]), None)
    assert nn_ops.softmax(t(np.zeros((0, 3))), 1).shape == (0, 3)
    assert nn_ops.softmax(t([1, 2]), 0, dtype=jitgrad.float32).dtype is jitgrad.float32


def test_softmax_backward_formula():
    x = t([[0.5, -1.0, 2.0]], True)
    g = np.array([[1.0, 2.0, -1.0]])
    y = nn_ops.softmax(x, 1)
    (gx,) = jitgrad.autograd.grad(y, [x], jitgrad.tensor(g))
    yv = y.numpy()
    assert_close(gx, yv * (g - (g * yv).sum(1, keepdims=True)), rtol=1e-14)


# --- sum_to_shape --------------------------------------------------------------------------
@pytest.mark.parametrize("src, dst", [
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), ()), ((4, 2, 3), (2, 1)),
    ((1, 3), (3,)), ((2, 1, 3), (1, 1)), ((5,), (1,)), ((0, 3), (3,)),
])
def test_sum_to_shape(src, dst):
    a = np.arange(float(np.prod(src))).reshape(src)
    out = R.sum_to_shape(t(a), dst)
    lead = len(src) - len(dst)
    ref = a.sum(tuple(range(lead)))
    ref = ref.sum(tuple(i for i, s in enumerate(dst) if s == 1), keepdims=True).reshape(dst)
    assert out.shape == dst
    assert_close(out, ref)


def test_sum_to_shape_identity_and_errors():
    x = t(X, True)
    assert R.sum_to_shape(x, (2, 3, 4)) is x
    for bad in [(3, 3), (2, 2, 3, 4), (4, 1)]:
        with pytest.raises(ValueError, match="sum_to_shape"):
            R.sum_to_shape(x, bad)


def test_sum_to_shape_differentiable():
    x = t(np.random.default_rng(1).standard_normal((3, 2, 4)), True)
    fn = lambda v: R.sum_to_shape(v * v, (2, 1))  # noqa: E731
    assert gradcheck(fn, [x]) and gradgradcheck(fn, [x])


def test_broadcast_gradient_reduced_by_engine():
    b = t([1.0, 2.0, 3.0], True)
    (R.sum(t(np.ones((4, 3))) * b)).backward()
    assert_close(b.grad, [4, 4, 4])
