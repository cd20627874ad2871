"""Constraints, ``biject_to`` / ``transform_to`` and ``TransformedDistribution``."""
import math

import numpy as np
import pytest

import jitgrad
import jitgrad.distributions as D
from jitgrad.autograd import gradcheck
from jitgrad.distributions import constraints as C
from jitgrad.distributions import transforms as T
from jitgrad.distributions.constraint_registry import ConstraintRegistry

t = jitgrad.tensor


@pytest.mark.parametrize("constraint,value,expected", [
    (C.real, [1.0, math.nan, math.inf], [True, False, True]),
    (C.positive, [1.0, 0.0, -1.0], [True, False, False]),
    (C.nonnegative, [1.0, 0.0, -1.0], [True, True, False]),
    (C.greater_than(2.0), [2.5, 2.0, 1.0], [True, False, False]),
    (C.greater_than_eq(2.0), [2.5, 2.0, 1.0], [True, True, False]),
    (C.less_than(2.0), [2.5, 2.0, 1.0], [False, False, True]),
    (C.unit_interval, [0.0, 1.0, 1.5], [True, True, False]),
    (C.interval(-1.0, 2.0), [-1.0, 2.0, 2.5], [True, True, False]),
    (C.half_open_interval(-1.0, 2.0), [-1.0, 2.0, 0.0], [True, False, True]),
    (C.boolean, [0.0, 1.0, 0.5], [True, True, False]),
    (C.integer_interval(0, 3), [0.0, 3.0, 1.5], [True, True, False]),
    (C.nonnegative_integer, [0.0, 4.0, -1.0], [True, True, False]),
    (C.positive_integer, [0.0, 4.0, 2.5], [False, True, False]),
])
def test_elementwise_constraints(constraint, value, expected):
    np.testing.assert_array_equal(constraint.check(t(value)).numpy(), expected)
    assert constraint.event_dim == 0


def test_vector_constraints():
    x = t([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]])
    np.testing.assert_array_equal(C.simplex.check(x).numpy(), [True, False, False])
    np.testing.assert_array_equal(C.real_vector.check(t([[1.0, math.nan], [1.0, 2.0]])).numpy(),
                                  [False, True])
    np.testing.assert_array_equal(C.one_hot.check(t([[0.0, 1.0], [1.0, 1.0]])).numpy(),
                                  [True, False])
    np.testing.assert_array_equal(C.multinomial(3).check(t([[1.0, 2.0], [2.0, 2.0]])).numpy(),
                                  [True, False])
    assert C.independent(C.positive, 2).event_dim == 2 and C.simplex.event_dim == 1
    assert C.one_hot.is_discrete and not C.simplex.is_discrete
    with pytest.raises(ValueError, match="Expected value.dim\\(\\) >= 2"):
        C.independent(C.real, 2).check(t([1.0]))


def test_matrix_constraints():
    lower = t([[1.0, 0.0], [0.5, 2.0]])
    assert bool(C.lower_triangular.check(lower)) and bool(C.lower_cholesky.check(lower))
    assert not bool(C.lower_cholesky.check(t([[1.0, 0.0], [0.5, -2.0]])))
    assert not bool(C.lower_triangular.check(t([[1.0, 0.1], [0.5, 2.0]])))
    assert bool(C.corr_cholesky.check(t([[1.0, 0.0], [0.6, 0.8]])))
    assert not bool(C.corr_cholesky.check(lower))
    pd = lower @ lower.mT
    assert bool(C.symmetric.check(pd)) and bool(C.positive_definite.check(pd))
    assert not bool(C.symmetric.check(lower))
    assert bool(C.positive_semidefinite.check(t([[1.0, 1.0], [1.0, 1.0]])))
    assert not bool(C.positive_definite.check(t([[1.0, 1.0], [1.0, 1.0]])))
    np.testing.assert_array_equal(C.square.check(jitgrad.zeros(3, 2, 2)).numpy(), [True] * 3)
    assert not bool(C.square.check(jitgrad.zeros(2, 3)))


def test_cat_stack_and_dependent():
    cat = C.cat([C.positive, C.real], dim=0, lengths=[1, 2])
    np.testing.assert_array_equal(cat.check(t([-1.0, 2.0, math.nan])).numpy(),
                                  [False, True, False])
    stack = C.stack([C.positive, C.unit_interval], dim=-1)
    np.testing.assert_array_equal(stack.check(t([[1.0, 2.0], [1.0, 0.5]])).numpy(),
                                  [[True, False], [True, True]])
    dep = C.dependent(is_discrete=False, event_dim=1)
    assert C.is_dependent(dep) and C.is_dependent(C.dependent) and dep.event_dim == 1
    assert not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="dependent"):
        C.dependent.check(t(1.0))
    with pytest.raises(NotImplementedError):
        C.dependent.event_dim

    class Holder:
        @C.dependent_property(is_discrete=False, event_dim=0)
        def support(self):
            return C.interval(0.0, 2.0)

    assert C.is_dependent(Holder.support) and Holder.support.event_dim == 0
    assert isinstance(Holder().support, type(C.unit_interval))
    assert repr(C.interval(0, 1)) == "Interval(lower_bound=0, upper_bound=1)"
    assert repr(C.independent(C.real, 1)) == "IndependentConstraint(Real(), 1)"


def test_mixture_same_family_constraint():
    con = C.MixtureSameFamilyConstraint(C.positive)
    np.testing.assert_array_equal(con.check(t([1.0, -1.0])).numpy(), [True, False])


CONSTRAINTS = [C.real, C.positive, C.nonnegative, C.greater_than(2.0), C.greater_than_eq(-1.0),
               C.less_than(3.0), C.unit_interval, C.interval(-2.0, 5.0),
               C.half_open_interval(0.0, 1.0), C.simplex, C.corr_cholesky, C.real_vector,
               C.independent(C.positive, 1), C.cat([C.positive, C.real], 0, [2, 1]),
               C.stack([C.positive, C.unit_interval, C.real], 0)]


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=repr)
def test_biject_to_maps_into_the_constraint(constraint):
    tr = D.biject_to(constraint)
    assert tr.bijective
    x = t([0.4, -1.3, 0.7])
    y = tr(x)
    assert bool(constraint.check(y).all()), (constraint, y)
    np.testing.assert_allclose(tr.inv(y).numpy(), x.numpy(), rtol=1e-10, atol=1e-12)
    lad = tr.log_abs_det_jacobian(x, y)
    assert np.all(np.isfinite(lad.numpy()))
    xs = x.detach().requires_grad_()
    assert gradcheck(lambda v: tr.log_abs_det_jacobian(v, tr(v)), (xs,))


@pytest.mark.parametrize("constraint,shape", [
    (C.simplex, (3,)), (C.lower_cholesky, (3, 3)), (C.positive_definite, (3, 3)),
    (C.positive_semidefinite, (2, 2)), (C.positive, (4,)), (C.corr_cholesky, (3,)),
])
def test_transform_to_maps_into_the_constraint(constraint, shape):
    jitgrad.manual_seed(0)
    x = jitgrad.randn(*shape)
    assert bool(constraint.check(D.transform_to(constraint)(x)).all())


def test_registry_errors_and_registration():
    with pytest.raises(NotImplementedError, match="_LowerCholesky"):
        D.biject_to(C.lower_cholesky)
    reg = ConstraintRegistry()

    @reg.register(C.positive)
    def _to_positive(constraint):
        return T.SoftplusTransform()

    assert isinstance(reg(C.greater_than(0.0)), T.SoftplusTransform)
    with pytest.raises(TypeError, match="Constraint"):
        reg.register(int, _to_positive)
    assert isinstance(D.transform_to(C.unit_interval), T.SigmoidTransform)
    assert isinstance(D.transform_to(C.simplex), T.SoftmaxTransform)
    assert isinstance(D.biject_to(C.simplex), T.StickBreakingTransform)


def test_transformed_distribution_log_prob_is_the_change_of_variables():
    base = D.Normal(t([0.2, -0.3]), t([1.1, 0.6]))
    d = D.TransformedDistribution(base, [T.AffineTransform(1.0, 2.0), T.ExpTransform()])
    y = t([0.7, 4.0])
    x = (np.log(y.numpy()) - 1.0) / 2.0
    expected = base.log_prob(t(x)).numpy() - np.log(2.0) - np.log(y.numpy())
    np.testing.assert_allclose(d.log_prob(y).numpy(), expected, rtol=1e-13)
    assert d.support.check(y).all() and d.has_rsample
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == ()
    # cdf / icdf through a decreasing transform
    dec = D.TransformedDistribution(base, T.AffineTransform(0.0, -1.0))
    q = t([0.1, 0.6])
    v = dec.icdf(q)
    np.testing.assert_allclose(v.numpy(), -base.icdf(1 - q).numpy(), rtol=1e-12)
    np.testing.assert_allclose(dec.cdf(v).numpy(), q.numpy(), rtol=1e-12)


def test_transformed_distribution_reinterprets_batch_dims():
    base = D.Normal(t([0.2, -0.3, 0.5]), t([1.1, 0.6, 0.9]))
    d = D.TransformedDistribution(base, T.StickBreakingTransform())
    assert tuple(d.batch_shape) == () and tuple(d.event_shape) == (4,)
    y = t([0.1, 0.2, 0.3, 0.4])
    x = T.StickBreakingTransform().inv(y)
    expected = (base.log_prob(x).sum()
                - T.StickBreakingTransform().log_abs_det_jacobian(x, y)).numpy()
    np.testing.assert_allclose(d.log_prob(y).numpy(), expected, rtol=1e-13)
    e = d.expand((5,))
    assert tuple(e.batch_shape) == (5,) and tuple(e.sample().shape) == (5, 4)


def test_transformed_distribution_rsample_gradient():
    loc = t([0.2, -0.3], requires_grad=True)

    def draw(loc):
        jitgrad.manual_seed(11)
        base = D.Normal(loc, t([1.0, 2.0]))
        return D.TransformedDistribution(base, [T.TanhTransform()]).rsample((4,))
    assert gradcheck(draw, (loc,))


def test_transformed_distribution_errors():
    with pytest.raises(ValueError, match="Transform"):
        D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), [T.ExpTransform(), 3])
    with pytest.raises(ValueError, match="at least 1"):
        D.TransformedDistribution(D.Normal(t(0.0), t(1.0)), T.StickBreakingTransform())
