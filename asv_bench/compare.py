"""Side by side: jitgrad vs NumPy (forward only) vs PyTorch, HIPS autograd and JAX on W1-W10.

    python asv_bench/compare.py [--quick] [--out DIR] [--workloads W2,W4] [--dtypes float64]
                                [--frameworks jitgrad,torch,...] [--no-single-thread]
                                [--no-compile-latency] [--no-roofline] [--stat best]

The workloads are defined once, in ``asv_bench/benchmarks/workloads.py`` (shared with the asv
suite); every framework runs the same source through a small op namespace. Frameworks that are not
installed are skipped with a note, never replaced by something else.

How it measures
  * All frameworks run in this one process, interleaved: for each workload and dtype, every
    framework is set up and warmed up (compile/trace/kernel load; its time is reported
    separately), then each repeat times every framework once, in a rotating order. A sample runs
    the workload ``number`` times, with ``number`` chosen so a sample lasts ``--min-sample`` s.
    The table shows the median (``--stat best``: the fastest) sample.
  * Results are checked against each other: the loss against NumPy's, the gradients against
    PyTorch's (else jitgrad's); a disagreement is printed next to the table.
  * Threads: this process keeps every framework's default (all cores). The 1-thread columns come
    from a child process of this script started with OMP/MKL/OPENBLAS/NUMBA/JITGRAD_NUM_THREADS=1,
    JITGRAD_NUM_INTEROP_THREADS=1 (and XLA_FLAGS for JAX), which prints JSON:
    ``torch.set_num_threads`` is never called (called twice in one process, it left PyTorch's
    backward 100-500x slower).
  * The garbage collector is frozen (``gc.freeze()``) after each set-up; the machine load is read
    before and after, and the process CPU time per sample gives the cores each framework kept busy.
  * Physical limits: memory bandwidth (Numba ``prange`` copy and triad) and GEMM GFLOP/s (NumPy's
    BLAS, and PyTorch's when installed), so W2/W3/W5/W8 are shown as a fraction of the bandwidth
    (an op-by-op traffic model, see docs/benchmarks.md) and W4 as a fraction of GEMM peak.
  * Compile latency: a new process runs the first forward+backward of W2 (jitgrad with an empty
    kernel cache, then with the warm one; the peers as they are).

Writes ``bench.json`` (everything) and ``bench.png`` (ratios jitgrad / peer; needs matplotlib)
into ``--out`` (default ``asv_bench/results/compare``).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BENCH_DIR = os.path.join(HERE, "benchmarks")
sys.path.insert(0, REPO)        # prefer this checkout's jitgrad over an installed copy
sys.path.insert(0, BENCH_DIR)

import numpy as np  # noqa: E402

import workloads as W  # noqa: E402

PEERS = ("jitgrad-compile", "torch", "autograd", "jax")
ONE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1", "JITGRAD_NUM_THREADS": "1", "JITGRAD_NUM_INTEROP_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",  # JAX: best effort
}
JSON_MARK = "@@compare-json@@ "
COMPILE_KEY = "W2"


# ---------------------------------------------------------------------------------------------
# Machine
# ---------------------------------------------------------------------------------------------


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load():
    try:
        with open("/proc/loadavg") as f:
            parts = f.read().split()
        return {"1m": float(parts[0]), "5m": float(parts[1]), "15m": float(parts[2]),
                "running": parts[3]}
    except OSError:
        la = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
        return {"1m": la[0], "5m": la[1], "15m": la[2], "running": "?"}


def machine_info():
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"cpu": _cpu_model(), "cores": os.cpu_count(), "usable_cores": usable,
            "system": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "numpy": np.__version__,
            "numpy_blas": W.numpy_blas()}


# ---------------------------------------------------------------------------------------------
# Physical limits
# ---------------------------------------------------------------------------------------------


def measure_roofline(quick, torch_backend=None):
    out = {}
    try:
        import numba
    except ImportError as err:
        out["bandwidth_note"] = f"numba not installed: no bandwidth figure ({err})"
    else:
        @numba.njit(parallel=True, nogil=True)
        def copy(a, b):
            for i in numba.prange(a.size):
                a[i] = b[i]

        @numba.njit(parallel=True, nogil=True)
        def triad(a, b, c, s):
            for i in numba.prange(a.size):
                a[i] = b[i] + s * c[i]

        def stream(n, reps):
            a, b, c = np.zeros(n), np.ones(n), np.full(n, 2.0)
            copy(a, b)
            triad(a, b, c, 3.0)
            tc, tt = [], []
            for _ in range(reps):
                tc.append(_timed(lambda: copy(a, b)))
                tt.append(_timed(lambda: triad(a, b, c, 3.0)))
            return 16 * n / min(tc) / 1e9, 24 * n / min(tt) / 1e9

        n = 2 ** (24 if quick else 25)             # 134 / 268 MB per array: main memory
        copy_bw, triad_bw = stream(n, 3 if quick else 6)
        _, triad_small = stream(10 ** 6, 20)       # 8 MB per array, the size of W2's arrays
        out["bandwidth"] = {"copy_GBps": copy_bw, "triad_GBps": triad_bw, "array_MB": 8 * n / 1e6,
                            "triad_8MB_GBps": triad_small,
                            "numba_threads": numba.get_num_threads(),
                            "threading_layer": numba.threading_layer()}
    gemm = {}
    n = 1024 if quick else 2048
    for dtype in W.DTYPES:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n)).astype(dtype)
        b = rng.standard_normal((n, n)).astype(dtype)
        runs = {"numpy": lambda: np.matmul(a, b)}
        if torch_backend is not None:
            ta, tb = torch_backend.lib.from_numpy(a), torch_backend.lib.from_numpy(b)
            runs["torch"] = lambda: torch_backend.lib.mm(ta, tb)
        for lib, f in runs.items():
            f()
            best = min(_timed(f) for _ in range(3))
            gemm[f"{lib}_{dtype}_GFLOPs"] = 2 * n ** 3 / best / 1e9
    gemm["n"] = n
    out["gemm"] = gemm
    return out


def _timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


def _check(backend, ref_backend, got, ref, loss_ref, dtype):
    """'' if `got` (loss, grads) agrees with the references, else a short description."""
    tol = 1e-7 if dtype == "float64" else 2e-3
    loss, grads = got
    msgs = []
    if loss_ref is not None:
        lv, rv = float(backend.to_numpy(loss)), float(loss_ref)
        if abs(lv - rv) > tol * max(1.0, abs(rv)):
            msgs.append(f"loss {lv:.6g} vs numpy {rv:.6g}")
    if ref is not None and grads is not None and ref[1] is not None:
        for i, (g, r) in enumerate(zip(grads, ref[1])):
            g, r = backend.to_numpy(g), ref_backend.to_numpy(r)
            if g is None or r is None:
                if (g is None) != (r is None):
                    msgs.append(f"grad {i}: one side is None")
                continue
            if g.shape != r.shape or str(g.dtype) != str(r.dtype):
                msgs.append(f"grad {i}: {g.dtype}{g.shape} vs {r.dtype}{r.shape}")
                continue
            scale = float(np.max(np.abs(r))) or 1.0
            err = float(np.max(np.abs(g.astype(np.float64) - r))) / scale
            if not err <= tol:
                msgs.append(f"grad {i}: max rel err {err:.2g} vs {ref_backend.name}")
    return "; ".join(msgs)


def run_workload(backends, workload, dtype, cfg):
    """Interleaved timings of one workload in one dtype: {framework: result dict}."""
    size = workload.size
    steps, res = {}, {}
    outputs = {}
    for name, backend in backends.items():
        try:
            step = backend.prepare(workload, size, dtype)
            t0 = time.perf_counter()
            outputs[name] = step()              # compile / trace / load kernels
            first = time.perf_counter() - t0
            # warm up by count and by time: Python's adaptive interpreter and the frameworks'
            # caches take tens of calls to settle on microsecond workloads
            warm = [_timed(step) for _ in range(max(1, cfg["warmup"]))]
            settle_until = time.perf_counter() + cfg.get("warmup_s", 0.0)
            while time.perf_counter() < settle_until and len(warm) < 2000:
                warm.append(_timed(step))
            one = min(warm)
        except W.Unavailable as err:
            res[name] = {"skipped": str(err)}
            continue
        except Exception as err:  # a framework failing a workload is reported, not fatal
            res[name] = {"error": f"{type(err).__name__}: {err}"[:300]}
            continue
        number = max(1, min(100_000, round(cfg["min_sample"] / max(one, 1e-9))))
        steps[name] = (step, number)
        res[name] = {"first_call_s": first, "number": number, "samples": [], "cpu": []}

    # cross-check the results (loss vs NumPy; grads vs torch, else jitgrad)
    loss_ref = None
    if "numpy" in outputs:
        loss_ref = backends["numpy"].to_numpy(outputs["numpy"][0])
    ref_name = next((n for n in ("torch", "jitgrad", "autograd", "jax") if n in outputs), None)
    for name, out in outputs.items():
        if name == "numpy":
            continue
        msg = _check(backends[name], backends[ref_name], out,
                     outputs[ref_name] if name != ref_name else None, loss_ref, dtype)
        res[name]["check"] = msg or "ok"
    del outputs

    gc.collect()
    gc.freeze()
    try:
        names = list(steps)
        for r in range(cfg["repeats"]):
            for name in names[r % len(names):] + names[:r % len(names)]:
                step, number = steps[name]
                c0 = time.process_time()
                t0 = time.perf_counter()
                for _ in range(number):
                    step()
                wall = time.perf_counter() - t0
                res[name]["samples"].append(wall / number)
                res[name]["cpu"].append((time.process_time() - c0) / wall)
    finally:
        gc.unfreeze()
    for name in steps:
        s = res[name]["samples"]
        res[name].update(median=statistics.median(s), best=min(s),
                         cores_busy=statistics.median(res[name].pop("cpu")))
    steps.clear()
    gc.collect()
    return res


def measure(cfg):
    """Everything timed in this process: machine, frameworks, roofline, workloads."""
    out = {"machine": machine_info(), "load_before": _load(), "env_threads": {
        k: os.environ.get(k) for k in ONE_THREAD_ENV}, "frameworks": {}, "skipped": {},
        "results": {}}
    backends = {}
    for name in cfg["frameworks"]:
        try:
            backends[name] = W.make_backend(name, cfg.get("device", "cpu"))
        except W.Unavailable as err:
            out["skipped"][name] = str(err)
        except Exception as err:
            out["skipped"][name] = f"failed to load: {type(err).__name__}: {err}"
    if cfg["roofline"]:
        out["roofline"] = measure_roofline(cfg["quick"], backends.get("torch"))
    for key in cfg["workloads"]:
        wl = W.WORKLOADS[key]
        for dtype in cfg["dtypes"]:
            t0 = time.perf_counter()
            out["results"][f"{key}/{dtype}"] = run_workload(backends, wl, dtype, cfg)
            if cfg.get("verbose"):
                print(f"  {key} {dtype}: {time.perf_counter() - t0:.1f} s", file=sys.stderr,
                      flush=True)
    for name, backend in backends.items():
        try:
            out["frameworks"][name] = backend.info()  # after the runs: threading layer is known
        except Exception as err:
            out["frameworks"][name] = {"info_error": repr(err)}
    out["load_after"] = _load()
    return out


def run_child(cfg, extra_env):
    """measure(cfg) in a child process with `extra_env`; its JSON result (or {'error': ...})."""
    env = dict(os.environ)
    env.update(extra_env)
    child_cfg = dict(cfg, verbose=False)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                           json.dumps(child_cfg)], env=env, capture_output=True, text=True,
                          timeout=3600)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(JSON_MARK):
            return json.loads(line[len(JSON_MARK):])
    return {"error": f"child exited {proc.returncode}: {proc.stderr[-3000:]}"}


def compile_latency(cfg):
    """First forward+backward of W2 in a new process: jitgrad cold/warm cache, and the peers."""
    key, dtype = COMPILE_KEY, "float64"
    rows = {}
    root = tempfile.mkdtemp(prefix="jitgrad-compare-cache-")

    def run(framework, env, label):
        script = W.first_backward_script(framework, key, None, dtype)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=1800)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            err = proc.stderr.strip().splitlines()
            rows.setdefault(label, {"error": (err[-1] if err else f"rc {proc.returncode}")[:300]})
            return
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        r["process_s"] = wall
        rows.setdefault(label, {"runs": []})["runs"].append(r)

    try:
        env = dict(os.environ)
        if "jitgrad" in cfg["frameworks"]:
            for i in range(cfg["cold_repeats"]):       # a new, empty cache dir every time
                env["JITGRAD_CACHE_DIR"] = os.path.join(root, f"cold{i}")
                run("jitgrad", env, "jitgrad, empty kernel cache (cold)")
            for _ in range(cfg["proc_repeats"]):       # the last cold run's dir, now warm
                run("jitgrad", env, "jitgrad, warm kernel cache")
        for peer in PEERS:
            if peer in cfg["frameworks"] and peer in cfg["available"]:
                for _ in range(cfg["proc_repeats"]):
                    run(peer, dict(os.environ), peer)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for row in rows.values():
        if "runs" in row:
            for k in ("import_s", "first_s", "process_s"):
                row[k] = statistics.median(r[k] for r in row["runs"])
    return {"workload": key, "dtype": dtype, "size": W.WORKLOADS[key].size, "rows": rows}


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def _fmt(sec):
    if sec is None:
        return "-"
    if sec >= 1:
        return f"{sec:.2f} s"
    if sec >= 1e-3:
        return f"{sec * 1e3:.2f} ms"
    return f"{sec * 1e6:.1f} us"


def _table(rows, header, right_from=1):
    rows = [header] + rows
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    lines = []
    for i, r in enumerate(rows):
        lines.append("  ".join(str(c).ljust(w) if k < right_from else str(c).rjust(w)
                               for k, (c, w) in enumerate(zip(r, widths))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _time(res, fw, stat):
    r = res.get(fw) or {}
    return r.get(stat)


def ratios(run, stat):
    """{(key, dtype): {peer: jitgrad / peer}} for the peers timed in `run`."""
    out = {}
    for kd, res in run["results"].items():
        j = _time(res, "jitgrad", stat)
        out[kd] = {fw: (j / t if j and t else None) for fw in ("numpy",) + PEERS
                   for t in [_time(res, fw, stat)]}
    return out


def format_run(run, stat, title):
    lines = [f"== {title}"]
    fws = [fw for fw in ("jitgrad", "numpy") + PEERS if fw in run["frameworks"]]
    peers = [fw for fw in fws if fw != "jitgrad"]
    header = ["workload", "dtype"] + [("numpy fwd" if fw == "numpy" else fw) for fw in fws] + \
             [f"jg/{'np' if fw == 'numpy' else fw}" for fw in peers]
    rows, notes = [], []
    rat = ratios(run, stat)
    for kd, res in run["results"].items():
        key, dtype = kd.split("/")
        row = [f"{key} {W.WORKLOADS[key].title}", dtype]
        for fw in fws:
            r = res.get(fw, {})
            row.append(_fmt(r.get(stat)) if stat in r else ("skip" if "skipped" in r else
                                                            "ERR" if "error" in r else "-"))
            if "error" in r:
                notes.append(f"{key} {dtype} {fw}: {r['error']}")
            elif "skipped" in r:
                notes.append(f"{key} {dtype} {fw}: skipped: {r['skipped']}")
            elif r.get("check", "ok") != "ok":
                notes.append(f"{key} {dtype} {fw}: RESULT DIFFERS: {r['check']}")
        for fw in peers:
            v = rat[kd].get(fw)
            row.append(f"{v:.2f}" if v else "-")
        rows.append(row)
    lines.append(_table(rows, header, right_from=2))
    lines.append(f"({stat} per call; jg/X = jitgrad time / X time: > 1 means jitgrad is slower; "
                 "numpy fwd is the forward alone, no gradient)")
    # cores kept busy (process CPU time / wall time while timing)
    busy = []
    for kd, res in run["results"].items():
        busy.append([kd] + [f"{res[fw]['cores_busy']:.1f}" if "cores_busy" in res.get(fw, {})
                            else "-" for fw in fws])
    lines.append("cores busy (process CPU time / wall time): " + "; ".join(
        f"{fw} {statistics.median([float(b[i + 1]) for b in busy if b[i + 1] != '-'] or [0]):.1f}"
        for i, fw in enumerate(fws)) + " (median over workloads; per workload in bench.json)")
    if "numpy" in fws:
        np_busy = [float(b[1 + fws.index("numpy")]) for b in busy
                   if b[1 + fws.index("numpy")] != "-" and not b[0].startswith("W4")]
        if np_busy and statistics.median(np_busy) < 0.85:
            lines.append(f"warning: single-threaded NumPy got only "
                         f"{statistics.median(np_busy):.2f} of a core: other processes were "
                         "competing for the CPU; times are inflated, parallel ones most")
    lines.extend(compiled_lines(run, stat))
    lines.extend(roofline_lines(run, stat, fws))
    lines.extend(f"note: {n}" for n in notes)
    return "\n".join(lines)


def compiled_lines(run, stat):
    """jitgrad.compile against eager jitgrad and the peers, per workload (the compile targets
    of docs/compile.md)."""
    if "jitgrad-compile" not in run["frameworks"]:
        return []
    peers = [fw for fw in ("jitgrad", "torch", "jax") if fw in run["frameworks"]]
    rows = []
    for kd, res in run["results"].items():
        c = _time(res, "jitgrad-compile", stat)
        if not c:
            continue
        row = [kd, _fmt(c)]
        for fw in peers:
            t = _time(res, fw, stat)
            row.append(f"{c / t:.3f}" if t else "-")
        rows.append(row)
    if not rows:
        return []
    header = ["workload", "compiled"] + [f"compiled/{fw}" for fw in peers]
    return ["", "jitgrad.compile(func.value_and_grad(f)) vs the others (< 1: compiled faster):",
            _table(rows, header, right_from=1)]


def roofline_lines(run, stat, fws):
    roof = run.get("roofline") or {}
    lines = []
    bw = roof.get("bandwidth")
    gemm = roof.get("gemm", {})
    if bw:
        lines.append(f"memory bandwidth (Numba prange, {bw['numba_threads']} threads, "
                     f"{bw['array_MB']:.0f} MB arrays): copy {bw['copy_GBps']:.1f} GB/s, "
                     f"triad {bw['triad_GBps']:.1f} GB/s (the roofline below); triad on 8 MB "
                     f"arrays (partly cache-resident): {bw['triad_8MB_GBps']:.1f} GB/s")
    elif roof.get("bandwidth_note"):
        lines.append(roof["bandwidth_note"])
    if gemm:
        lines.append(f"GEMM {gemm['n']}x{gemm['n']}: " + ", ".join(
            f"{k.replace('_GFLOPs', '')} {v:.1f} GFLOP/s" for k, v in gemm.items() if k != "n"))
    rows = []
    for kd, res in run["results"].items():
        key, dtype = kd.split("/")
        wl = W.WORKLOADS[key]
        model, pct = None, {}
        if wl.passes is not None and bw:
            opwise, minimum = W.traffic_bytes(wl, wl.size, dtype)
            model = f"{wl.passes:g} passes = {opwise / 1e6:.0f} MB (min {minimum / 1e6:.0f} MB)"
            for fw in fws:
                t = _time(res, fw, stat)
                if t and fw != "numpy":
                    gbps = opwise / t / 1e9
                    pct[fw] = f"{gbps:.1f} GB/s {100 * gbps / bw['triad_GBps']:.0f}%"
        elif wl.flops is not None and gemm:
            peak = max(v for k, v in gemm.items() if k.endswith(f"{dtype}_GFLOPs"))
            flops = wl.flops(wl.size)
            model = f"{flops / 1e6:.0f} MFLOP vs {peak:.0f} GFLOP/s"
            for fw in fws:
                t = _time(res, fw, stat)
                if t and fw != "numpy":
                    pct[fw] = f"{flops / t / 1e9:.1f} GF/s {100 * flops / t / 1e9 / peak:.0f}%"
        if model:
            rows.append([key, dtype, model] + [pct.get(fw, "-") for fw in fws if fw != "numpy"])
    if rows:
        lines.append("roofline (achieved, and % of triad bandwidth / best GEMM; op-by-op traffic "
                     "model, fwd+bwd):")
        lines.append(_table(rows, ["workload", "dtype", "model"] +
                            [fw for fw in fws if fw != "numpy"], right_from=3))
    return lines


def format_compile(cl):
    lines = [f"== time to the first forward+backward of {cl['workload']} "
             f"(n={cl['size']:.0e}, {cl['dtype']}) in a new process"]
    rows = []
    for label, r in cl["rows"].items():
        if "error" in r:
            rows.append([label, "ERR", "-", "-", "-"])
            lines.append(f"note: {label}: {r['error']}")
        else:
            rows.append([label, _fmt(r["import_s"]), _fmt(r["first_s"]),
                         _fmt(r["import_s"] + r["first_s"]), _fmt(r["process_s"])])
    lines.insert(1, _table(rows, ["", "import", "first call", "import + first",
                                  "whole process"]))
    lines.append("(medians; JAX's first call includes tracing and XLA compilation, PyTorch and "
                 "autograd have nothing to compile)")
    return "\n".join(lines)


def format_header(report):
    m, run = report["machine"], report["main"]
    lines = [f"machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), "
             f"{m['system']}; python {m['python']}"]
    lb, la = run["load_before"], run["load_after"]
    lines.append(f"load avg 1/5/15 min: before {lb['1m']:.2f} {lb['5m']:.2f} {lb['15m']:.2f} "
                 f"(running {lb['running']}), after {la['1m']:.2f} {la['5m']:.2f} {la['15m']:.2f}")
    if lb["1m"] > 0.25 * (m["usable_cores"] or 1):
        lines.append("warning: the machine was busy when this started; multi-threaded timings "
                     "can be several times slower than on a quiet machine. Trust ratios more.")
    fw = run["frameworks"]
    lines.append(f"numpy {m['numpy']} (BLAS: {m['numpy_blas']})")
    if "jitgrad" in fw:
        j = fw["jitgrad"]
        lines.append(f"jitgrad {j.get('version')}: numba {j.get('numba')}, llvmlite "
                     f"{j.get('llvmlite')}, threading layer {j.get('threading_layer')}, "
                     f"{j.get('threads')} kernel threads, interop threads "
                     f"{j.get('interop_threads')}")
    if "torch" in fw:
        t = fw["torch"]
        lines.append(f"torch {t.get('version')}: {t.get('threads')} threads, "
                     f"{t.get('interop_threads')} interop, {t.get('parallel_backend')}, "
                     f"BLAS {t.get('blas')}")
    for name in ("autograd", "jax"):
        if name in fw:
            lines.append(f"{name} {fw[name].get('version')}")
    for name, why in run["skipped"].items():
        lines.append(f"note: {name} skipped: {why}")
    cfg = report["cfg"]
    lines.append(f"{cfg['repeats']} interleaved repeats after >= {cfg['warmup']} warm-up calls "
                 f"and {cfg.get('warmup_s', 0)} s; "
                 f"samples of >= {cfg['min_sample'] * 1e3:.0f} ms; gc frozen while timing")
    return "\n".join(lines)


def plot(report, path, stat):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib not installed: no chart (pip install matplotlib)"
    runs = [("default threads", report["main"])]
    if report.get("one_thread") and "results" in report["one_thread"]:
        runs.append(("1 thread", report["one_thread"]))
    fig, axes = plt.subplots(len(runs), 1, figsize=(12, 4.2 * len(runs)), squeeze=False)
    for ax, (label, run) in zip(axes[:, 0], runs):
        rat = ratios(run, stat)
        keys = list(rat)
        peers = [p for p in ("numpy",) + PEERS if any(rat[k].get(p) for k in keys)]
        width = 0.8 / max(1, len(peers))
        for i, peer in enumerate(peers):
            vals = [rat[k].get(peer) or 0 for k in keys]
            ax.bar([x + i * width for x in range(len(keys))], vals, width,
                   label=f"jitgrad / {peer}" + (" fwd" if peer == "numpy" else ""))
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(keys))])
        ax.set_xticklabels([k.replace("/float", "\nf") for k in keys], fontsize=8)
        ax.set_ylabel("time ratio (>1: jitgrad slower)")
        ax.set_title(f"jitgrad / peer, {stat} time, {label}")
        top = max([v for k in keys for v in rat[k].values() if v] or [1.0])
        ax.set_ylim(top=top * 8)
        ax.legend(fontsize=8, ncol=max(len(peers), 1), loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def profile(key, dtype, seconds):
    """Profile jitgrad running workload `key` for about `seconds` (after warm-up)."""
    wl = W.WORKLOADS[key]
    step = W.make_backend("jitgrad").prepare(wl, wl.size, dtype)
    step()
    one = min(_timed(step) for _ in range(2))
    calls = max(1, round(seconds / one))
    print(f"{key} {wl.title}, {dtype}: one forward+backward {_fmt(one)}; profiling {calls} calls")
    try:
        from pyinstrument import Profiler
    except ImportError:
        import cProfile
        import pstats

        print("(pyinstrument not installed: cProfile, main thread only)")
        prof = cProfile.Profile()
        prof.runcall(lambda: [step() for _ in range(calls)])
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return 0
    prof = Profiler(interval=0.0005)
    prof.start()
    for _ in range(calls):
        step()
    prof.stop()
    print("(pyinstrument samples the main thread only: work the engine hands to worker threads "
          "is missing; use py-spy record --threads for those)")
    print(prof.output_text(unicode=False, color=False))
    return 0


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def format_device_bandwidth(run, stat, peak_gbs) -> str:
    """Achieved memory bandwidth of the memory-bound workloads on the GPU (op-by-op traffic
    model, fwd+bwd), as GB/s and % of ``peak_gbs``."""
    lines = [f"achieved bandwidth on the device (traffic model / {stat} time; "
             f"peak {peak_gbs:.0f} GB/s):"]
    for key, res in run["results"].items():
        wkey, dtype = key.split("/")
        wl = W.WORKLOADS[wkey]
        model = W.traffic_bytes(wl, wl.size, dtype)
        if not model:
            continue
        nbytes = model[0]
        for fw in ("jitgrad", "torch"):
            t = res.get(fw, {}).get(stat)
            if t:
                gbs = nbytes / t / 1e9
                lines.append(f"  {wkey:4s} {dtype:8s} {fw:8s} {gbs:8.1f} GB/s "
                             f"{100 * gbs / peak_gbs:5.1f}%")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="3 repeats, 1 warm-up, short samples, 1-thread child in float64 only")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--min-sample", type=float, help="seconds per timed sample (default 0.02)")
    ap.add_argument("--workloads", default=",".join(W.WORKLOADS),
                    help="comma list (default: all of " + ",".join(W.WORKLOADS) + ")")
    ap.add_argument("--dtypes", default=",".join(W.DTYPES))
    ap.add_argument("--frameworks", default=",".join(W.FRAMEWORKS))
    ap.add_argument("--no-single-thread", action="store_true", help="skip the 1-thread child")
    ap.add_argument("--no-compile-latency", action="store_true")
    ap.add_argument("--no-roofline", action="store_true")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="where jitgrad and PyTorch run (cuda: the others are skipped, and so are "
                         "the CPU roofline and the 1-thread child)")
    ap.add_argument("--peak-gbs", type=float, default=4800.0,
                    help="with --device cuda: the device's memory bandwidth in GB/s, for the "
                         "%% of bandwidth column (default: 4800, an H200's HBM3e)")
    ap.add_argument("--stat", choices=("median", "best"), default="median")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "compare"),
                    help="directory for bench.json and bench.png")
    ap.add_argument("--profile", metavar="WORKLOAD",
                    help="profile jitgrad on one workload (first of --dtypes) with pyinstrument "
                         "(else cProfile) and exit")
    ap.add_argument("--child", metavar="CFG_JSON", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.profile:
        return profile(args.profile, args.dtypes.split(",")[0], 0.5 if args.quick else 3.0)

    if args.child:  # measure in this (thread-limited) process and print JSON
        res = measure(json.loads(args.child))
        print(JSON_MARK + json.dumps(res))
        return 0

    cfg = {"quick": args.quick, "repeats": 3 if args.quick else 11,
           "warmup": 1 if args.quick else 2, "warmup_s": 0.1 if args.quick else 0.3,
           "min_sample": 0.005 if args.quick else 0.02, "cold_repeats": 1 if args.quick else 2,
           "proc_repeats": 1 if args.quick else 3, "roofline": not args.no_roofline,
           "workloads": [w for w in args.workloads.split(",") if w],
           "dtypes": [d for d in args.dtypes.split(",") if d],
           "frameworks": [f for f in args.frameworks.split(",") if f], "verbose": True,
           "device": args.device}
    if args.device != "cpu":  # the CPU roofline and thread counts say nothing about a GPU
        cfg["roofline"] = False
        args.no_single_thread = args.no_compile_latency = True
    for k in ("repeats", "warmup", "min_sample"):
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    bad = [w for w in cfg["workloads"] if w not in W.WORKLOADS] + \
          [d for d in cfg["dtypes"] if d not in W.DTYPES] + \
          [f for f in cfg["frameworks"] if f not in W.FRAMEWORKS]
    if bad:
        ap.error(f"unknown: {', '.join(bad)}")

    t_start = time.perf_counter()
    print(f"measuring {len(cfg['workloads'])} workloads x {len(cfg['dtypes'])} dtypes with "
          f"{', '.join(cfg['frameworks'])} (default threads) ...", file=sys.stderr, flush=True)
    main_run = measure(cfg)
    cfg["available"] = list(main_run["frameworks"])
    report = {"cfg": cfg, "machine": main_run["machine"], "main": main_run}
    if not args.no_single_thread:
        child_cfg = dict(cfg, roofline=cfg["roofline"])
        if args.quick:
            child_cfg["dtypes"] = [d for d in cfg["dtypes"] if d == "float64"] or cfg["dtypes"]
        print("measuring again with 1 thread (child process) ...", file=sys.stderr, flush=True)
        report["one_thread"] = run_child(child_cfg, ONE_THREAD_ENV)
        report["one_thread"]["env"] = ONE_THREAD_ENV
    if not args.no_compile_latency:
        print("compile latency (new processes) ...", file=sys.stderr, flush=True)
        report["compile_latency"] = compile_latency(cfg)
    report["elapsed_s"] = time.perf_counter() - t_start

    where = (f"device {args.device}" if args.device != "cpu" else
             f"default threads ({main_run['machine']['usable_cores']} cores)")
    text = [format_header(report), "", format_run(main_run, args.stat, where)]
    one = report.get("one_thread")
    if one is not None:
        text.append("")
        if "error" in one:
            text.append(f"== 1 thread: the child failed: {one['error']}")
        else:
            text.append(format_run(one, args.stat, "1 thread (child process: "
                                   "OMP/MKL/OPENBLAS/NUMBA/JITGRAD[_INTEROP]_NUM_THREADS=1, "
                                   "XLA_FLAGS)"))
    if "compile_latency" in report:
        text += ["", format_compile(report["compile_latency"])]
    if args.device != "cpu":
        text += ["", format_device_bandwidth(main_run, args.stat, args.peak_gbs)]
    os.makedirs(args.out, exist_ok=True)
    json_path = os.path.join(args.out, "bench.json")
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1)
    png_path = os.path.join(args.out, "bench.png")
    note = plot(report, png_path, args.stat)
    text.append("")
    text.append(f"wrote {json_path}" + (f"; {note}" if note else f" and {png_path}") +
                f" (elapsed {report['elapsed_s']:.0f} s)")
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
