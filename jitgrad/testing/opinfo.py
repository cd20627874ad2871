"""The op database: one ``OpInfo`` per case drives the generated op tests in ``tests/ops``.

Each family lists its entries in its own module (``db_elementwise``, ``db_reduce``,
``db_shape``, ``db_nn``, ``db_numpy``) as a module-level ``ENTRIES`` list; ``testing.op_db``
collects them (``all_entries()``): constructing an ``OpInfo`` registers nothing. An entry gives
the jitgrad call, a NumPy reference, sample inputs and the registry rows (``jitgrad.ops.core.registry.
OPS`` keys) its forward runs; the tests check the forward against NumPy, gradients against
finite differences (float64), second derivatives, that plain backward equals ``create_graph``
backward, that CUDA equals the CPU, and that every registry row has an entry.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


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
    rows: tuple = ()  # the registry rows (OPS keys) the forward runs: tests/ops/test_coverage.py
    # rows only the gradient checks run (backward-only rows, rows chosen when an input requires
    # grad): checked against what the gradgradcheck (first and second backward) runs
    gradient_rows: tuple = ()
    differentiable: bool = True
    gradgrad: bool = True
    fused_check: bool = True  # plain backward == create_graph backward
    dtypes: tuple = ("float64", "float32")
    rtol: float = 1e-7
    atol: float = 1e-9
    float32_tol: tuple = (2e-6, 1e-6)  # (rtol, atol) floor of the float32 forward check
    result_dtype: str = "reference"  # the forward's dtype: the reference's, or the "input"'s
    grad_atol: float = 1e-5
    fused_rtol: float = 1e-12
    output: int | None = None  # for tuple outputs: which one is differentiable and compared
    # The NumPy-namespace call form (``jitgrad.numpy``): the entry is ``jitgrad.numpy.<name>``
    # compared with ``numpy.<name>`` (dotted for submodules). Only float arrays become tensors
    # (also inside lists: ``concatenate``), other arrays pass as arrays, and every output of a
    # tuple result is compared (and differentiated when floating).
    numpy_name: str | None = None


def registrar(entries: list, make=OpInfo):
    """A function adding ``make(*args, **kwargs)`` to ``entries``: how a family module lists its
    entries (constructing an ``OpInfo`` registers nothing)."""
    def register(*args, **kwargs):
        entries.append(make(*args, **kwargs))
    return register


def _lift(x, requires_grad: bool, numpy_call: bool):
    import jitgrad

    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f":
            return jitgrad.tensor(x.copy(), requires_grad=requires_grad)
        return x if numpy_call else jitgrad.tensor(x.copy())
    if numpy_call and isinstance(x, list) and x and all(isinstance(v, np.ndarray) for v in x):
        return [_lift(v, requires_grad, numpy_call) for v in x]
    return x


def to_tensors(sample: Sample, requires_grad: bool, op: OpInfo | None = None):
    """Tensors for the sample's arrays: float arrays require grad when asked (the NumPy call
    form of ``op`` keeps other arrays as they are and lifts arrays inside lists)."""
    numpy_call = op is not None and op.numpy_name is not None
    return [_lift(a, requires_grad, numpy_call) for a in sample.args]


def _leaves(args) -> list:
    """The tensors that require grad, in order (inside lists too)."""
    import jitgrad

    out = []
    for a in args:
        if isinstance(a, list):
            out += _leaves(a)
        elif isinstance(a, jitgrad.Tensor) and a.requires_grad:
            out.append(a)
    return out


def _replace_leaves(args, values):
    """``args`` with the tensors that require grad replaced by ``values``, in order."""
    import jitgrad

    it = iter(values)

    def sub(a):
        if isinstance(a, list):
            return [sub(v) for v in a]
        return next(it) if isinstance(a, jitgrad.Tensor) and a.requires_grad else a

    return [sub(a) for a in args]


def flat(out) -> list:
    """A nested tuple/list result as a flat list."""
    if isinstance(out, (tuple, list)):
        return [o for v in out for o in flat(v)]
    return [out]


def outputs(op: OpInfo, out) -> list:
    """The compared outputs of a call: ``op.output`` of a tuple, or every output."""
    return [out[op.output]] if op.output is not None else flat(out)


def select(op: OpInfo, out):
    """The compared output: one tensor, or a tuple of the floating ones (several outputs)."""
    outs = outputs(op, out)
    if len(outs) == 1:
        return outs[0]
    return tuple(o for o in outs if o.dtype.is_floating_point)


# --- which registry rows a call runs (tests/ops/test_coverage.py) ---------------------------
@contextlib.contextmanager
def recording_rows():
    """Collect the names of the registry rows dispatched inside the block (forward calls)."""
    from ..ops.core import dispatch

    seen: set = set()
    saved = {n: getattr(dispatch, n) for n in
             ("_elementwise", "_run_composite", "_elementwise_out", "_composite_out",
              "elementwise_fast", "unrolled_fast", "full_sum", "basic_view",
              "fresh_result", "record_composite")}  # Note [eager fast path]; cat's 1-d path

    def wrap(run):
        def recorded(op, *args, **kwargs):
            seen.add(op.name)
            return run(op, *args, **kwargs)
        return recorded

    for n, run in saved.items():
        setattr(dispatch, n, wrap(run))
    try:
        yield seen
    finally:
        for n, run in saved.items():
            setattr(dispatch, n, run)


# --- the checks every entry runs (tests/ops/test_ops.py) ------------------------------------
def diff_samples(op: OpInfo, rng):
    """``(sample, fn, inputs)`` per float64 sample: ``fn(*inputs)`` calls the op with the
    differentiable tensors of the sample replaced by ``inputs`` (the others kept)."""
    for sample in op.samples(rng, np.dtype("float64")):
        tensors = to_tensors(sample, True, op)

        def fn(*xs, _tensors=tensors, _sample=sample):
            return select(op, op.fn(*_replace_leaves(_tensors, xs), **_sample.kwargs))

        yield sample, fn, _leaves(tensors)


def check_forward(op: OpInfo, dtype: str) -> set:
    """Forward vs the NumPy reference; float32 within ``op.float32_tol`` at least. The result's
    dtype is the reference's, or the input's (``op.result_dtype``). Returns the registry rows
    the calls ran."""
    import jitgrad

    from . import assert_close

    rng = np.random.default_rng(0)
    rtol, atol = op.rtol, op.atol
    if dtype != "float64":
        rtol, atol = max(rtol, op.float32_tol[0]), max(atol, op.float32_tol[1])
    rows: set = set()
    for sample in op.samples(rng, np.dtype(dtype)):
        expected = flat(op.ref(*sample.args, **sample.kwargs))
        with recording_rows() as seen:
            got = outputs(op, op.fn(*to_tensors(sample, False, op), **sample.kwargs))
        rows |= seen
        assert len(got) == len(expected), (op.name, len(got), len(expected))
        for g, e in zip(got, expected):
            assert isinstance(g, jitgrad.Tensor), (op.name, type(g))
            assert_close(g, np.asarray(e), rtol=rtol, atol=atol, msg=f"{op.name} {sample}")
            assert g.shape == np.shape(e), (op.name, g.shape, np.shape(e))
            want = np.dtype(dtype) if op.result_dtype == "input" else np.asarray(e).dtype
            assert g._data.dtype == want, (op.name, g.dtype, want)
    return rows


def check_gradients(op: OpInfo, order: int) -> set:
    """Finite-difference check of first (``order=1``) or second derivatives, float64. Returns
    the registry rows the checks ran."""
    from .checks import gradcheck, gradgradcheck

    check = gradcheck if order == 1 else gradgradcheck
    with recording_rows() as rows:
        for sample, fn, inputs in diff_samples(op, np.random.default_rng(order)):
            if inputs:
                assert check(fn, inputs, atol=op.grad_atol), (op.name, sample)
    return rows


def check_fused_equals_graph(op: OpInfo) -> None:
    """The fused-kernel backward (no create_graph) and the Tensor-level one agree."""
    import jitgrad

    from . import assert_close

    rng = np.random.default_rng(3)
    for sample, fn, inputs in diff_samples(op, rng):
        outs = [o for o in flat(fn(*inputs)) if o.requires_grad]
        seeds = [jitgrad.tensor(rng.standard_normal(o.shape)) for o in outs]
        plain = jitgrad.autograd.grad(outs, inputs, seeds, retain_graph=True, allow_unused=True)
        graph = jitgrad.autograd.grad(outs, inputs, seeds, create_graph=True, allow_unused=True)
        for p, g in zip(plain, graph):
            assert (p is None) == (g is None), (op.name, sample)
            if p is not None:
                assert_close(p, g, rtol=op.fused_rtol, atol=1e-12)


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
