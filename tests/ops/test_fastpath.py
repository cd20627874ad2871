"""Note [eager fast path] (ops/fastpath.py): the cached small-array path gives exactly what the
general path gives (values to the bit, dtypes, node names, gradients, errors), and falls back
wherever its key does not fit."""
import numpy as np
import pytest

import jitgrad
from jitgrad.compile.loop import fori_loop
from jitgrad.device import cpu
from jitgrad.ops import dispatch, fastpath
from jitgrad.ops import reduce as reduce_ops
from jitgrad.ops.registry import OPS
from jitgrad.ops.roll import _roll_fwd
from jitgrad.tensor import Tensor


def _general(op, *args):
    """The op through the general path alone (the fast path skipped)."""
    return dispatch._elementwise(OPS[op], *args)


def _leaf(a, grad=True):
    return jitgrad.tensor(a, requires_grad=grad)


CASES = [("mul", 2), ("add", 2), ("sub", 2), ("div", 2), ("tanh", 1), ("exp", 1),
         ("maximum", 2), ("gt", 2)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(7,), (2, 3)])
@pytest.mark.parametrize("name,arity", CASES)
@pytest.mark.parametrize("scalar", [False, True])
def test_fast_equals_general(name, arity, shape, dtype, scalar):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, shape).astype(dtype) for _ in range(arity)]
    fast_in, slow_in = [_leaf(a) for a in arrays], [_leaf(a) for a in arrays]
    if scalar and arity == 2:
        fast_in[1] = slow_in[1] = 1.0001  # a Python float: weak, rounded to float32 once
    fast = fastpath.elementwise_fast(OPS[name], tuple(fast_in))
    slow = _general(name, *slow_in)
    assert fast is not None
    assert fast.dtype is slow.dtype and fast.shape == slow.shape
    assert fast.numpy().tobytes() == slow.numpy().tobytes()
    if name == "gt":
        assert fast.grad_fn is None and slow.grad_fn is None
        return
    assert fast.grad_fn.name() == slow.grad_fn.name()
    assert fast.grad_fn.needs_input_grad == slow.grad_fn.needs_input_grad
    fast.sum().backward()
    slow.sum().backward()
    for f, s in zip(fast_in, slow_in):
        if isinstance(f, Tensor):
            assert f.grad.dtype is s.grad.dtype
            assert f.grad.numpy().tobytes() == s.grad.numpy().tobytes()


def test_read_only_and_no_grad_operands():
    a = np.linspace(0.1, 1.0, 9)
    ro = a.copy()
    ro.flags.writeable = False
    x = Tensor._make(ro)  # a read-only array: a kernel signature of its own
    y = _leaf(a)
    out = x * y
    assert out.numpy().tobytes() == (a * a).tobytes()
    assert out.grad_fn.needs_input_grad == (False, True)
    assert (np.dtype("float64"), "rf") in OPS["mul"].fast_plans
    with jitgrad.no_grad():
        assert (y * 2.0).grad_fn is None


def test_falls_back_where_the_key_does_not_fit():
    mul = OPS["mul"]
    big = np.ones(cpu.FLAT_ENTRY_MAX_BYTES // 8 + 1)
    cases = [
        (_leaf(big), 2.0),                                  # above the size limit
        (_leaf(np.ones(4)), _leaf(np.ones((3, 4)))),         # broadcasting
        (_leaf(np.ones(4)), _leaf(np.ones(4, np.float32))),  # mixed dtypes
        (_leaf(np.ones((4, 4)).T), 2.0),                    # not C-contiguous
        (_leaf(np.ones(4)), True),                          # a bool scalar
        (_leaf(np.ones(4)), np.float64(2.0)),               # a NumPy scalar (strongly typed)
        (jitgrad.tensor(np.ones(4, np.int64)), 2),          # not a float dtype
        (_leaf(np.ones(0)), 2.0),                           # empty
    ]
    for args in cases:
        assert fastpath.elementwise_fast(mul, args) is None
        dispatch.elementwise(mul, *args)  # the general path answers as before


def test_saved_result_version_check_survives():
    x = _leaf(np.linspace(0.1, 1.0, 5))
    y = jitgrad.tanh(x)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_backward_reads_a_broadcast_scalar_gradient():
    for dtype in ("float64", "float32"):
        x = _leaf(np.arange(6.0, dtype=dtype).reshape(2, 3))
        (x * 2.0).sum().backward()
        assert x.grad.dtype.name == dtype
        np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 2.0, dtype))


@pytest.mark.parametrize("n", [1, 7, 1000, 5000])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_full_sum_shortcut_has_the_general_bits(n, dtype):
    class Ctx:
        pass

    a = np.random.default_rng(n).standard_normal(n).astype(dtype)
    for x, dims in ((a, (0,)), (a.reshape(1, -1), (0, 1))):
        fast, slow = Ctx(), Ctx()
        got = reduce_ops._sum_fwd(fast, x, dims, False, None)
        want = reduce_ops._fold_sum_fwd(slow, x, dims, False, None)
        assert got.tobytes() == want.tobytes() and got.shape == want.shape == ()
        assert vars(fast) == vars(slow)


def test_roll_flat_equals_numpy():
    for a in (np.arange(10.0), np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4).T,
              np.array(5.0), np.arange(7), np.zeros(0)):
        for s in (0, 1, -1, 3, 25, -13):
            got = _roll_fwd(None, a, (s,), None)
            assert got.shape == a.shape and got.dtype == a.dtype
            np.testing.assert_array_equal(got, np.roll(a, s))


def test_fori_loop_still_checks_the_carry():
    x = jitgrad.ones(3)
    assert fori_loop(2, lambda c: (c[0] * 2.0, c[1]), (x, x))[0].numpy().tolist() == [4.0] * 3
    with pytest.raises(TypeError, match="same shapes and dtypes"):
        fori_loop(1, lambda c: c[1:], x)
    with pytest.raises(TypeError, match="same shapes and dtypes"):
        fori_loop(1, lambda c: (c[0], c[1].float()), (x, x))
