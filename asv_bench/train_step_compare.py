"""W11: one training step (forward, backward, Adam update) of W4's MLP (784-512-512-10, ReLU,
cross-entropy, batch 256), side by side: jitgrad eager, ``jitgrad.compile`` of the whole step
(Note [functionalised writes] in jitgrad/compile/mutations.py), PyTorch eager and JAX ``jit``
with a hand-written Adam (each skipped when not installed). The runs are interleaved, so
machine noise hits every contestant alike; the table gives each one's median.

    python asv_bench/train_step_compare.py [--dtype float64|float32] [--rounds 30]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

LAYERS = (784, 512, 512, 10)
BATCH, LR = 256, 1e-3


def _init(dtype):
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(LAYERS[:-1], LAYERS[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(dtype))
        params.append(rng.uniform(-bound, bound, fan_out).astype(dtype))
    x = rng.standard_normal((BATCH, LAYERS[0])).astype(dtype)
    y = rng.integers(0, LAYERS[-1], BATCH)
    return params, x, y


def _jitgrad(dtype, compiled):
    import jitgrad as jg
    import jitgrad.nn as nn
    import jitgrad.nn.functional as F

    params, x, y = _init(dtype)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    if dtype == "float32":
        model = model.float()
    with jg.no_grad():
        for p, a in zip(model.parameters(), params):
            p.copy_(jg.tensor(a))
    opt = jg.optim.Adam(model.parameters(), lr=LR)

    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    step = jg.compile(train_step, fullgraph=True) if compiled else train_step
    X, Y = jg.tensor(x), jg.tensor(y)
    return lambda: step(X, Y).detach().item()


def _torch(dtype):
    import torch

    params, x, y = _init(dtype)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).to(getattr(torch, dtype))
    with torch.no_grad():
        for p, a in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(a))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    X, Y = torch.from_numpy(x), torch.from_numpy(y)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(X), Y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def _jax(dtype):
    import jax

    if dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    params, x, y = _init(dtype)
    params = [jnp.asarray(p) for p in params]
    b1, b2, eps = 0.9, 0.999, 1e-8

    def loss_fn(ps, x, y):
        h = x
        for i in range(0, len(ps) - 2, 2):
            h = jax.nn.relu(h @ ps[i].T + ps[i + 1])
        logits = h @ ps[-2].T + ps[-1]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(x.shape[0]), y])

    @jax.jit
    def step(ps, m, v, t, x, y):  # hand-written Adam (PyTorch's update)
        loss, gs = jax.value_and_grad(loss_fn)(ps, x, y)
        t = t + 1
        m = [b1 * mi + (1 - b1) * g for mi, g in zip(m, gs)]
        v = [b2 * vi + (1 - b2) * g * g for vi, g in zip(v, gs)]
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        ps = [p - LR / bc1 * mi / (jnp.sqrt(vi / bc2) + eps) for p, mi, vi in zip(ps, m, v)]
        return loss, ps, m, v, t

    state = [params, [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params],
             jnp.asarray(0.0, dtype)]
    X, Y = jnp.asarray(x), jnp.asarray(y)

    def run():
        loss, *rest = step(*state, X, Y)
        state[:] = rest
        return float(loss)
    return run


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    makers = {"jitgrad eager": lambda: _jitgrad(args.dtype, False),
              "jitgrad compile": lambda: _jitgrad(args.dtype, True),
              "torch eager": lambda: _torch(args.dtype), "jax jit": lambda: _jax(args.dtype)}
    steps, first = {}, {}
    for name, make in makers.items():
        try:
            fn = make()
        except ImportError as exc:
            print(f"{name}: skipped ({exc})")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a compile fallback must not pass unnoticed
            start = time.perf_counter()
            fn()  # first call: traces / compiles
            first[name] = time.perf_counter() - start
            for _ in range(3):
                fn()
        steps[name] = fn
    times = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, fn in steps.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    print(f"W11: MLP 784-512-512-10 + Adam, batch {BATCH}, {args.dtype}, "
          f"median of {args.rounds} interleaved steps")
    base = np.median(times.get("jitgrad eager", [np.nan]))
    print(f"{'':18s} {'ms/step':>9s} {'vs jitgrad eager':>17s} {'first call (s)':>15s}")
    for name, ts in times.items():
        med = np.median(ts) * 1e3
        print(f"{name:18s} {med:9.2f} {base * 1e3 / med:16.2f}x {first[name]:15.2f}")


if __name__ == "__main__":
    main()
