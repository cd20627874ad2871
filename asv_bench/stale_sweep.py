"""Issue 32's sweep: no public callable gives a stale result through ``jitgrad.compile``.

    PYTHONPATH=. python asv_bench/stale_sweep.py [--subset] [--wrappers all|host|none]
                                                 [--only numpy,scipy.special] [--list]

``jitgrad.compile`` traces a function once per input signature and replays the recording on
later calls. A function that reads tensor values in Python (``.item()``, ``bool()``, a mask's
True count, ``np.unique``...) must not replay the first call's value: ``Tensor._host``'s hook
refuses such reads inside a trace (the function runs eagerly, with a warning) and
value-dependent shapes are refused. This sweep checks that over the whole public surface.

What is called, and with which arguments, is ``sweep_cases.py`` (next to this file): the
callables of the public namespaces and of the op database, and the argument patterns, each in
variants of the same shapes and dtypes and other values. This file runs and compares them:

* the check: ``cf = jitgrad.compile(call)``; ``cf(variant 0)`` traces, then for every later
  variant ``cf(variant k)`` must equal the eager call on it: tensors of the same shape and
  dtype and values equal to 1e-12 relative (NaN where eager has NaN), other results equal
  (``==`` / ``np.array_equal``), an error of eager's type where eager raised. A result that
  differs is STALE (the failure this sweep exists for); a compiled call that raises where eager
  does not (or raises another type), or returns where eager raises, is an error mismatch;
* the same for three wrappings of each callable that reads host data (its eager call went
  through ``Tensor._host``, its compiled call fell back, its output shape depends on the
  values, or its source reads ``.item()`` / ``tolist`` / ``_host``; every callable with
  ``--wrappers all``): ``jitgrad.func.grad`` of its first float output's sum, ``func.vmap``
  over a batch of two variants of its first argument, and a ``jitgrad.fori_loop`` of two steps
  whose body calls it (on the carry where the result has the carry's shape);
* the report: counted per namespace, callables tried, covered (eager ran on a pattern),
  captured (compiled with no fallback), fell back (the capture stopped: eager with a warning),
  STALE, error mismatch, and a reproduction line per finding. Callables that need exotic
  non-tensor arguments (no pattern fits), and the skipped ones (random, I/O, global state),
  count as not covered.

The logic lives here and not in ``jitgrad/testing`` on purpose: the kernel cache directory is
keyed by a hash of every ``.py`` file of the package (``_config.package_digest``), so a file
added there would start a cold kernel cache. ``tests/compile/test_stale_sweep.py`` loads this
file by path and fails on any STALE result; by default it runs a deterministic subset (every
callable that reads host data or whose output shape depends on the values, and a fixed sample
of the others: ``default_select``); ``JITGRAD_TEST_SWEEP_ALL=1`` runs everything.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import signal
import sys
import time
import types
import warnings
import zlib

import numpy as np

import jitgrad

# the cases are this file's sibling; it is run as a script and loaded by path (the tests), so
# its directory is not always on sys.path
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from sweep_cases import (  # noqa: E402,F401 - the names the tests and callers use, too
    ARRAYS, CUSTOM, DATA_SOURCE, GENERIC, N_PLAIN, NAN_MINDED, SKIP_NAMES, TENSOR_DUNDERS,
    UNDEFINED, A, P, Pattern, Target, base_name, make_caller, mutates, patterns_of,
    reads_in_source, source_matches, targets,
)


# --- running and comparing ---------------------------------------------------------------------
class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds):
    """Interrupt a (Python-level) call that runs away: a SIGALRM where it can be used."""
    usable = hasattr(signal, "SIGALRM") and _main_thread()
    if not usable:
        yield
        return

    def ring(signum, frame):
        raise _Timeout(f"over {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


@dataclasses.dataclass
class Snap:
    """A result, copied out: ``kind`` is "tensor", "array", "seq", "dict", "value", "error"."""
    kind: str
    value: object = None
    shape: tuple = ()
    dtype: str = ""
    items: list | None = None


def snap(out) -> Snap:
    if isinstance(out, jitgrad.Tensor):
        t = out.detach()
        if t.is_cuda:
            t = t.cpu()
        return Snap("tensor", np.array(t.numpy(), copy=True), tuple(out.shape),
                    str(out.dtype))
    if isinstance(out, np.ndarray):
        return Snap("array", out.copy(), out.shape, str(out.dtype))
    if isinstance(out, (tuple, list)):
        return Snap("seq", type(out).__name__, items=[snap(o) for o in out])
    if isinstance(out, dict):
        return Snap("dict", sorted(map(str, out)), items=[snap(out[k]) for k in sorted(
            out, key=str)])
    if isinstance(out, types.GeneratorType) or hasattr(out, "__next__"):
        return Snap("seq", "iterator", items=[snap(o) for o in out])
    if hasattr(out, "_fields") or dataclasses.is_dataclass(out):
        return Snap("value", repr(out))
    if hasattr(out, "x") and hasattr(out, "fun"):  # an OptimizeResult
        return Snap("seq", "OptimizeResult", items=[snap(out.x), snap(out.fun)])
    return Snap("value", out)


def _close(g, w, rtol, atol) -> bool:
    if g.shape != w.shape:
        return False
    if g.dtype.kind in "fc" or w.dtype.kind in "fc":
        g = g.astype(np.complex128 if "c" in (g.dtype.kind, w.dtype.kind) else np.float64)
        w = w.astype(g.dtype)
        both_nan = np.isnan(g) & np.isnan(w)
        same = (g == w) | both_nan
        with np.errstate(invalid="ignore", over="ignore"):
            near = np.abs(g - w) <= atol + rtol * np.abs(w)
        return bool(np.all(same | near))
    return bool(np.array_equal(g, w))


def differ(got: Snap, want: Snap, rtol: float, values: bool = True) -> str | None:
    """Why ``got`` is not ``want`` (None when equal; ``values=False``: shapes and dtypes)."""
    atol = rtol / 10
    if got.kind != want.kind:
        return f"{got.kind} where eager gives {want.kind}"
    if got.kind in ("tensor", "array"):
        if got.shape != want.shape:
            return f"shape {got.shape} where eager gives {want.shape}"
        if got.dtype != want.dtype:
            return f"dtype {got.dtype} where eager gives {want.dtype}"
        if values and not _close(got.value, want.value, rtol, atol):
            return "values differ"
        return None
    if got.kind in ("seq", "dict"):
        if got.value != want.value or len(got.items) != len(want.items):
            return (f"{got.value} of {len(got.items)} where eager gives {want.value} of "
                    f"{len(want.items)}")
        for k, (g, w) in enumerate(zip(got.items, want.items)):
            why = differ(g, w, rtol, values)
            if why:
                return f"[{k}]: {why}"
        return None
    g, w = got.value, want.value
    if isinstance(w, float) and isinstance(g, (float, int)):
        if (math.isnan(w) and math.isnan(g)) or abs(g - w) <= atol + rtol * abs(w):
            return None
        return f"{g!r} where eager gives {w!r}"
    try:
        same = g == w
        same = bool(np.all(same)) if not isinstance(same, bool) else same
    except Exception:  # noqa: BLE001
        same = False
    if not same and type(g) is type(w) and type(g).__eq__ is object.__eq__:
        same = repr(g) == repr(w)  # an info object compared by identity (np.iinfo)
    return None if same else f"{g!r} where eager gives {w!r}"[:200]


@dataclasses.dataclass
class Outcome:
    """What one check of one callable (one wrapping) found."""
    covered: bool = False
    captured: bool = False
    fell_back: bool = False
    stale: list = dataclasses.field(default_factory=list)  # (variant, why)
    error_mismatch: list = dataclasses.field(default_factory=list)  # (variant, why)
    host_read: bool = False
    shape_dependent: bool = False
    reason: str = ""  # the fallback reason, or why not covered


def _call(fn, args, kwargs, reads=None):
    """``(snap of the result, None)`` or ``(None, the error)``; ``reads``: a context that
    counts the host reads of the call itself (the copy-out reads values too)."""
    try:
        with _deadline(30):
            with reads if reads is not None else contextlib.nullcontext():
                out = fn(*args, **kwargs)
            return snap(out), None
    except _Timeout:
        raise
    except BaseException as exc:  # noqa: BLE001 - eager's error is a result to compare
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, exc


class _HostReads:
    """A context counting the ``Tensor._host`` reads in it (``reads``), where jitgrad has
    the hook (``upper.set_tracing_hooks``); outside a trace only."""

    def __init__(self):
        self.reads = 0
        self._setter = None

    def __enter__(self):
        try:
            from jitgrad.ops.core import upper
        except ImportError:
            return self
        setter = getattr(upper, "set_tracing_hooks", None)
        if (setter is not None and upper.host_read_hook is None and upper.creation_hook is None
                and getattr(upper, "random_hook", None) is None):
            self._setter = setter
            setter(None, self._read, None)  # (creation, host_read, random_draw)
        return self

    def _read(self, t, what):
        self.reads += 1

    def __exit__(self, *exc):
        if self._setter is not None:
            self._setter(None, None, None)
            self._setter = None
        return False


def _eager(call, make, n, probe=False):
    """``call`` eager on variants 0 and 1 (both must succeed: covered) and the later ones:
    ``(outcome, {variant: (snap, error)})``; ``probe``: count its host reads."""
    res = Outcome()
    eager = {}
    args, kwargs = make(0)
    counter = _HostReads() if probe else None
    eager[0] = _call(call, args, kwargs, counter)
    res.host_read = bool(counter and counter.reads)
    if eager[0][1] is not None:
        res.reason = f"eager: {type(eager[0][1]).__name__}: {eager[0][1]}"[:160]
        return res, eager
    args, kwargs = make(1)
    eager[1] = _call(call, args, kwargs)
    if eager[1][1] is not None:
        res.reason = f"eager on variant 1: {type(eager[1][1]).__name__}"
        return res, eager
    res.covered = True
    for k in range(2, n):
        args, kwargs = make(k)
        eager[k] = _call(call, args, kwargs)
    shapes = {repr(_shapes(e[0])) for e in eager.values() if e[0] is not None}
    res.shape_dependent = len(shapes) > 1
    return res, eager


def _compiled(call, make, n, res, eager, rtol=1e-12, undefined=False) -> Outcome:
    """``jitgrad.compile(call)`` on variant 0 (the trace), then 1..n-1, against eager
    (``undefined``: the values are uninitialised memory; shapes and dtypes only)."""
    cf = jitgrad.compile(call)
    for k in range(n):
        args, kwargs = make(k)
        got, exc = _call(cf, args, kwargs)
        want, wexc = eager[k]
        if wexc is not None or exc is not None:
            if wexc is None:
                res.error_mismatch.append((k, f"compiled raised {type(exc).__name__}: "
                                              f"{str(exc)[:120]}"))
            elif exc is None:
                res.error_mismatch.append((k, f"eager raised {type(wexc).__name__}: "
                                              f"{str(wexc)[:80]}; compiled returned"))
            elif not (isinstance(exc, type(wexc)) or isinstance(wexc, type(exc))):
                res.error_mismatch.append((k, f"compiled raised {type(exc).__name__} where "
                                              f"eager raised {type(wexc).__name__}"))
            continue
        why = differ(got, want, rtol, values=not undefined)
        if why is not None:  # at variant 0 (the trace run itself): not staleness, still wrong
            res.stale.append((k, why if k else "trace run: " + why))
    stats = cf.stats()
    res.fell_back = bool(stats["fallbacks"]) or bool(stats["gave_up"])
    res.captured = not res.fell_back and stats["cached"] > 0
    if stats["fallbacks"]:
        res.reason = stats["fallbacks"][0][0][:160]
    return res


def _check(call, make, n, rtol=1e-12, undefined=False) -> Outcome:
    res, eager = _eager(call, make, n)
    return _compiled(call, make, n, res, eager, rtol, undefined) if res.covered else res


def _shapes(s: Snap):
    if s is None:
        return None
    if s.kind in ("tensor", "array"):
        return s.shape
    if s.kind in ("seq", "dict"):
        return [_shapes(i) for i in s.items]
    return s.kind


def _first_tensor(out):
    if isinstance(out, jitgrad.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for o in out:
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def _float_sum(out):
    t = _first_tensor(out)
    if t is None or not t.dtype.is_floating_point or t.dtype.is_complex:
        raise TypeError("no float tensor output")
    return t.sum()


def _first_tensor_snap(s):
    if s is None:
        return None
    if s.kind == "tensor":
        return s
    if s.kind == "seq":
        for item in s.items:
            t = _first_tensor_snap(item)
            if t is not None:
                return t
    return None


def _wrapped(kind, call, make, out):
    """``(call, make)`` of one wrapping of ``call``; ``out``: the snap of its eager result on
    variant 0 (the loop's carry is chosen from it, outside the traced function)."""
    F = jitgrad.func
    if kind == "grad":
        return F.grad(lambda *a, **kw: _float_sum(call(*a, **kw))), make
    if kind == "vmap":
        def vmake(k, n=N_PLAIN):
            a0, kw0 = make(k)
            a1, _ = make((k + 1) % n)
            return (jitgrad.stack([a0[0], a1[0]]),) + tuple(a0[1:]), kw0

        def vcall(*a, **kw):
            rest = a[1:]
            return F.vmap(lambda x: call(x, *rest, **kw))(a[0])
        return vcall, vmake
    if kind == "loop":
        t = _first_tensor_snap(out)
        x = make(0)[0][0]
        if t is None or "complex" in t.dtype or "bool" in t.dtype:
            return None, None
        if t.shape == tuple(x.shape) and t.dtype == str(x.dtype):
            def lcall(*a, **kw):  # the carry goes through the callable: fn(fn(x))
                return jitgrad.fori_loop(2, lambda c: _first_tensor(call(c, *a[1:], **kw)), a[0])
        else:
            shape, dtype = t.shape, getattr(jitgrad, t.dtype.replace("jitgrad.", ""))

            def lcall(*a, **kw):  # the carry accumulates fn(*args), read in the body
                return jitgrad.fori_loop(2, lambda c: c + _first_tensor(call(*a, **kw)),
                                         jitgrad.zeros(shape, dtype=dtype))
        return lcall, make
    raise ValueError(kind)


# --- the sweep ---------------------------------------------------------------------------------
@dataclasses.dataclass
class Finding:
    target: Target
    wrap: str  # "" (the call itself), "grad", "vmap", "loop"
    kind: str  # "stale" or "error"
    variant: int
    why: str
    repro: str


@dataclasses.dataclass
class Report:
    rows: dict  # (ns, wrap) -> counts dict
    findings: list
    uncovered: dict  # target key -> reason
    seconds: float
    selected: int = 0

    @property
    def stale(self):
        return [f for f in self.findings if f.kind == "stale"]

    @property
    def errors(self):
        return [f for f in self.findings if f.kind == "error"]


COLUMNS = ("tried", "covered", "compiled", "captured", "fell back", "STALE", "error mismatch")
_HEADS = ("tried", "covered", "compiled", "captured", "fell back", "STALE", "err-mism")


def _counts():
    return dict.fromkeys(COLUMNS, 0)


def _repro(target: Target, pattern, k: int, wrap: str) -> str:
    head = target.call
    if target.variants is not None:
        a0, ak = target.variant_text[0], target.variant_text[k]
        body = f"{head}(*to_tensors(Sample(args)))"
        return (f"[{wrap or 'call'}] op_db {target.name!r}: variant 0 args ({a0}) then "
                f"variant {k} ({ak}); {body}")[:600]
    a0, ak = pattern.show(0), pattern.show(k)
    fn = f"lambda x, *a: x.{target.name}(*a)" if target.method else f"lambda *a: {head}(*a)"
    if wrap == "grad":
        fn = f"jitgrad.func.grad(lambda *a: ({fn})(*a).sum())"
    elif wrap == "vmap":
        fn = f"func.vmap of ({fn}) over the first argument, a batch of variants {k}, {k + 1}"
    elif wrap == "loop":
        fn = f"lambda *a: jitgrad.fori_loop(2, <body calling ({fn})>, carry)"
    if k == 0:
        return f"cf = jitgrad.compile({fn}); cf({a0})  # != eager (the trace run)"
    return f"cf = jitgrad.compile({fn}); cf({a0}); cf({ak})  # != eager"


def sweep(target_list, wrappers="host", select=None, progress=None) -> Report:
    """Run the checks; ``select(target, outcome)``: whether a covered callable (its eager
    probe in ``outcome``) is compiled; ``wrappers``: "all", "host" (the host readers) or
    "none"."""
    start = time.perf_counter()
    rows, findings, uncovered = {}, [], {}
    selected = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for target in target_list:
            if progress:
                progress(target)
            row = rows.setdefault((target.ns, ""), _counts())
            row["tried"] += 1
            if target.skip:
                uncovered[target.key] = "skipped: " + target.skip
                continue
            outcome, eager, pattern, make, n, call = _first_covered(target)
            if outcome is None:
                uncovered[target.key] = "no pattern"
                continue
            row["covered"] += 1
            if select is not None and not select(target, outcome):
                continue
            selected += 1
            try:
                outcome = _compiled(call, make, n, outcome, eager,
                                    undefined=base_name(target.name) in UNDEFINED)
            except _Timeout:
                outcome.error_mismatch.append((0, "the compiled calls ran over the deadline"))
            _count(row, outcome, target, pattern, "", findings)
            host = (outcome.host_read or outcome.fell_back or outcome.shape_dependent
                    or reads_in_source(target))
            if wrappers == "none" or (wrappers == "host" and not host):
                continue
            first = make(0)[0]
            if not first or not isinstance(first[0], jitgrad.Tensor):
                continue
            for kind in ("grad", "vmap", "loop"):
                if kind == "grad" and not first[0].dtype.is_floating_point:
                    continue
                wrow = rows.setdefault((target.ns, kind), _counts())
                wrow["tried"] += 1
                wcall, wmake = _wrapped(kind, call, make, eager[0][0])
                if wcall is None:
                    continue
                wn = min(n, N_PLAIN) if kind == "vmap" else n
                try:
                    res = _check(wcall, wmake, wn, rtol=1e-9,
                                 undefined=base_name(target.name) in UNDEFINED)
                except _Timeout:
                    continue
                if not res.covered:
                    continue
                wrow["covered"] += 1
                _count(wrow, res, target, pattern, kind, findings)
    return Report(rows, findings, uncovered, time.perf_counter() - start, selected)


def _first_covered(target):
    """The first pattern on which the eager call succeeds on variants 0 and 1, probed for
    host reads: ``(outcome, eager, pattern, make, n, call)`` (outcome None: none)."""
    if target.variants is not None:
        pats = [None]
    else:
        pats = patterns_of(target)
    nan_minded = bool(NAN_MINDED.search(base_name(target.name)))
    for pattern in pats:
        if pattern is None:
            n = len(target.variants)

            def make(k, _v=target.variants):
                return _v[k]()
        else:
            n = N_PLAIN + (1 if nan_minded else 0)
            make = pattern.args
        try:
            call = make_caller(target, mutates(target))
            outcome = _probe(call, make)
            if outcome is None:
                continue
            if outcome == "none":  # the call returned None: compare the mutated arguments
                call = make_caller(target, True)
            outcome, eager = _eager(call, make, n, probe=True)
        except _Timeout:
            outcome = None
        if outcome is not None and outcome.covered:
            return outcome, eager, pattern, make, n, call
    return None, None, None, None, 0, None


def _probe(call, make):
    """A cheap eager try on variant 0: None when it raises, "none" when it returns None."""
    args, kwargs = make(0)
    with _deadline(30):
        try:
            out = call(*args, **kwargs)
        except _Timeout:
            raise
        except Exception:  # noqa: BLE001
            return None
    return "none" if out is None else "ok"


def _count(row, outcome, target, pattern, wrap, findings):
    row["compiled"] += 1
    if outcome.captured:
        row["captured"] += 1
    if outcome.fell_back:
        row["fell back"] += 1
    if outcome.stale:
        row["STALE"] += 1
        k, why = outcome.stale[0]
        findings.append(Finding(target, wrap, "stale", k, why, _repro(target, pattern, k, wrap)))
    if outcome.error_mismatch:
        row["error mismatch"] += 1
        k, why = outcome.error_mismatch[0]
        findings.append(Finding(target, wrap, "error", k, why, _repro(target, pattern, k, wrap)))


def table(report: Report) -> str:
    nss = list(dict.fromkeys(ns for ns, _ in report.rows))
    lines = []
    head = f"{'namespace':<16}" + "".join(f"{c:>10}" for c in _HEADS)
    lines.append(head)
    lines.append("-" * len(head))
    total = {w: _counts() for w in ("", "grad", "vmap", "loop")}
    for wrap in ("", "grad", "vmap", "loop"):
        if wrap and not any(w == wrap for _, w in report.rows):
            continue
        if wrap:
            lines.append("")
            lines.append(f"wrapped in {wrap}:")
        for ns in nss:
            row = report.rows.get((ns, wrap))
            if row is None:
                continue
            for c in COLUMNS:
                total[wrap][c] += row[c]
            lines.append(f"{ns:<16}" + "".join(f"{row[c]:>10}" for c in COLUMNS))
        lines.append(f"{'total':<16}" + "".join(f"{total[wrap][c]:>10}" for c in COLUMNS))
    return "\n".join(lines)


def findings_text(findings, limit=None) -> str:
    out = []
    for f in findings[:limit]:
        wrap = f" [{f.wrap}]" if f.wrap else ""
        out.append(f"{f.kind.upper()} {f.target.key}{wrap} (variant {f.variant}): {f.why}\n"
                   f"    {f.repro}")
    return "\n".join(out)


# --- the default subset ------------------------------------------------------------------------
SAMPLE_STRIDE = 4  # of the callables that read no host data: the ones with crc32(key) % 4 == 0


def default_select(target: Target, outcome: Outcome) -> bool:
    """Every callable that reads host data (``Tensor._host``), whose output shape depends on
    the values, or whose own source reads values or hands a tensor's array to a kernel
    (``._data``: an array an op takes as an attribute is a constant of the trace, see
    ``F.batch_norm``'s running stats); a fixed quarter of the others."""
    if outcome.host_read or outcome.shape_dependent or outcome.fell_back:
        return True
    if reads_in_source(target) or source_matches(target, DATA_SOURCE):
        return True
    return zlib.crc32(target.key.encode()) % SAMPLE_STRIDE == 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subset", action="store_true",
                        help="the test's default subset (host readers and a fixed sample)")
    parser.add_argument("--wrappers", default="host", choices=("all", "host", "none"))
    parser.add_argument("--only", default="", help="comma-separated namespaces")
    parser.add_argument("--list", action="store_true", help="also list the uncovered callables")
    parser.add_argument("--progress", action="store_true")
    ns = parser.parse_args(argv)
    print(f"jitgrad from {jitgrad.__file__}", flush=True)
    only = [s for s in ns.only.split(",") if s]
    tl = targets(only or None)

    clock = [time.perf_counter(), None]

    def progress(t):  # the time of the previous callable
        now = time.perf_counter()
        if clock[1] is not None:
            print(f"  {now - clock[0]:6.2f}s  {clock[1]}", file=sys.stderr, flush=True)
        clock[:] = [now, t.key]
    report = sweep(tl, wrappers=ns.wrappers, select=default_select if ns.subset else None,
                   progress=progress if ns.progress else None)
    print(table(report))
    print(f"\n{report.selected} callables compiled; {report.seconds:.0f} s")
    if report.stale:
        print(f"\nSTALE ({len(report.stale)}):")
        print(findings_text(report.stale))
    if report.errors:
        print(f"\nerror mismatches ({len(report.errors)}):")
        print(findings_text(report.errors))
    if ns.list:
        print("\nnot covered:")
        for key, why in report.uncovered.items():
            print(f"  {key}: {why}")
    return 1 if report.stale else 0


if __name__ == "__main__":
    sys.exit(main())
