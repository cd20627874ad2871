"""Eval-mode ``BatchNorm`` under ``jitgrad.compile``: the running statistics are module buffers
(closures of the compiled function), so they are implicit inputs of the program, read at each
call: a model compiles without a fallback, and a change of the running stats between calls
(another training step, an in-place edit) shows in the next compiled call without a retrace."""
import warnings

import numpy as np

import jitgrad
from jitgrad import nn
from jitgrad.testing import assert_close


def _train_steps(model, rng, n=2, shape=(8, 4)):
    model.train()
    with jitgrad.no_grad():
        for _ in range(n):
            model(jitgrad.tensor(rng.standard_normal(shape) * 2.0 + 0.5))
    model.eval()


def test_batchnorm1d_eval_compiles_and_sees_new_running_stats():
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3),
                          nn.BatchNorm1d(3, affine=False))
    model.double()
    _train_steps(model, rng)
    cf = jitgrad.compile(model)
    x = jitgrad.tensor(rng.standard_normal((5, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback warns
        assert_close(cf(x), model(x), rtol=1e-12, atol=1e-14)
        before = cf(x).numpy()
        _train_steps(model, rng)  # new running stats: the program must read them
        got = cf(x)
    assert not np.allclose(got.numpy(), before)
    assert_close(got, model(x), rtol=1e-12, atol=1e-14)
    stats = cf.stats()
    assert stats["traces"] == 1 and not stats["fallbacks"], stats


def test_batchnorm2d_eval_gradient_follows_an_in_place_edit_of_the_stats():
    rng = np.random.default_rng(1)
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3))
    model.double()
    _train_steps(model, rng, shape=(4, 2, 6, 6))

    def loss(x):
        return (model(x) ** 2).sum()

    cf = jitgrad.compile(jitgrad.func.value_and_grad(loss))
    eager = jitgrad.func.value_and_grad(loss)
    x = jitgrad.tensor(rng.standard_normal((2, 2, 5, 5)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scale in (1.0, 4.0):
            with jitgrad.no_grad():
                model[1].running_var.mul_(scale)
                model[1].running_mean.add_(0.25)
            value, grad = cf(x)
            ev, eg = eager(x)
            assert_close(value, ev, rtol=1e-12, atol=1e-12)
            assert_close(grad, eg, rtol=1e-12, atol=1e-12)
    stats = cf.stats()
    assert stats["traces"] == 1 and not stats["fallbacks"], stats


def test_batchnorm_eval_float32_matches_eager():
    rng = np.random.default_rng(2)
    bn = nn.BatchNorm1d(5)
    _train_steps(bn, rng, shape=(16, 5))
    cf = jitgrad.compile(bn)
    x = jitgrad.tensor(rng.standard_normal((7, 5)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cf(x)
    assert got.dtype == jitgrad.float32
    assert_close(got, bn(x), rtol=2e-6, atol=1e-6)
