"""Op database entries for the PyTorch surface of issue 35 (see op_db.py): the rows added for
``jitgrad.linalg`` (``lu_factor``, ``matrix_exp``, ``solve_triangular``)."""
from __future__ import annotations

import numpy as np

from .opinfo import OpInfo, Sample

ENTRIES: list = []


def _lu_ref(m):
    import scipy.linalg

    flat = m.reshape((-1,) + m.shape[-2:])
    return np.stack([scipy.linalg.lu_factor(x)[0] for x in flat]).reshape(m.shape)


def _lu_samples(rng, dtype):
    return [Sample((rng.standard_normal(s).astype(dtype),)) for s in [(3, 3), (2, 4, 4)]]


def _lu(m):
    import jitgrad.linalg

    return jitgrad.linalg.lu_factor_ex(m).LU


ENTRIES += [
    OpInfo("linalg.lu_factor", _lu, _lu_ref, _lu_samples,
           rows=("lu_factor",), gradient_rows=("lu_pivot_permutation",), rtol=1e-10,
           atol=1e-10, dtypes=("float64",)),
]


def _expm(m):
    import jitgrad.linalg

    return jitgrad.linalg.matrix_exp(m)


def _expm_ref(m):
    import scipy.linalg

    return scipy.linalg.expm(m)


def _expm_samples(rng, dtype):
    return [Sample(((rng.standard_normal(s) * 0.7).astype(dtype),)) for s in [(3, 3), (2, 2, 2)]]


ENTRIES += [
    OpInfo("linalg.matrix_exp", _expm, _expm_ref, _expm_samples, rows=("matrix_exp",),
           rtol=1e-12, atol=1e-12, dtypes=("float64",)),
]


def _tri_ref(a, b, upper, left=True, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t - t * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    return np.linalg.solve(t, b) if left else \
        np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _tri_samples(rng, dtype):
    def a(*s):
        return (rng.standard_normal(s) + 3 * np.eye(s[-1])).astype(dtype)

    def b(*s):
        return rng.standard_normal(s).astype(dtype)

    return [Sample((a(3, 3), b(3, 2)), {"upper": True}),
            Sample((a(3, 3), b(2, 3)), {"upper": False, "left": False}),
            Sample((a(2, 3, 3), b(3, 1)), {"upper": False, "unitriangular": True}),
            Sample((a(3, 3), b(2, 2, 3)), {"upper": True, "left": False, "unitriangular": True})]


def _tri(a, b, upper, left=True, unitriangular=False):
    import jitgrad.linalg

    return jitgrad.linalg.solve_triangular(a, b, upper=upper, left=left,
                                           unitriangular=unitriangular)


ENTRIES += [
    OpInfo("linalg.solve_triangular", _tri, _tri_ref, _tri_samples, rows=("solve_triangular",),
           rtol=1e-10, atol=1e-10, dtypes=("float64",)),
]
