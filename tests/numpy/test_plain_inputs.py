"""Issue 32: plain inputs get NumPy's result (Note [plain inputs] in jitgrad/numpy/_plain.py).

A ``jitgrad.numpy`` call none of whose arguments holds a Tensor returns what NumPy returns (a
0-d result is an immutable NumPy scalar, so ``+=`` rebinds); the array constructors return
Tensors; a call with a Tensor argument returns Tensors with PyTorch's semantics. The NumPy
idioms that count and accumulate with reductions are checked against NumPy's own values, the
HIPS autograd parameter-slice builder with a gradient check on a small net.
"""
import threading
import warnings

import numpy
import pytest

import jitgrad
import jitgrad.numpy as np
from jitgrad.numpy import _plain
from jitgrad.numpy.functional import grad

SHAPES = [(3, 4), (4,), (4, 2), (2,)]


def _slices(mod, shapes):
    """The HIPS autograd example's parameter slices, written against ``mod`` (numpy or
    jitgrad.numpy)."""
    n, idx = 0, []
    for shape in shapes:
        start = n
        n += mod.prod(shape)
        idx.append(slice(start, n))
    return n, idx


def test_offset_counting_matches_numpy():
    n, idx = _slices(np, SHAPES)
    n_ref, idx_ref = _slices(numpy, SHAPES)
    assert n == n_ref == 26 and idx == idx_ref
    assert [(s.start, s.stop) for s in idx] == [(0, 12), (12, 16), (16, 24), (24, 26)]
    assert type(n) is type(numpy.prod((3, 4)))  # a NumPy scalar: ``+=`` rebinds


def test_reductions_of_plain_data_are_numpy_scalars():
    total = np.sum([1, 2, 3])
    alias = total
    total += 10
    assert (total, alias) == (16, 6)
    assert type(total) is type(numpy.sum([1, 2, 3]) + 10)
    for fn, arg in ((np.prod, (2, 3, 4)), (np.sum, [1.5, 2.5]), (np.mean, [1.0, 2.0]),
                    (np.max, numpy.arange(5)), (np.linalg.norm, [3.0, 4.0]),
                    (np.dot, ([1.0, 2.0], [3.0, 4.0])), (np.exp, 1.0)):
        args = arg if fn is np.dot else (arg,)
        got = fn(*args)
        want = getattr(numpy.linalg if fn is np.linalg.norm else numpy, fn.__name__)(*args)
        assert type(got) is type(want) and got == want, fn.__name__


def test_size_shape_ndim_match_numpy():
    x = numpy.zeros((2, 3))
    t = jitgrad.tensor(x)
    for fn in (np.size, np.shape, np.ndim):
        ref = getattr(numpy, fn.__name__)
        assert fn((2, 3)) == ref((2, 3)) and fn([[1, 2, 3]]) == ref([[1, 2, 3]])
        assert fn(x) == ref(x) and fn(t) == ref(x)  # a Tensor's too: Python values
    assert np.size(t, 1) == 3 and type(np.size(t)) is int


def test_running_totals_from_zero():
    data = [numpy.arange(3.0), numpy.ones((2, 2)), numpy.array([0.5])]
    total, history = 0, []
    for d in data:
        total += np.sum(d)
        history.append(total)
    ref, ref_history = 0, []
    for d in data:
        ref += numpy.sum(d)
        ref_history.append(ref)
    assert history == ref_history == [3.0, 7.0, 7.5]
    # over Tensors the total is a Tensor (graph recorded): the same values, a gradient
    ts = [jitgrad.tensor(d, requires_grad=True) for d in data]
    total = 0
    for t in ts:
        total += np.sum(t * t)
    assert float(total) == pytest.approx(sum(float(numpy.sum(d * d)) for d in data))
    total.backward()
    for t, d in zip(ts, data):
        numpy.testing.assert_allclose(t.grad.numpy(), 2 * d)


def test_tensor_inputs_keep_pytorch_semantics():
    """The documented rule for Tensors: a 0-d result is a Tensor, ``+=`` on it is in place
    (aliases see it, as for ``torch.sum``); ``m = m + 1`` rebinds."""
    x = np.array([1.0, 2.0])
    n = np.sum(x)
    assert isinstance(n, jitgrad.Tensor) and n.ndim == 0
    m = n
    m += 1
    assert float(n) == 4.0 and m is n
    k = np.sum(x)
    j = k
    j = j + 1
    assert (float(k), float(j)) == (3.0, 4.0)


def test_constructors_return_tensors():
    for made in (np.array([1.0, 2.0]), np.asarray((1, 2)), np.zeros(3), np.ones((2, 2)),
                 np.arange(4), np.linspace(0, 1, 5), np.eye(2), np.full(2, 3.0),
                 np.zeros_like([1, 2]), np.identity(2), np.tri(3), np.hanning(4),
                 np.fromfunction(lambda i, j: i + j, (2, 2)), np.fft.fftfreq(4),
                 np.asanyarray([1.0]), np.ascontiguousarray([[1.0]])):
        assert isinstance(made, jitgrad.Tensor)


def test_plain_results_match_numpy_across_namespaces():
    a = numpy.array([[2.0, 1.0], [1.0, 3.0]])
    cases = [(np.linalg.inv, numpy.linalg.inv, (a,)), (np.linalg.det, numpy.linalg.det, (a,)),
             (np.fft.fft, numpy.fft.fft, ([1.0, 2.0, 0.5],)),
             (np.cumsum, numpy.cumsum, ([1, 2, 3],)), (np.where, numpy.where, ([0, 1, 2],)),
             (np.concatenate, numpy.concatenate, ([[1], [2, 3]],)),
             (np.unique, numpy.unique, ([3, 1, 3],)), (np.outer, numpy.outer, ([1, 2], [3, 4]))]
    for fn, ref, args in cases:
        got, want = fn(*args), ref(*args)
        assert type(got) is type(want), fn.__name__
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            numpy.testing.assert_array_equal(g, w)


def test_a_tensor_anywhere_takes_the_tensor_path():
    w = jitgrad.tensor(numpy.array([1.0, -2.0]), requires_grad=True)
    plain = numpy.array([[1.0, 2.0], [3.0, 4.0]])
    out = np.dot(plain, w)  # plain first argument, Tensor second
    assert isinstance(out, jitgrad.Tensor)
    np.sum(np.outer(numpy.ones(3), w) ** 2).backward()  # internal calls on plain data
    numpy.testing.assert_allclose(w.grad.numpy(), [6.0, -12.0])
    assert isinstance(np.stack([numpy.ones(2), w]), jitgrad.Tensor)  # nested in a list
    assert isinstance(np.maximum(0.0, w), jitgrad.Tensor)
    assert isinstance(np.sum(a=w), jitgrad.Tensor)  # a keyword


def test_a_python_function_argument_takes_the_tensor_path():
    """A function argument may compute with Tensors it closes over, so the call runs
    jitgrad's implementation (whose result records the graph)."""
    w = jitgrad.tensor(2.0, requires_grad=True)
    out = np.apply_along_axis(lambda v: np.sum(v) * w, 0, numpy.ones((3, 2)))
    assert isinstance(out, jitgrad.Tensor)
    out.sum().backward()
    assert float(w.grad) == 6.0


def test_numpy_protocol_still_records():
    t = jitgrad.tensor(numpy.array([1.0, 2.0]), requires_grad=True)
    y = numpy.sum(numpy.outer(numpy.ones(2), t))  # NumPy's functions on a Tensor
    assert isinstance(y, jitgrad.Tensor)
    y.backward()
    numpy.testing.assert_allclose(t.grad.numpy(), [2.0, 2.0])


def test_keywords_numpy_lacks_fall_back_to_numpy_values():
    got = np.sort([3, 1, 2], descending=True)  # jitgrad's keyword (the Array API's)
    assert type(got) is numpy.ndarray and got.tolist() == [3, 2, 1]


def test_a_function_numpy_lacks_returns_numpy_values():
    """Older NumPy lacks some names (``unstack``, ``cumulative_sum``...): jitgrad's function
    runs and its Tensors come back as NumPy values."""
    variance = _plain._wrap(np.var.impl, None, "numpy.var")
    got = variance([1.0, 3.0])
    assert type(got) is numpy.float64 and got == 1.0
    parts = _plain._wrap(np.unstack.impl, None, "numpy.unstack")(numpy.eye(2))
    assert all(type(p) is numpy.ndarray for p in parts)


def test_aliases_stay_one_function():
    assert np.abs is np.absolute is np.fabs and np.max is np.amax
    assert np.var.__name__ == "var" and np.var.__doc__ and np.var.__wrapped__ is np.var.impl


def test_hot_functions_check_their_own_arguments():
    """The rows' elementwise functions and the common reductions apply the rule on their
    non-Tensor path (``checks_itself``): no wrapper, so Tensor calls pay nothing for it."""
    for fn in (np.sin, np.exp, np.sum, np.mean, np.prod, np.max, np.dot, np.matmul,
               np.maximum):
        assert not hasattr(fn, "impl"), fn.__name__
    assert type(np.sin(0.5)) is numpy.float64 and type(np.add(1, 2)) is numpy.int64
    assert type(np.dot(numpy.ones(2), numpy.ones(2))) is numpy.float64
    assert isinstance(np.sum(jitgrad.ones(2)), jitgrad.Tensor)


def test_the_choice_is_per_thread():
    """Calls inside a running implementation always take the implementation (the count of
    running implementations is per thread), so another thread's plain call is unaffected."""
    results = []
    entered, release = threading.Event(), threading.Event()

    def slow(v):
        entered.set()
        release.wait(5)
        return np.sum(v)

    def other():
        entered.wait(5)
        results.append(np.sum([1, 2]))
        release.set()

    th = threading.Thread(target=other)
    th.start()
    out = np.apply_along_axis(slow, 0, numpy.ones((2, 1)))  # (a function argument: Tensors)
    th.join()
    assert isinstance(out, jitgrad.Tensor)
    assert type(results[0]) is numpy.int64


# --- the HIPS autograd example: parameters in one vector, sliced by a parser ------------------
class WeightsParser:
    """HIPS autograd's examples (``convnet.py``, ``fluidsim``...) build their slices so."""

    def __init__(self, mod):
        self.np, self.idxs_and_shapes, self.N = mod, {}, 0

    def add_weights(self, name, shape):
        start = self.N
        self.N += self.np.prod(shape)
        self.idxs_and_shapes[name] = (slice(start, self.N), shape)

    def get(self, vect, name):
        idxs, shape = self.idxs_and_shapes[name]
        return self.np.reshape(vect[idxs], shape)


def _net(mod, layer_sizes=(3, 4, 2), l2=0.01):
    parser = WeightsParser(mod)
    for i, (m, n) in enumerate(zip(layer_sizes[:-1], layer_sizes[1:])):
        parser.add_weights(("W", i), (m, n))
        parser.add_weights(("b", i), (n,))

    def loss(weights, inputs, targets):
        h = inputs
        for i in range(len(layer_sizes) - 1):
            h = mod.tanh(mod.dot(h, parser.get(weights, ("W", i))) + parser.get(weights, ("b", i)))
        return mod.sum((h - targets) ** 2) + l2 * mod.sum(weights ** 2)

    return parser, loss


def test_hips_parameter_parser_and_gradient():
    parser, loss = _net(np)
    ref_parser, ref_loss = _net(numpy)
    assert parser.N == ref_parser.N == 3 * 4 + 4 + 4 * 2 + 2
    assert parser.idxs_and_shapes == ref_parser.idxs_and_shapes
    rs = numpy.random.RandomState(0)
    w = rs.randn(int(parser.N)) * 0.5
    inputs, targets = rs.randn(5, 3), rs.randn(5, 2)
    g = grad(loss)(w, inputs, targets)
    assert type(g) is numpy.ndarray and g.shape == w.shape
    assert float(loss(np.array(w), inputs, targets)) == pytest.approx(ref_loss(w, inputs, targets))
    eps = 1e-6
    fd = numpy.array([(ref_loss(w + eps * e, inputs, targets) -
                       ref_loss(w - eps * e, inputs, targets)) / (2 * eps)
                      for e in numpy.eye(w.size)])
    numpy.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    assert numpy.abs(g).min() > 0  # every slice received its gradient (none is empty)


def test_compiled_function_counting_with_plain_shapes():
    """Counting with shapes inside a compiled function makes no tensors, so nothing breaks the
    capture; the result matches eager on a second input."""
    def fn(x):
        n = 0
        for s in (x.shape, (2,)):
            n += np.prod(s)
        return x * float(n)

    compiled = jitgrad.compile(fn)
    a, b = jitgrad.tensor(numpy.ones(3)), jitgrad.tensor(numpy.arange(3.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning
        compiled(a)
        numpy.testing.assert_allclose(compiled(b).numpy(), fn(b).numpy())
