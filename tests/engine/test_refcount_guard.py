"""The guard on gradient-buffer reuse (Note [owned buffers] in jitgrad/graph/node.py).

The engine reuses a gradient's Tensor or array in place where ``sys.getrefcount`` says nobody
else holds it. Only interpreters whose counts are exact may do so (``refcounts_exact``, decided
at import: CPython 3.11 to 3.13 with the GIL, and a probe of the counts); elsewhere
``unshared`` answers False and every gradient is copied. These tests check the decision on
interpreter descriptions, and the fallback path on this interpreter by turning the module flag
off: the gradients stay right and no buffer a backward made is reused.
"""
import sys
import sysconfig
import weakref

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.autograd import Function
from jitgrad.graph import node as graph_node

MADE = []  # weak references to the arrays of the gradients ``Fresh.backward`` made (a weak
# reference is not counted: the engine's decision is the same as without it)


@pytest.fixture(autouse=True)
def _clear():
    MADE.clear()
    yield
    MADE.clear()


@pytest.fixture
def no_reuse(monkeypatch):
    """The fallback: as on an interpreter whose counts are not guaranteed."""
    monkeypatch.setattr(graph_node, "REUSE_BUFFERS", False)


class Fresh(Function):
    """2 x; its backward makes a new gradient and notes its array."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        out = g * 2
        MADE.append(weakref.ref(out._data))
        return out


def leaf(n=5, seed=0):
    return jg.tensor(np.random.default_rng(seed).standard_normal(n), requires_grad=True)


# --- the decision ------------------------------------------------------------------------------
@pytest.mark.parametrize("implementation, version, gil_disabled, exact", [
    ("cpython", (3, 11, 7, "final", 0), False, True),
    ("cpython", (3, 12, 1), False, True),
    ("cpython", (3, 13, 0), False, True),
    ("cpython", (3, 10, 13), False, False),  # counts a call's argument twice: never reuses anyway
    ("cpython", (3, 14, 0), False, False),  # borrowed stack references: may under-count
    ("cpython", (3, 15, 0), False, False),
    ("cpython", (3, 13, 0), True, False),  # free-threaded: deferred, biased counts
    ("pypy", (3, 11, 0), False, False),  # no reference counts at all
    ("graalpy", (3, 11, 0), False, False),
])
def test_refcounts_exact(implementation, version, gil_disabled, exact):
    assert graph_node.refcounts_exact(implementation, version, gil_disabled) is exact


def test_free_threaded_build_is_detected(monkeypatch):
    monkeypatch.setattr(sysconfig, "get_config_var",
                        lambda name: 1 if name == "Py_GIL_DISABLED" else None)
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: True, raising=False)
    assert graph_node._gil_disabled()  # a free-threaded build with its GIL back on: still not
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: None)
    assert not graph_node._gil_disabled()
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    assert graph_node._gil_disabled()
    monkeypatch.delattr(sys, "_is_gil_enabled", raising=False)
    assert not graph_node._gil_disabled()  # before 3.13: no such function, a GIL build


def test_this_interpreter():
    """The flag is the decision for this interpreter and the probe of its counts."""
    exact = graph_node.refcounts_exact(sys.implementation.name, sys.version_info,
                                       graph_node._gil_disabled())
    assert graph_node.REUSE_BUFFERS == (exact and graph_node._counts_hold())
    if exact:
        assert graph_node._counts_hold()


def test_unshared_answers_false_without_the_guarantee(no_reuse):
    t = jg.Tensor._make(np.ones(3))
    held = [t]
    assert not graph_node.unshared(t, 2)
    assert not graph_node.sole_owner(held[0], 1)


@pytest.mark.skipif(not graph_node.REUSE_BUFFERS, reason="no reuse on this interpreter")
def test_unshared_with_the_guarantee():
    t = jg.Tensor._make(np.ones(3))
    held = [t]
    assert graph_node.unshared(t, 2)  # ``held``'s slot and ``t``
    other = t
    assert not graph_node.unshared(t, 2)
    assert held[0] is other


# --- the fallback path: right gradients, no buffer reused ----------------------------------------
@pytest.mark.skipif(not graph_node.REUSE_BUFFERS, reason="no reuse on this interpreter")
def test_reuse_happens_with_the_guarantee():
    """The other half, for contrast: here the backward's own array becomes ``.grad``."""
    x = leaf()
    Fresh.apply(x).sum().backward()
    assert x.grad._data is MADE[0]()


def test_fresh_gradient_is_copied(no_reuse):
    x = leaf()
    Fresh.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2.0)
    assert x.grad._data is not MADE[0]()


def test_two_gradients_are_summed_into_a_new_buffer(no_reuse):
    x = leaf()
    (Fresh.apply(x) + Fresh.apply(x) * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 + 6.0)
    assert all(x.grad._data is not ref() for ref in MADE)


def _chain(x, n=40):
    y = x
    for k in range(n):
        y = jg.tanh(y) * 1.01 if k % 2 else y * 1.0001 + 0.5
    return y.sum()


def _backward_counting_tensors(loss, monkeypatch) -> int:
    """``loss.backward()``; how many Tensors it made."""
    made = []
    make = jg.Tensor._make.__func__

    def counting(cls, *args):
        made.append(1)
        return make(cls, *args)

    with monkeypatch.context() as patch:
        patch.setattr(jg.Tensor, "_make", classmethod(counting))
        loss.backward()
    return len(made)


def test_chain_gradients_are_the_same_without_reuse(monkeypatch):
    """A chain of plain steps (Note [plain step] in engine/engine.py): without reuse each step
    makes a Tensor of its own (none carries the next gradient), and the gradient is bitwise the
    same."""
    reuse = graph_node.REUSE_BUFFERS
    x = leaf(100)
    made_reusing = _backward_counting_tensors(_chain(x), monkeypatch)
    reused = x.grad.numpy().copy()
    x.grad = None
    monkeypatch.setattr(graph_node, "REUSE_BUFFERS", False)
    made_copying = _backward_counting_tensors(_chain(x), monkeypatch)
    np.testing.assert_array_equal(x.grad.numpy(), reused)
    assert made_copying >= 40  # (at least one per step)
    if reuse:
        assert made_copying > made_reusing
