"""Focused tests for shape ops, indexing and matmul (the generated ones live in test_ops.py)."""
import itertools

import numpy as np
import pytest

import jitgrad
from jitgrad.ops import linalg, shape
from jitgrad.testing import assert_close, gradcheck, gradgradcheck


def _t(*s, requires_grad=True, seed=0):
    rng = np.random.default_rng(seed)
    return jitgrad.tensor(rng.standard_normal(s), requires_grad=requires_grad)


# --- views ---------------------------------------------------------------------------------
def test_seed_view_example_grad_reshapes_back():
    x = jitgrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x.view(2, 2)
    assert y.grad_fn.name() == "ViewBackward0"
    assert np.shares_memory(y._data, x._data)
    assert y._version_counter is x._version_counter and y._base is x
    (y * y).sum().backward()
    assert x.grad.shape == (4,)
    assert_close(x.grad, [2.0, 4.0, 6.0, 8.0])


def test_view_write_under_no_grad_is_seen_by_both():
    x = jitgrad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x.view(2, 2)
    v0 = x._version
    with jitgrad.no_grad():
        y[0, 1] = 10.0
    assert x.tolist() == [1.0, 10.0, 3.0, 4.0]
    assert x._version == y._version == v0 + 1


@pytest.mark.parametrize("fn, name", [
    (lambda x: x.view(6), "ViewBackward0"),
    (lambda x: x.reshape(3, 2), "ViewBackward0"),
    (lambda x: x.t().reshape(6), "UnsafeViewBackward0"),
    (lambda x: x.flatten(), "ViewBackward0"),
    (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: x.unsqueeze(0).squeeze(), "SqueezeBackward0"),
    (lambda x: x.unsqueeze(0).squeeze(0), "SqueezeBackward1"),
    (lambda x: x.unsqueeze(0).squeeze((0, 1)), "SqueezeBackward2"),
    (lambda x: x.unsqueeze(0).expand(4, 2, 3), "ExpandBackward0"),
    (lambda x: x.transpose(0, 1), "TransposeBackward0"),
    (lambda x: x.permute(1, 0), "PermuteBackward0"),
    (lambda x: x.t(), "TBackward0"),
    (lambda x: x[0], "SelectBackward0"),
    (lambda x: x[0, 1], "SelectBackward0"),
    (lambda x: x[1:], "SliceBackward0"),
    (lambda x: x[:, ::2], "SliceBackward0"),
    (lambda x: x[None], "UnsqueezeBackward0"),
    (lambda x: x[[0, 1]], "IndexBackward0"),
    (lambda x: x[x > 0], "IndexBackward0"),
    (lambda x: shape.cat([x, x]), "CatBackward0"),
    (lambda x: shape.stack([x, x]), "StackBackward0"),
])
def test_grad_fn_names(fn, name):
    assert fn(_t(2, 3)).grad_fn.name() == name


@pytest.mark.parametrize("fn", [
    lambda x: x.view(3, 2), lambda x: x.reshape(-1), lambda x: x.t(), lambda x: x.transpose(0, 1),
    lambda x: x.permute(1, 0), lambda x: x.unsqueeze(1), lambda x: x[None, :, None].squeeze(),
    lambda x: x.expand(2, 2, 3), lambda x: x[1], lambda x: x[:, 1:], lambda x: x[0, 2],
    lambda x: x[...],
])
def test_view_ops_share_storage_and_version(fn):
    x = _t(2, 3)
    y = fn(x)
    assert np.shares_memory(y._data, x._data)
    assert y._version_counter is x._version_counter and y._base is x
    z = fn(y) if y.ndim == 2 else y[...]
    assert z._base is x  # a view of a view has the root as base


def test_copies_do_not_share():
    x = _t(2, 3)
    for y in (x.t().reshape(6), x[[0, 1]], x[x > 0], shape.cat([x, x]), shape.stack([x])):
        assert not np.shares_memory(y._data, x._data)
        assert y._base is None and y._version_counter is not x._version_counter


def test_int_index_gives_0d_view():
    x = _t(2, 3, requires_grad=False)
    y = x[1, 2]
    assert y.shape == () and np.shares_memory(y._data, x._data)
    with jitgrad.no_grad():
        y[...] = 5.0
    assert x[1, 2].item() == 5.0


def test_reshape_view_and_copy():
    x = _t(2, 3)
    assert np.shares_memory(x.reshape(3, 2)._data, x._data)
    assert not np.shares_memory(x.t().reshape(6)._data, x._data)
    x.t().reshape(6).sum().backward()
    assert_close(x.grad, np.ones((2, 3)))


# --- shape arguments and errors ------------------------------------------------------------
def test_shape_varargs_tuple_and_inference():
    x = _t(2, 3, 4)
    assert x.view(4, -1).shape == (4, 6) == x.view((4, -1)).shape == x.view([4, -1]).shape
    assert x.reshape(-1).shape == (24,) and x.expand(5, -1, -1, -1).shape == (5, 2, 3, 4)
    assert x.permute((2, 0, 1)).shape == (4, 2, 3) == x.permute(-1, 0, 1).shape
    assert x.flatten(1).shape == (2, 12) and x.flatten(0, 1).shape == (6, 4)
    assert x.squeeze(1).shape == (2, 3, 4)  # a non-1 dim is left alone, as in PyTorch


@pytest.mark.parametrize("fn, exc, msg", [
    (lambda x: x.view(3, 5), RuntimeError, r"shape '\[3, 5\]' is invalid for input of size 12"),
    (lambda x: x.t().view(12), RuntimeError, "view size is not compatible with input tensor's "
     r"size and stride \(at least one dimension spans across two contiguous subspaces\). Use "
     r"\.reshape\(\.\.\.\) instead\."),
    (lambda x: x.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda x: x.reshape(5, -1), RuntimeError,
     r"shape '\[5, -1\]' is invalid for input of size 12"),
    (lambda x: x.unsqueeze(3), IndexError, r"expected to be in range of \[-3, 2\], but got 3"),
    (lambda x: x.transpose(0, 2), IndexError, "Dimension out of range"),
    (lambda x: x.expand(3, 5), RuntimeError, r"expanded size of the tensor \(5\) must match the "
     r"existing size \(4\) at non-singleton dimension 1"),
    (lambda x: x.expand(4), RuntimeError, "the number of sizes provided"),
    (lambda x: x.permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda x: x.permute(0), RuntimeError, "does not match the length"),
    (lambda x: x.unsqueeze(0).t(), RuntimeError, r"t\(\) expects a tensor with <= 2 dimensions, "
     "but self is 3D"),
    (lambda x: x.flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
])
def test_shape_errors(fn, exc, msg):
    x = _t(3, 4)
    with pytest.raises(exc, match=msg):
        fn(x)


def test_cat_errors_and_promotion():
    a, b = _t(2, 3), _t(2, 4)
    with pytest.raises(RuntimeError, match=r"cat\(\): Sizes of tensors must match except in "
                       r"dimension 0. Expected size 3 but got size 4 for tensor number 1 in the "
                       r"list\."):
        shape.cat([a, b])
    with pytest.raises(RuntimeError, match="same number of dimensions: got 2 and 1"):
        shape.cat([a, _t(3)])
    with pytest.raises(RuntimeError, match="zero-dimensional tensor"):
        shape.cat([_t()])
    with pytest.raises(RuntimeError, match="non-empty"):
        shape.cat([])
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got "
                       r"\[2, 3\] at entry 0 and \[2, 4\] at entry 1"):
        shape.stack([a, b])
    f32 = jitgrad.tensor(np.ones((1, 3), np.float32), requires_grad=True)
    out = shape.cat([a, f32])
    assert out.dtype == jitgrad.float64
    out.sum().backward()
    assert f32.grad.dtype == jitgrad.float32 and a.grad.dtype == jitgrad.float64
    assert shape.cat([jitgrad.tensor([1, 2]), jitgrad.tensor([0.5])]).dtype == jitgrad.float64


def test_cat_skips_legacy_empty_and_grads():
    a, e, b = _t(2, 3), jitgrad.zeros(0, requires_grad=True), _t(1, 3, seed=1)
    out = shape.cat([a, e, b])
    assert out.shape == (3, 3)
    (out * jitgrad.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
    assert_close(a.grad, np.arange(6.0).reshape(2, 3))
    assert_close(b.grad, [[6.0, 7.0, 8.0]])
    assert e.grad.shape == (0,)


def test_expand_grad_sums_and_is_readonly_view():
    x = _t(3, 1)
    y = x.expand(2, 3, 4)
    assert np.shares_memory(y._data, x._data)
    y.sum().backward()
    assert_close(x.grad, np.full((3, 1), 8.0))
    with jitgrad.no_grad(), pytest.raises(RuntimeError, match="more than one element"):
        y[0, 0, 0] = 1.0


# --- indexing ------------------------------------------------------------------------------
def test_repeated_indices_accumulate():
    x = jitgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 1]].sum().backward()
    assert_close(x.grad, [2.0, 1.0, 0.0])
    x.grad = None
    x[jitgrad.tensor([2, 2, 2, -1])].sum().backward()
    assert_close(x.grad, [0.0, 0.0, 4.0])


def test_mask_indexing_grads():
    x = jitgrad.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], requires_grad=True)
    m = x > 0
    y = x[m]
    assert y.tolist() == [1.0, 3.0, 5.0]
    (y * jitgrad.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert_close(x.grad, [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    x.grad = None
    x[np.array([False, True])].sum().backward()
    assert_close(x.grad, [[0, 0, 0], [1, 1, 1]])
    x.grad = None
    x[:, [True, False, True]].sum().backward()
    assert_close(x.grad, [[1, 0, 1], [1, 0, 1]])


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), slice(None, None, -1), (slice(1, None), None, slice(None, None, 2)),
    (Ellipsis, 1), (None, ...), [1, 1, 0], ([0, 1], [2, 2]), ([[0], [1]], [0, 2]),
    (slice(None), [2, 0, 2]), ([1, 0], slice(None), [0, 1]), (0, slice(None), [1, 1]),
    (None, [0, 1], 2), True, False, (np.array([True, False]), slice(1, 3)), np.array(1),
    ([0, 1], None, [1, 2]),
])
def test_getitem_matches_numpy_and_grads(index):
    x = _t(2, 3, 4)
    got = x[index]
    expected = x._data[index]
    assert got.shape == np.shape(expected)
    assert_close(got, expected)
    if got.numel():
        assert gradcheck(lambda t: t[index], [x])
        assert gradgradcheck(lambda t: t[index], [x])


@pytest.mark.parametrize("index, exc, msg", [
    (5, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ((0, 7), IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
    ([0, 3], IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    ((0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
    (np.array([True, False]), IndexError, r"The shape of the mask \[2\] at index 0 does not match "
     r"the shape of the indexed tensor \[3\] at index 0"),
    (1.5, IndexError, "only integers, slices"),
    (jitgrad.tensor([0.0]), IndexError, "tensors used as indices must be long, int, byte or bool"),
])
def test_getitem_errors(index, exc, msg):
    x = _t(3, 4)
    with pytest.raises(exc, match=msg):
        x[index]


def test_setitem_semantics():
    x = jitgrad.zeros(3, 4)
    v = x._version
    x[0] = 1.0
    x[1, [0, 0, 2]] = jitgrad.tensor([5.0, 6.0, 7.0])  # repeated index: last write wins
    x[x > 6] = -1.0
    x[2] = np.arange(4)
    assert x.tolist() == [[1.0] * 4, [6.0, 0.0, -1.0, 0.0], [0.0, 1.0, 2.0, 3.0]]
    assert x._version == v + 4
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot "
                       r"be broadcast to indexing result of shape \[4\]"):
        x[0] = jitgrad.tensor([1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 3"):
        x[3] = 0.0
    assert x._version == v + 4


def test_setitem_grad_rules():
    w = _t(3)
    with pytest.raises(RuntimeError) as info:
        w[0] = 1.0  # a basic index writes through a view of the leaf, as PyTorch
    assert str(info.value) == ("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
    with pytest.raises(RuntimeError) as info:
        w[[0]] = 1.0  # an advanced index is index_put_ on the leaf itself
    assert str(info.value) == ("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        w[1:][0] = 1.0
    y = w * 2
    y[0] = 1.0  # non-leaf: recorded (CopySlices), see tests/ops/test_views_inplace.py
    assert y.grad_fn.name() == "CopySlices" and y[0].item() == 1.0
    z = jitgrad.zeros(3)
    z[0] = w[1]
    assert z.requires_grad and z.grad_fn.name() == "CopySlices"
    with jitgrad.no_grad():
        w[0] = 7.0
    assert w[0].item() == 7.0 and w.requires_grad and w.is_leaf


def test_saved_tensor_version_check_after_setitem():
    a = _t(2, 2)
    b = jitgrad.tensor(np.eye(2))
    out = linalg.matmul(a, b)
    with jitgrad.no_grad():
        b[0, 0] = 3.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# --- matmul --------------------------------------------------------------------------------
_SHAPES = [(3,), (2, 3), (4, 2, 3), (2, 1, 2, 3)]


@pytest.mark.parametrize("sa, sb", list(itertools.product(_SHAPES, repeat=2)))
def test_matmul_every_rank_combination(sa, sb):
    rng = np.random.default_rng(0)
    an = rng.standard_normal(sa)
    bshape = (3,) if len(sb) == 1 else sb[:-2] + (3, 2)
    bn = rng.standard_normal(bshape)
    a, b = jitgrad.tensor(an, requires_grad=True), jitgrad.tensor(bn, requires_grad=True)
    out = a @ b
    expected = np.matmul(an, bn)
    assert out.shape == expected.shape
    assert_close(out, expected, rtol=1e-12)
    nd = (len(sa), len(bshape))
    name = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "MmBackward0",
            (2, 2): "MmBackward0"}.get(nd, "BmmBackward0")
    assert out.grad_fn.name() == name
    out.sum().backward()
    assert a.grad.shape == sa and b.grad.shape == bshape
    assert gradcheck(linalg.matmul, [a, b])


def test_matmul_double_backward():
    a, b = _t(2, 2, 3), _t(3, 4, seed=1)
    assert gradgradcheck(linalg.matmul, [a, b])
    v = _t(3, seed=2)
    assert gradgradcheck(linalg.matmul, [v, b])
    assert gradgradcheck(linalg.matmul, [a, v])


@pytest.mark.parametrize("a, b, msg", [
    ((2, 3), (4, 5), r"matmul: mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ((3,), (4, 5), r"\(1x3 and 4x5\)"),
    ((2, 3), (4,), r"\(2x3 and 4x1\)"),
    ((3,), (4,), "inconsistent tensor size"),
    ((), (3,), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    ((2, 2, 3), (3, 3, 2), r"size of tensor a \(2\) must match the size of tensor b \(3\)"),
])
def test_matmul_errors(a, b, msg):
    with pytest.raises(RuntimeError, match=msg):
        linalg.matmul(_t(*a), _t(*b))


def test_dot_mm_checks_and_dtype():
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D"):
        linalg.dot(_t(2, 2), _t(2))
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        linalg.mm(_t(2, 2), _t(2))
    assert linalg.dot(_t(3), _t(3)).grad_fn.name() == "DotBackward0"
    x32 = jitgrad.tensor(np.ones((2, 2), np.float32), requires_grad=True)
    out = linalg.matmul(x32, _t(2, 2))
    assert out.dtype == jitgrad.float64
    out.sum().backward()
    assert x32.grad.dtype == jitgrad.float32
    ints = linalg.matmul(jitgrad.tensor([[1, 2]]), jitgrad.tensor([[3], [4]]))
    assert ints.tolist() == [[11]] and ints.grad_fn is None
