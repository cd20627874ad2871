"""jitgrad.autograd.gradcheck / gradgradcheck: PyTorch's signature, real failures reported."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck


def T(a, **kw):
    return jg.tensor(np.asarray(a, dtype=np.float64), **kw)


class Cube(Function):
    """x**3 with a correct first derivative and an optional bug in it."""

    scale = 3.0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Cube.scale * x * x


@pytest.fixture(autouse=True)
def _reset():
    Cube.scale = 3.0
    yield
    Cube.scale = 3.0


X = T([[0.5, -1.0], [1.5, 2.0]], requires_grad=True)


def test_correct_function_passes_all_modes():
    assert gradcheck(Cube.apply, (X,))
    assert gradcheck(Cube.apply, X, fast_mode=True)
    assert gradgradcheck(Cube.apply, (X,))
    assert gradcheck(lambda x, y: (x.sin() * y, (x @ y).sum()), (X, T(np.eye(2), requires_grad=True)),
                     check_forward_ad=True, check_batched_grad=True,
                     check_batched_forward_grad=True, check_grad_dtypes=True)
    assert gradgradcheck(lambda x: x.tanh() * x, (X,), check_fwd_over_rev=True)


def test_wrong_derivative_reports_the_worst_element():
    Cube.scale = 3.3
    with pytest.raises(GradcheckError) as info:
        gradcheck(Cube.apply, (X,))
    msg = str(info.value)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    # the worst element is the largest x**2: d out[1, 1] / d x[1, 1] = 12 vs 13.2
    assert "d output0[1, 1] / d input0[1, 1]" in msg and "13.2" in msg and "12.0000" in msg
    assert gradcheck(Cube.apply, (X,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="fast mode"):
        gradcheck(Cube.apply, (X,), fast_mode=True)
    assert isinstance(info.value, RuntimeError)  # as PyTorch's GradcheckError


def test_wrong_second_derivative_is_caught_by_gradgradcheck():
    class BadSecond(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            # right value, but built from a detached x: no second derivative through it
            return g * 3.0 * (x * x).detach()

    assert gradcheck(BadSecond.apply, (X,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(BadSecond.apply, (X,))


def test_nondeterministic_backward_is_caught():
    calls = []

    class Flaky(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (2.0 + len(calls) * 1e-10)  # drifts from call to call

    with pytest.raises(GradcheckError, match="not reentrant"):
        gradcheck(Flaky.apply, (X,))
    assert gradcheck(Flaky.apply, (X,), nondet_tol=1e-8)


def test_argument_checks_and_float32_warning():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x * 2, (T([1.0]),))
    x32 = jg.tensor([1.0, 2.0], dtype=jg.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        gradcheck(lambda x: x * 2, (x32,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_non_tensor_inputs_and_outputs_pass_through():
    def f(x, k, flag):
        return (x * k if flag else x), jg.tensor([1, 2])  # an int output is not checked

    assert gradcheck(f, (X, 2.5, True))
