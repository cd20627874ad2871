"""Tensor construction, metadata, conversion, repr and operators (checked against PyTorch 2.13
with the default dtype set to float64 (jitgrad's default); promotion follows NumPy 2)."""
import operator

import numpy as np
import pytest

import jitgrad as jg


@pytest.fixture
def default_float32():
    jg.set_default_dtype(jg.float32)
    try:
        yield
    finally:
        jg.set_default_dtype(jg.float64)


# --- constructors and dtype inference -------------------------------------------------------------
@pytest.mark.parametrize("data,dtype,shape", [
    (1.5, jg.float64, ()),
    (2, jg.int64, ()),
    (True, jg.bool, ()),
    ([1, 2], jg.int64, (2,)),
    ([1.0, 2], jg.float64, (2,)),
    ([True, False], jg.bool, (2,)),
    ([True, 2], jg.int64, (2,)),
    ([[1, 2], [3, 4]], jg.int64, (2, 2)),
    ([[1, 2], [3.5, 4]], jg.float64, (2, 2)),
    ([], jg.float64, (0,)),
    (np.array([1, 2], dtype=np.int32), jg.int32, (2,)),
    (np.array([1.0, 2.0], dtype=np.float32), jg.float32, (2,)),
    (np.array(3.0), jg.float64, ()),
    (np.float32(2.5), jg.float32, ()),
    (np.int64(3), jg.int64, ()),
    ([np.float32(1.0), np.float32(2.0)], jg.float32, (2,)),
    ([np.float32(1.0), 2.0], jg.float64, (2,)),
    ([np.float32(1.0), 2], jg.float32, (2,)),  # a float element wins over integers
    ([np.int32(1), 2], jg.int64, (2,)),
    ([np.int32(1), np.int32(2)], jg.int32, (2,)),
    ([np.uint8(1), np.int8(1)], jg.int16, (2,)),
])
def test_tensor_dtype_inference(data, dtype, shape):
    t = jg.tensor(data)
    assert t.dtype == dtype
    assert t.shape == shape


def test_tensor_copies_its_data():
    a = np.array([1.0, 2.0])
    t = jg.tensor(a)
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]
    u = jg.tensor(t)
    t.add_(1)
    assert u.tolist() == [1.0, 2.0]


def test_tensor_from_list_of_tensors():
    t = jg.tensor([jg.tensor(1.0), jg.tensor(2.0)])
    assert t.tolist() == [1.0, 2.0] and t.dtype == jg.float64


def test_tensor_explicit_dtype_and_requires_grad():
    t = jg.tensor([1, 2], dtype=jg.float32, requires_grad=True)
    assert t.dtype == jg.float32 and t.requires_grad and t.is_leaf
    assert jg.tensor([1.7, -1.7], dtype=jg.int64).tolist() == [1, -1]


def test_legacy_tensor_constructor_uses_default_dtype():
    assert jg.Tensor([1, 2]).dtype == jg.float64
    assert repr(jg.Tensor([1, 2])) == "tensor([1., 2.])"
    assert repr(jg.Tensor()) == "tensor([])"


def test_from_numpy_and_as_tensor_share_memory():
    a = np.array([1.0, 2.0])
    t = jg.from_numpy(a)
    a[0] = 9.0
    assert t.tolist() == [9.0, 2.0]
    t.mul_(2)
    assert a.tolist() == [18.0, 4.0]
    b = np.array([1, 2], dtype=np.int32)
    assert jg.as_tensor(b).dtype == jg.int32
    assert np.shares_memory(jg.as_tensor(b).numpy(), b)


def test_set_default_dtype_float32(default_float32):
    assert jg.get_default_dtype() == jg.float32
    assert jg.tensor(1.5).dtype == jg.float32
    assert jg.tensor([1, 2]).dtype == jg.int64
    for t in (jg.zeros(2), jg.ones(2), jg.rand(2), jg.randn(2), jg.empty(2), jg.eye(2),
              jg.linspace(0, 1, 3), jg.arange(0.0, 1.0, 0.5), jg.full((2,), 1.5), jg.Tensor([1, 2])):
        assert t.dtype == jg.float32
    assert jg.tensor(np.array([1.5])).dtype == jg.float64  # arrays keep their dtype
    assert (jg.tensor([1, 2]) * 2.5).dtype == jg.float32  # int * Python float: default dtype
    assert (jg.tensor([1, 2]) / 2).dtype == jg.float32
    assert repr(jg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(jg.tensor([1.0, 2.0], dtype=jg.float64)) == "tensor([1., 2.], dtype=jitgrad.float64)"


def test_default_dtype_restored():
    assert jg.get_default_dtype() == jg.float64
    assert jg.tensor(1.5).dtype == jg.float64


def test_set_default_dtype_rejects_integers():
    with pytest.raises(TypeError):
        jg.set_default_dtype(jg.int64)
    assert jg.get_default_dtype() == jg.float64


def test_dtype_aliases():
    assert jg.float is jg.float32 and jg.double is jg.float64 and jg.long is jg.int64
    assert repr(jg.float32) == "jitgrad.float32" and repr(jg.bool) == "jitgrad.bool"
    t = jg.tensor([1.7, 0.0])
    assert t.float().dtype == jg.float32 and t.double().dtype == jg.float64
    assert t.long().tolist() == [1, 0] and t.bool().tolist() == [True, False]
    assert t.int().dtype == jg.int32
    assert jg.tensor([1, 2]).to(jg.float32).dtype == jg.float32


# --- creation functions -------------------------------------------------------------------------
def test_zeros_ones_full_empty():
    assert jg.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert jg.zeros((2, 3)).shape == (2, 3)
    assert jg.ones([2]).tolist() == [1.0, 1.0]
    assert jg.zeros(()).shape == () and jg.zeros(0).shape == (0,)
    assert jg.zeros(2, dtype=jg.float32).dtype == jg.float32
    assert jg.ones(2, requires_grad=True).requires_grad
    assert jg.full((2,), 3).dtype == jg.int64 and jg.full((2,), 3).tolist() == [3, 3]
    assert jg.full((2,), 3.0).dtype == jg.float64
    assert jg.full((2,), True).dtype == jg.bool
    assert jg.full((1, 2), 7.5).tolist() == [[7.5, 7.5]]
    assert jg.empty(2, 3).shape == (2, 3) and jg.empty(2).dtype == jg.float64


def test_arange_linspace_eye():
    assert jg.arange(5).tolist() == [0, 1, 2, 3, 4] and jg.arange(5).dtype == jg.int64
    assert jg.arange(1, 4).tolist() == [1, 2, 3]
    assert jg.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert jg.arange(5.0).dtype == jg.float64
    assert jg.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert jg.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert jg.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_like_constructors():
    t = jg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert jg.zeros_like(t).shape == (2, 3) and jg.zeros_like(t).tolist()[0] == [0.0] * 3
    assert jg.ones_like(jg.tensor([1, 2])).dtype == jg.int64
    assert jg.full_like(t, 7.0)[0].tolist() == [7.0, 7.0, 7.0]
    assert jg.empty_like(t).shape == (2, 3)
    assert jg.zeros_like(t, dtype=jg.int64).dtype == jg.int64
    r = jg.ones_like(t, requires_grad=True)
    assert r.requires_grad and r.is_leaf


def test_random_constructors_and_manual_seed():
    jg.manual_seed(1234)
    a = (jg.rand(3).tolist(), jg.randn(2, 3).tolist(), jg.randint(0, 10, (4,)).tolist())
    jg.manual_seed(1234)
    b = (jg.rand(3).tolist(), jg.randn(2, 3).tolist(), jg.randint(0, 10, (4,)).tolist())
    assert a == b
    jg.manual_seed(4321)
    assert jg.rand(3).tolist() != a[0]
    r = jg.rand(1000).numpy()
    assert r.min() >= 0.0 and r.max() < 1.0
    i = jg.randint(0, 10, (1000,))
    assert i.dtype == jg.int64 and i.numpy().min() >= 0 and i.numpy().max() <= 9
    assert jg.randint(5, (2, 2)).shape == (2, 2)  # the randint(high, size) form
    assert jg.randn(2, 3).shape == (2, 3) and jg.randn(2).dtype == jg.float64
    n = jg.randn(20000).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1.0) < 0.05


def test_requires_grad_only_for_floats():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can "
                                           "require gradients"):
        jg.zeros(2, dtype=jg.int64, requires_grad=True)


# --- metadata and conversion ----------------------------------------------------------------------
def test_metadata():
    t = jg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3) and t.size() == (2, 3)
    assert t.size(0) == 2 and t.size(-1) == 3 and t.shape[1] == 3
    assert t.ndim == 2 and t.dim() == 2 and t.numel() == 6 and len(t) == 2
    assert jg.numel(t) == 6 and jg.is_tensor(t) and not jg.is_tensor(3)
    assert t.dtype == jg.float64 and str(t.device) == "cpu"
    assert t.is_floating_point() and not jg.tensor([1]).is_floating_point()
    assert t.T.shape == (3, 2) and t.T.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert t.is_contiguous() and not t.T.is_contiguous()
    assert t.stride() == (3, 1) and t.T.stride() == (1, 3)
    s = jg.tensor(3.0)
    assert s.shape == () and s.ndim == 0 and s.numel() == 1
    with pytest.raises(TypeError):
        len(s)


def test_item_and_tolist():
    assert jg.tensor(3.5).item() == 3.5 and type(jg.tensor(3.5).item()) is float
    assert jg.tensor(3).item() == 3 and type(jg.tensor(3).item()) is int
    assert jg.tensor(True).item() is True
    assert type(jg.tensor([2.0]).item()) is float
    with pytest.raises(RuntimeError) as info:
        jg.tensor([1.0, 2.0]).item()
    assert str(info.value) == "a Tensor with 2 elements cannot be converted to Scalar"
    assert jg.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert jg.tensor(2.0).tolist() == 2.0 and type(jg.tensor(2.0).tolist()) is float
    assert jg.tensor([1, 2]).tolist() == [1, 2] and type(jg.tensor([1, 2]).tolist()[0]) is int
    assert float(jg.tensor(2.5)) == 2.5 and int(jg.tensor(3)) == 3
    assert bool(jg.tensor(1.0)) is True


def test_clone():
    t = jg.tensor([1.0, 2.0])
    c = t.clone()
    c[0] = 100.0
    assert t.tolist() == [1.0, 2.0]
    assert c.grad_fn is None
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert type(c.grad_fn).__name__ == "CloneBackward0"
    assert c.requires_grad and not c.is_leaf
    (c * jg.tensor([3.0, 4.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


def test_numpy_shares_memory():
    t = jg.tensor([[1.0, 2.0], [3.0, 4.0]])
    n = t.numpy()
    n[0, 0] = 42.0
    assert t[0, 0].item() == 42.0
    t.add_(1)
    assert n[0, 0] == 43.0
    assert np.shares_memory(t.numpy(), n)


def test_numpy_of_requires_grad_tensor_is_read_only_view():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    n = x.numpy()
    assert n.tolist() == [1.0, 2.0]
    assert not n.flags.writeable
    with pytest.raises(ValueError):
        n[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
    d = x.detach().numpy()
    assert d.flags.writeable and np.shares_memory(d, n)


def test_array_protocol():
    t = jg.tensor([1.0, 2.0])
    assert np.asarray(t).dtype == np.float64
    assert np.array(jg.tensor([1, 2])).dtype == np.int64
    assert np.asarray(jg.tensor([1.0, 2.0], dtype=jg.float32)).dtype == np.float32
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    c = np.array(t, copy=True)
    c[0] = 5.0
    assert t.tolist() == [1.0, 2.0]
    assert np.sum(np.asarray(t)) == 3.0


# --- repr ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,expected", [
    (lambda: jg.tensor(60.0), "tensor(60.)"),
    (lambda: jg.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: jg.tensor([0.5, 1.25]), "tensor([0.5000, 1.2500])"),
    (lambda: jg.tensor([1.0, 2.0], dtype=jg.float32), "tensor([1., 2.], dtype=jitgrad.float32)"),
    (lambda: jg.tensor(2.5, dtype=jg.float32, requires_grad=True),
     "tensor(2.5000, dtype=jitgrad.float32, requires_grad=True)"),
    (lambda: jg.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: jg.tensor([1, 2], dtype=jg.int32), "tensor([1, 2], dtype=jitgrad.int32)"),
    (lambda: jg.tensor([True, False]), "tensor([ True, False])"),
    (lambda: jg.tensor(3), "tensor(3)"),
    (lambda: jg.tensor([[1.5, 2.0], [3.0, 4.0]]), "tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]])"),
    (lambda: jg.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: jg.tensor([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: jg.tensor([0.001, 2.0]), "tensor([1.0000e-03, 2.0000e+00])"),
    (lambda: jg.tensor([1.0, 1000.0]), "tensor([   1., 1000.])"),
    (lambda: jg.tensor([-1.0, 2.0]), "tensor([-1.,  2.])"),
    (lambda: jg.tensor([0.1, -0.25]), "tensor([ 0.1000, -0.2500])"),
    (lambda: jg.tensor([1, 10, -100]), "tensor([   1,   10, -100])"),
    (lambda: jg.tensor([float("nan"), float("inf"), 1.0]), "tensor([nan, inf, 1.])"),
    (lambda: jg.tensor([1.123456789]), "tensor([1.1235])"),
    (lambda: jg.zeros(0), "tensor([])"),
    (lambda: jg.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: jg.zeros(0, dtype=jg.int64), "tensor([], dtype=jitgrad.int64)"),
    (lambda: jg.tensor([1.5], dtype=jg.float16), "tensor([1.5000], dtype=jitgrad.float16)"),
    (lambda: jg.ones(2, 2, 2), "tensor([[[1., 1.],\n         [1., 1.]],\n\n        [[1., 1.],\n"
                               "         [1., 1.]]])"),
])
def test_repr(make, expected):
    assert repr(make()) == expected
    assert str(make()) == expected


def test_repr_grad_fn_and_wrapping():
    x = jg.tensor(3.0, requires_grad=True)
    assert repr(x ** 3 + 2 * x) == "tensor(33., grad_fn=<AddBackward0>)"
    (g,) = jg.autograd.grad(x ** 3 + 2 * x, x, create_graph=True)
    assert repr(g) == "tensor(29., grad_fn=<AddBackward0>)"
    assert repr(jg.ones(20, requires_grad=True) * 1.2345) == (
        "tensor([1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345,\n"
        "        1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345, 1.2345,\n"
        "        1.2345, 1.2345], grad_fn=<MulBackward0>)")
    assert repr(jg.arange(12.0).reshape(3, 4)) == (
        "tensor([[ 0.,  1.,  2.,  3.],\n        [ 4.,  5.,  6.,  7.],\n        [ 8.,  9., 10., 11.]])")


def test_repr_summarizes_large_tensors():
    assert repr(jg.arange(2000.0)) == (
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])")
    assert repr(jg.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"


# --- operators ----------------------------------------------------------------------------------
A = [1.0, 2.0, 4.0]
ARITH = [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
         ("truediv", operator.truediv), ("pow", operator.pow)]
COMPARE = [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
           ("eq", operator.eq), ("ne", operator.ne)]


@pytest.mark.parametrize("name,op", ARITH + COMPARE, ids=[n for n, _ in ARITH + COMPARE])
@pytest.mark.parametrize("scalar", [2, 2.5])
def test_operators_with_python_scalars_on_either_side(name, op, scalar):
    a = jg.tensor(A)
    na = np.array(A)
    for result, expected in ((op(a, scalar), op(na, scalar)), (op(scalar, a), op(scalar, na))):
        assert isinstance(result, jg.Tensor)
        assert result.dtype == (jg.bool if name in dict(COMPARE) else jg.float64)
        np.testing.assert_array_equal(result.numpy(), expected)


@pytest.mark.parametrize("name,op", ARITH + COMPARE, ids=[n for n, _ in ARITH + COMPARE])
def test_operators_with_numpy_arrays_on_either_side(name, op):
    a = jg.tensor(A)
    b = np.array([1.0, 2.0, 3.0])
    for result, expected in ((op(a, b), op(np.array(A), b)), (op(b, a), op(b, np.array(A)))):
        assert isinstance(result, jg.Tensor)  # np_array <op> tensor is a Tensor, not an ndarray
        np.testing.assert_array_equal(result.numpy(), expected)


def test_reflected_operators_record_pytorchs_nodes():
    x = jg.tensor([1.0, 2.0], requires_grad=True)

    def edges(t):
        return [(None if n is None else type(n).__name__, nr) for n, nr in t.grad_fn.next_functions]

    assert type((3 + x).grad_fn).__name__ == "AddBackward0"
    assert edges(3 + x) == [("AccumulateGrad", 0), (None, 0)]
    assert edges(3 * x) == [("AccumulateGrad", 0), (None, 0)]
    assert type((3 - x).grad_fn).__name__ == "RsubBackward1"
    assert edges(3 - x) == [("AccumulateGrad", 0)]
    assert type((3 / x).grad_fn).__name__ == "MulBackward0"
    assert edges(3 / x) == [("ReciprocalBackward0", 0), (None, 0)]
    assert type((2 ** x).grad_fn).__name__ == "PowBackward2"
    assert type((x ** 2).grad_fn).__name__ == "PowBackward0"
    assert type((x ** x).grad_fn).__name__ == "PowBackward1"
    assert type((-x).grad_fn).__name__ == "NegBackward0"


def test_reflected_operator_values_and_grads():
    x = jg.tensor([7.0, 3.0, 0.1, -2.5], requires_grad=True)
    y = 3 / x
    # PyTorch computes 3 / x as reciprocal(x) * 3: the same bits
    assert y.tolist() == [0.42857142857142855, 1.0, 30.0, -1.2000000000000002]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -3 / np.array([7.0, 3.0, 0.1, -2.5]) ** 2,
                               rtol=1e-15)
    x.grad = None
    (5 - x).sum().backward()
    assert x.grad.tolist() == [-1.0] * 4
    x.grad = None
    (2 ** x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 ** x.detach().numpy() * np.log(2), rtol=1e-15)
    i = jg.tensor([1, 2, 4])
    assert (3 / i).tolist() == [3.0, 1.5, 0.75] and (3 / i).dtype == jg.float64
    assert (3 - i).tolist() == [2, 1, -1] and (3 - i).dtype == jg.int64
    assert (2.5 - i).tolist() == [1.5, 0.5, -1.5]


def test_unary_operators():
    a = jg.tensor([-1.0, 2.0])
    assert (-a).tolist() == [1.0, -2.0]
    assert abs(a).tolist() == [1.0, 2.0]
    assert (+a) is a


def test_comparisons_give_bool_tensors():
    a = jg.tensor([1.0, 2.0, 4.0])
    for r in (a > 1, a >= 2, a < 4, a <= 1, a == 2, a != 2, a == jg.tensor([1.0, 0.0, 4.0])):
        assert r.dtype == jg.bool and r.requires_grad is False
    assert (a > 1).tolist() == [False, True, True]
    assert (a == jg.tensor([1.0, 0.0, 4.0])).tolist() == [True, False, True]
    assert ((a > 1) & (a < 4)).tolist() == [False, True, False]
    assert ((a > 1) | (a < 2)).tolist() == [True, True, True]
    assert (~(a > 1)).tolist() == [True, False, False]
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    assert (x > 1).grad_fn is None


# --- dtype promotion (NumPy 2 rules) --------------------------------------------------------------
@pytest.mark.parametrize("x_dtype,other", [
    ("float32", 2.5), ("float32", 2), ("int64", 2.5), ("int32", 2), ("int64", True),
    ("bool", 1), ("bool", 1.5), ("float32", np.float64(2.5)), ("int64", np.float32(2.5)),
    ("int32", np.int64(2)), ("float32", np.array(2.5)), ("float32", np.array([2.5])),
])
def test_promotion_with_scalars_matches_numpy(x_dtype, other):
    arr = np.array([1, 2]).astype(x_dtype)
    t = jg.tensor(arr)
    for op in (operator.add, operator.mul):
        assert op(t, other).dtype.np == op(arr, other).dtype
        assert op(other, t).dtype.np == op(other, arr).dtype


@pytest.mark.parametrize("a_dtype,b_dtype", [
    ("float32", "float64"), ("int64", "float32"), ("int32", "int64"), ("bool", "bool"),
    ("int64", "int64"), ("bool", "int32"), ("uint8", "int8"), ("float16", "float32"),
])
def test_promotion_between_tensors_matches_numpy(a_dtype, b_dtype):
    a, b = np.array([1, 2]).astype(a_dtype), np.array([3, 1]).astype(b_dtype)
    ta, tb = jg.tensor(a), jg.tensor(b)
    assert (ta + tb).dtype.np == (a + b).dtype
    assert (ta * tb).dtype.np == (a * b).dtype
    assert (ta / tb).dtype.np == (a / b).dtype
    np.testing.assert_array_equal((ta / tb).numpy(), a / b)


def test_promotion_examples():
    f32 = jg.tensor([1.0, 2.0], dtype=jg.float32)
    assert (f32 * 2.5).dtype == jg.float32 and (f32 * 2.5).tolist() == [2.5, 5.0]
    i64 = jg.tensor([1, 2])
    assert (i64 / i64).dtype == jg.float64 and (i64 / i64).tolist() == [1.0, 1.0]
    assert (i64 * f32).dtype == jg.float64  # NumPy 2: int64 with float32 is float64
    assert (2.5 * i64).dtype == jg.float64 and (2.5 * i64).tolist() == [2.5, 5.0]
    assert (i64 ** 2).dtype == jg.int64 and (i64 ** 2).tolist() == [1, 4]
    assert (f32 + jg.tensor([1.0, 2.0])).dtype == jg.float64


def test_grad_of_promoted_op_has_input_dtype():
    x = jg.tensor([1.0, 2.0], dtype=jg.float32, requires_grad=True)
    w = jg.tensor([3.0, 4.0], dtype=jg.float64, requires_grad=True)
    y = x * w
    assert y.dtype == jg.float64
    y.sum().backward()
    assert x.grad.dtype == jg.float32 and x.grad.tolist() == [3.0, 4.0]
    assert w.grad.dtype == jg.float64 and w.grad.tolist() == [1.0, 2.0]


# --- errors -------------------------------------------------------------------------------------
def test_broadcast_mismatch_names_op_and_shapes():
    with pytest.raises(RuntimeError) as info:
        jg.ones(2, 4) + jg.ones(3)
    msg = str(info.value)
    assert "add" in msg and "(2, 4)" in msg and "(3,)" in msg
    assert ("size of tensor a (4) must match the size of tensor b (3) at non-singleton "
            "dimension 1") in msg
    with pytest.raises(RuntimeError, match=r"mul: the size of tensor a \(5\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 0"):
        jg.ones(5, 2, 3) * jg.ones(4, 1, 3)


def test_failed_op_leaves_tensors_unchanged():
    a = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for fn in (lambda: a + b, lambda: a * b, lambda: b - a, lambda: a / b):
        with pytest.raises(RuntimeError):
            fn()
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]] and b.tolist() == [1.0, 2.0, 3.0]
    assert a._version == 0 and b._version == 0
    assert a.grad is None and a.is_leaf and b.is_leaf
    c = jg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError):
        c.add_(jg.ones(3))
    with pytest.raises(RuntimeError):
        c.mul_(jg.ones(2, 2))
    assert c.tolist() == [1.0, 2.0] and c._version == 0


def test_unsupported_operand_type():
    with pytest.raises(TypeError):
        jg.tensor([1.0]) + "a"
    with pytest.raises(TypeError):
        jg.tensor([1.0]) * object()
