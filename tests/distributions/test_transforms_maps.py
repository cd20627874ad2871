"""Transforms (``jitgrad.distributions.transforms``): round trips, log-det-Jacobians against
the log|det| of the Jacobian (``jitgrad.func.jacrev``), gradients against finite differences,
caching, composition, shapes, and PyTorch 2.13's pinned values."""
import math

import numpy as np
import pytest

import jitgrad
import jitgrad.distributions as D
from jitgrad.autograd import gradcheck, gradgradcheck
from jitgrad.distributions import constraints as C
from jitgrad.distributions import transforms as T
from jitgrad.distributions.transforms_vector import tril_matrix_to_vec
from jitgrad.func import jacrev

from _pinned_transforms import PINNED

t = jitgrad.tensor
X = [0.3, -1.2, 0.5]

# (transform, input on its domain, how to read a square Jacobian off the full one)
ELEMENTWISE = [
    T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform(), T.SoftplusTransform(),
    T.AffineTransform(1.5, -2.0), T.AffineTransform(t([0.1, 0.2, 0.3]), t([2.0, -0.5, 3.0])),
    T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)]),
    T.ExpTransform().inv.inv, T.SigmoidTransform().inv.inv,
]


def _logdet(jac):
    sign, logdet = np.linalg.slogdet(jac)
    assert sign != 0
    return logdet


@pytest.mark.parametrize("tr", ELEMENTWISE, ids=repr)
def test_elementwise_log_abs_det_jacobian(tr):
    x = t(X)
    y = tr(x)
    np.testing.assert_allclose(tr.inv(y).numpy(), x.numpy(), rtol=1e-12, atol=1e-12)
    jac = jacrev(tr)(x).numpy()
    np.testing.assert_allclose(jac, np.diag(np.diag(jac)), atol=1e-14)  # elementwise
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, y).numpy(),
                               np.log(np.abs(np.diag(jac))), rtol=1e-10, atol=1e-12)
    assert bool(tr.codomain.check(y).all())


@pytest.mark.parametrize("tr", ELEMENTWISE[:6], ids=repr)
def test_elementwise_gradients(tr):
    x = t(X, requires_grad=True)
    assert gradcheck(lambda x: tr(x), (x,))
    assert gradgradcheck(lambda x: tr.log_abs_det_jacobian(x, tr(x)), (x,))


def test_inverse_log_det_is_negated():
    tr = T.SigmoidTransform()
    y = t([0.2, 0.5, 0.9])
    inv = tr.inv
    x = inv(y)
    jac = jacrev(inv)(y).numpy()
    np.testing.assert_allclose(inv.log_abs_det_jacobian(y, x).numpy(),
                               np.log(np.diag(jac)), rtol=1e-10)
    assert inv.inv is tr and inv.domain is tr.codomain and inv.codomain is tr.domain


def test_power_transform():
    tr = T.PowerTransform(t([2.0, 0.5, -1.5]))
    x = t([0.7, 1.3, 2.1])
    y = tr(x)
    np.testing.assert_allclose(y.numpy(), [0.49, 1.3 ** 0.5, 2.1 ** -1.5], rtol=1e-14)
    np.testing.assert_allclose(tr.inv(y).numpy(), x.numpy(), rtol=1e-13)
    jac = np.diag(jacrev(tr)(x).numpy())
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, y).numpy(), np.log(np.abs(jac)),
                               rtol=1e-12)
    np.testing.assert_array_equal(tr.sign.numpy(), [1.0, 1.0, -1.0])
    assert tr.forward_shape((4, 3)) == (4, 3)


def test_tanh_log_det_is_stable_for_large_inputs():
    tr = T.TanhTransform()
    x = t([30.0, -40.0])
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, tr(x)).numpy(),
                               [2 * (math.log(2) - 30 - math.log1p(math.exp(-60))),
                                2 * (math.log(2) - 40)], rtol=1e-12)


def test_abs_and_softmax_are_not_bijective():
    for tr in (T.AbsTransform(), T.SoftmaxTransform(), T.LowerCholeskyTransform(),
               T.PositiveDefiniteTransform()):
        assert not tr.bijective
    with pytest.raises(NotImplementedError):
        T.AbsTransform().log_abs_det_jacobian(t(X), t(X))
    y = T.SoftmaxTransform()(t(X))
    np.testing.assert_allclose(y.numpy(), np.exp(X) / np.exp(X).sum(), rtol=1e-14)
    np.testing.assert_allclose(T.SoftmaxTransform()(T.SoftmaxTransform().inv(y)).numpy(),
                               y.numpy(), rtol=1e-14)


@pytest.mark.parametrize("name", ["StickBreakingTransform", "CorrCholeskyTransform"])
def test_vector_transforms_match_pytorch(name):
    row = PINNED[name]
    tr = getattr(T, name)()
    x = t(row["x"])
    y = tr(x)
    np.testing.assert_allclose(y.numpy(), row["y"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, y).numpy(),
                               row["log_abs_det_jacobian"], rtol=1e-12)
    np.testing.assert_allclose(tr.inv(y).numpy(), row["x"], rtol=1e-10, atol=1e-12)
    assert bool(tr.codomain.check(y).all())


def test_stick_breaking_log_det_is_the_jacobian_of_the_free_coordinates():
    tr = T.StickBreakingTransform()
    x = t(X)
    jac = jacrev(tr)(x).numpy()  # (K, K-1); the last coordinate is 1 - the others
    assert float(tr.log_abs_det_jacobian(x, tr(x))) == pytest.approx(_logdet(jac[:-1]),
                                                                     rel=1e-11)
    assert tr.forward_shape((5, 3)) == (5, 4) and tr.inverse_shape((5, 4)) == (5, 3)


def test_corr_cholesky_log_det_is_the_jacobian_of_the_strict_lower_triangle():
    tr = T.CorrCholeskyTransform()
    x = t([0.3, -1.2, 0.5, 0.8, -0.1, 0.4])  # D = 4
    jac = jacrev(lambda v: tril_matrix_to_vec(tr(v), diag=-1))(x).numpy()
    assert float(tr.log_abs_det_jacobian(x, tr(x))) == pytest.approx(_logdet(jac), rel=1e-10)
    y = tr(x)
    np.testing.assert_allclose((y.numpy() ** 2).sum(-1), 1.0, rtol=1e-12)
    assert tr.forward_shape((6,)) == (4, 4) and tr.inverse_shape((2, 4, 4)) == (2, 6)
    with pytest.raises(ValueError, match="D\\*\\(D-1\\)/2"):
        tr.forward_shape((5,))


@pytest.mark.parametrize("tr", [T.StickBreakingTransform(), T.CorrCholeskyTransform()], ids=repr)
def test_vector_transform_gradients(tr):
    x = t(X, requires_grad=True)
    assert gradcheck(lambda x: tr(x), (x,))
    assert gradcheck(lambda x: tr.log_abs_det_jacobian(x, tr(x)), (x,))
    y = tr(t(X)).detach().requires_grad_()
    assert gradcheck(tr.inv, (y,))


def test_cholesky_transforms():
    a = t([[0.3, 2.0, 0.1], [-1.2, 0.5, 0.4], [0.7, -0.3, -0.8]])
    lower = T.LowerCholeskyTransform()(a)
    expected = np.tril(a.numpy(), -1) + np.diag(np.exp(np.diag(a.numpy())))
    np.testing.assert_allclose(lower.numpy(), expected, rtol=1e-14)
    assert bool(C.lower_cholesky.check(lower))
    np.testing.assert_allclose(T.LowerCholeskyTransform().inv(lower).numpy(),
                               np.tril(a.numpy()), rtol=1e-14)
    pd = T.PositiveDefiniteTransform()(a)
    np.testing.assert_allclose(pd.numpy(), expected @ expected.T, rtol=1e-14)
    assert bool(C.positive_definite.check(pd))
    np.testing.assert_allclose(T.PositiveDefiniteTransform().inv(pd).numpy(),
                               np.tril(a.numpy()), rtol=1e-12, atol=1e-13)
    x = a.detach().requires_grad_()
    assert gradcheck(lambda x: T.PositiveDefiniteTransform()(x), (x,))


def test_compose_event_dims_and_log_det():
    tr = T.ComposeTransform([T.ExpTransform(), T.StickBreakingTransform()])
    assert tr.domain.event_dim == 1 and tr.codomain.event_dim == 1
    x = t([[0.3, -1.2], [0.1, 0.4]])
    y = tr(x)
    inner = T.ExpTransform()(x)
    expected = (T.ExpTransform().log_abs_det_jacobian(x, inner).sum(-1)
                + T.StickBreakingTransform().log_abs_det_jacobian(inner, y))
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, y).numpy(), expected.numpy(),
                               rtol=1e-14)
    assert tr.forward_shape((2, 2)) == (2, 3)
    assert tr.inv.inv is tr and tr.inv.parts[0] == T.StickBreakingTransform().inv
    assert tr.bijective
    assert T.ComposeTransform([T.AffineTransform(0.0, -2.0), T.ExpTransform()]).sign == -1


def test_identity_transform():
    x = t(X)
    assert T.identity_transform(x) is x
    np.testing.assert_array_equal(T.identity_transform.log_abs_det_jacobian(x, x).numpy(), 0)
    assert T.identity_transform.domain is C.real


def test_affine_event_dim_sums_the_log_det():
    tr = T.AffineTransform(t([0.0, 1.0]), t([2.0, -3.0]), event_dim=1)
    x = t([[0.5, 0.1], [0.2, 0.3], [1.0, 2.0]])
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, tr(x)).numpy(), [math.log(6)] * 3,
                               rtol=1e-14)
    assert tr.domain.event_dim == 1 and tr.event_dim == 1
    np.testing.assert_array_equal(tr.sign.numpy(), [1.0, -1.0])
    assert tr.forward_shape((3, 2)) == (3, 2)


def test_independent_and_reshape():
    tr = T.IndependentTransform(T.ExpTransform(), 1)
    x = t([[0.3, -1.2], [0.1, 0.4]])
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, tr(x)).numpy(), x.numpy().sum(-1),
                               rtol=1e-14)
    assert tr.domain.event_dim == 1 and repr(tr) == "IndependentTransform(ExpTransform(), 1)"
    r = T.ReshapeTransform((2, 3), (6,))
    z = t(np.arange(12.0).reshape(2, 2, 3))
    assert tuple(r(z).shape) == (2, 6) and tuple(r.inv(r(z)).shape) == (2, 2, 3)
    np.testing.assert_array_equal(r.log_abs_det_jacobian(z, r(z)).numpy(), [0.0, 0.0])
    assert r.forward_shape((5, 2, 3)) == (5, 6) and r.inverse_shape((6,)) == (2, 3)
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((2, 3), (5,))
    with pytest.raises(ValueError, match="event shape"):
        r(t(np.zeros((2, 4))))


def test_cat_and_stack():
    cat = T.CatTransform([T.ExpTransform(), T.identity_transform, T.SigmoidTransform()], dim=0,
                         lengths=[1, 2, 1])
    x = t([0.3, -1.2, 0.5, 0.8])
    y = cat(x)
    np.testing.assert_allclose(y.numpy(), [math.exp(0.3), -1.2, 0.5, 1 / (1 + math.exp(-0.8))],
                               rtol=1e-14)
    np.testing.assert_allclose(cat.inv(y).numpy(), x.numpy(), rtol=1e-13)
    jac = np.diag(jacrev(cat)(x).numpy())
    np.testing.assert_allclose(cat.log_abs_det_jacobian(x, y).numpy(), np.log(jac), rtol=1e-12)
    assert bool(cat.codomain.check(y).all()) and cat.bijective
    stack = T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=1)
    x2 = t([[0.3, -1.2], [0.5, 0.8], [0.1, 0.2]])
    y2 = stack(x2)
    np.testing.assert_allclose(y2.numpy(), np.stack([np.exp(x2.numpy()[:, 0]),
                                                     np.tanh(x2.numpy()[:, 1])], 1), rtol=1e-14)
    np.testing.assert_allclose(stack.inv(y2).numpy(), x2.numpy(), rtol=1e-13)
    lad = stack.log_abs_det_jacobian(x2, y2).numpy()
    np.testing.assert_allclose(lad[:, 0], x2.numpy()[:, 0], rtol=1e-14)
    np.testing.assert_allclose(lad[:, 1], np.log(1 - np.tanh(x2.numpy()[:, 1]) ** 2), rtol=1e-12)
    with pytest.raises(ValueError, match="expected size 4"):
        cat(t([1.0, 2.0]))


def test_cumulative_distribution_transform():
    normal = D.Normal(t(0.5), t(2.0))
    tr = T.CumulativeDistributionTransform(normal)
    x = t([0.1, 1.7])
    y = tr(x)
    np.testing.assert_allclose(y.numpy(), normal.cdf(x).numpy(), rtol=1e-14)
    np.testing.assert_allclose(tr.inv(y).numpy(), x.numpy(), rtol=1e-10)
    np.testing.assert_allclose(tr.log_abs_det_jacobian(x, y).numpy(),
                               np.log(np.diag(jacrev(tr)(x).numpy())), rtol=1e-10)
    assert tr.domain is normal.support and tr.codomain is C.unit_interval


def test_caching():
    tr = T.ExpTransform(cache_size=1)
    x = t(X)
    y = tr(x)
    assert tr(x) is y and tr.inv(y) is x
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    aff = T.AffineTransform(1.0, 2.0).with_cache()
    y = aff(x)
    assert aff.inv(y) is x
    comp = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], cache_size=1)
    assert all(p._cache_size == 1 for p in comp.parts)
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


def test_equality_and_repr():
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.ExpTransform().inv == T.ExpTransform().inv
    assert repr(T.ExpTransform().inv) == "_InverseTransform(ExpTransform())"
    assert repr(T.ComposeTransform([T.ExpTransform(), T.TanhTransform()])) == \
        "ComposeTransform(\n    ExpTransform(),\n    TanhTransform()\n)"
    with pytest.raises(ValueError, match="event_dim"):
        T.ComposeTransform([T.ReshapeTransform((2,), (1, 2))]).event_dim
