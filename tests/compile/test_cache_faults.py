"""No cache file can break jitgrad, and no compiled function is stale (issue 32).

Note [healing cache] (jitgrad/kernels/cpu/kernel_cache.py) and Note [cache key] (jitgrad/_config.py).
Every check runs a real next process (a child of the test) on a temporary cache dir, against a
snapshot copy of the package (so the package digest that keys the cache dir cannot move while
others edit the tree, and so one copy can be edited). The children are few: each damages many
files at once, one per kernel, and checks one warning per file.
"""
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.kernels.cpu import elementwise as cpu
from jitgrad.kernels import sources

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # seconds per child: a cold compile on a loaded 2-core CI machine is slow

# argv: "full" (eager, fused backward, jitgrad.compile, fori_loop: every kind of generated file)
# or "small" (``(tanh(x) * x).sum()`` eager and compiled); "enospc": every write into the cache
# fails as on a full disk. Prints one JSON line: the values, the RuntimeWarnings, and the
# disk-cache hits and misses.
CHILD = r'''
import gc, json, os, sys, warnings

if "enospc" in sys.argv:
    import errno
    _replace, _root = os.replace, os.environ["JITGRAD_CACHE_DIR"]

    def _full_disk(src, dst, *args, **kwargs):
        if os.fspath(dst).startswith(_root):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(dst))
        return _replace(src, dst, *args, **kwargs)
    os.replace = _full_disk

import numpy as np

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import jitgrad as jg
    from jitgrad import _config
    from jitgrad.kernels.cpu import kernel_cache

    _config.FUSION_MIN_ELEMENTS = 1  # fuse the small backward (ops/core/fusion.py's kernels)
    x0 = np.linspace(-1.0, 2.0, 12)
    out = {}

    def run(name, fn):
        x = jg.tensor(x0, requires_grad=True)
        y = fn(x)
        y.backward()
        out[name] = [float(y.item())] + x.grad.numpy().tolist()

    if sys.argv[1] == "full":
        f = lambda x: (jg.tanh(x) * x + 0.5).sum()
        loop = lambda x: (jg.fori_loop(3, lambda y: y * x + 0.5, x) * x).sum()
        run("eager", f)
        run("loop_eager", loop)
        cf, cl = jg.compile(f), jg.compile(loop)
        for _ in range(2):
            run("compiled", cf)
            run("loop_compiled", cl)
    else:  # (two elementwise ops: the compiled program runs them as one generated kernel)
        f = lambda x: (jg.tanh(x) * x).sum()
        run("eager", f)
        cf = jg.compile(f)
        for _ in range(2):
            run("compiled", cf)

disps = [o for o in gc.get_objects()
         if isinstance(getattr(o, "_cache", None), kernel_cache.HealingCache)]
print(json.dumps({
    "values": out,
    "warnings": [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)],
    "hits": sum(sum(d._cache_hits.values()) for d in disps),
    "misses": sum(sum(d._cache_misses.values()) for d in disps),
    "dir": _config.KERNEL_CACHE_DIR, "read_only": _config.CACHE_READ_ONLY,
}))
'''


def _child(pkg: Path, cache: Path, *args, prefix=()) -> dict:
    env = dict(os.environ, JITGRAD_CACHE_DIR=str(cache), PYTHONPATH=str(pkg))
    for name in ("JITGRAD_FAST_MATH", "JITGRAD_FUSION", "JITGRAD_COMPILE"):  # the defaults
        env.pop(name, None)
    # cwd: the copy (``python -c`` puts the cwd first on sys.path)
    proc = subprocess.run([*prefix, sys.executable, "-c", CHILD, *args], env=env, cwd=pkg,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _copy_package(dest: Path) -> Path:
    shutil.copytree(ROOT / "jitgrad", dest / "jitgrad",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@pytest.fixture(scope="module")
def pkg(tmp_path_factory):
    return _copy_package(tmp_path_factory.mktemp("pkg"))


@pytest.fixture(scope="module")
def populated(pkg, tmp_path_factory):
    """A cache dir filled by one cold "full" run, and the result of a second (warm) run."""
    cache = tmp_path_factory.mktemp("populated")
    cold = _child(pkg, cache, "full")
    assert cold["warnings"] == [] and cold["hits"] == 0 and cold["misses"] > 10, cold
    # the next process loads everything (fewer hits than the cold run's misses: a kernel
    # compiled there only as a callee of another is not loaded on its own)
    warm = _child(pkg, cache, "full")
    assert warm["warnings"] == [] and warm["misses"] == 0 and warm["hits"] > 10, warm
    _assert_values(warm["values"], cold["values"])
    return cache, warm


def _files(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*") if p.is_file()}


def _assert_values(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-13, atol=0, err_msg=name)


def _module(path: Path) -> str:
    """The kernel a cache file belongs to: a generated module's name, or the function's index
    name for a hand-written kernel (``nb_jitgrad.kernels.cpu/reduce._sum_flat_float64-364``)."""
    if path.suffix == ".py":
        return path.stem
    if path.parent.name == "nb_kernels":
        return path.name.split(".")[0]
    return path.name.split(".py3")[0]


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(b"\x00\xffnot what jitgrad wrote\x13" * max(1, len(data) // 24))
    else:
        assert how == "deleted"
        path.unlink()


def _plan(kdir: Path) -> list:
    """``(file, damage)`` pairs, each file of a different kernel: every kind of file jitgrad
    writes (generated sources of eager, fused, compiled and loop kernels; Numba's index and
    data files, of generated and hand-written kernels), damaged every way."""
    used = set()

    def pick(candidates, prefix):
        for path in sorted(candidates):
            if _module(path).startswith(prefix) and _module(path) not in used:
                used.add(_module(path))
                return path
        raise AssertionError(f"no {prefix}* file among {sorted(candidates)}")

    py = list((kdir / "kernels").glob("*.py"))
    nbi = list(kdir.glob("*/*.nbi"))
    nbc = list(kdir.glob("*/*.nbc"))
    fused_bodies = [p for p in py if p.stem.count("_") == 2 and p.stem.startswith("jg_fused_")]
    return [
        (pick(py, "jgc_"), "truncated"),            # a compiled program's kernel
        (pick(py, "jgl_"), "empty"),                # a fori_loop's generated loop
        (pick(fused_bodies, "jg_fused_"), "garbage"),  # a fused backward's body module
        (pick(py, "jg_"), "deleted"),               # (a cold file: rewritten, no warning)
        (pick(nbi, "jgc_"), "truncated"),
        # a hand-written kernel (kernels/; one that loads, not only a callee of another)
        (pick(nbi, "reduce._sum_flat"), "empty"),
        (pick(nbi, "jgl_"), "garbage"),
        (pick(nbc, "jg_"), "truncated"),
        (pick(nbc, "jg_"), "empty"),
        (pick(nbc, "jg_"), "garbage"),
        (pick(nbc, "jg_"), "deleted"),              # the index still names it
    ]


def test_damaged_cache_files_heal(pkg, populated, tmp_path):
    """Each damaged file: the right results, exactly one RuntimeWarning naming it, the file
    removed or rewritten; the process after that loads everything with no warning."""
    source, first = populated
    cache = tmp_path / "cache"
    shutil.copytree(source, cache)
    kdir = Path(first["dir"].replace(str(source), str(cache), 1))
    plan = _plan(kdir)
    for path, how in plan:
        _damage(path, how)
    damaged = _child(pkg, cache, "full")
    _assert_values(damaged["values"], first["values"])
    cache_warnings = [w for w in damaged["warnings"] if "jitgrad: kernel cache" in w]
    assert len(cache_warnings) == len(damaged["warnings"]), damaged["warnings"]
    expected = [(path, how) for path, how in plan
                if not (path.suffix == ".py" and how == "deleted")]
    for path, how in expected:
        named = [w for w in cache_warnings if str(path) in w]
        assert len(named) == 1, (path.name, how, cache_warnings)
    assert len(cache_warnings) == len(expected), cache_warnings
    assert damaged["hits"] > 0 and damaged["misses"] > 0
    healed = _child(pkg, cache, "full")
    _assert_values(healed["values"], first["values"])
    assert healed["warnings"] == [] and healed["misses"] == 0, healed
    assert healed["hits"] == first["hits"]


def _read_only_prefix(path: Path):
    """A command prefix that runs its command with ``path`` read-only, or None (this
    machine can do neither: root, and no user namespaces). Not root: permissions."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("unshare") is None:
        return None
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    prefix = ("unshare", "-rm", "sh", "-c", script, str(path))
    probe = subprocess.run(
        [*prefix, "sh", "-c", 'touch "$0/probe" 2>/dev/null; test -e "$0/probe" || echo ro',
         str(path)], capture_output=True, text=True, timeout=120)
    return prefix if probe.stdout.strip() == "ro" else None


def test_read_only_cache_is_read(pkg, populated, tmp_path):
    """A populated cache dir that cannot be written is loaded from (no recompile of what it
    holds, nothing written); what it lacks compiles in memory, silently."""
    source, first = populated
    cache = tmp_path / "cache"
    shutil.copytree(source, cache)
    kdir = Path(first["dir"].replace(str(source), str(cache), 1))
    # take two kernels out: a generated source, and another kernel's compiled code
    gone_py = sorted((kdir / "kernels").glob("jg_tanh_*.py"))[0]
    gone_nbi = sorted(kdir.glob("nb_kernels/jg_rsub_*.nbi"))[0]
    n_sigs = {gone: len(list(kdir.glob(f"nb_kernels/{_module(gone)}.*.nbc")))
              for gone in (gone_py, gone_nbi)}
    for gone in n_sigs:
        gone.unlink()
    prefix = _read_only_prefix(cache)
    if prefix is None:
        pytest.skip("cannot make a dir read-only here (root without user namespaces)")
    before = _files(cache)
    dirs = [cache, *(p for p in cache.rglob("*") if p.is_dir())]
    try:
        if not prefix:
            for d in dirs:
                d.chmod(0o555)
        got = _child(pkg, cache, "full", prefix=prefix)
    finally:
        for d in dirs:
            d.chmod(0o755)
    assert got["read_only"] is True and got["dir"] == first["dir"].replace(str(source),
                                                                           str(cache), 1)
    assert got["warnings"] == [], got["warnings"]
    _assert_values(got["values"], first["values"])
    # compiled in memory: rsub's signatures (tanh's kernel, run from memory, has no disk cache)
    assert got["misses"] == n_sigs[gone_nbi]
    assert got["hits"] == first["hits"] - sum(n_sigs.values())
    assert _files(cache) == before  # nothing written


def test_full_disk_compiles_in_memory(pkg, tmp_path):
    """Every write failing with ENOSPC: one warning, correct results, no file left behind."""
    cache = tmp_path / "cache"
    got = _child(pkg, cache, "small", "enospc")
    assert len(got["warnings"]) == 1, got["warnings"]
    assert "cannot write the kernel cache" in got["warnings"][0]
    assert os.strerror(errno.ENOSPC) in got["warnings"][0]
    x0 = np.linspace(-1.0, 2.0, 12)
    t = np.tanh(x0)
    want = [float((t * x0).sum())] + (t + x0 * (1 - t * t)).tolist()
    for name in ("eager", "compiled"):
        np.testing.assert_allclose(got["values"][name], want, rtol=1e-13, atol=1e-15)
    assert [p for p in cache.rglob("*") if p.is_file()] == []


def test_edited_body_changes_compiled_and_eager_alike(pkg, populated, tmp_path):
    """tanh's scalar body edited in a copy of the package, run on the same cache dir: the
    compiled function (tanh and the product in one generated kernel) follows the edit as eager
    does, no stale kernel; the original package still gets the original results from that dir.
    (Before the source keys, the edited copy's compiled call returned the old value.)"""
    cache, _ = populated
    edited = _copy_package(tmp_path / "edited")
    unary = edited / "jitgrad" / "ops" / "unary.py"
    text = unary.read_text()
    body = "def _tanh(x):\n    return smath.tanh(x)\n"
    assert body in text
    unary.write_text(text.replace(body, "def _tanh(x):\n    return smath.tanh(x) * 2.0\n"))
    new = _child(edited, cache, "small")
    old = _child(pkg, cache, "small")
    x0 = np.linspace(-1.0, 2.0, 12)
    assert new["dir"] != old["dir"]  # the package digest keys the dir
    for name in ("eager", "compiled"):
        want = (np.tanh(x0) * x0).sum()
        np.testing.assert_allclose(new["values"][name][0], 2 * want, rtol=1e-13)
        np.testing.assert_allclose(old["values"][name][0], want, rtol=1e-13)
    np.testing.assert_allclose(new["values"]["compiled"], new["values"]["eager"], rtol=1e-13)
    assert new["warnings"] == [] and old["warnings"] == []


# ---- in this process: the source keys -----------------------------------------------------

def test_body_digest_follows_the_body_and_its_helpers(tmp_path, monkeypatch):
    """Note [source keys]: a body's digest covers its own source and the modules its helpers
    come from (a body defined outside jitgrad, which the package digest does not cover)."""
    import importlib.util

    def module(name, text):
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, mod)
        spec.loader.exec_module(mod)
        return mod

    helper = "def h(x):\n    return x + {}\n"
    body = "import {0}\n\n\ndef body(x):\n    return {0}.h(x) * 2.0\n"
    module("jg_helper_a", helper.format(1))
    module("jg_helper_b", helper.format(2))
    module("jg_helper_c", helper.format(1))  # a's text under another name
    ua = module("jg_user_a", body.format("jg_helper_a"))
    ub = module("jg_user_b", body.format("jg_helper_b"))
    assert sources.body_digest(ua.body) != sources.body_digest(ub.body)  # the helpers differ
    assert sources.body_digest(ua.body) == sources.body_digest(ua.body)
    twin = module("jg_user_twin", body.format("jg_helper_a"))  # same text, same helper
    assert sources.body_digest(twin.body) == sources.body_digest(ua.body)


def test_generated_kernels_carry_the_body_digests():
    from jitgrad.ops import unary

    digest = sources.body_digest(unary._tanh)
    assert f"# body sources: {digest}" in cpu._kernel_source(unary._tanh, "f", False, False)
    x = jg.tensor(np.linspace(-1.0, 2.0, 12), requires_grad=True)
    cf = jg.compile(lambda x: (jg.tanh(x) * x + 0.5).sum())
    for _ in range(2):  # (the first call traces)
        cf(x).backward()
    texts = [Path(m.__file__).read_text() for name, m in sys.modules.items()
             if name.startswith("jitgrad._kernels.jgc_") and Path(m.__file__).is_file()]
    lines = [ln for t in texts for ln in t.splitlines() if " import _tanh as " in ln]
    assert lines and all(ln.endswith(f"# {digest}") for ln in lines), lines


def test_old_kernel_dirs_are_pruned(tmp_path):
    """Note [cache key]: a new source digest's dir is made; other digests' dirs beyond the most
    recently used few go, unless used in the last hour; anything else in the dir stays."""
    import time

    from jitgrad import _config

    now = time.time()
    names = [f"fastmath-{k:016x}" for k in range(8)]
    for age, name in enumerate(names):  # fastmath-...0 used now, ...7 a week ago
        (tmp_path / name / "kernels").mkdir(parents=True)
        used = now - (0 if age == 0 else 86400 * age)
        os.utime(tmp_path / name, (used, used))
    (tmp_path / "0.1.0").mkdir()  # (not a digest dir: left alone)
    (tmp_path / "notes.txt").write_text("mine")
    _config._kernel_cache_dir(str(tmp_path), "libm-" + "f" * 16)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted(["libm-" + "f" * 16, "0.1.0", "notes.txt",
                           *names[:_config.KEEP_CACHE_DIRS]])


def test_no_kernel_bypasses_the_healing_cache():
    """Every disk-cached kernel goes through ``kernels/cpu/kernel_cache.njit`` (Note [healing
    cache]): no ``cache=True`` keyword, and no generated source text that asks for it."""
    import ast

    offenders = []
    for path in sorted((ROOT / "jitgrad").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.value) for node in ast.walk(tree)
                      if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.keyword) and node.arg == "cache"
                    and isinstance(node.value, ast.Constant) and node.value.value is True):
                offenders.append(f"{path.name}:{node.value.lineno}")
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in docstrings and "cache=True" in node.value):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []

