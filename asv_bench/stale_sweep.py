"""Issue 32's sweep: no public callable gives a stale result through ``jitgrad.compile``.

    PYTHONPATH=. python asv_bench/stale_sweep.py [--subset] [--wrappers all|host|none]
                                                 [--only numpy,scipy.special] [--list]

``jitgrad.compile`` traces a function once per input signature and replays the recording on
later calls. A function that reads tensor values in Python (``.item()``, ``bool()``, a mask's
True count, ``np.unique``...) must not replay the first call's value: ``Tensor._host``'s hook
refuses such reads inside a trace (the function runs eagerly, with a warning) and
value-dependent shapes are refused. This sweep checks that over the whole public surface:

* the callables: ``jitgrad``'s functions, ``jitgrad.Tensor``'s methods (public, and the
  operator / conversion dunders), ``jitgrad.numpy`` (with ``linalg`` and ``fft``; ``random`` is
  left out: random calls are refused anyway), ``jitgrad.scipy`` (``special``, ``linalg``,
  ``signal``, ``stats.*``, ``integrate``, ``optimize``), ``jitgrad.linalg``,
  ``jitgrad.nn.functional``, and every entry of the op database
  (``jitgrad.testing.op_db.all_entries()``, its own samples);
* the arguments: for each callable, the first of a list of generic argument patterns (a 1-d
  float64 tensor of 6 values, a (3, 3) one, two or three of them, a tensor and an int axis, an
  int / bool tensor, a (3, 3) SPD matrix, 0-d tensors...; a few callables have their own) for
  which the eager call succeeds on the first two variants. A pattern comes in variants of the
  same shapes and dtypes whose values differ where it matters: sign pattern, order (argmax,
  sort permutation), how many values are > 0, > 0.5, > 4, zeros at the ends and inside,
  duplicates (unique counts), int values (bincount's length, repeat counts, indices); names
  about NaN (``nan*``, ``isfinite``, ``fmax``...) get a variant with NaN and inf as well. An
  op-database entry's variants are its sample, another draw of the same shapes, and both of
  these reversed (order changes, the domain is kept: reversing keeps an SPD matrix SPD);
* the check: ``cf = jitgrad.compile(call)``; ``cf(variant 0)`` traces, then for every later
  variant ``cf(variant k)`` must equal the eager call on it: tensors of the same shape and
  dtype and values equal to 1e-12 relative (NaN where eager has NaN), other results equal
  (``==`` / ``np.array_equal``), an error of eager's type where eager raised. A result that
  differs is STALE (the failure this sweep exists for); a compiled call that raises where eager
  does not (or raises another type), or returns where eager raises, is an error mismatch;
* the same for three wrappings of each callable that reads host data (its eager call went
  through ``Tensor._host``, its compiled call fell back, its output shape depends on the
  values, or its source reads ``.item()`` / ``tolist`` / ``_host``; every callable with
  ``--wrappers all``): ``jitgrad.func.grad`` of its first float output's sum, ``func.vmap``
  over a batch of two variants of its first argument, and a ``jitgrad.fori_loop`` of two steps
  whose body calls it (on the carry where the result has the carry's shape).

Counted per namespace: callables tried, covered (eager ran on a pattern), captured (compiled
with no fallback), fell back (the capture stopped: eager with a warning), STALE, error
mismatch. Callables that need exotic non-tensor arguments (no pattern fits), and the skipped
ones (random, I/O, global state), count as not covered.

The logic lives here and not in ``jitgrad/testing`` on purpose: the kernel cache directory is
keyed by a hash of every ``.py`` file of the package (``_config.package_digest``), so a file
added there would start a cold kernel cache. ``tests/compile/test_stale_sweep.py`` loads this
file by path and fails on any STALE result; by default it runs a deterministic subset (every
callable that reads host data or whose output shape depends on the values, and a fixed sample
of the others); ``JITGRAD_TEST_SWEEP_ALL=1`` runs everything.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import inspect
import math
import re
import signal
import sys
import time
import types
import warnings
import zlib

import numpy as np

import jitgrad
import jitgrad.numpy as jnp

# --- the value variants ------------------------------------------------------------------------
# Variant 0 traces; 1 and 2 replay; 3 (the NaN one) only for the NaN-minded names. Against
# variant 0, variant 1 has another sign pattern, argmax/argmin, count > 0 / > 0.5 / > 4, a zero
# at the front (trim_zeros), a duplicate (unique), and variant 2 no negatives, a zero at the end.
NAN, INF = float("nan"), float("inf")
_F1 = [[0.3, -1.2, 0.7, 2.5, -0.4, 5.1],
       [0.0, 4.6, -2.2, 4.6, 0.2, -0.6],
       [1.0, 0.6, 3.3, 0.6, 7.5, 0.0],
       [NAN, 0.4, -1.0, NAN, 2.0, INF]]
_G1 = [[1.1, 0.2, -0.5, 2.5, 3.0, -4.4],
       [-0.3, 0.0, 2.2, -4.6, 0.9, 5.5],
       [0.7, 0.7, 2.0, 0.1, 6.0, 1.2],
       [0.5, NAN, -INF, 1.0, NAN, 3.0]]
_H1 = [[2.0, 1.5, 0.6, -1.0, 0.5, 0.0],
       [-0.6, 3.5, 0.0, 0.8, -2.5, 1.9],
       [0.2, 0.9, 4.4, 1.3, 0.3, 2.2],
       [1.0, 2.0, NAN, -1.0, INF, 0.0]]
_F2 = [[[0.3, -1.2, 0.7], [2.5, -0.4, 5.1], [0.0, 1.1, -0.9]],
       [[4.6, 0.0, -2.2], [4.6, 0.2, -0.6], [-1.5, 3.3, 0.8]],
       [[1.0, 0.6, 3.3], [0.05, 7.5, 0.6], [2.0, 0.7, 4.1]],
       [[NAN, 0.6, -3.3], [0.05, INF, 0.6], [2.0, 0.7, NAN]]]
_G2 = [[[1.1, 0.2, -0.5], [2.5, 3.0, -4.4], [0.6, -0.8, 1.7]],
       [[-0.3, 0.0, 2.2], [-4.6, 0.9, 5.5], [1.4, 0.1, -0.2]],
       [[0.7, 0.7, 2.0], [0.1, 6.0, 1.2], [3.1, 0.4, 0.9]],
       [[0.7, NAN, 2.0], [0.1, 6.0, -INF], [3.1, 0.4, 0.9]]]
_H2 = [[[2.0, 1.5, 0.6], [-1.0, 0.5, 0.0], [0.3, 0.2, 1.0]],
       [[-0.6, 3.5, 0.0], [0.8, -2.5, 1.9], [1.0, -1.0, 0.4]],
       [[0.2, 0.9, 4.4], [1.3, 0.3, 2.2], [0.6, 0.6, 5.0]],
       [[0.2, 0.9, NAN], [1.3, 0.3, 2.2], [0.6, INF, 5.0]]]


def _spd(m):
    m = np.asarray(m, dtype=np.float64)
    m = np.nan_to_num(m, nan=0.5, posinf=2.0, neginf=-2.0)
    return m @ m.T + np.eye(len(m))


def _f(rows):
    return [np.array(r, dtype=np.float64) for r in rows]


def _i(rows):
    return [np.array(r, dtype=np.int64) for r in rows]


def _b(rows):
    return [np.array(r, dtype=bool) for r in rows]


T_, F_ = True, False
ARRAYS = {
    "f1": _f(_F1), "g1": _f(_G1), "h1": _f(_H1),
    "f2": _f(_F2), "g2": _f(_G2), "h2": _f(_H2),
    "f3": [np.stack([np.array(a), np.array(b)]) for a, b in zip(_F2, _G2)],
    "g3": [np.stack([np.array(a), np.array(b)]) for a, b in zip(_H2, _F2)],
    "spd": [_spd(m) for m in _F2],
    "spd2": [_spd(m) for m in _G2],
    "v3": _f([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0], [2.0, 2.0, 0.1], [NAN, 1.0, 0.0]]),
    "w3": _f([[0.2, 0.1, -0.4], [1.5, -0.5, 0.0], [0.0, 0.0, 0.3], [0.0, NAN, 1.0]]),
    # positive, and in (0, 1): parameters and arguments of the distributions and special
    # functions with a domain
    "q1": _f([[0.5, 2.0, 1.2, 3.5, 0.9, 6.0], [4.0, 0.3, 0.3, 1.1, 2.2, 0.7],
              [1.0, 1.0, 8.0, 0.2, 0.6, 2.5], [NAN, 1.0, INF, 0.2, 0.6, 2.5]]),
    "r1": _f([[1.5, 0.7, 2.2, 0.4, 3.0, 1.0], [0.9, 2.6, 0.5, 5.0, 0.8, 1.7],
              [3.3, 0.2, 1.1, 1.1, 4.0, 0.6], [3.3, NAN, 1.1, 1.1, INF, 0.6]]),
    "u1": _f([[0.1, 0.5, 0.9, 0.3, 0.7, 0.2], [0.6, 0.05, 0.4, 0.95, 0.5, 0.5],
              [0.25, 0.8, 0.8, 0.01, 0.33, 0.6], [NAN, 0.8, 0.8, 0.01, 0.33, 0.6]]),
    "simplex3": _f([[0.2, 0.3, 0.5], [0.7, 0.1, 0.2], [0.05, 0.9, 0.05], [0.2, 0.3, 0.5]]),
    "tgrid": _f([[0.0, 0.1, 0.2, 0.4], [0.0, 0.5, 0.6, 1.5], [0.0, 0.05, 1.0, 2.0],
                 [0.0, 0.1, 0.2, 0.4]]),
    "i1": _i([[2, 0, 1, 3, 0, 5], [1, 1, 4, 0, 2, 2], [5, 5, 5, 0, 1, 3], [0, 0, 0, 0, 0, 0]]),
    "j1": _i([[0, 1, 1, 4, 2, 3], [3, 3, 0, 5, 1, 0], [2, 4, 0, 0, 0, 1], [1, 2, 3, 4, 5, 0]]),
    "i2": _i([[[0, 2, 1], [1, 1, 0], [2, 0, 2]], [[2, 2, 2], [0, 1, 0], [1, 0, 0]],
              [[1, 0, 2], [2, 1, 0], [0, 2, 1]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]]]),
    "t3": _i([[0, 2, 1], [2, 2, 0], [1, 0, 0], [0, 0, 0]]),
    "b1": _b([[F_, F_, T_, T_, F_, T_], [T_, F_, F_, T_, F_, F_], [T_, T_, T_, F_, T_, T_],
              [F_, F_, F_, F_, F_, F_]]),
    "c1": _b([[T_, T_, F_, F_, T_, F_], [F_, T_, T_, F_, T_, T_], [F_, F_, F_, T_, F_, F_],
              [T_, T_, T_, T_, T_, T_]]),
    "b2": _b([[[F_, T_, T_], [F_, F_, T_], [T_, F_, F_]], [[T_, T_, T_], [F_, F_, F_],
                                                         [F_, T_, F_]],
              [[F_, F_, F_], [F_, T_, F_], [T_, T_, T_]], [[F_, F_, F_]] * 3]),
    "s0": [np.array(v) for v in (0.7, -1.3, 4.2, NAN)],
    "p0": [np.array(v) for v in (0.25, 0.9, 0.5, NAN)],
    "n0": [np.array(v, dtype=np.int64) for v in (3, 1, 5, 0)],
    "z1": [np.array([complex(a, b) for a, b in zip(ra, rb)]) for ra, rb in zip(_F1, _G1)],
    # nn shapes
    "cx1": [np.array(r, dtype=np.float64).reshape(1, 1, 6) for r in _F1],
    "cw1": [np.array(r, dtype=np.float64).reshape(1, 1, 3) for r in
            ([0.5, -1.0, 0.25], [2.0, 0.0, -0.3], [0.1, 0.1, 0.1], [NAN, 0.0, 1.0])],
    "cx2": [np.array(r[:4] * 2 + r[4:] * 4, dtype=np.float64)[:16].reshape(1, 1, 4, 4)
            for r in _F1],
    "cw2": [np.array(r, dtype=np.float64).reshape(1, 1, 2, 2) for r in
            ([0.5, -1.0, 0.25, 2.0], [2.0, 0.0, -0.3, 0.7], [0.1, 0.1, 0.1, 0.1],
             [NAN, 0.0, 1.0, 1.0])],
    "emb": [np.array(_F1[k] + _G1[k] + _H1[k], dtype=np.float64).reshape(6, 3) for k in range(4)],
}
N_PLAIN = 3  # variants 0..2; variant 3 is the NaN one
NAN_MINDED = re.compile(r"nan|inf|finite|^(fmax|fmin|allclose|isclose|array_equal|array_equiv|"
                        r"unique\w*|sort|argsort|argmax|argmin|max|min|amax|amin|maximum|minimum|"
                        r"nonzero|count_nonzero|where|any|all|clip|clamp|sign|median|quantile|"
                        r"percentile|ptp|searchsorted|histogram\w*|digitize)$")


class A:
    """A pattern slot: the tensor made from ``ARRAYS[key][variant]`` (``array=True``: the
    ndarray itself)."""

    def __init__(self, key: str, array: bool = False):
        self.key, self.array = key, array

    def __repr__(self):
        return f"A({self.key!r})"


def _build(slot, k: int):
    if isinstance(slot, A):
        arr = ARRAYS[slot.key][k].copy()
        return arr if slot.array else jitgrad.tensor(arr)
    if isinstance(slot, tuple):
        return tuple(_build(s, k) for s in slot)
    if isinstance(slot, list):
        return [_build(s, k) for s in slot]
    return slot


def _show(slot, k: int) -> str:
    """Source text of a slot's value in variant ``k`` (for the reproduction lines)."""
    if isinstance(slot, A):
        arr = ARRAYS[slot.key][k]
        text = np.array2string(arr, separator=", ", threshold=100).replace("\n", "")
        text = text.replace("nan", "float('nan')").replace("inf", "float('inf')")
        return f"np.array({text})" if slot.array else f"jitgrad.tensor({text})"
    if isinstance(slot, tuple):
        return "(" + ", ".join(_show(s, k) for s in slot) + ("," if len(slot) == 1 else "") + ")"
    if isinstance(slot, list):
        return "[" + ", ".join(_show(s, k) for s in slot) + "]"
    if callable(slot):
        return getattr(slot, "__sweep_src__", getattr(slot, "__name__", repr(slot)))
    return repr(slot)


@dataclasses.dataclass
class Pattern:
    slots: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)

    def args(self, k: int):
        return tuple(_build(s, k) for s in self.slots), {n: _build(v, k) for n, v in
                                                          self.kwargs.items()}

    def show(self, k: int) -> str:
        parts = [_show(s, k) for s in self.slots]
        parts += [f"{n}={_show(v, k)}" for n, v in self.kwargs.items()]
        return ", ".join(parts)

    def first_is_float_tensor(self) -> bool:
        return (bool(self.slots) and isinstance(self.slots[0], A) and not self.slots[0].array
                and ARRAYS[self.slots[0].key][0].dtype.kind == "f")


def _slot(s):
    if isinstance(s, str) and s in ARRAYS:
        return A(s)
    if isinstance(s, (tuple, list)):
        return type(s)(_slot(v) for v in s)
    return s


def P(*slots, **kwargs) -> Pattern:
    """A pattern: names of ``ARRAYS`` become tensors (inside tuples and lists too)."""
    return Pattern(tuple(_slot(s) for s in slots), {k: _slot(v) for k, v in kwargs.items()})


GENERIC = [
    P("f1"), P("f2"), P("f1", "g1"), P("f2", "g2"), P("f2", 1), P("f1", 2), P("f1", 0.5),
    P("f1", "g1", "h1"), P("f2", "g2", "h2"), P("i1"), P("b1"), P("i1", "j1"), P("b1", "c1"),
    P("f1", "i1"), P("f1", "b1"), P("f1", "b1", 0.5), P("b1", "f1", "g1"), P("f1", 0, "i1"),
    P("f2", 1, "i2"), P("f2", 1, "i2", "g2"), P("f2", 0, "i2", "g2"), P("spd"), P("spd", "v3"),
    P("spd", "f2"), P("f2", "v3"), P("f1", 0.5, 2.0), P("s0"), P("n0"), P("s0", "p0"),
    P((3,), "s0"), P("n0", "s0"), P("q1"), P("q1", "r1"), P("u1", "q1"), P("q1", "r1", "u1"),
    P(1, "q1"), P("u1"), P("z1"), P("v3", "w3"), P(["f1", "g1"]), P("f2", 0, 1), P("f3", "g3"),
    P(A("f1", array=True)),
]


def _rhs(y, t):
    return -y * (1.0 + t)


_rhs.__sweep_src__ = "lambda y, t: -y * (1.0 + t)"


def _quadratic(p):
    return ((p - 1.0) ** 2).sum()


_quadratic.__sweep_src__ = "lambda p: ((p - 1.0) ** 2).sum()"


def _double(x):
    return x * 2.0


_double.__sweep_src__ = "lambda x: x * 2.0"


def _rowsum(r):
    return r.sum()


_rowsum.__sweep_src__ = "lambda r: r.sum()"

# callables whose arguments no generic pattern fits: (namespace, name) -> patterns
CUSTOM = {
    ("jitgrad", "einsum"): [P("ij->i", "f2"), P("i,i->i", "f1", "g1")],
    ("numpy", "einsum"): [P("ij->i", "f2"), P("i,i->i", "f1", "g1")],
    ("numpy", "einsum_path"): [P("ij,jk->ik", "f2", "g2")],
    ("jitgrad", "narrow"): [P("f1", 0, 1, 3)],
    ("Tensor", "narrow"): [P("f1", 0, 1, 3)],
    ("jitgrad", "scatter_reduce"): [P("f2", 1, "i2", "g2", "amax")],
    ("Tensor", "scatter_reduce"): [P("f2", 1, "i2", "g2", "amax")],
    ("Tensor", "scatter_reduce_"): [P("f2", 1, "i2", "g2", "amax")],
    ("Tensor", "index_put"): [P("f1", ("i1",), "g1"), P("f1", ("i1",), "g1", True)],
    ("Tensor", "index_put_"): [P("f1", ("i1",), "g1"), P("f1", ("i1",), "g1", True)],
    ("Tensor", "index_add"): [P("f1", 0, "i1", "g1")],
    ("Tensor", "index_add_"): [P("f1", 0, "i1", "g1")],
    ("Tensor", "__format__"): [P("s0", ".6f")],
    ("Tensor", "__setitem__"): [P("f1", "b1", 0.5), P("f1", "i1", 0.5)],
    ("Tensor", "__getitem__"): [P("f1", "b1"), P("f1", "i1"), P("f1", "n0")],
    ("numpy", "piecewise"): [P("f1", ["b1", "c1"], [_double, 1.0])],
    ("numpy", "apply_along_axis"): [P(_rowsum, 1, "f2")],
    ("numpy", "apply_over_axes"): [P(jnp.sum, "f2", [0])],
    ("numpy", "select"): [P(["b1", "c1"], ["f1", "g1"])],
    ("numpy", "choose"): [P("t3", ["v3", "w3", "v3"])],
    ("numpy", "block"): [P(["f1", "g1"])],
    ("numpy", "lexsort"): [P(("f1", "g1"))],
    ("numpy", "ix_"): [P("i1", "j1")],
    ("numpy", "histogram2d"): [P("f1", "g1")],
    ("numpy", "histogramdd"): [P("f2")],
    ("numpy", "ravel_multi_index"): [P(("i1", "j1"), (6, 6))],
    ("numpy", "unravel_index"): [P("i1", (2, 3))],
    ("numpy", "insert"): [P("f1", 2, "s0"), P("f1", "i1", "g1")],
    ("numpy", "delete"): [P("f1", "i1"), P("f1", "b1")],
    ("numpy", "fromfunction"): [P(_double, (3,))],
    ("numpy", "put"): [P("f1", "i1", "g1")],
    ("numpy", "place"): [P("f1", "b1", "g1")],
    ("numpy", "putmask"): [P("f1", "b1", "g1")],
    ("numpy", "put_along_axis"): [P("f2", "i2", "g2", 1)],
    ("numpy", "take_along_axis"): [P("f2", "i2", 1)],
    ("numpy", "copyto"): [P("f1", "g1"), P("f1", "g1", where="b1")],
    ("numpy", "fill_diagonal"): [P("f2", "s0")],
    ("numpy", "interp"): [P("f1", "tgrid", "v3")],
    ("numpy", "compress"): [P("b1", "f1")],
    ("numpy", "extract"): [P("b1", "f1")],
    ("numpy", "resize"): [P("f1", "n0")],
    ("numpy", "pad"): [P("f1", 2)],
    ("numpy", "polyfit"): [P("f1", "g1", 2)],
    ("numpy", "linalg.tensorsolve"): [P("spd", "v3")],
    ("numpy", "linalg.tensorinv"): [P("spd", 1)],
    ("numpy", "linalg.matrix_power"): [P("f2", 3)],
    ("numpy", "linalg.multi_dot"): [P(["f2", "g2", "h2"])],
    ("scipy.linalg", "cho_solve"): [P(("spd", False), "v3")],
    ("scipy.integrate", "odeint"): [P(_rhs, "v3", "tgrid")],
    ("scipy.optimize", "minimize"): [P(_quadratic, "v3")],
    ("scipy.special", "polygamma"): [P(1, "q1"), P("i1", "q1")],
    ("scipy.special", "multigammaln"): [P("q1", 2)],
    ("scipy.stats", "dirichlet.logpdf"): [P("simplex3", "v3")],
    ("scipy.stats", "dirichlet.pdf"): [P("simplex3", "v3")],
    ("scipy.stats", "multivariate_normal.logpdf"): [P("v3", "w3", "spd")],
    ("scipy.stats", "multivariate_normal.pdf"): [P("v3", "w3", "spd")],
    ("scipy.stats", "multivariate_normal.cdf"): [P("v3", "w3", "spd")],
    ("scipy.stats", "multivariate_normal.logcdf"): [P("v3", "w3", "spd")],
    ("scipy.stats", "multivariate_normal.entropy"): [P("w3", "spd")],
    ("nn.functional", "conv1d"): [P("cx1", "cw1")],
    ("nn.functional", "conv2d"): [P("cx2", "cw2")],
    ("nn.functional", "max_pool2d"): [P("cx2", 2)],
    ("nn.functional", "avg_pool2d"): [P("cx2", 2)],
    ("nn.functional", "batch_norm"): [P("f2", "v3", "simplex3")],
    ("Tensor", "astype"): [P("f1", jnp.int64)],
    ("numpy", "astype"): [P("f1", jnp.int64)],
    ("numpy", "broadcast_to"): [P("f1", (2, 6))],
    ("numpy", "digitize"): [P("f1", "tgrid")],
    ("numpy", "reshape"): [P("f2", (9,))],
    ("nn.functional", "layer_norm"): [P("f2", (3,))],
    ("nn.functional", "embedding"): [P("i1", "emb")],
    ("nn.functional", "cross_entropy"): [P("f2", "t3")],
    ("nn.functional", "nll_loss"): [P("f2", "t3")],
    ("nn.functional", "binary_cross_entropy"): [P("u1", "u1")],
}
# (namespace, name) skipped, and why: counted as tried and not covered
_RANDOM = re.compile(r"rand|normal_|uniform_|bernoulli|multinomial|dropout|exponential_|"
                     r"geometric_|cauchy_|manual_seed|seed")
SKIP_NAMES = {
    "jitgrad": {"compile": "takes a function", "fori_loop": "takes a function",
                "save": "I/O", "load": "I/O", "set_default_dtype": "global state",
                "set_num_threads": "global state", "set_num_interop_threads": "global state",
                "use_deterministic_algorithms": "global state", "empty_cache": "global state"},
    "scipy.optimize": {"value_and_grad_np": "takes a function; returns one on ndarrays"},
    "Tensor": {"backward": "accumulates .grad", "register_hook": "takes a function",
               "register_post_accumulate_grad_hook": "takes a function",
               "retain_grad": "autograd state", "cuda": "device", "data_ptr": "address",
               "__init__": "constructor", "__hash__": "identity", "__reduce_ex__": "pickling",
               "__array_function__": "protocol", "__array_ufunc__": "protocol",
               "__array_namespace__": "protocol"},
    "numpy": {n: "I/O or global state" for n in (
        "load", "loadtxt", "genfromtxt", "save", "savetxt", "savez", "savez_compressed",
        "fromfile", "fromregex", "set_printoptions", "seterr", "seterrcall", "setbufsize",
        "show_config", "show_runtime", "info", "printoptions", "frompyfunc")},
}
# mutating calls: the compiled function returns the tensor arguments after the call as well
# results whose values are uninitialised memory: shapes and dtypes compared
UNDEFINED = {"empty", "empty_like"}
_MUTATORS = {"copyto", "fill_diagonal", "put", "place", "putmask", "put_along_axis",
             "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__"}
_READS_SOURCE = re.compile(r"\._host\(|\.item\(\)|\.tolist\(|\.numpy\(")
_DATA_SOURCE = re.compile(r"\._data\b")


# --- the callables -------------------------------------------------------------------------------
@dataclasses.dataclass
class Target:
    ns: str  # the namespace row of the table
    name: str
    fn: object  # the callable (for Tensor: the unbound method)
    call: str  # source text of the call's head, for the reproduction lines
    method: bool = False  # called as args[0].<name>(*args[1:])
    patterns: list | None = None  # None: CUSTOM or GENERIC
    variants: list | None = None  # op database: per variant, () -> (args, kwargs)
    variant_text: list | None = None  # op database: per variant, the sample's source text
    skip: str | None = None

    @property
    def key(self) -> str:
        return f"{self.ns}:{self.name}"


def _is_function(obj) -> bool:
    return callable(obj) and not isinstance(obj, (type, types.ModuleType))


def _module_targets(ns, module, names, prefix, call_prefix) -> list:
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if not _is_function(obj):
            continue
        skip = SKIP_NAMES.get(ns, {}).get(name)
        if skip is None and _RANDOM.search(name):
            skip = "random"
        out.append(Target(ns, prefix + name, obj, f"{call_prefix}{name}", skip=skip))
    return out


def _public(module) -> list:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")]
    return [n for n in names if not n.startswith("_")]


TENSOR_DUNDERS = ("__abs__", "__add__", "__and__", "__array__", "__bool__", "__divmod__",
                  "__eq__", "__float__", "__floordiv__", "__format__", "__ge__", "__getitem__",
                  "__gt__", "__iadd__", "__imul__", "__index__", "__int__", "__invert__",
                  "__isub__", "__iter__", "__itruediv__", "__le__", "__len__", "__lt__",
                  "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__",
                  "__pow__", "__radd__", "__rdivmod__", "__repr__", "__rfloordiv__",
                  "__rmatmul__", "__rmod__", "__rmul__", "__rpow__", "__rsub__", "__rtruediv__",
                  "__setitem__", "__str__", "__sub__", "__truediv__", "__contains__",
                  "__complex__", "__xor__")


def targets(namespaces=None) -> list:
    """Every callable of the sweep, in a fixed order (``namespaces``: the rows to keep)."""
    import jitgrad.nn.functional as F
    import jitgrad.scipy as jsp

    out = []
    top = sorted(n for n in dir(jitgrad) if not n.startswith("_"))
    out += _module_targets("jitgrad", jitgrad, top, "", "jitgrad.")
    T = jitgrad.Tensor
    names = sorted(n for n in dir(T) if not n.startswith("_") and callable(getattr(T, n, None)))
    names += [n for n in TENSOR_DUNDERS if hasattr(T, n)]
    for name in names:
        skip = SKIP_NAMES["Tensor"].get(name)
        if skip is None and _RANDOM.search(name):
            skip = "random"
        out.append(Target("Tensor", name, getattr(T, name), f"x.{name}", method=True, skip=skip))
    np_names = [n for n in _public(jnp) if n not in ("random", "linalg", "fft")]
    out += _module_targets("numpy", jnp, np_names, "", "jnp.")
    out += _module_targets("numpy", jnp.linalg, _public(jnp.linalg), "linalg.", "jnp.linalg.")
    out += _module_targets("numpy", jnp.fft, _public(jnp.fft), "fft.", "jnp.fft.")
    for sub in ("special", "linalg", "signal", "integrate", "optimize"):
        mod = importlib.import_module(f"jitgrad.scipy.{sub}")
        out += _module_targets(f"scipy.{sub}", mod, _public(mod), "", f"jitgrad.scipy.{sub}.")
    for dist in _public(jsp.stats):
        mod = getattr(jsp.stats, dist)
        out += _module_targets("scipy.stats", mod, _public(mod), f"{dist}.",
                               f"jitgrad.scipy.stats.{dist}.")
    out += _module_targets("linalg", jitgrad.linalg, _public(jitgrad.linalg), "", "jitgrad.linalg.")
    out += _module_targets("nn.functional", F, _public(F), "", "F.")
    out += _op_db_targets()
    if namespaces:
        out = [t for t in out if t.ns in namespaces]
    return out


def _op_db_targets() -> list:
    from jitgrad.testing.op_db import all_entries
    from jitgrad.testing.opinfo import Sample, to_tensors

    out = []
    for op in all_entries():
        try:
            first = op.samples(np.random.default_rng(0), np.dtype("float64"))[-1]
            other = op.samples(np.random.default_rng(1), np.dtype("float64"))[-1]
        except Exception:  # noqa: BLE001 - an entry whose samples cannot be drawn: not covered
            out.append(Target("op_db", op.name, op.fn, f"op_db[{op.name!r}].fn",
                              skip="samples failed"))
            continue

        def swap(a, b):
            if (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                    and a.dtype == b.dtype and a.dtype.kind == "f"):
                return b
            if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
                return [swap(x, y) for x, y in zip(a, b)]
            return a

        def rev(a):
            if isinstance(a, np.ndarray) and a.ndim:
                return a.reshape(-1)[::-1].reshape(a.shape).copy()
            if isinstance(a, list):
                return [rev(x) for x in a]
            return a

        def with_nan(a):
            if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size:
                a = a.copy()
                a.reshape(-1)[0] = NAN
                a.reshape(-1)[-1] = INF
                return a
            if isinstance(a, list):
                return [with_nan(x) for x in a]
            return a

        s0 = tuple(first.args)
        s1 = tuple(swap(a, b) for a, b in zip(first.args, other.args))
        samples = [s0, s1, tuple(rev(a) for a in s0), tuple(rev(a) for a in s1)]
        if NAN_MINDED.search(_base_name(op.numpy_name or op.name)):
            samples.append(tuple(with_nan(a) for a in s1))
        variants = [(Sample(s, first.kwargs), op) for s in samples]

        def make(k, _variants=variants):
            sample, op_ = _variants[k]
            return tuple(to_tensors(sample, False, op_)), dict(sample.kwargs)

        t = Target("op_db", op.name, op.fn, f"op_db[{op.name!r}].fn")
        t.variants = [_bind(make, k) for k in range(len(variants))]
        t.variant_text = [_sample_text(v[0]) for v in variants]
        out.append(t)
    return out


def _bind(f, *a):
    return lambda: f(*a)


def _sample_text(sample) -> str:
    def show(a):
        if isinstance(a, np.ndarray):
            text = np.array2string(a, separator=", ", precision=17, threshold=60)
            return "np.array(" + text.replace("\n", "") + ")"
        if isinstance(a, list):
            return "[" + ", ".join(show(x) for x in a) + "]"
        return repr(a)
    parts = [show(a) for a in sample.args] + [f"{k}={v!r}" for k, v in sample.kwargs.items()]
    return ", ".join(parts)


def _base_name(name: str) -> str:
    name = name.split("-")[0]
    return name.rsplit(".", 1)[-1]


# --- running and comparing ---------------------------------------------------------------------
class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds):
    """Interrupt a (Python-level) call that runs away: a SIGALRM where it can be used."""
    usable = hasattr(signal, "SIGALRM") and _main_thread()
    if not usable:
        yield
        return

    def ring(signum, frame):
        raise _Timeout(f"over {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


@dataclasses.dataclass
class Snap:
    """A result, copied out: ``kind`` is "tensor", "array", "seq", "dict", "value", "error"."""
    kind: str
    value: object = None
    shape: tuple = ()
    dtype: str = ""
    items: list | None = None


def snap(out) -> Snap:
    if isinstance(out, jitgrad.Tensor):
        t = out.detach()
        if t.is_cuda:
            t = t.cpu()
        return Snap("tensor", np.array(t.numpy(), copy=True), tuple(out.shape),
                    str(out.dtype))
    if isinstance(out, np.ndarray):
        return Snap("array", out.copy(), out.shape, str(out.dtype))
    if isinstance(out, (tuple, list)):
        return Snap("seq", type(out).__name__, items=[snap(o) for o in out])
    if isinstance(out, dict):
        return Snap("dict", sorted(map(str, out)), items=[snap(out[k]) for k in sorted(
            out, key=str)])
    if isinstance(out, types.GeneratorType) or hasattr(out, "__next__"):
        return Snap("seq", "iterator", items=[snap(o) for o in out])
    if hasattr(out, "_fields") or dataclasses.is_dataclass(out):
        return Snap("value", repr(out))
    if hasattr(out, "x") and hasattr(out, "fun"):  # an OptimizeResult
        return Snap("seq", "OptimizeResult", items=[snap(out.x), snap(out.fun)])
    return Snap("value", out)


def _close(g, w, rtol, atol) -> bool:
    if g.shape != w.shape:
        return False
    if g.dtype.kind in "fc" or w.dtype.kind in "fc":
        g = g.astype(np.complex128 if "c" in (g.dtype.kind, w.dtype.kind) else np.float64)
        w = w.astype(g.dtype)
        both_nan = np.isnan(g) & np.isnan(w)
        same = (g == w) | both_nan
        with np.errstate(invalid="ignore", over="ignore"):
            near = np.abs(g - w) <= atol + rtol * np.abs(w)
        return bool(np.all(same | near))
    return bool(np.array_equal(g, w))


def differ(got: Snap, want: Snap, rtol: float, values: bool = True) -> str | None:
    """Why ``got`` is not ``want`` (None when equal; ``values=False``: shapes and dtypes)."""
    atol = rtol / 10
    if got.kind != want.kind:
        return f"{got.kind} where eager gives {want.kind}"
    if got.kind in ("tensor", "array"):
        if got.shape != want.shape:
            return f"shape {got.shape} where eager gives {want.shape}"
        if got.dtype != want.dtype:
            return f"dtype {got.dtype} where eager gives {want.dtype}"
        if values and not _close(got.value, want.value, rtol, atol):
            return "values differ"
        return None
    if got.kind in ("seq", "dict"):
        if got.value != want.value or len(got.items) != len(want.items):
            return (f"{got.value} of {len(got.items)} where eager gives {want.value} of "
                    f"{len(want.items)}")
        for k, (g, w) in enumerate(zip(got.items, want.items)):
            why = differ(g, w, rtol, values)
            if why:
                return f"[{k}]: {why}"
        return None
    g, w = got.value, want.value
    if isinstance(w, float) and isinstance(g, (float, int)):
        if (math.isnan(w) and math.isnan(g)) or abs(g - w) <= atol + rtol * abs(w):
            return None
        return f"{g!r} where eager gives {w!r}"
    try:
        same = g == w
        same = bool(np.all(same)) if not isinstance(same, bool) else same
    except Exception:  # noqa: BLE001
        same = False
    if not same and type(g) is type(w) and type(g).__eq__ is object.__eq__:
        same = repr(g) == repr(w)  # an info object compared by identity (np.iinfo)
    return None if same else f"{g!r} where eager gives {w!r}"[:200]


@dataclasses.dataclass
class Outcome:
    """What one check of one callable (one wrapping) found."""
    covered: bool = False
    captured: bool = False
    fell_back: bool = False
    stale: list = dataclasses.field(default_factory=list)  # (variant, why)
    error_mismatch: list = dataclasses.field(default_factory=list)  # (variant, why)
    host_read: bool = False
    shape_dependent: bool = False
    reason: str = ""  # the fallback reason, or why not covered


def _call(fn, args, kwargs, reads=None):
    """``(snap of the result, None)`` or ``(None, the error)``; ``reads``: a context that
    counts the host reads of the call itself (the copy-out reads values too)."""
    try:
        with _deadline(30):
            with reads if reads is not None else contextlib.nullcontext():
                out = fn(*args, **kwargs)
            return snap(out), None
    except _Timeout:
        raise
    except BaseException as exc:  # noqa: BLE001 - eager's error is a result to compare
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None, exc


class _HostReads:
    """A context counting the ``Tensor._host`` reads in it (``reads``), where jitgrad has
    the hook (``upper.set_tracing_hooks``); outside a trace only."""

    def __init__(self):
        self.reads = 0
        self._setter = None

    def __enter__(self):
        try:
            from jitgrad.ops import upper
        except ImportError:
            return self
        setter = getattr(upper, "set_tracing_hooks", None)
        if setter is not None and upper.host_read_hook is None and upper.creation_hook is None:
            self._setter = setter
            setter(None, self._read)
        return self

    def _read(self, t, what):
        self.reads += 1

    def __exit__(self, *exc):
        if self._setter is not None:
            self._setter(None, None)
            self._setter = None
        return False


def _eager(call, make, n, probe=False):
    """``call`` eager on variants 0 and 1 (both must succeed: covered) and the later ones:
    ``(outcome, {variant: (snap, error)})``; ``probe``: count its host reads."""
    res = Outcome()
    eager = {}
    args, kwargs = make(0)
    counter = _HostReads() if probe else None
    eager[0] = _call(call, args, kwargs, counter)
    res.host_read = bool(counter and counter.reads)
    if eager[0][1] is not None:
        res.reason = f"eager: {type(eager[0][1]).__name__}: {eager[0][1]}"[:160]
        return res, eager
    args, kwargs = make(1)
    eager[1] = _call(call, args, kwargs)
    if eager[1][1] is not None:
        res.reason = f"eager on variant 1: {type(eager[1][1]).__name__}"
        return res, eager
    res.covered = True
    for k in range(2, n):
        args, kwargs = make(k)
        eager[k] = _call(call, args, kwargs)
    shapes = {repr(_shapes(e[0])) for e in eager.values() if e[0] is not None}
    res.shape_dependent = len(shapes) > 1
    return res, eager


def _compiled(call, make, n, res, eager, rtol=1e-12, undefined=False) -> Outcome:
    """``jitgrad.compile(call)`` on variant 0 (the trace), then 1..n-1, against eager
    (``undefined``: the values are uninitialised memory; shapes and dtypes only)."""
    cf = jitgrad.compile(call)
    for k in range(n):
        args, kwargs = make(k)
        got, exc = _call(cf, args, kwargs)
        want, wexc = eager[k]
        if wexc is not None or exc is not None:
            if wexc is None:
                res.error_mismatch.append((k, f"compiled raised {type(exc).__name__}: "
                                              f"{str(exc)[:120]}"))
            elif exc is None:
                res.error_mismatch.append((k, f"eager raised {type(wexc).__name__}: "
                                              f"{str(wexc)[:80]}; compiled returned"))
            elif not (isinstance(exc, type(wexc)) or isinstance(wexc, type(exc))):
                res.error_mismatch.append((k, f"compiled raised {type(exc).__name__} where "
                                              f"eager raised {type(wexc).__name__}"))
            continue
        why = differ(got, want, rtol, values=not undefined)
        if why is not None:  # at variant 0 (the trace run itself): not staleness, still wrong
            res.stale.append((k, why if k else "trace run: " + why))
    stats = cf.stats()
    res.fell_back = bool(stats["fallbacks"]) or bool(stats["gave_up"])
    res.captured = not res.fell_back and stats["cached"] > 0
    if stats["fallbacks"]:
        res.reason = stats["fallbacks"][0][0][:160]
    return res


def _check(call, make, n, rtol=1e-12, undefined=False) -> Outcome:
    res, eager = _eager(call, make, n)
    return _compiled(call, make, n, res, eager, rtol, undefined) if res.covered else res


def _shapes(s: Snap):
    if s is None:
        return None
    if s.kind in ("tensor", "array"):
        return s.shape
    if s.kind in ("seq", "dict"):
        return [_shapes(i) for i in s.items]
    return s.kind


def _caller(target: Target, returns_args: bool):
    fn, name = target.fn, target.name
    if target.method:
        def call(*args, **kwargs):
            out = getattr(args[0], name)(*args[1:], **kwargs)
            if name == "__iter__":
                out = tuple(out)
            return (out, args[0]) if returns_args else out
    elif returns_args:
        def call(*args, **kwargs):
            return fn(*args, **kwargs), [a for a in args if isinstance(a, jitgrad.Tensor)]
    else:
        def call(*args, **kwargs):
            return fn(*args, **kwargs)
    call.__qualname__ = call.__name__ = f"sweep[{target.key}]"
    return call


def _first_tensor(out):
    if isinstance(out, jitgrad.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for o in out:
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def _float_sum(out):
    t = _first_tensor(out)
    if t is None or not t.dtype.is_floating_point or t.dtype.is_complex:
        raise TypeError("no float tensor output")
    return t.sum()


def _first_tensor_snap(s):
    if s is None:
        return None
    if s.kind == "tensor":
        return s
    if s.kind == "seq":
        for item in s.items:
            t = _first_tensor_snap(item)
            if t is not None:
                return t
    return None


def _wrapped(kind, call, make, out):
    """``(call, make)`` of one wrapping of ``call``; ``out``: the snap of its eager result on
    variant 0 (the loop's carry is chosen from it, outside the traced function)."""
    F = jitgrad.func
    if kind == "grad":
        return F.grad(lambda *a, **kw: _float_sum(call(*a, **kw))), make
    if kind == "vmap":
        def vmake(k, n=N_PLAIN):
            a0, kw0 = make(k)
            a1, _ = make((k + 1) % n)
            return (jitgrad.stack([a0[0], a1[0]]),) + tuple(a0[1:]), kw0

        def vcall(*a, **kw):
            rest = a[1:]
            return F.vmap(lambda x: call(x, *rest, **kw))(a[0])
        return vcall, vmake
    if kind == "loop":
        t = _first_tensor_snap(out)
        x = make(0)[0][0]
        if t is None or "complex" in t.dtype or "bool" in t.dtype:
            return None, None
        if t.shape == tuple(x.shape) and t.dtype == str(x.dtype):
            def lcall(*a, **kw):  # the carry goes through the callable: fn(fn(x))
                return jitgrad.fori_loop(2, lambda c: _first_tensor(call(c, *a[1:], **kw)), a[0])
        else:
            shape, dtype = t.shape, getattr(jitgrad, t.dtype.replace("jitgrad.", ""))

            def lcall(*a, **kw):  # the carry accumulates fn(*args), read in the body
                return jitgrad.fori_loop(2, lambda c: c + _first_tensor(call(*a, **kw)),
                                         jitgrad.zeros(shape, dtype=dtype))
        return lcall, make
    raise ValueError(kind)


# --- the sweep ---------------------------------------------------------------------------------
@dataclasses.dataclass
class Finding:
    target: Target
    wrap: str  # "" (the call itself), "grad", "vmap", "loop"
    kind: str  # "stale" or "error"
    variant: int
    why: str
    repro: str


@dataclasses.dataclass
class Report:
    rows: dict  # (ns, wrap) -> counts dict
    findings: list
    uncovered: dict  # target key -> reason
    seconds: float
    selected: int = 0

    @property
    def stale(self):
        return [f for f in self.findings if f.kind == "stale"]

    @property
    def errors(self):
        return [f for f in self.findings if f.kind == "error"]


COLUMNS = ("tried", "covered", "compiled", "captured", "fell back", "STALE", "error mismatch")
_HEADS = ("tried", "covered", "compiled", "captured", "fell back", "STALE", "err-mism")


def _counts():
    return dict.fromkeys(COLUMNS, 0)


def _repro(target: Target, pattern, k: int, wrap: str) -> str:
    head = target.call
    if target.variants is not None:
        a0, ak = target.variant_text[0], target.variant_text[k]
        body = f"{head}(*to_tensors(Sample(args)))"
        return (f"[{wrap or 'call'}] op_db {target.name!r}: variant 0 args ({a0}) then "
                f"variant {k} ({ak}); {body}")[:600]
    a0, ak = pattern.show(0), pattern.show(k)
    fn = f"lambda x, *a: x.{target.name}(*a)" if target.method else f"lambda *a: {head}(*a)"
    if wrap == "grad":
        fn = f"jitgrad.func.grad(lambda *a: ({fn})(*a).sum())"
    elif wrap == "vmap":
        fn = f"func.vmap of ({fn}) over the first argument, a batch of variants {k}, {k + 1}"
    elif wrap == "loop":
        fn = f"lambda *a: jitgrad.fori_loop(2, <body calling ({fn})>, carry)"
    if k == 0:
        return f"cf = jitgrad.compile({fn}); cf({a0})  # != eager (the trace run)"
    return f"cf = jitgrad.compile({fn}); cf({a0}); cf({ak})  # != eager"


def patterns_of(target: Target) -> list:
    if target.patterns is not None:
        return target.patterns
    return CUSTOM.get((target.ns, target.name), []) + GENERIC


def _source_matches(target: Target, pattern) -> bool:
    try:
        src = inspect.getsource(target.fn)
    except (TypeError, OSError):
        return False
    return bool(pattern.search(src))


def _reads_in_source(target: Target) -> bool:
    return _source_matches(target, _READS_SOURCE)


def sweep(target_list, wrappers="host", select=None, progress=None) -> Report:
    """Run the checks; ``select(target, outcome)``: whether a covered callable (its eager
    probe in ``outcome``) is compiled; ``wrappers``: "all", "host" (the host readers) or
    "none"."""
    start = time.perf_counter()
    rows, findings, uncovered = {}, [], {}
    selected = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for target in target_list:
            if progress:
                progress(target)
            row = rows.setdefault((target.ns, ""), _counts())
            row["tried"] += 1
            if target.skip:
                uncovered[target.key] = "skipped: " + target.skip
                continue
            outcome, eager, pattern, make, n, call = _first_covered(target)
            if outcome is None:
                uncovered[target.key] = "no pattern"
                continue
            row["covered"] += 1
            if select is not None and not select(target, outcome):
                continue
            selected += 1
            try:
                outcome = _compiled(call, make, n, outcome, eager,
                                    undefined=_base_name(target.name) in UNDEFINED)
            except _Timeout:
                outcome.error_mismatch.append((0, "the compiled calls ran over the deadline"))
            _count(row, outcome, target, pattern, "", findings)
            host = (outcome.host_read or outcome.fell_back or outcome.shape_dependent
                    or _reads_in_source(target))
            if wrappers == "none" or (wrappers == "host" and not host):
                continue
            first = make(0)[0]
            if not first or not isinstance(first[0], jitgrad.Tensor):
                continue
            for kind in ("grad", "vmap", "loop"):
                if kind == "grad" and not first[0].dtype.is_floating_point:
                    continue
                wrow = rows.setdefault((target.ns, kind), _counts())
                wrow["tried"] += 1
                wcall, wmake = _wrapped(kind, call, make, eager[0][0])
                if wcall is None:
                    continue
                wn = min(n, N_PLAIN) if kind == "vmap" else n
                try:
                    res = _check(wcall, wmake, wn, rtol=1e-9,
                                 undefined=_base_name(target.name) in UNDEFINED)
                except _Timeout:
                    continue
                if not res.covered:
                    continue
                wrow["covered"] += 1
                _count(wrow, res, target, pattern, kind, findings)
    return Report(rows, findings, uncovered, time.perf_counter() - start, selected)


def _first_covered(target):
    """The first pattern on which the eager call succeeds on variants 0 and 1, probed for
    host reads: ``(outcome, eager, pattern, make, n, call)`` (outcome None: none)."""
    if target.variants is not None:
        pats = [None]
    else:
        pats = patterns_of(target)
    nan_minded = bool(NAN_MINDED.search(_base_name(target.name)))
    for pattern in pats:
        if pattern is None:
            n = len(target.variants)

            def make(k, _v=target.variants):
                return _v[k]()
        else:
            n = N_PLAIN + (1 if nan_minded else 0)
            make = pattern.args
        try:
            base = target.name.split(".")[-1]
            returns_args = base in _MUTATORS or (base.endswith("_") and not base.endswith("__"))
            call = _caller(target, returns_args)
            outcome = _probe(call, make)
            if outcome is None:
                continue
            if outcome == "none":  # the call returned None: compare the mutated arguments
                call = _caller(target, True)
            outcome, eager = _eager(call, make, n, probe=True)
        except _Timeout:
            outcome = None
        if outcome is not None and outcome.covered:
            return outcome, eager, pattern, make, n, call
    return None, None, None, None, 0, None


def _probe(call, make):
    """A cheap eager try on variant 0: None when it raises, "none" when it returns None."""
    args, kwargs = make(0)
    with _deadline(30):
        try:
            out = call(*args, **kwargs)
        except _Timeout:
            raise
        except Exception:  # noqa: BLE001
            return None
    return "none" if out is None else "ok"


def _count(row, outcome, target, pattern, wrap, findings):
    row["compiled"] += 1
    if outcome.captured:
        row["captured"] += 1
    if outcome.fell_back:
        row["fell back"] += 1
    if outcome.stale:
        row["STALE"] += 1
        k, why = outcome.stale[0]
        findings.append(Finding(target, wrap, "stale", k, why, _repro(target, pattern, k, wrap)))
    if outcome.error_mismatch:
        row["error mismatch"] += 1
        k, why = outcome.error_mismatch[0]
        findings.append(Finding(target, wrap, "error", k, why, _repro(target, pattern, k, wrap)))


def table(report: Report) -> str:
    nss = list(dict.fromkeys(ns for ns, _ in report.rows))
    lines = []
    head = f"{'namespace':<16}" + "".join(f"{c:>10}" for c in _HEADS)
    lines.append(head)
    lines.append("-" * len(head))
    total = {w: _counts() for w in ("", "grad", "vmap", "loop")}
    for wrap in ("", "grad", "vmap", "loop"):
        if wrap and not any(w == wrap for _, w in report.rows):
            continue
        if wrap:
            lines.append("")
            lines.append(f"wrapped in {wrap}:")
        for ns in nss:
            row = report.rows.get((ns, wrap))
            if row is None:
                continue
            for c in COLUMNS:
                total[wrap][c] += row[c]
            lines.append(f"{ns:<16}" + "".join(f"{row[c]:>10}" for c in COLUMNS))
        lines.append(f"{'total':<16}" + "".join(f"{total[wrap][c]:>10}" for c in COLUMNS))
    return "\n".join(lines)


def findings_text(findings, limit=None) -> str:
    out = []
    for f in findings[:limit]:
        wrap = f" [{f.wrap}]" if f.wrap else ""
        out.append(f"{f.kind.upper()} {f.target.key}{wrap} (variant {f.variant}): {f.why}\n"
                   f"    {f.repro}")
    return "\n".join(out)


# --- the default subset ------------------------------------------------------------------------
SAMPLE_STRIDE = 4  # of the callables that read no host data: the ones with crc32(key) % 4 == 0


def default_select(target: Target, outcome: Outcome) -> bool:
    """Every callable that reads host data (``Tensor._host``), whose output shape depends on
    the values, or whose own source reads values or hands a tensor's array to a kernel
    (``._data``: an array an op takes as an attribute is a constant of the trace, see
    ``F.batch_norm``'s running stats); a fixed quarter of the others."""
    if outcome.host_read or outcome.shape_dependent or outcome.fell_back:
        return True
    if _reads_in_source(target) or _source_matches(target, _DATA_SOURCE):
        return True
    return zlib.crc32(target.key.encode()) % SAMPLE_STRIDE == 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subset", action="store_true",
                        help="the test's default subset (host readers and a fixed sample)")
    parser.add_argument("--wrappers", default="host", choices=("all", "host", "none"))
    parser.add_argument("--only", default="", help="comma-separated namespaces")
    parser.add_argument("--list", action="store_true", help="also list the uncovered callables")
    parser.add_argument("--progress", action="store_true")
    ns = parser.parse_args(argv)
    print(f"jitgrad from {jitgrad.__file__}", flush=True)
    only = [s for s in ns.only.split(",") if s]
    tl = targets(only or None)

    clock = [time.perf_counter(), None]

    def progress(t):  # the time of the previous callable
        now = time.perf_counter()
        if clock[1] is not None:
            print(f"  {now - clock[0]:6.2f}s  {clock[1]}", file=sys.stderr, flush=True)
        clock[:] = [now, t.key]
    report = sweep(tl, wrappers=ns.wrappers, select=default_select if ns.subset else None,
                   progress=progress if ns.progress else None)
    print(table(report))
    print(f"\n{report.selected} callables compiled; {report.seconds:.0f} s")
    if report.stale:
        print(f"\nSTALE ({len(report.stale)}):")
        print(findings_text(report.stale))
    if report.errors:
        print(f"\nerror mismatches ({len(report.errors)}):")
        print(findings_text(report.errors))
    if ns.list:
        print("\nnot covered:")
        for key, why in report.uncovered.items():
            print(f"  {key}: {why}")
    return 1 if report.stale else 0


if __name__ == "__main__":
    sys.exit(main())
