"""jitgrad.save / jitgrad.load: round trips of tensors, state dicts and nested containers, in a
format that never runs code on load."""
import io
import json
import math
import re
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import jitgrad
from jitgrad import nn, optim


def _round_trip(obj):
    buf = io.BytesIO()
    jitgrad.save(obj, buf)
    buf.seek(0)
    return jitgrad.load(buf)


def test_tensor_round_trip_all_dtypes(tmp_path):
    for dt in ("float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"):
        t = jitgrad.tensor(np.arange(6).reshape(2, 3).astype(dt))
        path = tmp_path / f"t_{dt}.jg"
        jitgrad.save(t, path)
        assert path.exists()  # written as given: no extension appended
        r = jitgrad.load(path)
        assert r.dtype == t.dtype and r.shape == (2, 3)
        np.testing.assert_array_equal(r.numpy(), t.numpy())
    s = _round_trip(jitgrad.tensor(3.5))
    assert s.shape == () and s.item() == 3.5
    nc = _round_trip(jitgrad.tensor(np.arange(12.0).reshape(3, 4)).T)
    np.testing.assert_array_equal(nc.numpy(), np.arange(12.0).reshape(3, 4).T)


def test_requires_grad_parameters_and_shared_tensors():
    p = nn.Parameter(jitgrad.ones(2))
    t = jitgrad.zeros(3, requires_grad=True)
    r = _round_trip({"p": p, "t": t, "again": t})
    assert isinstance(r["p"], nn.Parameter) and r["p"].requires_grad
    assert r["t"].requires_grad and r["t"].is_leaf and r["again"] is r["t"]


def test_nested_containers_and_python_values():
    obj = OrderedDict([("b", [1, 2.5, True, None, "x", (3, 4)]),
                       ("a", {0: jitgrad.ones(1), (1, "k"): math.inf, 2.5: float("nan")}),
                       ("arr", np.arange(3)), ("scalar", np.float32(1.5))])
    r = _round_trip(obj)
    assert isinstance(r, OrderedDict) and list(r) == ["b", "a", "arr", "scalar"]
    assert r["b"] == [1, 2.5, True, None, "x", (3, 4)]
    assert type(r["b"][0]) is int and type(r["b"][2]) is bool and type(r["b"][5]) is tuple
    assert set(r["a"]) == {0, (1, "k"), 2.5}
    assert r["a"][(1, "k")] == math.inf and math.isnan(r["a"][2.5])
    np.testing.assert_array_equal(r["arr"], np.arange(3))
    assert r["scalar"] == np.float32(1.5) and r["scalar"].dtype == np.float32


def test_model_and_optimizer_state_dicts(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(jitgrad.randn(5, 3)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.npz"
    jitgrad.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, path)
    ckpt = jitgrad.load(path)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    fresh.load_state_dict(ckpt["model"])
    for a, b in zip(model.state_dict().values(), fresh.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert ckpt["epoch"] == 3 and list(ckpt["optim"]["state"]) == [0, 1, 2, 3, 4, 5]
    opt2 = optim.SGD(fresh.parameters(), lr=0.5)
    opt2.load_state_dict(ckpt["optim"])
    assert opt2.param_groups[0]["lr"] == 0.1


def test_refuses_what_would_need_code():
    with pytest.raises(TypeError, match="save module.state_dict"):
        jitgrad.save(nn.Linear(2, 2), io.BytesIO())
    with pytest.raises(TypeError, match="cannot save an object of type"):
        jitgrad.save({"f": lambda: 0}, io.BytesIO())
    with pytest.raises(TypeError, match="only bool, integer and float"):
        jitgrad.save(np.array(["a"]), io.BytesIO())


def test_load_never_unpickles():
    """A file holding a pickled object array is rejected, not executed."""
    buf = io.BytesIO()
    meta = {"format": "jitgrad-npz", "version": 1, "root": {"$": "ndarray", "array": "a0"}}
    np.savez(buf, a0=np.array([{"evil": 1}], dtype=object),
             __jitgrad__=np.frombuffer(json.dumps(meta).encode(), np.uint8))
    buf.seek(0)
    with pytest.raises((ValueError, RuntimeError)):
        jitgrad.load(buf)
    plain = io.BytesIO()
    np.savez(plain, x=np.ones(2))
    plain.seek(0)
    with pytest.raises(RuntimeError, match="not a jitgrad file"):
        jitgrad.load(plain)
    buf = io.BytesIO()
    jitgrad.save(jitgrad.ones(2), buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert sorted(names) == ["__jitgrad__.npy", "a0.npy"]


# --- damaged files: the exact original data, or RuntimeError; never another exception, never
# wrong data -------------------------------------------------------------------------------
BAD_FILE = r"jitgrad\.load: not a (valid )?jitgrad file"


def _sample():
    rng = np.random.default_rng(5)
    return {"w": jitgrad.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True),
            "idx": np.arange(7, dtype=np.int64), "flags": jitgrad.tensor([True, False]),
            "meta": ["name", 2, 2.5, None, (1, 2)]}


def _saved_bytes(obj) -> bytes:
    buf = io.BytesIO()
    jitgrad.save(obj, buf)
    return buf.getvalue()


def _same(a, b) -> bool:
    """Equal values, types, dtypes, shapes and requires_grad, bit for bit."""
    if isinstance(a, jitgrad.Tensor):
        return (isinstance(b, jitgrad.Tensor) and a.requires_grad == b.requires_grad
                and _same(a.numpy(), b.numpy()))
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and a.tobytes() == b.tobytes())
    if isinstance(a, dict):
        return (type(a) is type(b) and list(a) == list(b)
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same(x, y) for x, y in zip(a, b)))
    return type(a) is type(b) and a == b


def _load_bytes(data: bytes):
    return jitgrad.load(io.BytesIO(data))


def test_truncated_files_raise_runtime_error():
    data = _saved_bytes(_sample())
    offsets = sorted(set(range(0, len(data), max(1, len(data) // 97))) | set(range(len(data) - 40,
                                                                                   len(data))))
    for n in offsets:
        with pytest.raises(RuntimeError, match=BAD_FILE):
            _load_bytes(data[:n])


def test_random_byte_flips_load_exactly_or_raise():
    original = _sample()
    data = _saved_bytes(original)
    rng = np.random.default_rng(18)
    outcomes = {"exact": 0, "raised": 0}
    for _ in range(400):
        damaged = bytearray(data)
        for position in rng.integers(0, len(data), size=int(rng.integers(1, 4))):
            damaged[position] ^= int(rng.integers(1, 256))
        try:
            loaded = _load_bytes(bytes(damaged))
        except RuntimeError as err:
            assert re.search(BAD_FILE, str(err)) or "unknown file format" in str(err), err
            outcomes["raised"] += 1
        else:
            assert _same(original, loaded), "a damaged file loaded different data silently"
            outcomes["exact"] += 1
    assert outcomes["raised"] > 300  # most bytes are data or structure (a few: timestamps...)


def _with_member(data: bytes, name: str, payload: bytes) -> bytes:
    """``data`` (a zip) with member ``name`` replaced by ``payload``, CRCs recomputed."""
    src, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, payload if info.filename == name else src.read(info))
    return out.getvalue()


def _npy(arr, declared_shape) -> bytes:
    """The ``.npy`` bytes of ``arr`` with a header declaring ``declared_shape``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(arr.dtype),
                                               "fortran_order": False, "shape": declared_shape})
    return buf.getvalue() + arr.tobytes()


@pytest.mark.parametrize("declared", [(3,), (5,), (1, 3), (4, 2), ()],
                         ids=["fewer", "more", "fewer_2d", "more_2d", "scalar"])
def test_header_and_data_size_mismatch_raises(declared):
    data = _saved_bytes(jitgrad.tensor([1.0, 2.0, 3.0, 4.0]))
    arr = np.array([1.0, 2.0, 3.0, 4.0])
    assert _same(_load_bytes(_with_member(data, "a0.npy", _npy(arr, (4,)))),
                 jitgrad.tensor([1.0, 2.0, 3.0, 4.0]))  # the rebuilt file itself is good
    with pytest.raises(RuntimeError, match=r"not a valid jitgrad file .*header declares"):
        _load_bytes(_with_member(data, "a0.npy", _npy(arr, declared)))


def test_damaged_metadata_and_members_raise_runtime_error():
    data = _saved_bytes(_sample())
    for payload in (b"", b"\x93NUMPY", _npy(np.frombuffer(b"{not json", np.uint8), (9,)),
                    _npy(np.frombuffer(b'{"format": "jitgrad-npz", "root": {"$": "list"}}',
                                       np.uint8), (48,))):
        with pytest.raises(RuntimeError, match=BAD_FILE):
            _load_bytes(_with_member(data, "__jitgrad__.npy", payload))
    with pytest.raises(RuntimeError, match=BAD_FILE):
        _load_bytes(_with_member(data, "a0.npy", _npy(np.zeros(2, np.complex128), (2,))))
    for junk in (b"", b"PK", b"\x00" * 64, b"PK\x03\x04" + bytes(range(200))):
        with pytest.raises(RuntimeError, match=BAD_FILE):
            _load_bytes(junk)
