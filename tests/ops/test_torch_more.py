"""PyTorch's functions of the torch_* families (issue 35): values against PyTorch's, pinned in
``_pinned_torch_more.py`` (``_torch_more_cases.py`` writes it with torch installed), gradients
of the compositions the op database does not cover against finite differences (orders 1 and
2), vmap of the rows, the random functions' reproducibility and distributions, and errors.
The rows' forward, gradients, jvp and compile are checked by the op database
(``jitgrad/testing/db_torch_more.py``)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

import jitgrad
from jitgrad.autograd import gradcheck, gradgradcheck
from jitgrad.ops import (torch_extra, torch_index, torch_math, torch_random, torch_reduce,
                         torch_windows)

from _pinned_torch_more import VALUES
from _torch_more_cases import CASES, inf, nan

FAMILIES = (torch_math, torch_reduce, torch_index, torch_random, torch_windows, torch_extra)
# jitgrad's namespace (jitgrad/__init__.py exports the families' FUNCTIONS); a function it does
# not export is taken from its family, so the values are checked either way
M = SimpleNamespace(**{n: getattr(jitgrad, n) for n in dir(jitgrad) if not n.startswith("_")})
for _family in FAMILIES:
    for _fn in _family.FUNCTIONS:
        if not hasattr(M, _fn.__name__):
            setattr(M, _fn.__name__, _fn)


def test_the_families_functions_are_exported():
    missing = [fn.__name__ for family in FAMILIES for fn in family.FUNCTIONS
               if not hasattr(jitgrad, fn.__name__)]
    assert not missing, missing


def t(v):
    return jitgrad.tensor(v, dtype=jitgrad.float64)


def ti(v):
    return jitgrad.tensor(v, dtype=jitgrad.int64)


def tf(v):
    return jitgrad.tensor(v, dtype=jitgrad.float32)


def _plain(r):
    if isinstance(r, (tuple, list)):
        return [_plain(v) for v in r]
    return (str(r.dtype).split(".")[-1], list(r.shape), r.tolist())


#: looser relative tolerances, with the reason
RTOL = {"polygamma_": (1e-8, "PyTorch's trigamma(0.5) is 4.934802202; the exact value "
                             "pi^2 / 2 = 4.934802200544679 is jitgrad's")}


def _compare(got, want, name):
    if isinstance(want, list) and want and isinstance(want[0], (tuple, list)) and len(
            want[0]) == 3 and isinstance(want[0][0], str):
        assert isinstance(got, list) and len(got) == len(want), (name, got)
        for g, w in zip(got, want):
            _compare(g, w, name)
        return
    dtype, shape, values = want
    assert got[0] == dtype, (name, got[0], dtype)
    assert got[1] == shape, (name, got[1], shape)
    rtol = RTOL.get(name, (1e-10,))[0]
    np.testing.assert_allclose(np.asarray(got[2]), np.asarray(values), rtol=rtol, atol=1e-12,
                               err_msg=name)


def test_every_case_is_pinned():
    assert set(CASES) == set(VALUES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    got = eval(CASES[name], {"M": M, "t": t, "ti": ti, "tf": tf, "nan": nan, "inf": inf,
                             "math": math})
    _compare(_plain(got), VALUES[name], name)


def test_named_tuples():
    x = t([[3., 1, 2], [0, 5, 4]])
    assert type(M.cummax(x, 1)).__name__ == "cummax"
    values, indices = M.kthvalue(x, 2)
    assert M.kthvalue(x, 2).values is not None and indices.dtype == jitgrad.int64
    assert M.aminmax(x)._fields == ("min", "max")
    assert M.frexp(x)._fields == ("mantissa", "exponent")
    assert M.histogram(x, bins=3)._fields == ("hist", "bin_edges")
    assert M.mode(x)._fields == M.nanmedian(x, 0)._fields == ("values", "indices")


def test_methods():
    x = t([[1., -2], [3, 4]])
    np.testing.assert_allclose(x.addcmul(x, x, value=2).tolist(), [[3., 6], [21, 36]])
    assert x.cummax(0).indices.tolist() == [[0, 0], [1, 1]]
    assert x.frac().tolist() == [[0.0, -0.0], [0.0, 0.0]]
    assert x.count_nonzero().item() == 4
    assert x.fliplr().tolist() == [[-2., 1], [4, 3]]
    assert x.masked_select(x > 0).tolist() == [1., 3, 4]
    np.testing.assert_allclose(x.polygamma(1).tolist()[0][0], 1.6449340668482264)
    assert [p.tolist() for p in x.tensor_split(2, 1)] == [[[1.], [3]], [[-2.], [4]]]


# --- gradients of the compositions (orders 1 and 2) -------------------------------------------
def _x(*shape, seed=0, low=None):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) if low is None else rng.uniform(low, low + 1.5, shape)
    return jitgrad.tensor(data, requires_grad=True)


GRAD_CASES = {
    "atleast_3d": (lambda a: M.atleast_3d(a), (_x(3),)),
    "dstack": (lambda a, b: M.dstack([a, b]), (_x(2, 3), _x(2, 3, seed=1))),
    "column_stack": (lambda a, b: M.column_stack([a, b]), (_x(3), _x(3, 2, seed=1))),
    "meshgrid_xy": (lambda a, b: M.meshgrid(a, b, indexing="xy"), (_x(2), _x(3, seed=1))),
    "cartesian_prod": (lambda a, b: M.cartesian_prod(a, b), (_x(2), _x(3, seed=1))),
    "combinations": (lambda a: M.combinations(a, 3), (_x(4),)),
    "block_diag": (lambda a, b: M.block_diag(a, b), (_x(2, 2), _x(1, 3, seed=1))),
    "broadcast_tensors": (lambda a, b: M.broadcast_tensors(a, b), (_x(3), _x(2, 1, seed=1))),
    "diagonal_scatter": (lambda a, b: M.diagonal_scatter(a, b, -1), (_x(3, 3), _x(2, seed=1))),
    "select_scatter": (lambda a, b: M.select_scatter(a, b, 0, 1), (_x(3, 2), _x(2, seed=1))),
    "slice_scatter": (lambda a, b: M.slice_scatter(a, b, 1, 1, 3), (_x(2, 4), _x(2, 2, seed=1))),
    "index_fill_tensor": (lambda a, v: M.index_fill(a, 0, ti([1]), v), (_x(3, 2), _x(seed=1))),
    "diagflat": (lambda a: M.diagflat(a, -1), (_x(2, 2),)),
    "take_along_dim_flat": (lambda a: M.take_along_dim(a, ti([3, 0, 3])), (_x(2, 2),)),
    "rot90": (lambda a: M.rot90(a, 3, (1, 2)), (_x(2, 3, 2),)),
    "inner": (lambda a, b: M.inner(a, b), (_x(2, 3), _x(4, 3, seed=1))),
    "vdot": (lambda a, b: M.vdot(a, b), (_x(3), _x(3, seed=1))),
    "mv": (lambda a, b: M.mv(a, b), (_x(2, 3), _x(3, seed=1))),
    "cdist_p1": (lambda a, b: M.cdist(a, b, p=1), (_x(2, 3), _x(4, 3, seed=1))),
    "cdist_pinf": (lambda a, b: M.cdist(a, b, p=float("inf")), (_x(2, 3), _x(4, 3, seed=1))),
    "addr": (lambda a, u, v: M.addr(a, u, v, beta=0.5, alpha=2),
             (_x(2, 3), _x(2, seed=1), _x(3, seed=2))),
    "addbmm": (lambda a, b, c: M.addbmm(a, b, c, alpha=0.5),
               (_x(2, 2), _x(3, 2, 4, seed=1), _x(3, 4, 2, seed=2))),
    "std_mean": (lambda a: M.std_mean(a, 1), (_x(2, 4),)),
    "var_mean": (lambda a: M.var_mean(a, None, correction=0), (_x(2, 4),)),
    "lgamma": (lambda a: M.lgamma(a), (_x(3, low=0.5),)),
    "digamma": (lambda a: M.digamma(a), (_x(3, low=0.5),)),
    "polygamma": (lambda a: M.polygamma(1, a), (_x(3, low=0.5),)),
    "erfc": (lambda a: M.erfc(a), (_x(3),)),
    "erfinv": (lambda a: M.erfinv(a * 0.3), (_x(3),)),
    "i0": (lambda a: M.i0(a), (_x(3),)),
    "igamma": (lambda a: M.igamma(t([0.5, 2, 3]), a), (_x(3, low=0.5),)),
    "igammac": (lambda a: M.igammac(t([0.5, 2, 3]), a), (_x(3, low=0.5),)),
    "sgn": (lambda a: M.sgn(a) * a, (_x(3),)),
    "rsub": (lambda a, b: M.rsub(a, b, alpha=3), (_x(3), _x(3, seed=1))),
    "trapz_x": (lambda y, x: M.trapz(y, x, dim=0), (_x(4, 2), _x(4, seed=1))),
    "cumulative_trapezoid_x": (lambda y, x: M.cumulative_trapezoid(y, x),
                               (_x(2, 4), _x(4, seed=1))),
    "renorm_p1": (lambda a: M.renorm(a, 1, 1, 0.5), (_x(3, 2),)),
    "unbind_copy": (lambda a: M.unbind_copy(a, 1), (_x(2, 3),)),
    "split_with_sizes_copy": (lambda a: M.split_with_sizes_copy(a, [1, 2], 1), (_x(2, 3),)),
    "permute_copy": (lambda a: M.permute_copy(a, (1, 0)), (_x(2, 3),)),
    "narrow_copy": (lambda a: M.narrow_copy(a, 0, 1, 1), (_x(2, 3),)),
    "as_strided_copy": (lambda a: M.as_strided_copy(a, (3, 2), (1, 1)), (_x(4),)),
    "as_strided_scatter": (lambda a, b: M.as_strided_scatter(a, b, (2,), (2,), 1),
                           (_x(5), _x(2, seed=1))),
    "clamp_min": (lambda a: M.clamp_min(a, 0.1), (_x(4),)),
    "msort": (lambda a: M.msort(a), (_x(3, 2),)),
    "vander": (lambda a: M.vander(a, 4), (_x(3),)),
    "gradient": (lambda a: M.gradient(a, spacing=[0.5, 2.0], edge_order=2), (_x(3, 4),)),
    "chain_matmul": (lambda a, b, c: M.chain_matmul(a, b, c),
                     (_x(2, 3), _x(3, 3, seed=1), _x(3, 1, seed=2))),
    "pdist": (lambda a: M.pdist(a), (_x(4, 3),)),
    "index_reduce_prod": (lambda a, s: M.index_reduce(a, 0, ti([0, 2, 0]), s, "prod"),
                          (_x(3, 2), _x(3, 2, seed=1))),
    "index_reduce_mean": (lambda a, s: M.index_reduce(a, 1, ti([1, 1]), s, "mean"),
                          (_x(2, 3), _x(2, 2, seed=1))),
    "view_as_real_copy": (lambda a, b: M.view_as_real_copy(M.complex(a, b)),
                          (_x(2), _x(2, seed=1))),
    "addcmul_": (lambda a, b: a.clone().addcmul_(b, b, value=0.5), (_x(3), _x(3, seed=1))),
    "lgamma_": (lambda a: (a * 1.0).lgamma_(), (_x(3, low=0.5),)),
    "renorm_": (lambda a: (a * 1.0).renorm_(2, 1, 0.7), (_x(2, 3),)),
    "polar_real": (lambda r, th: M.real(M.polar(r, th)) + M.imag(M.polar(r, th)) * 2,
                   (_x(3, low=0.5), _x(3, seed=1))),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients(name):
    fn, inputs = GRAD_CASES[name]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_cdist_gradient_is_zero_at_zero_distance():
    a = t([[0., 1]]).requires_grad_(True)
    d = M.cdist(a, t([[0., 1], [3, 5]]))
    d.sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), [[-0.6, -0.8]])  # only the nonzero distance


def test_xlogy_gradient_at_zero():
    x = t([0., 2]).requires_grad_(True)
    y = t([3., 4]).requires_grad_(True)
    M.xlogy(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [0.0, math.log(4)])  # PyTorch's xlogy(x != 0, y)
    np.testing.assert_allclose(y.grad.tolist(), [0.0, 0.5])


def test_fmax_gradient_goes_to_the_non_nan_input():
    x = t([1., nan, 3]).requires_grad_(True)
    y = t([2., 2, nan]).requires_grad_(True)
    M.fmax(x, y).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0] and y.grad.tolist() == [1.0, 1.0, 0.0]


def test_cummax_gradient_accumulates_on_repeated_indices():
    x = t([1., 3, 2, 2]).requires_grad_(True)
    M.cummax(x, 0).values.sum().backward()
    assert x.grad.tolist() == [1.0, 3.0, 0.0, 0.0]


def test_logcumsumexp_large_values_have_finite_gradients():
    x = t([1000., 1000, -1000]).requires_grad_(True)
    out = M.logcumsumexp(x, 0)
    (out * t([1., -2, 3])).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [1.0 - 1.0 + 1.5, -1.0 + 1.5, 0.0], atol=1e-12)


# --- vmap of the rows -------------------------------------------------------------------------
def test_vmap_of_rows_equals_a_loop():
    vmap = jitgrad.func.vmap
    a, b, c = _x(4, 3).detach(), _x(3, seed=1).detach(), _x(4, 2, 1, seed=2).detach()
    got = vmap(lambda u, w: M.addcmul(b, u, w, value=2))(a, c)
    want = [M.addcmul(b, a[i], c[i], value=2).tolist() for i in range(4)]
    np.testing.assert_allclose(got.tolist(), want, rtol=1e-12)
    got = vmap(lambda u: M.logcumsumexp(u, 0))(a)
    np.testing.assert_allclose(got.tolist(), [M.logcumsumexp(a[i], 0).tolist() for i in range(4)])
    values, indices = vmap(lambda u: M.cummin(u, 0))(a)
    assert indices.tolist() == [M.cummin(a[i], 0).indices.tolist() for i in range(4)]
    got = vmap(lambda u: M.kthvalue(u, 2).values)(a)
    np.testing.assert_allclose(got.tolist(), [M.kthvalue(a[i], 2).values.item() for i in range(4)])
    got = vmap(lambda u: M.frexp(u).mantissa)(a)
    np.testing.assert_allclose(got.tolist(), np.frexp(a.numpy())[0])


def test_vmap_of_host_functions_is_refused_clearly():
    with pytest.raises(jitgrad.func.BatchingRuleError, match="vmap: .*bincount"):
        jitgrad.func.vmap(M.bincount)(ti([[0, 1, 1], [2, 2, 0]]))


# --- random functions ---------------------------------------------------------------------------
def test_random_functions_are_reproducible():
    x = t([[0.2, 0.7], [0.5, 0.9]])

    def draw():
        return [M.rand_like(x), M.randn_like(x), M.randint_like(x, 3, 9), M.randperm(7),
                M.bernoulli(x), M.multinomial(x, 2), M.normal(x, 2.0), M.poisson(x * 5),
                M.normal(1.0, 2.0, (3,))]

    jitgrad.manual_seed(5)
    first = [d.tolist() for d in draw()]
    jitgrad.manual_seed(5)
    assert first == [d.tolist() for d in draw()]
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    assert M.randperm(9, generator=g1).tolist() == M.randperm(9, generator=g2).tolist()
    if hasattr(jitgrad, "Generator"):  # (PyTorch's generator object)
        g1, g2 = jitgrad.Generator().manual_seed(4), jitgrad.Generator().manual_seed(4)
        assert (M.multinomial(x, 2, generator=g1).tolist()
                == M.multinomial(x, 2, generator=g2).tolist())
        assert M.rand_like(x, generator=g1).tolist() == M.rand_like(x, generator=g2).tolist()


def test_random_shapes_dtypes_and_ranges():
    jitgrad.manual_seed(0)
    x = tf([[1., 2, 3], [4, 5, 6]])
    r = M.rand_like(x)
    assert r.dtype == jitgrad.float32 and r.shape == (2, 3) and 0 <= r.min() and r.max() < 1
    assert M.randn_like(x, dtype=jitgrad.float64).dtype == jitgrad.float64
    k = M.randint_like(x, 4)
    assert k.dtype == jitgrad.float32 and set(k.tolist()[0] + k.tolist()[1]) <= {0., 1, 2, 3}
    p = M.randperm(50)
    assert p.dtype == jitgrad.int64 and sorted(p.tolist()) == list(range(50))


def test_random_distributions():
    jitgrad.manual_seed(1)
    probs = t([0.0, 1.0, 0.3]).expand(20000, 3)
    b = M.bernoulli(probs).numpy()
    assert b[:, 0].sum() == 0 and b[:, 1].sum() == 20000 and abs(b[:, 2].mean() - 0.3) < 0.02
    n = M.normal(t([1., -2]).expand(20000, 2), t([0.5, 2])).numpy()
    np.testing.assert_allclose(n.mean(0), [1, -2], atol=0.05)
    np.testing.assert_allclose(n.std(0), [0.5, 2], rtol=0.03)
    assert abs(M.poisson(t([4.]).expand(20000)).numpy().mean() - 4) < 0.1
    w = t([[0., 1, 3], [5, 0, 0]])
    draws = M.multinomial(w, 1000, replacement=True).numpy()
    assert set(draws[0]) == {1, 2} and set(draws[1]) == {0}
    assert abs((draws[0] == 2).mean() - 0.75) < 0.05
    once = M.multinomial(t([1., 1, 1, 0]), 3)
    assert sorted(once.tolist()) == [0, 1, 2]


def test_normal_gives_zero_gradients_as_pytorch():
    jitgrad.manual_seed(2)
    mean, std = t([0.5, 1.0]).requires_grad_(True), t([2.0, 3.0]).requires_grad_(True)
    out = M.normal(mean, std)
    assert out.requires_grad  # torch: NormalBackward3, gradients zero
    out.sum().backward()
    assert mean.grad.tolist() == [0.0, 0.0] and std.grad.tolist() == [0.0, 0.0]
    jitgrad.manual_seed(2)
    again = M.normal(mean.detach(), std.detach())
    assert again.tolist() == out.tolist()


def test_random_errors():
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        M.bernoulli(t([1.5]))
    with pytest.raises(RuntimeError, match="without replacement"):
        M.multinomial(t([1., 1]), 3)
    with pytest.raises(RuntimeError, match="element < 0"):
        M.multinomial(t([1., -1]), 1)
    with pytest.raises(TypeError, match="generator"):
        M.randperm(3, generator=object())


def test_extra_functions_without_tensor_results():
    assert M.equal(t([1., 2]), t([1., 2])) is True
    assert M.equal(t([1., 2]), t([1., 3])) is False and M.equal(t([1.]), t([1., 1])) is False
    x = M.empty_permuted((2, 3, 4), (2, 0, 1))
    assert x.shape == (2, 3, 4) and x.numpy().strides == (3 * 8, 8, 6 * 8)
    y = t([1., 2])
    assert M.asarray(y) is y and M.asarray(y, copy=True) is not y
    assert M.asarray(y, dtype=jitgrad.float32).dtype == jitgrad.float32


def test_inplace_methods_bump_the_version_and_keep_history():
    a = t([0.5, 1.5]).requires_grad_(True)
    b = a * 1.0
    version = b._version
    assert b.addcdiv_(a, t([2., 4])) is b and b._version == version + 1
    assert type(b.grad_fn).__name__ == "AddcdivBackward0"
    b.sum().backward()
    np.testing.assert_allclose(a.grad.tolist(), [1.5, 1.25])
    with pytest.raises(RuntimeError, match="leaf"):
        a.lgamma_()


# --- errors -------------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(RuntimeError, match="gcd_cpu"):
        M.gcd(t([1.]), t([2.]))
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        M.addcdiv(t([1.]), ti([1]), ti([2]))
    with pytest.raises(IndexError, match="out of range"):
        M.kthvalue(t([1., 2]), 3)
    with pytest.raises(RuntimeError, match="not divisible"):
        M.hsplit(t([[1., 2, 3]]), 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        M.bincount(ti([1, -1]))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        M.take_along_dim(t([[1., 2]]), ti([0]), 1)
    with pytest.raises(RuntimeError, match="at least 2D"):
        M.cdist(t([1., 2]), t([[1., 2]]))
    with pytest.raises(RuntimeError, match="expected src to have a size"):
        M.select_scatter(t([[0., 0]]), t([1., 2, 3]), 0, 0)
    with pytest.raises(RuntimeError, match="floating point dtypes"):
        M.hann_window(4, dtype=jitgrad.int64)
    with pytest.raises(RuntimeError, match="contiguous"):
        M.as_strided_copy(t([[1., 2], [3, 4]]).t(), (2,), (1,))
    with pytest.raises(RuntimeError, match="out of bounds"):
        M.as_strided_copy(t([1., 2]), (3,), (1,))
    with pytest.raises(RuntimeError, match="must be 1 or 2 dim"):
        M.multinomial(t(1.), 1)
    assert math.isnan(M.mvlgamma(t([0.5]), 2).item())  # outside the domain: NaN
    with pytest.raises(NotImplementedError, match="shape parameter"):
        M.igamma(t([1.]).requires_grad_(True), t([1.]))
