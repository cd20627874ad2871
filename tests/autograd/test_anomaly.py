"""Anomaly mode: NaN in a backward output raises, naming the node and the forward traceback."""
import inspect
import warnings

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.engine
from jitgrad.autograd import detect_anomaly, is_anomaly_enabled, set_detect_anomaly


def _engine_has_hook() -> bool:
    """Whether the engine calls anomaly.check_backward_outputs after each node (the line the
    lead adds to the engine); nodes created outside anomaly mode are only checked then."""
    import pkgutil

    for info in pkgutil.iter_modules(jitgrad.engine.__path__):
        mod = __import__(f"jitgrad.engine.{info.name}", fromlist=["_"])
        if "check_backward_outputs" in inspect.getsource(mod):
            return True
    return False


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield
    set_detect_anomaly(False)


def _sqrt_at_zero():
    x = jg.tensor([0.0, 4.0], dtype=jg.float64, requires_grad=True)
    y = jg.sqrt(x)  # the forward call the error must point at
    return x, (y * 0.0).sum()  # d/dx = 0 * 1/(2 sqrt(0)) = nan at x = 0


def test_nan_from_sqrt_at_zero_names_node_and_forward_traceback():
    with detect_anomaly():
        x, loss = _sqrt_at_zero()
        with pytest.raises(RuntimeError) as info:
            loss.backward()
    msg = str(info.value)
    assert "Function 'SqrtBackward0' returned nan values in its 0th output." in msg
    assert "y = jg.sqrt(x)" in msg and "_sqrt_at_zero" in msg  # the user's forward line
    assert x.grad is None


def test_without_anomaly_mode_nan_passes_silently_as_pytorch():
    x, loss = _sqrt_at_zero()
    loss.backward()
    assert np.isnan(x.grad._data[0]) and x.grad._data[1] == 0.0


def test_check_nan_false_and_check_inf():
    with detect_anomaly(check_nan=False):
        x, loss = _sqrt_at_zero()
        loss.backward()
    x = jg.tensor([0.0], dtype=jg.float64, requires_grad=True)
    with detect_anomaly():  # inf is not an anomaly by default (PyTorch checks nan only)
        jg.sqrt(x).sum().backward()
    assert np.isinf(x.grad._data[0])
    x.grad = None
    with detect_anomaly(check_inf=True):
        with pytest.raises(RuntimeError, match="returned inf values"):
            jg.sqrt(x).sum().backward()


def test_forward_traceback_recorded_and_warned_on_errors():
    with detect_anomaly():
        x = jg.tensor([1.0], dtype=jg.float64, requires_grad=True)
        y = x.exp()
        assert "x.exp()" in y.grad_fn.metadata["traceback_"]
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            z = jg.sqrt(x - 1.0)
            with pytest.raises(RuntimeError):
                (z * 0.0).sum().backward()
    assert any("Traceback of forward call" in str(w.message) for w in rec)


def test_set_detect_anomaly_and_decorator():
    set_detect_anomaly(True)
    assert is_anomaly_enabled()
    set_detect_anomaly(False)
    assert not is_anomaly_enabled()
    with set_detect_anomaly(True):
        assert is_anomaly_enabled()
    assert not is_anomaly_enabled()

    @detect_anomaly()
    def run():
        x, loss = _sqrt_at_zero()
        loss.backward()

    with pytest.raises(RuntimeError, match="SqrtBackward0"):
        run()


def test_backward_outside_forward_anomaly_needs_engine_hook():
    if not _engine_has_hook():
        pytest.skip("the engine does not call anomaly.check_backward_outputs yet: nodes made "
                    "before anomaly mode was enabled are not checked (see docs/func.md)")
    x, loss = _sqrt_at_zero()
    with detect_anomaly():
        with pytest.raises(RuntimeError, match="SqrtBackward0"):
            loss.backward()
