"""Tests for jitgrad.numpy. The op database's NumPy entries (jitgrad/testing/db_numpy.py; their
forward against NumPy and gradients run in tests/ops/test_ops.py) drive the protocol check: the
protocol path (``numpy.f(tensor)``) records the same graph and gradients as the namespace path
(``jitgrad.numpy.f``)."""
import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.testing import checks
from jitgrad.testing.op_db import numpy_entries
from jitgrad.testing.opinfo import flat, to_tensors

CASES = numpy_entries()


def _resolve(mod, name):
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


PROTO = [c for c in CASES
         if (_resolve(np, c.numpy_name) in jnp.UFUNCS
             or _resolve(np, c.numpy_name) in jnp.FUNCTIONS)
         and not c.name.endswith("()") and c.numpy_name != "fft.fftfreq"]  # fftfreq: no array


def _graph(t):
    """Node class names of the graph under ``t``, depth first."""
    names, stack, seen = [], [t.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.append(type(n).__name__)
        stack.extend(e[0] for e in n.next_functions)
    return names


@pytest.mark.parametrize("case", PROTO, ids=[c.name for c in PROTO])
def test_protocol_matches_namespace(case):
    (sample,) = case.samples(np.random.default_rng(0), np.dtype("float64"))
    results = []
    for fn in (_resolve(np, case.numpy_name), _resolve(jnp, case.numpy_name)):
        targs = to_tensors(sample, True, case)
        leaves = [a for v in targs for a in (v if isinstance(v, list) else [v])
                  if isinstance(a, jitgrad.Tensor)]
        outs = flat(fn(*targs, **sample.kwargs))
        assert all(isinstance(o, jitgrad.Tensor) for o in outs)
        diff = [o for o in outs if o.requires_grad]
        if diff:
            total = diff[0].sum()
            for o in diff[1:]:
                total = total + o.sum()
            total.backward()
        results.append((outs, [_graph(o) for o in outs], [x.grad for x in leaves]))
    (o1, g1, d1), (o2, g2, d2) = results
    assert g1 == g2
    for a, b in zip(o1, o2):
        checks.assert_close(a, b, rtol=0, atol=0)
    for a, b in zip(d1, d2):
        assert (a is None) == (b is None)
        if a is not None:
            checks.assert_close(a, b, rtol=0, atol=0)


def test_protocol_functions_record_graph():
    x = jitgrad.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
    y = np.sum(np.exp(x) * np.transpose(x).T, axis=1, keepdims=True)
    assert isinstance(y, jitgrad.Tensor) and y.shape == (2, 1)
    assert type(y.grad_fn).__name__ == "SumBackward1"
    y.sum().backward()
    checks.assert_close(x.grad, np.exp(x.detach().numpy()) * (1 + x.detach().numpy()))
    # the same through the namespace
    x2 = jitgrad.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
    jnp.sum(jnp.exp(x2) * jnp.transpose(x2).T, axis=1, keepdims=True).sum().backward()
    checks.assert_close(x.grad, x2.grad, rtol=0, atol=0)


def test_ufunc_reduce_accumulate_out_where():
    x = jitgrad.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    checks.assert_close(np.add.reduce(x, axis=1), [6.0, 15.0])
    checks.assert_close(np.multiply.reduce(x, axis=0, keepdims=True), [[4.0, 10.0, 18.0]])
    checks.assert_close(np.maximum.reduce(x, axis=None), 6.0)
    checks.assert_close(np.add.accumulate(x, axis=1), np.cumsum(x.detach().numpy(), 1))
    out = jitgrad.zeros(2, 3, dtype=jitgrad.float64)
    r = np.sin(x, out=out)
    assert r is out
    checks.assert_close(out, np.sin(x.detach().numpy()))
    out.sum().backward()
    checks.assert_close(x.grad, np.cos(x.detach().numpy()))
    base = jitgrad.full((2, 3), -1.0, dtype=jitgrad.float64)
    mask = np.array([[True, False, True], [False, True, False]])
    r = np.exp(x, out=base, where=mask)
    checks.assert_close(r, np.where(mask, np.exp(x.detach().numpy()), -1.0))
    arr = np.zeros(3)
    np.add(jitgrad.tensor([1.0, 2.0, 3.0]), 1.0, out=arr)
    np.testing.assert_array_equal(arr, [2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match="out= is an ndarray"):
        np.add(x[0], 1.0, out=arr)


def test_ndarray_operators_keep_tensor_semantics():
    t = jitgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = np.array([2.0, 2.0, 2.0])
    for r, e in ((a + t, [3, 4, 5]), (a - t, [1, 0, -1]), (a * t, [2, 4, 6]), (a / t, [2, 1, 2 / 3]),
                 (a ** t, [2, 4, 8])):
        assert isinstance(r, jitgrad.Tensor) and r.requires_grad
        checks.assert_close(r, e)
    assert isinstance(a < t, jitgrad.Tensor)
    np.testing.assert_array_equal((a < t).numpy(), [False, False, True])
    m = np.ones((2, 3)) @ jitgrad.tensor(np.ones(3), requires_grad=True)
    assert isinstance(m, jitgrad.Tensor) and m.requires_grad
    s = np.float64(2.0) * t
    assert isinstance(s, jitgrad.Tensor) and s.requires_grad


def test_nondifferentiable_run_on_data():
    x = jitgrad.tensor([[3.0, 1.0], [2.0, 5.0]], requires_grad=True)
    assert np.shape(x) == (2, 2) and np.ndim(x) == 2 and np.size(x) == 4
    assert int(np.argmax(x)) == 3
    np.testing.assert_array_equal(np.argsort(x, axis=1).numpy(), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(np.isnan(x).numpy(), np.zeros((2, 2), bool))
    assert np.allclose(x, x.detach().numpy())
    assert jnp.argmin(x, axis=0).tolist() == [1, 0]


def test_uncovered_function_errors():
    # every jax.numpy name is covered now (jitgrad/numpy/_coverage.py); linalg.eig is not
    x = jitgrad.tensor([[2.0, 1.0], [0.0, 3.0]], requires_grad=True)
    with pytest.raises(TypeError, match="numpy.eigvals is not differentiable"):
        np.linalg.eigvals(x)
    # with no gradient at stake NumPy runs on the data, as plain array conversion did
    np.testing.assert_allclose(np.linalg.eigvals(x.detach()), [2.0, 3.0])
    with pytest.raises(AttributeError, match="numpy.asmatrix is not covered"):
        jnp.asmatrix  # noqa: B018
    with pytest.raises(AttributeError, match="jitgrad.numpy.linalg has no 'eig'"):
        jnp.linalg.eig  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'not_a_numpy_name'"):
        jnp.not_a_numpy_name  # noqa: B018


def test_float64_kept_and_constants():
    x = jnp.array([1.0, 2.0])
    assert x.dtype == jitgrad.float64
    assert jnp.sin(0.5).dtype == jitgrad.float64
    assert jnp.mean(jnp.array([1, 2])).dtype == jitgrad.float64
    assert jnp.pi == np.pi and jnp.float64 is np.float64 and jnp.newaxis is None
    assert jnp.zeros((2, 3)).shape == (2, 3) and jnp.zeros(3).dtype == jitgrad.float64


def test_random_seeded():
    a = jnp.random.default_rng(3).normal(size=(2, 3))
    b = jnp.random.default_rng(3).normal(size=(2, 3))
    assert isinstance(a, jitgrad.Tensor) and a.dtype == jitgrad.float64
    checks.assert_close(a, b, rtol=0, atol=0)
    jnp.random.seed(5)
    c = jnp.random.randn(4)
    jnp.random.seed(5)
    checks.assert_close(c, jnp.random.randn(4), rtol=0, atol=0)


def test_double_backward_through_new_rows():
    x = jitgrad.tensor([0.3, -0.2, 0.5], dtype=jitgrad.float64, requires_grad=True)
    y = jitgrad.tensor([1.1, 0.7, -0.4], dtype=jitgrad.float64, requires_grad=True)
    for fn in (lambda a, b: jnp.arctan2(a, b) * jnp.arcsinh(a),
               lambda a, b: jnp.logaddexp(a, b) * jnp.cumsum(a * b),
               lambda a, b: jnp.hypot(a, b) + jnp.cumprod(a) * jnp.log2(b * b),
               lambda a, b: jnp.einsum("i,j->ij", a, b) ** 2):
        assert checks.gradgradcheck(fn, (x, y))


def test_einsum_repeated_subscript_grad_error():
    x = jitgrad.tensor(np.eye(2), requires_grad=True)
    with pytest.raises(NotImplementedError, match="einsum: the gradient of an operand with a repeated"):
        jnp.einsum("ii->", x)
    checks.assert_close(jnp.einsum("ii->", x.detach()), 2.0)


def _sym(a):
    return (a + jnp.swapaxes(a, -1, -2)) * 0.5


def test_cholesky_eigh_gradients():
    rng = np.random.default_rng(1)
    b = rng.standard_normal((3, 3))
    x = jitgrad.tensor(b, requires_grad=True)

    def chol(m):
        return jnp.linalg.cholesky(jnp.matmul(m, jnp.transpose(m)) + 3.0 * jnp.eye(3))

    checks.assert_close(chol(x), np.linalg.cholesky(b @ b.T + 3 * np.eye(3)))
    checks.gradcheck(chol, (x,))

    def eig(m):
        w, v = jnp.linalg.eigh(_sym(m))
        return w, v * v  # eigenvector signs are arbitrary; squares are not

    w, _ = eig(x)
    checks.assert_close(w, np.linalg.eigh((b + b.T) / 2)[0])
    checks.gradcheck(eig, (x,))
    checks.gradcheck(lambda m: jnp.linalg.eigvalsh(_sym(m)), (x,))


def _standardize_then_softmax(x):
    """Array-API-generic code: it only uses the namespace the array reports."""
    xp = x.__array_namespace__()
    z = (x - xp.mean(x, axis=0, keepdims=True)) / xp.std(x, axis=0, keepdims=True)
    z = xp.concat([z, xp.zeros((1, z.shape[1]), dtype=xp.float64)], axis=0)
    z = xp.permute_dims(z, (1, 0))
    e = xp.exp(z - xp.max(z, axis=-1, keepdims=True))
    p = e / xp.sum(e, axis=-1, keepdims=True)
    assert xp.isdtype(p.dtype, "real floating")
    return xp.linalg.vector_norm(xp.matmul(p, xp.matrix_transpose(p)), axis=-1) + \
        xp.vecdot(p, p) * xp.astype(xp.asarray(2), xp.float64)


def test_array_namespace_generic_code():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 3))
    assert jitgrad.tensor(a).__array_namespace__() is jnp
    assert jnp.__array_api_version__ == "2023.12"
    got = _standardize_then_softmax(jitgrad.tensor(a))
    checks.assert_close(got, _standardize_then_softmax(_NumpyArrayAPI(a)).a)
    checks.gradcheck(_standardize_then_softmax, (jitgrad.tensor(a, requires_grad=True),))


class _NumpyArrayAPI:
    """A minimal wrapper making plain NumPy the reference for the generic function."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array_namespace__(self):
        return _RefXP

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)

    def __sub__(self, o):
        return _NumpyArrayAPI(self.a - _u(o))

    def __truediv__(self, o):
        return _NumpyArrayAPI(self.a / _u(o))

    def __mul__(self, o):
        return _NumpyArrayAPI(self.a * _u(o))

    def __add__(self, o):
        return _NumpyArrayAPI(self.a + _u(o))


def _u(o):
    return o.a if isinstance(o, _NumpyArrayAPI) else o


class _RefXP:
    float64 = np.float64

    @staticmethod
    def _w(fn):
        return lambda *a, **k: _NumpyArrayAPI(fn(*[_u(v) if not isinstance(v, list) else [_u(w) for w in v]
                                                  for v in a], **k))


for _n, _f in {"mean": np.mean, "std": np.std, "concat": np.concatenate, "zeros": np.zeros,
               "permute_dims": np.transpose, "exp": np.exp, "max": np.max, "sum": np.sum,
               "matmul": np.matmul, "matrix_transpose": lambda x: np.swapaxes(x, -1, -2),
               "vecdot": lambda a, b: np.sum(a * b, axis=-1), "asarray": np.asarray,
               "astype": lambda x, d: x.astype(d)}.items():
    setattr(_RefXP, _n, staticmethod(_RefXP._w(_f)))
_RefXP.isdtype = staticmethod(lambda d, k: np.issubdtype(d, np.floating))
_RefXP.linalg = type("L", (), {"vector_norm": staticmethod(_RefXP._w(
    lambda x, axis=None: np.linalg.norm(x, axis=axis)))})


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3), (2, 3, 2)])
def test_svd_gradients(shape):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape)
    x = jitgrad.tensor(a, requires_grad=True)
    u, s, vh = jnp.linalg.svd(x, full_matrices=False)
    ru, rs, rvh = np.linalg.svd(a, full_matrices=False)
    checks.assert_close(s, rs)
    checks.assert_close(jnp.matmul(u * jnp.expand_dims(s, -2), vh), a)
    checks.assert_close(jnp.abs(u), np.abs(ru))  # singular vectors up to sign

    def f(m):  # invariant to the sign of each singular pair
        u, s, vh = jnp.linalg.svd(m, full_matrices=False)
        return s, u * u, vh * vh, jnp.matmul(u * jnp.expand_dims(s ** 2, -2), vh)

    checks.gradcheck(f, (x,))
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        jnp.linalg.svd(jitgrad.tensor(rng.standard_normal((2, 3))))


def test_forward_mode_and_vmap_through_new_rows():
    from jitgrad import func

    rng = np.random.default_rng(2)
    a, b = rng.uniform(0.1, 0.6, (3, 2)), rng.uniform(0.5, 1.5, (2,))
    x, y = jitgrad.tensor(a), jitgrad.tensor(b)

    def f(p, q):
        return jnp.cumsum(jnp.arcsin(p) * jnp.arctan2(p, q) + jnp.hypot(p, q), 0) + \
            jnp.flip(jnp.cumprod(p + 1.0, 1), 0) + jnp.floor(p * 10)

    tx, ty = jitgrad.tensor(rng.standard_normal(a.shape)), jitgrad.tensor(rng.standard_normal(b.shape))
    _, jv = func.jvp(f, (x, y), (tx, ty))
    eps = 1e-6
    num = (f(x + tx * eps, y + ty * eps) - f(x - tx * eps, y - ty * eps)) / (2 * eps)
    checks.assert_close(jv, num, rtol=1e-6, atol=1e-8)
    batched = func.vmap(f, in_dims=(0, None))(jitgrad.tensor(np.stack([a, a * 0.5])), y)
    checks.assert_close(batched[0], f(x, y))
    checks.assert_close(batched[1], f(jitgrad.tensor(a * 0.5), y))
    per_q = func.vmap(lambda q: f(x, q))(jitgrad.tensor(np.stack([b, b * 2])))
    checks.assert_close(per_q[1], f(x, jitgrad.tensor(b * 2)))
