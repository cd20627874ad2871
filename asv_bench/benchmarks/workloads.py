"""The benchmark workloads W1-W15, defined once and run through any framework.

Used by the asv suite (``bench_*.py`` in this directory, jitgrad only) and by
``asv_bench/compare.py`` (jitgrad side by side with NumPy, PyTorch, HIPS autograd and JAX).

A workload is a function ``fn(B, params, consts) -> scalar`` written against a small op namespace
``B`` (a *backend*): ``B.sin``, ``B.exp``, ``B.tanh``, ``B.log``, ``B.cosh``, ``B.cos``, ``B.relu``,
``B.matmul``, ``B.sum(x)``, ``B.max(x, axis)``, ``B.mean(x, axis)``, ``B.log_softmax(x, axis)``,
``B.cat(list)``, ``B.loop(n, body, carry)``, plus the array operators (``+ - * ** [i:j]``).
``params`` are the inputs the gradient is taken with respect to, ``consts`` the other inputs; both
are tuples of the framework's arrays, made from the same NumPy arrays (``Workload.make``) for every
framework.

Each backend's ``prepare(workload, size, dtype, mode)`` returns a zero-argument callable that runs
the workload once and returns ``(loss, grads)`` with the work finished (JAX: ``block_until_ready``):

* ``jitgrad`` and ``torch``: tensors with ``requires_grad=True``; clear ``.grad``, run,
  ``backward()``.
* ``autograd`` (HIPS): ``autograd.value_and_grad`` of the function of the ``params`` tuple.
* ``jax``: ``jax.jit(jax.value_and_grad(...))`` (float64 needs ``jax_enable_x64``: set when the
  backend is made).
* ``numpy``: forward only (the floor: no graph, no gradient).

``mode="fwd"`` runs the forward alone (``no_grad`` for jitgrad/torch, a jitted forward for JAX).

This module imports only NumPy at import time (each backend imports its framework when built) and
defines nothing that asv would take for a benchmark.
"""
from __future__ import annotations

import dataclasses
import os
import sys
from typing import Callable

import numpy as np

try:  # asv imports this file as ``benchmarks.workloads``; compare.py as ``workloads``
    from .backends import (BACKENDS, AutogradBackend, JaxBackend, JitgradBackend,
                           JitgradCompileBackend, NumpyBackend, TorchBackend, Unavailable,
                           make_backend, make_inputs, numpy_blas)
except ImportError:
    from backends import (BACKENDS, AutogradBackend, JaxBackend, JitgradBackend,  # noqa: F401
                          JitgradCompileBackend, NumpyBackend, TorchBackend, Unavailable,
                          make_backend, make_inputs, numpy_blas)

DTYPES = ("float32", "float64")
FRAMEWORKS = ("jitgrad", "jitgrad-compile", "torch", "autograd", "jax", "numpy")

# ---------------------------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Workload:
    key: str                      # "W2"
    title: str                    # one line for tables
    fn: Callable                  # fn(B, params, consts) -> scalar
    make: Callable                # make(rng, size, np_dtype) -> (params, consts): lists of ndarrays
    size: int | None              # the size compare.py runs (the size)
    sizes: tuple = ()             # sizes the asv suite sweeps (default: (size,))
    size_name: str = "n"
    # Roofline models (None: overhead-bound, no model). See docs/benchmarks.md.
    flops: Callable | None = None            # flops(size) -> float, fwd+bwd
    passes: float | None = None              # op-by-op memory passes over `elements(size)` items
    elements: Callable | None = None         # elements(size) -> number of items per pass
    min_passes: float | None = None          # compulsory passes: read inputs once, write grads once
    peakmem: bool = False                    # asv gets a peakmem_ benchmark

    def asv_sizes(self):
        return self.sizes or (self.size,)


def _rand(rng, shape, dtype, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(dtype)


# W1 ------------------------------------------------------------------------------------------
def w1(B, p, c):
    (x,) = p
    return ((x * 3) + 4) ** 2


def _make_w1(rng, size, dtype):
    return [np.array(2.0, dtype=dtype)], []


# W2 ------------------------------------------------------------------------------------------
def w2(B, p, c):
    (x,) = p
    return B.sum(B.tanh(B.sin(x) * B.exp(-x * x) + 0.5 * x))


def _make_w2(rng, n, dtype):
    return [_rand(rng, n, dtype)], []


# W3 ------------------------------------------------------------------------------------------
def w3(B, p, c):
    A, b = p
    return B.sum((A * b + b) ** 2)


def _make_w3(rng, n, dtype):
    return [_rand(rng, (n, n), dtype), _rand(rng, n, dtype)], []


# W4 ------------------------------------------------------------------------------------------
MLP_LAYERS = (784, 512, 512, 10)


def w4(B, p, c):
    """MLP 784-512-512-10, ReLU, softmax cross-entropy (mean over the batch, one-hot targets)."""
    W1, b1, W2, b2, W3, b3 = p
    X, Y = c
    h = B.relu(B.matmul(X, W1) + b1)
    h = B.relu(B.matmul(h, W2) + b2)
    logits = B.matmul(h, W3) + b3
    return -B.sum(B.log_softmax(logits, 1) * Y) * (1.0 / X.shape[0])


def _make_w4(rng, batch, dtype):
    params = []
    for fan_in, fan_out in zip(MLP_LAYERS[:-1], MLP_LAYERS[1:]):
        params.append(_rand(rng, (fan_in, fan_out), dtype, scale=np.sqrt(2.0 / fan_in)))
        params.append(np.zeros(fan_out, dtype=dtype))
    X = _rand(rng, (batch, MLP_LAYERS[0]), dtype)
    Y = np.eye(MLP_LAYERS[-1], dtype=dtype)[rng.integers(0, MLP_LAYERS[-1], batch)]
    return params, [X, Y]


def _w4_flops(batch):
    """Matmul flops: forward 2*B*in*out per layer; backward dW for every layer and dX for all
    but the first (X needs no gradient). Elementwise work is ignored (<1%)."""
    layers = list(zip(MLP_LAYERS[:-1], MLP_LAYERS[1:]))
    fwd = sum(2 * batch * i * o for i, o in layers)
    bwd = sum(2 * batch * i * o for i, o in layers) + sum(2 * batch * i * o for i, o in layers[1:])
    return float(fwd + bwd)


# W5 ------------------------------------------------------------------------------------------
W5_BRANCHES = 16


def w5_wide(B, p, c):
    """16 independent branches (one input each) of 10 elementwise ops, each summed, added."""
    total = None
    for x in p:
        y = B.sin(x)
        y = y * 1.5
        y = y + 0.25
        y = B.tanh(y)
        y = y * y
        y = B.exp(-y)
        y = y + x
        y = B.cos(y)
        y = y * 0.5
        s = B.sum(y)
        total = s if total is None else total + s
    return total


def _make_w5_wide(rng, n, dtype):
    return [_rand(rng, n, dtype) for _ in range(W5_BRANCHES)], []


def w5_heavy(B, p, c):
    (x,) = p
    return B.sum(B.exp(B.sin(x))) + B.sum(B.log(B.cosh(x)))


def _make_w5_heavy(rng, n, dtype):
    return [_rand(rng, n, dtype)], []


# W6 ------------------------------------------------------------------------------------------
SPRING_STEPS = 100
SPRING_K = 1.0      # spring constant (unit masses)
SPRING_L = 1.0      # rest length
SPRING_DT = 0.01    # explicit Euler step; stable enough for 100 steps with omega_max = 2


def _spring_extensions(B, x, walls):
    left, right = walls
    xp = B.cat([left, x, right])          # the chain is held by two fixed walls
    return xp[1:] - xp[:-1] - SPRING_L    # N + 1 spring extensions


def w6(B, p, c):
    """N unit masses on a line joined by springs between two walls; SPRING_STEPS explicit Euler
    steps from rest; the final energy (kinetic + elastic) as a function of the initial positions."""
    (x,) = p
    v, left, right = c

    def euler_step(state):
        x, v = state
        d = _spring_extensions(B, x, (left, right))
        force = (d[1:] - d[:-1]) * SPRING_K
        return x + v * SPRING_DT, v + force * SPRING_DT

    x, v = B.loop(SPRING_STEPS, euler_step, (x, v))
    d = _spring_extensions(B, x, (left, right))
    return 0.5 * B.sum(v * v) + (0.5 * SPRING_K) * B.sum(d * d)


def _make_w6(rng, n, dtype):
    x0 = (np.arange(1, n + 1) * SPRING_L + 0.1 * rng.standard_normal(n)).astype(dtype)
    v0 = np.zeros(n, dtype=dtype)
    left = np.array([0.0], dtype=dtype)
    right = np.array([(n + 1) * SPRING_L], dtype=dtype)
    return [x0], [v0, left, right]


# W7 ------------------------------------------------------------------------------------------
W7_OPS = 1000


_W7_CYCLE = (lambda B, x: x * 1.0001, lambda B, x: x + 0.001, lambda B, x: B.tanh(x))


def w7(B, p, c):
    """W7_OPS sequential small ops on one vector: x * 1.0001, x + 0.001, tanh(x), repeated."""
    (x,) = p

    def three_ops(x):
        for op in _W7_CYCLE:
            x = op(B, x)
        return x

    x = B.loop(W7_OPS // len(_W7_CYCLE), three_ops, x)
    for op in _W7_CYCLE[:W7_OPS % len(_W7_CYCLE)]:
        x = op(B, x)
    return B.sum(x)


def _make_w7(rng, n, dtype):
    return [_rand(rng, n, dtype)], []


# W8 ------------------------------------------------------------------------------------------
def w8(B, p, c):
    (x,) = p
    return B.sum(B.max(x, 1)) + B.sum(B.mean(x, 0) ** 2)


def _make_w8(rng, n, dtype):
    return [_rand(rng, (n, n), dtype)], []


# W9 ------------------------------------------------------------------------------------------
def w9(B, p, c):
    """Newton's method for x^3 = a (elementwise), iterated until the step's squared norm is
    below 1e-24 (a value-decided trip count), differentiated in reverse mode through the loop."""
    (a,) = p

    def newton(state):
        x, _ = state
        step = (x ** 3 - a) / (3.0 * x ** 2)
        return x - step, step

    x, _ = B.while_loop(lambda s: B.sum(s[1] * s[1]) > 1e-24, newton,
                        (a * 0.0 + 2.0, a * 0.0 + 1.0))
    return B.sum(x)


def _make_w9(rng, n, dtype):
    return [rng.uniform(1.0, 10.0, n).astype(dtype)], []


# W10 -----------------------------------------------------------------------------------------
SCAN_STEPS = 1000


def w10(B, p, c):
    """A scan of SCAN_STEPS steps of a small recurrent update h = tanh(w h + u x_t), emitting
    y_t = h^2; the loss is sum(h_n) + sum(ys)."""
    w, u = p
    h0, xs = c

    def step(h, x):
        h = B.tanh(w * h + u * x)
        return h, h * h

    h, ys = B.scan(step, h0, xs)
    return B.sum(h) + B.sum(ys)


def _make_w10(rng, n, dtype):
    return ([_rand(rng, n, dtype, 0.5), _rand(rng, n, dtype, 0.5)],
            [_rand(rng, n, dtype), _rand(rng, (SCAN_STEPS, n), dtype)])


# W12-W15: small scientific programs -------------------------------------------------------
GP_POINTS = 200
LOG_2PI = float(np.log(2.0 * np.pi))


def w12(B, p, c):
    """Gaussian-process negative log marginal likelihood, RBF kernel, three log
    hyperparameters: ``K = sf exp(-D / (2 ls^2)) + (sn + 1e-6) I``, ``L = chol(K)``,
    ``0.5 y^T K^-1 y + sum(log diag L) + n/2 log(2 pi)`` (D: squared distances, given)."""
    log_ls, log_sf, log_sn = p
    D, eye, y = c
    K = B.exp(log_sf) * B.exp(D * (-0.5 * B.exp(-2.0 * log_ls))) + (B.exp(log_sn) + 1e-6) * eye
    L = B.cholesky(K)
    alpha = B.cho_solve(L, y)
    return 0.5 * B.sum(y * alpha) + B.sum(B.log(B.diagonal(L))) + 0.5 * y.shape[0] * LOG_2PI



def _make_w12(rng, n, dtype):
    X = rng.uniform(-3.0, 3.0, (n, 2))
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(n)
    params = [np.array(v, dtype=dtype) for v in (0.0, 0.0, -2.0)]
    return params, [D.astype(dtype), np.eye(n, dtype=dtype), y.astype(dtype)]


def w13(B, p, c):
    """Multinomial logistic regression: mean cross-entropy of ``X W + b`` against class
    targets."""
    W, b = p
    X, targets = c
    return B.cross_entropy(B.matmul(X, W) + b, targets)


LOGREG_SHAPE = (20, 4)  # features, classes


def _make_w13(rng, n, dtype):
    d, k = LOGREG_SHAPE
    X = _rand(rng, (n, d), dtype)
    targets = rng.integers(0, k, n)
    return [_rand(rng, (d, k), dtype, 0.1), np.zeros(k, dtype=dtype)], [X, targets]


def w14(B, p, c):
    """Eight schools, non-centred: the negative log density of (mu, log tau, theta~) with
    ``theta = mu + tau theta~``, y ~ N(theta, sigma), theta~ ~ N(0, 1), mu ~ N(0, 5) and
    tau ~ HalfCauchy(5) (with the log-Jacobian of tau = exp(log tau))."""
    mu, log_tau, theta_t = p
    y, sigma = c
    tau = B.exp(log_tau)
    r = (y - (mu + tau * theta_t)) / sigma
    lp = (-0.5 * B.sum(r * r) - 0.5 * B.sum(theta_t * theta_t) - 0.5 * (mu * 0.2) ** 2
          - B.log(1.0 + (tau * 0.2) ** 2) + log_tau)
    return -lp


def _make_w14(rng, n, dtype):
    y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], dtype=dtype)
    sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], dtype=dtype)
    params = [np.array(4.0, dtype=dtype), np.array(1.0, dtype=dtype), _rand(rng, 8, dtype)]
    return params, [y, sigma]


MIXTURE_COMPONENTS = 3


def w15(B, p, c):
    """Gaussian-mixture negative log-likelihood: ``-sum_i logsumexp_k(log w_k +
    log N(x_i; m_k, s_k))`` with ``w = softmax(logits)``, ``s = exp(log_s)``."""
    means, log_sds, logits = p
    (x,) = c
    z = (x[:, None] - means) * B.exp(-log_sds)
    comp = -0.5 * z * z - log_sds + (B.log_softmax(logits, 0) - 0.5 * LOG_2PI)
    return -B.sum(B.logsumexp(comp, 1))


def _make_w15(rng, n, dtype):
    k = MIXTURE_COMPONENTS
    x = np.concatenate([rng.normal(m, 0.5 + 0.3 * i, n // k + (i < n % k))
                        for i, m in enumerate(np.linspace(-3.0, 3.0, k))])
    params = [np.linspace(-2.0, 2.0, k).astype(dtype), np.zeros(k, dtype=dtype),
              np.zeros(k, dtype=dtype)]
    return params, [x.astype(dtype)]


# Op-by-op memory model (see docs/benchmarks.md, "Roofline"): every primitive reads each distinct
# array operand once and writes its result once through memory; a full reduction reads once; the
# gradient of a full sum is a broadcast scalar (free); a backward node reads the incoming gradient
# and what it saved and writes one gradient per input; an input used k times costs k - 1
# accumulations (read 2, write 1). Counts are in passes over the workload's large arrays.
#   W2 forward: x*x 2, neg 2, exp 2, sin 2, mul 3, 0.5*x 2, add 3, tanh 2, sum 1        = 19
#      backward: tanh 2, add 0, 0.5*x 2, mul 5, sin 3, exp 3, neg 2, x*x 3,
#      accumulate x (3 uses: 2 adds) 6                                                  = 26
#   W3 forward: A*b 2, +b 2, **2 2, sum 1 = 7; backward: pow 2, mul dA 2, mul db 2, add db 1 = 7
#   W5 wide (per branch, branch length n): forward 2+2+2+2+2+2+2+3+2+2+1 = 22;
#      backward: *0.5 0, cos 2, add 0, exp 3, neg 2, y*y 3, tanh 3, +0.25 0, *1.5 2, sin 3,
#      accumulate x 3                                                              = 21
#   W5 heavy: forward sin 2, exp 2, sum 1, cosh 2, log 2, sum 1 = 10;
#      backward exp 2, sin 3, log 2, cosh 3, accumulate 3 = 13
#   W8 (n x n): forward max 1, mean 1 = 2; backward max scatter 1, mean expand 1, accumulate 3 = 5
WORKLOADS: dict[str, Workload] = {
    w.key: w for w in (
        Workload("W1", "0-d ((x*3)+4)**2", w1, _make_w1, None, size_name="-"),
        Workload("W2", "elementwise chain, n=1e6", w2, _make_w2, 1_000_000,
                 sizes=(10_000, 1_000_000), passes=45, elements=lambda n: n, min_passes=2,
                 peakmem=True),
        Workload("W3", "broadcast (A*b+b)**2, 1000x1000", w3, _make_w3, 1000, sizes=(100, 1000),
                 passes=14, elements=lambda n: n * n, min_passes=2, peakmem=True),
        Workload("W4", "MLP 784-512-512-10, batch 256", w4, _make_w4, 256, size_name="batch",
                 flops=_w4_flops, peakmem=True),
        Workload("W5w", "wide: 16 branches x 10 ops, 5e4", w5_wide, _make_w5_wide, 50_000,
                 passes=W5_BRANCHES * 43, elements=lambda n: n, min_passes=2 * W5_BRANCHES),
        Workload("W5h", "heavy: exp(sin x)+log(cosh x), 4e6", w5_heavy, _make_w5_heavy,
                 4_000_000, passes=23, elements=lambda n: n, min_passes=2, peakmem=True),
        Workload("W6", "spring chain N=1000, 100 Euler steps", w6, _make_w6, 1000),
        Workload("W7", "deep: 1000 small ops on (100,)", w7, _make_w7, 100),
        Workload("W8", "reductions max/mean, 2000x2000", w8, _make_w8, 2000, sizes=(500, 2000),
                 passes=7, elements=lambda n: n * n, min_passes=2, peakmem=True),
        Workload("W9", "while_loop Newton solve, n=64, reverse mode", w9, _make_w9, 64),
        Workload("W10", "scan of 1000 recurrent steps on (32,)", w10, _make_w10, 32),
        Workload("W12", "GP marginal likelihood, Cholesky, n=200", w12, _make_w12, GP_POINTS),
        Workload("W13", "logistic regression, cross_entropy, 1000x20, 4 classes", w13,
                 _make_w13, 1000),
        Workload("W14", "eight schools log density, 10 parameters", w14, _make_w14, 8),
        Workload("W15", "Gaussian mixture NLL, logsumexp, n=1000, K=3", w15, _make_w15, 1000),
    )
}


def traffic_bytes(workload: Workload, size, dtype: str):
    """(op-by-op bytes, compulsory bytes) moved by one forward+backward, or None."""
    if workload.passes is None:
        return None
    items = workload.elements(size) * np.dtype(dtype).itemsize
    return workload.passes * items, workload.min_passes * items


# ---------------------------------------------------------------------------------------------
# Compile latency: time to the first backward in a fresh interpreter
# ---------------------------------------------------------------------------------------------

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))


def first_backward_code(framework="jitgrad", key="W2", size=None, dtype="float64"):
    """(stmt, setup) for a fresh interpreter: ``stmt`` imports the framework and runs the first
    forward+backward of workload ``key``; ``setup`` (untimed) imports NumPy and this module.

    Used by asv's ``timeraw_`` benchmarks (which time ``stmt`` with ``timeit`` in a new process) and
    by compare.py (which runs ``setup`` + ``stmt`` and reads the JSON it prints).
    """
    setup = (f"import sys, time, json\nsys.path.insert(0, {BENCH_DIR!r})\n"
             f"import numpy\nimport workloads as _W\n")
    stmt = (f"_B = _W.make_backend({framework!r})\n"
            f"_W.prepare_and_run(_B, {key!r}, {size!r}, {dtype!r})\n")
    return stmt, setup


def prepare_and_run(backend, key, size=None, dtype="float64"):
    wl = WORKLOADS[key]
    step = backend.prepare(wl, wl.size if size is None else size, dtype)
    return step()


def first_backward_script(framework="jitgrad", key="W2", size=None, dtype="float64"):
    """A script printing JSON {import_s, first_s}: the framework's import, then its first
    forward+backward of the workload (compile/trace included)."""
    stmt, setup = first_backward_code(framework, key, size, dtype)
    stmt_import, stmt_run = stmt.splitlines()
    return (setup + "_t0 = time.perf_counter()\n" + stmt_import + "\n_t1 = time.perf_counter()\n"
            + stmt_run + "\n_t2 = time.perf_counter()\n"
            + "print(json.dumps({'import_s': _t1 - _t0, 'first_s': _t2 - _t1}))\n")


if __name__ == "__main__":  # smoke test: python workloads.py [framework ...]
    for name in sys.argv[1:] or ["jitgrad", "numpy"]:
        B = make_backend(name)
        for key, wl in WORKLOADS.items():
            step = B.prepare(wl, wl.size, "float64")
            loss, _ = step()
            print(name, key, float(B.to_numpy(loss)))
