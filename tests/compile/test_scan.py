"""``jitgrad.scan`` (JAX's ``lax.scan``): eager a Python loop with the ys stacked; compiled one
loop node per direction (never unrolled), equal to eager in values and gradients."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad import func
from jitgrad.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(3)


def rnn(w, u, h0, xs):
    """h_{t+1} = tanh(w * h_t + u * x_t); y_t = h_{t+1}^2; returns sum(h_n) + sum(ys)."""
    def step(h, x):
        h = jg.tanh(w * h + u * x)
        return h, h * h
    h, ys = jg.scan(step, h0, xs)
    return h.sum() + ys.sum()


def _args(n=7, size=3, requires_grad=True):
    return [jg.tensor(rng.standard_normal(s), requires_grad=requires_grad)
            for s in [(size,), (size,), (size,), (n, size)]]


def test_eager_matches_a_python_loop_and_stacks_ys():
    w, u, h0, xs = _args()
    h, ys = jg.scan(lambda h, x: (jg.tanh(w * h + u * x), (h, x.sum())), h0, xs)
    ref, hs = h0, []
    for t in range(7):
        hs.append(ref)
        ref = jg.tanh(w * ref + u * xs[t])
    np.testing.assert_allclose(h.detach().numpy(), ref.detach().numpy(), rtol=1e-15)
    assert ys[0].shape == (7, 3) and ys[1].shape == (7,)
    np.testing.assert_allclose(ys[0].detach().numpy(), np.stack([a.detach().numpy() for a in hs]))
    np.testing.assert_allclose(ys[1].detach().numpy(), xs.detach().numpy().sum(1))


def test_eager_gradients_to_order_two():
    args = _args(n=4, size=2)
    assert gradcheck(rnn, args)
    assert gradgradcheck(rnn, args)


@pytest.mark.parametrize("grad_of_compiled", [True, False])
def test_compiled_equals_eager_values_and_gradients(grad_of_compiled):
    args = _args()
    want = rnn(*args)
    want_grads = jg.autograd.grad(want, args)
    if grad_of_compiled:  # backward through the compiled call's loop node
        f = jg.compile(rnn)
        for _ in range(2):
            got = f(*args)
            grads = jg.autograd.grad(got, args)
    else:  # the whole gradient compiled: the loop's backward node in the program
        g = jg.compile(func.grad(rnn, argnums=(0, 1, 2, 3)))
        for _ in range(2):
            grads = g(*args)
        got = jg.compile(rnn)(*args)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-13)
    for a, b in zip(grads, want_grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-13)


def test_compiled_scan_is_one_loop_not_unrolled():
    args = _args(n=400)
    f = jg.compile(rnn)
    f(*args)
    f(*args)
    program = next(iter(f._entries.values()))
    loops = [node for node in program.graph.nodes if type(node).__name__ == "LoopNode"]
    assert len(loops) == 1 and loops[0].n == 400 and len(program.graph.nodes) < 20


def test_pytrees_none_xs_and_zero_length():
    c0 = {"a": jg.tensor([1.0, 2.0]), "b": jg.tensor(0.5)}
    out, ys = jg.scan(lambda c, _: ({"a": c["a"] * c["b"], "b": c["b"] + 1}, None), c0,
                      length=3)
    assert ys is None
    np.testing.assert_allclose(out["a"].numpy(), [1.0 * 0.5 * 1.5 * 2.5, 2.0 * 0.5 * 1.5 * 2.5])
    empty = jg.zeros((0, 2))
    h, ys = jg.scan(lambda h, x: (h + x, h * 2), jg.ones(2), empty)
    assert h.tolist() == [1.0, 1.0] and ys.shape == (0, 2)
    f = jg.compile(lambda h, xs: jg.scan(lambda h, x: (h + x, h * 2), h, xs), fullgraph=True)
    h, ys = f(jg.ones(2), empty)
    assert h.tolist() == [1.0, 1.0] and ys.shape == (0, 2)


def test_composes_with_vmap():
    w, u, h0, _ = _args(requires_grad=False)
    batch = jg.tensor(rng.standard_normal((5, 6, 3)))
    got = func.vmap(lambda xs: rnn(w, u, h0, xs))(batch)
    want = [rnn(w, u, h0, batch[b]).item() for b in range(5)]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)


def test_bad_arguments_raise_clear_errors():
    h = jg.zeros(2)
    with pytest.raises(ValueError, match="leading dimensions"):
        jg.scan(lambda c, x: (c, None), h, (jg.zeros((3, 2)), jg.zeros((4, 2))))
    with pytest.raises(ValueError, match="leading dimensions"):
        jg.scan(lambda c, x: (c, None), h, jg.zeros((3, 2)), length=4)
    with pytest.raises(TypeError, match="xs must be Tensors"):
        jg.scan(lambda c, x: (c, None), h, [1.0, 2.0])
    with pytest.raises(TypeError, match="carry's structure"):
        jg.scan(lambda c, x: (c.sum(), None), h, jg.zeros((3, 2)))


@pytest.mark.parametrize("kind", ["fori_loop", "scan"])
def test_gradient_through_a_loop_whose_carry_starts_without_grad(kind):
    """Note [grad aliases]: ``func.grad``'s leaf shares its argument's array; the loop's body
    reads it only inside, and the carry starts from a closure that does not require grad. The
    compiled gradient was zero."""
    w = jg.tensor(rng.standard_normal(3))
    h0, xs = jg.tensor(rng.standard_normal(3)), jg.tensor(rng.standard_normal((5, 3)))

    def f(w):
        if kind == "scan":
            h, ys = jg.scan(lambda h, x: (jg.tanh(w * h + x), h * h), h0, xs)
            return h.sum() + ys.sum()
        return jg.fori_loop(5, lambda h: jg.tanh(w * h + 1.0), h0).sum()
    want = func.grad(f)(w)
    got = jg.compile(func.grad(f))
    for _ in range(2):
        np.testing.assert_allclose(got(w).numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    assert np.abs(want.numpy()).min() > 1e-6
