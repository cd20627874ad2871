"""``jitgrad.numpy.linalg`` on CUDA (``kernels.cuda.solver``'s batched kernels) against the CPU
(``numpy.linalg``): the ``db_numpy`` linalg entries through ``check_device_matches_cpu``
(forward and gradients, float64 and float32), batched and broadcast inputs, strided views, and
the same errors (singular, not positive definite, not converged) with the same messages.

Sign conventions: QR follows LAPACK's, so Q and R are compared as they are. Eigenvectors and
singular vectors are unique only up to sign and neither side normalises them, so they are
compared through sign-invariant functions: ``V * V`` (elementwise), ``U * U``, ``Vh * Vh`` and
``U @ Vh`` (sum of ``u_i v_i^T``: a pair flips together). Sizes stay small (the simulator runs
every thread as Python)."""
import dataclasses

import numpy as np
import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad.testing import assert_close
from jitgrad.testing.op_db import numpy_entries
from jitgrad.testing.opinfo import OpInfo, Sample, check_device_matches_cpu

DEV = "cuda:0"
TOL32 = dict(rtol=2e-4, atol=2e-5)
TOL64 = dict(rtol=1e-10, atol=1e-11)


@pytest.fixture(scope="module", autouse=True)
def _cuda():
    assert jitgrad.cuda.is_available(), "the CUDA tests need a GPU or NUMBA_ENABLE_CUDASIM=1"


def _resolve(name):
    fn = jnp
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


def _op(name, fn, make, kwargs=None, output=None):
    """An OpInfo over one sample (a local view: the op database is testing.op_db's)."""
    def samples(rng, dt):
        args = tuple(a.astype(dt) if isinstance(a, np.ndarray) else a for a in make(rng))
        return [Sample(args, dict(kwargs or {}))]

    return OpInfo(name, fn, None, samples, output=output)


@dataclasses.dataclass
class _Case:
    id: str
    name: str
    make_args: object
    kwargs: dict


def _db_ops():
    ops = []
    mine = ("linalg.inv", "linalg.det", "linalg.slogdet", "linalg.solve", "linalg.pinv",
            "linalg.qr", "linalg.matrix_power")
    for entry in numpy_entries():
        if not entry.numpy_name.startswith("linalg."):
            continue
        (sample,) = entry.samples(None, np.dtype("float64"))
        c = _Case(entry.name.removeprefix("np."), entry.numpy_name,
                  lambda r, args=sample.args: args, sample.kwargs)
        fn = _resolve(c.name)
        if c.name in mine or c.id in ("svdvals", "norm-2", "norm-nuc-keep", "norm-m2-axes"):
            if c.name == "linalg.slogdet":
                ops.append(_op(c.id + "-sign", fn, c.make_args, c.kwargs, output=0))
                ops.append(_op(c.id, fn, c.make_args, c.kwargs, output=1))
            elif c.name == "linalg.qr" and c.kwargs.get("mode") != "r":
                ops.append(_op(c.id + "-Q", fn, c.make_args, c.kwargs, output=0))
                ops.append(_op(c.id + "-R", fn, c.make_args, c.kwargs, output=1))
            else:
                ops.append(_op(c.id, fn, c.make_args, c.kwargs))
    return ops


def _spd(r, n=3, batch=()):
    a = r.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _svd(a):
    return jnp.linalg.svd(a, full_matrices=False)


# decompositions without a db_numpy entry, and the sign-invariant views of eigh and svd
EXTRA = [
    _op("cholesky", jnp.linalg.cholesky, lambda r: (_spd(r),)),
    _op("cholesky-batch", jnp.linalg.cholesky, lambda r: (_spd(r, 2, (2,)),)),
    _op("eigh-w", jnp.linalg.eigh, lambda r: (_spd(r, 3, (2,)),), output=0),
    _op("eigh-VV", lambda a: jnp.linalg.eigh(a)[1] ** 2, lambda r: (_spd(r, 3, (2,)),)),
    _op("eigvalsh-U", lambda a: jnp.linalg.eigvalsh(a, UPLO="U"), lambda r: (_spd(r),)),
    _op("svd-s", lambda a: _svd(a)[1], lambda r: (r.standard_normal((2, 4, 3)),)),
    _op("svd-UU", lambda a: _svd(a)[0] ** 2, lambda r: (r.standard_normal((4, 3)),)),
    _op("svd-VhVh-wide", lambda a: _svd(a)[2] ** 2, lambda r: (r.standard_normal((2, 4)),)),
    _op("svd-UVh", lambda a: jnp.matmul(_svd(a)[0], _svd(a)[2]),
        lambda r: (r.standard_normal((2, 3, 2)),)),
    _op("svd-UVh-wide", lambda a: jnp.matmul(_svd(a)[0], _svd(a)[2]),
        lambda r: (r.standard_normal((2, 3)),)),
    _op("solve-batch-vec", jnp.linalg.solve,
        lambda r: (_spd(r, 3, (2,)), r.standard_normal(3))),
    _op("solve-broadcast", jnp.linalg.solve,
        lambda r: (_spd(r, 2, (2, 1)), r.standard_normal((3, 2, 2)))),
]
OPS = _db_ops() + EXTRA


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_linalg_matches_cpu(op, dtype):
    check_device_matches_cpu(op, DEV, dtype, **(TOL64 if dtype == "float64" else TOL32))


def test_db_covers_every_row():
    """Every row of ops.nplinalg has a CUDA forward, and the ops above exercise each."""
    from jitgrad.ops import nplinalg as L

    for row in (L.INV, L.DET, L.SLOGDET, L.SOLVE, L.CHOLESKY, L.EIGH, L.PINV, L.SVD, L.SVDVALS,
                L.QR):
        assert row.cuda_forward is not None, row.name


def _both(x):
    return jitgrad.tensor(x), jitgrad.tensor(x, device=DEV)


def _errors(fn, x, *rest):
    """fn raises the same error type and message on the CPU and on CUDA."""
    msgs = []
    for t in _both(x):
        dev = t.device
        extra = [jitgrad.tensor(y, device=dev) for y in rest]
        with pytest.raises(Exception) as info:
            fn(t, *extra)
        msgs.append((type(info.value), str(info.value)))
    assert msgs[0] == msgs[1]
    return msgs[0]


def test_singular_and_not_positive_definite_errors():
    sing = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
    assert _errors(jnp.linalg.inv, sing) == (np.linalg.LinAlgError, "Singular matrix")
    assert _errors(jnp.linalg.solve, sing, np.ones((2, 2, 1)))[1] == "Singular matrix"
    npd = np.array([[[2.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
    assert _errors(jnp.linalg.cholesky, npd) == (np.linalg.LinAlgError,
                                                 "Matrix is not positive definite")
    nan = np.full((2, 2), np.nan)
    assert _errors(jnp.linalg.svdvals, nan)[1] == "SVD did not converge"
    _errors(jnp.linalg.solve, np.eye(3), np.ones(2))  # NumPy's core-dimension message
    _errors(jnp.linalg.solve, np.eye(3), np.ones((2, 2)))
    _errors(jnp.linalg.inv, np.eye(2, dtype=np.float16))


def test_singular_det_slogdet_and_nan_eigh():
    x = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]])
    for fn in (jnp.linalg.det, jnp.linalg.slogdet):
        c, d = _both(x)
        for p, q in zip(*(r if isinstance(r, tuple) else (r,) for r in (fn(c), fn(d)))):
            assert_close(q.cpu(), p, rtol=1e-14, atol=0)
    sign, logabs = jnp.linalg.slogdet(_both(x)[1])
    assert sign.cpu().numpy().tolist() == [0.0, 0.0, -1.0]
    assert np.isneginf(logabs.cpu().numpy()[:2]).all()
    w, v = jnp.linalg.eigh(_both(np.full((2, 2), np.nan))[1])
    assert np.isnan(w.cpu().numpy()).all() and np.isnan(v.cpu().numpy()).all()


def _same_up_to_sign(p, q, axis=-2):
    """Columns (axis=-2: along rows) equal up to a sign each."""
    p, q = p.numpy(), q.cpu().numpy()
    s = np.sign(np.sum(p * q, axis=axis, keepdims=True))
    assert_close(q * s, p, rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (1, 4)])
def test_svd_eigh_vectors_up_to_sign(shape):
    a = np.random.default_rng(3).standard_normal(shape)
    c, d = _both(a)
    (uc, sc, vc), (ud, sd, vd) = _svd(c), _svd(d)
    assert_close(sd.cpu(), sc, rtol=1e-12, atol=1e-13)
    _same_up_to_sign(uc, ud)
    _same_up_to_sign(vc, vd, axis=-1)
    if shape[-1] == shape[-2]:
        sym = a + np.swapaxes(a, -1, -2)
        c, d = _both(sym)
        (wc, vc), (wd, vd) = jnp.linalg.eigh(c), jnp.linalg.eigh(d)
        assert_close(wd.cpu(), wc, rtol=1e-12, atol=1e-13)
        _same_up_to_sign(vc, vd)


def test_strided_int_and_upper_inputs():
    """Transposed and broadcast views are read in place; integers compute in float64; UPLO='U'
    reads the upper triangle of a non-symmetric input."""
    r = np.random.default_rng(4)
    a = r.standard_normal((3, 3)) + 3 * np.eye(3)
    for f in (lambda x: jnp.linalg.inv(x.T), lambda x: jnp.linalg.qr(x[:, ::2])[1],
              lambda x: jnp.linalg.det(jitgrad.Tensor.expand(x, (2, 3, 3))),
              lambda x: jnp.linalg.eigh(x, UPLO="U")[0],
              lambda x: jnp.linalg.pinv(x[::2].T)):
        c, d = _both(a)
        assert_close(f(d).cpu(), f(c), rtol=1e-12, atol=1e-13)
    ci, di = _both(np.array([[2, 1], [1, 3]]))
    for fn in (jnp.linalg.inv, jnp.linalg.cholesky, jnp.linalg.det):
        assert fn(di).dtype == fn(ci).dtype == jitgrad.float64
        assert_close(fn(di).cpu(), fn(ci), rtol=1e-14, atol=1e-15)


def test_repeated_eigenvalue_gradient_error():
    msgs = []
    for t in _both(np.eye(3)):
        t.requires_grad_(True)
        v = jnp.linalg.eigh(t)[1]
        with pytest.raises(RuntimeError) as info:
            v.sum().backward()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1] and "repeated eigenvalues" in msgs[0]


def test_solve_numpy2_shapes_and_gradients():
    """NumPy 2: a 1-d b is one vector for every matrix of a batched a; stacks broadcast. Both
    devices equal numpy.linalg.solve, and the CPU gradients (summed over broadcast dims) pass
    a finite-difference check."""
    from jitgrad.testing import checks

    r = np.random.default_rng(5)
    for a, b in ((_spd(r, 3, (2,)), r.standard_normal(3)),
                 (_spd(r, 2, (2, 1)), r.standard_normal((3, 2, 1))),
                 (_spd(r, 2), r.standard_normal((2, 2, 3)))):
        want = np.linalg.solve(a, b)
        for dev in ("cpu", DEV):
            got = jnp.linalg.solve(jitgrad.tensor(a, device=dev), jitgrad.tensor(b, device=dev))
            assert got.shape == want.shape
            assert_close(got.cpu(), want, rtol=1e-12, atol=1e-13)
        ta = jitgrad.tensor(a, requires_grad=True)
        tb = jitgrad.tensor(b, requires_grad=True)
        assert checks.gradcheck(jnp.linalg.solve, [ta, tb])


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (5, 5)])
def test_svd_of_a_rank_deficient_matrix_has_orthonormal_factors(shape):
    """LAPACK fills the singular vectors of zero singular values with an orthonormal
    completion; the CUDA kernel must too (not leave zero columns)."""
    import jitgrad.numpy as jnp

    rng = np.random.default_rng(3)
    m, n = shape
    a = rng.standard_normal((m, 1)) @ rng.standard_normal((1, n))  # rank 1
    a[:, 0] = 0.0
    u, s, vh = jnp.linalg.svd(jitgrad.tensor(a, device="cuda"), full_matrices=False)
    u, s, vh = u.cpu().numpy(), s.cpu().numpy(), vh.cpu().numpy()
    k = min(m, n)
    np.testing.assert_allclose(u.T @ u, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(vh @ vh.T, np.eye(k), atol=1e-12)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)


def _eigh_signless(a):
    w, v = jnp.linalg.eigh(a + a.T)
    return w, v * v


def _svd_signless(a):
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    return u * u, s, vh * vh


_JVP_CASES = {  # vectors through sign-invariant functions (module docstring)
    "inv": (jnp.linalg.inv, lambda r: [_spd(r, 3)]),
    "det": (jnp.linalg.det, lambda r: [_spd(r, 3)]),
    "slogdet": (lambda a: jnp.linalg.slogdet(a)[1], lambda r: [_spd(r, 3)]),
    "solve": (jnp.linalg.solve, lambda r: [_spd(r, 3), r.standard_normal(3)]),
    "cholesky": (lambda a: jnp.linalg.cholesky(a + a.T), lambda r: [_spd(r, 3)]),
    "eigh": (_eigh_signless, lambda r: [_spd(r, 3)]),
    "svd": (_svd_signless, lambda r: [r.standard_normal((3, 2))]),
    "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False),
                lambda r: [r.standard_normal((2, 3))]),
    "pinv": (jnp.linalg.pinv, lambda r: [r.standard_normal((2, 3))]),
    "qr": (lambda a: tuple(jnp.linalg.qr(a)), lambda r: [r.standard_normal((2, 4))]),
}


@pytest.mark.parametrize("name", list(_JVP_CASES))
def test_forward_mode_matches_the_cpu(name):
    """The jvp rules (ops/nplinalg.py) build their constants on the input's device: the
    tangents come out on CUDA and equal the CPU's."""
    import jitgrad.func as F

    fn, make = _JVP_CASES[name]
    rng = np.random.default_rng(3)
    xs = make(rng)
    ts = [rng.standard_normal(x.shape) for x in xs]
    got = []
    for dev in ("cpu", DEV):
        _, tan = F.jvp(fn, tuple(jitgrad.tensor(x, device=dev) for x in xs),
                       tuple(jitgrad.tensor(t, device=dev) for t in ts))
        tan = tan if isinstance(tan, tuple) else (tan,)
        assert all(t.device.type == dev.split(":")[0] for t in tan), name
        got.append(tan)
    for a, b in zip(*got):
        assert_close(b.cpu(), a, **TOL64, msg=f"jvp {name} on CUDA")
