"""The op database: one ``OpInfo`` per op drives the generated op tests in ``tests/ops``.

Each family registers its entries in its own module (``db_elementwise``, ``db_reduce``,
``db_shape``...). An entry gives the jitgrad call, a NumPy reference and sample inputs; the tests
check the forward against NumPy, gradients against finite differences (float64), second
derivatives, and that plain backward equals ``create_graph`` backward.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

OP_DB: list = []


@dataclass
class Sample:
    """Positional arguments (NumPy arrays become tensors; others pass through) and kwargs."""

    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass
class OpInfo:
    name: str
    fn: Callable  # jitgrad call: fn(*tensors_and_values, **kwargs)
    ref: Callable  # NumPy reference on arrays: ref(*arrays_and_values, **kwargs)
    samples: Callable  # samples(rng, np_dtype) -> list[Sample]
    differentiable: bool = True
    gradgrad: bool = True
    dtypes: tuple = ("float64", "float32")
    rtol: float = 1e-7
    atol: float = 1e-9
    grad_atol: float = 1e-5
    output: int | None = None  # for tuple outputs: which one is differentiable and compared

    def __post_init__(self):
        OP_DB.append(self)


def to_tensors(sample: Sample, requires_grad: bool):
    """Tensors for the sample's arrays: float arrays require grad when asked."""
    import jitgrad

    out = []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            out.append(jitgrad.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == "f"))
        else:
            out.append(a)
    return out


def select(op: OpInfo, out):
    return out[op.output] if op.output is not None else out


# --- the checks every op database runs (tests/ops/test_ops.py, tests/nn/test_nn_ops.py) ------
def diff_samples(op: OpInfo, rng):
    """``(sample, fn, inputs)`` per float64 sample: ``fn(*inputs)`` calls the op with the
    differentiable tensors of the sample replaced by ``inputs`` (the others kept)."""
    import jitgrad

    for sample in op.samples(rng, np.dtype("float64")):
        tensors = to_tensors(sample, True)
        positions = [i for i, t in enumerate(tensors)
                     if isinstance(t, jitgrad.Tensor) and t.requires_grad]

        def fn(*xs, _tensors=tensors, _positions=positions, _sample=sample):
            args = list(_tensors)
            for p, x in zip(_positions, xs):
                args[p] = x
            return select(op, op.fn(*args, **_sample.kwargs))

        yield sample, fn, [tensors[p] for p in positions]


def check_forward(op: OpInfo, dtype: str, tol32=(2e-6, 1e-6), same_dtype_as_input=False):
    """Forward vs the NumPy reference; float32 within ``tol32`` (rtol, atol). The result's dtype
    is the reference's, or the input's when ``same_dtype_as_input``."""
    from . import assert_close

    rng = np.random.default_rng(0)
    for sample in op.samples(rng, np.dtype(dtype)):
        expected = op.ref(*sample.args, **sample.kwargs)
        got = select(op, op.fn(*to_tensors(sample, False), **sample.kwargs))
        rtol = op.rtol if dtype == "float64" else max(op.rtol, tol32[0])
        atol = op.atol if dtype == "float64" else max(op.atol, tol32[1])
        assert_close(got, expected, rtol=rtol, atol=atol, msg=f"{op.name} {sample}")
        assert got.shape == np.shape(expected), (op.name, got.shape, np.shape(expected))
        want = np.dtype(dtype) if same_dtype_as_input else np.asarray(expected).dtype
        assert got._data.dtype == want, (op.name, got.dtype, want)


def check_gradients(op: OpInfo, order: int) -> None:
    """Finite-difference check of first (``order=1``) or second derivatives, float64."""
    from .checks import gradcheck, gradgradcheck

    check = gradcheck if order == 1 else gradgradcheck
    for sample, fn, inputs in diff_samples(op, np.random.default_rng(order)):
        assert check(fn, inputs, atol=op.grad_atol), (op.name, sample)


def check_fused_equals_graph(op: OpInfo, rtol=1e-12) -> None:
    """The fused-kernel backward (no create_graph) and the Tensor-level one agree."""
    import jitgrad

    from . import assert_close

    rng = np.random.default_rng(3)
    for sample, fn, inputs in diff_samples(op, rng):
        out = fn(*inputs)
        seed = jitgrad.tensor(rng.standard_normal(out.shape))
        plain = jitgrad.autograd.grad(out, inputs, seed, retain_graph=True, allow_unused=True)
        graph = jitgrad.autograd.grad(out, inputs, seed, create_graph=True, allow_unused=True)
        for p, g in zip(plain, graph):
            assert (p is None) == (g is None), (op.name, sample)
            if p is not None:
                assert_close(p, g, rtol=rtol, atol=1e-12)


def _to_device(x, device):
    """A CUDA copy of a sample argument: tensors become leaves there (requires_grad kept)."""
    import jitgrad

    if isinstance(x, jitgrad.Tensor):
        return x.detach().to(device).requires_grad_(x.requires_grad)
    return x


def check_device_matches_cpu(op: OpInfo, device: str, dtype: str = "float64",
                             rtol=1e-12, atol=1e-13) -> None:
    """Forward values and first gradients of ``op`` on ``device`` equal the CPU's (same samples,
    same cotangent). The CPU kernels use jitgrad's vectorised math and CUDA the device's own,
    both within a few ulp: hence a small tolerance rather than bitwise equality."""
    import jitgrad

    from . import assert_close

    rng = np.random.default_rng(7)
    for sample in op.samples(rng, np.dtype(dtype)):
        cpu_args = to_tensors(sample, op.differentiable)
        dev_args = [_to_device(a, device) for a in cpu_args]
        cpu_out = select(op, op.fn(*cpu_args, **sample.kwargs))
        dev_out = select(op, op.fn(*dev_args, **sample.kwargs))
        assert str(dev_out.device) == device, (op.name, dev_out.device)
        assert dev_out.dtype == cpu_out.dtype and dev_out.shape == cpu_out.shape, (op.name, sample)
        assert_close(dev_out.cpu(), cpu_out, rtol=rtol, atol=atol, msg=f"{op.name} {sample}")
        cpu_in = [a for a in cpu_args if isinstance(a, jitgrad.Tensor) and a.requires_grad]
        dev_in = [a for a in dev_args if isinstance(a, jitgrad.Tensor) and a.requires_grad]
        if not cpu_in or not cpu_out.requires_grad:
            continue
        seed = rng.standard_normal(cpu_out.shape).astype(dtype)
        cpu_g = jitgrad.autograd.grad(cpu_out, cpu_in, jitgrad.tensor(seed), allow_unused=True)
        dev_g = jitgrad.autograd.grad(dev_out, dev_in, jitgrad.tensor(seed, device=device),
                                      allow_unused=True)
        for c, d in zip(cpu_g, dev_g):
            assert (c is None) == (d is None), (op.name, sample)
            if c is not None:
                assert str(d.device) == device, (op.name, "gradient device", d.device)
                assert_close(d.cpu(), c, rtol=rtol, atol=atol, msg=f"{op.name} grad {sample}")
