"""Eager workloads with the cyclic garbage collector on and off: jitgrad vs PyTorch, one process.

    PYTHONPATH=. python asv_bench/eager_gc.py [--workloads W6,W7] [--calls 30] [--rounds 4]

``eager_ops.py`` times with the collector off (and keeps the fastest sample), which leaves out
what a graph of Python objects costs the collector: an eager jitgrad op leaves several GC-tracked
objects in the graph, and full collections, which also walk every object of an imported Numba,
come every few calls of a large graph. PyTorch's graph is C++ objects the collector does not see.
This script times the *mean* per call over ``--calls`` calls (a full collection lands in some
calls, not in every sample) with the collector on, as Python runs by default, and off; the
rounds alternate framework and mode, and the table shows the median round of each.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))   # this checkout's jitgrad first
sys.path.insert(0, os.path.join(HERE, "benchmarks"))

import workloads  # noqa: E402


def _mean_call(call, calls: int, collector: bool) -> float:
    """Seconds per call over ``calls`` calls, with the cyclic collector on or off."""
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            call()
        return (time.perf_counter() - start) / calls
    finally:
        gc.enable()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", default="W6,W7")
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    backends = {"jitgrad": workloads.JitgradBackend(), "torch": workloads.TorchBackend()}
    print(f"load average {os.getloadavg()[0]:.2f}; mean per call over {args.calls} calls, "
          f"median of {args.rounds} rounds")
    print("| workload | collector | jitgrad | torch | ratio |")
    print("|---|---|---|---|---|")
    for key in args.workloads.split(","):
        wl = workloads.WORKLOADS[key]
        calls = {name: b.prepare(wl, wl.size, "float64") for name, b in backends.items()}
        for call in calls.values():
            for _ in range(3):
                call()
        times = {(name, on): [] for name in calls for on in (True, False)}
        for r in range(args.rounds):
            for on in (True, False):
                order = list(calls) if r % 2 == 0 else list(calls)[::-1]
                for name in order:
                    times[(name, on)].append(_mean_call(calls[name], args.calls, on))
        for on in (True, False):
            ours = statistics.median(times[("jitgrad", on)])
            theirs = statistics.median(times[("torch", on)])
            print(f"| {key} | {'on' if on else 'off'} | {ours * 1e3:.2f} ms | "
                  f"{theirs * 1e3:.2f} ms | {ours / theirs:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
