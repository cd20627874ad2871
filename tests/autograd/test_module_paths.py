"""The graph primitives moved to ``jitgrad.graph``; their old paths under ``jitgrad.autograd``
(PyTorch's ``torch.autograd.grad_mode`` spelling) still import the same modules, and
``jitgrad.device`` is PyTorch's device constructor."""
import importlib

import pytest

import jitgrad


@pytest.mark.parametrize("name", ["anomaly", "grad_mode", "node", "version"])
def test_old_autograd_paths_are_the_graph_modules(name):
    old = importlib.import_module(f"jitgrad.autograd.{name}")
    assert old is importlib.import_module(f"jitgrad.graph.{name}")
    assert getattr(jitgrad.autograd, name) is old


def test_from_import_of_an_old_path():
    from jitgrad.autograd.grad_mode import no_grad

    x = jitgrad.tensor([1.0], requires_grad=True)
    with no_grad():
        assert not (x * 2).requires_grad


def test_device_is_the_constructor():
    d = jitgrad.device("cuda", 1)
    assert repr(d) == "device(type='cuda', index=1)" and d.type == "cuda" and d.index == 1
    assert jitgrad.device("cpu") == "cpu" and isinstance(jitgrad.tensor([1.0]).device, jitgrad.device)
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        jitgrad.device("tpu")
