"""Array-API-generic code (written only against ``xp = x.__array_namespace__()`` and the 2023.12
standard's names) run on ``array_api_strict`` arrays and on jitgrad Tensors: same values, and
gradients through the jitgrad run checked against central differences in float64."""
import math

import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.testing import checks

xs = pytest.importorskip("array_api_strict")


@pytest.fixture(autouse=True, scope="module")
def _strict_2023_12():
    old = xs.get_array_api_strict_flags()["api_version"]
    xs.set_array_api_strict_flags(api_version="2023.12")
    yield
    xs.set_array_api_strict_flags(api_version=old)


def _to_np(v):
    if isinstance(v, (tuple, list)):
        return [_to_np(o) for o in v]
    if isinstance(v, jitgrad.Tensor):
        return v.numpy()
    return np.from_dlpack(v) if hasattr(v, "__dlpack__") else np.asarray(v)


# --- array-API-generic functions: nothing but xp.<standard name> and array methods ----------
def softmax(x, axis=-1):
    xp = x.__array_namespace__()
    z = x - xp.max(x, axis=axis, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=axis, keepdims=True)


def logsumexp(x, axis=-1):
    xp = x.__array_namespace__()
    m = xp.max(x, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    return xp.squeeze(m, axis=axis) + xp.log(xp.sum(xp.exp(x - m), axis=axis))


def standardize(x):
    xp = x.__array_namespace__()
    assert x.dtype == xp.float64 and xp.isdtype(x.dtype, "real floating")
    eps = xp.finfo(x.dtype).eps
    mu = xp.mean(x, axis=0, keepdims=True)
    sd = xp.std(x, axis=0, correction=1, keepdims=True)
    return (x - mu) / (sd + eps)


def ridge_normal_equations(X, y, lam=0.1):
    """Ridge regression by the normal equations, and the residual norm."""
    xp = X.__array_namespace__()
    n = X.shape[1]
    Xt = xp.matrix_transpose(X)
    A = xp.matmul(Xt, X) + lam * xp.eye(n, dtype=X.dtype)
    w = xp.linalg.solve(A, xp.matmul(Xt, y[:, None]))[:, 0]
    r = y - xp.matmul(X, w)
    return xp.concat([w, xp.reshape(xp.linalg.vector_norm(r), (1,))])


def qr_least_squares(X, y):
    """Least squares through the reduced QR: ``R w = Q^T y``."""
    xp = X.__array_namespace__()
    Q, R = xp.linalg.qr(X)
    w = xp.linalg.solve(R, xp.vecdot(xp.matrix_transpose(Q), y[None, :]))
    return xp.stack([w, xp.flip(w)], axis=1)


def shape_mix(x):
    """concat / permute_dims / take / sort / astype / cumulative_sum / unstack / broadcast."""
    xp = x.__array_namespace__()
    y = xp.permute_dims(xp.concat([x, 2.0 * x], axis=0), (1, 0))
    y = xp.take(y, xp.asarray([2, 0, 1, 2]), axis=1)
    s = xp.sort(y, axis=1, descending=True) + xp.sort(y, axis=0)
    c = xp.cumulative_sum(s, axis=1, include_initial=True)
    cols = xp.unstack(c, axis=1)
    a, b = xp.broadcast_arrays(cols[1][:, None], cols[-1][None, :])
    half = xp.astype(xp.asarray(1, dtype=xp.int64), xp.float64) / 2.0
    return xp.clip(a * b, min=-3.0, max=3.0) * half + xp.linalg.matrix_norm(c, ord="fro")


def norms_and_products(x):
    xp = x.__array_namespace__()
    v = xp.linalg.vector_norm(x, axis=(0, 1), ord=3, keepdims=True)
    m = xp.linalg.matrix_norm(x, ord="nuc")
    d = xp.linalg.vecdot(x, x, axis=-1) + xp.vecdot(x, x)
    t = xp.tensordot(x, x, axes=([0], [0]))
    return xp.concat([xp.reshape(v, (-1,)), xp.reshape(m, (1,)), d, xp.reshape(t, (-1,)),
                      xp.linalg.diagonal(t, offset=1), xp.reshape(xp.linalg.trace(t), (1,))])


def grid_energy(x):
    """meshgrid + where + pow + expand_dims + prod + var(correction=)."""
    xp = x.__array_namespace__()
    gx, gy = xp.meshgrid(x, x[:2], indexing="xy")
    e = xp.where(gx > gy, xp.pow(gx - gy, xp.full_like(gx, 2.0)), xp.sin(gx) * gy)
    e = xp.expand_dims(e, axis=0)
    return xp.concat([xp.reshape(xp.sum(e, axis=(1, 2)), (1,)),
                      xp.prod(xp.cos(x), axis=0, keepdims=True),
                      xp.var(x, axis=0, correction=1.0, keepdims=True)])


CASES = [
    ("softmax", softmax, [(3, 4)]),
    ("logsumexp", logsumexp, [(3, 4)]),
    ("standardize", standardize, [(5, 3)]),
    ("ridge", ridge_normal_equations, [(6, 3), (6,)]),
    ("qr_lstsq", qr_least_squares, [(5, 3), (5,)]),
    ("shape_mix", shape_mix, [(2, 3)]),
    ("norms", norms_and_products, [(3, 3)]),
    ("grid", grid_energy, [(3,)]),
]


@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_generic_function_matches_strict_and_differentiates(name, fn, shapes):
    rng = np.random.default_rng(len(name))
    arrays = [rng.standard_normal(s) for s in shapes]
    ref = fn(*(xs.asarray(a) for a in arrays))
    leaves = [jitgrad.tensor(a, dtype=jitgrad.float64, requires_grad=True) for a in arrays]
    assert leaves[0].__array_namespace__() is jnp
    got = fn(*leaves)
    assert got.shape == tuple(ref.shape)
    assert got.dtype == jnp.float64 and ref.dtype == xs.float64
    checks.assert_close(got, _to_np(ref), rtol=1e-10, atol=1e-12)
    checks.gradcheck(fn, leaves)


def test_softmax_and_logsumexp_gradients_closed_form():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 5))
    x = jitgrad.tensor(a, requires_grad=True)
    logsumexp(x).sum().backward()
    p = np.exp(a - a.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    checks.assert_close(x.grad, p)  # d/dx logsumexp(x) = softmax(x)


def test_namespace_metadata_and_dtypes():
    assert jnp.__array_api_version__ == "2023.12"
    t = jitgrad.tensor(np.ones((2, 3)))
    assert t.__array_namespace__() is jnp
    assert t.dtype == jnp.float64 and jnp.float64 == t.dtype and t.dtype != jnp.float32
    assert jnp.astype(t, jnp.float32).dtype == jnp.float32
    assert jnp.zeros((2,), dtype=t.dtype, device=t.device).dtype == jnp.float64
    assert jnp.finfo(t.dtype).eps == np.finfo(np.float64).eps == jnp.finfo(t).eps
    assert jnp.iinfo(jnp.int32).max == 2 ** 31 - 1
    assert jnp.isdtype(t.dtype, ("real floating", "complex floating"))
    assert not jnp.isdtype(jnp.int64, "real floating") and jnp.isdtype(jnp.int64, "integral")
    info = jnp.__array_namespace_info__()
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    assert info.default_dtypes()["real floating"] == jnp.float64
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert info.capabilities()["boolean indexing"]


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])  # complex64 exists now
def test_unsupported_standard_names_raise_helpfully(name):
    with pytest.raises(AttributeError, match=f"jitgrad.numpy has no '{name}'.*jitgrad has no"):
        getattr(jnp, name)


@pytest.mark.parametrize("name", ["eig", "eigvals"])
def test_complex_linalg_names_raise_helpfully(name):
    with pytest.raises(AttributeError, match="complex"):
        getattr(jnp.linalg, name)


def test_every_standard_name_resolves_or_raises_helpfully():
    """Each 2023.12 name of the main namespace and ``linalg`` exists in jitgrad.numpy or raises
    an AttributeError that names it (never a bare 'module has no attribute')."""
    ref = [n for n in dir(xs) if not n.startswith("_") and not n[0].isupper()
           and "flags" not in n and n not in ("linalg", "fft")]
    for n in ref + ["__array_api_version__", "__array_namespace_info__"]:
        try:
            getattr(jnp, n)
        except AttributeError as e:
            assert f"'{n}'" in str(e) and "jitgrad.numpy has no" in str(e), str(e)
    xl = xs.linalg
    for n in ("cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power "
              "matrix_rank matrix_transpose outer pinv qr slogdet solve svd svdvals tensordot "
              "trace vecdot vector_norm").split():
        assert hasattr(xl, n) and callable(getattr(jnp.linalg, n))


@pytest.mark.parametrize("axis", [0, 1])
def test_sort_argsort_descending_stable(axis):
    a = np.array([[1.0, 3.0, 1.0, 2.0], [3.0, 1.0, 1.0, 3.0], [2.0, 2.0, 0.0, 1.0]])
    for desc in (False, True):
        got = jnp.argsort(jitgrad.tensor(a), axis=axis, descending=desc)
        exp = xs.argsort(xs.asarray(a), axis=axis, descending=desc, stable=True)
        np.testing.assert_array_equal(got.numpy(), _to_np(exp))
        s = jnp.sort(jitgrad.tensor(a), axis=axis, descending=desc)
        np.testing.assert_array_equal(s.numpy(), _to_np(xs.sort(xs.asarray(a), axis=axis, descending=desc)))
    x = jitgrad.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    checks.gradcheck(lambda t: jnp.sort(t, axis=axis, descending=True), (x,))


def test_unique_family_runs_on_data_and_refuses_gradients():
    a = np.array([[2.0, 1.0, 2.0], [0.0, 1.0, 5.0]])
    for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
        got = getattr(jnp, name)(jitgrad.tensor(a))
        exp = getattr(xs, name)(xs.asarray(a))
        for g, e in zip(got if isinstance(got, tuple) else (got,), exp if isinstance(exp, tuple) else (exp,)):
            np.testing.assert_array_equal(g.numpy(), _to_np(e))
    r = jnp.unique_all(jitgrad.tensor(a))
    assert r.counts.numpy().tolist() == [1, 2, 2, 1]
    with pytest.raises(TypeError, match="not differentiable"):
        jnp.unique_values(jitgrad.tensor(a, requires_grad=True))
    with jitgrad.no_grad():
        assert jnp.unique_values(jitgrad.tensor(a, requires_grad=True)).shape == (4,)


def test_bitwise_isin_and_from_dlpack():
    i = np.array([1, 2, 12], dtype=np.int64)
    np.testing.assert_array_equal(jnp.bitwise_invert(jitgrad.tensor(i)).numpy(), ~i)
    np.testing.assert_array_equal(jnp.bitwise_left_shift(jitgrad.tensor(i), 2).numpy(), i << 2)
    np.testing.assert_array_equal(jnp.bitwise_right_shift(jitgrad.tensor(i), 1).numpy(), i >> 1)
    np.testing.assert_array_equal(jnp.isin(jitgrad.tensor(i), np.array([2, 3])).numpy(),
                                  [False, True, False])
    d = jnp.from_dlpack(np.arange(3.0))
    assert isinstance(d, jitgrad.Tensor) and d.numpy().tolist() == [0.0, 1.0, 2.0]


def test_asarray_copy_and_device_rules():
    t = jitgrad.tensor(np.arange(3.0), requires_grad=True)
    assert jnp.asarray(t) is t and jnp.asarray(t, copy=False) is t
    c = jnp.asarray(t, copy=True)
    assert c is not t and c.numpy().tolist() == [0.0, 1.0, 2.0]
    (c * c).sum().backward()
    checks.assert_close(t.grad, 2 * np.arange(3.0))
    with pytest.raises(ValueError, match="copy=False"):
        jnp.asarray([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match="device"):
        jnp.zeros((2,), device="cuda")
    assert jnp.asarray([1.0], device="cpu").shape == (1,)


def test_gradient_of_generic_code_matches_closed_form():
    """Standardize then a quadratic: d/dx sum(z * w) for z = (x - mean) / std(correction=1)."""
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    x = jitgrad.tensor(a, requires_grad=True)
    xp = x.__array_namespace__()
    z = (x - xp.mean(x, axis=0)) / xp.std(x, axis=0, correction=1)
    xp.sum(z * w).backward()
    n = a.shape[0]
    s = a.std(axis=0, ddof=1)
    zz = (a - a.mean(0)) / s
    # dz_i/dx_j = (delta_ij - 1/n) / s - z_i z_j / ((n - 1) s)
    expected = (w - w.mean(0)) / s - zz * (w * zz).sum(0) / ((n - 1) * s)
    checks.assert_close(x.grad, expected, rtol=1e-10)
    assert math.isclose(float(jnp.finfo(x).eps), np.finfo(np.float64).eps)
