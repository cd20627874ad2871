"""Every read of a tensor's values for Python goes through ``Tensor._host`` (Note [compile
tracing] in jitgrad/compile/trace.py).

``jitgrad.compile`` replays the registry ops it recorded. A value that Python code reads out of
a tensor outside an op (a mask's True count, ``float(t._data[0])``, ``np.nonzero(x._data)``...)
would be baked into the program as it was on the first call. The tracer sees such reads only
through the one accessor, ``Tensor._host(what)``, which calls the registered host-read hook.

The static check: in the layers above ops (the public API packages, where this glue code lives)
a ``._data`` read is allowed only for metadata (``.shape``, ``.dtype``...) or with a trailing
``# device read: <reason>`` comment on the line saying why it is no host read (the array goes
into a kernel that records the op, or into an in-place write that the write guard refuses
while tracing). The dynamic checks: each public way to read values refuses inside a trace.
"""
import pathlib
import re
import warnings

import numpy as np
import pytest

import jitgrad

PKG = pathlib.Path(jitgrad.__file__).resolve().parent

# the layers above ops: every value they read goes through ``_host``
UPPER = ("numpy", "scipy", "func", "nn", "optim", "utils", "distributed", "distributions",
         "linalg", "autograd/api.py", "autograd/function.py", "autograd/forward_ad.py",
         "autograd/graph.py", "autograd/variable.py", "autograd/inference.py", "tensor.py",
         "_protocols.py", "_ndarray_methods.py", "_torch_functions.py", "_torch_methods.py",
         "_torch_runtime.py", "_torch_linalg.py", "fft.py", "special.py", "serialization.py",
         "viz.py", "__init__.py", "__main__.py")
METADATA = r"(shape|dtype|ndim|size|strides|flags|itemsize|nbytes|index|is_cuda)\b"
READ = re.compile(r"\._data\b(?!\s*\.\s*" + METADATA + r")(?!\s*=[^=])")
MARK = "# device read:"


def _files():
    for entry in UPPER:
        path = PKG / entry
        yield from (sorted(path.rglob("*.py")) if path.is_dir() else [path])


def _unmarked_reads():
    found = []
    for path in _files():
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if READ.search(code) and MARK not in line:
                found.append(f"{path.relative_to(PKG)}:{n}: {line.strip()}")
    return found


def test_upper_layers_read_values_only_through_host():
    found = _unmarked_reads()
    assert not found, ("values read from ._data outside Tensor._host (use t._host('name'), or "
                       f"mark a device read with '{MARK} <reason>'):\n" + "\n".join(found))


def test_the_scan_finds_an_unmarked_read(tmp_path, monkeypatch):
    """The check above can fail: a value read, a metadata read and a marked read."""
    assert READ.search("n = float(t._data[0])")
    assert READ.search("idx = np.nonzero(x._data)")
    assert not READ.search("shape = t._data.shape")
    assert not READ.search("t._data = new")
    assert READ.search("t._data = fn(t._data)")


def _stale_or_refused(fn, a, b):
    """Compile ``fn``, call it on ``a`` then ``b``: the second result must be eager's."""
    compiled = jitgrad.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled(a)
        got = compiled(b)
    want = fn(b)
    np.testing.assert_allclose(np.asarray(got.detach()), np.asarray(want.detach()))
    return compiled.stats()


READERS = {
    "item": lambda x: x * x[0].item(),
    "item(i)": lambda x: x * x.item(0),
    "float": lambda x: x * float(x[1]),
    "int": lambda x: x * int(x[1]),
    "bool": lambda x: x * 2 if x[0] > 2 else x * 3,
    "tolist": lambda x: x * x.tolist()[0],
    "numpy": lambda x: x * x.numpy()[0],
    "np.asarray": lambda x: x * np.asarray(x)[0],
    "str": lambda x: x * len(str(x)),
    "repr": lambda x: x * len(repr(x)),
    "format": lambda x: x * len(f"{x[0]:.6f}"),
    "mask index": lambda x: x[x > 4].sum() * x,
    "tensor index": lambda x: x[(x > 4).long()] * 1.0,
    "tensor(x)": lambda x: jitgrad.tensor(x) * x,
    "list of elements": lambda x: x * sum(v for v in x.tolist()),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_host_read_is_never_baked_in(name):
    a = jitgrad.tensor([1.0, 5.0, 3.0, 7.0])
    b = jitgrad.tensor([16.0, 2.0, 8.0, 19.25])
    stats = _stale_or_refused(READERS[name], a, b)
    assert stats["fallbacks"], stats  # refused (not silently captured)


def test_a_closure_read_on_the_host_is_not_baked_in():
    w = jitgrad.tensor([2.0])

    def f(x):
        return x * w.item()

    compiled = jitgrad.compile(f)
    x = jitgrad.tensor([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled(x)
        w.add_(1.0)
        np.testing.assert_allclose(compiled(x).numpy(), [3.0, 6.0])


def test_constants_made_inside_may_be_read():
    """A tensor made from Python data inside the function is the same at every call: reading
    it is no break (the program is captured)."""

    def f(x):
        k = jitgrad.tensor([1.0, 2.0, 3.0])
        return x * k.tolist()[2] + jitgrad.arange(3).sum().item()

    compiled = jitgrad.compile(f)
    for v in ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]):
        x = jitgrad.tensor(v)
        np.testing.assert_allclose(compiled(x).numpy(), f(x).numpy())
    assert compiled.stats()["fallbacks"] == [] and compiled.stats()["cached"] == 1


def test_float_argument_read_as_number_specialises():
    def f(x, a):
        return x * 2 if a > 0 else x * 3

    compiled = jitgrad.compile(f)
    x = jitgrad.tensor([1.0])
    assert compiled(x, 1.0).item() == 2.0
    assert compiled(x, -1.0).item() == 3.0
    assert compiled.stats()["fallbacks"] == []


def test_an_index_argument_read_on_the_host_is_guarded_by_value():
    """Note [value guards]: an integer index or boolean mask passed in is read in Python; the
    program serves calls with the same values and traces again for others."""
    f = jitgrad.compile(lambda x, i: x[i] * 2)
    x = jitgrad.tensor([1.0, 2.0, 3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(f(x, jitgrad.tensor([0, 2])).numpy(), [2.0, 6.0])
        np.testing.assert_allclose(f(x * 10, jitgrad.tensor([0, 2])).numpy(), [20.0, 60.0])
        assert f.stats()["traces"] == 1  # same values: the program
        np.testing.assert_allclose(f(x, jitgrad.tensor([3, 1])).numpy(), [8.0, 4.0])
    assert f.stats()["traces"] == 2 and f.stats()["fallbacks"] == []

    g = jitgrad.compile(lambda x, m: x[m].sum())
    m = jitgrad.tensor([True, False, True, True])
    assert g(x, m).item() == 8.0 and g(x + 1, m).item() == 11.0
    assert g(x, jitgrad.tensor([True, False, False, False])).item() == 1.0


def test_a_closure_index_changed_in_place_retraces():
    idx = jitgrad.tensor([1, 1])
    f = jitgrad.compile(lambda x: x[idx])
    x = jitgrad.tensor([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(f(x).numpy(), [2.0, 2.0])
    idx.copy_(jitgrad.tensor([3, 0]))
    np.testing.assert_allclose(f(x).numpy(), [4.0, 1.0])


def test_a_computed_mask_is_refused_not_guarded():
    """A mask computed inside from float data changes with the data: refused, eager values."""
    f = jitgrad.compile(lambda x: x[x > 2.5].sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f(jitgrad.tensor([1.0, 2.0, 3.0])).item() == 3.0
        assert f(jitgrad.tensor([3.0, 4.0, 5.0])).item() == 12.0
    assert f.stats()["fallbacks"]
