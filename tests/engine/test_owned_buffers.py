"""Gradient buffers the engine owns (Note [owned buffers] in graph/node.py).

AccumulateGrad keeps an incoming gradient as ``.grad`` without copying it, and a node's input
buffer adds several gradients in place, only when nothing else can see that tensor or its
memory. These tests check both halves: it happens (the ``.grad`` array is the one a backward
made) and it never happens when someone else holds the gradient (a hook, the caller's
``gradient=``, a second edge, a saved tensor, a view...): then writing ``.grad`` in place (an
optimizer step) or a later accumulation must not change anything else. Each test runs with the
caller alone, with every node handed to the worker threads, and in deterministic mode (the
``mode`` fixture in conftest.py).
"""
import gc

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import Function
from jitgrad.graph.node import REUSE_BUFFERS, sole_owner
from jitgrad.kernels.cpu import pool


def arr(t):
    return t.numpy(force=True)


def shares(a, b) -> bool:
    return np.shares_memory(arr(a), arr(b))


POINTERS = []  # data pointers of gradients the functions below made (never the tensors)
KEPT = []  # gradients a function or hook kept a reference to


@pytest.fixture(autouse=True)
def _clear():
    POINTERS.clear()
    KEPT.clear()
    yield
    POINTERS.clear()
    KEPT.clear()


class Fresh(Function):
    """2 x; its backward makes a new gradient and notes where its data is."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        out = g * 2
        POINTERS.append(out.data_ptr())
        return out


class Keeps(Function):
    """2 x; its backward keeps the gradient it returns."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        out = g * 2
        KEPT.append(out)
        return out


class Twice(Function):
    """x + y; its backward returns ONE new tensor for both inputs."""

    @staticmethod
    def forward(ctx, x, y):
        return x + y

    @staticmethod
    def backward(ctx, g):
        out = g * 1
        return out, out


class ReturnsSaved(Function):
    """x * c; its backward returns the saved constant ``c`` itself."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.save_for_backward(c)
        return x * c

    @staticmethod
    def backward(ctx, g):
        c, = ctx.saved_tensors
        return c, None


def leaf(n=5, seed=0, dtype=jg.float64):
    rng = np.random.default_rng(seed)
    return jg.tensor(rng.standard_normal(n), dtype=dtype, requires_grad=True)


# --- it happens ----------------------------------------------------------------------------
# (only where the interpreter's reference counts are exact: Note [owned buffers])
reuses = pytest.mark.skipif(not REUSE_BUFFERS, reason="gradient buffers are copied on this "
                            "interpreter (graph.node.REUSE_BUFFERS)")


@reuses
def test_fresh_gradient_becomes_grad_without_copy(mode):
    x = leaf()
    Fresh.apply(x).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), 2.0)
    if mode != "threaded":  # on workers another thread may briefly hold it: then it is copied
        assert x.grad.data_ptr() == POINTERS[0]


@reuses
def test_two_fresh_gradients_are_summed_in_place_and_kept(mode):
    x = leaf()
    (Fresh.apply(x) + Fresh.apply(x) * 3).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), 2.0 + 6.0)
    if mode != "threaded":
        assert x.grad.data_ptr() in POINTERS


@reuses
def test_large_pooled_gradient_is_kept():
    n = pool.MIN_BYTES // 8 + 1  # a pooled (leased) block
    x = leaf(n)
    (x * 3.0).sum().backward()
    assert type(arr(x.grad).base) is pool.Lease
    np.testing.assert_array_equal(arr(x.grad), 3.0)


@reuses
def test_w8_shape_broadcast_plus_fresh_is_summed_into_the_fresh_one():
    # mean's gradient is a broadcast view (not writable); max's is new: the sum goes into it
    x = jg.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    (x.max(dim=1).values.sum() + x.mean(dim=0).sum()).backward()
    expect = np.full((3, 4), 1 / 3)
    expect[:, 3] += 1
    np.testing.assert_allclose(arr(x.grad), expect)
    assert arr(x.grad).flags.writeable and arr(x.grad).flags.c_contiguous


# --- it never happens when someone else holds the gradient ---------------------------------
def test_function_that_keeps_its_gradient(mode):
    x = leaf()
    Keeps.apply(x).sum().backward()
    assert not shares(x.grad, KEPT[0])
    x.grad.mul_(0)  # an optimizer step writes .grad in place
    np.testing.assert_array_equal(arr(KEPT[0]), 2.0)


def test_one_gradient_fanned_out_to_two_leaves(mode):
    x, y = leaf(seed=1), leaf(seed=2)
    (Twice.apply(x, y) * 3.0).sum().backward()
    assert not shares(x.grad, y.grad)
    x.grad.mul_(0)
    np.testing.assert_array_equal(arr(y.grad), 3.0)
    np.testing.assert_array_equal(arr(x.grad), 0.0)


def test_passthrough_add_gives_both_inputs_the_same_tensor(mode):
    x, y, w = leaf(seed=1), leaf(seed=2), leaf(seed=3)
    ((x + y) * w).sum().backward()  # AddBackward0 returns one tensor for x and y
    assert not shares(x.grad, y.grad)
    x.grad.zero_()
    np.testing.assert_array_equal(arr(y.grad), arr(w))


def test_same_leaf_on_both_sides_of_an_add(mode):
    x, w = leaf(seed=1), leaf(seed=3)
    ((x + x) * w).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), 2 * arr(w))


def test_leaf_hook_that_keeps_the_gradient(mode):
    x, w = leaf(seed=1), leaf(seed=3)
    x.register_hook(KEPT.append)
    (x * w).sum().backward()
    assert not shares(x.grad, KEPT[0])
    x.grad.mul_(0)
    np.testing.assert_array_equal(arr(KEPT[0]), arr(w))


def test_hook_that_returns_a_gradient_it_keeps(mode):
    x, w = leaf(seed=1), leaf(seed=3)

    def hook(g):
        r = g * 1
        KEPT.append(r)
        return r

    x.register_hook(hook)
    (x * w).sum().backward()
    assert not shares(x.grad, KEPT[0])
    x.grad.mul_(0)
    np.testing.assert_array_equal(arr(KEPT[0]), arr(w))


def test_hook_on_an_intermediate_passed_through_to_the_leaf(mode):
    x, w = leaf(seed=1), leaf(seed=3)
    u = x + 0.0  # its gradient goes on to x unchanged (the same tensor)
    u.register_hook(KEPT.append)
    (u * w).sum().backward()
    assert not shares(x.grad, KEPT[0])
    x.grad.mul_(0)
    np.testing.assert_array_equal(arr(KEPT[0]), arr(w))


@pytest.mark.parametrize("captured_first", [True, False])
def test_buffer_sum_never_writes_into_a_captured_gradient(mode, captured_first):
    # node h receives two gradients: one a hook kept, one new; in either arrival order the kept
    # one must keep its values
    x, w1, w2 = leaf(seed=1), leaf(seed=3), leaf(seed=4)
    h = x * 2.0
    if captured_first:  # created later = runs first
        b = h * 3.0
        a = h + 0.0
    else:
        a = h + 0.0
        b = h * 3.0
    a.register_hook(KEPT.append)
    ((a * w1).sum() + (b * w2).sum()).backward()
    np.testing.assert_array_equal(arr(KEPT[0]), arr(w1))
    np.testing.assert_allclose(arr(x.grad), 2 * (arr(w1) + 3 * arr(w2)))


def test_gradient_argument_is_never_taken_or_written(mode):
    x = leaf()
    g = jg.tensor(np.arange(5.0))
    x.backward(g)  # straight into x's AccumulateGrad
    assert not shares(x.grad, g)
    y = leaf(seed=1)
    (y + 0.0).backward(g)  # passed through to y
    assert not shares(y.grad, g)
    g.mul_(0)
    np.testing.assert_array_equal(arr(x.grad), np.arange(5.0))
    np.testing.assert_array_equal(arr(y.grad), np.arange(5.0))
    x.grad.add_(1)
    y.grad.add_(1)
    np.testing.assert_array_equal(arr(g), 0.0)


def test_gradient_argument_at_two_roots(mode):
    x = leaf()
    g1, g2 = jg.tensor(np.ones(5)), jg.tensor(np.full(5, 2.0))
    y = x * 1.0
    jg.autograd.backward([y, y], [g1, g2])  # both into one buffer slot
    np.testing.assert_array_equal(arr(x.grad), 3.0)
    np.testing.assert_array_equal(arr(g1), 1.0)
    np.testing.assert_array_equal(arr(g2), 2.0)


def test_retain_grad_on_intermediate_and_leaf(mode):
    x, w = leaf(seed=1), leaf(seed=3)
    y = x + 0.0  # passthrough: x receives the very tensor y's retain_grad saw
    y.retain_grad()
    (y * w).sum().backward()
    assert not shares(x.grad, y.grad)
    x.grad.mul_(0)
    np.testing.assert_array_equal(arr(y.grad), arr(w))


def test_backward_inputs_non_leaf_gets_its_own_buffer(mode):
    x, w = leaf(seed=1), leaf(seed=3)
    y = x + 0.0
    (y * w).sum().backward(inputs=[y, x])
    assert not shares(x.grad, y.grad)
    x.grad.mul_(0)
    np.testing.assert_array_equal(arr(y.grad), arr(w))


def test_saved_tensor_returned_as_gradient(mode):
    x = leaf()
    c = jg.tensor(np.full(5, 3.0))
    y = ReturnsSaved.apply(x, c).sum()
    y.backward(retain_graph=True)
    assert not shares(x.grad, c)
    y.backward()  # accumulates in place into x.grad: c and the saved c stay as they were
    np.testing.assert_array_equal(arr(x.grad), 6.0)
    np.testing.assert_array_equal(arr(c), 3.0)


def test_saved_constant_no_one_else_holds_is_correct(mode):
    x = leaf()
    for _ in range(2):  # the graph frees it: it may become .grad, values must be right
        ReturnsSaved.apply(x, jg.tensor(np.full(5, 3.0))).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), 6.0)


def test_expanded_gradients_give_a_writable_grad(mode):
    x = leaf()
    x.sum().backward()  # the gradient is a broadcast view of one value
    x.grad.add_(1)
    np.testing.assert_array_equal(arr(x.grad), 2.0)
    v = leaf(3)
    (v * jg.ones(2, 3)).sum().backward()  # reduced to v's shape
    (v * jg.ones(2, 3)).sum().backward()
    np.testing.assert_array_equal(arr(v.grad), 4.0)


def test_transposed_gradient_gives_a_contiguous_grad(mode):
    x = jg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    w = jg.tensor(np.arange(6.0).reshape(3, 2))
    (x.t() * w).sum().backward()  # TransposeBackward returns a view
    assert x.grad.is_contiguous()
    np.testing.assert_array_equal(arr(x.grad), np.arange(6.0).reshape(3, 2).T)


class FortranGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return jg.from_numpy(np.asfortranarray(np.arange(6.0).reshape(2, 3)))


class WrongDtype(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return jg.tensor(np.full(g.shape, 0.1), dtype=jg.float64)


class RowOfBigger(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        big = jg.tensor(np.arange(10.0).reshape(2, 5))
        return big[1]  # a view of a bigger array


def test_owned_but_fortran_ordered_gradient_is_copied_to_c_order(mode):
    x = jg.tensor(np.zeros((2, 3)), requires_grad=True)
    FortranGrad.apply(x).sum().backward()
    assert x.grad.is_contiguous()
    np.testing.assert_array_equal(arr(x.grad), np.arange(6.0).reshape(2, 3))


def test_gradient_of_another_dtype_is_cast(mode):
    x = leaf(dtype=jg.float32)
    WrongDtype.apply(x).sum().backward()
    assert x.grad.dtype is jg.float32
    y = leaf(dtype=jg.float32)
    (y.double() * 2).sum().backward()
    assert y.grad.dtype is jg.float32
    np.testing.assert_array_equal(arr(y.grad), 2.0)


def test_view_of_a_bigger_array_is_not_kept(mode):
    x = leaf()
    RowOfBigger.apply(x).sum().backward()
    a = arr(x.grad)
    assert a.base is None or a.size * a.itemsize >= getattr(a.base, "nbytes", 0)
    np.testing.assert_array_equal(a, [5.0, 6.0, 7.0, 8.0, 9.0])


def test_optimizer_steps_on_shared_gradients_stay_separate(mode):
    # one gradient reaches three leaves and a hook; SGD steps then change only each own .grad
    x, y, z, w = leaf(seed=1), leaf(seed=2), leaf(seed=3), leaf(seed=4)
    opt = jg.optim.SGD([x, y, z], lr=0.1, momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        s = x + y
        s.register_hook(KEPT.append)
        ((s + z) * w).sum().backward()
        opt.step()
        for t in (x, y, z):
            np.testing.assert_array_equal(arr(t.grad), arr(w))
        np.testing.assert_array_equal(arr(KEPT[-1]), arr(w))
        assert not shares(x.grad, y.grad) and not shares(y.grad, z.grad)


def test_create_graph_keeps_recording(mode):
    x = leaf()
    ((x * x) + (x * 3.0)).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    g = x.grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_array_equal(arr(x.grad), 2.0)


def test_forward_over_reverse_sums_tangents_too(mode):
    # under jvp the gradients meeting at x carry tangents: an in-place sum of the primals alone
    # would drop one (the raw path is off while a transform is active)
    import jitgrad.func as F

    w = jg.tensor([1.0, 2.0, 3.0])
    h = lambda x: ((x * x) * w).sum() + (x * 3.0).sum()  # noqa: E731  x feeds two nodes
    x0, t = jg.tensor([0.5, -1.0, 2.0]), jg.tensor([1.0, 1.0, -1.0])
    _, tangent = F.jvp(F.grad(h), (x0,), (t,))
    np.testing.assert_allclose(arr(tangent), 2 * arr(w) * arr(t))  # the Hessian times t


# --- the ownership rule itself -------------------------------------------------------------
def test_sole_owner_rule():
    t = jg.tensor(np.arange(4.0))
    assert sole_owner(t, 1)  # only this test's variable
    other = t
    assert not sole_owner(t, 1)
    del other
    d = t.detach()  # shares the array
    assert not sole_owner(t, 1)
    del d
    v = t[1:]  # a view keeps the array
    assert not sole_owner(t, 1) and not sole_owner(v, 1)
    del v
    gc.collect()
    assert sole_owner(t, 1)
    assert not sole_owner(jg.tensor(np.arange(4.0)).expand(3, 4), 0)  # broadcast view
    assert not sole_owner(jg.tensor(np.arange(4.0), requires_grad=True), 0)  # has autograd use
    buf = bytearray(32)
    assert not sole_owner(jg.from_numpy(np.frombuffer(buf)), 0)  # wraps foreign memory
    big = jg.Tensor._make(pool.empty((pool.MIN_BYTES // 8 + 1,), np.float64))
    assert sole_owner(big, 1)
    view = arr(big)[:]
    assert not sole_owner(big, 1)
    del view
