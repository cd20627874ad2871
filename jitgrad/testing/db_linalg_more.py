"""Op database entries for the PyTorch surface of issue 35 (see op_db.py): the rows added for
``jitgrad.linalg`` (``lu_factor``, ``matrix_exp``)."""
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
