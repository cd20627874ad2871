"""scatter (src / value / reduce=), scatter_reduce and their in-place and top-level forms
(jitgrad/ops/scatter_reduce.py). Values and gradients pinned from torch 2.13 (CI has no torch);
the two places jitgrad differs on purpose (Note [scatter repeats]) are checked against finite
differences instead. Forward values, gradcheck, gradgradcheck, jvp and vmap of every form also
run from the op database (jitgrad/testing/db_shape.py)."""
import warnings

import numpy as np
import pytest

import jitgrad
import jitgrad.func as jf
from jitgrad.testing.checks import gradcheck

X0 = [[1., 2., 3., 0.5], [4., 0., 6., -1.]]
S0 = [[10., 2., 0., 7.], [3., 0., 6., 2.], [-4., 0., 1., 5.]]
I0 = [[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]
G0 = [[0.5, -1., 2., 3.], [1.5, 0.25, -2., 1.]]

# (reduce, include_self): (result, grad of x, grad of src), from torch.Tensor.scatter_reduce
TORCH = {
    ('sum', True): ([[4.0, 4.0, 3.0, 12.5], [10.0, 0.0, 13.0, 1.0]],
                    [[0.5, -1.0, 2.0, 3.0], [1.5, 0.25, -2.0, 1.0]],
                    [[1.5, -1.0, -2.0, 3.0], [0.5, -1.0, -2.0, 1.0], [1.5, 0.25, -2.0, 3.0]]),
    ('sum', False): ([[3.0, 2.0, 3.0, 12.0], [6.0, 0.0, 7.0, 2.0]],
                     [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                     [[1.5, -1.0, -2.0, 3.0], [0.5, -1.0, -2.0, 1.0], [1.5, 0.25, -2.0, 3.0]]),
    ('prod', True): ([[3.0, 0.0, 3.0, 17.5], [-160.0, 0.0, 0.0, -2.0]],
                     [[1.5, 0.0, 2.0, 105.0], [-60.0, 0.0, 0.0, 2.0]],
                     [[-24.0, 0.0, -72.0, 7.5], [0.5, -4.0, 0.0, -1.0], [60.0, 0.0, 0.0, 10.5]]),
    ('prod', False): ([[3.0, 0.0, 3.0, 35.0], [-40.0, 0.0, 0.0, 2.0]],
                      [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                      [[-6.0, 0.0, -12.0, 15.0], [0.5, -2.0, 0.0, 1.0], [15.0, 0.25, 0.0, 21.0]]),
    ('mean', True): ([[2.0, 4 / 3, 3.0, 25 / 6], [10 / 3, 0.0, 3.25, 0.5]],
                     [[0.25, -1 / 3, 2.0, 1.0], [0.5, 0.125, -0.5, 0.5]],
                     [[0.5, -1 / 3, -0.5, 1.0], [0.25, -1 / 3, -0.5, 0.5],
                      [0.5, 0.125, -0.5, 1.0]]),
    ('mean', False): ([[3.0, 1.0, 3.0, 6.0], [3.0, 0.0, 7 / 3, 2.0]],
                      [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                      [[0.75, -0.5, -2 / 3, 1.5], [0.5, -0.5, -2 / 3, 1.0],
                       [0.75, 0.25, -2 / 3, 1.5]]),
    ('amax', True): ([[3.0, 2.0, 3.0, 7.0], [10.0, 0.0, 6.0, 2.0]],
                     [[0.0, -0.5, 2.0, 0.0], [0.0, 0.125, -1.0, 0.0]],
                     [[1.5, -0.5, 0.0, 3.0], [0.5, 0.0, -1.0, 1.0], [0.0, 0.125, 0.0, 0.0]]),
    ('amin', True): ([[1.0, 0.0, 3.0, 0.5], [-4.0, 0.0, 0.0, -1.0]],
                     [[0.5, 0.0, 2.0, 3.0], [0.0, 0.125, 0.0, 1.0]],
                     [[0.0, 0.0, -2.0, 0.0], [0.0, -1.0, 0.0, 0.0], [1.5, 0.125, 0.0, 0.0]]),
}


def t(a, grad=False):
    return jitgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def idx(a):
    return jitgrad.tensor(np.asarray(a, dtype=np.int64))


def run(reduce, include_self, x=X0, src=S0, index=I0, g=G0, dim=0):
    xt, st = t(x, True), t(src, True)
    y = jitgrad.scatter_reduce(xt, dim, idx(index), st, reduce, include_self=include_self)
    gx, gs = jitgrad.autograd.grad(y, (xt, st), t(g))
    return y, gx, gs


@pytest.mark.parametrize("key", sorted(TORCH), ids=[f"{r}-{i}" for r, i in sorted(TORCH)])
def test_scatter_reduce_values_and_gradients_match_torch(key):
    y, gx, gs = run(*key)
    want_y, want_gx, want_gs = TORCH[key]
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-14)
    np.testing.assert_allclose(gx.numpy(), want_gx, rtol=1e-14)
    np.testing.assert_allclose(gs.numpy(), want_gs, rtol=1e-14)
    assert y.grad_fn.name() == "ScatterReduceBackward0"


@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_extremum_without_self_ignores_a_coincidentally_equal_self(reduce):
    # x[0, 1] == 2 == the amax of its src values, x[1, 1] == 0 == the only src value: PyTorch
    # counts x there although include_self=False and halves the src gradient (its sum is then
    # not g: a wrong subgradient); jitgrad gives the src value all of g (Note [scatter repeats])
    y, gx, gs = run(reduce, False)
    torch_y = {"amax": [[3.0, 2.0, 3.0, 7.0], [10.0, 0.0, 6.0, 2.0]],
               "amin": [[3.0, 0.0, 3.0, 5.0], [-4.0, 0.0, 0.0, 2.0]]}[reduce]
    np.testing.assert_allclose(y.numpy(), torch_y)
    want = {"amax": [[1.5, -1.0, 0.0, 3.0], [0.5, 0.0, -2.0, 1.0], [0.0, 0.25, 0.0, 0.0]],
            "amin": [[0.0, 0.0, -2.0, 0.0], [0.5, -1.0, 0.0, 1.0], [1.5, 0.25, 0.0, 3.0]]}
    np.testing.assert_allclose(gs.numpy(), want[reduce])
    np.testing.assert_allclose(gx.numpy(), [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    # no ties among the reduced values here: the finite differences agree
    x, s = t(X0, True), t(S0, True)
    assert gradcheck(lambda a, b: jitgrad.scatter_reduce(a, 0, idx(I0), b, reduce,
                                                         include_self=False), [x, s])


def test_ties_share_the_gradient_evenly_like_torch():
    x, s = t([5., 1.], True), t([5., 5., 0., 2.], True)
    # torch 2.13 gives [1/3, 1/3, 0, 1] for src both times (include_self=False: x[0] == 5 is
    # counted, the case above); without self the two src values share g
    for inc, gx_want, gs_want in [(True, [1 / 3, 0.0], [1 / 3, 1 / 3, 0.0, 1.0]),
                                  (False, [0.0, 0.0], [0.5, 0.5, 0.0, 1.0])]:
        y = jitgrad.scatter_reduce(x, 0, idx([0, 0, 1, 1]), s, "amax", include_self=inc)
        gx, gs = jitgrad.autograd.grad(y.sum(), (x, s))
        np.testing.assert_allclose(y.numpy(), [5.0, 2.0])
        np.testing.assert_allclose(gx.numpy(), gx_want)
        np.testing.assert_allclose(gs.numpy(), gs_want)
    # a NaN is the maximum: the gradient goes to it
    x, s = t([1., 2.], True), t([np.nan, 1.], True)
    y = jitgrad.scatter_reduce(x, 0, idx([0, 1]), s, "amax")
    gx, gs = jitgrad.autograd.grad(y.sum(), (x, s))
    assert np.isnan(y.numpy()[0]) and y.numpy()[1] == 2.0
    np.testing.assert_allclose(gs.numpy(), [1.0, 0.0])
    np.testing.assert_allclose(gx.numpy(), [0.0, 1.0])


def test_prod_zeros_first_and_second_order():
    # two zeros reach x[0]: the gradients are exact (torch 2.13: [0, 3] and [0, 0, 1])
    x, s = t([2., 1.], True), t([0., 0., 3.], True)
    y = jitgrad.scatter_reduce(x, 0, idx([0, 0, 1]), s, "prod")
    gx, gs = jitgrad.autograd.grad(y.sum(), (x, s), create_graph=True)
    np.testing.assert_allclose(gx.numpy(), [0.0, 3.0])
    np.testing.assert_allclose(gs.numpy(), [0.0, 0.0, 1.0])
    with pytest.raises(RuntimeError, match="Double backward is unsupported for src when more "
                                           "than one zero"):
        jitgrad.autograd.grad(gs.sum(), s)
    # one zero: second derivatives are exact (against finite differences of the gradient)
    x, s = t([2., 1.5], True), t([0., -1.5, 3.], True)
    assert jitgrad.testing.checks.gradgradcheck(
        lambda a, b: jitgrad.scatter_reduce(a, 0, idx([0, 0, 1]), b, "prod"), [x, s])


def test_integer_mean_rounds_down_and_reduce_names():
    x = jitgrad.tensor(np.array([1, 2, 3]))
    s = jitgrad.tensor(np.array([4, 4, 5]))
    assert jitgrad.scatter_reduce(x, 0, idx([0, 0, 2]), s, "mean").tolist() == [3, 2, 4]
    assert jitgrad.scatter_reduce(x, 0, idx([0, 0, 2]), s, "mean",
                                  include_self=False).tolist() == [4, 2, 5]
    neg = jitgrad.scatter_reduce(jitgrad.tensor(np.array([-1, 2])), 0, idx([0, 0]),
                                 jitgrad.tensor(np.array([-4, 0])), "mean")
    assert neg.tolist() == [-2, 2]  # floor, as torch
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, "
                                           "amax or amin, got 'max'"):
        jitgrad.scatter_reduce(t([1.0]), 0, idx([0]), t([1.0]), "max")


def test_scatter_src_and_value_match_torch():
    x, s = t([[1., 2., 3.], [4., 5., 6.]], True), t([[10., 20., 30.], [40., 50., 60.]], True)
    y = x.scatter(0, idx([[1, 0, 1], [0, 1, 0]]), s)
    np.testing.assert_allclose(y.numpy(), [[40., 20., 60.], [10., 50., 30.]])
    assert y.grad_fn.name() == "ScatterBackward0"
    g = t(np.arange(6.).reshape(2, 3))
    gx, gs = jitgrad.autograd.grad(y, (x, s), g)
    np.testing.assert_allclose(gx.numpy(), np.zeros((2, 3)))
    np.testing.assert_allclose(gs.numpy(), [[3., 1., 5.], [0., 4., 2.]])
    y = jitgrad.scatter(x, 0, idx([[1, 0, 1], [0, 0, 1]]), 2.5)  # a number: the value form
    np.testing.assert_allclose(y.numpy(), [[2.5, 2.5, 3.], [2.5, 5., 2.5]])
    assert y.grad_fn.name() == "ScatterBackward1"
    (gx,) = jitgrad.autograd.grad(y, (x,), g)
    np.testing.assert_allclose(gx.numpy(), [[0., 0., 2.], [0., 4., 0.]])  # torch 2.13
    y2 = x.scatter(0, idx([[1, 0, 1], [0, 0, 1]]), value=2.5)
    np.testing.assert_array_equal(y2.numpy(), y.numpy())


def test_scatter_repeated_targets_last_write_wins_with_its_gradient():
    # torch picks an unspecified write and sends g to all of them (its docs: "the gradient will
    # be incorrect"); jitgrad: the last write in C order wins and only it gets g
    x, s = t([[1., 2., 3.], [4., 5., 6.]], True), t([[10., 20., 30.], [40., 50., 60.]], True)
    y = x.scatter(0, idx([[1, 0, 1], [0, 0, 1]]), s)
    np.testing.assert_allclose(y.numpy(), [[40., 50., 3.], [10., 5., 60.]])
    gx, gs = jitgrad.autograd.grad(y, (x, s), t(np.arange(6.).reshape(2, 3)))
    np.testing.assert_allclose(gx.numpy(), [[0., 0., 2.], [0., 4., 0.]])
    np.testing.assert_allclose(gs.numpy(), [[3., 0., 0.], [0., 1., 5.]])
    assert gradcheck(lambda a, b: a.scatter(0, idx([[1, 0, 1], [0, 0, 1]]), b), [x, s])


def test_scatter_with_reduce_values_and_no_derivative_like_torch():
    x = t([[1., 2., 3.], [4., 5., 6.]], True)
    s = t([[10., 20., 30.], [40., 50., 60.]], True)
    index = idx([[1, 0, 1], [0, 0, 1]])
    with pytest.warns(UserWarning, match="reduce argument of scatter with Tensor src is deprec"):
        y = x.scatter(0, index, s, reduce="add")
    np.testing.assert_allclose(y.numpy(), [[41., 72., 3.], [14., 5., 96.]])  # torch 2.13
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ym = x.scatter(0, index, s, reduce="multiply")
    np.testing.assert_allclose(ym.numpy(), [[40., 2000., 3.], [40., 5., 10800.]])
    np.testing.assert_allclose(x.scatter(0, index, 2.5, reduce="add").numpy(),
                               [[3.5, 7., 3.], [6.5, 5., 11.]])
    np.testing.assert_allclose(x.scatter(0, index, 2.5, reduce="multiply").numpy(),
                               [[2.5, 12.5, 3.], [10., 5., 37.5]])
    assert y.requires_grad and y.grad_fn.name() == "NotImplemented"
    for out in (y, ym, x.scatter(0, index, 2.5, reduce="multiply")):
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
            out.sum().backward()
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        jf.jvp(lambda a: a.scatter(0, index, 2.5, reduce="add"), (t(X0[:2]),), (t(X0[:2]),))
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.scatter(0, index, s, reduce="mean")


def test_inplace_forms_and_top_level_names():
    def public(fn):  # the top-level name wraps the row's function (Note [torch signatures])
        return getattr(fn, "public_function", fn)
    for name in ("gather", "scatter", "scatter_add", "scatter_reduce"):
        assert public(getattr(jitgrad, name)) is getattr(jitgrad.Tensor, name), name
    a = t([[1., 2., 3.], [4., 5., 6.]])
    r = a.scatter_(1, idx([[2], [0]]), 9.0)
    assert r is a and a.tolist() == [[1., 2., 9.], [9., 5., 6.]]
    a.scatter_reduce_(0, idx([[0, 0, 0]]), t([[2., 2., 2.]]), "prod")
    assert a.tolist() == [[2., 4., 18.], [9., 5., 6.]]
    a.scatter_(0, idx([[1, 1, 1]]), t([[0.5, 0.5, 0.5]]), reduce="multiply")
    assert a.tolist() == [[2., 4., 18.], [4.5, 2.5, 3.]]
    # in place with autograd: the history of the old value flows (leaf -> clone -> write)
    w = t(X0, True)
    b = w * 1.0
    b.scatter_reduce_(0, idx(I0), t(S0), "sum", include_self=False)
    (gw,) = jitgrad.autograd.grad(b, (w,), t(G0))
    np.testing.assert_allclose(gw.numpy(), TORCH[("sum", False)][1])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.scatter_(0, idx([[0]]), 1.0)
    assert w.tolist() == X0  # a refused call changes nothing


def test_errors_name_the_op_and_shapes():
    x = t(X0)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 2"):
        x.scatter(0, idx([[5]]), 1.0)
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_reduce(0, idx([[0]]), jitgrad.tensor(np.ones((1, 1), np.float32)), "sum")
    with pytest.raises(RuntimeError, match=r"Expected index \[3, 1\] to be no larger than self"):
        x.scatter(1, idx([[0], [0], [0]]), 1.0)
    with pytest.raises(RuntimeError, match="Expected dtype int32/int64 for index"):
        x.scatter(0, t([[0.0]]), 1.0)
    with pytest.raises(TypeError, match="exactly one of src"):
        jitgrad.scatter(x, 0, idx([[0]]))
    with pytest.raises(TypeError, match="complex tensors are not supported"):
        jitgrad.scatter_reduce(jitgrad.tensor([1j]), 0, idx([0]), jitgrad.tensor([1j]), "sum")


def test_src_larger_than_index_gets_zero_gradient_outside():
    # torch's backward fails here ("invalid gradient ... got [2, 3]"); jitgrad pads with zeros
    x, s = t([[1., 5., 2.], [0., 3., 4.]], True), t([[5.5, 1., 3., 9.], [3.5, 2.5, 0., 7.]], True)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        fn = lambda a, b, r=reduce: jitgrad.scatter_reduce(a, 1, idx([[1, 1, 0], [2, 2, 1]]), b, r)
        assert gradcheck(fn, [x, s])
        (gs,) = jitgrad.autograd.grad(fn(x, s).sum(), (s,))
        assert gs.numpy()[:, 3].tolist() == [0.0, 0.0]


def test_forward_mode_and_vmap():
    x, s = t(X0), t(S0)
    tx, ts = t(np.ones((2, 4))), t(np.full((3, 4), 2.0))
    for reduce, want in [("sum", [[3., 5., 1., 5.], [5., 3., 7., 3.]]),
                         ("mean", [[1.5, 5 / 3, 1., 5 / 3], [5 / 3, 1.5, 1.75, 1.5]]),
                         ("amax", [[2., 1.5, 1., 2.], [2., 1.5, 1.5, 2.]])]:  # torch 2.13
        _, tan = jf.jvp(lambda a, b, r=reduce: a.scatter_reduce(0, idx(I0), b, r), (x, s),
                        (tx, ts))
        np.testing.assert_allclose(tan.numpy(), want)
    # prod (torch gives no tangent): the reverse-mode Jacobian times the tangent
    _, tan = jf.jvp(lambda a, b: a.scatter_reduce(0, idx(I0), b, "prod"), (x, s), (tx, ts))
    jx, js = jf.jacrev(lambda a, b: a.scatter_reduce(0, idx(I0), b, "prod"), argnums=(0, 1))(x, s)
    want = np.einsum("ijkl,kl->ij", jx.numpy(), tx.numpy()) + np.einsum(
        "ijkl,kl->ij", js.numpy(), ts.numpy())
    np.testing.assert_allclose(tan.numpy(), want)
    batch = t(np.stack([np.array(X0) + k for k in range(3)]))
    out = jf.vmap(lambda a: a.scatter_reduce(0, idx(I0), s, "amin"))(batch)
    for k in range(3):
        np.testing.assert_allclose(out.numpy()[k],
                                   jitgrad.scatter_reduce(batch[k], 0, idx(I0), s, "amin").numpy())
