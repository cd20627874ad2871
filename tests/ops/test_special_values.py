"""Every elementwise registry row at special values (+-inf, nan, +-0, the largest and smallest
normal numbers, the smallest subnormal) in float64 and float32: the forward against NumPy (the
function of the same name, or the formula written here for rows NumPy lacks), and the gradient
at the points where its value is known: never nan/inf where PyTorch's is finite. PyTorch's own
forward values and gradients at every special point (and pair of points) are compared in
test_special_grads_torch.py."""
import math

import numpy as np
import pytest
import scipy.special

import jitgrad
from jitgrad.ops.core import dispatch
from jitgrad.ops.core.registry import OPS
from jitgrad.testing.op_db import all_entries

DTYPES = ["float64", "float32"]


def special_values(dtype):
    info = np.finfo(dtype)
    tiny_sub = np.nextafter(np.zeros((), dtype), np.ones((), dtype))
    values = [-np.inf, np.inf, np.nan, -0.0, 0.0, info.max, -info.max, info.tiny, -info.tiny,
              tiny_sub, -tiny_sub, 1.0, -1.0, 0.5, -2.5, 30.0]
    return np.array(values, dtype=dtype)


def _gelu(x):
    return np.where(np.isneginf(x), -0.0, x * 0.5 * (1.0 + scipy.special.erf(x / np.sqrt(2.0))))


def _gelu_tanh(x):
    inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)
    return np.where(np.isneginf(x), -0.0, 0.5 * x * (1.0 + np.tanh(inner)))


def _silu(x):
    return np.where(np.isneginf(x), -0.0, x * scipy.special.expit(x))


def _softplus(x, beta, threshold):
    return np.where(beta * x > threshold, x, np.logaddexp(0.0, beta * x) / beta)


# name -> (attrs, NumPy reference, largest error in ulp); the reference is NumPy's function of
# the same name where it has one. Rows NumPy lacks get their defining formula, with the limit
# at -inf where the formula itself gives -inf * 0 = nan (gelu, silu: the functions tend to -0).
UNARY = {
    "neg": ({}, np.negative, 0),
    "exp": ({}, np.exp, 2),
    "log": ({}, np.log, 2),
    "sin": ({}, np.sin, 2),
    "cos": ({}, np.cos, 2),
    "tan": ({}, np.tan, 2),
    "tanh": ({}, np.tanh, 2),
    "sinh": ({}, np.sinh, 2),
    "cosh": ({}, np.cosh, 2),
    "expm1": ({}, np.expm1, 2),
    "log1p": ({}, np.log1p, 2),
    "sqrt": ({}, np.sqrt, 0),
    "abs": ({}, np.abs, 0),
    "sign": ({}, np.sign, 0),
    "reciprocal": ({}, np.reciprocal, 0),
    "erf": ({}, scipy.special.erf, 2),
    "sigmoid": ({}, scipy.special.expit, 2),
    "relu": ({}, lambda x: np.where(x > 0, x, np.where(np.isnan(x), x, 0.0)), 0),
    # (float32: 1 + erf(x) cancels for negative x (~1e-6 relative at -2.5), as in PyTorch's
    # float32 kernel)
    "gelu": ({}, _gelu, (4, 64)),
    "gelu_tanh": ({}, _gelu_tanh, (4, 64)),
    "silu": ({}, _silu, 4),
    "softplus": ({"beta": 1.0, "threshold": 20.0}, lambda x: _softplus(x, 1.0, 20.0), 2),
    "leaky_relu": ({"negative_slope": 0.01}, lambda x: np.where(x > 0, x, x * 0.01), 0),
    "pow_scalar": ({"exponent": 1.5}, lambda x: np.power(x, 1.5), 2),
    "pow_square": ({"exponent": 2}, np.square, 0),
    "pow_cube": ({"exponent": 3}, lambda x: x * x * x, 0),  # (Note [small integer powers])
    "pow_root": ({"exponent": 0.5}, lambda x: np.power(x, 0.5), 0),
    "rpow": ({"base": 2.0}, lambda x: np.power(2.0, x).astype(x.dtype), 2),
    "rsub": ({"other": 3.0}, lambda x: (3.0 - x).astype(x.dtype), 0),
    "clamp": ({"min": 0.0, "max": 1.0}, lambda x: np.clip(x, 0.0, 1.0), 0),
}
# every pair of special values
BINARY = {
    "add": (np.add, 0), "sub": (np.subtract, 0), "mul": (np.multiply, 0),
    "div": (np.divide, 0), "pow": (np.power, 2),
    "maximum": (np.maximum, 0), "minimum": (np.minimum, 0),
    "lt": (np.less, 0), "le": (np.less_equal, 0), "gt": (np.greater, 0),
    "ge": (np.greater_equal, 0), "eq": (np.equal, 0), "ne": (np.not_equal, 0),
    "logical_and": (np.logical_and, 0), "logical_or": (np.logical_or, 0),
}
TERNARY = {"where": lambda c, x, y: np.where(c, x, y)}
# (row, input) -> why the row deliberately differs from the reference there
_TORCH_FORMULA = ("PyTorch's formula x * F(x) gives -inf * 0 = nan at -inf (the limit is -0); "
                  "jitgrad keeps PyTorch's value")
DIFFERENT = {("gelu", -math.inf): _TORCH_FORMULA, ("gelu_tanh", -math.inf): _TORCH_FORMULA,
             ("silu", -math.inf): _TORCH_FORMULA}


def _database_calls() -> dict:
    """row -> (entry, arity, kwargs) for the elementwise rows the tables above do not list: the
    first op-database entry naming the row whose first sample is one or two float arrays (plus
    keywords). The sweep calls the entry's function at the special values and takes the
    entry's reference as the expected value, so a new row needs nothing here."""
    listed = set(UNARY) | set(BINARY) | set(TERNARY)
    calls = {}
    for entry in all_entries():
        sample = entry.samples(np.random.default_rng(0), np.dtype("float64"))[0]
        arrays = [a for a in sample.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        if not 1 <= len(sample.args) == len(arrays) <= 2:
            continue
        for row in entry.rows:
            op = OPS.get(row)  # (per-arity rows such as einsum2 exist once called)
            if op is not None and op.elementwise and row not in listed and row not in calls:
                calls[row] = (entry, len(arrays), sample.kwargs)
    return calls


DATABASE_CALLS = _database_calls()
#: rows swept through their database entry whose accuracy is looser than 2 ulp: row -> ulp
DATABASE_ULP: dict = {
    # libm's lgamma (the CPU kernels; libdevice's on CUDA) against SciPy's Cephes lgam: both a
    # few ulp from the true value, and the relative error grows near lgamma's zeros (at -2.5,
    # between the zeros -2.457 and -2.747: ours 3 ulp from the true value, SciPy's 6)
    "gammaln": 16,
}


def test_every_elementwise_row_is_swept():
    rows = {name for name, op in OPS.items() if op.elementwise}
    assert rows == set(UNARY) | set(BINARY) | set(TERNARY) | set(DATABASE_CALLS)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("row", sorted(DATABASE_CALLS))
def test_database_rows_forward(row, dtype):
    entry, arity, kwargs = DATABASE_CALLS[row]
    values = special_values(dtype)
    if arity == 1:
        operands = [values]
    else:
        operands = [np.repeat(values, len(values)), np.tile(values, len(values))]
    with np.errstate(all="ignore"):
        expected = np.asarray(entry.ref(*operands, **kwargs))
    got = np.asarray(entry.fn(*(jitgrad.tensor(o) for o in operands), **kwargs).numpy())
    assert got.dtype == expected.dtype, (row, got.dtype, expected.dtype)
    max_ulp = DATABASE_ULP.get(row, 2)
    bad = [(*(o[i] for o in operands), g, e)
           for i, (g, e) in enumerate(zip(got.ravel(), expected.ravel()))
           if not _close_scalar(g, e, max_ulp)]
    assert not bad, f"{entry.name} {dtype}: (operands, got, reference) {bad[:8]}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_rows_forward(dtype):
    x0 = special_values(dtype)
    x = jitgrad.tensor(x0)
    wrong = []
    for name, (attrs, reference, max_ulp) in UNARY.items():
        with np.errstate(all="ignore"):
            expected = np.asarray(reference(x0)).astype(dtype)
        got = dispatch.elementwise(OPS[name], x, **attrs).numpy()
        if isinstance(max_ulp, tuple):
            max_ulp = max_ulp[DTYPES.index(dtype)]
        for point, g, e in zip(x0, got, expected):
            if not _close_scalar(g, e, max_ulp) and (name, float(point)) not in DIFFERENT:
                wrong.append((name, point, g, e))
    assert not wrong, f"(row, x, got, NumPy): {wrong}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_rows_forward(dtype):
    values = special_values(dtype)
    x0, y0 = np.repeat(values, len(values)), np.tile(values, len(values))
    x, y = jitgrad.tensor(x0), jitgrad.tensor(y0)
    for name, (reference, max_ulp) in BINARY.items():
        with np.errstate(all="ignore"):
            expected = np.asarray(reference(x0, y0))
        got = dispatch.elementwise(OPS[name], x, y).numpy()
        assert got.dtype == expected.dtype, name
        bad = [(a, b, g, e) for a, b, g, e in zip(x0, y0, got, expected)
               if not _close_scalar(g, e, max_ulp)]
        assert not bad, f"{name} {dtype}: (x, y, got, NumPy) {bad[:8]}"
    condition = np.arange(len(x0)) % 3 == 0
    got = dispatch.elementwise(OPS["where"], jitgrad.tensor(condition), x, y).numpy()
    expected = TERNARY["where"](condition, x0, y0)
    assert all(_close_scalar(g, e, 0) for g, e in zip(got, expected)), f"where {dtype}"


def _close_scalar(got, expected, max_ulp):
    if isinstance(expected, (bool, np.bool_)):
        return bool(got) == bool(expected)
    if np.isnan(expected) or np.isnan(got):
        return bool(np.isnan(expected) and np.isnan(got))
    if not np.isfinite(expected) or max_ulp == 0:
        return bool(got == expected)
    with np.errstate(over="ignore"):  # (the spacing of the largest number is inf)
        return abs(float(got) - float(expected)) <= max_ulp * abs(np.spacing(expected))


# (row, attrs, point, expected gradient of the sum): the derivative at the special points where
# its value is known (PyTorch's formula evaluates to these); nan or inf here was a bug
INF = math.inf
GRADIENTS = [
    ("relu", {}, [INF, -INF, 0.0, -0.0], [1.0, 0.0, 0.0, 0.0]),
    ("abs", {}, [INF, -INF, 0.0], [1.0, -1.0, 0.0]),
    ("sign", {}, [INF, -INF, 0.0], [0.0, 0.0, 0.0]),
    ("neg", {}, [INF, -INF], [-1.0, -1.0]),
    ("clamp", {"min": 0.0, "max": 1.0}, [INF, -INF, 0.0, 1.0, 0.5], [0.0, 0.0, 1.0, 1.0, 1.0]),
    ("clamp", {"min": -INF, "max": 1.0}, [-INF, INF], [1.0, 0.0]),
    ("leaky_relu", {"negative_slope": 0.01}, [INF, -INF], [1.0, 0.01]),
    ("sigmoid", {}, [INF, -INF], [0.0, 0.0]),
    ("tanh", {}, [INF, -INF], [0.0, 0.0]),
    ("erf", {}, [INF, -INF], [0.0, 0.0]),
    ("exp", {}, [-INF], [0.0]),
    ("expm1", {}, [-INF], [0.0]),
    ("log", {}, [INF], [0.0]),
    ("log1p", {}, [INF], [0.0]),
    ("sqrt", {}, [INF], [0.0]),
    ("reciprocal", {}, [INF, -INF], [0.0, 0.0]),
    ("softplus", {"beta": 1.0, "threshold": 20.0}, [INF, -INF], [1.0, 0.0]),
    ("pow_root", {"exponent": 0.5}, [INF], [0.0]),
    ("pow_scalar", {"exponent": 0.0}, [INF, -INF, 0.0], [0.0, 0.0, 0.0]),
    ("pow_scalar", {"exponent": -1.0}, [INF, -INF], [0.0, 0.0]),
    ("rpow", {"base": 2.0}, [-INF], [0.0]),
    ("rsub", {"other": 1.0}, [INF], [-1.0]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,attrs,points,expected", GRADIENTS,
                         ids=[f"{row[0]}{i}" for i, row in enumerate(GRADIENTS)])
def test_gradient_at_special_points(name, attrs, points, expected, dtype):
    x = jitgrad.tensor(np.array(points, dtype=dtype), requires_grad=True)
    dispatch.elementwise(OPS[name], x, **attrs).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.array(expected, dtype=dtype),
                                  err_msg=f"d{name}{attrs} at {points}")


# binary rows: (row, x, y, dx, dy)
BINARY_GRADIENTS = [
    ("add", [INF], [1.0], [1.0], [1.0]),
    ("sub", [INF], [-INF], [1.0], [-1.0]),
    ("mul", [INF], [2.0], [2.0], [INF]),
    ("div", [1.0, INF], [INF, 2.0], [0.0, 0.5], [0.0, -INF]),
    ("maximum", [INF, -INF], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]),
    ("minimum", [INF, -INF], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]),
    # (at x=2, y=-inf PyTorch's dx, y * x**(y-1), is -inf * 0 = nan too: not listed; nor

    # x=inf, y=-1: dy = x**y log x = 0 * inf = nan there too)
    ("pow", [0.0, 1.0], [2.0, 3.0], [0.0, 3.0], [0.0, 0.0]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,x0,y0,dx,dy", BINARY_GRADIENTS,
                         ids=[row[0] for row in BINARY_GRADIENTS])
def test_binary_gradient_at_special_points(name, x0, y0, dx, dy, dtype):
    x = jitgrad.tensor(np.array(x0, dtype=dtype), requires_grad=True)
    y = jitgrad.tensor(np.array(y0, dtype=dtype), requires_grad=True)
    dispatch.elementwise(OPS[name], x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.array(dx, dtype=dtype), err_msg=f"d{name}/dx")
    np.testing.assert_array_equal(y.grad.numpy(), np.array(dy, dtype=dtype), err_msg=f"d{name}/dy")


def test_where_gradient_at_infinities():
    x = jitgrad.tensor([INF, -INF], requires_grad=True)
    y = jitgrad.tensor([1.0, 2.0], requires_grad=True)
    jitgrad.where(jitgrad.tensor([True, False]), x, y).sum().backward()
    assert x.grad.numpy().tolist() == [1.0, 0.0] and y.grad.numpy().tolist() == [0.0, 1.0]


def test_public_functions_take_the_fixed_rows():
    """The issue's two cases through the public API."""
    x = jitgrad.tensor([-INF, INF, 0.5])
    assert jitgrad.clamp(x, 0.0, 1.0).numpy().tolist() == [0.0, 1.0, 0.5]
    root = (jitgrad.tensor([-INF, -0.0, 4.0]) ** 0.5).numpy()
    assert np.isnan(root[0]) and math.copysign(1.0, root[1]) == -1.0 and root[2] == 2.0
