"""Every elementwise registry row's forward and gradient at the special values (+-inf, nan,
+-0, the largest and smallest normal numbers, the smallest subnormal, a few ordinary numbers)
in float64 and float32, against PyTorch's, pinned in ``_special_grads_pinned.py`` (written by
``_make_special_grads.py`` with torch installed; no test imports torch). Binary rows take every
pair of points. Each case is one call over all its points, and its gradient is taken twice: by
the fused backward kernel and with ``create_graph=True`` (the derivative bodies run on Tensors).

Compared: the same nan pattern, the same infinities (with sign), finite values within
``RTOL`` (a few ulp) or both below the smallest normal number (``atol = tiny``: results there
have fewer significant bits, and PyTorch's vectorised kernels flush some of them to 0). The
sign of a zero is not compared. Where jitgrad deliberately differs from PyTorch, the points
and the reason are listed in ``DIFFERENT`` (each entry must still excuse a point of the fused
CPU kernel's result: no stale entries); looser tolerances, with their reason, in ``TOLERANCE``."""
import functools
import importlib
import math
import os

import numpy as np
import pytest

import jitgrad
from jitgrad.ops.core import dispatch
from jitgrad.ops.core.registry import OPS

from _special_grads_pinned import CASES, DATA, FUNCTIONS, POINTS, TORCH_VERSION

DTYPES = ("float64", "float32")
RTOL = {"float64": 1e-12, "float32": 1e-5}

#: elementwise rows without a PyTorch counterpart: row -> why (checked elsewhere)
EXCLUDED = {
    "cbrt": "PyTorch has no cbrt (torch.pow(x, 1/3) is nan below 0); test_special_values "
            "checks its forward against NumPy, the op database its gradient by gradcheck",
}


def _quotient_overflows(x, y):
    """Finite x whose x / y overflows to +-inf (y subnormal or 0.5 with x = max)."""
    with np.errstate(all="ignore"):
        return np.isfinite(x) & np.isinf(x / y) & (y != 0)


def _underflow(x, y):
    """Operands, not both 0, whose x*x + y*y is below 1 / max in their dtype (0 or a
    subnormal number: its reciprocal overflows)."""
    with np.errstate(all="ignore"):
        return ((x != 0) | (y != 0)) & (x * x + y * y < 1 / np.finfo(x.dtype).max)


_SCIPY_GAMMA = ("jitgrad's gamma family is SciPy's (jitgrad.scipy.special; its forward is "
                "checked against SciPy in test_special_values): ")
_NUMPY_MOD = ("NumPy's (C's) exact fmod/remainder, 0 here; PyTorch's x - trunc(x / y) y "
              "overflows to nan")
# (case, output) -> (points: fn(*operands) -> bool mask, why jitgrad differs from PyTorch there
# [, the dtypes where it does]); output is 'forward' or 'gradN' (the gradient in the row's N-th
# float input). Each entry must excuse at least one point (no stale entries).
DIFFERENT = {
    ("sign", "forward"): (np.isnan, "sign(nan) is nan as in NumPy; PyTorch's is 0"),
    ("logit_eps", "grad0"): (
        np.isnan, "nan at a nan input, as PyTorch's scalar kernel (a one-element tensor); "
                  "its vectorised kernel (16 elements here) gives 0"),
    ("gammaln", "forward"): (
        lambda x: np.isneginf(x) | ((x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)),
        _SCIPY_GAMMA + "-inf at -inf, inf at the subnormals; PyTorch's lgamma gives +inf and "
                       "-log|x|"),
    ("digamma", "grad0"): (
        lambda x: np.isinf(x) | ((x < 0) & (x == np.round(x))),
        _SCIPY_GAMMA + "polygamma(1, x) is inf at the poles (the negative integers, -max "
                       "among them) and at -inf; PyTorch's is finite (6.6e32 at -1) or nan"),
    ("polygamma1", "forward"): (
        lambda x: np.isneginf(x) | ((x < 0) & (x == np.round(x))),
        _SCIPY_GAMMA + "inf at the poles and at -inf; PyTorch's is finite or nan"),
    ("polygamma1", "grad0"): (
        np.isposinf, _SCIPY_GAMMA + "polygamma(2, inf) is -0 (the limit); PyTorch's nan"),
    ("polygamma2", "forward"): (
        np.isposinf, _SCIPY_GAMMA + "polygamma(2, inf) is -0 (the limit); PyTorch's nan"),
    ("polygamma2", "grad0"): (
        np.isposinf, _SCIPY_GAMMA + "polygamma(3, inf) is 0 (the limit); PyTorch's nan"),
    ("pow_scalar_-0.5", "forward"): (
        lambda x: np.isneginf(x) | ((x == 0) & np.signbit(x)),
        "x ** -0.5 is C's (NumPy's) pow: 0 at -inf, +inf at -0; PyTorch computes it as "
        "rsqrt(x): nan and -inf"),
    ("pow", "grad0"): (
        lambda x, y: (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny) & (np.abs(y) < 1),
        "the fused CPU kernel evaluates x ** (y - 1) in float64 (finite: y x^(y-1) is the true "
        "value), PyTorch in float32, where 1/1e-45 overflows to inf (as jitgrad's Tensor ops "
        "under create_graph)", ("float32",)),
    ("fmod", "forward"): (_quotient_overflows, _NUMPY_MOD),
    ("remainder", "forward"): (_quotient_overflows, _NUMPY_MOD),
    ("copysign", "grad0"): (
        lambda x, y: np.isinf(x),
        "d/dx copysign(x, y) = sign(result) sign(x), +-1 at x = +-inf; PyTorch's result / x "
        "is inf / inf = nan there"),
    ("arctan2", "grad0"): (
        _underflow, "the true derivative x / (x^2 + y^2) (finite, from hypot); PyTorch's "
                    "x^2 + y^2 underflows to 0 and it gives 0 (nan or inf just above)"),
    ("arctan2", "grad1"): (
        _underflow, "as grad0: -y / (x^2 + y^2) from hypot, where PyTorch's underflows"),
    # xlogy / xlog1py: composites of where, mul and log (jitgrad.scipy.special)
    ("xlogy", "grad0"): (
        lambda x, y: (x == 0) & np.isposinf(y),
        "x log y at x = 0, y = inf is 0 by a mask, and so its x-gradient; PyTorch's is log y = "
        "inf"),
    ("xlogy", "grad1"): (
        lambda x, y: (x == 0) & (y == 0),
        "the y-gradient of x log y at x = 0 is 0: the value is 0 for every y there; PyTorch's "
        "x / y is 0 / 0 = nan"),
    ("xlog1py", "grad0"): (
        lambda x, y: (x == 0) & np.isposinf(y), "as xlogy's, log1p(inf) = inf in PyTorch"),
    ("xlog1py", "grad1"): (
        lambda x, y: (x == 0) & (y == -1), "as xlogy's: PyTorch's x / (1 + y) is 0 / 0 = nan"),
}

# (case, output) -> {dtype: (rtol, atol)}, overriding RTOL and atol = tiny
TOLERANCE = {
    # PyTorch's trigamma/polygamma is a short series, ~5e-10 relative from the true value;
    # jitgrad's matches SciPy's to a few ulp
    ("digamma", "grad0"): {"float64": (1e-8, 0.0)},
    ("polygamma1", "forward"): {"float64": (1e-8, 0.0), "float32": (1e-8, 0.0)},
    ("polygamma1", "grad0"): {"float64": (1e-8, 0.0), "float32": (1e-8, 0.0)},
    ("polygamma2", "forward"): {"float64": (1e-8, 0.0), "float32": (1e-8, 0.0)},
    ("polygamma2", "grad0"): {"float64": (1e-8, 0.0), "float32": (1e-8, 0.0)},
    # s (1 - s) from the saved result s: 1 - s cancels for large x, an absolute error of
    # order eps in both (at x = 30 they are 1e-3 apart, relatively)
    ("sigmoid", "grad0"): {"float64": (1e-12, 1e-15), "float32": (1e-5, 1e-6)},
    ("expit", "grad0"): {"float64": (1e-12, 1e-15), "float32": (1e-5, 1e-6)},
    # sigmoid(x) - y: the same cancellation at x = 30, y = 1
    ("bce_with_logits", "grad0"): {"float64": (1e-12, 1e-15), "float32": (1e-5, 1e-6)},
    # torch's log2(2^x + 2^y) at x = y = -1 is -4.8e-17, not 0: cancellation
    ("logaddexp2", "forward"): {"float64": (1e-12, 1e-15), "float32": (1e-5, 1e-6)},
}


def decode(text, dtype):
    """The pinned tokens as an array of ``dtype`` (float32 tokens parse to their float32).
    polygamma's results are float64 for float32 operands (SciPy's dtype): PyTorch was asked in
    float64 at the float32 points, and its float64 gradients round to the float32 inputs'."""
    with np.errstate(over="ignore"):
        return np.array(text.split(), dtype=np.float64 if dtype == "float64" else np.float32)


def _arity(case):
    return (CASES.get(case) or FUNCTIONS[case])[2]


def operands(case, dtype):
    """The case's float operands over the pinned points (binary: every pair)."""
    points = decode(POINTS[dtype], dtype)
    if _arity(case) == 1:
        return [points]
    return [np.repeat(points, len(points)), np.tile(points, len(points))]


def mismatches(got, expected, rtol, atol):
    """Boolean mask of the elements of ``got`` that differ from ``expected``."""
    got, expected = got.astype(np.float64), expected.astype(np.float64)
    nan_got, nan_expected = np.isnan(got), np.isnan(expected)
    bad = nan_got != nan_expected
    compared = ~nan_got & ~nan_expected
    infinite = compared & (np.isinf(got) | np.isinf(expected))
    bad |= infinite & (got != expected)
    finite = compared & ~infinite
    with np.errstate(all="ignore"):
        bad |= finite & ~(np.abs(got - expected) <= rtol * np.abs(expected) + atol)
    return bad


def _check(case, output, dtype, got, points, kernel=True):
    if got.dtype == np.bool_:  # comparisons: pinned as 0 and 1
        got = got.astype(dtype)
    expected = decode(DATA[(case, dtype)][output], got.dtype.name)
    assert got.shape == expected.shape, (case, output, got.shape, expected.shape)
    rtol, atol = TOLERANCE.get((case, output), {}).get(
        dtype, (RTOL[got.dtype.name], float(np.finfo(got.dtype).tiny)))
    bad = mismatches(got, expected, rtol, atol)
    different = DIFFERENT.get((case, output))
    if different is not None and dtype in (different[2] if len(different) > 2 else DTYPES):
        with np.errstate(all="ignore"):
            excused = different[0](*points)
        if kernel and not (bad & excused).any():
            return f"{case} {output} {dtype}: the DIFFERENT entry excuses no point (stale?)"
        bad &= ~excused
    where = np.nonzero(bad)[0]
    rows = [(tuple(float(p[i]) for p in points), float(got[i]), float(expected[i]))
            for i in where[:8]]
    return f"{case} {output} {dtype}: {len(where)} differ ((operands), jitgrad, torch) {rows}" \
        if len(where) else None


def sweep(case, dtype, device="cpu"):
    """The differences from PyTorch of ``case``'s forward and gradients (fused kernel and
    ``create_graph``) at the points in ``dtype`` on ``device``: a list of messages."""
    points = operands(case, dtype)
    differentiable = case in FUNCTIONS or OPS[CASES[case][0]].differentiable
    leaves = [jitgrad.tensor(p, requires_grad=differentiable, device=device) for p in points]
    if case in FUNCTIONS:
        name, kwargs, _ = FUNCTIONS[case]
        module, _, function = name.rpartition(".")
        function, args = getattr(importlib.import_module(module), function), leaves
    else:
        row, kwargs, arity = CASES[case]
        function, args = functools.partial(dispatch.elementwise, OPS[row]), leaves
        if arity == 3:  # where(condition, x, y): the condition true at every third pair
            args = [jitgrad.tensor(np.arange(len(points[0])) % 3 == 0, device=device), *leaves]
    with np.errstate(over="ignore", invalid="ignore"):  # (the composites' NumPy steps)
        out = function(*args, **kwargs)
    failures = [_check(case, "forward", dtype, out.cpu().numpy(), points,
                       kernel=device == "cpu")]
    if differentiable:
        for create_graph in (False, True):
            with np.errstate(over="ignore"):  # (polygamma: float64 gradients cast to float32)
                grads = jitgrad.autograd.grad(out, leaves, jitgrad.ones_like(out),
                                              retain_graph=True, create_graph=create_graph,
                                              allow_unused=True, materialize_grads=True)
            for k, grad in enumerate(grads):
                failure = _check(case, f"grad{k}", dtype, grad.cpu().numpy(), points,
                                 kernel=not create_graph and device == "cpu")
                failures.append(failure and f"{failure} (create_graph={create_graph})")
    return [f for f in failures if f]


# float32 compiles a backward kernel per case (~3.5 min for all of them on a cold cache): by
# default every fourth case, plus the cases with float32-only DIFFERENT entries, run in
# float32; JITGRAD_TEST_SPECIAL_ALL=1 runs every case in both dtypes.
_ALL_CASES = sorted(CASES) + sorted(FUNCTIONS)
_NOTED = {key[0] for key, entry in DIFFERENT.items() if len(entry) > 2 and entry[2] == ("float32",)}
_FLOAT32 = [c for k, c in enumerate(_ALL_CASES)
            if os.environ.get("JITGRAD_TEST_SPECIAL_ALL") == "1" or k % 4 == 0 or c in _NOTED]
PARAMS = [(c, "float64") for c in _ALL_CASES] + [(c, "float32") for c in _FLOAT32]


@pytest.mark.parametrize("case, dtype", PARAMS)
def test_against_torch(case, dtype):
    failures = sweep(case, dtype)
    assert not failures, f"vs torch {TORCH_VERSION}:\n" + "\n".join(failures)


def test_every_elementwise_row_is_pinned_or_excluded():
    """A new elementwise row cannot skip the sweep: it is pinned (add it to
    _make_special_grads.py and regenerate) or excluded here with the reason."""
    rows = {name for name, op in OPS.items() if op.elementwise}
    pinned = {row for row, _, _ in CASES.values()}
    assert rows - pinned - set(EXCLUDED) == set(), "rows neither pinned nor excluded"
    assert pinned - rows == set(), "pinned cases of rows that no longer exist"
    assert pinned & set(EXCLUDED) == set()
    assert {case for case, _ in DIFFERENT} <= set(CASES) | set(FUNCTIONS)
    assert {case for case, _ in TOLERANCE} <= set(CASES) | set(FUNCTIONS)


def test_pinned_data_is_complete():
    for case in [*CASES, *FUNCTIONS]:
        arity = _arity(case)
        for dtype in DTYPES:
            entry = DATA[(case, dtype)]
            n = len(decode(POINTS[dtype], dtype)) ** (1 if arity == 1 else 2)
            assert len(entry["forward"].split()) == n, (case, dtype)
            if case in FUNCTIONS or OPS[CASES[case][0]].differentiable:
                assert len(entry) == 1 + min(arity, 2), (case, dtype, sorted(entry))
    assert math.isnan(float(decode(POINTS["float64"], "float64")[2]))
