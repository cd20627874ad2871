"""The HIPS-autograd example programs ported to jitgrad (examples/hips/) run, at tiny sizes, and
reach the answers they are about."""
import importlib.util
import math
import os

import numpy as np
import pytest

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "hips")


def load(name):
    spec = importlib.util.spec_from_file_location(f"hips_example_{name}",
                                                  os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fixed_points(capsys):
    rows = load("fixed_points").main(a=2.0, tol=1e-8)
    for value, d1, d2 in rows:
        assert value == pytest.approx(math.sqrt(2.0), rel=1e-6)
        assert d1 == pytest.approx(0.5 / math.sqrt(2.0), rel=1e-5)
        assert d2 == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-4)
    assert "d2/da2" in capsys.readouterr().out


def test_neural_net(capsys):
    params, acc = load("neural_net").main(layer_sizes=(2, 8, 3), points_per_class=20,
                                          num_iters=60, batch_size=30, step_size=0.05,
                                          report_every=20)
    assert isinstance(params, list) and all(isinstance(layer, tuple) for layer in params)
    assert params[0][0].shape == (2, 8) and type(params[0][0]) is np.ndarray
    out = capsys.readouterr().out
    losses = [float(line.split("|")[1]) for line in out.splitlines()[1:]]
    assert losses[-1] < losses[0]  # formatted 0-d tensors in the callback's f-string
    assert acc > 0.5


def test_black_box_svi(capsys):
    mean, log_std = load("black_box_svi").main(num_samples=200, num_iters=150, report_every=50)
    # the funnel's mean is 0; the fit moves there from the start at (-1, -1)
    assert np.all(np.abs(np.asarray(mean)) < 0.5)
    assert np.all(np.asarray(log_std) > -3)  # from -5: the variance grew
    bounds = [float(line.split()[-1]) for line in capsys.readouterr().out.splitlines()
              if line.startswith("iteration")]
    assert bounds[-1] > bounds[0]


def test_gaussian_process(capsys):
    params, loglik = load("gaussian_process").main(n_data=12)
    assert params.shape == (4,) and loglik > 0
    out = capsys.readouterr().out
    assert float(out.split("initial log marginal likelihood")[1].split()[0]) < loglik


def test_rnn(capsys):
    losses = load("rnn").main(sequence_length=8, max_lines=8, state_size=8, num_iters=30,
                              report_every=10, show=1)
    assert losses[-1] < losses[0]  # learns something of its own source
    assert "train loss" in capsys.readouterr().out
