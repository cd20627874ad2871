"""Op database entries for reductions (``ops.reduce``) and softmax/log_softmax (``ops.nn``).

Samples cover the full reduction, an int dim, a negative dim, tuple dims (adjacent and not) and
keepdim. Values for max/min/amax/amin are distinct (no ties: the gradient is not continuous
there); ties are tested by hand in ``tests/ops/test_reduce.py``.
"""
from __future__ import annotations

import numpy as np

from ..ops import nn as nn_ops
from ..ops import reduce as reductions
from .opinfo import Sample, registrar

#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = []
_entry = registrar(ENTRIES)


def _axis(dim):
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return tuple(dim) if len(dim) else None
    return dim


def _normal(rng, dt, *shape):
    return rng.standard_normal(shape).astype(dt)


def _distinct(rng, dt, *shape):
    """A permutation of well-separated values: no ties, and stays so under +-1e-6."""
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) * 0.37 - n * 0.15).reshape(shape).astype(dt)


def _multi_dim_samples(make):
    def samples(rng, dt):
        return [
            Sample((make(rng, dt, 2, 3, 4),)),
            Sample((make(rng, dt, 5),), {"dim": 0}),
            Sample((make(rng, dt, 2, 3, 4),), {"dim": 1}),
            Sample((make(rng, dt, 2, 3, 4),), {"dim": -1, "keepdim": True}),
            Sample((make(rng, dt, 2, 3, 4),), {"dim": (0, 2)}),
            Sample((make(rng, dt, 2, 3, 4),), {"dim": (-1, 1), "keepdim": True}),
            Sample((make(rng, dt, 2, 3, 2),), {"dim": [0, 1]}),
            Sample((make(rng, dt, 3, 2),), {"dim": None, "keepdim": True}),
            Sample((np.asarray(1.5, dt),),),
        ]
    return samples


def _single_dim_samples(make, with_full=True):
    def samples(rng, dt):
        out = [
            Sample((make(rng, dt, 6),), {"dim": 0}),
            Sample((make(rng, dt, 3, 4),), {"dim": 1}),
            Sample((make(rng, dt, 2, 3, 4),), {"dim": -2}),
            Sample((make(rng, dt, 2, 3, 4),), {"dim": 0, "keepdim": True}),
            Sample((make(rng, dt, 2, 3),), {"dim": -1, "keepdim": True}),
        ]
        if with_full:
            out += [Sample((make(rng, dt, 3, 4),)), Sample((make(rng, dt, 7),))]
        return out
    return samples


# --- sum / mean / prod -----------------------------------------------------------------------
_entry("sum", reductions.sum,
       lambda x, dim=None, keepdim=False: np.sum(x, _axis(dim), keepdims=keepdim),
       _multi_dim_samples(_normal), rtol=1e-12, rows=("sum", "sum_dim"))
_entry("mean", reductions.mean,
       lambda x, dim=None, keepdim=False: np.mean(x, _axis(dim), keepdims=keepdim),
       _multi_dim_samples(_normal), rtol=1e-12, rows=("mean", "mean_dim"))


def _prod_values(rng, dt, *shape):
    """Magnitudes in [0.6, 1.4] with random signs: products stay O(1)."""
    mag = rng.uniform(0.6, 1.4, shape)
    return (mag * rng.choice([-1.0, 1.0], shape)).astype(dt)


def _prod_samples(rng, dt):
    with_zero = _prod_values(rng, dt, 3, 4)
    with_zero[1, 2] = 0
    two_zeros = _prod_values(rng, dt, 2, 5)
    two_zeros[0, 1] = two_zeros[0, 3] = 0
    full_zero = _prod_values(rng, dt, 6)
    full_zero[4] = 0
    return _single_dim_samples(_prod_values)(rng, dt) + [
        Sample((with_zero,), {"dim": 1}),
        Sample((with_zero,), {"dim": 0, "keepdim": True}),
        Sample((two_zeros,), {"dim": -1}),
        Sample((full_zero,)),
        Sample((np.asarray(-0.8, dt),)),
    ]


_entry("prod", reductions.prod,
       lambda x, dim=None, keepdim=False: np.prod(x, dim, keepdims=keepdim),
       _prod_samples, rtol=1e-12, rows=("prod", "prod_dim"))

# --- max / min / amax / amin / argmax / argmin -----------------------------------------------
for _name, _fn, _np, _arg in (("max", reductions.max, np.max, np.argmax),
                             ("min", reductions.min, np.min, np.argmin)):
    _entry(_name, _fn, lambda x, _np=_np: _np(x),
           lambda rng, dt: [Sample((_distinct(rng, dt, 3, 4),)), Sample((_distinct(rng, dt, 5),)),
                            Sample((np.asarray(2.0, dt),))], rows=(_name,))
    _entry(f"{_name}_dim", _fn,
           lambda x, dim, keepdim=False, _np=_np: _np(x, dim, keepdims=keepdim),
           _single_dim_samples(_distinct, with_full=False), output=0,
           rows=(f"{_name}_dim",), gradient_rows=("_index_scatter", "_take_along_dim"))
    _entry(f"a{_name}", getattr(reductions, f"a{_name}"),
           lambda x, dim=(), keepdim=False, _np=_np: _np(x, _axis(dim), keepdims=keepdim),
           _multi_dim_samples(_distinct), rows=(f"a{_name}",))
    _entry(f"arg{_name}", getattr(reductions, f"arg{_name}"),
           lambda x, dim=None, keepdim=False, _arg=_arg: _arg(x, dim, keepdims=keepdim).astype(
               np.int64),
           lambda rng, dt: [Sample((_distinct(rng, dt, 3, 4),)),
                            Sample((_distinct(rng, dt, 3, 4),), {"dim": 1}),
                            Sample((_distinct(rng, dt, 2, 3, 4),), {"dim": -3, "keepdim": True})],
           differentiable=False, rows=(f"arg{_name}",))

# --- var / std / logsumexp -------------------------------------------------------------------


def _var_ref(fn):
    def ref(x, dim=None, correction=None, keepdim=False, unbiased=None):
        ddof = 1 if correction is None else correction
        if unbiased is not None:
            ddof = int(unbiased)
        return fn(x, _axis(dim), ddof=ddof, keepdims=keepdim)
    return ref


def _var_samples(rng, dt):
    return [
        Sample((_normal(rng, dt, 3, 4),)),
        Sample((_normal(rng, dt, 3, 4),), {"dim": 1}),
        Sample((_normal(rng, dt, 2, 3, 4),), {"dim": -1, "keepdim": True, "correction": 0}),
        Sample((_normal(rng, dt, 2, 3, 4),), {"dim": (0, 2), "correction": 2}),
        Sample((_normal(rng, dt, 4, 3),), {"dim": 0, "unbiased": False}),
        Sample((_normal(rng, dt, 6),), {"correction": 0}),
    ]


_entry("var", reductions.var, _var_ref(np.var), _var_samples, rtol=1e-12, rows=("var",))
_entry("std", reductions.std, _var_ref(np.std), _var_samples, rtol=1e-12, rows=("std",))


def _lse_ref(x, dim, keepdim=False):
    m = np.max(x, _axis(dim), keepdims=True)
    out = m + np.log(np.sum(np.exp(x - m), _axis(dim), keepdims=True))
    return out if keepdim else np.squeeze(out, _axis(dim))


def _lse_samples(rng, dt):
    return [
        Sample((_normal(rng, dt, 5), 0)),
        Sample((_normal(rng, dt, 3, 4), 1)),
        Sample((_normal(rng, dt, 2, 3, 4), -2), {"keepdim": True}),
        Sample((_normal(rng, dt, 2, 3, 4), (0, 2))),
        Sample((_normal(rng, dt, 3, 4) * 30, (0, 1))),
    ]


_entry("logsumexp", reductions.logsumexp, _lse_ref, _lse_samples, rtol=1e-12, rows=("logsumexp",))


# --- softmax / log_softmax -------------------------------------------------------------------
def _log_softmax_ref(x, dim):
    z = x - np.max(x, dim, keepdims=True)
    return z - np.log(np.sum(np.exp(z), dim, keepdims=True))


def _softmax_samples(rng, dt):
    return [
        Sample((_normal(rng, dt, 5), 0)),
        Sample((_normal(rng, dt, 3, 4), 1)),
        Sample((_normal(rng, dt, 3, 4), 0)),
        Sample((_normal(rng, dt, 2, 3, 4), -2)),
        Sample((_normal(rng, dt, 2, 3) * 20, -1)),
    ]


_entry("softmax", nn_ops.softmax, lambda x, dim: np.exp(_log_softmax_ref(x, dim)),
       _softmax_samples, rtol=1e-12, rows=("softmax",))
_entry("log_softmax", nn_ops.log_softmax, _log_softmax_ref, _softmax_samples, rtol=1e-12,
       rows=("log_softmax",))
