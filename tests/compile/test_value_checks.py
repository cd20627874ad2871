"""Value checks and bool reductions under ``jitgrad.compile`` (Note [value checks] in
jitgrad/ops/checks.py): a distribution validating its arguments (PyTorch's default) compiles,
the compiled call raises where eager raises with that call's values, and ``Tensor.all`` /
``any`` over dims are rows of the program."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.testing import assert_close

D = jg.distributions


def _log_density(loc, scale, x):
    """Normal and Independent(Normal) log densities, validated (the latter's support check is
    ``independent``'s ``check(x).all(-1)``)."""
    normal = D.Normal(loc, scale)
    joint = D.Independent(D.Normal(loc, scale * 2.0), 1)
    return normal.log_prob(x).sum() + joint.log_prob(x).sum()


LOC, X = jg.tensor([0.1, 0.2]), jg.tensor([[0.3, -0.1], [1.0, 2.0]])


def test_validated_distributions_compile_and_check_at_every_call():
    eager = jg.func.value_and_grad(_log_density, argnums=(0, 1))
    compiled = jg.compile(eager, fullgraph=True)
    for scale in ([1.0, 2.0], [0.5, 3.0]):
        got, want = compiled(LOC, jg.tensor(scale), X), eager(LOC, jg.tensor(scale), X)
        assert_close(got[0], want[0], rtol=1e-13)
        for g, w in zip(got[1], want[1]):
            assert_close(g, w, rtol=1e-12, atol=1e-15)
    bad = jg.tensor([1.0, -2.0])
    head = (r"^Expected parameter scale \(Tensor of shape \(2,\)\) of distribution "
            r"Normal\(loc: \(2,\), scale: \(2,\)\) to satisfy the constraint "
            r"GreaterThan\(lower_bound=0\.0\), but found invalid values:\ntensor\(\[ 1\., -2\.\]")
    for fn in (eager, compiled):
        with pytest.raises(ValueError, match=head):
            fn(LOC, bad, X)
    with pytest.raises(ValueError, match="to be within the support"):
        compiled(LOC, jg.tensor([1.0, 2.0]), jg.tensor([[0.3, np.nan], [1.0, 2.0]]))
    assert_close(compiled(LOC, jg.tensor([1.0, 2.0]), X)[0],
                 eager(LOC, jg.tensor([1.0, 2.0]), X)[0], rtol=1e-13)
    assert compiled.stats()["traces"] == 1


@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), (-1, True), ((0, 2), False)])
def test_all_and_any_over_dims_are_program_rows(dim, keepdim):
    def f(x):
        big = (x > 0.5).all(dim, keepdim) if dim is not None else (x > 0.5).all()
        some = jg.any(x < -1.0, dim, keepdim) if dim is not None else (x < -1.0).any()
        return big, some, jg.where(big | some, 1.0, 2.0) * x.sum()

    compiled = jg.compile(f, fullgraph=True)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = jg.tensor(rng.standard_normal((2, 3, 4)) + rng.uniform(-1, 1))
        for got, want in zip(compiled(x), f(x)):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert compiled.stats()["traces"] == 1


def test_a_check_inside_a_loop_body_runs_eagerly():
    def f(scale):
        return jg.fori_loop(2, lambda s: D.Normal(0.0, s).log_prob(s) * 0.0 + s, scale).sum()

    compiled = jg.compile(f)
    with pytest.warns(UserWarning, match="a value check inside a captured loop"):
        assert_close(compiled(jg.tensor([1.0, 2.0])), f(jg.tensor([1.0, 2.0])), rtol=1e-15)


def test_checks_run_inside_a_native_segment_and_fail_with_eager_error():
    def nlp(theta, tau, y):
        return -(D.Normal(theta, tau).log_prob(y).sum() + D.HalfCauchy(5.0).log_prob(tau).sum())

    compiled = jg.compile(jg.func.value_and_grad(nlp), fullgraph=True)
    y = jg.tensor([28.0, 8.0, -3.0, 7.0])
    theta, tau = jg.tensor([1.0, 2.0, 0.5, -1.0]), jg.tensor([3.0, 1.0, 2.0, 5.0])
    compiled(theta, tau, y)
    program = next(e for e in compiled._entries.values() if not isinstance(e, str))
    assert [s.__qualname__.split(".")[0] for s in program.forward_steps] == ["Segment"]
    for bad, what in ((jg.tensor([3.0, 1.0, -2.0, 5.0]), "parameter scale"),
                      (jg.tensor([3.0, 1.0, 2.0, np.nan]), "parameter scale")):
        with pytest.raises(ValueError, match=what) as got:
            compiled(theta, bad, y)
        with pytest.raises(ValueError) as want:
            nlp(theta, bad, y)
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]
    with pytest.raises(ValueError, match="to be within the support"):
        compiled(theta, tau, jg.tensor([28.0, np.inf * 0, -3.0, 7.0]))
    value, grad = compiled(theta, tau, y)
    want = jg.func.value_and_grad(nlp)(theta, tau, y)
    assert_close(value, want[0], rtol=1e-13)
    assert_close(grad, want[1], rtol=1e-12)
