"""Op database entries for the PyTorch surface of issue 35 (see op_db.py): the rows of
``ops/torch_math.py``, ``ops/torch_reduce.py`` and the differentiable compositions of
``ops/torch_index.py`` (forward against NumPy/SciPy, gradients against finite differences).
The non-differentiable functions (counts, samples, integer results) are tested in
``tests/ops/test_torch_more.py``."""
from __future__ import annotations

import numpy as np
from scipy import special as sp

from ..ops import torch_index as ti, torch_math as tm, torch_reduce as tr
from .opinfo import Sample, registrar

ENTRIES: list = []
_entry = registrar(ENTRIES)


def _normal(rng, dt, *shape):
    return np.asarray(rng.standard_normal(shape)).astype(dt)


def _away(rng, dt, *shape):
    """Magnitudes in [0.5, 1.5] with random signs (no division by ~0)."""
    return (rng.uniform(0.5, 1.5, shape) * rng.choice([-1, 1], shape)).astype(dt)


def _positive(rng, dt, *shape):
    return rng.uniform(0.5, 2.0, shape).astype(dt)


def _distinct(rng, dt, *shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 - n * 0.15).reshape(shape).astype(dt)


# --- pointwise rows ----------------------------------------------------------------------------
def _three(make_a, make_b):
    def samples(rng, dt):
        return [Sample((_normal(rng, dt, 2, 3), make_a(rng, dt, 2, 3), make_b(rng, dt, 2, 3))),
                Sample((_normal(rng, dt, 3), make_a(rng, dt, 2, 1), make_b(rng, dt, 2, 3)),
                       {"value": 0.5}),
                Sample((_normal(rng, dt), make_a(rng, dt, 4), make_b(rng, dt, 4)),
                       {"value": -2.0})]
    return samples


_entry("addcmul", tm.addcmul, lambda x, a, b, value=1: x + value * a * b,
       _three(_normal, _normal), rows=("addcmul",))
_entry("addcdiv", tm.addcdiv, lambda x, a, b, value=1: x + value * a / b,
       _three(_normal, _away), rows=("addcdiv",))


def _fractional(rng, dt, *shape):
    """Integers plus fractions in [0.1, 0.9] (away from frac's jumps)."""
    return np.asarray(rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.9, shape)).astype(dt)


_entry("frac", tm.frac, lambda x: x - np.trunc(x),
       lambda rng, dt: [Sample((_fractional(rng, dt, 2, 3),)), Sample((_fractional(rng, dt),))],
       rows=("frac",))
_entry("deg2rad", tm.deg2rad, np.deg2rad, lambda rng, dt: [Sample((_normal(rng, dt, 3) * 90,))],
       rows=("deg2rad",))
_entry("rad2deg", tm.rad2deg, np.rad2deg, lambda rng, dt: [Sample((_normal(rng, dt, 2, 2),))],
       rows=("rad2deg",))


def _pairs(make_a, make_b):
    def samples(rng, dt):
        return [Sample((make_a(rng, dt, 2, 3), make_b(rng, dt, 2, 3))),
                Sample((make_a(rng, dt, 3), make_b(rng, dt, 2, 1)))]
    return samples


_entry("xlogy", tm.xlogy, sp.xlogy, _pairs(_away, _positive), rows=("xlogy",))
_entry("fmax", tm.fmax, np.fmax, _pairs(_distinct, _normal), rows=("fmax",))
_entry("fmin", tm.fmin, np.fmin, _pairs(_distinct, _normal), rows=("fmin",))
_entry("ldexp", tm.ldexp, lambda x, y: x * np.exp2(y), _pairs(_normal, _normal),
       rows=("ldexp",))


def _frexp_values(rng, dt, *shape):
    """Away from the powers of two (where the mantissa jumps)."""
    return (np.exp2(rng.integers(-3, 4, shape)) * rng.uniform(0.55, 0.95, shape)
            * rng.choice([-1, 1], shape)).astype(dt)


_entry("frexp", tm.frexp, lambda x: np.frexp(x)[0],
       lambda rng, dt: [Sample((_frexp_values(rng, dt, 2, 3),))], rows=("frexp",), output=0)


def _first(out):
    """The values of a ``(values, indices)`` result (a lone tensor as it is)."""
    return out[0] if isinstance(out, tuple) else out


# --- picking reductions and scans ------------------------------------------------------------
def _cum_ref(kind):
    def ref(x, dim):
        acc = (np.maximum if kind == "max" else np.minimum).accumulate(x, dim)
        moved = np.moveaxis(x, dim, -1)
        idx = np.zeros(moved.shape, dtype=np.int64)
        for pos in np.ndindex(moved.shape[:-1]):
            best = 0
            for i, v in enumerate(moved[pos]):
                if (v >= moved[pos][best]) if kind == "max" else (v <= moved[pos][best]):
                    best = i
                idx[pos + (i,)] = best
        return acc, np.moveaxis(idx, -1, dim)
    return ref


def _dim_samples(rng, dt):
    return [Sample((_distinct(rng, dt, 5), 0)), Sample((_distinct(rng, dt, 3, 4), 1)),
            Sample((_distinct(rng, dt, 2, 3, 2), -2))]


# (one compared output per entry: the values; the indices are checked against PyTorch's in
# tests/ops/test_torch_more.py)
_entry("cummax", tr.cummax, lambda x, dim: _cum_ref("max")(x, dim)[0], _dim_samples,
       rows=("cummax",), output=0)
_entry("cummin", tr.cummin, lambda x, dim: _cum_ref("min")(x, dim)[0], _dim_samples,
       rows=("cummin",), output=0)
_entry("logcumsumexp", tr.logcumsumexp, lambda x, dim: np.logaddexp.accumulate(x, dim),
       lambda rng, dt: [Sample((_normal(rng, dt, 5) * 3, 0)),
                        Sample((_normal(rng, dt, 3, 4), 1)),
                        Sample((_normal(rng, dt, 2, 3, 2), -2))],
       rows=("logcumsumexp",), float32_tol=(1e-5, 1e-6))


def _kth_ref(x, k, dim=-1, keepdim=False):
    idx = np.take(np.argsort(x, axis=dim, kind="stable"), [k - 1], axis=dim)
    values = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = np.squeeze(values, dim), np.squeeze(idx, dim)
    return values, idx.astype(np.int64)


_entry("kthvalue", tr.kthvalue, lambda *a, **k: _kth_ref(*a, **k)[0],
       lambda rng, dt: [Sample((_distinct(rng, dt, 5), 2)),
                        Sample((_distinct(rng, dt, 3, 4), 3), {"dim": 1, "keepdim": True}),
                        Sample((_distinct(rng, dt, 2, 3, 2), 1), {"dim": 0})],
       rows=("kthvalue",), output=0)
# distinct values: every value occurs once, so the mode is the smallest (the tie rule)
_entry("mode", tr.mode, lambda x, dim=-1, keepdim=False: _kth_ref(x, 1, dim, keepdim)[0],
       lambda rng, dt: [Sample((_distinct(rng, dt, 5),)),
                        Sample((_distinct(rng, dt, 3, 4),), {"dim": 0, "keepdim": True})],
       rows=("mode",), output=0)


def _nanmedian_ref(x, dim=None, keepdim=False):
    if dim is None:
        return np.sort(x.reshape(-1))[(x.size - 1) // 2]
    return _kth_ref(x, (x.shape[dim] - 1) // 2 + 1, dim, keepdim)[0]


_entry("nanmedian", lambda *a, **k: _first(tr.nanmedian(*a, **k)), _nanmedian_ref,
       lambda rng, dt: [Sample((_distinct(rng, dt, 5),)),
                        Sample((_distinct(rng, dt, 3, 4),), {"dim": 1}),
                        Sample((_distinct(rng, dt, 4, 3),), {"dim": 0, "keepdim": True})],
       rows=("nanmedian",))


# --- compositions (the rows they run are other families') ------------------------------------
_entry("aminmax", lambda *a, **k: tr.aminmax(*a, **k).max,
       lambda x, dim=None, keepdim=False: np.amax(x, dim, keepdims=keepdim),
       lambda rng, dt: [Sample((_distinct(rng, dt, 3, 4),)),
                        Sample((_distinct(rng, dt, 3, 4),), {"dim": 1, "keepdim": True})],
       rows=("amax",))
_entry("aminmax-min", lambda *a, **k: tr.aminmax(*a, **k).min,
       lambda x, dim=None, keepdim=False: np.amin(x, dim, keepdims=keepdim),
       lambda rng, dt: [Sample((_distinct(rng, dt, 3, 4),)),
                        Sample((_distinct(rng, dt, 3, 4),), {"dim": 1, "keepdim": True})],
       rows=("amin",))
_entry("nansum", tr.nansum, lambda x, dim=None, keepdim=False: np.nansum(x, dim, keepdims=keepdim),
       lambda rng, dt: [Sample((_normal(rng, dt, 3, 4),), {"dim": 1})])
_entry("nanmean", tr.nanmean, lambda x, dim=None: np.nanmean(x, dim),
       lambda rng, dt: [Sample((_normal(rng, dt, 3, 4),)),
                        Sample((_normal(rng, dt, 3, 4),), {"dim": 0})])
_entry("cov", tr.cov, lambda x, correction=1: np.cov(x, ddof=correction),
       lambda rng, dt: [Sample((_normal(rng, dt, 3, 5),)),
                        Sample((_normal(rng, dt, 6),), {"correction": 0})], result_dtype="input")
_entry("corrcoef", tr.corrcoef, np.corrcoef, lambda rng, dt: [Sample((_normal(rng, dt, 3, 6),))],
       result_dtype="input")
_entry("hstack", lambda a, b: ti.hstack([a, b]), lambda a, b: np.hstack([a, b]),
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 3), _normal(rng, dt, 2, 1))),
                        Sample((_normal(rng, dt, 3), _normal(rng, dt, 2)))], rows=("cat",))
_entry("vstack", lambda a, b: ti.vstack([a, b]), lambda a, b: np.vstack([a, b]),
       lambda rng, dt: [Sample((_normal(rng, dt, 3), _normal(rng, dt, 2, 3)))], rows=("cat",))
_entry("tensor_split", lambda *a, **k: ti.tensor_split(*a, **k)[1],
       lambda x, spec, dim=0: (np.array_split(x, spec, dim) if isinstance(spec, int)
                               else np.split(x, spec, dim))[1],
       lambda rng, dt: [Sample((_normal(rng, dt, 7, 2), 3)),
                        Sample((_normal(rng, dt, 2, 6), [1, 4]), {"dim": 1})])
_entry("masked_select", lambda x: ti.masked_select(x, np.array([[True, False, True]])),
       lambda x: x[np.broadcast_to(np.array([[True, False, True]]), x.shape)],
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 3),))], rows=("take",))
_entry("index_copy", lambda x, s: ti.index_copy(x, 1, np.array([2, 0]), s),
       lambda x, s: np.concatenate([s[:, 1:2], x[:, 1:2], s[:, 0:1], x[:, 3:]], 1),
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 4), _normal(rng, dt, 2, 2)))],
       rows=("put",))
_entry("masked_scatter",
       lambda x, s: ti.masked_scatter(x, np.array([True, False, True]), s),
       lambda x, s: np.where([True, False, True], np.stack([s[[0, 0, 1]], s[[2, 2, 3]]]), x),
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 3), _normal(rng, dt, 5)))], rows=("put",))


def _cdist_ref(a, b, p=2.0):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    return (d ** p).sum(-1) ** (1 / p)


_entry("cdist", ti.cdist, _cdist_ref,
       lambda rng, dt: [Sample((_normal(rng, dt, 3, 2), _normal(rng, dt, 4, 2))),
                        Sample((_normal(rng, dt, 2, 3, 2), _normal(rng, dt, 2, 2, 2)),
                               {"p": 3.0})], rtol=1e-6)
_entry("trapezoid", tm.trapezoid, lambda y, x=None, dx=1.0, dim=-1: np.trapezoid(y, x, dx, dim),
       lambda rng, dt: [Sample((_normal(rng, dt, 3, 5),)),
                        Sample((_normal(rng, dt, 5, 2), np.sort(_normal(rng, dt, 5))),
                               {"dim": 0})])
_entry("logdet", tm.logdet, lambda a: np.log(np.linalg.det(a)),
       lambda rng, dt: [Sample(((np.eye(3) * 2 + 0.3 * _normal(rng, np.float64, 3, 3))
                                .astype(dt),))], float32_tol=(1e-5, 1e-6))
_entry("addmv", tm.addmv, lambda x, m, v, beta=1, alpha=1: beta * x + alpha * m @ v,
       lambda rng, dt: [Sample((_normal(rng, dt, 2), _normal(rng, dt, 2, 3), _normal(rng, dt, 3)),
                               {"beta": 0.5, "alpha": 2.0})])
_entry("baddbmm", tm.baddbmm, lambda x, a, b, beta=1, alpha=1: beta * x + alpha * a @ b,
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 2, 2), _normal(rng, dt, 2, 2, 3),
                                _normal(rng, dt, 2, 3, 2)), {"alpha": 0.5})])
_entry("renorm", lambda x: tm.renorm(x, 2, 0, 1.0),
       lambda x: x * np.where(np.sqrt((x * x).sum(1, keepdims=True)) > 1.0,
                              1.0 / (np.sqrt((x * x).sum(1, keepdims=True)) + 1e-7), 1.0),
       lambda rng, dt: [Sample(((_normal(rng, np.float64, 3, 2)
                                 * np.array([[0.1], [2.0], [3.0]])).astype(dt),))])
_entry("mvlgamma", lambda x: tm.mvlgamma(x, 3), lambda x: sp.multigammaln(x, 3)
       if x.ndim == 0 else np.vectorize(lambda v: sp.multigammaln(v, 3))(x),
       lambda rng, dt: [Sample(((rng.uniform(1.5, 4.0, (2, 3))).astype(dt),))],
       float32_tol=(1e-5, 1e-5), result_dtype="input")
_entry("float_power", tm.float_power, lambda x, y: np.power(x.astype(np.float64),
                                                             y.astype(np.float64)),
       lambda rng, dt: [Sample((_positive(rng, dt, 2, 3), _normal(rng, dt, 2, 3)))])
_entry("cumulative_trapezoid", tm.cumulative_trapezoid,
       lambda y: np.cumsum((y[..., 1:] + y[..., :-1]) / 2, -1),
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 5),))])
_entry("diag_embed", ti.diag_embed,
       lambda x, offset=0: np.stack([np.diag(r, offset) for r in x]),
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 3),)),
                        Sample((_normal(rng, dt, 2, 2),), {"offset": 1})], rows=("put",))
_entry("take_along_dim", lambda x: ti.take_along_dim(x, np.array([[0], [2]]), 1),
       lambda x: np.take_along_axis(x, np.array([[0], [2]]), 1),
       lambda rng, dt: [Sample((_normal(rng, dt, 2, 3),))], rows=("gather",))
