"""Version counters, in-place ops and the saved-tensor check (values and messages checked
against PyTorch 2.13; jitgrad writes dtypes as ``float64`` where PyTorch writes
``torch.DoubleTensor``)."""
import numpy as np
import pytest

import jitgrad as jg

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
W = [1.0, 2.0, 3.0]


def assert_backward_reports_modified(out, dtype_shape, where, version=1):
    """out.sum().backward() fails because a tensor it needs was modified in place after saving."""
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()
    assert str(info.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{dtype_shape}]{where} is at version {version}; expected version 0 instead.")


def leaf():
    return jg.tensor([1.0, -2.0, 3.0], requires_grad=True)


# --- version counter --------------------------------------------------------------------------
def test_version_bumps_once_per_inplace_op():
    p = jg.tensor([1.0, 2.0])
    assert p._version == 0
    p.add_(1)
    assert p._version == 1
    p.mul_(2).sub_(1)
    assert p._version == 3
    p += 1
    p -= 1
    p *= 2
    p /= 2
    assert p._version == 7
    p.zero_()
    p.fill_(1)
    p.clamp_(min=0)
    p.relu_()
    assert p._version == 11
    p.copy_(jg.tensor([5.0, 6.0]))
    assert p._version == 12
    assert p.tolist() == [5.0, 6.0]


def test_out_of_place_ops_do_not_bump():
    p = jg.tensor([1.0, 2.0])
    _ = p + 1, p * 2, p.exp(), p.clone(), p.detach()
    assert p._version == 0


def test_detach_shares_storage_and_version_counter():
    p = jg.tensor([1.0, 2.0])
    d = p.detach()
    d.add_(1)
    assert (p._version, d._version) == (1, 1)
    assert p.tolist() == [2.0, 3.0]
    p.mul_(2)
    assert d._version == 2 and d.tolist() == [4.0, 6.0]


def test_view_shares_version_counter():
    p = jg.tensor([1.0, 2.0, 3.0, 4.0])
    v = p.view(2, 2)
    v.mul_(2)
    assert (p._version, v._version) == (1, 1)
    assert p.tolist() == [2.0, 4.0, 6.0, 8.0]
    p.add_(1)
    assert v._version == 2
    assert v.tolist() == [[3.0, 5.0], [7.0, 9.0]]


def test_clone_has_its_own_counter():
    p = jg.tensor([1.0, 2.0])
    c = p.clone()
    c.add_(1)
    assert (p._version, c._version) == (0, 1)
    assert p.tolist() == [1.0, 2.0]


def test_grad_accumulation_is_not_counted_on_the_leaf():
    x = leaf()
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert x._version == 0


# --- saved tensors modified in place ------------------------------------------------------------
def test_saved_output_modified_message():
    x = jg.tensor([1.0, 2.0, 3.0], dtype=jg.float64, requires_grad=True)
    y = x.exp()
    z = y * 2
    y.add_(1)
    assert_backward_reports_modified(z, "float64 [3]", ", which is output 0 of Exp,")


def test_saved_input_modified_message_names_current_grad_fn():
    x = leaf()
    y = x * 1
    w = y * y
    y += 1
    assert_backward_reports_modified(w, "float64 [3]", ", which is output 0 of Add,")

    a = jg.tensor([1.0, 2.0], dtype=jg.float32, requires_grad=True)
    b = a * 1
    c = b * b
    b.sub_(1)
    assert_backward_reports_modified(c, "float32 [2]", ", which is output 0 of Sub,")


def test_saved_leaf_modified_under_no_grad():
    a = jg.tensor([[1.0, 2.0]], requires_grad=True)
    w = a * a
    with jg.no_grad():
        a.mul_(2)
    assert_backward_reports_modified(w, "float64 [1, 2]", "")


def test_version_in_message_counts_all_bumps():
    x = leaf()
    y = x.exp()
    y.add_(1)
    y.mul_(2)
    assert_backward_reports_modified(y, "float64 [3]", ", which is output 0 of Exp,", version=2)


def test_ops_that_do_not_save_the_modified_tensor_are_fine():
    x = leaf()
    y = x * 1
    w = y.exp()  # exp saves its result, not its input
    y.mul_(2)
    w.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, -2.0, 3.0]), rtol=1e-15)

    x = leaf()
    y = x * 1
    z = y + 5  # add saves nothing
    y.mul_(10)
    z.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_modified_tensor_in_same_expression():
    x = leaf()
    y = x * 2
    y *= y  # saves y (as both operands), then modifies it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# --- in-place on leaves ---------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.zero_(), lambda t: t.fill_(1.0),
    lambda t: t.clamp_(min=0), lambda t: t.relu_(), lambda t: t.__iadd__(0.1),
    lambda t: t.__imul__(2), lambda t: t.copy_(jg.tensor([0.0, 0.0, 0.0]))])
def test_inplace_on_leaf_requiring_grad_errors(op):
    x = leaf()
    with pytest.raises(RuntimeError) as info:
        op(x)
    assert str(info.value) == LEAF_INPLACE
    assert x._version == 0
    assert x.tolist() == [1.0, -2.0, 3.0]
    assert x.is_leaf and x.grad_fn is None


def test_augmented_assignment_on_leaf_errors():
    x = leaf()
    with pytest.raises(RuntimeError) as info:
        x += 0.1
    assert str(info.value) == LEAF_INPLACE
    assert x.tolist() == [1.0, -2.0, 3.0]


def test_inplace_on_leaf_under_no_grad_optimizer_style():
    p = jg.tensor([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()
    with jg.no_grad():
        p -= 0.1 * p.grad
        p.add_(1).mul_(2)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert p._version == 3
    np.testing.assert_allclose(p.detach().numpy(), [(0.8 + 1) * 2, (1.6 + 1) * 2], rtol=1e-15)
    assert repr(p) == "tensor([3.6000, 5.2000], requires_grad=True)"
    p.grad.zero_()
    (p * 3).sum().backward()
    assert p.grad.tolist() == [3.0, 3.0]


def test_inplace_on_detached_leaf_is_allowed():
    x = leaf()
    d = x.detach()
    d.add_(1)
    assert x.tolist() == [2.0, -1.0, 4.0]
    assert x._version == 1


def test_inplace_with_grad_requiring_operand_on_plain_tensor():
    a = jg.zeros(3)
    w = jg.tensor(W, requires_grad=True)
    a.add_(w * 2)
    assert a.is_leaf is False and a.requires_grad is True
    assert type(a.grad_fn).__name__ == "AddBackward0"
    a.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    b = jg.zeros(3)
    b.mul_(w)
    assert type(b.grad_fn).__name__ == "MulBackward0"


# --- values and gradients through in-place ops on non-leaf tensors -----------------------------
CASES = [
    # name, op, node, values of op(2x) for x = [1, -2, 3], grad of sum(op(2x) * [1, 2, 3]) w.r.t. x
    ("add_", lambda y: y.add_(2), "AddBackward0", [4.0, -2.0, 8.0], [2.0, 4.0, 6.0]),
    ("add_tensor", lambda y: y.add_(jg.tensor(W)), "AddBackward0", [3.0, -2.0, 9.0],
     [2.0, 4.0, 6.0]),
    ("add_alpha", lambda y: y.add_(jg.tensor(W), alpha=2), "AddBackward0", [4.0, 0.0, 12.0],
     [2.0, 4.0, 6.0]),
    ("sub_", lambda y: y.sub_(1), "SubBackward0", [1.0, -5.0, 5.0], [2.0, 4.0, 6.0]),
    ("mul_", lambda y: y.mul_(3), "MulBackward0", [6.0, -12.0, 18.0], [6.0, 12.0, 18.0]),
    ("div_", lambda y: y.div_(2), "DivBackward0", [1.0, -2.0, 3.0], [1.0, 2.0, 3.0]),
    ("zero_", lambda y: y.zero_(), "ZeroBackward0", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
    ("fill_", lambda y: y.fill_(5), "FillBackward2", [5.0, 5.0, 5.0], [0.0, 0.0, 0.0]),
    ("clamp_", lambda y: y.clamp_(min=-1, max=2), "ClampBackward1", [2.0, -1.0, 2.0],
     [2.0, 0.0, 0.0]),
    ("clamp_min", lambda y: y.clamp_(min=0), "ClampBackward1", [2.0, 0.0, 6.0], [2.0, 0.0, 6.0]),
    ("relu_", lambda y: y.relu_(), "ReluBackward0", [2.0, 0.0, 6.0], [2.0, 0.0, 6.0]),
    ("neg_", lambda y: y.neg_(), "NegBackward0", [-2.0, 4.0, -6.0], [-2.0, -4.0, -6.0]),
    ("pow_", lambda y: y.pow_(2), "PowBackward0", [4.0, 16.0, 36.0], [8.0, -32.0, 72.0]),
    ("abs_", lambda y: y.abs_(), "AbsBackward0", [2.0, 4.0, 6.0], [2.0, -4.0, 6.0]),
    ("iadd", lambda y: y.__iadd__(1), "AddBackward0", [3.0, -3.0, 7.0], [2.0, 4.0, 6.0]),
    ("isub", lambda y: y.__isub__(1), "SubBackward0", [1.0, -5.0, 5.0], [2.0, 4.0, 6.0]),
    ("imul", lambda y: y.__imul__(3), "MulBackward0", [6.0, -12.0, 18.0], [6.0, 12.0, 18.0]),
    ("itruediv", lambda y: y.__itruediv__(4), "DivBackward0", [0.5, -1.0, 1.5], [0.5, 1.0, 1.5]),
]


@pytest.mark.parametrize("name,op,node,values,grad", CASES, ids=[c[0] for c in CASES])
def test_inplace_values_and_gradients(name, op, node, values, grad):
    x = leaf()
    y = x * 2
    result = op(y)
    assert result is y
    assert y._version == 1
    assert type(y.grad_fn).__name__ == node
    assert y.tolist() == values
    assert not any(np.signbit(v) and v == 0 for v in y.tolist())  # no -0. (PyTorch prints 0.)
    (y * jg.tensor(W)).sum().backward()
    assert x.grad.tolist() == grad


def test_inplace_unary_float_ops_match_out_of_place():
    for name in ("exp", "sigmoid", "tanh", "sin", "cos"):
        x = leaf()
        y = x * 2
        getattr(y, name + "_")()
        assert type(y.grad_fn).__name__ == getattr(x * 2, name)().grad_fn.name()
        (y * jg.tensor(W)).sum().backward()
        x2 = leaf()
        (getattr(x2 * 2, name)() * jg.tensor(W)).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), getattr(x * 2, name)().detach().numpy(),
                                   rtol=1e-15)
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-15)


def test_augmented_assignment_keeps_identity_and_chains():
    x = leaf()
    y = x * 2
    y0 = y
    y += 1
    y *= 3
    y -= 2
    y /= 2
    assert y is y0
    assert y._version == 4
    assert type(y.grad_fn).__name__ == "DivBackward0"
    np.testing.assert_allclose(y.detach().numpy(), ((np.array([1.0, -2.0, 3.0]) * 2 + 1) * 3 - 2) / 2)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_inplace_dtype_rules():
    i = jg.tensor([1, 2, 3])
    i += 1
    assert i.tolist() == [2, 3, 4] and i.dtype == jg.int64 and i._version == 1
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        i /= 2
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        i.mul_(1.5)
    assert i.tolist() == [2, 3, 4] and i._version == 1  # a failed op writes nothing
    f = jg.tensor([1.0, 2.0], dtype=jg.float32)
    f += jg.tensor([1.0, 1.0], dtype=jg.float64)  # same kind: cast back into float32
    assert f.dtype == jg.float32 and f.tolist() == [2.0, 3.0]


def test_inplace_shape_errors_leave_tensor_unchanged():
    z = jg.zeros(2)
    with pytest.raises(RuntimeError, match=r"output with shape \[2\] doesn't match the broadcast "
                                           r"shape \[2, 2\]"):
        z.add_(jg.ones(2, 2))
    with pytest.raises(RuntimeError, match=r"size of tensor a \(2\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 0"):
        z.add_(jg.ones(3))
    assert z.tolist() == [0.0, 0.0] and z._version == 0


def test_inplace_broadcast_operand():
    x = jg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = jg.tensor([10.0, 20.0], requires_grad=True)
    y = x * 1
    y.add_(b)
    assert y.tolist() == [[11.0, 22.0], [13.0, 24.0]]
    y.sum().backward()
    assert b.grad.tolist() == [2.0, 2.0]
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_inplace_on_view_of_leaf_errors():
    x = jg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    for view in (x.view(2, 2), x[1:]):
        with pytest.raises(RuntimeError) as info:
            view.add_(1)
        assert str(info.value) == ("a view of a leaf Variable that requires grad is being used in "
                                   "an in-place operation.")
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0] and x._version == 0
    with jg.no_grad():
        x.view(2, 2).add_(1)  # fine without grad recording, and seen through the base
    assert x.tolist() == [2.0, 3.0, 4.0, 5.0] and x._version == 1
    d = x.detach().view(2, 2)
    d.add_(1)
    assert x._version == 2
