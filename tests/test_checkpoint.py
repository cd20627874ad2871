"""jitgrad.utils.checkpoint: identical gradients, lower peak memory (measured)."""
import tracemalloc

import numpy as np
import pytest

import jitgrad as jg
from jitgrad.kernels.cpu import pool
from jitgrad.utils import checkpoint
from jitgrad.utils.checkpoint import checkpoint_sequential
from jitgrad.testing import assert_close

RNG = np.random.default_rng(0)


def _params(n=4, width=48):
    return [jg.tensor(RNG.standard_normal((width, width)) / width ** 0.5, requires_grad=True)
            for _ in range(n)]


def _block(w):
    def block(h):
        a = (h @ w).tanh()
        return a * a.sin() + h  # saves h, tanh, sin(tanh) for backward
    return block


def _loss(ws, h, use_checkpoint):
    for w in ws:
        h = checkpoint(_block(w), h) if use_checkpoint else _block(w)(h)
    return (h * h).sum()


def test_identical_gradients_backward_and_closures():
    ws = _params()
    h0 = jg.tensor(RNG.standard_normal((8, 48)), requires_grad=True)
    grads = []
    for use in (False, True):
        for t in ws + [h0]:
            t.grad = None
        _loss(ws, h0, use).backward()
        grads.append([t.grad._data.copy() for t in ws + [h0]])
    for a, b in zip(*grads):
        assert_close(a, b, rtol=1e-13, atol=1e-13)


def test_autograd_grad_double_backward_and_module_style_callable():
    w = jg.tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    x = jg.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    f = lambda h: (h @ w).sin()  # noqa: E731
    for run in (lambda h: jg.utils.checkpoint(f, h), lambda h: jg.utils.checkpoint.checkpoint(f, h)):
        gw, gx = jg.autograd.grad(run(x).sum(), [w, x], create_graph=True)
        rw, rx = jg.autograd.grad(f(x).sum(), [w, x], create_graph=True)
        assert_close(gw, rw, rtol=1e-13) and None
        assert_close(gx, rx, rtol=1e-13)
        (g2,) = jg.autograd.grad((gw * gw).sum(), [x])
        (r2,) = jg.autograd.grad((rw * rw).sum(), [x])
        assert_close(g2, r2, rtol=1e-12)


def test_random_state_replayed_and_tuple_outputs():
    x = jg.tensor(RNG.standard_normal(5), requires_grad=True)

    def noisy(h):
        mask = (jg.rand(5, dtype=jg.float64) > 0.5).double()
        return h * mask, h.sum()

    jg.manual_seed(3)
    a, s = checkpoint(noisy, x)
    (a.sum() + s).backward()  # the recomputation must draw the same mask
    jg.manual_seed(3)
    mask = (jg.rand(5, dtype=jg.float64) > 0.5).double()
    assert_close(x.grad, mask._data + 1.0)


def test_checkpoint_sequential():
    ws = _params(6, 8)
    h0 = jg.tensor(RNG.standard_normal((2, 8)), requires_grad=True)
    out = checkpoint_sequential([_block(w) for w in ws], 3, h0)
    out.sum().backward()
    g = [w.grad._data.copy() for w in ws]
    for w in ws:
        w.grad = None
    h = h0
    for w in ws:
        h = _block(w)(h)
    h.sum().backward()
    for a, w in zip(g, ws):
        assert_close(a, w.grad, rtol=1e-13)


def _peak_forward_bytes(use_checkpoint, ws, x):
    tracemalloc.start()
    tracemalloc.reset_peak()
    loss = _loss(ws, x, use_checkpoint)
    _, peak = tracemalloc.get_traced_memory()
    loss.backward()
    _, peak_total = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, peak_total


def test_lower_peak_memory_measured(monkeypatch):
    """Activations of 8 blocks of 64x256 float64 (128 KiB each, three saved per block): without
    checkpointing the forward keeps them all for backward; with it only the block outputs.
    (tracemalloc sees fresh allocations only: the buffer pool, which would hand out cached
    blocks, is off here.)"""
    monkeypatch.setattr(pool.CPU, "enabled", False)
    ws = _params(8, 256)
    x = jg.tensor(RNG.standard_normal((64, 256)), requires_grad=True)
    _peak_forward_bytes(True, ws, x)  # warm caches and kernels first
    _peak_forward_bytes(False, ws, x)
    plain_fwd, plain_all = _peak_forward_bytes(False, ws, x)
    ckpt_fwd, ckpt_all = _peak_forward_bytes(True, ws, x)
    print(f"peak after forward: plain {plain_fwd / 2**20:.2f} MiB, checkpoint "
          f"{ckpt_fwd / 2**20:.2f} MiB; forward+backward: {plain_all / 2**20:.2f} vs "
          f"{ckpt_all / 2**20:.2f} MiB")
    assert ckpt_fwd < 0.5 * plain_fwd
    assert ckpt_all < plain_all


def test_no_grad_and_context_fn():
    with jg.no_grad():
        out = checkpoint(lambda h: h * 2, jg.tensor([1.0]))
    assert out.grad_fn is None
    with pytest.raises(ValueError, match="context_fn"):
        checkpoint(lambda h: h, jg.tensor([1.0]), context_fn=lambda: None)
