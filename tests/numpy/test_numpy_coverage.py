"""Issue 19: the coverage of NumPy's functions (jitgrad/numpy/_coverage.py) and the docs table
generated from it, the pass-through utilities (values as NumPy's; an error, never a silently
cut graph, when a result would need a gradient), and NumPy's ndarray methods and operators on
Tensors. The differentiable functions' forward and gradients (orders 1 and 2) are checked by
their op-database entries (jitgrad/testing/db_numpy_more.py, run in tests/ops/test_ops.py)."""
import os

import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.numpy import _coverage, _plain
from jitgrad.testing import checks, db_numpy_more

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "numpy.md")


def test_every_jax_numpy_name_is_covered():
    counts = _coverage.counts()
    assert counts["main"]["missing"] == 0
    assert sum(counts["main"].values()) == len(_coverage.MAIN) == 343
    table = _coverage.classify()
    assert {n for n, k in table["linalg"].items() if k == "missing"} == {"eig", "eigvals"}
    assert {n for n, k in table["numpy-only"].items() if k == "missing"} == \
        {"asmatrix", "bmat", "nested_iters", "test"}
    assert len(_coverage.MAIN) + len(_coverage.NUMPY_ONLY) == 390  # NumPy 2.4's functions
    before = _coverage.BEFORE["main"]
    assert before["missing"] == 103 and sum(before.values()) == 343


def test_docs_table_is_generated():
    with open(DOCS) as fh:
        text = fh.read()
    start = text.index(_coverage.BEGIN)
    end = text.index(_coverage.END) + len(_coverage.END)
    assert text[start:end] == _coverage.markdown(), \
        "docs/numpy.md is stale: run python -m jitgrad.numpy._coverage --write docs/numpy.md"


def test_differentiable_additions_have_database_entries():
    table = _coverage.classify()["main"]
    before_missing = set(_ADDED)
    with_entries = {e.numpy_name for e in db_numpy_more.ENTRIES}
    differentiable = {n for n in before_missing if table[n] == "differentiable"}
    assert differentiable <= with_entries, sorted(differentiable - with_entries)


#: the 103 names missing before issue 19
_ADDED = """append apply_along_axis apply_over_axes array_repr array_str bartlett bitwise_count
bitwise_not blackman block choose compress convolve copy corrcoef correlate cov delete
diag_indices_from diagflat divmod ediff1d einsum_path extract fill_diagonal frexp frombuffer
fromfile fromfunction fromiter frompyfunc fromstring geomspace get_printoptions hamming hanning
histogram2d histogram_bin_edges histogramdd i0 insert interp intersect1d iterable ix_ kaiser
ldexp lexsort load mask_indices matvec median modf nanargmax nanargmin nancumprod nancumsum
nanmax nanmean nanmedian nanmin nanpercentile nanprod nanquantile nanstd nansum nanvar packbits
percentile piecewise place poly polyadd polyder polydiv polyfit polyint polymul polysub polyval
printoptions put put_along_axis quantile resize roots save savez select set_printoptions
setdiff1d setxor1d sort_complex spacing trapezoid tril_indices_from trim_zeros
triu_indices_from union1d unpackbits unwrap vander vecmat""".split()


def test_added_list_is_the_before_gap():
    assert len(_ADDED) == 103


# --- pass-throughs ------------------------------------------------------------------------------
def _x():
    return np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 1.0]])


@pytest.mark.parametrize("name, args", [
    ("histogram2d", lambda x: (x[0], x[1])), ("histogramdd", lambda x: (x.T,)),
    ("histogram_bin_edges", lambda x: (x,)), ("intersect1d", lambda x: (x[0], x[1])),
    ("setdiff1d", lambda x: (x[0], x[1])), ("setxor1d", lambda x: (x[0], x[1])),
    ("union1d", lambda x: (x[0], x[1])), ("sort_complex", lambda x: (x[0],)),
])
def test_value_passthroughs_match_numpy_and_refuse_grad(name, args):
    x = _x()
    expected = getattr(np, name)(*args(x))
    got = getattr(jnp, name)(*args(jitgrad.tensor(x)))
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        if isinstance(e, list):
            for gi, ei in zip(g, e):
                np.testing.assert_array_equal(gi.numpy(), ei)
        else:
            np.testing.assert_array_equal(g.numpy(), e)
    t = jitgrad.tensor(x, requires_grad=True)
    with pytest.raises(TypeError, match=f"jitgrad.numpy.{name} is not differentiable"):
        getattr(jnp, name)(*args(t))
    with jitgrad.no_grad():
        getattr(jnp, name)(*args(t))  # no gradient at stake: runs


@pytest.mark.parametrize("name, args", [
    ("lexsort", lambda x: ((x[0], x[1]),)), ("nanargmax", lambda x: (x,)),
    ("nanargmin", lambda x: (x, 1)), ("diag_indices_from", lambda x: (x[:, :2],)),
    ("tril_indices_from", lambda x: (x,)), ("triu_indices_from", lambda x: (x, 1)),
    ("mask_indices", lambda x: (3, np.triu)),
    ("packbits", lambda x: (np.array([1, 0, 1, 1], np.uint8),)),
    ("unpackbits", lambda x: (np.array([5], np.uint8),)),
    ("bitwise_not", lambda x: (np.array([1, 6]),)), ("bitwise_count", lambda x: (np.array([7, 8]),)),
])
def test_index_passthroughs_match_numpy(name, args):
    x = _x()
    expected = getattr(np, name)(*args(x))
    call_args = args(jitgrad.tensor(x, requires_grad=True))
    got = getattr(jnp, name)(*call_args)  # integer results
    # plain (Tensor-free) arguments give NumPy's own result (Note [plain inputs])
    kind = jitgrad.Tensor if _plain.holds_tensor(call_args) else np.ndarray
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):
        assert isinstance(g, kind)
        np.testing.assert_array_equal(g.numpy() if kind is jitgrad.Tensor else g, e)
    assert getattr(jnp, name).passthrough


def test_printing_io_and_constructors(tmp_path):
    x = jitgrad.tensor(_x())
    assert jnp.array_repr(x) == np.array_repr(_x()) and jnp.array_str(x) == np.array_str(_x())
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
    assert jnp.iterable(x) and not jnp.iterable(3)
    path = str(tmp_path / "x.npy")
    jnp.save(path, x)
    checks.assert_close(jnp.load(path), _x(), rtol=0, atol=0)
    jnp.savez(str(tmp_path / "x.npz"), a=x)
    np.testing.assert_array_equal(np.load(str(tmp_path / "x.npz"))["a"], _x())
    checks.assert_close(jnp.fromiter(range(3), float), [0.0, 1.0, 2.0])
    checks.assert_close(jnp.frombuffer(np.arange(3.0).tobytes()), [0.0, 1.0, 2.0])
    assert jnp.einsum_path("ij,jk", _x(), _x().T)[0][0] == "einsum_path"
    rows, cols = jnp.ix_([0, 1], [2, 0])
    assert rows.shape == (2, 1) and cols.tolist() == [[2, 0]]
    assert jnp.geomspace(1.0, 8.0, 4).tolist() == [1.0, 2.0, 4.0, 8.0]
    checks.assert_close(jnp.kaiser(5, 2.0), np.kaiser(5, 2.0))


def test_numpy_only_utilities(tmp_path):
    x = jitgrad.tensor(_x())
    assert jnp.array2string(x) == np.array2string(_x())
    assert jnp.binary_repr(5) == "101" and jnp.base_repr(10, 3) == "101"
    assert jnp.typename("d") == np.typename("d") and jnp.common_type(x) is np.float64
    assert jnp.geterr() == np.geterr() and not jnp.isfortran(x)
    path = str(tmp_path / "x.txt")
    jnp.savetxt(path, x)
    checks.assert_close(jnp.loadtxt(path), _x(), rtol=0, atol=0)
    assert int(jnp.busday_count("2026-01-05", "2026-01-12")) == 5
    with pytest.raises(ValueError, match="must not contain infs or NaNs"):
        jnp.asarray_chkfinite(jitgrad.tensor([1.0, np.inf]))
    t = jitgrad.tensor(_x(), requires_grad=True)
    assert jnp.asfortranarray(t) is t and jnp.require(t) is t
    m = jitgrad.tensor(_x())
    jnp.putmask(m, m.numpy() > 2, 0.0)
    checks.assert_close(m, np.where(_x() > 2, 0.0, _x()), rtol=0, atol=0)
    with pytest.raises(TypeError, match="would drop its gradient"):
        jnp.copyto(np.zeros(3), jitgrad.tensor([1.0, 2.0, 3.0], requires_grad=True))


def test_in_place_passthroughs():
    x = jitgrad.tensor(_x())
    jnp.put(x, [0, 5], [9.0, 8.0])
    jnp.place(x, x.numpy() < 1.5, -1.0)
    expected = _x()
    np.put(expected, [0, 5], [9.0, 8.0])
    np.place(expected, expected < 1.5, -1.0)
    checks.assert_close(x, expected, rtol=0, atol=0)
    with pytest.raises(TypeError, match="put writes into its array in place"):
        jnp.put(jitgrad.tensor(_x(), requires_grad=True), [0], [1.0])


# --- differentiable extras beyond the database ------------------------------------------------
def test_trim_zeros_gradient_is_the_slice():
    f = jitgrad.tensor([0.0, 0.0, 1.5, 0.0, -2.0, 0.0], requires_grad=True)
    out = jnp.trim_zeros(f)
    checks.assert_close(out, [1.5, 0.0, -2.0], rtol=0, atol=0)
    (out * jitgrad.tensor([1.0, 2.0, 3.0])).sum().backward()
    checks.assert_close(f.grad, [0.0, 0.0, 1.0, 2.0, 3.0, 0.0], rtol=0, atol=0)


def test_roots_gradient_and_its_limits():
    p = jitgrad.tensor(np.poly([-1.0, 0.5, 2.0]), requires_grad=True)
    checks.gradgradcheck(lambda q: jnp.roots(q), [p])
    with pytest.raises(TypeError, match="real, simple roots"):
        jnp.roots(jitgrad.tensor([1.0, 0.0, 1.0], requires_grad=True))  # +-i
    checks.assert_close(jnp.roots(jitgrad.tensor([1.0, 0.0, 1.0])).numpy().imag, [1.0, -1.0])


def test_in_place_writers_record_the_graph():
    a = jitgrad.tensor(np.ones((3, 3)), requires_grad=True)
    v = jitgrad.tensor([2.0, 3.0, 4.0], requires_grad=True)
    b = a * 1.0
    jnp.fill_diagonal(b, v)
    (b * jitgrad.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
    checks.assert_close(a.grad, np.arange(9.0).reshape(3, 3) * (1 - np.eye(3)), rtol=0, atol=0)
    checks.assert_close(v.grad, [0.0, 4.0, 8.0], rtol=0, atol=0)
    with pytest.raises(TypeError, match="would drop their gradient"):
        jnp.fill_diagonal(np.ones((2, 2)), v)


def test_nan_reductions_give_nan_gradients_nowhere():
    x = jitgrad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    jnp.nanmean(x).backward()
    checks.assert_close(x.grad, [0.5, 0.0, 0.5], rtol=0, atol=0)


# --- ndarray methods and operators on Tensors -------------------------------------------------
def test_operators_mod_floordiv_divmod():
    a = np.array([[5.5, -3.0], [7.0, 2.25]])
    t = jitgrad.tensor(a, requires_grad=True)
    checks.assert_close(t % 3, a % 3, rtol=0, atol=0)
    checks.assert_close(7 % t, 7 % a, rtol=0, atol=0)
    checks.assert_close(t // 2, a // 2, rtol=0, atol=0)
    checks.assert_close(2 // t, 2 // a, rtol=0, atol=0)
    q, r = divmod(t, 1.5)
    checks.assert_close(q, a // 1.5, rtol=0, atol=0)
    checks.assert_close(r, a % 1.5, rtol=0, atol=0)
    q, r = divmod(4.0, t)
    checks.assert_close(r, 4.0 % a, rtol=0, atol=0)
    i = jitgrad.tensor(np.array([7, -7]))
    assert (i // 2).tolist() == [3, -4] and (i % 3).tolist() == [1, 2]
    assert (i // 2).dtype == jitgrad.int64
    # NumPy 2's weak Python scalars: float32 stays float32, an int Tensor with a float is float64
    f32 = jitgrad.tensor([5.5, -3.0], dtype=jitgrad.float32)
    assert (f32 % 2.0).dtype == (2.0 // f32).dtype == divmod(f32, 2)[0].dtype == jitgrad.float32
    assert (i % 2.5).dtype == jitgrad.float64 and (f32 % np.float64(2)).dtype == jitgrad.float64
    y = jitgrad.tensor([1.5, 2.5], requires_grad=True)
    checks.gradcheck(lambda u, w: u % w, [t[0] + 0.1, jitgrad.tensor([1.3, 1.7], requires_grad=True)])
    (t % y).sum().backward()
    checks.assert_close(y.grad, -np.floor(a / [1.5, 2.5]).sum(0))


def test_ndarray_methods():
    a = np.array([[5.5, -3.0, 1.0], [7.0, 2.25, 0.5]])
    t = jitgrad.tensor(a, requires_grad=True)
    assert t.ravel().shape == (6,) and t.flatten("C").shape == (6,) and t.flatten().shape == (6,)
    assert t.astype(np.float32).dtype == jitgrad.float32
    assert t.astype("int64").tolist() == a.astype(np.int64).tolist()
    assert t.itemsize == 8 and t.nbytes == 48 and t.ndim == 2
    assert t.item(1) == -3.0 and t.item(1, 0) == 7.0 and t[0, 0].item() == 5.5
    checks.assert_close(t.round(1), a.round(1), rtol=0, atol=0)
    checks.assert_close(t.cumsum(), a.cumsum(), rtol=0, atol=0)
    checks.assert_close(t.cumsum(axis=1), a.cumsum(1), rtol=0, atol=0)
    checks.assert_close(t.cumprod(1), a.cumprod(1), rtol=0, atol=0)
    assert t.argsort(axis=None).tolist() == a.argsort(axis=None).tolist()
    assert t.argsort(1, "stable").tolist() == a.argsort(1, kind="stable").tolist()
    assert t.argsort(1, True).tolist() == (-a).argsort(1, kind="stable").tolist()  # PyTorch's
    checks.assert_close(t.dot(t.T), a @ a.T)
    checks.assert_close(t[0].dot(t[1]), a[0] @ a[1])
    c = t.copy()
    assert c.requires_grad and c is not t
    d = jitgrad.tensor(a)
    assert d.fill(2.0) is None and d.tolist() == [[2.0] * 3] * 2
    assert t.conj() is not None and t.real.shape == (2, 3) and t.T.shape == (3, 2)
    # the clash kept as PyTorch's: size is a method, nonzero the (N, ndim) index tensor
    assert t.size() == (2, 3) and t.numel() == 6
    assert t.nonzero().shape == (6, 2)
