"""The known pitfalls of tracing JITs, one test each, against ``jitgrad.compile``.

A compiled function's first call for a signature is the trace run (an eager run, recorded);
only later calls run the captured program, so every test calls at least twice and checks the
later calls. Values are compared with eager's at 1e-12.
"""
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import _config
from jitgrad.testing import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _x(*shape, seed=0, requires_grad=True, dtype=np.float64):
    data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return jg.tensor(data, requires_grad=requires_grad)


def _leaf_like(t):
    return jg.tensor(t._data.copy(), requires_grad=t.requires_grad)


def _close(a, b):
    assert_close(a, b, rtol=1e-12, atol=1e-14)


def _value_and_grads(fn, *inputs):
    out = fn(*inputs)
    grads = jg.autograd.grad(out, [t for t in inputs if isinstance(t, jg.Tensor)
                                   and t.requires_grad], allow_unused=True)
    return out, grads


def _check_against_eager(fn, cf, *inputs):
    """``cf(*inputs)`` (on copies) equals ``fn(*inputs)``, value and gradients."""
    copies = [_leaf_like(t) if isinstance(t, jg.Tensor) else t for t in inputs]
    want, want_g = _value_and_grads(fn, *inputs)
    got, got_g = _value_and_grads(cf, *copies)
    _close(got, want)
    for g, w in zip(got_g, want_g):
        _close(g, w)
    return got


def _body(x, a):
    return (jg.sin(x * a) + x * x).sum()


def test_changed_python_float_is_an_input_not_a_constant():
    cf = jg.compile(_body)
    x = _x(5)
    for a in (0.5, 1.5, -2.0, 0.5):
        _check_against_eager(_body, cf, x, a)
    assert cf.stats()["traces"] == 1 and cf.stats()["cached"] == 1


def test_changed_closure_tensor_is_read_fresh():
    w = jg.tensor(np.linspace(-1.0, 1.0, 4))
    fn = lambda x: (jg.exp(x * w) * w).sum()  # noqa: E731
    cf = jg.compile(fn)
    x = _x(4)
    _check_against_eager(fn, cf, x)
    _check_against_eager(fn, cf, x)
    with jg.no_grad():
        w.mul_(3.0)  # the closure's values change in place
    _check_against_eager(fn, cf, x)
    w._data[:] = [5.0, 6.0, 7.0, 8.0]
    _check_against_eager(fn, cf, x)
    assert cf.stats()["traces"] == 1


def test_closure_name_rebound_to_another_tensor():
    env = {"w": jg.tensor(np.ones(3))}
    fn = lambda x: (x * env["w"]).sum()  # noqa: E731
    cf = jg.compile(fn)
    x = _x(3)
    _check_against_eager(fn, cf, x)
    _check_against_eager(fn, cf, x)
    env["w"] = jg.tensor(np.full(3, 2.0))  # a new tensor under the same name
    _check_against_eager(fn, cf, x)


@pytest.mark.parametrize("change", ["shape", "dtype", "requires_grad"])
def test_new_signature_retraces(change):
    cf = jg.compile(lambda x: (jg.tanh(x) * x).sum())
    fn = lambda x: (jg.tanh(x) * x).sum()  # noqa: E731
    x = _x(2, 3)
    _check_against_eager(fn, cf, x)
    _check_against_eager(fn, cf, x)
    y = {"shape": _x(4, seed=1), "dtype": _x(2, 3, seed=1, dtype=np.float32),
         "requires_grad": _x(2, 3, seed=1, requires_grad=False)}[change]
    for _ in range(2):
        got = cf(_leaf_like(y))
        want = fn(y)
        assert got.dtype == want.dtype and got.requires_grad == want.requires_grad
        assert_close(got, want, rtol=1e-6 if change == "dtype" else 1e-12, atol=1e-7)
    if y.requires_grad:
        _check_against_eager(fn, cf, y)
    assert cf.stats()["traces"] == 2 and cf.stats()["cached"] == 2


def test_outputs_are_fresh_buffers():
    cf = jg.compile(lambda x: (jg.exp(x) + 1.0, x * 2.0))
    x1, x2, x3 = _x(4, seed=1), _x(4, seed=2), _x(4, seed=3)
    first = cf(x1)
    second = cf(x2)
    kept = [o._data.copy() for o in second]
    third = cf(x3)
    _close(first[0], np.exp(x1._data) + 1.0)
    _close(first[1], x1._data * 2.0)
    _close(second[0], kept[0])
    _close(second[1], kept[1])
    _close(third[1], x3._data * 2.0)
    assert not np.shares_memory(second[0]._data, third[0]._data)


def test_input_passed_twice():
    fn = lambda a, b: (a * jg.sin(b)).sum()  # noqa: E731
    cf = jg.compile(fn)
    for seed in (0, 1):
        x = _x(3, seed=seed)
        want = fn(x, x)
        (gw,) = jg.autograd.grad(want, [x])
        y = _leaf_like(x)
        got = cf(y, y)
        (gg,) = jg.autograd.grad(got, [y])
        _close(got, want)
        _close(gg, gw)  # both uses' gradients summed on the one leaf
    # distinct tensors with the same values are another signature (no aliasing)
    z, w = _x(3, seed=2), _x(3, seed=2)
    _close(cf(z, w), fn(_leaf_like(z), _leaf_like(w)))


def _uses_item(x):
    return (x * x.sum().item()).sum()


def test_item_falls_back_with_a_warning():
    cf = jg.compile(_uses_item)
    x = _x(3)
    with pytest.warns(UserWarning, match=r"cannot be captured: Tensor.item\(\)"):
        got = cf(x)
    _close(got, _uses_item(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once: later calls are quietly eager
        _check_against_eager(_uses_item, cf, _x(3, seed=1))
    stats = cf.stats()
    assert stats["cached"] == 0 and stats["eager_signatures"] == 1
    assert "item" in stats["fallbacks"][0][0] and "test_pitfalls.py" in stats["fallbacks"][0][1]


def test_item_with_fullgraph_raises():
    cf = jg.compile(_uses_item, fullgraph=True)
    with pytest.raises(jg.CompileError, match=r"item.*fullgraph=True"):
        cf(_x(3))


def test_no_grad_around_the_call():
    fn = lambda x: (jg.exp(x) * x).sum()  # noqa: E731
    cf = jg.compile(fn)
    x = _x(4)
    for _ in range(2):
        with jg.no_grad():
            out = cf(x)
        assert not out.requires_grad and out.grad_fn is None
        _close(out, fn(x).detach())
    for _ in range(2):  # the grad-mode signature is its own
        _check_against_eager(fn, cf, x)
    assert cf.stats()["traces"] == 2


@pytest.mark.parametrize("warm", [
    True,
    False,
])
def test_threads_call_at_once(warm):
    fn = lambda x, a: (jg.tanh(x * a) * x).sum() + 0.25 * warm  # noqa: E731 (a kernel per case)
    cf = jg.compile(fn)
    _check_against_eager(fn, cf, _x(6), 0.5)  # traced (eager): the threads run the program
    if warm:
        _check_against_eager(fn, cf, _x(6), 0.5)  # the kernels load before the threads start
    inputs = [(_x(6, seed=s), 0.1 * s) for s in range(4)]
    results = [None] * 4
    barrier = threading.Barrier(4)

    def work(k):
        x, a = inputs[k]
        barrier.wait()
        got = []
        for _ in range(20):
            y = _leaf_like(x)
            out = cf(y, a)
            (g,) = jg.autograd.grad(out, [y])
            got.append((out._data.copy(), g._data.copy()))
        results[k] = got

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None for r in results), "a thread raised"
    for (x, a), got in zip(inputs, results):
        want, (gw,) = _value_and_grads(fn, _leaf_like(x), a)
        for value, grad in got:
            _close(value, want)
            _close(grad, gw)
    assert cf.stats()["traces"] == 1


def test_trace_limit_warns_and_runs_eager():
    from jitgrad.compile.api import MAX_TRACES

    fn = lambda x: (x * x).sum()  # noqa: E731
    cf = jg.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, MAX_TRACES + 1):
            _check_against_eager(fn, cf, _x(n))
    with pytest.warns(UserWarning, match=r"traced 8 times \(argument leaf 0: shape kept"):
        _check_against_eager(fn, cf, _x(MAX_TRACES + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = cf(_x(2))  # a cached signature too: eager from now on
    assert out.grad_fn is not None and type(out.grad_fn).__name__ != "CompiledFunctionBackward"
    assert "shape" in cf.stats()["gave_up"]


_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import jitgrad as jg

    @jg.compile
    def f(x, y):
        return (jg.exp(jg.sin(x) * y) + x * y).sum()

    x = jg.tensor(np.linspace(-1, 1, 7), requires_grad=True)
    y = jg.tensor(np.linspace(0, 2, 7), requires_grad=True)
    for _ in range(3):
        out = f(x, y)
        out.backward()
    # generated kernels (jgc_) and native segments (jgn_), which call kernels inside
    kernels = {name: (getattr(m, "kernel", None) or m.segment).stats
               for name, m in sys.modules.items() if name.startswith(("jitgrad._kernels.jgc_",
                                                                      "jitgrad._kernels.jgn_"))}
    print(json.dumps({"value": float(out), "grad": x.grad._data.tolist(),
                      "kernels": sorted(kernels),
                      "hits": sum(sum(s.cache_hits.values()) for s in kernels.values()),
                      "misses": sum(sum(s.cache_misses.values()) for s in kernels.values()),
                      "stats": f.stats()["cached"]}))
""")


def test_disk_cache_serves_a_second_process(tmp_path):
    import json

    env = dict(os.environ, JITGRAD_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                              text=True, cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["stats"] == 1 and first["kernels"], first
    assert first["misses"] >= 1 and first["hits"] == 0, first  # compiled (and written)
    assert second["kernels"] == first["kernels"]
    # loaded, nothing compiled: a segment loaded from disk carries the kernels it calls, which
    # then load nothing of their own (Note [native segments])
    assert second["misses"] == 0 and 1 <= second["hits"] <= first["misses"], second
    for name in first["kernels"]:
        generated = list((tmp_path / "cache").rglob(name.rsplit(".", 1)[1] + ".py"))
        assert generated, name
    assert second["value"] == first["value"] and second["grad"] == first["grad"]


def test_compile_disabled(monkeypatch):
    monkeypatch.setattr(_config, "COMPILE", False)
    fn = lambda x: (jg.exp(x) * x).sum()  # noqa: E731
    cf = jg.compile(fn)
    x = _x(3)
    for _ in range(2):
        out = _check_against_eager(fn, cf, x)
        assert type(out.grad_fn).__name__ == "SumBackward0"
    assert cf.stats()["traces"] == 0


def _compiled_output(fn=None):
    fn = fn or (lambda x: (jg.exp(x) * x).sum())
    cf = jg.compile(fn)
    cf(_x(3))  # the trace
    return cf


def test_backward_twice_raises():
    cf = _compiled_output()
    x = _x(3)
    out = cf(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


def test_retain_graph():
    cf = _compiled_output()
    x = _x(3)
    out = cf(x)
    out.backward(retain_graph=True)
    once = x.grad._data.copy()
    out.backward()
    _close(x.grad, 2 * once)
    _close(once, (np.exp(x._data) * (1 + x._data)))


def test_leaf_grad_accumulates_across_calls():
    fn = lambda x: (jg.exp(x) * x).sum()  # noqa: E731
    cf = _compiled_output(fn)
    x, e = _x(3), _x(3)
    for _ in range(2):
        cf(x).backward()
        fn(e).backward()
    _close(x.grad, e.grad)


def test_autograd_grad_through_a_compiled_call():
    fn = lambda x, w: (jg.tanh(x @ w) ** 2).sum()  # noqa: E731
    cf = jg.compile(fn)
    x, w = _x(2, 3), _x(3, 4, seed=1)
    for _ in range(2):
        _check_against_eager(fn, cf, x, w)
    gx, = jg.autograd.grad(cf(x, w), [x])  # only some inputs asked for
    _close(gx, jg.autograd.grad(fn(x, w), [x])[0])


def test_create_graph_double_backward():
    fn = lambda x: (jg.sin(x) * x * x).sum()  # noqa: E731
    cf = jg.compile(fn)
    cf(_x(4))
    x, e = _x(4, seed=1), _x(4, seed=1)
    (g,) = jg.autograd.grad(cf(x), [x], create_graph=True)
    (ge,) = jg.autograd.grad(fn(e), [e], create_graph=True)
    _close(g, ge)
    (h,) = jg.autograd.grad(g.sum(), [x])
    (he,) = jg.autograd.grad(ge.sum(), [e])
    _close(h, he)


def test_inplace_change_of_an_input_after_the_call():
    fn = lambda a: (a * a).sum()  # noqa: E731
    cf = _compiled_output(fn)
    for f in (fn, cf):
        x = _x(3)
        a = x * 1.0  # a non-leaf input the backward reads
        out = f(a)
        with jg.no_grad():
            a.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()


def test_closure_parameter_gets_its_gradient():
    jg.manual_seed(0)
    lin = jg.nn.Linear(3, 2)
    fn = lambda x: jg.tanh(lin(x)).sum()  # noqa: E731
    cf = jg.compile(fn)
    grads = []
    for f in (fn, cf, cf):
        lin.zero_grad()
        f(_x(5, 3, requires_grad=False)).backward()
        grads.append((lin.weight.grad._data.copy(), lin.bias.grad._data.copy()))
    for got in grads[1:]:
        _close(got[0], grads[0][0])
        _close(got[1], grads[0][1])
    assert cf.stats()["cached"] == 1


def test_random_op_falls_back():
    g = jg.Generator()  # (a draw from an explicit generator is not captured)
    fn = lambda x: (x * jg.randn(3, generator=g)).sum()  # noqa: E731
    cf = jg.compile(fn)
    x = _x(3)
    with pytest.warns(UserWarning, match="random"):
        g.manual_seed(5)
        got = cf(x)
    g.manual_seed(5)
    _close(got, fn(x))
    for _ in range(2):  # eager from then on: fresh draws, equal to eager under one seed
        g.manual_seed(7)
        got = cf(x)
        g.manual_seed(7)
        _close(got, fn(x))
    assert cf.stats()["cached"] == 0
