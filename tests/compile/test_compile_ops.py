"""Every op database entry through ``jitgrad.compile`` equals eager: outputs and gradients.

Per entry, one sample (the last the entry draws: the most dimensions), called twice: the first
call traces (its result is the trace run's own), the second, with other float values of the same
shapes, runs the captured program (``stats()["cached"] == 1``, no retrace). Float64 to 1e-12
relative (gradients to the entry's ``fused_rtol`` where looser: the compiled backward is the
traced backward rules, eager's the fused kernels); float32 for the elementwise family.

An entry that cannot be captured must warn and give eager's values; which entries fall back is
pinned in ``FALLBACK`` (name -> reason fragment), so a capture lost (or gained) shows here.
"""
import os
import re
import warnings

import numpy as np
import pytest

import jitgrad
from jitgrad.compile import native
from jitgrad.testing import assert_close
from jitgrad.testing.op_db import all_entries
from jitgrad.testing.opinfo import Sample, outputs, to_tensors

# a library function reads values on the host (Tensor._host), or makes a tensor with
# ``Tensor._make`` from an array it computed: which of the two it meets first may change
_HOST = ("a tensor computed outside jitgrad's ops", "reads a traced value")
_WRITE = "an in-place write"
# Entries that run eagerly with a warning, and why (a fragment of the reason, or a tuple of
# fragments, one of which must be there). Each is a library function reading values on the
# host or making a tensor from an array it computed (both would be baked into a program), or
# an in-place write.
FALLBACK = {
    "inplace_view_mul": _WRITE, "inplace_view_of_view": _WRITE,
    "setitem_repeated": _WRITE, "setitem_mask": _WRITE,
    "np.average-weights": _HOST,
    "np.triu": _HOST, "np.tril": _HOST,
    "np.nextafter": _HOST,
    "np.cumulative_sum-initial": _HOST,
    # argpartition's order is NumPy's own (a full sort would satisfy the contract, not the
    # reference's exact arrangement)
    "np.partition": _HOST,
}

# jitgrad.numpy's functions composed on the host (index arrays, masks and constants made with
# NumPy from the data, then gathered): eager values, one warning
_NUMPY_COMPOSED = (
    "np.cov-aweights", "np.interp", "np.interp-left-right",
    "np.interp-period", "np.vander-N-increasing",
    "np.polyfit", "np.polyfit-w", "np.roots",
    "np.i0", "np.i0-wide", "np.hanning()",
    "np.blackman()", "np.kaiser()",
    "np.insert-scalar",
    "np.r_()", "np.frexp", "np.ldexp", "np.spacing",
    "np.copyto()",
)
FALLBACK.update({_n: _HOST for _n in _NUMPY_COMPOSED})
# captured since jitgrad.numpy's constructors and shape-only masks are constant makers
for _n in ("np.vander-N-increasing", "np.triu", "np.tril", "np.kaiser()", "np.insert-scalar",
           "np.hanning()", "np.blackman()", "np.cumulative_sum-initial",
           "np.cov-aweights", "np.average-weights"):
    del FALLBACK[_n]
FALLBACK.update({_n: _WRITE for _n in ('np.fill_diagonal()', 'np.fill_diagonal-wrap()',
                                       'np.put_along_axis()', 'np.copyto()')})
FALLBACK.update({_n: _HOST for _n in ("np.piecewise()", "np.piecewise-const()")})
# the output shape depends on the values (the trim): a program has fixed shapes
FALLBACK.update({_n: _HOST for _n in ("np.trim_zeros", "np.trim_zeros-f",
                                      "np.asarray_chkfinite()")})  # (a value check)

# issue 35's nn.functional and linalg additions composed with host reads (masks, windows,
# indices made with NumPy from the data, tensors built from arrays): eager values, one warning
# (issue 34 makes them compile)
# grid_sample (like np.interp) gathers at computed indices: that needs a gather taking its
# index as a row input with an accumulating backward, which no row has yet
FALLBACK.update({_n: _HOST for _n in (
    "grid_sample",)})

# Bugs found by this file, each a strict xfail (remove the entry when fixed): none open.
XFAIL: dict = {}

ENTRIES = all_entries()
# Cost: Numba compiles every new fused kernel (~0.3 s each; ~2 min for every entry), so by
# default a deterministic subset runs: every tensor-form entry (tensor ops, nn), and of the
# NumPy-form ones (``jitgrad.numpy``, mostly the same rows again) every second one in the
# database's order, ufunc shape variants (``np.sin-(2, 3)``...) first reduced to one per ufunc
# (the 2-d one; for binary ufuncs the two-sided broadcast) except for ``np.multiply`` and
# ``np.divide``, which keep every variant. JITGRAD_TEST_COMPILE_ALL=1 runs every entry.
_ALL = os.environ.get("JITGRAD_TEST_COMPILE_ALL") == "1"
_KEEP_ALL = ("np.multiply", "np.divide")
_VARIANTS = ("()", "(3,)", "(2, 3)", "()-(3,)", "(3,)-()", "(2, 3)-(3,)", "(2, 1)-(1, 3)",
             "(2, 3)-(2, 3)")


def _subset(entries) -> list:
    kept, numpy_form = [], 0
    for op in entries:
        if op.numpy_name is None:
            kept.append(op)
            continue
        m = re.match(r"^(np\.[\w.]+)-([(\d].*)$", op.name)
        if m is not None and m.group(1) in _KEEP_ALL:
            kept.append(op)
            continue
        if m is not None and m.group(2) in _VARIANTS and m.group(2) not in ("(2, 3)",
                                                                             "(2, 1)-(1, 3)"):
            continue
        numpy_form += 1
        if numpy_form % 2:
            kept.append(op)
    return kept


RUN = ENTRIES if _ALL else _subset(ENTRIES)
FLOAT32 = [op for op in ENTRIES if op.name in ("exp", "sigmoid", "pow", "mul", "div", "sum",
                                                 "mean", "amax", "matmul", "softmax",
                                                 "linear", "np.add-(2, 1)-(1, 3)")]


def _case(op, dtype, id):
    marks = [pytest.mark.xfail(strict=True, reason=XFAIL[op.name])] if op.name in XFAIL else []
    return pytest.param(op, dtype, id=id, marks=marks)


CASES = ([_case(op, "float64", op.name) for op in RUN]
         + [_case(op, "float32", f"{op.name}-float32") for op in FLOAT32 if "float32" in op.dtypes])
# Both ways a program runs are checked, on alternate cases in the database's order (each costs
# its own compilations, and segments double a small program's; docs/compile.md, 'Native
# segments'): native segments (what small arrays run), and step by step (what large arrays
# run, and ``JITGRAD_COMPILE_NATIVE=0``). JITGRAD_TEST_COMPILE_ALL=1 runs every case both ways.
STEPWISE = {id(case) for case in CASES[1::2]}


def _second_args(op, dtype, first):
    """The first sample's arguments with every float array replaced by another draw's array
    of the same shape (other arguments, indices included, stay: they may be static)."""
    other = op.samples(np.random.default_rng(1), dtype)[-1].args

    def swap(a, b):
        if (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype.kind == "f"
                and a.shape == b.shape and a.dtype == b.dtype):
            return b
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            return [swap(x, y) for x, y in zip(a, b)]
        return a
    return tuple(swap(a, b) for a, b in zip(first, other))


def _grad_leaves(args) -> list:
    out = []
    for a in args:
        if isinstance(a, list):
            out += _grad_leaves(a)
        elif isinstance(a, jitgrad.Tensor) and a.requires_grad:
            out.append(a)
    return out


def _compare(op, dtype, got, want, what, grad=False):
    if dtype == np.float32:
        rtol, atol = 2e-6, 1e-6
    else:
        rtol = max(1e-12, op.fused_rtol) if grad else 1e-12
        atol = 1e-13
    assert len(got) == len(want), (op.name, what, len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), (op.name, what, k)
        if w is None:
            continue
        assert isinstance(g, jitgrad.Tensor) == isinstance(w, jitgrad.Tensor), (op.name, what, k)
        if isinstance(w, jitgrad.Tensor):
            assert g.shape == w.shape and g.dtype == w.dtype, (op.name, what, k, g.shape, w.shape,
                                                               g.dtype, w.dtype)
            assert g.requires_grad == w.requires_grad, (op.name, what, k)
        assert_close(g, w, rtol=rtol, atol=atol, msg=f"{op.name} {what} {k}")


def _call(op, dtype, cf, args, kwargs, seed):
    """Eager and compiled results and gradients of one call; the warnings of the compiled one."""
    sample = Sample(args, kwargs)
    eager_in = to_tensors(sample, op.differentiable, op)
    comp_in = to_tensors(sample, op.differentiable, op)
    want = outputs(op, op.fn(*eager_in, **kwargs))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = outputs(op, cf(*comp_in))
    _compare(op, dtype, got, want, f"call {seed} output")
    diff = [k for k, w in enumerate(want) if isinstance(w, jitgrad.Tensor) and w.requires_grad
            and w.dtype.is_floating_point]
    leaves_e, leaves_c = _grad_leaves(eager_in), _grad_leaves(comp_in)
    if diff and leaves_e:
        rng = np.random.default_rng(10 + seed)
        seeds = [rng.standard_normal(want[k].shape).astype(want[k]._data.dtype) for k in diff]
        ge = jitgrad.autograd.grad([want[k] for k in diff], leaves_e,
                                   [jitgrad.tensor(s) for s in seeds], allow_unused=True)
        gc = jitgrad.autograd.grad([got[k] for k in diff], leaves_c,
                                   [jitgrad.tensor(s) for s in seeds], allow_unused=True)
        _compare(op, dtype, list(gc), list(ge), f"call {seed} gradient", grad=True)
    return [str(w.message) for w in caught
            if "jitgrad.compile" in str(w.message)]


def _ways(case) -> list:
    if _ALL:
        return [True, False]
    return [id(case) not in STEPWISE]


@pytest.mark.parametrize("op, dtype, native_segments",
                         [pytest.param(*case.values, way, id=case.id + ("" if way else "-steps"),
                                       marks=case.marks)
                          for case in CASES for way in _ways(case)])
def test_compiled_equals_eager(op, dtype, native_segments, monkeypatch):
    monkeypatch.setattr(native, "ENABLED", native_segments)
    dtype = np.dtype(dtype)
    first = op.samples(np.random.default_rng(0), dtype)[-1]
    kwargs = first.kwargs
    cf = jitgrad.compile(lambda *a: op.fn(*a, **kwargs))
    warned_1 = _call(op, dtype, cf, first.args, kwargs, 1)
    traces = cf.stats()["traces"]
    warned_2 = _call(op, dtype, cf, _second_args(op, dtype, first.args), kwargs, 2)
    stats = cf.stats()
    assert stats["traces"] == traces, (op.name, "the second call retraced", stats)
    assert not warned_2, (op.name, warned_2)
    if op.name in FALLBACK:
        assert stats["fallbacks"], (op.name, "is captured now: take it out of FALLBACK")
        assert warned_1 and "cannot be captured" in warned_1[0], (op.name, warned_1)
        reason = stats["fallbacks"][0][0]
        fragments = FALLBACK[op.name]
        fragments = (fragments,) if isinstance(fragments, str) else fragments
        assert any(f in reason for f in fragments), (op.name, reason)
    else:
        assert not stats["fallbacks"], (op.name, stats["fallbacks"])
        assert not warned_1, (op.name, warned_1)
        assert stats["cached"] == 1, (op.name, stats)


def test_pinned_names_exist():
    names = {op.name for op in ENTRIES}
    assert set(FALLBACK) <= names, sorted(set(FALLBACK) - names)
    assert set(XFAIL) <= names, sorted(set(XFAIL) - names)
