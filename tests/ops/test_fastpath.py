"""Note [eager fast path] (ops/core/fastpath.py): the cached small-array path gives exactly what the
general path gives (values to the bit, dtypes, node names, gradients, errors), and falls back
wherever its key does not fit."""
import re

import numpy as np
import pytest

import jitgrad
from jitgrad.compile.loop import fori_loop
from jitgrad.kernels.cpu import elementwise as cpu
from jitgrad.ops.core import dispatch, fastpath
from jitgrad.ops import reduce as reduce_ops
from jitgrad.ops.core.registry import OPS
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
@pytest.mark.parametrize("unrolled", [False, True])
def test_fast_equals_general(name, arity, shape, dtype, scalar, unrolled):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, shape).astype(dtype) for _ in range(arity)]
    fast_in, slow_in = [_leaf(a) for a in arrays], [_leaf(a) for a in arrays]
    if scalar and arity == 2:
        fast_in[1] = slow_in[1] = 1.0001  # a Python float: weak, rounded to float32 once
    if not unrolled:
        fast = fastpath.elementwise_fast(OPS[name], tuple(fast_in))
    elif arity == 1:  # the one- and two-operand forms dispatch.elementwise calls
        fast = fastpath.unrolled_fast(OPS[name], fast_in[0])
    else:
        fast = fastpath.unrolled_fast(OPS[name], *fast_in)
    slow = _general(name, *slow_in)
    assert fast is not None
    assert fast.dtype is slow.dtype and fast.shape == slow.shape
    assert fast.numpy().tobytes() == slow.numpy().tobytes()
    if name == "gt":
        assert fast.grad_fn is None and slow.grad_fn is None
        return
    assert fast.grad_fn.name() == slow.grad_fn.name()
    assert fast.grad_fn.needs_input_grad == slow.grad_fn.needs_input_grad
    assert tuple(fast.grad_fn._next_meta) == tuple(slow.grad_fn._next_meta)
    assert tuple(fast.grad_fn._output_meta) == tuple(slow.grad_fn._output_meta)
    fast.sum().backward()
    slow.sum().backward()
    for f, s in zip(fast_in, slow_in):
        if isinstance(f, Tensor):
            assert f.grad.dtype is s.grad.dtype
            assert f.grad.numpy().tobytes() == s.grad.numpy().tobytes()


ATTR_CASES = [("pow_square", {"exponent": 2}), ("pow_cube", {"exponent": 3}),
              ("pow_root", {"exponent": 0.5}), ("pow_scalar", {"exponent": 2.5}),
              ("pow_scalar", {"exponent": -3}), ("rsub", {"other": 3}),
              ("clamp", {"min": 0.7, "max": 1.5}), ("rpow", {"base": 1.7})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(7,), (2, 3), ()])
@pytest.mark.parametrize("name,attrs", ATTR_CASES)
def test_fast_equals_general_with_attributes(name, attrs, shape, dtype):
    a = np.random.default_rng(3).uniform(0.5, 2.0, shape).astype(dtype)
    fast_in, slow_in = _leaf(a), _leaf(a)
    fast = fastpath.elementwise_fast(OPS[name], (fast_in,), attrs)
    slow = dispatch._elementwise(OPS[name], slow_in, **attrs)
    assert fast is not None
    assert fast.dtype is slow.dtype and fast.shape == slow.shape
    assert fast.numpy().tobytes() == slow.numpy().tobytes()
    assert fast.grad_fn.name() == slow.grad_fn.name() and fast.grad_fn._attrs == attrs
    (fast * 1.5).sum().backward()
    (slow * 1.5).sum().backward()
    assert fast_in.grad.numpy().tobytes() == slow_in.grad.numpy().tobytes()
    # an attribute that is not a Python number, or a missing one, takes the general path
    assert fastpath.elementwise_fast(OPS[name], (fast_in,), {}) is None
    odd = {key: np.float64(value) for key, value in attrs.items()}
    assert fastpath.elementwise_fast(OPS[name], (fast_in,), odd) is None


def test_read_only_and_no_grad_operands():
    a = np.linspace(0.1, 1.0, 9)
    ro = a.copy()
    ro.flags.writeable = False
    x = Tensor._make(ro)  # a read-only array: the entry (typed read-only) of writeable ones
    y = _leaf(a)
    out = x * y
    assert out.numpy().tobytes() == (a * a).tobytes()
    assert out.grad_fn.needs_input_grad == (False, True)
    assert OPS["mul"].unrolled_plans[1][np.dtype("float64")] is not False
    assert not any("f" in pattern for _, pattern in OPS["mul"].fast_plans)
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
        assert fastpath.unrolled_fast(mul, *args) is None
        assert fastpath.unrolled_fast(mul, args[1], args[0]) is None  # a number first, too
        dispatch.elementwise(mul, *args)  # the general path answers as before


def test_one_operand_falls_back_where_the_key_does_not_fit():
    tanh = OPS["tanh"]
    cases = [
        _leaf(np.ones(cpu.FLAT_ENTRY_MAX_BYTES // 8 + 1)),  # above the size limit
        _leaf(np.ones((4, 4)).T),                           # not C-contiguous
        jitgrad.tensor(np.ones(4, np.int64)),               # computes in another dtype
        _leaf(np.ones(0)),                                  # empty
        2.0,                                                # not a Tensor
    ]
    for x in cases:
        assert fastpath.unrolled_fast(tanh, x) is None
    small = _leaf(np.linspace(0.1, 1.0, 4))
    out = fastpath.unrolled_fast(tanh, small)
    assert out.grad_fn.name() == "TanhBackward0"
    np.testing.assert_allclose(out.numpy(), np.tanh(small.detach().numpy()), rtol=1e-15)


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


def _general_sum(x):
    """``x.sum()`` through the general composite path alone (``fastpath.full_sum`` skipped)."""
    return dispatch.composite(reduce_ops.SUM, x, dims=tuple(range(x.ndim)), keepdim=False,
                              dtype=None)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 1, 5)])
@pytest.mark.parametrize("writeable", [True, False])
def test_full_sum_records_the_general_node(shape, dtype, writeable):
    a = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    a.flags.writeable = writeable
    fast_in, slow_in = _leaf(a), _leaf(a)
    fast = fastpath.full_sum(reduce_ops.SUM, fast_in)
    slow = _general_sum(slow_in)
    assert fast is not None and fast.numpy().tobytes() == slow.numpy().tobytes()
    assert fast.dtype is slow.dtype and fast.shape == slow.shape == ()
    assert fast.grad_fn.name() == slow.grad_fn.name() == "SumBackward0"
    assert fast.grad_fn._attrs == slow.grad_fn._attrs
    assert fast.grad_fn._next_meta == slow.grad_fn._next_meta
    assert fast.grad_fn._output_meta == slow.grad_fn._output_meta
    assert fast.grad_fn.next_functions[0][0] is fast_in._grad_accumulator()
    (fast * 3.0).backward()
    (slow * 3.0).backward()
    assert fast_in.grad.numpy().tobytes() == slow_in.grad.numpy().tobytes()
    np.testing.assert_array_equal(fast_in.grad.numpy(), np.full(shape, 3.0, dtype))


def test_full_sum_falls_back_where_it_does_not_fit():
    x = _leaf(np.arange(12.0).reshape(3, 4))
    for other in (x.t(), _leaf(np.arange(5), grad=False), _leaf(np.array(2.5)), _leaf(np.zeros(0)),
                  _leaf(np.arange(4.0) + 1j), 3.0):
        assert fastpath.full_sum(reduce_ops.SUM, other) is None
    # the public call takes the general path there and still agrees with NumPy
    np.testing.assert_allclose(x.t().sum().item(), 66.0)
    assert x.t().sum().grad_fn.name() == "SumBackward0"
    assert jitgrad.tensor(np.arange(5)).sum().item() == 10
    with jitgrad.no_grad():
        y = x.sum()
    assert y.grad_fn is None and not y.requires_grad and y.item() == 66.0


def test_full_sum_under_forward_mode_and_vmap_keeps_its_tangent():
    x = np.arange(1.0, 5.0)
    primal, tangent = jitgrad.func.jvp(lambda t: (t * t).sum(), (jitgrad.tensor(x),),
                                       (jitgrad.tensor(np.ones(4)),))
    assert primal.item() == 30.0 and tangent.item() == 2 * x.sum()
    batched = jitgrad.func.vmap(lambda t: t.sum())(jitgrad.tensor(x.reshape(2, 2)))
    np.testing.assert_array_equal(batched.numpy(), [3.0, 7.0])


def test_live_views_follow_in_place_writes_and_data_assignment():
    base = jitgrad.tensor(np.arange(6.0))
    for _ in range(50):  # dropped views: swept from the list, never reported as live
        base[1:]
    assert not base._views
    kept = [base[k:] for k in range(3)]
    assert list(base._views) == kept and len(base._views._refs) < 50
    w = _leaf(np.full(6, 2.0))
    base.mul_(w)  # the views now depend on w through the base's new history
    assert all(v.requires_grad for v in kept)
    kept[2].sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0, 2.0, 3.0, 4.0, 5.0])
    base.data = jitgrad.zeros(6)  # the views keep the old storage and stop being views
    assert all(v._base is None for v in kept) and base._views is None
    np.testing.assert_array_equal(kept[1].detach().numpy(), [2.0, 4.0, 6.0, 8.0, 10.0])


@pytest.mark.parametrize("case", ["slice", "select", "advanced", "cat", "roll", "roll_dims"])
def test_plain_backward_rules_equal_their_recorded_form(case):
    """getitem, cat and roll build a plain backward's gradient from arrays directly
    (``dispatch.records_nothing``); it must equal the recorded rule's (create_graph)."""
    rng = np.random.default_rng(2)
    x = _leaf(rng.standard_normal((4, 5)))
    other = _leaf(rng.standard_normal((2, 5)))
    index = np.array([0, 2, 2])
    fns = {"slice": lambda: x[1:3, ::2], "select": lambda: x[1],
           "advanced": lambda: x[index], "cat": lambda: jitgrad.cat([other, x, other]),
           "roll": lambda: jitgrad.roll(x, 3), "roll_dims": lambda: jitgrad.roll(x, (1, -2), (0, 1))}
    y = fns[case]()
    weight = _leaf(rng.standard_normal(tuple(y.shape)))  # requires grad: a recorded rule
    plain = jitgrad.autograd.grad((y * weight).sum(), (x, other), allow_unused=True)
    y = fns[case]()
    recorded = jitgrad.autograd.grad((y * weight).sum(), (x, other), allow_unused=True,
                                     create_graph=True)
    for p, r in zip(plain, recorded):
        assert (p is None) == (r is None)
        if p is not None:
            assert p.numpy().tobytes() == r.detach().numpy().tobytes()
            assert p.grad_fn is None and r.grad_fn is not None
    # and against the rule written out: x's gradient is the weight put back where y came from
    want = np.zeros((4, 5))
    if case == "slice":
        want[1:3, ::2] = weight.numpy()
    elif case == "select":
        want[1] = weight.numpy()
    elif case == "advanced":
        np.add.at(want, index, weight.numpy())
    elif case == "cat":
        want = weight.numpy()[2:6].copy()
    else:
        want = (np.roll(weight.numpy().reshape(-1), -3).reshape(4, 5) if case == "roll"
                else np.roll(weight.numpy(), (-1, 2), (0, 1)))
    np.testing.assert_array_equal(plain[0].numpy(), want)
    if case == "cat":
        np.testing.assert_array_equal(plain[1].numpy(),
                                      weight.numpy()[:2] + weight.numpy()[6:])


def test_leaf_sink_is_shared_while_alive_and_describes_the_leaf():
    x = _leaf(np.arange(3.0))
    y, z = x * 2.0, x + 1.0
    sink = y.grad_fn.next_functions[0][0]
    assert sink is z.grad_fn.next_functions[0][0] and sink.name() == "AccumulateGrad"
    assert sink.next_functions == () and sink.variable is x
    assert sink._output_meta == [((3,), x.dtype)]
    del y, z, sink
    w = x * 3.0
    w.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("index", [slice(1, None), slice(-3, None, 2), slice(None, 2, -1),
                                   slice(5, 1), slice(np.int64(1), None), slice(True, None),
                                   slice(1.0, None), slice(None, None, 0)])
def test_getitem_slice_path_equals_normalize_index(index):
    """``x[a:b]``'s inline check in ``getitem`` takes the slices ``normalize_index`` takes as
    they are (ints and None, a nonzero int step), with the same node; any other slice gets the
    general path's result or error."""
    from jitgrad.ops import indexing

    a = np.arange(6.0)
    x = _leaf(a)
    try:
        idx, kind = indexing.normalize_index(index)
        expected = dispatch.composite(indexing.GETITEM[kind], _leaf(a), index=idx, kind=kind)
    except Exception as err:  # the general path's error must be the one raised
        with pytest.raises(type(err), match=re.escape(str(err))):
            x[index]
        return
    out = x[index]
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
    assert out.grad_fn.name() == expected.grad_fn.name()
    assert out.grad_fn._attrs == expected.grad_fn._attrs
    assert (out._base is x) == (expected._base is not None)


@pytest.mark.parametrize("index", [slice(1, None), slice(None, None, -2), 1, -1, None,
                                   Ellipsis, (slice(1, 3), 0), (None, slice(None), 2),
                                   (Ellipsis, slice(0, 0))])
@pytest.mark.parametrize("grad", [True, False])
def test_basic_view_equals_the_general_path(index, grad):
    from jitgrad.ops import indexing

    a = np.arange(12.0).reshape(3, 4)
    fast_in, slow_in = _leaf(a, grad), _leaf(a, grad)
    idx, kind = indexing.normalize_index(index)
    fast = fastpath.basic_view(indexing.GETITEM[kind], fast_in, idx, kind)
    slow = dispatch.composite(indexing.GETITEM[kind], slow_in, index=idx, kind=kind)
    assert fast is not None
    np.testing.assert_array_equal(fast.numpy(), a[index])
    assert fast.shape == slow.shape and fast.dtype is slow.dtype
    assert (fast._base is fast_in) == (slow._base is slow_in)
    assert (fast._version_counter is fast_in._version_counter) == (
        slow._version_counter is slow_in._version_counter)
    assert list(fast_in._views or ()) == ([fast] if fast._base is not None else [])
    if not grad:
        assert fast.grad_fn is None and slow.grad_fn is None
        return
    assert fast.grad_fn.name() == slow.grad_fn.name()
    assert fast.grad_fn._attrs == slow.grad_fn._attrs
    weight = np.random.default_rng(5).standard_normal(fast.shape)
    (fast * jitgrad.tensor(weight)).sum().backward()
    (slow * jitgrad.tensor(weight)).sum().backward()
    assert fast_in.grad.numpy().tobytes() == slow_in.grad.numpy().tobytes()


def test_basic_view_leaves_bad_indices_to_the_general_path():
    from jitgrad.ops import indexing

    x = _leaf(np.arange(4.0))
    idx, kind = indexing.normalize_index(7)
    assert fastpath.basic_view(indexing.GETITEM[kind], x, idx, {"index": idx, "kind": kind}) is None
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 4"):
        x[7]
    assert x._views is None and x.grad_fn is None


def test_cat_of_vectors_equals_the_general_path():
    """shape.cat's 1-d path: the general path's values, dtype, node and gradients."""
    from jitgrad.ops import shape as shape_ops

    rng = np.random.default_rng(5)
    parts = [rng.standard_normal(1), rng.standard_normal(6), rng.standard_normal(0),
             rng.standard_normal(3).astype(np.float32)]  # an empty one; a promoted one
    fast_in = [_leaf(p, grad=k != 0) for k, p in enumerate(parts)]
    slow_in = [_leaf(p, grad=k != 0) for k, p in enumerate(parts)]
    fast = shape_ops._cat_vectors(fast_in)
    slow = dispatch.composite(shape_ops.CAT, *slow_in, dim=0, ndim=1)
    assert fast.dtype is slow.dtype and fast.numpy().tobytes() == slow.numpy().tobytes()
    assert fast.grad_fn.name() == slow.grad_fn.name() == "CatBackward0"
    assert fast.grad_fn._attrs == slow.grad_fn._attrs
    assert fast.grad_fn.needs_input_grad == slow.grad_fn.needs_input_grad
    weights = rng.standard_normal(10)
    (fast * jitgrad.tensor(weights)).sum().backward()
    (slow * jitgrad.tensor(weights)).sum().backward()
    for f, s in zip(fast_in[1:], slow_in[1:]):
        assert f.grad.dtype is s.grad.dtype
        assert f.grad.numpy().tobytes() == s.grad.numpy().tobytes()
    np.testing.assert_array_equal(fast_in[1].grad.numpy(), weights[1:7])
    assert shape_ops._cat_vectors([_leaf(np.ones((2, 2))), _leaf(np.ones((1, 2)))]) is None
    assert jitgrad.cat(fast_in, dim=-1).shape == (10,)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
@pytest.mark.parametrize("shift", [0, 1, -3, 11])
def test_roll_of_a_vector_equals_the_general_path(dtype, shift):
    """roll's 1-d path (an int shift, dims=None): the general path's values, node, attributes
    and gradient; a read-only input included."""
    from jitgrad.ops import roll as roll_ops

    a = (np.arange(1.0, 8.0) * 1.5).astype(dtype)
    grad = np.dtype(dtype).kind in "fc"
    fast_in, slow_in = _leaf(a, grad=grad), _leaf(a, grad=grad)
    fast = jitgrad.roll(fast_in, shift)
    slow = dispatch.composite(roll_ops.ROLL, slow_in, shifts=(shift,), dims=None)
    assert fast.dtype is slow.dtype and fast.numpy().tobytes() == slow.numpy().tobytes()
    assert fast.numpy().base is None or not np.shares_memory(fast.numpy(), a)
    if not grad:
        assert fast.grad_fn is None and slow.grad_fn is None
        return
    assert fast.grad_fn.name() == slow.grad_fn.name() == "RollBackward0"
    assert fast.grad_fn._attrs == slow.grad_fn._attrs
    weights = jitgrad.tensor(np.linspace(-1.0, 2.0, 7).astype(dtype))
    (fast * weights).sum().abs().backward()
    (slow * weights).sum().abs().backward()
    assert fast_in.grad.numpy().tobytes() == slow_in.grad.numpy().tobytes()
    read_only = a.copy()
    read_only.flags.writeable = False
    np.testing.assert_array_equal(jitgrad.roll(Tensor._make(read_only), shift).numpy(),
                                  np.roll(a, shift))


def test_unrolled_nodes_share_metadata_by_mask():
    """The nodes of one plan and shape share their metadata tuples, each mask its own."""
    a, b = np.linspace(0.5, 1.5, 6), np.linspace(1.0, 2.0, 6)
    x, y, c = _leaf(a), _leaf(b), _leaf(b, grad=False)
    both, first, second = x * y, x * c, c * x
    again = x * y
    meta = ((6,), jitgrad.float64)
    assert both.grad_fn._next_meta == (meta, meta) and both.grad_fn._output_meta == (meta,)
    assert first.grad_fn._next_meta == (meta, None)
    assert second.grad_fn._next_meta == (None, meta)
    assert again.grad_fn._next_meta is both.grad_fn._next_meta
    assert jitgrad.tanh(x).grad_fn._next_meta == (meta,)
    with pytest.raises(RuntimeError, match="shape"):  # the shared metadata still validates
        both.backward(jitgrad.ones(5))
