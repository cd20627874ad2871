"""Custom ``autograd.Function``: ctx API, several inputs/outputs, and PyTorch's errors."""
import re

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import Function


def t(values, requires_grad=True):
    return jg.tensor(values, requires_grad=requires_grad)


def error_message(fn, exc=RuntimeError):
    """The message of the ``exc`` that ``fn()`` raises."""
    with pytest.raises(exc) as info:
        fn()
    return str(info.value)


def saved_modified_msg(op):
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [float64 [2]], which is output 0 of {op}, is at version 1; expected "
            "version 0 instead.")


class Square(Function):
    """x * x, saving its input."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


class Exp(Function):
    """exp(x), saving its output."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y


class Double(Function):
    """2 x, saving nothing; tests subclass it to vary a method (a node takes its class's name)."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Product(Function):
    """x * y, returning a gradient for both inputs whether they need one or not."""

    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, g):
        return g, g


def test_save_for_backward_and_saved_tensors():
    x = t([1.0, 2.0, 3.0])
    y = Square.apply(x)
    assert y.tolist() == [1.0, 4.0, 9.0]
    assert type(y.grad_fn).__name__ == "SquareBackward"
    assert y.grad_fn.name() == "SquareBackward"
    assert y.requires_grad and not y.is_leaf
    saved = y.grad_fn.saved_tensors
    assert isinstance(saved, tuple) and len(saved) == 1 and saved[0] is x
    y.backward(jg.ones(3))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]


def test_forward_runs_without_grad_and_output_is_new_tensor():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen["enabled"] = jg.is_grad_enabled()
            out = x * 2
            seen["out_grad_fn"] = out.grad_fn
            return out

        @staticmethod
        def backward(ctx, g):
            seen["backward_enabled"] = jg.is_grad_enabled()
            return g * 2

    x = t([1.0])
    y = Probe.apply(x)
    assert seen == {"enabled": False, "out_grad_fn": None}
    y.backward(jg.ones(1))
    assert seen["backward_enabled"] is False
    assert x.grad.tolist() == [2.0]


def test_no_graph_when_no_input_requires_grad():
    x = t([1.0, 2.0], requires_grad=False)
    y = Square.apply(x)
    assert y.grad_fn is None and y.requires_grad is False
    with jg.no_grad():
        y = Square.apply(t([1.0]))
    assert y.grad_fn is None and y.requires_grad is False


def test_needs_input_grad_and_non_tensor_args():
    record = {}

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor, y, flag):
            ctx.factor = factor
            ctx.flag = flag
            ctx.save_for_backward(x, y)
            return x * factor + y

        @staticmethod
        def backward(ctx, g):
            record["needs"] = ctx.needs_input_grad
            record["attrs"] = (ctx.factor, ctx.flag)
            gx = g * ctx.factor if ctx.needs_input_grad[0] else None
            gy = g if ctx.needs_input_grad[2] else None
            return gx, None, gy, None

    x = t([1.0, 2.0])
    y = t([5.0, 6.0], requires_grad=False)
    out = Scale.apply(x, 3.0, y, "yes")
    assert out.tolist() == [8.0, 12.0]
    assert out.grad_fn.needs_input_grad == (True, False, False, False)
    out.backward(jg.ones(2))
    assert record == {"needs": (True, False, False, False), "attrs": (3.0, "yes")}
    assert x.grad.tolist() == [3.0, 3.0]
    assert y.grad is None
    # next_functions has one edge per tensor argument only
    out = Scale.apply(x, 3.0, t([5.0, 6.0]), None)
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"] * 2


def test_several_outputs():
    class SinCos(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            x, = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

    x = t([0.5, 1.5])
    s, c = SinCos.apply(x)
    assert s.grad_fn is c.grad_fn
    assert s.grad_fn.name() == "SinCosBackward"
    (s + 2 * c).sum().backward()
    xv = np.array([0.5, 1.5])
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) - 2 * np.sin(xv), rtol=1e-15)
    # only one output used: the other's gradient is materialized as zeros
    x.grad = None
    s, c = SinCos.apply(x)
    s.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv), rtol=1e-15)


def test_set_materialize_grads_false_gives_none():
    got = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((g1 is None, g2 is None))
            total = None
            for g, k in ((g1, 2), (g2, 3)):
                if g is not None:
                    total = g * k if total is None else total + g * k
            return total

    x = t([1.0, 2.0])
    a, b = Two.apply(x)
    b.sum().backward()
    assert got == [(True, False)]
    assert x.grad.tolist() == [3.0, 3.0]


def test_materialize_grads_default_gives_zeros():
    got = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((g1.tolist(), g2.tolist()))
            return g1 * 2 + g2 * 3

    x = t([1.0, 2.0])
    a, b = Two.apply(x)
    a.sum().backward()
    assert got == [([1.0, 1.0], [0.0, 0.0])]
    assert x.grad.tolist() == [2.0, 2.0]


def test_mark_non_differentiable():
    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = jg.tensor(np.argsort(x.numpy()).astype(np.float64))
            ctx.mark_non_differentiable(idx)
            return x * 1.0, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            assert g_idx.tolist() == [0.0, 0.0, 0.0]  # materialized zeros for the marked output
            return g

    x = t([3.0, 1.0, 2.0])
    val, idx = SortLike.apply(x)
    assert val.requires_grad and val.grad_fn is not None
    assert idx.requires_grad is False and idx.grad_fn is None
    assert idx.tolist() == [1.0, 2.0, 0.0]
    val.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_integer_output_has_no_grad_fn():
    class WithCount(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, jg.tensor(x.numel())

        @staticmethod
        def backward(ctx, g, gn):
            return g * 2

    x = t([1.0, 2.0])
    y, n = WithCount.apply(x)
    assert n.requires_grad is False and n.grad_fn is None and n.item() == 2
    assert y.grad_fn is not None


def test_input_returned_as_is_becomes_new_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = t([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x
    assert y.grad_fn.name() == "IdentityBackward"
    assert x.grad_fn is None and x.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_saved_output():
    x = t([0.0, 1.0])
    y = Exp.apply(x)
    saved, = y.grad_fn.saved_tensors
    assert saved.grad_fn is y.grad_fn  # the saved output carries its own node
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]), rtol=1e-15)


def test_double_backward_through_custom_function():
    x = t(3.0)
    y = Square.apply(x)
    (g,) = jg.autograd.grad(y, x, create_graph=True)
    assert g.item() == 6.0
    assert g.requires_grad
    (gg,) = jg.autograd.grad(g, x)
    assert gg.item() == 2.0


def test_wrong_number_of_grads():
    class TooMany(Double):
        @staticmethod
        def backward(ctx, g):
            return g, g

    class TooFew(Product):
        @staticmethod
        def backward(ctx, g):
            return g

    x = t([1.0, 2.0])
    assert error_message(TooMany.apply(x).sum().backward) == (
        "function TooManyBackward returned an incorrect number of gradients (expected 1, got 2)")
    assert error_message(TooFew.apply(x, x).sum().backward) == (
        "function TooFewBackward returned an incorrect number of gradients (expected 2, got 1)")
    assert x.grad is None


def test_extra_none_grads_are_allowed():
    class Extra(Double):
        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = t([1.0, 2.0])
    Extra.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_wrong_shape_grad():
    class BadShape(Double):
        @staticmethod
        def backward(ctx, g):
            return jg.ones(3)

    x = t([1.0, 2.0])
    assert error_message(BadShape.apply(x).sum().backward) == (
        "Function BadShapeBackward returned an invalid gradient at index 0 - got [3] but expected "
        "shape compatible with [2]")


def test_broadcastable_grad_is_summed_to_input_shape():
    class Broad(Double):
        @staticmethod
        def backward(ctx, g):
            return jg.ones(3, 2)  # expandable from (2,): reduced like PyTorch does

    x = t([1.0, 2.0])
    Broad.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_grad_dtype_is_cast_to_input_dtype():
    class BadDtype(Double):
        @staticmethod
        def backward(ctx, g):
            return g.float()

    x = jg.tensor([1.0, 2.0], dtype=jg.float64, requires_grad=True)
    BadDtype.apply(x).sum().backward()
    assert x.grad.dtype == jg.float64
    assert x.grad.tolist() == [1.0, 1.0]


def test_non_none_grad_for_non_tensor_input():
    class NonTensor(Product):
        """x * k, with a gradient returned for the float k too."""

    x = t([1.0, 2.0])
    assert error_message(NonTensor.apply(x, 2.0).sum().backward) == (
        "function NonTensorBackward returned a gradient different than None at position 2, but the "
        "corresponding forward input was not a Variable")


def test_grad_for_input_not_requiring_grad_is_dropped():
    x = t([1.0, 2.0])
    y = t([3.0, 4.0], requires_grad=False)
    Product.apply(x, y).sum().backward()  # its gradient for y, which does not require grad: ignored
    assert x.grad.tolist() == [1.0, 1.0]
    assert y.grad is None


def test_saved_tensor_modified_in_place():
    x = t([1.0, 2.0])
    y = x * 1
    z = Square.apply(y)
    y.add_(1)
    assert error_message(z.sum().backward).startswith(saved_modified_msg("Add"))


def test_saved_output_modified_in_place():
    class SO(Exp):
        """Exp under another name, which the message carries."""

    x = t([1.0, 2.0])
    z = SO.apply(x)
    z.mul_(2)
    assert error_message(z.sum().backward).startswith(saved_modified_msg("SO"))


def test_backward_twice_errors_and_retain_graph_allows_it():
    x = t([1.0, 2.0])
    z = Square.apply(x)
    s = z.sum()
    s.backward(retain_graph=True)
    s.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match=re.escape(
            "Trying to backward through the graph a second time (or directly access saved tensors "
            "after they have already been freed).")):
        s.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        z.grad_fn.saved_tensors


def test_function_without_saved_tensors_can_backward_twice():
    x = t([1.0])
    y = Double.apply(x)
    y.backward()
    y.backward()  # nothing was saved: PyTorch allows it too
    assert x.grad.tolist() == [4.0]


def test_save_for_backward_rejects_non_tensors():
    class Bad(Double):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 "
                                        "is of type int"):
        Bad.apply(t([1.0]))


def test_save_none():
    class SaveNone(Double):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, nothing = ctx.saved_tensors
            assert nothing is None
            return g * 2

    x = t([1.0])
    SaveNone.apply(x).backward()
    assert x.grad.tolist() == [2.0]


def test_custom_function_chain_with_builtin_ops():
    x = t([1.0, -2.0])
    y = Square.apply(x * 3) + x
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["SquareBackward",
                                                                        "AccumulateGrad"]
    y.sum().backward()
    assert x.grad.tolist() == [19.0, -35.0]  # 18 x + 1


def test_exception_in_backward_propagates():
    class Boom(Double):
        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    x = t([1.0])
    with pytest.raises(ValueError, match="boom in backward"):
        Boom.apply(x).sum().backward()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0]
