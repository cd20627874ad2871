"""The benchmark workloads W1-W10, defined once and run through any framework.

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
    )
}


def make_inputs(workload: Workload, size, dtype: str, seed: int = 0):
    """The NumPy inputs (params, consts) of a workload; the same for every framework."""
    return workload.make(np.random.default_rng(seed), size, np.dtype(dtype))


def traffic_bytes(workload: Workload, size, dtype: str):
    """(op-by-op bytes, compulsory bytes) moved by one forward+backward, or None."""
    if workload.passes is None:
        return None
    items = workload.elements(size) * np.dtype(dtype).itemsize
    return workload.passes * items, workload.min_passes * items


# ---------------------------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------------------------


class Unavailable(Exception):
    """The framework is not installed (or lacks an op): skip it, with this message as the note."""


class _Backend:
    def loop(self, n, body, carry):
        """``carry = body(carry)``, n times: a Python loop (JAX: ``lax.fori_loop``, which keeps
        its compile time independent of n; unrolled, W6 took minutes to compile)."""
        for _ in range(n):
            carry = body(carry)
        return carry

    def scan(self, f, init, xs):
        """``carry, y = f(carry, x)`` over the rows of ``xs``, the ys stacked: a Python loop
        (jitgrad: ``jitgrad.scan``; JAX: ``lax.scan``)."""
        ys = []
        for t in range(xs.shape[0]):
            init, y = f(init, xs[t])
            ys.append(y)
        return init, self.stack(ys)

    def while_loop(self, cond, body, carry):
        """``while cond(carry): carry = body(carry)``: a Python loop (jitgrad:
        ``jitgrad.while_loop``; JAX: refused, reverse mode through ``lax.while_loop`` raises)."""
        while cond(carry):
            carry = body(carry)
        return carry


class _TorchLike(_Backend):
    """jitgrad and PyTorch: the same tensor API (``lib.tensor``, ``.backward()``, ``.grad``)."""

    differentiates = True

    def __init__(self, lib, device="cpu"):
        self.lib = lib
        self.device = device
        for op in ("sin", "cos", "exp", "log", "tanh", "cosh", "relu", "matmul"):
            setattr(self, op, getattr(lib, op, None) or self._missing(op))

    def _missing(self, op):
        def missing(*args, **kwargs):
            raise Unavailable(f"{self.name}.{op} does not exist")
        return missing

    def sum(self, x):
        return x.sum()

    def max(self, x, axis):
        return x.max(dim=axis).values

    def mean(self, x, axis):
        return x.mean(dim=axis)

    def log_softmax(self, x, axis):
        return self.lib.log_softmax(x, dim=axis)

    def cat(self, xs):
        return self.lib.cat(xs)

    def stack(self, xs):
        return self.lib.stack(xs)

    def prepare(self, workload, size, dtype, mode="fwd_bwd", seed=0):
        params, consts = make_inputs(workload, size, dtype, seed)
        lib = self.lib
        device = self.device
        ps = tuple(lib.tensor(a, requires_grad=(mode == "fwd_bwd"), device=device) for a in params)
        cs = tuple(lib.tensor(a, device=device) for a in consts)
        fn = workload.fn
        # kernels on a GPU run asynchronously: a timed call ends when the device is done
        sync = lib.cuda.synchronize if device != "cpu" else (lambda: None)
        if mode == "fwd":
            def forward():
                with lib.no_grad():
                    out = fn(self, ps, cs)
                sync()
                return out, None
            return forward

        def forward_backward():
            for p in ps:
                p.grad = None
            loss = fn(self, ps, cs)
            loss.backward()
            sync()
            return loss, [p.grad for p in ps]
        return forward_backward

    def to_numpy(self, a):
        return None if a is None else np.asarray(a.detach().cpu().numpy())


class JitgradBackend(_TorchLike):
    name = "jitgrad"

    def loop(self, n, body, carry):
        """``jitgrad.fori_loop``: eager, a Python loop; compiled, one loop in the program."""
        return self.lib.fori_loop(n, body, carry)

    def scan(self, f, init, xs):
        return self.lib.scan(f, init, xs)

    def while_loop(self, cond, body, carry):
        return self.lib.while_loop(cond, body, carry)

    def __init__(self, device="cpu"):
        import jitgrad

        if device != "cpu" and not jitgrad.cuda.is_available():
            raise Unavailable("jitgrad: no CUDA device (jitgrad.cuda.is_available() is False)")
        super().__init__(jitgrad, device)
        self.version = jitgrad.__version__

    def info(self):
        import llvmlite
        import numba
        from jitgrad import _config

        return {"version": self.version, "numba": numba.__version__,
                "llvmlite": llvmlite.__version__, "threading_layer": _config.threading_layer(),
                "threads": _config.NUM_THREADS, "cache_dir": _config.CACHE_DIR,
                "interop_threads": _call_or_none(getattr(self.lib, "get_num_interop_threads",
                                                         None))}


class JitgradCompileBackend(JitgradBackend):
    """jitgrad with ``jitgrad.compile``: ``compile(func.value_and_grad(...))`` of the function
    of the params tuple (as JAX's ``jit(value_and_grad)``); ``B.loop`` is ``jitgrad.fori_loop``
    (one loop in the program). The first call traces and compiles (outside the timing)."""

    name = "jitgrad-compile"

    def prepare(self, workload, size, dtype, mode="fwd_bwd", seed=0):
        params, consts = make_inputs(workload, size, dtype, seed)
        lib = self.lib
        ps = tuple(lib.tensor(a) for a in params)
        cs = tuple(lib.tensor(a) for a in consts)
        fn = workload.fn
        if mode == "fwd":
            forward = lib.compile(lambda p: fn(self, p, cs))

            def run_forward():
                with lib.no_grad():
                    return forward(ps), None
            return run_forward
        value_and_grad = lib.compile(lib.func.value_and_grad(lambda p: fn(self, p, cs)))

        def forward_backward():
            loss, grads = value_and_grad(ps)
            return loss, list(grads)
        return forward_backward


class TorchBackend(_TorchLike):
    name = "torch"

    def __init__(self, device="cpu"):
        try:
            import torch
        except ImportError as err:
            raise Unavailable(f"torch not installed ({err})") from None
        if device != "cpu" and not torch.cuda.is_available():
            raise Unavailable("torch: this build has no CUDA device (torch.cuda.is_available() "
                              "is False)")
        super().__init__(torch, device)
        self.version = torch.__version__

    def info(self):
        torch = self.lib
        blas = "MKL" if torch.backends.mkl.is_available() else "?"
        return {"version": self.version, "threads": torch.get_num_threads(),
                "interop_threads": torch.get_num_interop_threads(), "blas": blas,
                "parallel_backend": next((ln.split(":", 1)[1].strip() for ln in
                                          torch.__config__.parallel_info().splitlines()
                                          if ln.startswith("ATen parallel backend")), "?")}


class AutogradBackend(_Backend):
    """HIPS autograd: ``autograd.numpy`` ops, ``value_and_grad`` of the params tuple."""

    name = "autograd"
    differentiates = True

    def __init__(self):
        try:
            import autograd
            import autograd.numpy as anp
            from autograd.scipy.special import logsumexp
        except ImportError as err:
            raise Unavailable(f"HIPS autograd not installed ({err})") from None
        from importlib.metadata import version

        self.autograd, self.anp, self._logsumexp = autograd, anp, logsumexp
        self.version = version("autograd")
        for op in ("sin", "cos", "exp", "log", "tanh", "cosh", "matmul", "sum"):
            setattr(self, op, getattr(anp, op))

    def relu(self, x):
        return self.anp.maximum(x, 0.0)

    def max(self, x, axis):
        return self.anp.max(x, axis=axis)

    def mean(self, x, axis):
        return self.anp.mean(x, axis=axis)

    def log_softmax(self, x, axis):
        return x - self._logsumexp(x, axis=axis, keepdims=True)

    def cat(self, xs):
        return self.anp.concatenate(xs)

    def stack(self, xs):
        return self.anp.stack(xs)

    def prepare(self, workload, size, dtype, mode="fwd_bwd", seed=0):
        params, consts = make_inputs(workload, size, dtype, seed)
        ps, cs, fn = tuple(params), tuple(consts), workload.fn
        if mode == "fwd":
            return lambda: (fn(self, ps, cs), None)
        vg = self.autograd.value_and_grad(lambda p: fn(self, p, cs))

        def forward_backward():
            loss, grads = vg(ps)
            return loss, list(grads)
        return forward_backward

    def to_numpy(self, a):
        return None if a is None else np.asarray(a)

    def info(self):
        return {"version": self.version}


class JaxBackend(_Backend):
    """JAX on CPU: ``jax.jit(jax.value_and_grad(f))``, float64 enabled."""

    name = "jax"
    differentiates = True

    def __init__(self):
        try:
            import jax
            import jax.numpy as jnp
        except ImportError as err:
            raise Unavailable(f"jax not installed ({err})") from None
        jax.config.update("jax_enable_x64", True)  # float64 workloads; float32 inputs stay float32
        self.jax, self.jnp = jax, jnp
        self.version = jax.__version__
        for op in ("sin", "cos", "exp", "log", "tanh", "cosh", "matmul", "sum"):
            setattr(self, op, getattr(jnp, op))

    def relu(self, x):
        return self.jax.nn.relu(x)

    def loop(self, n, body, carry):
        return self.jax.lax.fori_loop(0, n, lambda i, c: body(c), carry)

    def scan(self, f, init, xs):
        return self.jax.lax.scan(f, init, xs)

    def while_loop(self, cond, body, carry):
        raise Unavailable("jax: reverse-mode differentiation does not work for lax.while_loop")

    def stack(self, xs):
        return self.jnp.stack(xs)

    def max(self, x, axis):
        return self.jnp.max(x, axis=axis)

    def mean(self, x, axis):
        return self.jnp.mean(x, axis=axis)

    def log_softmax(self, x, axis):
        return self.jax.nn.log_softmax(x, axis=axis)

    def cat(self, xs):
        return self.jnp.concatenate(xs)

    def prepare(self, workload, size, dtype, mode="fwd_bwd", seed=0):
        params, consts = make_inputs(workload, size, dtype, seed)
        jax, jnp, fn = self.jax, self.jnp, workload.fn
        ps = tuple(jnp.asarray(a) for a in params)
        cs = tuple(jnp.asarray(a) for a in consts)
        if mode == "fwd":
            f = jax.jit(lambda p, c: fn(self, p, c))

            def forward():
                return jax.block_until_ready(f(ps, cs)), None
            return forward
        vg = jax.jit(jax.value_and_grad(lambda p, c: fn(self, p, c)))

        def forward_backward():
            loss, grads = jax.block_until_ready(vg(ps, cs))
            return loss, list(grads)
        return forward_backward

    def to_numpy(self, a):
        return None if a is None else np.asarray(a)

    def info(self):
        return {"version": self.version, "backend": self.jax.default_backend()}


class NumpyBackend(_Backend):
    """Plain NumPy, forward only: the floor every autograd pays on top of."""

    name = "numpy"
    differentiates = False

    def __init__(self):
        self.version = np.__version__
        for op in ("sin", "cos", "exp", "log", "tanh", "cosh", "matmul", "sum"):
            setattr(self, op, getattr(np, op))

    def relu(self, x):
        return np.maximum(x, 0.0)

    def max(self, x, axis):
        return np.max(x, axis=axis)

    def mean(self, x, axis):
        return np.mean(x, axis=axis)

    def log_softmax(self, x, axis):
        m = np.max(x, axis=axis, keepdims=True)
        return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))

    def cat(self, xs):
        return np.concatenate(xs)

    def stack(self, xs):
        return np.stack(xs)

    def prepare(self, workload, size, dtype, mode="fwd", seed=0):
        params, consts = make_inputs(workload, size, dtype, seed)
        ps, cs, fn = tuple(params), tuple(consts), workload.fn
        return lambda: (fn(self, ps, cs), None)

    def to_numpy(self, a):
        return None if a is None else np.asarray(a)

    def info(self):
        return {"version": self.version, "blas": numpy_blas()}


BACKENDS = {"jitgrad": JitgradBackend, "jitgrad-compile": JitgradCompileBackend, "torch": TorchBackend, "autograd": AutogradBackend,
            "jax": JaxBackend, "numpy": NumpyBackend}


def make_backend(name: str, device: str = "cpu"):
    """The backend object for ``name`` on ``device`` ("cpu" or "cuda"); raises ``Unavailable``
    when the framework is missing or does not run there (only jitgrad and PyTorch have CUDA
    backends here)."""
    if device == "cpu":
        return BACKENDS[name]()
    if name not in ("jitgrad", "torch"):
        raise Unavailable(f"{name}: CPU only in this comparison")
    return BACKENDS[name](device)


def _call_or_none(f):
    try:
        return f() if f is not None else None
    except Exception:  # informational only
        return None


def numpy_blas() -> str:
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{cfg.get('name', '?')} {cfg.get('version', '')}".strip()
    except Exception:  # informational only
        return "?"


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
