"""jitgrad/kernels/cpu/reduce.py against NumPy (and brute force for prod_others).

The contract test loads a second, uncompiled copy by file path (its kernels are never called, so
nothing of it reaches the on-disk cache). Parallel
variants are exercised on small arrays by lowering the thresholds (fixture ``parallel``); a few
tests use naturally above-threshold sizes. Compilation dominates the run time: dtypes and
variants are chosen so every kernel is compiled for few signatures.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def _load(name, rel):
    spec = importlib.util.spec_from_file_location(name, REPO / rel)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# Imported under its real name: Numba's on-disk cache records the module name, so loading the
# same file under another name would leave cache entries the package cannot load.
from jitgrad.kernels.cpu import reduce as cr  # noqa: E402

RNG = np.random.default_rng(12345)
# (module, threshold): logsumexp runs softmax.py's kernel
THRESHOLDS = ((cr, "PARALLEL_MIN_SIZE"), (cr, "_PAR_MIN_ARG"), (cr, "_PAR_MIN_PO"),
              (cr.softmax, "PAR_MIN_SIZE"))
EXTREMES = ((cr.reduce_max, np.max, np.argmax), (cr.reduce_min, np.min, np.argmin))
SHAPES = [(1, 1, 1), (1, 7, 1), (6, 1, 1), (5, 1, 3), (3, 5, 4), (1, 3000, 1), (40, 33, 1),
          (2, 1500, 3), (3, 200, 70), (1, 5, 2500), (2, 130, 2100), (7, 2, 1)]


@pytest.fixture(params=[False, True], ids=["serial", "parallel"])
def parallel(request, monkeypatch):
    """Run the test with the serial variants, then with parallel ones forced on small arrays."""
    for module, name in THRESHOLDS:
        monkeypatch.setattr(module, name, 0 if request.param else 1 << 62)
    return request.param


def _only_serial_unless(parallel, dtype, *par_dtypes):
    """Parallel variants compile in ~1-2 s per dtype: test them on a few dtypes only."""
    if parallel and dtype not in par_dtypes:
        pytest.skip("parallel variant checked on other dtypes (compile-time budget)")


def _data(shape, dtype):
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if dtype == np.int64:
        return RNG.integers(-9, 10, shape).astype(np.int64)
    return RNG.standard_normal(shape).astype(dtype)


def _fresh(res, x):
    assert res.flags.c_contiguous and not np.shares_memory(res, x)


def _sum_tol(x, dtype):
    """Absolute tolerance for a float sum: a few ulps of sum |x| (cancellation-proof)."""
    eps = np.finfo(dtype).eps
    return 4 * eps * max(1.0, float(np.abs(x.astype(np.float64)).sum(axis=1).max(initial=0)))


# ---------------------------------------------------------------- sum / prod
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_sum_matches_numpy(shape, dtype, parallel):
    _only_serial_unless(parallel, dtype, np.float64, np.float32, np.int64)
    x = _data(shape, dtype)
    res = cr.reduce_sum(x)
    _fresh(res, x)
    if dtype in (np.float32, np.float64):
        assert res.dtype == dtype
        ref = x.astype(np.float64).sum(axis=1)
        np.testing.assert_allclose(res, ref, rtol=0, atol=_sum_tol(x, dtype))
    else:
        assert res.dtype == np.int64
        np.testing.assert_array_equal(res, x.sum(axis=1, dtype=np.int64))


def test_sum_serial_and_parallel_are_bitwise_equal(monkeypatch):
    """Fixed blocking: the parallel result does not depend on the split."""
    for shape in [(1, 300_000, 1), (3, 5000, 1), (2, 3000, 70)]:
        for dtype in (np.float64, np.float32):
            x = _data(shape, dtype)
            monkeypatch.setattr(cr, "PARALLEL_MIN_SIZE", 1 << 62)
            ser = cr.reduce_sum(x)
            monkeypatch.setattr(cr, "PARALLEL_MIN_SIZE", 0)
            np.testing.assert_array_equal(cr.reduce_sum(x), ser)


KERNELS = {"sum": cr.reduce_sum, "prod": cr.reduce_prod, "max": lambda x: cr.reduce_max(x),
           "min": lambda x: cr.reduce_min(x), "logsumexp": cr.reduce_logsumexp,
           "var": cr.reduce_var, "prod_others": cr.prod_others}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_kernel_serial_and_parallel_are_bitwise_equal(name, monkeypatch):
    """Every kernel, not only sum: the parallel copy gives the serial copy's bits. (logsumexp's
    exp fold differed by 1 ulp in 11 of 400 rows with fast-math reassociation: Note [short
    slices] in kernels/cpu/softmax.py.)"""
    for shape in [(400, 300, 1), (1, 5000, 1), (3, 2100, 1), (2, 300, 70), (5, 64, 2100)]:
        for dtype in (np.float64, np.float32):
            x = _data(shape, dtype) * (0.1 if name in ("prod", "prod_others") else 5.0)
            x = x.astype(dtype)
            for module, threshold in THRESHOLDS:
                monkeypatch.setattr(module, threshold, 1 << 62)
            serial = KERNELS[name](x)
            for module, threshold in THRESHOLDS:
                monkeypatch.setattr(module, threshold, 0)
            parallel = KERNELS[name](x)
            serial, parallel = (r if isinstance(r, tuple) else (r,) for r in (serial, parallel))
            for a, b in zip(serial, parallel):  # (max/min: values and indices)
                np.testing.assert_array_equal(a, b, err_msg=f"{name} {shape} {dtype.__name__}")


def _reduction_like_ops():
    import jitgrad
    import jitgrad.numpy as jnp

    return {
        "sum": lambda x: jitgrad.sum(x), "sum_dim0": lambda x: jitgrad.sum(x, 0),
        "sum_dim1": lambda x: jitgrad.sum(x, 1), "sum_dims": lambda x: jitgrad.sum(x, (0, 1)),
        "mean_dim1": lambda x: jitgrad.mean(x, 1), "mean_dim0": lambda x: jitgrad.mean(x, 0),
        "prod_dim1": lambda x: jitgrad.prod(x * 0.1 + 1.0, 1),
        "amax_dim1": lambda x: jitgrad.amax(x, 1),
        "var_dim1": lambda x: jitgrad.var(x, 1), "std_dim0": lambda x: jitgrad.std(x, 0),
        "var_all": lambda x: jitgrad.var(x),
        "logsumexp_dim1": lambda x: jitgrad.logsumexp(x, 1),
        "logsumexp_dim0": lambda x: jitgrad.logsumexp(x, 0),
        "softmax_dim1": lambda x: jitgrad.softmax(x, 1),
        "log_softmax_dim0": lambda x: jitgrad.log_softmax(x, 0),
        "norm_fro": lambda x: jnp.linalg.norm(x),
        "norm_axis1": lambda x: jnp.linalg.norm(x, axis=1),
        "norm_ord1_axis0": lambda x: jnp.linalg.norm(x, ord=1, axis=0),
        "cumsum_axis1": lambda x: jnp.cumsum(x, axis=1),
        "cumprod_axis0": lambda x: jnp.cumprod(x * 0.01 + 1.0, axis=0),
    }


def _forward_backward(f, x0, weights_seed=7):
    import jitgrad

    x = jitgrad.tensor(x0, requires_grad=True)
    out = f(x)
    weights = np.random.default_rng(weights_seed).standard_normal(out.shape).astype(x0.dtype)
    (out * jitgrad.tensor(weights)).sum().backward()
    return out.detach().numpy().copy(), x.grad.numpy().copy()


@pytest.mark.parametrize("lowered", [False, True], ids=["thresholds", "forced_parallel"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reduction_like_ops_bitwise_equal_for_any_thread_count(dtype, lowered, monkeypatch):
    """The documented promise (docs/design.md, Reductions): forward and backward of every
    reduction-like op give the same bits with 1 and 2 kernel threads, at the real thresholds
    (a (400, 300) input runs logsumexp's parallel variant) and with every threshold at 0."""
    import jitgrad
    from jitgrad.kernels.cpu import elementwise as cpu

    if lowered:
        for module, threshold in THRESHOLDS:
            monkeypatch.setattr(module, threshold, 0)
        monkeypatch.setattr(cpu, "PARALLEL_MIN_BYTES", 0)
    x0 = (_data((400, 300), dtype) * 5.0).astype(dtype)
    before = jitgrad.get_num_threads()
    wrong = []
    try:
        for name, f in _reduction_like_ops().items():
            results = []
            for threads in (1, 2):
                jitgrad.set_num_threads(threads)
                results.append(_forward_backward(f, x0))
            for what, one, two in zip(("forward", "backward"), *results):
                if not np.array_equal(one, two, equal_nan=True):
                    wrong.append(f"{name} {what}: {(one != two).sum()} of {one.size} differ")
    finally:
        jitgrad.set_num_threads(before)
    assert not wrong, wrong


@pytest.mark.parametrize("shape", [(1, 1_000_000, 1), (1, 500_000, 2), (4, 250_000, 1)])
def test_float32_sum_accuracy(shape):
    x = RNG.random(shape, dtype=np.float32)
    res = cr.reduce_sum(x)                        # above the threshold: the parallel variant
    ref = x.astype(np.float64).sum(axis=1)
    assert res.dtype == np.float32
    np.testing.assert_allclose(res, ref, rtol=1e-6)  # brief: 1e-5; pairwise gives ~1e-7


def test_sum_edge_cases():
    np.testing.assert_array_equal(cr.reduce_sum(np.zeros((3, 0, 2))), np.zeros((3, 2)))
    assert cr.reduce_sum(np.zeros((0, 4, 2))).shape == (0, 2)
    assert cr.reduce_sum(np.zeros((2, 4, 0), np.float32)).shape == (2, 0)
    assert cr.reduce_sum(np.ones((2, 0, 2), bool)).dtype == np.int64
    x = np.array([[[1.0, -np.inf], [np.nan, np.inf]]])
    np.testing.assert_array_equal(cr.reduce_sum(x), [[np.nan, np.nan]])
    i32 = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    res = cr.reduce_sum(i32)
    assert res.dtype == np.int64
    np.testing.assert_array_equal(res, i32.sum(axis=1))
    f = _data((3, 40, 5), np.float32)
    np.testing.assert_allclose(cr.reduce_sum(f, out_dtype=np.float64),
                               f.astype(np.float64).sum(axis=1), rtol=1e-13)
    t = np.asfortranarray(_data((4, 30, 6), np.float64))   # non-contiguous input is copied
    np.testing.assert_allclose(cr.reduce_sum(t), t.sum(axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 9, 1), (2, 1500, 1), (4, 7, 5), (2, 130, 30)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_prod_matches_numpy(shape, dtype, parallel):
    _only_serial_unless(parallel, dtype, np.float64)
    x = RNG.uniform(0.5, 1.5, shape) if dtype == np.float64 else RNG.integers(-2, 3, shape)
    x = x.astype(dtype)
    res = cr.reduce_prod(x)
    _fresh(res, x)
    assert res.dtype == dtype
    np.testing.assert_allclose(res, x.prod(axis=1), rtol=1e-12)


def test_prod_edge_cases():
    np.testing.assert_array_equal(cr.reduce_prod(np.zeros((2, 0, 3))), np.ones((2, 3)))
    b = np.array([[[True], [False]], [[True], [True]]])
    res = cr.reduce_prod(b)
    assert res.dtype == np.int64
    np.testing.assert_array_equal(res, [[0], [1]])
    assert cr.reduce_prod(np.ones((0, 3, 3), np.float32)).shape == (0, 3)


# ---------------------------------------------------------------- max / min
@pytest.mark.parametrize("shape", SHAPES + [(2, 9000, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_max_min_match_numpy(shape, dtype, parallel):
    _only_serial_unless(parallel, dtype, np.float64)
    x = _data(shape, dtype)
    if dtype == np.float64:
        x = np.round(x, 1)                       # many ties: the first occurrence must win
    for fn, ref_v, ref_i in EXTREMES:
        if fn is cr.reduce_min and dtype in (np.float32, np.bool_):
            continue
        vals, idx = fn(x)
        _fresh(vals, x)
        assert vals.dtype == x.dtype and idx.dtype == np.int64 and idx.flags.c_contiguous
        np.testing.assert_array_equal(vals, ref_v(x, axis=1))
        np.testing.assert_array_equal(idx, ref_i(x, axis=1))


@pytest.mark.parametrize("shape", [(1, 20, 1), (2, 9000, 1), (3, 20, 4), (2, 300, 2100)])
def test_max_min_nan_inf_and_ties(shape, parallel):
    x = np.round(_data(shape, np.float64), 1)
    o, r, i = shape
    x[0, r // 3, :] = np.nan                      # NaN in outer 0 ...
    x[0, r // 2, :] = np.nan                      # ... twice: the first NaN's index
    x[-1, r - 1, :] = np.inf
    x[-1, 1, :] = -np.inf
    x[-1, 0, :] = 5.0                             # ties with ...
    x[-1, 2, :] = 5.0                             # ... a later equal value
    for fn, ref_v, ref_i in EXTREMES:
        vals, idx = fn(x)
        np.testing.assert_array_equal(vals, ref_v(x, axis=1))
        np.testing.assert_array_equal(idx, ref_i(x, axis=1))
    vals, idx = cr.reduce_max(x)
    assert np.isnan(vals[0]).all() and (idx[0] == r // 3).all()


def test_max_min_nan_at_first_and_last_position():
    x = np.array([np.nan, 1.0, 2.0, np.nan, 3.0]).reshape(1, 5, 1)
    assert cr.reduce_max(x)[1][0, 0] == 0 and cr.reduce_min(x)[1][0, 0] == 0
    y = np.arange(5.0)[::-1].copy()
    y[4] = np.nan
    v, i = cr.reduce_min(y.reshape(1, 5, 1))
    assert np.isnan(v[0, 0]) and i[0, 0] == 4
    allnan = np.full((1, 5000, 1), np.nan)
    v, i = cr.reduce_max(allnan)
    assert np.isnan(v[0, 0]) and i[0, 0] == 0


def test_max_min_zero_elements():
    for fn in (cr.reduce_max, cr.reduce_min):
        for shape in [(2, 0, 3), (0, 0, 3)]:
            with pytest.raises(ValueError, match="zero elements"):
                fn(np.zeros(shape))
        vals, idx = fn(np.zeros((0, 3, 2)))
        assert vals.shape == (0, 2) and idx.shape == (0, 2) and idx.dtype == np.int64


def test_max_above_natural_threshold():
    x = _data((3, 100_000, 1), np.float64)
    x[1, 77_777, 0] = np.nan
    vals, idx = cr.reduce_max(x)
    np.testing.assert_array_equal(vals, x.max(axis=1))
    np.testing.assert_array_equal(idx, x.argmax(axis=1))


# ---------------------------------------------------------------- logsumexp
def _lse_ref(x):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (np.log(np.exp(x - m).sum(axis=1, keepdims=True)) + m)[:, 0]
        mm = m[:, 0]
    bad = ~np.isfinite(mm)
    out[bad] = mm[bad]
    return out


@pytest.mark.parametrize("shape", [(1, 1, 1), (4, 9, 1), (1, 3000, 1), (3, 6, 5), (2, 200, 70)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logsumexp(shape, dtype, parallel):
    _only_serial_unless(parallel, dtype, np.float64)
    x = (RNG.standard_normal(shape) * 30).astype(dtype)
    res = cr.reduce_logsumexp(x)
    _fresh(res, x)
    assert res.dtype == dtype
    np.testing.assert_allclose(res, _lse_ref(x), rtol=1e-13 if dtype == np.float64 else 1e-6)


def test_logsumexp_special_values():
    x = np.zeros((5, 4, 2))
    x[0] = -np.inf                                 # all -inf -> -inf
    x[1, 2, :] = np.inf                            # +inf -> +inf
    x[2, 1, :] = np.nan                            # NaN -> NaN
    x[3, 1, :] = np.inf
    x[3, 3, :] = np.nan                            # NaN beats +inf
    x[4, :2, :] = -np.inf                          # some -inf: ignored
    res = cr.reduce_logsumexp(x)
    assert (res[0] == -np.inf).all() and (res[1] == np.inf).all()
    assert np.isnan(res[2]).all() and np.isnan(res[3]).all()
    np.testing.assert_allclose(res[4], np.log(2.0), rtol=1e-15)
    np.testing.assert_allclose(cr.reduce_logsumexp(np.full((1, 3, 1), 1e308)),
                               [[1e308 + np.log(3.0)]], rtol=1e-15)   # no overflow
    np.testing.assert_array_equal(cr.reduce_logsumexp(np.zeros((2, 0, 3))),
                                  np.full((2, 3), -np.inf))
    with pytest.raises(TypeError):
        cr.reduce_logsumexp(np.ones((1, 2, 1), np.int64))


# ---------------------------------------------------------------- var
@pytest.mark.parametrize("shape", [(1, 2, 1), (4, 9, 1), (1, 3000, 1), (3, 6, 5), (2, 200, 70)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("correction", [0, 1])
def test_var(shape, dtype, correction, parallel):
    _only_serial_unless(parallel, dtype, np.float64)
    x = (RNG.standard_normal(shape) + 100).astype(dtype)   # offset: a one-pass formula would fail
    res = cr.reduce_var(x, correction)
    _fresh(res, x)
    assert res.dtype == dtype
    ref = np.var(x.astype(np.float64), axis=1, ddof=correction)
    np.testing.assert_allclose(res, ref, rtol=1e-11 if dtype == np.float64 else 2e-4)


def test_var_degenerate():
    with np.errstate(all="ignore"):
        assert np.isnan(cr.reduce_var(np.ones((2, 1, 3)), 1)).all()
        assert np.isnan(cr.reduce_var(np.ones((2, 2, 3)), 5)).all()
        assert np.isnan(cr.reduce_var(np.ones((2, 0, 3)), 0)).all()
    np.testing.assert_array_equal(cr.reduce_var(np.ones((2, 1, 3)), 0), np.zeros((2, 3)))
    assert cr.reduce_var(np.ones((0, 4, 3), np.float32), 1).shape == (0, 3)
    with pytest.raises(TypeError):
        cr.reduce_var(np.ones((1, 2, 1), np.int64), 1)


# ---------------------------------------------------------------- prod_others
def _prod_others_ref(x):
    out = np.empty(x.shape, np.result_type(x.dtype, np.int64) if x.dtype.kind in "bi" else x.dtype)
    for i in range(x.shape[1]):
        out[:, i, :] = np.prod(np.delete(x, i, axis=1), axis=1)
    return out


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 1), (2, 7, 4), (1, 40, 2100), (40, 6, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_prod_others(shape, dtype, parallel):
    _only_serial_unless(parallel, dtype, np.float64)
    if dtype == np.bool_:
        x = RNG.random(shape) < 0.8
    elif dtype == np.int64:
        x = RNG.integers(-3, 4, shape)
    else:
        x = RNG.uniform(0.8, 1.25, shape).astype(dtype)
        flat = x.reshape(-1)
        flat[RNG.integers(0, flat.size, max(1, flat.size // 10))] = 0   # zeros: no division
    res = cr.prod_others(x)
    _fresh(res, x)
    assert res.shape == x.shape
    ref = _prod_others_ref(x)
    assert res.dtype == ref.dtype
    if dtype in (np.int64, np.bool_):
        np.testing.assert_array_equal(res, ref)
    else:
        np.testing.assert_allclose(res, ref, rtol=1e-13 if dtype == np.float64 else 1e-5)


def test_prod_others_zeros_exact():
    x = np.array([2.0, 0.0, 3.0, 4.0]).reshape(1, 4, 1)
    np.testing.assert_array_equal(cr.prod_others(x)[0, :, 0], [0.0, 24.0, 0.0, 0.0])
    x[0, 3, 0] = 0.0                                            # two zeros: all zero
    np.testing.assert_array_equal(cr.prod_others(x)[0, :, 0], [0.0, 0.0, 0.0, 0.0])
    assert cr.prod_others(np.ones((2, 0, 3))).shape == (2, 0, 3)


# ---------------------------------------------------------------- module contract
def test_nothing_compiles_at_import():
    # a fresh copy inside the package, so its relative imports resolve
    fresh = _load("jitgrad.kernels.cpu._reduce_fresh", "jitgrad/kernels/cpu/reduce.py")
    disps = [d for k in ("_K_SUM", "_K_PROD", "_K_SQ", "_K_MAX", "_K_MIN")
             for pair in getattr(fresh, k) for d in pair] + list(fresh._K_PO)
    assert len(disps) == 22 and all(not d.signatures for d in disps)
    assert all(d.targetoptions["nogil"] for d in disps)
    # disk-cached (Note [healing cache] in kernels/cpu/kernel_cache.py: Numba's cache, healing)
    assert all(type(d._cache).__name__ == "HealingCache" for d in disps)


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        cr.reduce_sum(np.ones((2, 3)))
    with pytest.raises(TypeError):
        cr.reduce_sum(np.ones((2, 3, 1), np.complex128))
