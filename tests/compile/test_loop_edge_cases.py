"""``jitgrad.fori_loop`` inside ``jitgrad.compile`` on the bodies a sweep found breaking it: a
compiled loop is as trustworthy as the eager one at every call (the trace run, then the
program), with the same values, the same ``requires_grad`` and the same gradients, or it runs
eagerly with a warning; it never raises where eager does not."""
import warnings

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.numpy as jnp
import jitgrad.scipy.special as sp
import jitgrad.scipy.stats as st
from jitgrad.func._pytree import tree_flatten
from jitgrad.testing import assert_close

fl = jg.fori_loop

X = ([0.3, 1.2, 0.7], [0.5, 2.0, 0.1])  # two calls: the trace run, then the program
Y = ([0.5, 2.0, 0.1], [0.9, 0.4, 1.7])


def _args(k, requires_grad=(), count=2):
    """Call ``k``'s arguments: fresh tensors, those listed requiring grad."""
    values = (X[k], Y[k], [1.1, 0.6, 2.3])[:count]
    return tuple(jg.tensor(np.array(v), requires_grad=i in requires_grad)
                 for i, v in enumerate(values))


def _outcome(fn, args):
    """``("ok", result leaves)`` or ``("raise", exception type)``, with the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except Exception as exc:  # noqa: BLE001 - compared with eager's
            return ("raise", type(exc)), caught
    return ("ok", tree_flatten(out)[0]), caught


def _grads(leaves, args):
    """Gradients of a weighted sum of the float results requiring grad, or the exception."""
    diff = [o for o in leaves if o.requires_grad]
    inputs = [a for a in args if a.requires_grad]
    if not diff or not inputs:
        return None
    total = sum((o * (k + 1.5) * o).sum() for k, o in enumerate(diff))
    try:
        return ("ok", jg.autograd.grad(total, inputs, allow_unused=True))
    except Exception as exc:  # noqa: BLE001 - compared with eager's
        return ("raise", type(exc))


def _check(f, requires_grad=(), count=2, values=True, fallback=None):
    """``jg.compile(f)`` against ``f`` on two calls with other values: the same results
    (values to 1e-12, shapes, dtypes, requires_grad, no grad_fn where eager's results do not
    require grad), the same gradients,
    or the same exception. ``fallback``: whether the compiled function must run eagerly
    (with a warning) or be captured; None: either."""
    cf = jg.compile(f)
    warned = []
    for k in range(2):
        got_args, eager_args = _args(k, requires_grad, count), _args(k, requires_grad, count)
        got, caught = _outcome(cf, got_args)
        warned += [str(w.message) for w in caught if "cannot be captured" in str(w.message)]
        want, _ = _outcome(f, eager_args)
        assert got[0] == want[0], (got, want)
        if want[0] == "raise":
            assert got[1] is want[1]
            continue
        assert len(got[1]) == len(want[1])
        for g, w in zip(got[1], want[1]):
            assert g.shape == w.shape and g.dtype == w.dtype
            assert g.requires_grad == w.requires_grad
            if not w.requires_grad:  # (a result that is a carry eager returns as given is
                assert g.grad_fn is None  # a leaf there, a loop result compiled: no check)
            if values:
                assert_close(g.detach(), w.detach(), rtol=1e-12, atol=1e-12)
        for a, b in zip(got_args, eager_args):  # the inputs: written alike (or not at all)
            assert_close(a.detach(), b.detach(), rtol=0, atol=0)
        got_grads, want_grads = _grads(got[1], got_args), _grads(want[1], eager_args)
        assert (got_grads is None) == (want_grads is None)
        if want_grads is not None:
            assert got_grads[0] == want_grads[0], (got_grads, want_grads)
            if want_grads[0] == "raise":
                assert got_grads[1] is want_grads[1]
            else:
                for g, w in zip(got_grads[1], want_grads[1]):
                    assert (g is None) == (w is None)
                    if w is not None:
                        assert_close(g, w, rtol=1e-12, atol=1e-12)
    if fallback is True:
        assert warned, "expected the compiled function to run eagerly with a warning"
    elif fallback is False:
        assert not warned, warned
    return cf


# --- 1. a body result not computed from the carry by an op (a constant, the carry itself,
# an outer value): the generated loop read a name it never set
@pytest.mark.parametrize("body", [
    jg.zeros_like, jg.ones_like, lambda c: jg.full_like(c, 2.0), lambda c: c.detach(),
    jnp.imag, lambda c: c,
], ids=["zeros_like", "ones_like", "full_like", "detach", "imag", "identity"])
@pytest.mark.parametrize("requires_grad", [(), (0,)])
def test_body_result_not_made_by_the_body(body, requires_grad):
    _check(lambda x: fl(2, body, x), requires_grad, count=1, fallback=False)


def test_empty_like_body():  # its values are whatever memory held: shapes and flags only
    _check(lambda x: fl(2, jg.empty_like, x), count=1, values=False, fallback=False)


@pytest.mark.parametrize("requires_grad", [(), (0,), (1,), (0, 1)])
def test_body_results_from_outside_and_detached_carries(requires_grad):
    # an outer value as a result; a detached carry swapped with another (the detached one is
    # the carry, not the outer array it started from)
    _check(lambda x, y: fl(3, lambda s: (y, s[1].detach(), s[0] * 2.0, jg.zeros_like(s[0])),
                           (x, x * 0.5, y, x)),
           requires_grad, fallback=False)


# --- 2. a body op result the body drops (divmod's remainder): an empty fused run
@pytest.mark.parametrize("pick", [0, 1])
@pytest.mark.parametrize("requires_grad", [(), (0,), (0, 1)])
def test_body_drops_an_op_result(pick, requires_grad):
    _check(lambda x, y: fl(2, lambda c: divmod(c, y)[pick] * 1.5 + c * 0.25, x),
           requires_grad, fallback=False)


# --- 3. a float where-condition: not differentiable in eager unless the carry requires grad
def test_where_float_condition():
    _check(lambda x, y: fl(2, lambda c: jg.where(c, y, c), x), fallback=False)


@pytest.mark.parametrize("requires_grad", [(0,), (1,), (0, 1)])
def test_where_float_condition_requiring_grad(requires_grad):
    # the condition requires grad from step 0 or 1 on: eager's backward of it does what it
    # does; compiled agrees, forward and backward (running eagerly where the body's backward
    # cannot be traced)
    _check(lambda x, y: fl(2, lambda c: jg.where(c, y, c), x), requires_grad)


@pytest.mark.parametrize("requires_grad", [(0,), (1,), (0, 1)])
def test_where_bool_condition(requires_grad):
    _check(lambda x, y: fl(3, lambda c: jg.where(c > 0.6, y * c, c * 0.5), x), requires_grad,
           fallback=False)


# --- 4. in-place writes in a body: eager with a warning (as outside a loop)
_WRITES = {
    "put": lambda c, v: jnp.put(c, jg.tensor([2, 0]), v[:2]),
    "place": lambda c, v: jnp.place(c, jg.tensor([True, False, True]), v[:2]),
    "putmask": lambda c, v: jnp.putmask(c, jg.tensor([False, True, True]), v),
    "setitem": lambda c, v: c.__setitem__(1, v[0]),
    "add_": lambda c, v: c.add_(v),
}


@pytest.mark.parametrize("name", list(_WRITES))
def test_in_place_write_in_body_falls_back(name):
    write = _WRITES[name]

    def f(x, y):
        def body(c):
            c = c * 1.0  # a carry of the loop's own (eager writes the caller's x otherwise)
            write(c, y)
            return c
        return fl(2, body, x)

    _check(f, fallback=True)


@pytest.mark.parametrize("name", list(_WRITES))
@pytest.mark.parametrize("requires_grad", [(), (0,)])
def test_in_place_write_of_the_carry(name, requires_grad):
    # the body writes the carry it is given (at step 0 the caller's tensor, as eager)
    write = _WRITES[name]
    _check(lambda x, y: fl(2, lambda c: (write(c, y), c)[1], x), requires_grad)


# --- 5. arguments without a derivative: eager raises only where they require grad
_NO_DERIVATIVE = {
    "gammainc": lambda c, y: sp.gammainc(c, y),
    "gammaincc": lambda c, y: sp.gammaincc(c, y),
    "betainc": lambda c, y: sp.betainc(c, y, y * 0.3),
    "jv": lambda c, y: sp.jv(c, y),
    "stdtr": lambda c, y: sp.stdtr(c, y),
    "poisson.pmf": lambda c, y: st.poisson.pmf(c, y),
    "poisson.cdf": lambda c, y: st.poisson.cdf(c, y),
}


@pytest.mark.parametrize("name", list(_NO_DERIVATIVE))
@pytest.mark.parametrize("requires_grad", [(), (0,), (1,)])
def test_argument_without_derivative(name, requires_grad):
    fn = _NO_DERIVATIVE[name]
    _check(lambda x, y: fl(2, lambda c: fn(c, y), x), requires_grad)
    _check(lambda x, y: fl(2, lambda c: fn(y, c), x), requires_grad)


@pytest.mark.parametrize("n", [1, 2])
def test_carry_requiring_grad_from_the_second_step(n):
    # ``a`` does not require grad at step 0 and does from step 1: eager raises at step 1 only
    def f(x, y):
        return fl(n, lambda s: (s[0] + s[1], sp.gammainc(s[0], y) * s[1]), (x, y))
    _check(f, (1,))


# --- 6. requires_grad and grad_fn of the results: eager's, per result
@pytest.mark.parametrize("requires_grad", [(), (0,), (1,), (0, 1)])
def test_results_require_grad_as_eager(requires_grad):
    _check(lambda x, y: fl(3, lambda c: jg.sin(c) * y + 0.1, x), requires_grad,
           fallback=False)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("requires_grad", [(), (0,), (1,), (0, 1)])
def test_carries_requiring_grad_as_eager(n, requires_grad):
    # swapped carries (flags alternate), a velocity at rest (flags spread after one step),
    # a carry computed from nothing requiring grad, an integer counter
    _check(lambda x, y: fl(n, lambda s: (s[1] * 1.0, s[0] * 1.0), (x, y)), requires_grad,
           fallback=False)
    _check(lambda x, y: fl(n, lambda s: (s[1], s[0]), (x, y)), requires_grad, fallback=False)
    _check(lambda x, y: fl(n, lambda s: (s[0] + 0.1 * s[1], s[1] - 0.1 * jg.sin(s[0])),
                           (x, jg.zeros_like(x))), requires_grad, fallback=False)
    _check(lambda x, y: fl(n, lambda s: (s[0] * y, s[1] * 0.5 + 1.0, s[2] + 1),
                           (x, y.detach() * 2.0, jg.zeros(3, dtype=jg.int64))),
           requires_grad, fallback=False)


def test_closure_requiring_grad_with_a_constant_carry():
    w = jg.tensor([0.2, -0.4, 0.9], requires_grad=True)
    f = lambda x: fl(3, lambda c: jg.tanh(c * w) + 0.5, x)  # noqa: E731
    cf = jg.compile(f)
    for k in range(2):
        x = jg.tensor(X[k])
        got, want = cf(x), f(x)
        assert got.requires_grad and want.requires_grad
        assert_close(got.detach(), want.detach(), rtol=1e-12, atol=1e-12)
        assert_close(jg.autograd.grad((got * got).sum(), [w])[0],
                     jg.autograd.grad((want * want).sum(), [w])[0], rtol=1e-12, atol=1e-12)
    assert cf.stats()["cached"] == 1 and not cf.stats()["fallbacks"]


def test_no_grad_mode():
    f = lambda x: fl(2, lambda c: c * 2.0 + 1.0, x)  # noqa: E731
    cf = jg.compile(f)
    for k in range(2):
        x = jg.tensor(X[k], requires_grad=True)
        with jg.no_grad():
            got, want = cf(x), f(x)
        assert not got.requires_grad and got.grad_fn is None and not want.requires_grad
        assert_close(got, want, rtol=1e-12)


# --- what a loop direction reads that it does not make
@pytest.mark.parametrize("requires_grad", [(), (0,), (1,), (0, 1)])
def test_backward_reads_a_constant_of_its_rules(requires_grad):
    # floor's gradient is a constant its rule makes inside the body's backward
    _check(lambda x, y: fl(4, lambda s: (jg.floor(s[0] * 3.0) * s[1] + s[0] * 0.5, s[1] * 0.9),
                           (x, y)), requires_grad, fallback=False)


@pytest.mark.parametrize("requires_grad", [(), (0,), (1,), (0, 1)])
def test_body_without_generated_code(requires_grad):
    # matmul: the body runs as a Python loop over its steps, with a constant result
    w = jg.tensor(np.arange(9.0).reshape(3, 3) / 10)
    _check(lambda x, y: fl(3, lambda s: (jg.tanh(jg.matmul(w, s[0])) + s[1], jg.zeros_like(s[1])),
                           (x, y)), requires_grad, fallback=False)


@pytest.mark.parametrize("requires_grad", [(), (0,), (1,), (0, 1)])
def test_nested_loops(requires_grad):
    # the outer body's backward walks the inner loop's tape: the inner loop is recomputed
    _check(lambda x, y: fl(2, lambda c: fl(3, lambda d: jg.sin(d) * y + c * 0.1, c), x),
           requires_grad, fallback=False)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 100])
@pytest.mark.parametrize("requires_grad", [(0,), (1,)])
def test_rotating_carries(n, requires_grad):
    # three carries rotating, one of them scaled: flags and gradients are periodic in n
    _check(lambda x, y: fl(n, lambda s: (s[1] * y, s[2] * 1.0, s[0] + 0.0),
                           (x, x.detach() * 0.0, x.detach() * 0.0 + 1.0)),
           requires_grad, fallback=False)
