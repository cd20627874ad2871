"""``jitgrad.fori_loop``: eager a Python loop; compiled one loop node (generated code when the
body allows, a Python loop over the body's steps otherwise), forward and backward, equal to
the eager loop at every call (the first call is the trace run's own eager result)."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad import func
from jitgrad.testing import assert_close


def _elementwise_body(w, a):
    def body(state):
        x, y = state
        return jg.sin(x) * w + a * y, jg.exp(-x * x) + jg.tanh(y) * 0.5
    return body


def _matmul_body(w, a):  # matmul is not emitted in generated loops: the Python-loop path
    def body(state):
        x, y = state
        return jg.tanh(jg.matmul(w.reshape(2, 2), x.reshape(2, 2)).reshape(4)) + a * y, y * 0.9
    return body


@pytest.mark.parametrize("make_body", [_elementwise_body, _matmul_body])
def test_loop_gradients_equal_eager_at_every_call(make_body):
    w = jg.tensor(np.linspace(-1.0, 1.0, 4), requires_grad=True)  # a closure read in the body

    def f(x, a):
        x, y = jg.fori_loop(6, make_body(w, a), (x, x * 0.5))
        return (x * y).sum() + (w * w).sum()

    cf = jg.compile(f)
    x = jg.tensor(np.array([0.3, -0.2, 0.5, 0.1]), requires_grad=True)
    for a in (0.3, 0.7, 0.9):  # the trace run, then the program with new float values
        x.grad = w.grad = None
        out = cf(x, a)
        out.backward()
        got = (float(out), x.grad.numpy().copy(), w.grad.numpy().copy())
        x.grad = w.grad = None
        ref = f(x, a)
        ref.backward()
        assert_close(got[0], float(ref), rtol=1e-12)
        assert_close(got[1], x.grad, rtol=1e-12, atol=1e-15)
        assert_close(got[2], w.grad, rtol=1e-12, atol=1e-15)
    assert cf.stats()["traces"] == 1 and cf.stats()["cached"] == 1


def test_loop_inside_compiled_transforms():
    def f(x):
        return (jg.fori_loop(5, lambda x: x - 0.1 * jg.sin(x), x) ** 2).sum()

    x = jg.tensor(np.linspace(0.0, 1.0, 3))
    for transform in (func.grad, func.value_and_grad):
        cf = jg.compile(transform(f))
        for scale in (1.0, 2.0):
            got, ref = cf(x * scale), transform(f)(x * scale)
            for g, r in zip(got if isinstance(got, tuple) else (got,),
                            ref if isinstance(ref, tuple) else (ref,)):
                assert_close(g, r, rtol=1e-12)
    h = jg.compile(func.hessian(f))
    assert_close(h(x), func.hessian(f)(x), rtol=1e-10)


def test_loop_is_one_node_not_unrolled():
    cf = jg.compile(lambda x: jg.fori_loop(200, lambda x: x * 1.001 + 0.01, x).sum())
    x = jg.tensor(np.ones(3), requires_grad=True)
    cf(x).backward()
    cf(x).backward()
    program = next(iter(cf._entries.values()))
    assert sum(type(n).__name__ == "LoopNode" for n in program.graph.nodes) == 1
    assert len(program.graph.nodes) < 20  # 200 steps, a handful of nodes


def test_zero_steps_and_bad_arguments():
    x = jg.tensor([1.0, 2.0])
    assert jg.fori_loop(0, lambda x: x * 2, x) is x
    with pytest.raises(TypeError, match="n must be a Python int"):
        jg.fori_loop(2.0, lambda x: x, x)
    with pytest.raises(ValueError, match=">= 0"):
        jg.fori_loop(-1, lambda x: x, x)
    with pytest.raises(TypeError, match="same shapes and dtypes"):
        jg.fori_loop(2, lambda x: x.sum(), x)
