"""The PyTorch-style example programs (examples/pytorch/, issue 35) run with only the import
renamed, and give the values the mathematics says (each was also run under PyTorch 2.13)."""
import importlib.util
import math
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples" / "pytorch"


def _run(name, **kwargs):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(**kwargs)


def test_autograd_tour():
    r = _run("autograd_tour")
    xs = [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert r["grad"] == pytest.approx([2 * x * w for x, w in zip(xs, [1, 2, 3, 4, 5])], abs=1e-15)
    assert r["grad_fn"] == "SumBackward0"
    assert r["second"] == pytest.approx(-math.sin(0.7), abs=1e-15)
    assert r["hooked"] == [6.0, 6.0, 6.0]
    assert r["custom"] == pytest.approx([1.0, math.e, math.e ** 2], rel=1e-15)
    assert r["saved"] and r["saved_grad_ok"]
    assert r["jvp"] == pytest.approx(r["jvp_expect"], abs=1e-14)


def test_func_ensembling():
    r = _run("func_ensembling")
    assert r["per_sample_shape"] == (6, 16, 8) and r["grads_match"]
    assert r["ensemble_shape"] == (4, 5, 3) and r["ensemble_match"]


def test_nn_training():
    r = _run("nn_training", epochs=6)
    assert r["last_loss"] < 0.3 * r["first_loss"]
    assert r["orthogonality"] < 1e-10
    assert r["lr"] == pytest.approx(0.005) and r["batches"] == 13
    assert r["reloaded_match"]


def test_distributions_fit():
    r = _run("distributions_fit")
    alpha, beta = r["alpha_beta"]
    assert abs(alpha - 3.0) < 0.3 and abs(beta - 2.0) < 0.2  # 4000 draws of Gamma(3, 2)
    assert r["score"] < 1e-6                                  # LBFGS reached the maximum
    assert r["q_mean"] == pytest.approx(r["exact_mean"], abs=0.05)
    assert r["q_std"] == pytest.approx(r["exact_std"], abs=0.03)
