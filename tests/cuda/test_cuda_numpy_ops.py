"""``jitgrad.numpy`` / ``jitgrad.scipy.special`` on CUDA (simulated or real) against the CPU:
the ``db_numpy`` cases through ``check_device_matches_cpu`` (forward values, dtypes and first
gradients, float64 and float32), plus the special values of the ``ops.elementwise_np`` rows'
scalar bodies and the ``ops.npfuncs`` rows' CUDA forwards (nan, inf, poles, -0.0, half-way
rounding) against NumPy/SciPy."""
import dataclasses
import types

import numpy as np
import pytest
import scipy.special as sp

import jitgrad
import jitgrad.numpy as jnp
import jitgrad.scipy.special as jsp
import jitgrad.scipy.stats as jst
from jitgrad.testing import db_numpy_more
from jitgrad.testing.op_db import numpy_entries
from jitgrad.testing.opinfo import Sample, check_device_matches_cpu

DEV = "cuda:0"

#: db_numpy functions left out, and why: their jitgrad.numpy wrappers (outside ops/npfuncs.py)
#: still compute on the host with NumPy, or the rows they use have no CUDA forward yet
SKIP_NAMES = {
    "average": "weights made as a CPU tensor", "sort": "host argsort", "partition": "host argsort",
    "take": "host index arrays", "take_along_axis": "host index arrays",
    "angle": "host NumPy", "nextafter": "host NumPy",
    "fft.fftfreq": "a constructor (CPU result)", "einsum": "einsum rows: no CUDA forward",
    "inner": "einsum", "tensordot": "einsum",
}
# the issue-19 functions (jitgrad/testing/db_numpy_more.py) are compositions that build their
# constants (masks, labels, index arrays) on the host: CPU only for now (docs/numpy.md)
SKIP_NAMES.update({entry.numpy_name: "issue-19 composition: host constants (CPU only)"
                   for entry in db_numpy_more.ENTRIES})
SKIP_IDS = {"dot-3d": "einsum", "cumulative_sum-initial": "zeros made as a CPU tensor",
            "cumulative_sum-1d": "zeros made as a CPU tensor",
            "cumulative_prod-initial": "ones made as a CPU tensor"}


def _plain(args) -> bool:
    return not any(isinstance(a, (list, tuple)) and any(isinstance(v, np.ndarray) for v in a)
                   for a in args)


def _case_id(entry) -> str:
    return entry.name.removeprefix("np.")


def _cases():
    out = []
    for c in numpy_entries():
        if c.numpy_name.startswith("linalg.") or c.numpy_name in SKIP_NAMES or \
                _case_id(c) in SKIP_IDS:
            continue  # (the linalg rows are another helper's: ops/nplinalg.py)
        if not _plain(c.samples(None, np.dtype("float64"))[0].args):
            continue
        out.append(c)
    return out


def _as_opinfo(case):
    """The entry with every array of its sample as a tensor (the CUDA copies are made from
    tensors) and tuple results compared as one concatenated vector."""
    fn = case.fn

    def call(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            out = jnp.concatenate([jnp.ravel(o) for o in out])
        return out

    return dataclasses.replace(case, name=_case_id(case), fn=call, numpy_name=None)


CASES = _cases()


@pytest.fixture(scope="module", autouse=True)
def _cuda():
    assert jitgrad.cuda.is_available(), "the CUDA tests need a GPU or NUMBA_ENABLE_CUDASIM=1"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_numpy_case_float64(case):
    check_device_matches_cpu(_as_opinfo(case), DEV)


#: the elementwise_np rows and the npfuncs rows with CUDA forwards, also checked in float32
NPFUNC_NAMES = {"arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "log2",
                "log10", "cbrt", "sinc", "floor", "ceil", "trunc", "rint", "arctan2", "hypot",
                "logaddexp", "logaddexp2", "remainder", "fmod", "copysign", "flip", "fliplr",
                "flipud", "cumsum", "cumprod", "pad", "diag", "rot90"}
CASES32 = [c for c in CASES if c.numpy_name in NPFUNC_NAMES]


@pytest.mark.parametrize("case", CASES32, ids=[_case_id(c) for c in CASES32])
def test_numpy_case_float32(case):
    check_device_matches_cpu(_as_opinfo(case), DEV, "float32", rtol=2e-6, atol=1e-6)


# --- special values ------------------------------------------------------------------------------
SPECIAL_X = np.array([-np.inf, -1e300, -2.5, -2.0, -1.5, -1.0, -0.75, -0.5, -1e-310, -0.0, 0.0,
                      1e-310, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.7, 1e20, 1e300, np.inf, np.nan])
UNARY = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "log2", "log10",
         "cbrt", "sinc", "floor", "ceil", "trunc", "rint"]
BINARY = ["arctan2", "hypot", "logaddexp", "logaddexp2", "remainder", "fmod", "copysign"]


def _same(got, expected, rtol):
    """Equal values (nan where nan), equal signs of zero, equal dtype."""
    got = got.cpu()._data if isinstance(got, jitgrad.Tensor) else got
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    nan = np.isnan(expected)
    assert (np.isnan(got) == nan).all(), (got, expected)
    g, e = got[~nan], expected[~nan]
    assert (np.signbit(g) == np.signbit(e)).all(), (got, expected)
    inf = np.isinf(e)
    assert (g[inf] == e[inf]).all(), (got, expected)
    np.testing.assert_allclose(g[~inf], e[~inf], rtol=rtol, atol=0)


def _dev(a):
    return jitgrad.tensor(np.asarray(a), device=DEV)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values(name, dtype):
    with np.errstate(over="ignore"):
        x = SPECIAL_X.astype(dtype)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x)
    _same(getattr(jnp, name)(_dev(x)), expected, 1e-14 if dtype == "float64" else 1e-6)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_special_values(name, dtype):
    v = np.array([-np.inf, -2.5, -1.0, -0.0, 0.0, 0.7, 3.0, np.inf, np.nan], dtype)
    x, y = (a.ravel() for a in np.meshgrid(v, v))
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x, y)
    _same(getattr(jnp, name)(_dev(x), _dev(y)), expected, 1e-14 if dtype == "float64" else 1e-6)


def test_rounding_half_way_and_integers():
    x = np.array([-3.5, -2.5, -1.5, -0.5, -0.49999999999999994, 0.49999999999999994, 0.5, 1.5,
                  2.5, 3.5, 4503599627370495.5, -4503599627370495.5, 2.0 ** 53 + 2, -0.0])
    for name in ("rint", "floor", "ceil", "trunc"):
        for dt in ("float64", "float32"):
            xd = x.astype(dt)
            _same(getattr(jnp, name)(_dev(xd)), getattr(np, name)(xd), 0)
    _same(jnp.round(_dev(x)), np.round(x), 0)
    y = np.array([0.125, 0.375, -0.125, 1.005, 2.675, 1234.5678, -0.0, 15.0, 25.0, np.nan])
    for d in (1, 2, -1, -2):
        for dt in ("float64", "float32"):
            _same(jnp.round(_dev(y.astype(dt)), d), np.round(y.astype(dt), d), 0)
    ints = np.array([15, 25, 35, -15, -25, 149, 150], np.int64)
    for d in (0, 1, -1, -2):
        _same(jnp.round(_dev(ints), d), np.round(ints, d), 0)
    for name in ("floor", "rint"):  # int64 -> int64, int32 -> float64, as NumPy
        for dt in ("int64", "int32"):
            _same(getattr(jnp, name)(_dev(ints.astype(dt))), getattr(np, name)(ints.astype(dt)), 0)


def test_integer_remainder_fmod():
    x, y = (a.ravel() for a in np.meshgrid(np.arange(-7, 8), np.array([-3, -2, 2, 3, 5])))
    for name in ("remainder", "fmod"):
        _same(getattr(jnp, name)(_dev(x), _dev(y)), getattr(np, name)(x, y), 0)


SPECIAL_G = np.array([-np.inf, -1e20, -3.0, -2.5, -1.0, -0.9, -0.504, -0.5, -0.2, -0.0, 0.0,
                      1e-8, 0.3, 1.0, 1.4616321449683623, 2.0, 3.3, 9.9, 10.0, 11.0, 57.3, 1e10,
                      1e300, np.inf, np.nan])


@pytest.mark.parametrize("fn", ["gammaln", "digamma", "polygamma1", "polygamma2", "polygamma5"])
def test_gamma_family_special_values(fn):
    if fn.startswith("polygamma"):
        n = int(fn[-1])
        got, expected = jsp.polygamma(n, _dev(SPECIAL_G)), sp.polygamma(n, SPECIAL_G)
    else:
        got, expected = getattr(jsp, fn)(_dev(SPECIAL_G)), getattr(sp, fn)(SPECIAL_G)
    # gammaln is the device's lgamma (a few ulp, relative error larger near its zeros 1 and 2);
    # digamma and polygamma follow SciPy's algorithms step by step
    _same(got, expected, 1e-12)


def test_stdtr_special_values_and_limits():
    t = np.array([-np.inf, -1e3, -30.0, -2.5, -1.0, -1e-3, -0.0, 0.0, 1e-3, 0.7, 2.5, 30.0, 1e3,
                  np.inf, np.nan])
    for df in (0.3, 1.0, 2.0, 3.5, 10.0, 1e4, np.inf, 0.0, -1.0, np.nan):
        got = jst.t.cdf(_dev(t), df)
        np.testing.assert_allclose(got.cpu()._data, sp.stdtr(df, t), rtol=1e-12, atol=0)
    with pytest.raises(NotImplementedError, match="stdtr on CUDA"):
        jst.t.cdf(_dev(t), 1e6)


def test_scans_dtypes_order_and_views():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    view = _dev(a).T  # a strided input
    for name in ("cumsum", "cumprod"):
        for axis in (0, 1):
            got = getattr(jnp, name)(view, axis).cpu()._data
            assert np.array_equal(got, getattr(np, name)(a.T, axis))  # NumPy's order: bitwise
    ints = np.arange(-3, 9, dtype=np.int32).reshape(3, 4)
    _same(jnp.cumsum(_dev(ints), 1), np.cumsum(ints, 1), 0)
    ints[ints == 0] = 5  # (with zeros the wrapper records a chain of products instead)
    _same(jnp.cumprod(_dev(ints), 0), np.cumprod(ints, 0), 0)
    _same(jnp.cumsum(_dev(np.zeros((0, 3))), 0), np.zeros((0, 3)), 0)


def test_flip_diag_pad_views_and_dtypes():
    a = np.arange(24.0).reshape(2, 3, 4)
    v = jnp.transpose(_dev(a), (2, 0, 1))
    for axis in (None, 0, (1, 2), -1):
        assert np.array_equal(jnp.flip(v, axis).cpu()._data, np.flip(a.transpose(2, 0, 1), axis))
    for k in (-2, 0, 3):
        assert np.array_equal(jnp.diag(_dev(a[0, 0]), k).cpu()._data, np.diag(a[0, 0], k))
    ints = np.arange(6).reshape(2, 3)
    _same(jnp.pad(_dev(ints), ((1, 2), (0, 1)), constant_values=7), np.pad(ints, ((1, 2), (0, 1)),
                                                                         constant_values=7), 0)


GRAD_FUNCS = {
    "gammaln": (jsp.gammaln, lambda r: r.uniform(0.3, 5.0, (2, 3))),
    "digamma": (jsp.digamma, lambda r: r.uniform(-2.7, 5.0, (2, 3))),
    "polygamma2": (lambda x: jsp.polygamma(2, x), lambda r: r.uniform(0.3, 5.0, (4,))),
    "t.cdf": (lambda x: jst.t.cdf(x, np.array([1.0, 2.5, 7.0])), lambda r: r.standard_normal((2, 3))),
    "cumprod-zeros": (lambda x: jnp.cumprod(x, 1), lambda r: np.array([[1.5, 0.0, 2.0], [0.0, 0.0, -1.0]])),
    "round": (lambda x: jnp.round(x, 1), lambda r: r.standard_normal((3,))),
}


@pytest.mark.parametrize("name", list(GRAD_FUNCS))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_special_gradients_on_device(name, dtype):
    fn, make = GRAD_FUNCS[name]
    op = types.SimpleNamespace(name=name, fn=fn, output=None, differentiable=True,
                               samples=lambda rng, dt: [Sample((make(rng).astype(dt),))])
    tol = dict(rtol=1e-12, atol=1e-13) if dtype == "float64" else dict(rtol=2e-6, atol=1e-6)
    check_device_matches_cpu(op, DEV, dtype, **tol)
