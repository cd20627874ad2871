"""Op database entries for the elementwise families (ops/unary.py, ops/binary.py)."""
from __future__ import annotations

import math

import numpy as np

import jitgrad

from .opinfo import Sample, registrar

#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = []
_entry = registrar(ENTRIES)


def _away_from_zero(rng, shape, dtype, low=0.2, high=2.0):
    """Values with |x| in [low, high): keeps finite differences off kinks at 0."""
    mag = rng.uniform(low, high, shape)
    return np.asarray(mag * rng.choice([-1.0, 1.0], shape), dtype=dtype)  # 0-d stays an ndarray


def _positive(rng, shape, dtype, low=0.3, high=2.0):
    return np.asarray(rng.uniform(low, high, shape), dtype=dtype)


def _np_erf(x):
    """NumPy has no erf ufunc: the reference is ``math.erf`` per element."""
    return np.vectorize(math.erf, otypes=[x.dtype])(x).reshape(x.shape).astype(x.dtype)


def _unary_samples(gen):
    def samples(rng, dtype):
        return [Sample((gen(rng, s, dtype),)) for s in [(), (5,), (2, 3)]]

    return samples


UNARY = [
    ("neg", jitgrad.neg, np.negative, _away_from_zero),
    ("exp", jitgrad.exp, np.exp, _away_from_zero),
    ("log", jitgrad.log, np.log, _positive),
    ("sin", jitgrad.sin, np.sin, _away_from_zero),
    ("cos", jitgrad.cos, np.cos, _away_from_zero),
    ("tan", jitgrad.tan, np.tan, lambda r, s, d: np.asarray(r.uniform(-1.2, 1.2, s), dtype=d)),
    ("tanh", jitgrad.tanh, np.tanh, _away_from_zero),
    ("sinh", jitgrad.sinh, np.sinh, _away_from_zero),
    ("cosh", jitgrad.cosh, np.cosh, _away_from_zero),
    ("expm1", jitgrad.expm1, np.expm1, _away_from_zero),
    ("log1p", jitgrad.log1p, np.log1p, lambda r, s, d: np.asarray(r.uniform(-0.7, 2.0, s), dtype=d)),
    ("erf", jitgrad.erf, lambda x: _np_erf(x), _away_from_zero),
    ("sigmoid", jitgrad.sigmoid, lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype),
     lambda r, s, d: np.asarray(r.uniform(-6, 6, s), dtype=d)),
    ("relu", jitgrad.relu, lambda x: np.maximum(x, 0).astype(x.dtype), _away_from_zero),
    ("abs", jitgrad.abs, np.abs, _away_from_zero),
    ("sqrt", jitgrad.sqrt, np.sqrt, _positive),
    ("rsqrt", jitgrad.rsqrt, lambda a: 1.0 / np.sqrt(a), _positive),
    ("reciprocal", jitgrad.reciprocal, np.reciprocal, _away_from_zero),
]
for name, fn, ref, gen in UNARY:
    _entry(name, fn, ref, _unary_samples(gen), rows=(name,))

_entry("sign", jitgrad.sign, np.sign, _unary_samples(_away_from_zero), gradgrad=False,
       rows=("sign",))


def _logit_samples(rng, dtype):
    """Inside (0, 1) without eps; with eps = 0.2 also clamped values, kept off the kinks."""
    def unit(shape, low=0.05, high=0.95):
        x = np.asarray(rng.uniform(low, high, shape), dtype=dtype)
        x[np.abs(np.abs(x - 0.5) - 0.3) < 0.03] = 0.5
        return x

    return ([Sample((unit(s),)) for s in [(), (5,), (2, 3)]]
            + [Sample((unit((2, 4), 0.01, 0.99),), {"eps": 0.2})])


def _logit_ref(x, eps=None):
    z = x if eps is None else np.clip(x, eps, 1.0 - eps)
    return np.log(z / (1.0 - z)).astype(x.dtype)


_entry("logit", jitgrad.logit, _logit_ref, _logit_samples, rows=("logit",))


def _binary_samples(gen_x, gen_y, scalars=(2.5,)):
    """Same shapes, both broadcast patterns the kernels specialise, an odd pattern, scalars."""

    def samples(rng, dtype):
        shapes = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((2, 3, 2), (2, 1, 2)),
                  ((2, 3), ()), ((), (2, 2))]
        out = [Sample((gen_x(rng, a, dtype), gen_y(rng, b, dtype))) for a, b in shapes]
        out += [Sample((gen_x(rng, (2, 2), dtype), s)) for s in scalars]
        out += [Sample((s, gen_y(rng, (3,), dtype))) for s in scalars]
        return out

    return samples


def _pow_ref(x, y):
    dt = np.result_type(*(a for a in (x, y) if isinstance(a, np.ndarray)))
    return np.power(x, y).astype(dt)


def _true_divide(x, y):
    out = np.true_divide(x, y)
    arrays = [a for a in (x, y) if isinstance(a, np.ndarray)]
    return out.astype(np.result_type(*arrays)) if arrays else out


_entry("add", jitgrad.add, np.add, _binary_samples(_away_from_zero, _away_from_zero), rows=("add",))
_entry("sub", jitgrad.sub, np.subtract, _binary_samples(_away_from_zero, _away_from_zero),
       rows=("sub",))
_entry("mul", jitgrad.mul, np.multiply, _binary_samples(_away_from_zero, _away_from_zero),
       rows=("mul",))
_entry("div", jitgrad.div, _true_divide, _binary_samples(_away_from_zero, _away_from_zero),
       rows=("div",))
_entry("pow", jitgrad.pow, _pow_ref,
       _binary_samples(_positive, _away_from_zero, (2, 0.5, 3.0, 1.5)),
       rtol=1e-6, rows=("pow", "pow_cube", "pow_root", "pow_scalar", "pow_square", "rpow"))
_entry("maximum", jitgrad.maximum, np.maximum, _binary_samples(_away_from_zero, _away_from_zero, ()),
       rows=("maximum",))
_entry("minimum", jitgrad.minimum, np.minimum, _binary_samples(_away_from_zero, _away_from_zero, ()),
       rows=("minimum",))


def _clamp_samples(rng, dtype):
    x = _away_from_zero(rng, (2, 4), dtype, 0.1, 3.0)
    x[np.abs(np.abs(x) - 1.0) < 0.05] = 0.5  # keep finite differences off the clamp kinks
    return [Sample((x,), {"min": -1.0, "max": 1.0}), Sample((x,), {"min": 0.0}),
            Sample((x,), {"max": -0.5})]


_entry("clamp", jitgrad.clamp, lambda x, min=None, max=None: np.clip(x, min, max),
       _clamp_samples, rows=("clamp",))


def _where_samples(rng, dtype):
    cond = rng.random((2, 3)) > 0.5
    return [Sample((cond, _away_from_zero(rng, (2, 3), dtype), _away_from_zero(rng, (3,), dtype))),
            Sample((cond, _away_from_zero(rng, (2, 3), dtype), 0.0))]


_entry("where", jitgrad.where, lambda c, x, y: np.where(c, x, y).astype(x.dtype), _where_samples,
       rows=("where",))

for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    _entry(_name, getattr(jitgrad, _name), getattr(np, {"lt": "less", "le": "less_equal",
                                                       "gt": "greater", "ge": "greater_equal",
                                                       "eq": "equal", "ne": "not_equal"}[_name]),
           _binary_samples(lambda r, s, d: np.asarray(r.integers(0, 3, s), dtype=d),
                           lambda r, s, d: np.asarray(r.integers(0, 3, s), dtype=d), (1.0,)),
           differentiable=False, rows=(_name,))
