"""Fixtures shared by the engine tests."""
import pytest

import jitgrad as jg
from jitgrad.engine import engine


@pytest.fixture(params=["alone", "threaded", "deterministic"])
def mode(request, monkeypatch):
    """Run a test three ways: the caller alone (one inter-op thread), with every node handed to
    the worker threads (hand-off thresholds at 0, two inter-op threads), and in deterministic
    mode. Yields the mode's name."""
    old_threads = jg.get_num_interop_threads()
    if request.param == "threaded":
        monkeypatch.setattr(engine, "HANDOFF_MIN_ELEMENTS", 0)
        monkeypatch.setattr(engine, "HANDOFF_MIN_SECONDS", 0.0)
        monkeypatch.setattr(engine, "HANDOFF_WARMUP_NODES", 0)
        jg.set_num_interop_threads(2)
    else:
        jg.set_num_interop_threads(1)
    jg.use_deterministic_algorithms(request.param == "deterministic")
    yield request.param
    jg.use_deterministic_algorithms(False)
    jg.set_num_interop_threads(old_threads)
