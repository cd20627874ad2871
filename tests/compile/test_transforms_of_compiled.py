"""``jitgrad.func`` transforms applied to a compiled function give eager's derivatives: forward
mode (``jvp``, ``jacfwd``, ``hessian``) and ``vmap`` run the function eagerly inside them (a
program's plain arrays would drop the tangents: zero derivatives, silently), reverse mode runs
the program (its backward node carries the gradients)."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad import func


def f(x):
    return (jg.sin(x) * x).sum() + (x[:1] * x[1:]).sum()


X = jg.tensor([0.3, 1.2, -0.7])
TRANSFORMS = {
    "jvp": lambda g: func.jvp(g, (X,), (jg.tensor([1.0, -2.0, 0.5]),))[1],
    "jacfwd": lambda g: func.jacfwd(g)(X),
    "jacrev": lambda g: func.jacrev(g)(X),
    "grad": lambda g: func.grad(g)(X),
    "hessian": lambda g: func.hessian(g)(X),
    "vmap": lambda g: func.vmap(g)(jg.stack([X, X * 2.0, -X])),
    "vmap(grad)": lambda g: func.vmap(func.grad(g))(jg.stack([X, X * 2.0, -X])),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_a_transform_of_a_compiled_function_equals_eager(name):
    compiled = jg.compile(f)
    compiled(X)
    compiled(X)  # (the program runs from here)
    got, want = TRANSFORMS[name](compiled), TRANSFORMS[name](f)
    assert np.abs(want.numpy()).max() > 0.1  # (a derivative that is not zero)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13, atol=1e-15)
    assert not compiled.stats()["fallbacks"]
