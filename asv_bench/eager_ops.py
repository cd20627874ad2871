"""Eager per-op cost: jitgrad vs PyTorch in one process, interleaved (issue 21's table).

    PYTHONPATH=. python asv_bench/eager_ops.py [--repeat 7] [--min-sample 0.05] [--rows mul,add]
                                              [--no-torch]

Each row is one eager call (or one ``backward()``) on small float64 tensors that require grad.
For every row both frameworks are set up and warmed up, then each of ``--repeat`` rounds times
each framework once, the order alternating between rounds; a sample runs the call ``number``
times (chosen so a sample lasts about ``--min-sample`` s) and the table shows the fastest
sample's time per call (the box is shared: the minimum is the least disturbed figure), and the
ratio jitgrad / PyTorch. ``gc.freeze()`` runs after set-up and the collector is off while
timing.

Rows (defined once, in ``benchmarks/eager_rows.py``; the asv benchmarks in
``benchmarks/bench_eager.py`` time the jitgrad side of each):

* ``mul``, ``add``, ``tanh``, ``sum``, ``slice``, ``roll``: ``x * 1.5``, ``x + y``,
  ``tanh(x)``, ``x.sum()``, ``x[1:]``, ``roll(x, 1)`` on (100,) tensors that require grad: the
  forward call, which records a node;
* the same under ``no_grad`` (``nograd_*``);
* ``chain_node``: ``backward()`` of a 1000-node chain ``y = y * 1.0001`` (then ``sum``), per
  node (the graph is built outside the timing, one graph per timed call);
* ``backward``: one ``backward()`` of ``(x * 2.0).sum()`` on (1000,) (graph built outside the
  timing); ``fwd_bwd``: the whole ``(x * 2.0).sum().backward()``;
* ``W1``, ``W6``, ``W7``: the workloads of ``benchmarks/workloads.py``, eager forward+backward.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))   # this checkout's jitgrad first
sys.path.insert(0, os.path.join(HERE, "benchmarks"))

import eager_rows  # noqa: E402


def _workload_rows(backend):
    import workloads as W

    rows = {}
    for key in ("W1", "W6", "W7"):
        wl = W.WORKLOADS[key]
        rows[key] = (f"{key} eager: {wl.title}",
                     (lambda wl=wl: backend.prepare(wl, wl.size, "float64")))
    return rows


def _sample(call, number):
    t0 = time.perf_counter()
    for _ in range(number):
        call()
    return (time.perf_counter() - t0) / number


def _sample_prebuilt(build, call, per, number):
    graphs = [build() for _ in range(number)]
    t0 = time.perf_counter()
    for g in graphs:
        call(g)
    elapsed = time.perf_counter() - t0
    del graphs
    return elapsed / number / per


class _Timer:
    """One framework's timed call for one row: a plain callable, or a pre-built graph."""

    def __init__(self, spec, min_sample):
        if isinstance(spec, tuple) and spec[0] == "prebuilt":
            self.build, self.call, self.per = spec[1]()
            self.prebuilt = True
            for _ in range(3):
                self.call(self.build())
            one = _sample_prebuilt(self.build, self.call, self.per, 3) * self.per
        else:
            self.call = spec()
            self.prebuilt = False
            for _ in range(3):
                self.call()
            one = _sample(self.call, 3)
        self.number = max(1, min(20000, int(min_sample / max(one, 1e-7))))
        if self.prebuilt:
            self.number = min(self.number, 200)

    def sample(self):
        if self.prebuilt:
            return _sample_prebuilt(self.build, self.call, self.per, self.number)
        return _sample(self.call, self.number)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--min-sample", type=float, default=0.05)
    parser.add_argument("--rows", default=None, help="comma-separated row keys (default: all)")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args(argv)

    import jitgrad

    import workloads as W

    libs = {"jitgrad": jitgrad}
    backends = {"jitgrad": W.JitgradBackend()}
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            print("torch not installed: jitgrad only")
        else:
            libs["torch"] = torch
            backends["torch"] = W.TorchBackend()
    specs = {}
    for name, lib in libs.items():
        rows = eager_rows.op_rows(lib)
        rows.update(_workload_rows(backends[name]))
        specs[name] = rows
    keys = list(specs["jitgrad"])
    if args.rows:
        wanted = args.rows.split(",")
        keys = [k for k in keys if k in wanted]
    names = list(libs)
    print(f"jitgrad {jitgrad.__version__} from {os.path.dirname(jitgrad.__file__)}"
          + (f"; torch {libs['torch'].__version__}" if "torch" in libs else ""))
    print(f"load average {os.getloadavg()[0]:.2f}; best of {args.repeat} samples")
    header = f"| {'row':44} | " + " | ".join(f"{n:>10}" for n in names)
    if len(names) == 2:
        header += " |  ratio |"
    print(header)
    print("|" + "-" * 46 + "|" + "|".join("-" * 12 for _ in names) + ("|--------|" if len(names) == 2
                                                                      else "|"))
    results = {}
    for key in keys:
        label = specs["jitgrad"][key][0]
        timers = {n: _Timer(specs[n][key][1], args.min_sample) for n in names}
        gc.collect()
        gc.freeze()
        gc.disable()
        best = {n: float("inf") for n in names}
        try:
            for r in range(args.repeat):
                order = names if r % 2 == 0 else names[::-1]
                for n in order:
                    best[n] = min(best[n], timers[n].sample())
        finally:
            gc.enable()
            gc.unfreeze()
        results[key] = best
        line = f"| {label:44} | " + " | ".join(f"{best[n] * 1e6:8.2f}us" for n in names)
        if len(names) == 2:
            line += f" | {best[names[0]] / best[names[1]]:5.2f}x |"
        print(line, flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return results


if __name__ == "__main__":
    main()
