"""Native segments (Note [native segments] in jitgrad/compile/native.py): runs of a program's
steps as one generated Numba function must give exactly the bits the step-by-step program
gives (the same kernels run), equal eager, and keep reading fresh inputs at every call."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.compile import native
from jitgrad.testing import assert_close


def _eight_schools(p, y, sigma):
    mu, log_tau, theta_t = p
    tau = jg.exp(log_tau)
    r = (y - (mu + tau * theta_t)) / sigma
    return (0.5 * (r * r).sum() + 0.5 * (theta_t * theta_t).sum() + 0.5 * (mu * 0.2) ** 2
            + jg.log(1.0 + (tau * 0.2) ** 2) - log_tau)


def _slices(p, y, sigma):
    (x,) = p[2:]
    d = jg.cat([x[1:] - x[:-1], x[:1] * 2.0])
    m = d.view(2, 4).transpose(0, 1).sum(1)
    return (m * m).sum() + (d.unsqueeze(0).expand(3, 8) * y).sum() / sigma.sum()


def _mixture(p, y, sigma):
    means, log_sds, logits = p[0].reshape(1) + y[:3], p[1] + sigma[:3] * 0.01, p[2][:3]
    z = (y[:, None] - means) * jg.exp(-log_sds)
    comp = -0.5 * z * z - log_sds + jg.log_softmax(logits, 0)
    return -jg.logsumexp(comp, 1).sum()


def _softmaxes(p, y, sigma):
    """softmax across columns (inner > 1), log_softmax along long rows (the long-slice path),
    logsumexp over two adjacent dims: each a call of the kernel eager runs."""
    x = (p[2] * y).reshape(2, 4) + sigma.reshape(2, 4) * 0.1
    wide = x.reshape(2, 4, 1) * jg.linspace(-1.0, 1.0, 5)     # (2, 4, 5)
    long_rows = jg.cat([x] * 10, 1) * jg.linspace(0.5, 2.0, 40)  # (2, 40)
    return ((jg.softmax(wide, 1) * wide).sum() + jg.log_softmax(long_rows, 1)[:, ::3].sum()
            + jg.logsumexp(wide, (0, 1)).sum())


def _logistic(p, y, sigma):
    """Matrix products (one of a transpose, one matrix-vector) and cross-entropy at class
    targets the program computes from its input: BLAS and the NLL kernels in the segment."""
    X = y.reshape(8, 1) * jg.linspace(-1.0, 1.0, 3) + sigma.reshape(8, 1) * 0.01  # (8, 3)
    logits = X @ p[2][:6].reshape(3, 2) + p[0]
    h = (X.T @ logits) @ p[2][6:]
    targets = (y > 0).long()
    return jg.nn.functional.cross_entropy(logits, targets) + (h * h).sum() * 1e-3


PROGRAMS = [_eight_schools, _slices, _mixture, _softmaxes, _logistic]


def _inputs(seed):
    rng = np.random.default_rng(seed)
    p = (jg.tensor(rng.standard_normal()), jg.tensor(rng.standard_normal() * 0.3),
         jg.tensor(rng.standard_normal(8)))
    return p, jg.tensor(rng.standard_normal(8) * 10), jg.tensor(rng.uniform(5, 15, 8))


def _run(fn, enabled, seed):
    native.ENABLED = enabled
    try:
        vg = jg.compile(jg.func.value_and_grad(fn))
        outs = [vg(*_inputs(s)) for s in (seed, seed + 1)]
        return vg, outs
    finally:
        native.ENABLED = True


def _segments(vg) -> int:
    program = next(e for e in vg._entries.values() if not isinstance(e, str))
    return sum(s.__qualname__.startswith("Segment.") for s in program.forward_steps)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_segments_give_the_steps_bits_and_eager_values(fn):
    stepwise, want = _run(fn, False, 0)
    compiled, got = _run(fn, True, 0)
    assert _segments(stepwise) == 0
    assert _segments(compiled) >= 1
    assert compiled.stats()["traces"] == 1 and not compiled.stats()["fallbacks"]
    for (v1, g1), (v2, g2) in zip(got, want):
        assert np.array_equal(v1.numpy(), v2.numpy())
        for a, b in zip(g1, g2):
            assert np.array_equal(a.numpy(), b.numpy())
    for s, (value, grads) in zip((0, 1), got):  # and eager's values, call after call
        p, y, sigma = _inputs(s)
        v, g = jg.func.value_and_grad(fn)(p, y, sigma)
        assert_close(value, v, rtol=1e-12)
        for a, b in zip(grads, g):
            assert_close(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn", [_eight_schools, _mixture, _softmaxes, _logistic],
                         ids=lambda f: f.__name__)
def test_whole_small_program_is_one_native_call(fn):
    vg, _ = _run(fn, True, 0)
    program = next(e for e in vg._entries.values() if not isinstance(e, str))
    assert [s.__qualname__.split(".")[0] for s in program.forward_steps] == ["Segment"]


def test_float_argument_enters_a_segment_as_a_number():
    def f(x, scale):
        return ((x * scale).sum() * scale + x.sum()) * (x * x).sum()

    cf = jg.compile(f)
    x = jg.tensor(np.linspace(-1.0, 2.0, 5))
    for scale in (2.5, -1.25, 3.0):
        assert_close(cf(x, scale), f(x, scale), rtol=1e-13)
    assert cf.stats()["traces"] == 1


def test_a_returned_view_is_a_fresh_array_and_inputs_are_read_each_call():
    def f(x):
        y = x.view(2, 3).transpose(0, 1)
        return y, (y * 2.0).sum()

    cf = jg.compile(f)
    x = jg.tensor(np.arange(6.0))
    cf(x)  # (the trace's own eager run: its view is x's memory, as eager's)
    view, total = cf(x)
    view._data[0, 0] = 100.0  # a compiled call's result is the caller's: x is untouched
    assert x._data[0] == 0.0
    x._data[:] = np.arange(6.0) + 1.0  # a new value in place: the next call reads it
    view, total = cf(x)
    assert_close(total, jg.tensor(2.0 * (21.0)), rtol=1e-15)
    assert_close(view, jg.tensor((np.arange(6.0) + 1.0).reshape(2, 3).T), rtol=0)


def test_a_target_out_of_range_raises_from_the_segment_as_eager():
    def f(x, w, t):
        return jg.nn.functional.cross_entropy(x @ w, t, ignore_index=7)

    cf = jg.compile(jg.func.value_and_grad(f, argnums=1))
    rng = np.random.default_rng(3)
    x, w = jg.tensor(rng.standard_normal((5, 4))), jg.tensor(rng.standard_normal((4, 3)))
    good, bad = jg.tensor([0, 2, 7, 1, 0]), jg.tensor([0, 2, 7, 3, 0])  # 7: ignored
    cf(x, w, good)
    program = next(e for e in cf._entries.values() if not isinstance(e, str))
    assert [s.__qualname__.split(".")[0] for s in program.forward_steps] == ["Segment"]
    for fn in (f, cf):
        with pytest.raises(IndexError, match=r"^Target 3 is out of bounds\.$"):
            fn(x, w, bad)
    value, grad = cf(x, w, good)  # and the next call runs as before
    want = jg.func.value_and_grad(f, argnums=1)(x, w, good)
    assert_close(value, want[0], rtol=1e-13)
    assert_close(grad, want[1], rtol=1e-13, atol=1e-15)
