"""Issue 32, swept: no public callable gives a stale result through ``jitgrad.compile``.

The sweep (``asv_bench/stale_sweep.py``, loaded by path: see its docstring for why it lives
outside the package) calls every public callable of ``jitgrad``, ``Tensor``, ``jitgrad.numpy``
(``linalg``, ``fft``), ``jitgrad.scipy``, ``jitgrad.linalg``, ``jitgrad.nn.functional`` and the
op database through ``jitgrad.compile`` on inputs of the same shapes and other values (other
signs, order, counts above 0 / 0.5 / 4, zeros, duplicates, NaN for the NaN-minded names), and
checks that each later compiled call equals the eager call on its input: a host read must be
refused (eager with a warning), never replayed. The callables that read host data are also
checked under ``func.grad``, ``func.vmap`` and in a ``fori_loop`` body.

By default a deterministic subset is compiled: every callable that reads host data
(``Tensor._host``), falls back, has a value-dependent output shape or reads values in its
source, and a fixed quarter of the others (``stale_sweep.default_select``); all callables are
still probed eagerly (that is how the host readers are found). ``JITGRAD_TEST_SWEEP_ALL=1``
compiles every callable and every wrapping. ``python asv_bench/stale_sweep.py`` prints the
counts table.
"""
import importlib.util
import os
import pathlib
import sys
import warnings

import numpy as np
import pytest

import jitgrad

_PATH = pathlib.Path(__file__).resolve().parents[2] / "asv_bench" / "stale_sweep.py"
if not _PATH.exists():  # an installed copy of the tests without the repository's asv_bench
    pytest.skip(f"{_PATH} not found", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("jitgrad_stale_sweep", _PATH)
sweep = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = sweep  # dataclasses resolve their module by name
_spec.loader.exec_module(sweep)

_ALL = os.environ.get("JITGRAD_TEST_SWEEP_ALL") == "1"

# Floors of the covered callables per namespace (about 90% of what the sweep covers now): a
# pattern change or a renamed module that loses coverage shows here.
MIN_COVERED = {"jitgrad": 150, "Tensor": 250, "numpy": 370, "scipy.special": 44,
               "scipy.linalg": 11, "scipy.signal": 5, "scipy.stats": 80, "linalg": 15,
               "nn.functional": 24, "op_db": 740}


@pytest.fixture(scope="module")
def report():
    return sweep.sweep(sweep.targets(), wrappers="all" if _ALL else "host",
                       select=None if _ALL else sweep.default_select)


def test_no_compiled_call_is_stale(report):
    stale = report.stale
    if stale:
        pytest.fail(f"{len(stale)} compiled call(s) differ from eager on their own input (a "
                    f"value baked in at trace time, or a shape mismatch):\n"
                    f"{sweep.findings_text(stale)}\n\n{sweep.table(report)}", pytrace=False)


def test_the_sweep_covers_the_surface(report):
    covered = {ns: row["covered"] for (ns, wrap), row in report.rows.items() if not wrap}
    low = {ns: (covered.get(ns, 0), floor) for ns, floor in MIN_COVERED.items()
           if covered.get(ns, 0) < floor}
    assert not low, f"covered callables under the floor (got, floor): {low}\n{sweep.table(report)}"
    # the host readers are compiled in the default subset too, and checked under the wrappings
    assert report.rows[("numpy", "")]["fell back"] >= 50, sweep.table(report)
    for wrap in ("grad", "vmap", "loop"):
        assert sum(row["covered"] for (ns, w), row in report.rows.items() if w == wrap) >= 40, (
            wrap, sweep.table(report))


def _fake(name, fn, patterns):
    return sweep.Target("fake", name, fn, f"fake.{name}", patterns=patterns)


def test_the_sweep_finds_a_stale_result():
    """The check can fail: a value read behind the tracer's back (``._data`` directly, not
    through ``Tensor._host``) is baked into the program; the sweep calls that STALE, for the
    call and under the wrappings."""
    def baked(x):
        return x * float(x._data[1])  # the read the tracer cannot see

    def honest(x):
        return x * x[1].item()  # refused inside a trace: eager with a warning

    def wrong_error(x):
        if _tracing():
            raise KeyError("only when traced")
        return x * 2.0

    targets = [_fake("baked", baked, [sweep.P("f1")]), _fake("honest", honest, [sweep.P("f1")]),
               _fake("wrong_error", wrong_error, [sweep.P("f1")])]
    report = sweep.sweep(targets, wrappers="all")
    stale = {(f.target.name, f.wrap) for f in report.stale}
    assert ("baked", "") in stale and ("baked", "grad") in stale, sweep.findings_text(
        report.findings)
    assert not any(name == "honest" for name, _ in stale), sweep.findings_text(report.stale)
    assert report.rows[("fake", "")]["fell back"] == 1  # honest
    errors = {(f.target.name, f.wrap) for f in report.errors}
    assert ("wrong_error", "") in errors, sweep.findings_text(report.findings)


def _tracing() -> bool:
    from jitgrad.compile import trace
    return trace.current() is not None


def test_results_are_compared_by_shape_dtype_and_value():
    snap = sweep.snap
    a = snap(jitgrad.tensor([1.0, float("nan"), 3.0]))
    assert sweep.differ(a, snap(jitgrad.tensor([1.0, float("nan"), 3.0])), 1e-12) is None
    assert sweep.differ(a, snap(jitgrad.tensor([1.0, float("nan"), 3.0 + 1e-9])), 1e-12)
    assert "shape" in sweep.differ(a, snap(jitgrad.tensor([1.0, 2.0])), 1e-12)
    assert "dtype" in sweep.differ(a, snap(jitgrad.tensor([1.0, 2.0, 3.0],
                                                          dtype=jitgrad.float32)), 1e-12)
    assert sweep.differ(snap((1, 2)), snap((1, 3)), 1e-12)
    assert sweep.differ(snap(np.iinfo(np.int64)), snap(np.iinfo(np.int64)), 1e-12) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert sweep.differ(snap(2.5), snap(2.5 * (1 + 1e-14)), 1e-12) is None
