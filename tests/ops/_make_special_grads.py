"""Write ``_special_grads_pinned.py``: PyTorch's forward values and gradients of every
elementwise registry row at the special values, the reference ``test_special_grads_torch.py``
compares jitgrad with.

Run it with a Python that has PyTorch (never a jitgrad dependency; no test imports it)::

    /work/benchvenv/bin/python tests/ops/_make_special_grads.py

The points: +-inf, nan, +-0, the largest and smallest normal numbers, the smallest subnormal,
and a few ordinary numbers, in float64 and float32; binary rows take every pair of them. Each
case is one call of the torch function on all points at once, then ``torch.autograd.grad`` of
the output with a cotangent of ones (the gradient of ``out.sum()``) for every float input.
"""
from __future__ import annotations

import math
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling
from test_special_values import special_values  # the sweep's points, defined once

INF = math.inf
DTYPES = ("float64", "float32")


# (case id, registry row, row attrs, torch function of the row's inputs in their order)
UNARY = [
    ("neg", "neg", {}, torch.neg),
    ("exp", "exp", {}, torch.exp),
    ("log", "log", {}, torch.log),
    ("sin", "sin", {}, torch.sin),
    ("cos", "cos", {}, torch.cos),
    ("tan", "tan", {}, torch.tan),
    ("tanh", "tanh", {}, torch.tanh),
    ("sinh", "sinh", {}, torch.sinh),
    ("cosh", "cosh", {}, torch.cosh),
    ("expm1", "expm1", {}, torch.expm1),
    ("log1p", "log1p", {}, torch.log1p),
    ("sqrt", "sqrt", {}, torch.sqrt),
    ("rsqrt", "rsqrt", {}, torch.rsqrt),
    ("abs", "abs", {}, torch.abs),
    ("sign", "sign", {}, torch.sign),
    ("reciprocal", "reciprocal", {}, torch.reciprocal),
    ("erf", "erf", {}, torch.erf),
    ("sigmoid", "sigmoid", {}, torch.sigmoid),
    ("relu", "relu", {}, torch.relu),
    ("arcsin", "arcsin", {}, torch.asin),
    ("arccos", "arccos", {}, torch.acos),
    ("arctan", "arctan", {}, torch.atan),
    ("arcsinh", "arcsinh", {}, torch.asinh),
    ("arccosh", "arccosh", {}, torch.acosh),
    ("arctanh", "arctanh", {}, torch.atanh),
    ("exp2", "exp2", {}, torch.exp2),
    ("log2", "log2", {}, torch.log2),
    ("log10", "log10", {}, torch.log10),
    ("sinc", "sinc", {}, torch.sinc),
    ("floor", "floor", {}, torch.floor),
    ("ceil", "ceil", {}, torch.ceil),
    ("trunc", "trunc", {}, torch.trunc),
    ("rint", "rint", {}, torch.round),  # (torch.round: halves to even, as rint)
    ("gammaln", "gammaln", {}, torch.lgamma),
    ("digamma", "digamma", {}, torch.digamma),
    ("polygamma1", "polygamma", {"n": 1}, lambda x: torch.polygamma(1, x)),
    ("polygamma2", "polygamma", {"n": 2}, lambda x: torch.polygamma(2, x)),
    ("gelu", "gelu", {}, F.gelu),
    ("gelu_tanh", "gelu_tanh", {}, lambda x: F.gelu(x, approximate="tanh")),
    ("silu", "silu", {}, F.silu),
    ("softplus", "softplus", {"beta": 1.0, "threshold": 20.0}, F.softplus),
    ("softplus_beta2", "softplus", {"beta": 2.0, "threshold": 10.0},
     lambda x: F.softplus(x, beta=2.0, threshold=10.0)),
    ("leaky_relu", "leaky_relu", {"negative_slope": 0.01}, F.leaky_relu),
    ("leaky_relu_0.2", "leaky_relu", {"negative_slope": 0.2},
     lambda x: F.leaky_relu(x, 0.2)),
    ("logit", "logit", {"low": -INF, "high": INF}, torch.logit),
    ("logit_eps", "logit", {"low": 1e-6, "high": 1.0 - 1e-6},
     lambda x: torch.logit(x, eps=1e-6)),
    ("clamp", "clamp", {"min": 0.0, "max": 1.0}, lambda x: torch.clamp(x, 0.0, 1.0)),
    ("clamp_max", "clamp", {"min": -INF, "max": 1.0}, lambda x: torch.clamp(x, max=1.0)),
    ("clamp_min", "clamp", {"min": 0.0, "max": INF}, lambda x: torch.clamp(x, min=0.0)),
    ("clamp_empty", "clamp", {"min": 1.0, "max": 0.0}, lambda x: torch.clamp(x, 1.0, 0.0)),
    ("rsub", "rsub", {"other": 3.0}, lambda x: torch.rsub(x, 3.0)),
    ("rpow", "rpow", {"base": 2.0}, lambda x: torch.pow(2.0, x)),
    ("rpow_half", "rpow", {"base": 0.5}, lambda x: torch.pow(0.5, x)),
    ("rpow_zero", "rpow", {"base": 0.0}, lambda x: torch.pow(0.0, x)),
    ("pow_square", "pow_square", {"exponent": 2}, lambda x: torch.pow(x, 2)),
    ("pow_cube", "pow_cube", {"exponent": 3}, lambda x: torch.pow(x, 3)),
    ("pow_root", "pow_root", {"exponent": 0.5}, lambda x: torch.pow(x, 0.5)),
] + [(f"pow_scalar_{e}", "pow_scalar", {"exponent": e}, lambda x, e=e: torch.pow(x, e))
     for e in (1.5, 0.0, 1.0, -1.0, -0.5, 2.5, -2, 4)]

BINARY = [
    ("add", "add", {}, torch.add),
    ("sub", "sub", {}, torch.sub),
    ("mul", "mul", {}, torch.mul),
    ("div", "div", {}, torch.div),
    ("pow", "pow", {}, torch.pow),
    ("maximum", "maximum", {}, torch.maximum),
    ("minimum", "minimum", {}, torch.minimum),
    ("arctan2", "arctan2", {}, torch.atan2),  # the row's inputs are (y, x), as atan2's
    ("hypot", "hypot", {}, torch.hypot),
    ("logaddexp", "logaddexp", {}, torch.logaddexp),
    ("logaddexp2", "logaddexp2", {}, torch.logaddexp2),
    ("remainder", "remainder", {}, torch.remainder),
    ("fmod", "fmod", {}, torch.fmod),
    ("copysign", "copysign", {}, torch.copysign),
    ("lt", "lt", {}, torch.lt),
    ("le", "le", {}, torch.le),
    ("gt", "gt", {}, torch.gt),
    ("ge", "ge", {}, torch.ge),
    ("eq", "eq", {}, torch.eq),
    ("ne", "ne", {}, torch.ne),
    ("logical_and", "logical_and", {}, torch.logical_and),
    ("logical_or", "logical_or", {}, torch.logical_or),
]
# where(condition, x, y) over the pairs, the condition true at every third pair
TERNARY = [("where", "where", {}, torch.where)]

# public functions composed of several rows, elementwise as a whole: (case id, the jitgrad
# function's dotted name, keywords, arity, torch function)
FUNCTIONS = [
    ("square", "jitgrad.square", {}, 1, torch.square),
    ("nan_to_num", "jitgrad.nan_to_num", {}, 1, torch.nan_to_num),
    ("nan_to_num_values", "jitgrad.nan_to_num", {"nan": 1.5, "posinf": 2.0, "neginf": -3.0}, 1,
     lambda x: torch.nan_to_num(x, nan=1.5, posinf=2.0, neginf=-3.0)),
    ("erfc", "jitgrad.scipy.special.erfc", {}, 1, torch.special.erfc),
    ("ndtr", "jitgrad.scipy.special.ndtr", {}, 1, torch.special.ndtr),
    ("expit", "jitgrad.scipy.special.expit", {}, 1, torch.special.expit),
    ("xlogy", "jitgrad.scipy.special.xlogy", {}, 2, torch.special.xlogy),
    ("xlog1py", "jitgrad.scipy.special.xlog1py", {}, 2, torch.special.xlog1py),
    ("mse_loss", "jitgrad.nn.functional.mse_loss", {"reduction": "none"}, 2,
     lambda x, y: F.mse_loss(x, y, reduction="none")),
    ("l1_loss", "jitgrad.nn.functional.l1_loss", {"reduction": "none"}, 2,
     lambda x, y: F.l1_loss(x, y, reduction="none")),
    ("huber_loss", "jitgrad.nn.functional.huber_loss", {"reduction": "none"}, 2,
     lambda x, y: F.huber_loss(x, y, reduction="none")),
    ("bce_with_logits", "jitgrad.nn.functional.binary_cross_entropy_with_logits",
     {"reduction": "none"}, 2,
     lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none")),
]

#: rows jitgrad computes in float64 for float32 inputs (SciPy's polygamma dtype): torch is
#: asked in float64 at the float32 points
FLOAT64_RESULT = {"polygamma"}


def encode(values) -> str:
    """Space-separated shortest round-trip reprs in the array's own precision ('nan', 'inf',
    '-0' included; a trailing '.0' dropped)."""
    out = []
    for v in np.asarray(values).ravel():
        text = str(v) if v.dtype == np.float32 else repr(float(v))
        out.append(text[:-2] if text.endswith(".0") else text)
    return " ".join(out)


def run_case(fn, operands, n_float):
    """torch's output and the gradients of its sum in each of the last ``n_float`` operands."""
    leaves = [torch.tensor(o, requires_grad=(i >= len(operands) - n_float))
              for i, o in enumerate(operands)]
    out = fn(*leaves)
    result = {"forward": out.detach().numpy()}
    wrt = [leaf for leaf in leaves if leaf.requires_grad]
    if out.dtype.is_floating_point:
        grads = torch.autograd.grad(out, wrt, torch.ones_like(out), allow_unused=True,
                                    materialize_grads=True)
        for k, grad in enumerate(grads):
            result[f"grad{k}"] = grad.numpy()
    return result


def _literal(value) -> str:
    """``value`` as Python source (the infinities as ``INF``)."""
    if isinstance(value, float) and math.isinf(value):
        return "INF" if value > 0 else "-INF"
    return repr(value)


def _wrap(text, width=86):
    """``text`` as adjacent string literals of at most ``width`` characters per line."""
    lines, line = [], ""
    for token in text.split(" "):
        if line and len(line) + len(token) + 1 > width:
            lines.append(line + " ")
            line = token
        else:
            line = f"{line} {token}" if line else token
    lines.append(line)
    return "\n".join(f"        {line!r}" for line in lines)


def _entry(case, dtype, result):
    lines = [f"    ({case!r}, {dtype!r}): {{"]
    for key, array in result.items():
        if array.dtype == np.bool_:
            array = array.astype(dtype)
        lines.append(f"        {key!r}: (\n{_wrap(encode(array))}),")
    return lines + ["    },"]


def main(path):
    parts = [
        '"""PyTorch\'s forward values and gradients of the elementwise rows and functions at the',
        "special values: GENERATED by tests/ops/_make_special_grads.py, do not edit by hand.",
        "",
        f"torch {torch.__version__} (CPU), numpy {np.__version__}, Python "
        f"{sys.version.split()[0]}. DATA: (case id of CASES or",
        "FUNCTIONS, dtype) -> {'forward': ..., 'grad0': ..., 'grad1': ...}, space-separated floats",
        "in the dtype's shortest repr; gradN is the gradient of the output's sum in the row's N-th",
        "float input (binary: both inputs over every pair of POINTS, x = repeat, y = tile; where:",
        "the condition is true at every third pair).",
        '"""',
        "# flake8: noqa",
        f"TORCH_VERSION = {torch.__version__!r}",
        "INF = float('inf')",
        "",
        "# case id -> (registry row, attrs, arity)",
        "CASES = {",
    ]
    for case, row, attrs, _ in UNARY + BINARY + TERNARY:
        arity = 2 if row in BINARY_ROWS else (3 if row == "where" else 1)
        attrs_text = "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in attrs.items()) + "}"
        parts.append(f"    {case!r}: ({row!r}, {attrs_text}, {arity}),")
    parts.append("}")
    parts.append("# case id -> (the jitgrad function's dotted name, keywords, arity)")
    parts.append("FUNCTIONS = {")
    for case, name, kwargs, arity, _ in FUNCTIONS:
        parts.append(f"    {case!r}: ({name!r}, {kwargs!r}, {arity}),")
    parts.append("}")
    parts.append("POINTS = {")
    for dtype in DTYPES:
        parts.append(f"    {dtype!r}: (\n{_wrap(encode(special_values(dtype)))}),")
    parts.append("}")
    parts.append("DATA = {")
    for dtype in DTYPES:
        values = special_values(dtype)
        pairs = [np.repeat(values, len(values)), np.tile(values, len(values))]
        condition = np.arange(len(values) ** 2) % 3 == 0
        for case, row, attrs, fn in UNARY + BINARY + TERNARY:
            if row in BINARY_ROWS:
                operands, n_float = pairs, 2
            elif row == "where":
                operands, n_float = [condition, *pairs], 2
            else:
                operands, n_float = [values], 1
            if row in FLOAT64_RESULT:
                operands = [o.astype("float64") for o in operands]
            with np.errstate(all="ignore"):
                result = run_case(fn, operands, n_float)
            parts.extend(_entry(case, dtype, result))
        for case, _, kwargs, arity, fn in FUNCTIONS:
            with np.errstate(all="ignore"):
                result = run_case(fn, [values] if arity == 1 else pairs, arity)
            parts.extend(_entry(case, dtype, result))
    parts.append("}")
    pathlib.Path(path).write_text("\n".join(parts) + "\n")


BINARY_ROWS = {row for _, row, _, _ in BINARY}

if __name__ == "__main__":
    torch.set_num_threads(1)
    main(pathlib.Path(__file__).with_name("_special_grads_pinned.py"))
