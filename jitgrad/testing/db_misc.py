"""Op-database entries for the rows no other family covers: scalar-first subtraction, bool
logic, rounding, ``masked_fill`` with a tensor value, ``jitgrad.scipy`` special functions and
the ``numpy.linalg`` decompositions (through sign-invariant functions of their outputs:
eigenvectors and singular vectors are unique only up to sign)."""
from __future__ import annotations

import numpy as np
import scipy.special as scipy_special
import scipy.stats as scipy_stats

from .opinfo import OpInfo, Sample

#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = []


def _each_shape(gen):
    def samples(rng, dtype):
        return [Sample((np.asarray(gen(rng, shape), dtype),)) for shape in [(), (5,), (2, 3)]]
    return samples


def _bool_pairs(rng, dtype):
    return [Sample((rng.random((2, 3)) > 0.5, rng.random((2, 3)) > 0.5)),
            Sample((rng.random((2, 3)) > 0.5, rng.random((3,)) > 0.5))]


def _masked_fill_samples(rng, dtype):
    x = rng.standard_normal((2, 3)).astype(dtype)
    return [Sample((x, rng.random((2, 3)) > 0.5, np.asarray(1.7, dtype))),
            Sample((x, rng.random((3,)) > 0.5, np.asarray(-0.4, dtype)))]


def _off_rounding_points(rng, shape):
    """Values 0.03 away from the points where rounding to one decimal jumps."""
    return np.round(rng.uniform(-2, 2, shape), 1) + 0.03


def _special(name, fn, ref, low, high, **kwargs):
    return OpInfo(name, fn, ref, _each_shape(lambda rng, s: rng.uniform(low, high, s)),
                  rows=(name.split("_")[0],), rtol=1e-10, **kwargs)


def _jnp():
    import jitgrad.numpy as jnp

    return jnp


def _scipy():
    import jitgrad.scipy.special as jsp
    import jitgrad.scipy.stats as jst

    return jsp, jst


ENTRIES += [
    OpInfo("rsub", lambda x: 2.5 - x, lambda x: (2.5 - x).astype(x.dtype),
           _each_shape(lambda rng, s: rng.standard_normal(s)), rows=("rsub",)),
    OpInfo("logical_and", lambda a, b: a & b, np.logical_and, _bool_pairs,
           rows=("logical_and",), differentiable=False, dtypes=("float64",)),
    OpInfo("logical_or", lambda a, b: a | b, np.logical_or, _bool_pairs,
           rows=("logical_or",), differentiable=False, dtypes=("float64",)),
    OpInfo("masked_fill_tensor", lambda x, m, v: x.masked_fill(m, v),
           lambda x, m, v: np.where(m, v, x).astype(x.dtype), _masked_fill_samples,
           # the row runs only when the value requires grad: in the gradient checks, not the
           # forward check (masked_fill without)
           rows=("masked_fill",), gradient_rows=("masked_fill_tensor",)),
    OpInfo("round", lambda x: _jnp().round(x, 1), lambda x: np.round(x, 1),
           _each_shape(_off_rounding_points), rows=("round",)),
    _special("gammaln", lambda x: _scipy()[0].gammaln(x), scipy_special.gammaln, 0.3, 5.0),
    _special("digamma", lambda x: _scipy()[0].digamma(x), scipy_special.digamma, 0.3, 5.0),
    _special("polygamma_1", lambda x: _scipy()[0].polygamma(1, x), lambda x: scipy_special.polygamma(1, x),
             0.3, 5.0),
    _special("stdtr", lambda x: _scipy()[1].t.cdf(x, 2.5), lambda x: scipy_stats.t.cdf(x, 2.5), -3.0, 3.0),
]


def _square_samples(shapes):
    def samples(rng, dtype):
        return [Sample((rng.standard_normal(s).astype(dtype),)) for s in shapes]
    return samples


def _sym(xp, m):
    return (m + xp.swapaxes(m, -1, -2)) * 0.5


def _spd(xp, m):
    return xp.matmul(m, xp.swapaxes(m, -1, -2)) + 3.0 * xp.eye(m.shape[-1])


def _cholesky(xp):
    return lambda m: xp.linalg.cholesky(_spd(xp, m))


def _eigh(xp):
    def fn(m):
        w, v = xp.linalg.eigh(_sym(xp, m))
        return w, v * v
    return fn


def _svd(xp):
    def fn(m):
        u, s, vh = xp.linalg.svd(m, full_matrices=False)
        return s, u * u, vh * vh
    return fn


#: the decompositions' entries (their CUDA checks: tests/cuda/test_cuda_nplinalg.py)
DECOMPOSITIONS = ("cholesky", "eigh", "svd")


def _linalg_entry(name, make, shapes, gradient_rows=()):
    return OpInfo(name, lambda m: make(_jnp())(m), make(np), _square_samples(shapes),
                  rows=(name,), gradient_rows=gradient_rows, rtol=1e-10, atol=1e-10,
                  dtypes=("float64",))


ENTRIES += [
    _linalg_entry("cholesky", _cholesky, [(3, 3), (2, 2, 2)]),
    _linalg_entry("eigh", _eigh, [(3, 3)], ("linalg_check",)),  # the recorded gap check
    _linalg_entry("svd", _svd, [(3, 2), (2, 3)]),
]
