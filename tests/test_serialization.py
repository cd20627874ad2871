"""jitgrad.save / jitgrad.load: round trips of tensors, state dicts and nested containers, in a
format that never runs code on load."""
import io
import json
import math
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
