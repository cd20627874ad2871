"""The cases of issue 32's sweep (``stale_sweep.py``): what is called, and with which arguments.

* the callables (``targets``): ``jitgrad``'s functions, ``jitgrad.Tensor``'s methods (public,
  and the operator / conversion dunders, ``TENSOR_DUNDERS``), ``jitgrad.numpy`` (with ``linalg``
  and ``fft``; ``random`` is left out: random calls are refused anyway), ``jitgrad.scipy``
  (``special``, ``linalg``, ``signal``, ``stats.*``, ``integrate``, ``optimize``),
  ``jitgrad.linalg``, ``jitgrad.nn.functional``, and every entry of the op database
  (``jitgrad.testing.op_db.all_entries()``, its own samples: ``_op_db_targets``); the skipped
  ones (``SKIP_NAMES``, random names: I/O, global state, randomness) are listed with the reason;
* the arguments (``patterns_of``): for each callable, the first of a list of generic argument
  patterns (``GENERIC``: a 1-d float64 tensor of 6 values, a (3, 3) one, two or three of them, a
  tensor and an int axis, an int / bool tensor, a (3, 3) SPD matrix, 0-d tensors...; a few
  callables have their own, ``CUSTOM``) for which the eager call succeeds on the first two
  variants. A pattern (``P``) names arrays of ``ARRAYS``, each in variants of the same shapes
  and dtypes whose values differ where it matters: sign pattern, order (argmax, sort
  permutation), how many values are > 0, > 0.5, > 4, zeros at the ends and inside, duplicates
  (unique counts), int values (bincount's length, repeat counts, indices); names about NaN
  (``nan*``, ``isfinite``, ``fmax``..., ``NAN_MINDED``) get a variant with NaN and inf as well.
  An op-database entry's variants are its sample, another draw of the same shapes, and both of
  these reversed (order changes, the domain is kept: reversing keeps an SPD matrix SPD);
* how a callable is called (``make_caller``): a method on its first argument, and for the
  mutating ones (``mutates``) the tensor arguments returned after the call as well.

Running the calls, eager and compiled, and comparing them is ``stale_sweep.py``'s part. Like it,
this file lives outside the package on purpose (see ``stale_sweep.py``'s docstring).
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import types

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
_RANDOM = re.compile(r"rand|normal_|^normal$|uniform_|bernoulli|multinomial|dropout|exponential_|"
                     r"geometric_|cauchy_|^poisson$|gumbel|rrelu|manual_seed|seed")
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
# results whose values are uninitialised memory: shapes and dtypes compared
UNDEFINED = {"empty", "empty_like"}
# mutating calls: the compiled function returns the tensor arguments after the call as well
MUTATORS = {"copyto", "fill_diagonal", "put", "place", "putmask", "put_along_axis",
            "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__"}
# a callable's source that reads values (``READS_SOURCE``) or hands a tensor's array to a kernel
READS_SOURCE = re.compile(r"\._host\(|\.item\(\)|\.tolist\(|\.numpy\(")
DATA_SOURCE = re.compile(r"\._data\b")


# --- the callables -----------------------------------------------------------------------------
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
        if NAN_MINDED.search(base_name(op.numpy_name or op.name)):
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


def base_name(name: str) -> str:
    """``name`` without its op-database variant suffix and namespace prefix."""
    name = name.split("-")[0]
    return name.rsplit(".", 1)[-1]


# --- the arguments and the call ----------------------------------------------------------------
def patterns_of(target: Target) -> list:
    """The argument patterns tried for ``target``, in order: its own, CUSTOM's, then GENERIC."""
    if target.patterns is not None:
        return target.patterns
    return CUSTOM.get((target.ns, target.name), []) + GENERIC


def source_matches(target: Target, pattern) -> bool:
    try:
        src = inspect.getsource(target.fn)
    except (TypeError, OSError):
        return False
    return bool(pattern.search(src))


def reads_in_source(target: Target) -> bool:
    return source_matches(target, READS_SOURCE)


def mutates(target: Target) -> bool:
    """Whether the call mutates its arguments (a mutator, or an in-place ``name_``)."""
    base = target.name.split(".")[-1]
    return base in MUTATORS or (base.endswith("_") and not base.endswith("__"))


def make_caller(target: Target, returns_args: bool):
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
