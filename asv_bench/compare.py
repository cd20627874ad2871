"""Side-by-side timings: jitgrad vs NumPy (forward only) vs PyTorch CPU, on the same workloads.

    python asv_bench/compare.py [--torch-python /work/torchvenv/bin/python] [--quick] [--json out.json]

Workloads (float64; every framework runs the same source, from WORKLOADS below):

  W0  the seed example y = ((x * 3) + 4) ** 2 on a 0-d tensor, forward + backward, in-process
  W2  sum(tanh(sin(x) * exp(-x*x) + 0.5*x)) on 1e6 elements
  W7  a 1000-op chain on a (100,) vector (x * 1.0001, x + 0.001, tanh(x), repeated), then sum;
      reported per op
  seed cold/warm: ``python -c "<seed example>"`` in a fresh interpreter, first with an empty
      JITGRAD_CACHE_DIR (cold: every kernel compiles), then again with the same dir (warm)

PyTorch runs in a child process started with ``--torch-python`` when given (it prints JSON), else
in this process if ``import torch`` works here, else it is skipped. PyTorch's thread settings are left
at their defaults (never call torch.set_num_threads twice in one process: afterwards its backward over
small ops ran 100-500x slower). Times are medians (and best) over repeats after warm-up runs; the
garbage collector is frozen after set-up. Machine load is printed with the results: on a shared box
numbers move a lot, compare ratios from the same run.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Shared by every framework (exec'd here, and prepended to the PyTorch child's script). ``lib`` is
# the framework's module (jitgrad, numpy or torch); x is that framework's array.
WORKLOADS = r'''
import gc, statistics, time

W7_OPS = 1000


def w0(x):
    return ((x * 3) + 4) ** 2


def w2(lib, x):
    return lib.tanh(lib.sin(x) * lib.exp(-x * x) + 0.5 * x).sum()


def w7(lib, x, n_ops=W7_OPS):
    for i in range(n_ops):
        k = i % 3
        if k == 0:
            x = x * 1.0001
        elif k == 1:
            x = x + 0.001
        else:
            x = lib.tanh(x)
    return x.sum()


def clear_grad(x):
    try:
        x.grad = None
    except Exception:
        pass


def measure(fn, repeats, number=1, warmup=2):
    """Median and best seconds per call of fn(), after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    gc.collect()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return {"median": statistics.median(times), "best": min(times), "repeats": repeats,
            "number": number}
'''

SEED_CODE = ("import jitgrad; x=jitgrad.tensor(2.0, requires_grad=True); y=(x*3+4)**2; "
             "y.backward(); print(x.grad.item())")
TORCH_SEED_CODE = ("import torch; x=torch.tensor(2.0, requires_grad=True); y=(x*3+4)**2; "
                   "y.backward(); print(x.grad.item())")

# Runs PyTorch on the workloads; used in-process (exec) or as the child's script.
TORCH_RUN = r'''
def run_torch(cfg):
    import numpy as np
    import torch

    out = {"version": torch.__version__, "threads": torch.get_num_threads()}
    rng = np.random.default_rng(0)
    x0 = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    x2 = torch.tensor(rng.standard_normal(cfg["n2"]), requires_grad=True)
    x7 = torch.tensor(rng.standard_normal(100), requires_grad=True)

    def f0():
        clear_grad(x0)
        w0(x0).backward()

    def f2():
        clear_grad(x2)
        w2(torch, x2).backward()

    def f2_fwd():
        with torch.no_grad():
            w2(torch, x2)

    def f7():
        clear_grad(x7)
        w7(torch, x7).backward()

    def f7_fwd():
        w7(torch, x7)

    gc.collect()
    gc.freeze()
    r = cfg["repeats"]
    out["w0"] = measure(f0, r, number=cfg["w0_number"], warmup=3)
    out["w2"] = measure(f2, r)
    out["w2_fwd"] = measure(f2_fwd, r)
    out["w7"] = measure(f7, r, warmup=3)
    out["w7_fwd"] = measure(f7_fwd, r, warmup=3)
    return out
'''

TORCH_MAIN = r'''
if __name__ == "__main__":
    import json, sys
    print(json.dumps(run_torch(json.loads(sys.argv[1]))))
'''


def _run_jitgrad(cfg):
    sys.path.insert(0, REPO)  # prefer this checkout over an installed copy
    import numpy as np

    import jitgrad

    ns: dict = {}
    exec(WORKLOADS, ns)
    w0, w2, w7, measure, clear_grad = (ns[k] for k in ("w0", "w2", "w7", "measure", "clear_grad"))

    rng = np.random.default_rng(0)
    a2 = rng.standard_normal(cfg["n2"])
    a7 = rng.standard_normal(100)
    x0 = jitgrad.tensor(2.0, requires_grad=True)
    x2 = jitgrad.tensor(a2, requires_grad=True)
    x7 = jitgrad.tensor(a7, requires_grad=True)

    def f0():
        clear_grad(x0)
        w0(x0).backward()

    def f2():
        clear_grad(x2)
        w2(jitgrad, x2).backward()

    def f2_fwd():
        with jitgrad.no_grad():
            w2(jitgrad, x2)

    def f7():
        clear_grad(x7)
        w7(jitgrad, x7).backward()

    def f7_fwd():
        w7(jitgrad, x7)

    t0 = time.perf_counter()
    for f in (f0, f2, f2_fwd, f7, f7_fwd):  # compile (or load) every kernel before timing
        f()
    first_calls = time.perf_counter() - t0

    gc.collect()
    gc.freeze()
    r = cfg["repeats"]
    jg = {"version": getattr(jitgrad, "__version__", "?"), "first_calls_s": first_calls}
    jg["w0"] = measure(f0, r, number=cfg["w0_number"], warmup=3)
    jg["w2"] = measure(f2, r)
    jg["w2_fwd"] = measure(f2_fwd, r)
    jg["w7"] = measure(f7, r, warmup=3)
    jg["w7_fwd"] = measure(f7_fwd, r, warmup=3)

    npd = {"version": np.__version__}
    npd["w0_fwd"] = measure(lambda: w0(np.float64(2.0)), r, number=cfg["w0_number"], warmup=3)
    npd["w2_fwd"] = measure(lambda: w2(np, a2), r)
    npd["w7_fwd"] = measure(lambda: w7(np, a7), r, warmup=3)
    try:
        import numba
        import llvmlite
        from jitgrad import _config

        jg["numba"], jg["llvmlite"] = numba.__version__, llvmlite.__version__
        jg["threading_layer"] = _config.threading_layer()
        jg["threads"] = _config.NUM_THREADS
    except Exception as err:  # informational only
        jg["config_error"] = repr(err)
    return jg, npd


def _run_torch(cfg, torch_python):
    if torch_python:
        script = WORKLOADS + TORCH_RUN + TORCH_MAIN
        proc = subprocess.run([torch_python, "-c", script, json.dumps(cfg)], capture_output=True,
                              text=True, timeout=1800)
        if proc.returncode != 0:
            return {"error": f"{torch_python} failed:\n{proc.stderr[-2000:]}"}
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        out["where"] = f"subprocess ({torch_python})"
        return out
    try:
        import torch  # noqa: F401
    except ImportError:
        return {"error": "torch not importable here and no --torch-python given"}
    ns: dict = {}
    exec(WORKLOADS + TORCH_RUN, ns)
    out = ns["run_torch"](cfg)
    out["where"] = "in-process"
    return out


def _time_subprocess(python, code, env, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        proc = subprocess.run([python, "-c", code], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=1800)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise RuntimeError(f"{code!r} failed:\n{proc.stderr[-2000:]}")
    times.sort()
    return {"median": times[len(times) // 2], "best": times[0], "repeats": repeats, "number": 1}


def _run_seed_processes(cfg, torch_python):
    out = {}
    env = dict(os.environ)
    root = tempfile.mkdtemp(prefix="jitgrad-compare-")
    try:
        cold = []
        for i in range(cfg["cold_repeats"]):  # a fresh, empty cache dir for every cold run
            env["JITGRAD_CACHE_DIR"] = os.path.join(root, f"cold{i}")
            cold.append(_time_subprocess(sys.executable, SEED_CODE, env, 1)["best"])
        cold.sort()
        out["seed_cold"] = {"median": cold[len(cold) // 2], "best": cold[0],
                            "repeats": len(cold), "number": 1}
        # warm: reuse the last cold run's cache dir
        out["seed_warm"] = _time_subprocess(sys.executable, SEED_CODE, env, cfg["proc_repeats"])
        out["import_warm"] = _time_subprocess(sys.executable, "import jitgrad", env,
                                              cfg["proc_repeats"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    tp = torch_python
    if not tp:
        try:
            import importlib.util

            tp = sys.executable if importlib.util.find_spec("torch") else None
        except Exception:
            tp = None
    if tp:
        out["torch_seed"] = _time_subprocess(tp, TORCH_SEED_CODE, dict(os.environ),
                                             cfg["proc_repeats"])
    return out


def _fmt(sec):
    if sec is None:
        return "-"
    if sec >= 1:
        return f"{sec:.2f} s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec * 1e6:.1f} µs"


def _ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch-python", help="python of a venv with torch (run in a subprocess)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller W2")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--stat", choices=("median", "best"), default="median",
                        help="which statistic the table shows (default: median)")
    args = parser.parse_args(argv)

    cfg = {"n2": 1_000_000, "repeats": 9, "w0_number": 200, "cold_repeats": 2, "proc_repeats": 5}
    if args.quick:
        cfg.update(n2=100_000, repeats=3, w0_number=20, cold_repeats=1, proc_repeats=2)

    load_before = os.getloadavg()
    jg, npd = _run_jitgrad(cfg)
    th = _run_torch(cfg, args.torch_python)
    procs = _run_seed_processes(cfg, args.torch_python)
    load_after = os.getloadavg()

    def med(d, k):
        return d[k].get(args.stat) if isinstance(d.get(k), dict) else None

    per_op = 1.0 / 1000  # W7: report per op
    rows = [
        ("W0 seed 0-d, fwd+bwd", med(jg, "w0"), med(npd, "w0_fwd"), med(th, "w0")),
        (f"W2 n={cfg['n2']:.0e}, fwd+bwd", med(jg, "w2"), None, med(th, "w2")),
        (f"W2 n={cfg['n2']:.0e}, fwd (no_grad)", med(jg, "w2_fwd"), med(npd, "w2_fwd"),
         med(th, "w2_fwd")),
        ("W7 1000-op chain, fwd+bwd, per op", *(None if v is None else v * per_op for v in
                                                (med(jg, "w7"), None, med(th, "w7")))),
        ("W7 1000-op chain, fwd, per op", *(None if v is None else v * per_op for v in
                                            (med(jg, "w7_fwd"), med(npd, "w7_fwd"),
                                             med(th, "w7_fwd")))),
        ("seed in a new process, cold cache", med(procs, "seed_cold"), None, med(procs, "torch_seed")),
        ("seed in a new process, warm cache", med(procs, "seed_warm"), None, med(procs, "torch_seed")),
        ("`import jitgrad` alone, new process", med(procs, "import_warm"), None, None),
    ]

    print(f"machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cores, "
          f"{platform.system()} {platform.release()}")
    print(f"load avg (1/5/15 min): before {' '.join(f'{v:.2f}' for v in load_before)}, "
          f"after {' '.join(f'{v:.2f}' for v in load_after)}")
    print(f"python {platform.python_version()}; jitgrad {jg.get('version')} (numba "
          f"{jg.get('numba', '?')}, llvmlite {jg.get('llvmlite', '?')}, threading layer "
          f"{jg.get('threading_layer', '?')}, {jg.get('threads', '?')} threads); numpy "
          f"{npd.get('version')}")
    if "error" in th:
        print(f"torch: skipped: {th['error']}")
    else:
        print(f"torch {th.get('version')} ({th.get('threads')} threads, {th.get('where')})")
    print(f"jitgrad first calls (compile or load kernels): {_fmt(jg.get('first_calls_s'))}")
    busy = load_before[0] > 0.25 * (os.cpu_count() or 1)
    print(f"{args.stat} of {cfg['repeats']} repeats after warm-up (process rows: "
          f"{cfg['cold_repeats']} cold, {cfg['proc_repeats']} warm); ratio > 1: jitgrad slower")
    if busy:
        print("warning: the machine was busy when this started; multi-threaded timings may be "
              "several times slower than on a quiet machine")
    print()

    header = ("workload", "jitgrad", "numpy fwd", "torch", "jitgrad/torch", "jitgrad/numpy")
    table = [header] + [(name, _fmt(j), _fmt(n), _fmt(t), _ratio(j, t), _ratio(j, n))
                        for name, j, n, t in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for i, r in enumerate(table):
        print("  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in
                        enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print("\n(the torch column of both seed-process rows is the same run: torch has no kernel cache)")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cfg": cfg, "load_before": load_before, "load_after": load_after,
                       "jitgrad": jg, "numpy": npd, "torch": th, "processes": procs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
