"""The op-database checks for the nn layers (jitgrad.testing.db_nn): forward vs NumPy in
float64 and float32, gradcheck, gradgradcheck, fused backward == create_graph backward."""
import numpy as np
import pytest

import jitgrad
from jitgrad.testing import assert_close, gradcheck, gradgradcheck
from jitgrad.testing.db_nn import NN_OPS
from jitgrad.testing.opinfo import select, to_tensors

DIFF = [op for op in NN_OPS if op.differentiable]
GRADGRAD = [op for op in DIFF if op.gradgrad]


def _ids(ops):
    return [op.name for op in ops]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", NN_OPS, ids=_ids(NN_OPS))
def test_forward_matches_numpy(op, dtype):
    rng = np.random.default_rng(0)
    for sample in op.samples(rng, np.dtype(dtype)):
        expected = op.ref(*sample.args, **sample.kwargs)
        got = select(op, op.fn(*to_tensors(sample, False), **sample.kwargs))
        rtol = op.rtol if dtype == "float64" else max(op.rtol, 2e-5)
        atol = op.atol if dtype == "float64" else max(op.atol, 2e-5)
        assert_close(got, expected, rtol=rtol, atol=atol, msg=f"{op.name} {sample}")
        assert got.shape == np.shape(expected), (op.name, got.shape, np.shape(expected))
        assert got._data.dtype == np.dtype(dtype), (op.name, got.dtype)


def _diff_fn(op, sample, tensors):
    positions = [i for i, t in enumerate(tensors)
                 if isinstance(t, jitgrad.Tensor) and t.requires_grad]

    def fn(*xs):
        args = list(tensors)
        for p, x in zip(positions, xs):
            args[p] = x
        return select(op, op.fn(*args, **sample.kwargs))

    return fn, [tensors[p] for p in positions]


def _diff_samples(op, rng):
    for sample in op.samples(rng, np.dtype("float64")):
        yield (sample, *_diff_fn(op, sample, to_tensors(sample, True)))


@pytest.mark.parametrize("op", DIFF, ids=_ids(DIFF))
def test_gradcheck(op):
    for sample, fn, inputs in _diff_samples(op, np.random.default_rng(1)):
        assert gradcheck(fn, inputs, atol=op.grad_atol), (op.name, sample)


@pytest.mark.parametrize("op", GRADGRAD, ids=_ids(GRADGRAD))
def test_gradgradcheck(op):
    for sample, fn, inputs in _diff_samples(op, np.random.default_rng(2)):
        assert gradgradcheck(fn, inputs, atol=op.grad_atol), (op.name, sample)


@pytest.mark.parametrize("op", DIFF, ids=_ids(DIFF))
def test_fused_backward_equals_graph_backward(op):
    """The fused-kernel backward (no create_graph) and the Tensor-op one agree."""
    rng = np.random.default_rng(3)
    for sample, fn, inputs in _diff_samples(op, rng):
        out = fn(*inputs)
        seed = jitgrad.tensor(rng.standard_normal(out.shape))
        plain = jitgrad.autograd.grad(out, inputs, seed, retain_graph=True, allow_unused=True)
        graph = jitgrad.autograd.grad(out, inputs, seed, create_graph=True, allow_unused=True)
        for p, g in zip(plain, graph):
            assert (p is None) == (g is None)
            if p is not None:
                assert_close(p, g, rtol=1e-10, atol=1e-12)
