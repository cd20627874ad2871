"""Float64 finite-difference gradient checks (full Jacobians: meant for small inputs)."""
from __future__ import annotations

import numpy as np


def assert_close(actual, expected, rtol=1e-7, atol=1e-9, msg=""):
    """Compare Tensors/arrays/numbers elementwise (NaNs equal), with a readable report."""
    a = np.asarray(actual._data if hasattr(actual, "_data") else actual)
    e = np.asarray(expected._data if hasattr(expected, "_data") else expected)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg)


def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, (tuple, list)) else (out,)


def _as_list(fn, inputs, jac):
    """``jitgrad.autograd.gradcheck``'s ``{(i, j): (n_out, n_in)}`` as ``jac[i][j]`` of shape
    ``(n_in, n_out)`` for every input and output (zeros where nothing is differentiable)."""
    import jitgrad

    with jitgrad.no_grad():
        outs = _outputs(fn, inputs)
    return [[jac[(i, j)].T if (i, j) in jac else np.zeros((x.numel(), o.numel()))
             for j, o in enumerate(outs)] for i, x in enumerate(inputs)]


def numerical_jacobian(fn, inputs, eps=1e-6):
    """d(outputs)/d(inputs) by central differences: one ``(n_in, n_out)`` matrix per pair (the
    inputs that require grad; shared with ``jitgrad.autograd.gradcheck``)."""
    from jitgrad.autograd.gradcheck import get_numerical_jacobian

    inputs = tuple(inputs)
    return _as_list(fn, inputs, get_numerical_jacobian(fn, inputs, eps))


def analytic_jacobian(fn, inputs):
    """d(outputs)/d(inputs) by reverse mode, one ``autograd.grad`` call per output element
    (shared with ``jitgrad.autograd.gradcheck``)."""
    from jitgrad.autograd.gradcheck import get_analytical_jacobian

    inputs = tuple(inputs)
    return _as_list(fn, inputs, get_analytical_jacobian(fn, inputs))


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check reverse-mode gradients of ``fn`` against central differences (float64 inputs)."""
    inputs = tuple(inputs)
    for x in inputs:
        if x.requires_grad and x.dtype.name != "float64":
            raise ValueError(f"gradcheck needs float64 inputs, got {x.dtype}")
    num = numerical_jacobian(fn, inputs, eps)
    ana = analytic_jacobian(fn, inputs)
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            continue
        for j in range(len(num[i])):
            n, a = num[i][j], ana[i][j]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                k = np.unravel_index(np.argmax(np.abs(a - n)), a.shape)
                msg = (f"Jacobian mismatch for output {j} with respect to input {i}: worst element "
                       f"{k}: analytical {a[k]!r} vs numerical {n[k]!r}\nanalytical:\n{a}\n"
                       f"numerical:\n{n}")
                if raise_exception:
                    raise AssertionError(msg)
                return False
    return True


def gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0):
    """Check second derivatives: gradcheck of ``v -> grad(fn(x), x, v, create_graph=True)``."""
    import jitgrad

    inputs = tuple(inputs)
    rng = np.random.default_rng(seed)
    outs = _outputs(fn, inputs)
    vs = [jitgrad.tensor(rng.standard_normal(o.shape), requires_grad=True) for o in outs
          if o.requires_grad]
    n_in = len(inputs)
    diff = [i for i, x in enumerate(inputs) if x.requires_grad]

    def first_grads(*args):
        xs, v = args[:n_in], args[n_in:]
        with jitgrad.enable_grad():  # also when called by the numerical check under no_grad
            os_ = [o for o in _outputs(fn, xs) if o.requires_grad]
            grads = jitgrad.autograd.grad(os_, [xs[i] for i in diff], v, create_graph=True,
                                          allow_unused=True)
        return tuple(g if g is not None else jitgrad.zeros_like(xs[i]) * 0
                     for g, i in zip(grads, diff))

    return gradcheck(first_grads, inputs + tuple(vs), eps, atol, rtol)
