"""Views and in-place ops with NumPy semantics and PyTorch's autograd (CopySlices).

Each ``case(m, x, v)`` runs twice: on NumPy arrays (``m = NumPyOps``, the reference for every
forward value, including writes seen through the base and through other views) and on
jitgrad Tensors (``m = TensorOps``), whose gradients are then checked against float64 finite
differences. Node names, version counts and messages were checked against PyTorch 2.13.
"""
import tracemalloc

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.ops.core import dispatch
from jitgrad.ops import indexing, scatter, shape, unary
from jitgrad.testing import assert_close, gradcheck, gradgradcheck
from jitgrad.testing.db_shape import NumPyOps, TensorOps

LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MSG = ("a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation.")
MASK = np.array([[True, False, True, False], [False, False, True, True],
                 [True, True, False, False]])


# --- the cases: one function, NumPy and jitgrad ---------------------------------------------
def c_slice_mul(m, x, v):  # in-place through a slice view; the base and the view both show it
    y = x * 1.0
    s = y[1:3]
    m.mul_(s, v[:4])
    return y, s


def c_column_iadd(m, x, v):  # y[:, 0] += v
    y = x * 1.0
    y[:, 0] += v[:3]
    return (y,)


def c_slice_imul_scalar(m, x, v):
    y = x * 1.0
    y[1:] *= 2.0
    y[0] *= v[0]
    return (y,)


def c_overlapping_views_see_writes(m, x, v):
    y = x * 1.0
    a, b = y[0:2], y[1:]
    m.mul_(a, 3.0)
    m.add_(b, v[:4])  # b overlaps a's row 1: it reads a's write
    return y, a, b


def c_setitem_int_and_slices(m, x, v):
    y = x * 1.0
    y[1] = v[:4]  # a row from a tensor that requires grad
    y[0, 1:3] = 5.0  # a scalar
    y[2, ::2] = np.array([1.0, -1.0])  # an array
    y[..., 3] = v[:3]
    return (y,)


def c_setitem_broadcast(m, x, v):
    y = x * 1.0
    y[:2] = v[4:8]  # broadcast over rows
    y[2:, 1:3] = v[None, :2] * 2.0  # value with a leading size-1 dim NumPy drops
    return (y,)


def c_setitem_repeated_ints(m, x, v):  # last write wins
    y = x * 1.0
    y[[0, 2, 0], 1] = v[:3]
    y[[2, 2]] = v[4:8]  # whole rows
    return (y,)


def c_setitem_repeated_2d(m, x, v):
    y = x * 1.0
    y[[0, 0, 1, 0], [1, 1, 2, 1]] = v[:4]
    return (y,)


def c_iadd_repeated_buffered(m, x, v):  # NumPy's a[idx] += v does not accumulate repeats
    y = x * 1.0
    y[[1, 1, 2], [0, 0, 3]] += v[:3]
    y[[0, 0]] *= v[3]
    return (y,)


def c_setitem_mask(m, x, v):
    y = x * 1.0
    y[MASK] = v[:6]
    return (y,)


def c_mask_imul_and_fill(m, x, v):  # x[mask] *= 0 and friends
    y = x * 1.0
    y[MASK] *= 0.0
    y[~MASK] += v[0]
    y[:, MASK[0]] = v[1]  # a mask over the second dim
    return (y,)


def c_mixed_basic_advanced(m, x, v):
    y = x * 1.0
    y[1:, [0, 2, 0]] = v[:3]  # repeated column: the last write wins
    y[[2, 0], 1:] *= 1.5
    return (y,)


def c_view_of_view_chain(m, x, v):  # views of views: reshape, slice, transpose, step
    y = x * 1.0
    s = m.view(y, 4, 3)[1:].T[::2]
    m.mul_(s, v[:3])
    return y, s


def c_view_of_nonleaf_descendant(m, x, v):  # x (leaf) -> exp -> * -> view -> in-place
    y = m.exp(x) * v[0]
    w = m.view(y, 12)[2:10].reshape(2, 4)
    m.sin_(w)
    return y, w


def c_base_modified_then_view_used(m, x, v):  # the view's history is regenerated
    y = x * 1.0
    s = y[:, 1:3]
    m.mul_(y, v[0])
    m.add_(y[0], 1.0)
    return s * s, y


def c_transposed_views(m, x, v):
    y = x * 1.0
    m.add_(m.t(y)[0], v[:3])
    m.mul_(m.transpose(y, 0, 1)[2:], 2.0)
    m.neg_(m.permute(y, 1, 0)[::3])
    return (y,)


def c_diagonal_narrow_select(m, x, v):
    y = x * 1.0
    sq = m.view(y, 3, 4)[:, :3]
    m.mul_(m.narrow(y, 1, 1, 2), v[:2])
    m.add_(m.select(y, 0, 2), v[2])
    z = m.view(y, 12)[:9] * 1.0
    m.mul_(m.diagonal(m.view(z, 3, 3)), 3.0)
    m.add_(m.diagonal(m.view(z, 3, 3), 1), v[:2])
    return y, sq, z


def c_negative_step(m, x, v):  # NumPy's reversed views
    y = x * 1.0
    r = y[::-1, ::-2]
    m.mul_(r, v[:2])
    return y, r


def c_unsqueeze_squeeze_views(m, x, v):
    y = x * 1.0
    u = m.unsqueeze(y, 1)
    m.mul_(u[1:], v[:4])
    m.add_(m.squeeze(m.unsqueeze(y, 0), 0)[0], 1.0)
    return (y,)


def c_build_from_zeros(m, x, v):  # a plain buffer filled from values that require grad
    a = m.zeros(3, 4)
    for i in range(3):
        a[i] = x[i] * v[i]
    a[:, 0] = 2.0
    return (a,)


def c_setitem_self_overlap(m, x, v):  # y[1:] = y[:-1] reads the old values (NumPy)
    y = x * 1.0
    y[1:] = y[:-1]
    y[:, ::-1] += y
    return (y,)


def c_fill_zero_copy(m, x, v):
    y = x * 1.0
    m.zero_(y[0])
    m.fill_(y[:, 2], 7.0)
    m.copy_(m.t(y)[1], v[:3])
    return (y,)


def c_tensor_valued_writes(m, x, v):  # fill_/masked_fill_ with 0-d tensors, clamp_ bounds
    y = x * 1.0
    m.fill_(y[0], v[0])
    m.masked_fill_(y[1:], MASK[1:], v[1])
    m.clamp_(y[:, 2], v[:3] - 1.0, v[3:6])
    return (y,)


def c_index_ops_on_views(m, x, v):
    y = x * 1.0
    m.masked_fill_(y[:, 1:], MASK[:, 1:], 0.5)
    m.index_add_(y[1:], 1, np.array([3, 0, 3]), m.view(v[:6], 2, 3))
    m.index_put_(y, (np.array([0, 2, 0]), np.array([1, 1, 1])), v[6:9])
    m.index_put_(y[0], (np.array([3, 3]),), v[9:11], True)
    m.scatter_add_(m.t(y), 0, np.array([[1, 1, 0]]), m.view(v[:3], 1, 3))
    return (y,)


def c_unary_chain_on_view(m, x, v):  # ops whose derivative needs their input (a copy of it)
    y = x * x + 1.0  # positive
    s = y[1:, 1:]
    m.log_(s)
    m.sin_(y[0])
    m.cos_(y[2])
    m.abs_(m.sub_(y[:, 3], 1.5))
    m.neg_(y[:, 0])
    m.pow_(y[:, 1], 2.0)
    m.div_(y[:, 2], v[:3])
    m.clamp_(y[1], -0.5, 0.9)
    return (y,)


def _result_saving(name):
    # exp_/sqrt_/tanh_/sigmoid_/relu_ save their result: the last write to the storage
    def case(m, x, v):
        y = x * 1.0
        m.mul_(y[1:], v[:4])
        if name == "sqrt_":
            m.abs_(y)
        getattr(m, name)(m.t(y)[1:3])
        return y, y[0]

    case.__name__ = f"c_{name}on_view"
    return case


CASES = [c_slice_mul, c_column_iadd, c_slice_imul_scalar, c_overlapping_views_see_writes,
         c_setitem_int_and_slices, c_setitem_broadcast, c_setitem_repeated_ints,
         c_setitem_repeated_2d, c_iadd_repeated_buffered, c_setitem_mask, c_mask_imul_and_fill,
         c_mixed_basic_advanced, c_view_of_view_chain, c_view_of_nonleaf_descendant,
         c_base_modified_then_view_used, c_transposed_views, c_diagonal_narrow_select,
         c_negative_step, c_unsqueeze_squeeze_views, c_build_from_zeros, c_setitem_self_overlap,
         c_fill_zero_copy, c_tensor_valued_writes, c_index_ops_on_views, c_unary_chain_on_view,
         *(_result_saving(op) for op in ("exp_", "sqrt_", "tanh_", "sigmoid_", "relu_"))]


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    # |values| kept away from the kinks of abs/relu/clamp so finite differences are clean
    x = rng.uniform(0.2, 1.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
    v = rng.uniform(0.5, 1.5, 12)
    return x, v


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[2:] for c in CASES])
def test_forward_matches_numpy(case):
    x, v = _inputs()
    expected = case(NumPyOps, x.copy(), v.copy())
    got = case(TensorOps, jg.tensor(x, requires_grad=True), jg.tensor(v, requires_grad=True))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        assert_close(g, e, rtol=1e-13, atol=1e-14)
    plain = case(TensorOps, jg.tensor(x), jg.tensor(v))  # no autograd: the same values
    for g, e in zip(plain, expected):
        assert_close(g, e, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("case", CASES, ids=[c.__name__[2:] for c in CASES])
def test_gradients_match_finite_differences(case):
    x, v = _inputs(1)
    inputs = [jg.tensor(x, requires_grad=True), jg.tensor(v, requires_grad=True)]
    assert gradcheck(lambda a, b: case(TensorOps, a, b), inputs, atol=1e-6)


@pytest.mark.parametrize("case", [c_slice_mul, c_setitem_repeated_2d, c_view_of_nonleaf_descendant,
                                  c_index_ops_on_views], ids=lambda c: c.__name__[2:])
def test_second_derivatives_through_copyslices(case):
    x, v = _inputs(2)
    inputs = [jg.tensor(x, requires_grad=True), jg.tensor(v, requires_grad=True)]
    assert gradgradcheck(lambda a, b: [o.sum() * o for o in case(TensorOps, a, b)][0], inputs,
                         atol=1e-5)


def test_repeated_index_gradient_goes_to_the_winning_write_only():
    x = jg.zeros(3)
    v = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2]] = v
    assert x.tolist() == [2.0, 0.0, 3.0]
    (x * jg.tensor([10.0, 20.0, 30.0])).sum().backward()
    assert v.grad.tolist() == [0.0, 10.0, 30.0]  # v[0] was overwritten by v[1]


# --- graph structure, as PyTorch builds it ---------------------------------------------------
def test_copyslices_structure_and_view_regeneration():
    x = jg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 2
    mul_node = y.grad_fn
    v = y[1:3]
    assert v.grad_fn.name() == "SliceBackward0" and v._base is y
    v.mul_(3)
    assert type(y.grad_fn).__name__ == "CopySlices" and repr(y).endswith("grad_fn=<CopySlices>)")
    assert y.grad_fn.next_functions[0] == (mul_node, 0)
    assert y.grad_fn.next_functions[1:] == ((None, 0),)
    assert y.grad_fn.fn.name() == "MulBackward0"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert v.grad_fn.next_functions == ((y.grad_fn, 0),)
    assert v._version == y._version == 1
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 6.0, 6.0, 2.0]


def test_node_names_match_pytorch():
    x = jg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    w = jg.tensor(2.0, requires_grad=True)

    def node(f):
        y = x * 1
        f(y)
        return y.grad_fn.name()

    assert node(lambda y: y.__setitem__([0, 0], x[:2])) == "IndexPutBackward0"
    assert node(lambda y: y.__setitem__(y > 2, 0.0)) == "IndexPutBackward0"
    assert node(lambda y: y.__setitem__(slice(1, None), 5.0)) == "CopySlices"
    assert node(lambda y: y.masked_fill_(y > 2, 0.0)) == "MaskedFillBackward0"
    assert node(lambda y: y.masked_fill_(y > 2, w)) == "MaskedFillBackward1"
    assert node(lambda y: y.index_add_(0, jg.tensor([0, 0]), jg.ones(2))) == "IndexAddBackward0"
    assert node(lambda y: y.scatter_add_(0, jg.tensor([0, 0]), jg.ones(2))) == "ScatterAddBackward0"
    assert node(lambda y: y.index_put_((jg.tensor([1]),), jg.ones(1), accumulate=True)) == \
        "IndexPutBackward0"
    assert node(lambda y: y.copy_(jg.ones(4))) == "CopyBackwards"
    assert node(lambda y: y.fill_(2.0)) == "FillBackward2"
    assert node(lambda y: y.fill_(w)) == "FillBackward3"
    assert node(lambda y: y.zero_()) == "ZeroBackward0"
    assert node(lambda y: y[1:].exp_()) == "CopySlices"
    m = (x * 1).view(2, 2)
    assert m.diagonal().grad_fn.name() == "DiagonalBackward0"
    assert m.narrow(1, 0, 1).grad_fn.name() == "SliceBackward0"
    assert m.select(1, 0).grad_fn.name() == "SelectBackward0"
    assert x.take(jg.tensor([1])).grad_fn.name() == "TakeBackward0"
    assert x.gather(0, jg.tensor([0, 0])).grad_fn.name() == "GatherBackward0"
    assert x.index_select(0, jg.tensor([1])).grad_fn.name() == "IndexSelectBackward0"


def test_versions_bump_like_pytorch():
    y = jg.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
    v = y[1:]
    for op in (lambda: v.add_(1), lambda: y.mul_(2), lambda: y.masked_fill_(y > 3, 0.0),
               lambda: y.index_add_(0, jg.tensor([0]), jg.ones(1)),
               lambda: y.scatter_add_(0, jg.tensor([2]), jg.ones(1)),
               lambda: y.index_put_((jg.tensor([0]),), jg.ones(1)),
               lambda: y.copy_(jg.ones(3)), lambda: y.fill_(1.0), lambda: y.zero_(),
               lambda: y.__setitem__(0, 1.0), lambda: y.__setitem__([0], 1.0)):
        before = y._version
        op()
        assert y._version == v._version == before + 1
    before = y._version
    y[1:] += 1  # view += then setitem copy: two bumps, as in PyTorch
    assert y._version == before + 2
    y[[0, 1]] += 1  # getitem copy, += on the copy, index_put: one bump on y
    assert y._version == before + 3


def _writes(y, v, w):
    v.mul_(w)  # needs v's old value for w's gradient: a copy of v only
    v.add_(1.0)
    y.mul_(2.0)  # the whole base, in place
    y[5:10] = w[:5]
    y.exp_()  # saves its result: no copy either


def test_inplace_writes_in_place_without_copying_the_base():
    n = 200_000  # 1.6 MB
    x = jg.randn(n, requires_grad=True)
    w = jg.randn(100, requires_grad=True)
    warm = x * 1
    _writes(warm, warm[:100], w)  # compile the kernels first: compiling allocates a lot
    y = x * 1
    ptr = y.data_ptr()
    v = y[:100]
    tracemalloc.start()
    try:
        _writes(y, v, w)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200_000, peak  # far less than one copy of y (1.6 MB)
    assert y.data_ptr() == ptr
    y.sum().backward()
    assert x.grad is not None and w.grad is not None


def test_memory_of_inplace_op_needing_its_old_value_is_one_copy_of_the_view():
    y = jg.randn(200_000, requires_grad=True) * 1
    v = y[:1000]
    tracemalloc.start()
    try:
        v.sin_()  # the derivative needs sin's input: the view's 8 KB, not the base's 1.6 MB
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000, peak


# --- view metadata ----------------------------------------------------------------------------
def test_view_metadata_like_numpy_and_pytorch():
    m = jg.zeros(3, 4)
    v = m[1:, 1::2]
    assert v._base is m and v._is_view() and not m._is_view()
    assert v.storage_offset() == 5 and v.stride() == (4, 2) and not v.is_contiguous()
    assert v.data_ptr() == m.data_ptr() + 5 * 8
    assert m.t().contiguous().is_contiguous() and m.contiguous() is m
    assert m.t().contiguous().grad_fn is None
    r = m[::-1]  # NumPy's negative strides
    assert r.stride() == (-4, 1) and r.storage_offset() == 8
    for view in (m.view(12), m.reshape(2, 6), m.t(), m.T, m.permute(1, 0), m.unsqueeze(0),
                 m[None].squeeze(0), m.flatten(), m.expand(2, 3, 4), m[1], m[:, 2], m[..., None],
                 m.diagonal(), m.narrow(0, 1, 2), m.select(1, 3), m.transpose(0, 1)):
        assert view._base is m and view._version_counter is m._version_counter
        assert np.shares_memory(view._data, m._data)
    assert m.t().reshape(12)._base is None  # reshape copies when a view is impossible
    assert m[[0, 1]]._base is None and m[m > 0]._base is None


def test_writes_through_every_kind_of_view_reach_the_base():
    a = np.arange(12.0).reshape(3, 4)
    t = jg.tensor(a.copy())
    for np_view, jg_view in ((a.reshape(12)[3:5], t.view(12)[3:5]), (a.T[1], t.t()[1]),
                             (np.einsum("ii->i", a[:, :3]), t[:, :3].diagonal()),
                             (a[:, 1:3], t.narrow(1, 1, 2)), (a[None][0, 2], t.unsqueeze(0)[0, 2]),
                             (a[::-1, ::2], t[::-1, ::2])):
        np_view *= 2.0
        jg_view *= 2.0
        assert_close(t, a, rtol=0, atol=0)
        assert_close(jg_view, np_view, rtol=0, atol=0)


def test_diagonal_view_is_writable_and_differentiable():
    x = jg.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    d = x.diagonal(1)
    assert d.tolist() == [1.0, 5.0]
    (d * jg.tensor([2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]


# --- .data and detach -----------------------------------------------------------------------
def test_data_is_a_detached_alias_with_its_own_version_counter():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    d = y.data
    assert d._base is None and not d.requires_grad and d.is_leaf
    assert d._version_counter is not y._version_counter
    d.mul_(2)  # invisible to autograd's checks, as in PyTorch: the backward uses the new values
    assert y.tolist() == (2 * np.exp([1.0, 2.0, 3.0])).tolist() and y._version == 0
    y.sum().backward()
    assert_close(x.grad, 2 * np.exp([1.0, 2.0, 3.0]))
    y = x.exp()
    y.detach().add_(1)  # detach shares the counter: the saved result is now stale
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_data_setter_replaces_storage_and_unlinks_views():
    x = jg.tensor([1.0, 2.0, 3.0])
    v = x[1:]
    x.data = jg.tensor([7.0, 8.0, 9.0])
    assert x.tolist() == [7.0, 8.0, 9.0] and v.tolist() == [2.0, 3.0] and v._base is None


# --- autograd rules (messages as PyTorch) -------------------------------------------------------
def _unchanged(t, values, version):
    assert t.tolist() == values and t._version == version


def test_leaf_and_view_of_leaf_are_refused_and_left_unchanged():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for op in (lambda: x.mul_(2), lambda: x.masked_fill_(x > 1, 0.0),
               lambda: x.index_put_((jg.tensor([0]),), jg.ones(1)), lambda: x.__setitem__([0], 1.0),
               lambda: x.index_add_(0, jg.tensor([0]), jg.ones(1))):
        with pytest.raises(RuntimeError) as info:
            op()
        assert str(info.value) == LEAF_MSG
    for op in (lambda: x[1:].mul_(2), lambda: x.__setitem__(0, 1.0), lambda: x.view(3).zero_(),
               lambda: x.diagonal if False else x[None][0].copy_(jg.ones(3))):
        with pytest.raises(RuntimeError) as info:
            op()
        assert str(info.value) == VIEW_OF_LEAF_MSG
    _unchanged(x, [1.0, 2.0, 3.0], 0)
    assert x.is_leaf and x.grad_fn is None
    with jg.no_grad():  # optimizer updates
        x[1:].mul_(2)
        x[0] = 5.0
        x.masked_fill_(x > 5, 1.0)
    assert x.tolist() == [5.0, 4.0, 1.0] and x.is_leaf and x.requires_grad
    x.requires_grad_(False)
    v = x[:2]
    v.requires_grad_()  # a leaf view of a plain tensor
    with pytest.raises(RuntimeError) as info:
        v.add_(1)
    assert str(info.value) == LEAF_MSG


def test_views_made_under_no_grad_cannot_be_mixed_with_recorded_inplace():
    x = jg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    with jg.no_grad():
        v = y[1:]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                                           "modified inplace with grad mode enabled"):
        v.mul_(2)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        v[0] = 1.0
    _unchanged(y, [1.0, 2.0, 3.0, 4.0], 0)
    with jg.no_grad():
        v.mul_(2)  # both in no_grad: fine
    y.mul_(3)  # recorded on the base: the no_grad view may no longer be used with autograd
    with pytest.raises(RuntimeError, match="its base or another view of its base has been "
                                           "modified inplace with grad mode enabled"):
        v * 2
    with jg.no_grad():
        assert (v * 2).tolist() == [24.0, 36.0, 48.0]
    a = jg.zeros(3)
    with jg.no_grad():
        u = a[:2]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        u.add_(x[:2])


def test_plain_base_gets_history_and_its_views_require_grad():
    x = jg.tensor([1.0, 2.0], requires_grad=True)
    a = jg.zeros(3)
    v = a[1:]
    assert not v.requires_grad
    a[1] = x[0] * 3
    assert a.requires_grad and not a.is_leaf and type(a.grad_fn).__name__ == "CopySlices"
    assert a.grad_fn.next_functions[0] == (None, 0)
    assert v.requires_grad and v.grad_fn.name() == "AsStridedBackward0"
    (v * jg.tensor([1.0, 10.0])).sum().backward()
    assert x.grad.tolist() == [3.0, 0.0]


def test_saved_tensor_messages_name_the_current_node():
    x = jg.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)

    def message(f):
        with pytest.raises(RuntimeError) as info:
            f()
        return str(info.value)

    def exp_result():
        y = x.exp()
        z = y * 2
        y[1:].add_(1)  # through a view of exp's own output
        z.sum().backward()

    assert message(exp_result).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [float64 [5]], which is output 0 of Exp, is at version 1; expected version 0 "
        "instead.")

    def saved_base():
        y = x * 1
        z = y * y
        y[1:].mul_(2)
        z.sum().backward()

    assert "[float64 [5]], which is output 0 of torch::autograd::CopySlices, is at version 1" in \
        message(saved_base)

    def saved_view():
        y = x * 1
        v = y[1:]
        z = v * v
        y.mul_(2)
        z.sum().backward()

    assert "[float64 [4]], which is output 0 of AsStrided, is at version 1" in message(saved_view)

    def operand_aliasing_self():  # saved before the write: raises instead of a wrong gradient
        y = x * 1
        y[1:].mul_(y[:-1])
        y.sum().backward()

    assert "is at version 1; expected version 0" in message(operand_aliasing_self)


def test_retain_grad_follows_inplace_ops():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y.retain_grad()
    y.mul_(2)
    (y * 3).sum().backward()
    assert y.grad.tolist() == [3.0, 3.0, 3.0]


# --- errors leave everything unchanged -------------------------------------------------------
@pytest.mark.parametrize("op, exc, msg", [
    (lambda y: y[:2].add_(jg.ones(3)), RuntimeError,
     r"size of tensor a \(2\) must match the size of tensor b \(3\)"),
    (lambda y: y.add_(jg.ones(2, 4)), RuntimeError,
     r"output with shape \[4\] doesn't match the broadcast shape \[2, 4\]"),
    (lambda y: y.expand(2, 4).mul_(2), RuntimeError, "more than one element of the written-to "
     "tensor refers to a single memory location"),
    (lambda y: y.expand(2, 4).__setitem__((0, 1), 1.0), RuntimeError, "single memory location"),
    (lambda y: y.__setitem__(slice(None), jg.ones(3)), RuntimeError,
     r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to indexing result of "
     r"shape \[4\]"),
    (lambda y: y.__setitem__([0, 5], 1.0), IndexError, "index 5 is out of bounds for dimension 0 "
     "with size 4"),
    (lambda y: y.__setitem__([0, 1], jg.ones(3)), RuntimeError, "shape mismatch"),
    (lambda y: y.masked_fill_(jg.tensor([1, 0, 1, 0]), 0.0), RuntimeError,
     "masked_fill_ only supports boolean masks, but got mask with dtype int64"),
    (lambda y: y.masked_fill_(y > 0, jg.ones(2)), RuntimeError,
     r"only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)"),
    (lambda y: y.index_add_(0, jg.tensor([0, 5]), jg.ones(2)), IndexError,
     "index out of range in self"),
    (lambda y: y.index_add_(0, jg.tensor([0, 1, 2]), jg.ones(2)), RuntimeError,
     r"Number of indices \(3\) should be equal to source.size\(dim\): \(2\)"),
    (lambda y: y.index_add_(0, jg.tensor([0.0, 1.0]), jg.ones(2)), RuntimeError,
     "Expected dtype int32/int64 for index but got: Double"),
    (lambda y: y.index_add_(0, jg.tensor([0, 1]), jg.ones(2, dtype=jg.float32)), RuntimeError,
     r"self \(Double\) and source \(Float\) must have the same scalar type"),
    (lambda y: y.scatter_add_(0, jg.tensor([0, 9]), jg.ones(2)), RuntimeError,
     "index 9 is out of bounds for dimension 0 with size 4"),
    (lambda y: y.scatter_add_(0, jg.tensor([[0, 1]]), jg.ones(2)), RuntimeError,
     "Index tensor must have the same number of dimensions as self tensor"),
    (lambda y: y.index_put_((jg.tensor([0, 9]),), jg.ones(2)), IndexError,
     "index 9 is out of bounds for dimension 0 with size 4"),
    (lambda y: y.fill_(jg.ones(2)), RuntimeError, "fill_ only supports 0-dimension value tensor"),
    (lambda y: y.copy_(jg.ones(3)), RuntimeError, r"size of tensor a \(4\) must match"),
    (lambda y: y.clamp_(min=jg.zeros(3)), RuntimeError, r"size of tensor a \(4\) must match"),
])
def test_bad_inplace_calls_raise_and_change_nothing(op, exc, msg):
    x = jg.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    y = x * 1
    node = y.grad_fn
    with pytest.raises(exc, match=msg):
        op(y)
    _unchanged(y, [1.0, -2.0, 3.0, -4.0], 0)
    assert y.grad_fn is node
    y.sum().backward()
    assert x.grad.tolist() == [1.0] * 4


def test_dtype_rules_of_inplace_ops():
    i = jg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                           "output type Long"):
        i[1:].exp_()
    with pytest.raises(RuntimeError, match="result type Double can't be cast"):
        i.add_(jg.ones(3))
    _unchanged(i, [1, 2, 3], 0)
    i[0] = 7.9  # setitem casts like NumPy
    i.masked_fill_(i > 2, 1.5)
    assert i.tolist() == [1, 2, 1]
    f = jg.zeros(3, dtype=jg.float32)
    f[1:] += jg.ones(2)  # float64 into float32: same kind
    assert f.dtype == jg.float32 and f.tolist() == [0.0, 1.0, 1.0]


# --- out= -------------------------------------------------------------------------------------
def test_out_argument_like_pytorch():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = jg.zeros(3)
    with pytest.raises(RuntimeError, match=r"exp\(\): functions with out=... arguments don't "
                                           "support automatic differentiation"):
        dispatch.elementwise(unary.EXP, x, out=out)
    assert out.tolist() == [0.0, 0.0, 0.0] and out._version == 0
    with jg.no_grad():
        r = dispatch.elementwise(unary.EXP, x, out=out)
    assert r is out and out._version == 1 and out.grad_fn is None
    assert_close(out, np.exp([1.0, 2.0, 3.0]))
    f32 = jg.zeros(3, dtype=jg.float32)
    dispatch.elementwise(unary.EXP, jg.ones(3), out=f32[...])
    assert f32.dtype == jg.float32 and f32._version == 1
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                           "output type Long"):
        dispatch.elementwise(unary.EXP, jg.ones(3), out=jg.zeros(3, dtype=jg.int64))
    small = jg.zeros(2)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        dispatch.elementwise(unary.EXP, jg.ones(3), out=small)
    assert small.shape == (3,)
    base = jg.zeros(4)
    with pytest.raises(RuntimeError, match="a view or a tensor with live views cannot be resized"):
        dispatch.elementwise(unary.EXP, jg.ones(3), out=base[:2])
    col = jg.zeros(3, 2)
    dispatch.elementwise(unary.EXP, jg.zeros(3), out=col[:, 1])  # a strided out: via a temporary
    assert col.tolist() == [[0.0, 1.0]] * 3
    a = jg.arange(5.0)
    from jitgrad.ops import binary

    dispatch.elementwise(binary.ADD, a, a[::-1], out=a)  # overlapping operands read old values
    assert a.tolist() == [4.0] * 5
    c = jg.empty(0)
    assert shape.cat([jg.ones(2), jg.zeros(1)], out=c) is c and c.tolist() == [1.0, 1.0, 0.0]
    s = jg.zeros(2, 2)
    shape.stack([jg.ones(2), jg.ones(2)], out=s)
    assert s.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    g = jg.zeros(2)
    scatter.gather(jg.tensor([5.0, 6.0]), 0, jg.tensor([1, 1]), out=g)
    assert g.tolist() == [6.0, 6.0]
    scatter.index_select(jg.tensor([5.0, 6.0]), 0, jg.tensor([0, 1]), out=g)
    indexing.take(jg.tensor([5.0, 6.0]), jg.tensor([-1, 0]), out=g)
    assert g.tolist() == [6.0, 5.0]


# --- the index family, out of place --------------------------------------------------------
def test_index_put_accumulate_and_last_write_wins_gradients():
    x = jg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = jg.tensor([10.0, 20.0, 30.0], requires_grad=True)
    out = x.index_put((jg.tensor([2, 0, 2]),), v)
    assert out.tolist() == [20.0, 2.0, 30.0]
    (out * jg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0] and v.grad.tolist() == [0.0, 1.0, 3.0]
    x.grad = v.grad = None
    out = x.index_put((jg.tensor([2, 0, 2]),), v, accumulate=True)
    assert out.tolist() == [21.0, 2.0, 43.0]
    (out * jg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0] and v.grad.tolist() == [3.0, 1.0, 3.0]


def test_take_errors():
    x = jg.tensor([1.0, 2.0])
    with pytest.raises(IndexError, match="out of range: tried to access index 2 on a tensor of 2 "
                                         "elements"):
        x.take(jg.tensor([2]))
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.take(jg.tensor([0.5]))


def test_narrow_select_diagonal_errors():
    x = jg.zeros(3, 4)
    with pytest.raises(IndexError, match=r"start out of range \(expected to be in range of "
                                         r"\[-4, 4\], but got 5\)"):
        x.narrow(1, 5, 1)
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(3\) exceeds dimension size "
                                           r"\(4\)\."):
        x.narrow(1, 2, 3)
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        x.narrow(1, 0, -1)
    with pytest.raises(IndexError, match=r"select\(\): index 5 out of range for tensor of size "
                                         r"\[3, 4\] at dimension 0"):
        x.select(0, 5)
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        x.diagonal(0, 1, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        jg.zeros(3).diagonal()
    assert x.diagonal(5).shape == (0,) and x.diagonal(-2, 1, 0).shape == (2,)
