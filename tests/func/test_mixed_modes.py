"""Mixed-mode derivatives of every op-database entry, checked against finite differences.

HIPS autograd's ``check_grads(order=2, modes=["fwd", "rev"])`` discipline: a first-order
transform ``G`` of the op (the JVP ``G(x, t) = J(x) t`` or the VJP ``G(x, u) = u^T J(x)``) is
itself differentiated by forward mode (``jvp(G)``) and by reverse mode (``vjp(G)``), and both
are compared with central finite differences of ``G`` along a random direction. That covers
jvp of vjp (forward-over-reverse), vjp of jvp, vjp of vjp and jvp of jvp for every entry; the
tangent of the cotangent ``u`` is part of it (a backward run inside a dual level must compute
with duals). Order 3 (the same checks on a second-order transform) runs for a sample of
entries, and the four jacfwd/jacrev compositions of a Hessian for the same sample. One
float64 sample per entry, every output scalarised with random weights.
"""
import numpy as np
import pytest

import jitgrad as jg
import jitgrad.func as F
from jitgrad.testing import assert_close
from jitgrad.testing.op_db import all_entries
from jitgrad.testing.opinfo import diff_samples

ENTRIES = all_entries()
DIFF = [op for op in ENTRIES if op.differentiable]

# entries the sweep does not differentiate, each with the reason (checked to be exactly these)
NOT_DIFFERENTIABLE = {
    **{name: "comparison: a boolean output" for name in ("lt", "le", "gt", "ge", "eq", "ne")},
    **{name: "an integer index output" for name in ("argmax", "argmin")},
    **{name: "a boolean output" for name in ("logical_and", "logical_or")},
    "scatter_legacy": "scatter(reduce='add'/'multiply') has no derivative, as in PyTorch",
    **{name: "a NaN result (a NaN in the slice): forward only"
       for name in ("np.median-nan", "np.nanmedian-allnan", "np.nanmax-allnan")},
    **{name: "a constructor from integers and floats: no tensor input"
       for name in ("np.hanning()", "np.hamming()", "np.blackman()", "np.bartlett()",
                    "np.kaiser()", "np.geomspace()")},
    **{name: "the output's length depends on the values (zeros trimmed): forward only"
       for name in ("np.trim_zeros", "np.trim_zeros-f")},
}

# entries whose sample has no floating-point tensor input: nothing to differentiate
NO_TENSOR_INPUT = {"np.fftfreq": "its arguments are the integers n and d"}

# real gaps: rows without a jvp rule (entry -> row). The forward compositions are strict
# xfails (adding the rule turns them red: take the entry out of here); reverse over reverse
# is still checked for them (test_vjp_of_vjp_without_a_jvp_rule).
NO_JVP_RULE: dict = {}

EPS = 1e-6  # central differences: truncation ~EPS^2, rounding ~1e-16/EPS


def test_the_sweep_lists_every_entry():
    """Each entry is swept or listed with its reason: none is skipped silently."""
    assert {op.name for op in ENTRIES if not op.differentiable} == set(NOT_DIFFERENTIABLE)
    names = {op.name for op in DIFF}
    assert set(NO_JVP_RULE) <= names and set(NO_TENSOR_INPUT) <= names
    for op in DIFF:
        if op.name in NO_TENSOR_INPUT:
            assert not _op_function(op)[1], op.name
    assert len(THIRD) == len(THIRD_ORDER)  # every sampled name is an entry
    assert len(THIRD_ONLY) == len(THIRD_ORDER_ONLY)
    assert len(FULL) + len(NO_JVP_RULE) + len(NO_TENSOR_INPUT) + len(NOT_DIFFERENTIABLE) == len(
        ENTRIES)


def _op_function(op):
    """``(fn, xs, rng)``: the op on its first float64 sample as a function of its
    differentiable tensors (the other arguments fixed), its outputs as one flat tuple."""
    rng = np.random.default_rng(11)
    _, call, leaves = next(diff_samples(op, rng))

    def fn(*xs):
        out = call(*xs)
        return out if isinstance(out, tuple) else (out,)

    return fn, tuple(x.detach() for x in leaves), rng


def _randn_like(rng, xs):
    return tuple(jg.tensor(rng.standard_normal(tuple(x.shape))) for x in xs)


def _dot(a, b) -> float:
    return float(sum(np.vdot(np.asarray(x._data), np.asarray(y._data)) for x, y in zip(a, b)))


def _shift(xs, ds, eps):
    return tuple(jg.tensor(x._data + eps * d._data) for x, d in zip(xs, ds))


def _finite_difference(g, zs, dzs):
    """Central difference of ``g`` (a tuple of tensors) at ``zs`` along ``dzs``."""
    plus, minus = g(*_shift(zs, dzs, EPS)), g(*_shift(zs, dzs, -EPS))
    return tuple(jg.tensor((p._data - m._data) / (2 * EPS)) for p, m in zip(plus, minus))


def _check_modes(g, zs, rng, what, modes=("fwd", "rev"), tol=1e-5):
    """``jvp(g)`` and ``vjp(g)`` at ``zs`` against finite differences of ``g``."""
    dzs = _randn_like(rng, zs)
    fd = _finite_difference(g, zs, dzs)
    scale = 1.0 + max(float(np.max(np.abs(d._data), initial=0.0)) for d in fd)
    if "fwd" in modes:
        _, tangent = F.jvp(g, zs, dzs)
        for a, b in zip(tangent, fd):
            assert_close(a, b, rtol=tol, atol=tol * scale, msg=f"jvp of {what}")
    if "rev" in modes:
        out, pull = F.vjp(g, *zs)
        cts = _randn_like(rng, out)
        got = _dot(pull(cts), dzs)
        want = _dot(cts, fd)
        assert abs(got - want) <= tol * (1.0 + abs(want)) * scale, (
            f"vjp of {what}: {got} != {want} (finite differences)")


def _first_order(fn, xs, rng):
    """The two first-order transforms of ``fn`` as functions of (primals, direction)."""
    n = len(xs)

    def jvp_of_fn(*z):  # (x, t) -> J(x) t
        return F.jvp(fn, z[:n], z[n:])[1]

    def vjp_of_fn(*z):  # (x, u) -> u^T J(x)
        return F.vjp(fn, *z[:n])[1](z[n:])

    ts = _randn_like(rng, xs)
    us = _randn_like(rng, fn(*xs))
    return (("jvp", jvp_of_fn, xs + ts), ("vjp", vjp_of_fn, xs + us))


FULL = [op for op in DIFF if op.name not in NO_JVP_RULE and op.name not in NO_TENSOR_INPUT]
_GAP_MARKS = {name: pytest.mark.xfail(strict=True, raises=NotImplementedError,
                                      reason=f"no jvp rule for '{row}'")
              for name, row in NO_JVP_RULE.items()}
ORDER_TWO = [pytest.param(op, id=op.name, marks=_GAP_MARKS.get(op.name, ()))
             for op in DIFF if op.name not in NO_TENSOR_INPUT]


@pytest.mark.parametrize("op", ORDER_TWO)
def test_order_two(op):
    """jvp of jvp, vjp of jvp, jvp of vjp and vjp of vjp of the op, by finite differences."""
    fn, xs, rng = _op_function(op)
    for name, g, zs in _first_order(fn, xs, rng):
        _check_modes(g, zs, rng, f"{name} of {op.name}")


NO_RULE = [op for op in DIFF if op.name in NO_JVP_RULE]


@pytest.mark.parametrize("op", NO_RULE, ids=[op.name for op in NO_RULE])
def test_vjp_of_vjp_without_a_jvp_rule(op):
    """What reverse mode alone gives, for the entries without a jvp rule."""
    fn, xs, rng = _op_function(op)
    _, vjp_of_fn, zs = _first_order(fn, xs, rng)[1]
    _check_modes(vjp_of_fn, zs, rng, f"vjp of {op.name}", modes=("rev",))


THIRD_ORDER = ["mul", "div", "exp", "tanh", "sin", "log", "pow", "abs", "sum", "prod", "matmul",
               "softmax", "log_softmax", "logsumexp", "layer_norm", "cross_entropy",
               "inplace_view_of_view", "np.sinc-(3,)", "np.var-axis0-keepFalse-ddof1",
               "np.inv", "np.det", "np.pinv-wide", "cholesky", "eigh", "svd", "np.svdvals"]
# order three only: their rows have no vmap rule yet, which the Hessian compositions need
THIRD_ORDER_ONLY = ["np.solve-vec", "np.qr-wide", "np.einsum-3ops"]
THIRD = [op for op in FULL if op.name in THIRD_ORDER]
THIRD_ONLY = [op for op in FULL if op.name in THIRD_ORDER_ONLY]


@pytest.mark.parametrize("op", THIRD + THIRD_ONLY, ids=[op.name for op in THIRD + THIRD_ONLY])
def test_order_three(op):
    """Both modes of the four second-order transforms (vjp of vjp, jvp of vjp, vjp of jvp,
    jvp of jvp), by finite differences: third derivatives."""
    fn, xs, rng = _op_function(op)
    for name, g, zs in _first_order(fn, xs, rng):
        for inner, gg, zzs in _first_order(g, zs, rng):
            _check_modes(gg, zzs, rng, f"{inner} of {name} of {op.name}", tol=1e-4)


def test_jvp_of_vjp_carries_the_cotangent_tangent():
    # the example: h(x, u) = u * 3 sign(x), so dh = 3 sign(x) du (+ 0 dx)
    def h(x, u):
        return F.vjp(lambda x: 3.0 * jg.abs(x), x)[1](u)[0]

    value, tangent = F.jvp(h, (jg.tensor(1.1), jg.tensor(0.5)), (jg.tensor(0.3), jg.tensor(0.7)))
    assert_close(value, 1.5, rtol=1e-14)
    assert_close(tangent, 2.1, rtol=1e-14)


def _scalar_of_first(fn, xs, rng):
    """``x -> sum_k <w_k, fn(x, *rest)_k>``: the op as a scalar function of its first input."""
    ws = _randn_like(rng, fn(*xs))

    def scalar(x):
        return sum((o * w).sum() for o, w in zip(fn(x, *xs[1:]), ws))

    return scalar


@pytest.mark.parametrize("op", THIRD, ids=[op.name for op in THIRD])
def test_hessian_by_every_jacobian_composition(op):
    """jacfwd(jacrev), jacrev(jacfwd), jacrev(jacrev) and jacfwd(jacfwd) of a scalarised op
    give one Hessian, equal to central differences of the gradient."""
    fn, xs, rng = _op_function(op)
    scalar = _scalar_of_first(fn, xs, rng)
    x = xs[0]
    n = x.numel()
    grad = F.grad(scalar)
    columns = []
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1.0
        d = (jg.tensor(e.reshape(tuple(x.shape))),)
        columns.append(_finite_difference(lambda z: (grad(z),), (x,), d)[0]._data.reshape(-1))
    fd = np.stack(columns, axis=1)
    for outer, inner in ((F.jacfwd, F.jacrev), (F.jacrev, F.jacfwd), (F.jacrev, F.jacrev),
                         (F.jacfwd, F.jacfwd)):
        hessian = outer(inner(scalar))(x)
        assert_close(hessian._data.reshape(n, n), fd, rtol=1e-5, atol=1e-5,
                     msg=f"{outer.__name__}({inner.__name__}) of {op.name}")
