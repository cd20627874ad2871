"""Forward-mode AD: dual levels, make_dual / unpack_dual, jvp rules, nesting, composition."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import forward_ad as fwAD
from jitgrad.testing import assert_close


def T(a, **kw):
    return jg.tensor(np.asarray(a, dtype=np.float64), **kw)


def test_make_dual_unpack_dual_basics():
    x = T([0.5, 1.0, 2.0], requires_grad=True)
    assert fwAD.unpack_dual(x).tangent is None  # no level: nothing
    with fwAD.dual_level():
        d = fwAD.make_dual(x, T([1.0, 0.0, 2.0]))
        assert d.grad_fn.name() == "ViewBackward0"  # a view of the primal, as PyTorch
        y = d.exp() * d
        p, t = fwAD.unpack_dual(y)
        xs = x._data
        assert_close(p, np.exp(xs) * xs)
        assert_close(t, np.exp(xs) * (1 + xs) * [1.0, 0.0, 2.0], rtol=1e-13)
        assert fwAD.unpack_dual(p).tangent is None  # the primal view carries no tangent
        assert fwAD.unpack_dual(x).tangent is None  # the original tensor is untouched
        with jg.no_grad():  # grad mode does not affect forward mode (as PyTorch)
            assert fwAD.unpack_dual(d * 3).tangent is not None
    assert fwAD.unpack_dual(y).tangent is None  # tangents are dropped with the level


def test_make_dual_errors():
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(T([1.0]), T([1.0]))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(T([1.0, 2.0]), T([1.0]))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(jg.tensor([1, 2]), T([1.0, 2.0]))
        d = fwAD.make_dual(T([1.0]), jg.tensor([2.0], dtype=jg.float32))  # cast, as PyTorch
        assert fwAD.unpack_dual(d).tangent.dtype is jg.float64


def test_inplace_ops_on_duals_update_the_tangent():
    """ops/inplace.py hands the result's tangent to the modified tensor (as PyTorch)."""
    with fwAD.dual_level():
        d = fwAD.make_dual(T([1.0, 2.0]), T([1.0, 3.0]))
        with jg.no_grad():
            d.mul_(2)
        assert_close(fwAD.unpack_dual(d).tangent, [2.0, 6.0])
        assert_close(fwAD.unpack_dual(d.sin()).tangent, np.cos([2.0, 4.0]) * [2.0, 6.0])


def test_elementwise_jvp_rules_from_backward_bodies():
    """Each derivative body serves the jvp: broadcasting, several inputs, attrs, result."""
    x, y = T([[0.5, 1.5, 2.0]]), T([[0.3], [0.7]])
    tx, ty = T([[1.0, -1.0, 0.5]]), T([[2.0], [1.0]])
    with fwAD.dual_level():
        dx, dy = fwAD.make_dual(x, tx), fwAD.make_dual(y, ty)
        out = dx ** dy + jg.tanh(dx) * 2.0 - dx.clamp(0.6, 1.8) + jg.where(dx > 1.0, dx, dy)
        t = fwAD.unpack_dual(out).tangent
    a, b, ta, tb = x._data, y._data, tx._data, ty._data
    ref = (b * a ** (b - 1) * ta + a ** b * np.log(a) * tb + 2 * (1 - np.tanh(a) ** 2) * ta
           - np.where((a >= 0.6) & (a <= 1.8), ta, 0.0) + np.where(a > 1.0, ta, tb))
    assert t.shape == (2, 3)
    assert_close(t, ref, rtol=1e-12)


def test_composite_jvps_reductions_shapes_matmul_softmax():
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    w = rng.standard_normal((4, 2))

    def f(a):
        return (jg.softmax(a, 1) @ T(w)).sum(0) * a.var() + a.max(1).values[1:].sum() * a.t()[0, 0]

    with fwAD.dual_level():
        got = fwAD.unpack_dual(f(fwAD.make_dual(T(x), T(t)))).tangent
    eps = 1e-6
    ref = (f(T(x + eps * t))._data - f(T(x - eps * t))._data) / (2 * eps)
    assert_close(got, ref, rtol=1e-7, atol=1e-9)


def test_nested_levels_give_second_derivatives():
    x = T([0.4, 1.1])
    with fwAD.dual_level():
        d1 = fwAD.make_dual(x, T([1.0, 1.0]))
        with fwAD.dual_level():
            d2 = fwAD.make_dual(d1, T([1.0, 1.0]))
            y = d2.sin() * d2
            inner_t = fwAD.unpack_dual(y).tangent  # first derivative (level 2)
            outer = fwAD.unpack_dual(inner_t, level=0).tangent  # its derivative (level 1)
    xs = x._data
    assert_close(inner_t, np.cos(xs) * xs + np.sin(xs), rtol=1e-12)
    assert_close(outer, 2 * np.cos(xs) - xs * np.sin(xs), rtol=1e-12)


def test_exit_order_enforced():
    lvl = fwAD.enter_dual_level()
    inner = fwAD.enter_dual_level()
    with pytest.raises(RuntimeError, match="not the last one"):
        fwAD.exit_dual_level(level=lvl)
    fwAD.exit_dual_level(level=inner)
    fwAD.exit_dual_level(level=lvl)
    with pytest.raises(RuntimeError, match="no dual level"):
        fwAD.exit_dual_level()


def test_reverse_over_forward():
    """The tangent computation records a graph: grad of a jvp is a Hessian-vector product."""
    x = T([0.3, 0.8], requires_grad=True)
    v = T([1.0, 2.0])
    with fwAD.dual_level():
        y = (fwAD.make_dual(x, v) ** 3).sum()
        t = fwAD.unpack_dual(y).tangent  # 3 x^2 . v
    (g,) = jg.autograd.grad(t, [x])
    assert_close(g, 6 * x._data * v._data, rtol=1e-12)


def test_forward_over_reverse_through_saved_outputs():
    """Backward formulas that use the op's saved output (exp, tanh, softmax) carry tangents."""
    x0 = np.array([0.2, -0.4, 0.9])
    v = T([1.0, 0.5, -1.0])
    c = T([1.0, 2.0, 3.0])

    def grad_at(a):
        x = T(a, requires_grad=True)
        y = (x.exp() + x.tanh() + jg.softmax(x, 0) * c).sum()
        return jg.autograd.grad(y, [x], create_graph=True)[0]

    with fwAD.dual_level():
        x = fwAD.make_dual(T(x0), v).detach()  # detach drops the tangent, as PyTorch
        assert fwAD.unpack_dual(x).tangent is None
        x = fwAD.make_dual(T(x0, requires_grad=True), v)
        y = (x.exp() + x.tanh() + jg.softmax(x, 0) * c).sum()
        (g,) = jg.autograd.grad(y, [x], create_graph=True)
        hv = fwAD.unpack_dual(g).tangent
    eps = 1e-6
    ref = (grad_at(x0 + eps * v._data)._data - grad_at(x0 - eps * v._data)._data) / (2 * eps)
    assert_close(hv, ref, rtol=1e-7, atol=1e-9)


def test_missing_jvp_rule_is_named():
    from jitgrad.ops.core import dispatch
    from jitgrad.ops.core.registry import OPS, def_composite

    op = def_composite("_test_no_jvp", "TestNoJvpBackward0", ("x",), lambda ctx, x: x * 2,
                       lambda ctx, g: (g * 2,))
    OPS.pop(op.name)  # usable directly, but not left in the registry
    with fwAD.dual_level():
        d = fwAD.make_dual(T([1.0]), T([1.0]))
        with pytest.raises(NotImplementedError, match="_test_no_jvp"):
            dispatch.composite(op, d)
        dispatch.composite(op, T([1.0]))  # no tangent involved: fine


def test_backward_inside_a_dual_level_computes_with_duals():
    # PyTorch: a backward run inside a dual level computes with dual tensors, create_graph or
    # not, so the gradient carries the tangents of the grad_output and of the saved values.
    # d/dx (sin(x) * u) = cos(x) u; its tangent: -sin(x) u dx + cos(x) du.
    x0, dx, u0, du = 1.1, 0.3, 0.5, 0.7
    for create_graph in (False, True):
        with fwAD.dual_level():
            leaf = T(x0, requires_grad=True)
            x = fwAD.make_dual(leaf, T(dx))
            u = fwAD.make_dual(T(u0), T(du))
            (g,) = jg.autograd.grad(x.sin(), leaf, u, create_graph=create_graph)
            primal, tangent = fwAD.unpack_dual(g)
            assert_close(primal, np.cos(x0) * u0, rtol=1e-14)
            assert tangent is not None, create_graph
            assert_close(tangent, -np.sin(x0) * u0 * dx + np.cos(x0) * du, rtol=1e-14)
            assert g.requires_grad is create_graph
            # and only the cotangent's tangent: a plain leaf in, the grad_output a dual
            (g,) = jg.autograd.grad(3.0 * leaf.abs(), leaf, u, create_graph=create_graph)
            assert_close(fwAD.unpack_dual(g).tangent, 3.0 * du, rtol=1e-14)
