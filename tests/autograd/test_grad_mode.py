"""no_grad / enable_grad / set_grad_enabled: context managers, decorators, thread-locality."""
import threading

import pytest

import jitgrad as jg


@pytest.fixture
def x():
    return jg.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_context(x):
    assert jg.is_grad_enabled() is True
    with jg.no_grad():
        assert jg.is_grad_enabled() is False
        y = x * 2
    assert jg.is_grad_enabled() is True
    assert y.grad_fn is None and y.requires_grad is False and y.is_leaf
    assert repr(y) == "tensor([2., 4.])"
    z = x * 2
    assert type(z.grad_fn).__name__ == "MulBackward0"


def test_no_grad_keeps_leaf_flags(x):
    with jg.no_grad():
        assert x.requires_grad is True
        w = jg.tensor([1.0], requires_grad=True)  # creating leaves that require grad still works
    assert w.requires_grad is True


def test_no_grad_restores_after_exception():
    with pytest.raises(ValueError):
        with jg.no_grad():
            raise ValueError("inside")
    assert jg.is_grad_enabled() is True


def test_nested_modes(x):
    with jg.no_grad():
        with jg.enable_grad():
            assert jg.is_grad_enabled() is True
            y = x * 2
        assert jg.is_grad_enabled() is False
        with jg.set_grad_enabled(True):
            z = x * 3
        w = x * 4
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert type(z.grad_fn).__name__ == "MulBackward0"
    assert w.grad_fn is None
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_context_managers_enter_returns_none():
    with jg.no_grad() as a, jg.enable_grad() as b, jg.set_grad_enabled(True) as c:
        assert (a, b, c) == (None, None, None)


def test_decorators_with_and_without_parentheses(x):
    @jg.no_grad
    def bare():
        return x * 2, jg.is_grad_enabled()

    @jg.no_grad()
    def called():
        return x * 2

    y, enabled = bare()
    assert enabled is False and y.grad_fn is None
    assert called().grad_fn is None
    assert called.__name__ == "called"
    assert jg.is_grad_enabled() is True

    @jg.enable_grad()
    def enabled_fn():
        return x * 2

    @jg.enable_grad
    def enabled_bare():
        return x * 2

    with jg.no_grad():
        assert enabled_fn().grad_fn is not None
        assert enabled_bare().grad_fn is not None
        assert jg.is_grad_enabled() is False


def test_decorator_on_method(x):
    class Model:
        @jg.no_grad()
        def predict(self, a):
            return a * 2

    out = Model().predict(x)
    assert out.grad_fn is None and out.tolist() == [2.0, 4.0]


def test_decorator_on_generator():
    @jg.no_grad()
    def gen():
        yield jg.is_grad_enabled()
        yield jg.is_grad_enabled()

    g = gen()
    assert next(g) is False
    assert jg.is_grad_enabled() is True  # between steps the caller's mode is back
    assert next(g) is False
    with pytest.raises(StopIteration):
        next(g)


def test_decorator_is_reentrant():
    @jg.no_grad()
    def rec(n):
        assert jg.is_grad_enabled() is False
        return 0 if n == 0 else 1 + rec(n - 1)

    assert rec(3) == 3
    assert jg.is_grad_enabled() is True


def test_set_grad_enabled_as_function_call(x):
    try:
        jg.set_grad_enabled(False)
        assert jg.is_grad_enabled() is False
        assert (x * 2).grad_fn is None
        jg.set_grad_enabled(True)
        assert jg.is_grad_enabled() is True
    finally:
        jg.set_grad_enabled(True)


def test_set_grad_enabled_context_and_decorator(x):
    for mode in (False, True):
        with jg.set_grad_enabled(mode):
            assert jg.is_grad_enabled() is mode
            y = x * 2
        assert jg.is_grad_enabled() is True
        assert (y.grad_fn is not None) is mode

    @jg.set_grad_enabled(False)
    def f():
        return x * 2, jg.is_grad_enabled()

    assert jg.is_grad_enabled() is True  # applying the decorator does not change the mode
    y, enabled = f()
    assert enabled is False and y.grad_fn is None
    assert jg.is_grad_enabled() is True


def test_grad_mode_is_thread_local(x):
    results = {}

    def worker(key):
        results[key] = jg.is_grad_enabled()
        results[key + "_graph"] = (x * 2).grad_fn is not None

    with jg.no_grad():
        t = threading.Thread(target=worker, args=("in_no_grad",))
        t.start()
        t.join()
        assert jg.is_grad_enabled() is False
    assert results == {"in_no_grad": True, "in_no_grad_graph": True}

    def disable_in_thread():
        jg.set_grad_enabled(False)
        results["thread_after_disable"] = jg.is_grad_enabled()

    t = threading.Thread(target=disable_in_thread)
    t.start()
    t.join()
    assert results["thread_after_disable"] is False
    assert jg.is_grad_enabled() is True  # the main thread is unaffected


def test_inplace_under_no_grad_does_not_record(x):
    y = x * 1
    with jg.no_grad():
        y.add_(1)
    assert type(y.grad_fn).__name__ == "MulBackward0"  # history unchanged
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_backward_works_inside_no_grad(x):
    y = (x * x).sum()
    with jg.no_grad():
        y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert x.grad.grad_fn is None


def test_autograd_grad_create_graph_inside_no_grad_records(x):
    y = (x ** 3).sum()
    with jg.no_grad():
        (g,) = jg.autograd.grad(y, x, create_graph=True)
    assert g.grad_fn is not None
    assert g.tolist() == [3.0, 12.0]
