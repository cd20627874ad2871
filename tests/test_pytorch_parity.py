"""Behaviours found different from PyTorch 2.13 in review (each checked there), now pinned."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.testing import assert_close


def t(data, **kw):
    return jg.tensor(data, **kw)


def test_create_graph_grad_is_not_aliased_to_the_seed_or_other_leaves():
    x, w, g = t([1.0, 2.0], requires_grad=True), t([1.0, 2.0], requires_grad=True), t([1.0, 1.0])
    (x + w).backward(g, create_graph=True)  # AddBackward0 passes the same gradient to both
    (w * 3).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and w.grad.tolist() == [4.0, 4.0]
    assert g.tolist() == [1.0, 1.0]
    assert x.grad.grad_fn is None  # a clone of a constant seed records nothing (as PyTorch)


def test_retain_grad_under_create_graph_keeps_the_graph():
    y = t([1.0, 2.0], requires_grad=True)
    z = y * 2
    z.retain_grad()
    (z * z).sum().backward(create_graph=True)
    assert z.grad.tolist() == [4.0, 8.0] and z.grad.requires_grad


@pytest.mark.parametrize("fn,at_zero", [
    (lambda x: x.relu().sqrt(), 0.0),
    (lambda x: jg.where(x > 0, x, 0.0).sqrt(), 0.0),
    (lambda x: x.clamp(min=0).sqrt(), np.inf),  # x == min passes the gradient, as PyTorch
    (lambda x: jg.maximum(x, t(0.0)).sqrt(), np.inf),  # a tie halves it: inf / 2
])
def test_masked_gradients_stay_zero_where_the_next_gradient_is_inf(fn, at_zero):
    x = t([-1.0, 0.0, 2.0], requires_grad=True)
    fn(x).sum().backward()
    assert_close(x.grad, [0.0, at_zero, 0.5 / np.sqrt(2.0)], rtol=1e-12)


def test_zero_gradient_of_sign_and_zero_is_zero_not_nan():
    x = t([0.0, 1.0], requires_grad=True)
    (jg.sign(x) * 2).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    y = x * 1
    y.zero_()
    (y.log()).sum().backward()  # d log(y)/dy = inf at 0; the zeroed path contributes 0
    assert x.grad.tolist() == [0.0, 0.0]


def test_maximum_minimum_gradients_with_nan_follow_pytorch():
    a = t([1.0, np.nan, 2.0], requires_grad=True)
    b = t([np.nan, 1.0, 3.0], requires_grad=True)
    jg.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 0.0] and b.grad.tolist() == [1.0, 1.0, 1.0]
    x = t([np.nan, -1.0, 2.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_root_gradient_is_cast_to_the_output_dtype():
    x = t([1.0, 2.0], requires_grad=True)
    x.exp().backward(jg.ones(2, dtype=jg.float32))
    assert x.grad.dtype == jg.float64
    assert_close(x.grad, np.exp([1.0, 2.0]), rtol=0, atol=0)


def test_integer_to_negative_integer_power_raises():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        t([1, 5, -3]) ** -1
    assert (t([1, 5, -3]) ** t([1, -1, 2])).tolist() == [1, 0, 9]  # tensor exponents: as PyTorch


def test_clamp_of_int_tensor_with_one_bound_stays_int():
    out = t([1, 5, -3]).clamp(max=3)
    assert out.dtype == jg.int64 and out.tolist() == [1, 3, -3]
    assert t([1, 5, -3]).clamp(min=0).tolist() == [1, 5, 0]


def test_sign_of_negative_zero_is_positive_zero():
    assert not np.signbit(jg.sign(t([-0.0])).numpy()[0])


def test_array_protocol_is_read_only_for_tensors_that_require_grad():
    x = t([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError):
        np.asarray(x)[0] = 5.0
    assert np.asarray(t([1.0]))[0] == 1.0 and np.asarray(t([1.0])).flags.writeable


def test_in_place_on_a_base_with_live_views_regenerates_their_history():
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    v = b[:2]
    b.mul_(2)  # PyTorch: v's grad_fn becomes AsStridedBackward0 over b's new history
    assert b.tolist() == [2.0, 4.0, 6.0] and v.tolist() == [2.0, 4.0] and b._version == 1
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0] is b.grad_fn
    (v * t([1.0, 10.0])).sum().backward()
    assert x.grad.tolist() == [2.0, 20.0, 0.0]


def test_post_accumulate_grad_hook_must_return_none():
    x = t([1.0, 2.0], requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda tensor: 5)
    with pytest.raises(TypeError, match="must return None"):
        (x * 2).sum().backward()


@pytest.mark.parametrize("dtype", [jg.int32, jg.int16, jg.int8, jg.uint8])
def test_max_min_of_small_ints_keep_their_dtype(dtype):
    x = t([[3, 1], [2, 7]], dtype=dtype)
    assert x.max().dtype == dtype and x.max().item() == 7
    assert x.amin(1).dtype == dtype and x.amin(1).tolist() == [1, 2]
    values, indices = x.min(0)
    assert values.dtype == dtype and values.tolist() == [2, 1] and indices.tolist() == [1, 0]


def test_full_max_gradient_is_a_masked_fill():
    x = t([0.0, -1.0, -2.0], requires_grad=True)
    x.max().sqrt().backward()  # d sqrt/dy = inf at 0: PyTorch gives [inf, 0, 0], not nan elsewhere
    assert x.grad.tolist() == [np.inf, 0.0, 0.0]


def test_var_std_positional_signature_and_small_samples():
    x = t([[1.0, 3.0], [2.0, 5.0]], requires_grad=True)
    assert_close(x.var(1, True), [2.0, 4.5])
    assert x.var(1, False, True).shape == (2, 1)
    assert_close(x.std(0, False, True), [[0.5, 1.0]])
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        v = x.var(1, correction=3)  # PyTorch: forward divides by max(0, n - c), backward by n - c
    assert v.tolist() == [np.inf, np.inf]
    v.sum().backward()
    assert x.grad.tolist() == [[2.0, -2.0], [3.0, -3.0]]


def test_float16_elementwise_computes_in_float32_and_rounds_once():
    x = t([1.5, 2.25], dtype=jg.float16, requires_grad=True)
    y = (x * x).exp()
    assert y.dtype == jg.float16
    assert_close(y, np.exp(np.array([1.5, 2.25], np.float32) ** 2).astype(np.float16))
    y.sum().backward()
    assert x.grad.dtype == jg.float16


def test_released_nodes_drop_stashed_index_arrays():
    x = t(np.arange(6.0), requires_grad=True)
    y = x[x > 2.0]
    y.sum().backward()
    assert not any(isinstance(v, np.ndarray) for v in y.grad_fn._attrs.values())
