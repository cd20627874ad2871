"""PyTorch's remaining autograd names (issue 35): Variable, once_differentiable, saved-tensor
hooks, the ``_saved_*`` attributes of built-in nodes, deprecated arguments. Values pinned from
PyTorch 2.13."""
import math
import warnings

import pytest

import jitgrad as jg
from jitgrad.autograd import Function, Variable
from jitgrad.autograd.function import once_differentiable
from jitgrad.autograd.graph import (disable_saved_tensors_hooks, save_on_cpu,
                                    saved_tensors_hooks)


def t64(values, requires_grad=False):
    return jg.tensor(values, dtype=jg.float64, requires_grad=requires_grad)


def test_variable_is_a_tensor():
    base = jg.ones(2)
    v = Variable(base, requires_grad=True)
    assert type(v) is jg.Tensor and v.requires_grad and v.is_leaf
    assert isinstance(jg.zeros(1), Variable) and not isinstance(3.0, Variable)
    v.detach()[0] = 5.0  # shares the data of ``base``
    assert base.tolist() == [5.0, 1.0]
    assert not Variable(base).requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0])


class _Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        assert not jg.is_grad_enabled()
        (x,) = ctx.saved_tensors
        return 2 * x * g


def test_once_differentiable():
    x = t64([1.0, 2.0], requires_grad=True)
    _Square.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    # like PyTorch: no node when the incoming gradient does not require grad
    (gx,) = jg.autograd.grad(_Square.apply(x).sum(), x, create_graph=True)
    assert gx.tolist() == [2.0, 4.0] and not gx.requires_grad
    (gx,) = jg.autograd.grad(_Square.apply(x), x, grad_outputs=jg.ones(2, requires_grad=True),
                             create_graph=True)
    assert gx.requires_grad and gx.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        gx.sum().backward()


def test_saved_tensors_hooks_match_torch():
    calls = []

    def pack(t):
        calls.append("p")
        return t * 1

    def unpack(t):
        calls.append("u")
        return t

    x = t64([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = (x * x).exp().sum()
    y.backward()
    assert x.grad.tolist() == pytest.approx([5.43656365691809, 218.39260013257694])
    assert calls == ["p", "p", "p", "u", "u", "u"]
    x = t64([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t * 2, lambda t: t):  # what backward sees is unpack's
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_saved_tensors_hooks_on_functions_and_versions():
    seen = []
    x = t64([1.0, 3.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: (seen.append(t.shape), t)[1], lambda t: t):
        y = _Square.apply(x)
    y.sum().backward()
    assert seen == [(2,)] and x.grad.tolist() == [2.0, 6.0]
    a = t64([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        h = a * 1
        z = h * h
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_save_on_cpu_and_disable():
    x = t64([0.5, 1.5], requires_grad=True)
    with save_on_cpu():
        y = (x.sin() * x).sum()
    y.backward()
    expected = [v * math.cos(v) + math.sin(v) for v in (0.5, 1.5)]
    assert x.grad.tolist() == pytest.approx(expected)
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again outside
        pass


def test_saved_attributes_of_builtin_nodes():
    a, b = t64([1.0, 2.0], requires_grad=True), t64([3.0, 4.0], requires_grad=True)
    y = a * b
    assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b
    e = a.exp()
    assert e.grad_fn._saved_result.tolist() == pytest.approx([2.718281828459045,
                                                             7.38905609893065])
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_self


def test_deprecated_arguments():
    x = t64([1.0, 1.0], requires_grad=True)
    with pytest.warns(FutureWarning, match="`grad_variables` is deprecated"):
        jg.autograd.backward([(x * 2).sum()], grad_variables=[t64(3.0)])
    assert x.grad.tolist() == [6.0, 6.0]
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        (g,) = jg.autograd.grad((x * 2).sum(), x, only_inputs=False)
    assert g.tolist() == [2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jg.autograd.grad((x * 2).sum(), x, only_inputs=True)


def test_inplace_forms_bump_versions_and_record():
    x = t64([0.2, 0.4], requires_grad=True)
    y = x * 1.0
    v = y._version
    y.asin_()
    assert y._version == v + 1 and type(y.grad_fn).__name__ == "AsinBackward0"
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([1 / (1 - 0.04) ** 0.5, 1 / (1 - 0.16) ** 0.5])
    z = x * 1.0
    w = z * z  # saved z
    z.floor_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
