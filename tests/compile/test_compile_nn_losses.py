"""``nn.functional`` losses with integer class targets under ``jitgrad.compile``: the targets
are an input of the ``nll_loss`` row (never read on the host), so a compiled
``value_and_grad`` of a logistic regression runs its program for other data and other targets
without retracing, and equals eager and central finite differences."""
import warnings

import numpy as np
import pytest

import jitgrad
import jitgrad.nn.functional as F
from jitgrad.testing import assert_close


def _loss(W, b, X, y):
    return F.cross_entropy(X @ W + b, y)


def _data(rng, n=500, d=10, k=3):
    return (jitgrad.tensor(rng.standard_normal((n, d))),
            jitgrad.tensor(rng.integers(0, k, n)))


def _fd(f, arrays, i, eps=1e-6):
    """Central finite differences of the scalar ``f(*arrays)`` in ``arrays[i]``."""
    a = [x.copy() for x in arrays]
    out = np.zeros_like(a[i])
    for j in np.ndindex(a[i].shape):
        a[i][j] += eps
        hi = f(*a)
        a[i][j] -= 2 * eps
        lo = f(*a)
        a[i][j] += eps
        out[j] = (hi - lo) / (2 * eps)
    return out


def test_logistic_regression_compiles_without_fallback_or_retrace():
    rng = np.random.default_rng(0)
    W = jitgrad.tensor(rng.standard_normal((10, 3)) * 0.3)
    b = jitgrad.tensor(rng.standard_normal(3) * 0.1)
    cf = jitgrad.compile(jitgrad.func.value_and_grad(_loss, argnums=(0, 1)))
    eager = jitgrad.func.value_and_grad(_loss, argnums=(0, 1))
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warns
        for _ in range(2):
            X, y = _data(rng)
            seen.append(y.numpy())
            value, (gW, gb) = cf(W, b, X, y)
            ev, (eW, eb) = eager(W, b, X, y)
            assert_close(value, ev, rtol=1e-12, atol=1e-14)
            assert_close(gW, eW, rtol=1e-12, atol=1e-14)
            assert_close(gb, eb, rtol=1e-12, atol=1e-14)

            def f(Wa, ba):
                return _loss(jitgrad.tensor(Wa), jitgrad.tensor(ba), X, y).item()
            arrays = [W.numpy(), b.numpy()]
            np.testing.assert_allclose(gW.numpy(), _fd(f, arrays, 0), rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(gb.numpy(), _fd(f, arrays, 1), rtol=1e-6, atol=1e-8)
    assert not np.array_equal(*seen)  # other targets: the program ran again, no retrace
    stats = cf.stats()
    assert stats["fallbacks"] == [] and stats["traces"] == 1 and stats["cached"] == 1, stats


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", [{}, {"weight": True}, {"ignore": True},
                                     {"weight": True, "ignore": True, "label_smoothing": 0.2},
                                     {"label_smoothing": 0.1}])
def test_cross_entropy_options_compiled_equal_eager(reduction, options):
    rng = np.random.default_rng(1)
    weight = jitgrad.tensor([0.5, 1.0, 2.0]) if options.get("weight") else None
    smoothing = options.get("label_smoothing", 0.0)

    def loss(x, y):
        out = F.cross_entropy(x, y, weight=weight, reduction=reduction,
                              label_smoothing=smoothing)
        return out.sum() if reduction == "none" else out
    cf = jitgrad.compile(jitgrad.func.value_and_grad(loss))
    eager = jitgrad.func.value_and_grad(loss)
    for _ in range(2):
        x = jitgrad.tensor(rng.standard_normal((6, 3)))
        y = rng.integers(0, 3, 6)
        if options.get("ignore"):
            y[rng.integers(0, 6, 2)] = -100
        y = jitgrad.tensor(y)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            value, g = cf(x, y)
        ev, eg = eager(x, y)
        assert_close(value, ev, rtol=1e-12, atol=1e-14)
        assert_close(g, eg, rtol=1e-12, atol=1e-14)
    stats = cf.stats()
    assert stats["fallbacks"] == [] and stats["traces"] == 1, stats


def test_compiled_nll_loss_checks_targets_at_each_call():
    """The range check is made by the row's forward: a compiled program makes it too."""
    cf = jitgrad.compile(lambda x, y: F.nll_loss(x, y))
    x = jitgrad.tensor(np.log(np.full((3, 4), 0.25)))
    cf(x, jitgrad.tensor([0, 1, 3]))
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        cf(x, jitgrad.tensor([0, 4, 3]))


@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
def test_margin_losses_read_targets_as_inputs(name):
    """The class-margin losses pick with a one-hot of the targets (ops): other targets run the
    same program (no retrace), an out-of-range target raises at the compiled call too."""
    rng = np.random.default_rng(3)
    fn = getattr(F, name)
    cf = jitgrad.compile(jitgrad.func.value_and_grad(fn))
    eager = jitgrad.func.value_and_grad(fn)
    x = jitgrad.tensor(rng.standard_normal((4, 5)))

    def targets():
        if name == "multi_margin_loss":
            return rng.integers(0, 5, 4)
        t = rng.integers(0, 5, (4, 5))
        t[np.arange(4), rng.integers(0, 5, 4)] = -1  # the list ends at the first -1
        return t
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            t = jitgrad.tensor(targets())
            value, grad = cf(x, t)
            ev, eg = eager(x, t)
            assert_close(value, ev, rtol=1e-12, atol=1e-14)
            assert_close(grad, eg, rtol=1e-12, atol=1e-14)
    assert cf.stats()["traces"] == 1, cf.stats()
    bad = targets()
    bad.reshape(-1)[0] = 7  # (the first entry is always read)
    bad = jitgrad.tensor(bad)
    with pytest.raises(RuntimeError, match="out of range"):
        cf(x, bad)
    with pytest.raises(IndexError, match="out of range"):
        fn(x, bad)
