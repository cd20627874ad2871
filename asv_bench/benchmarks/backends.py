"""The frameworks the workloads run on: one *backend* per framework, each a small op namespace
``B`` (``B.sin``, ``B.cholesky``, ``B.loop``...) and a ``prepare(workload, size, dtype, mode)``
returning a zero-argument callable that runs the workload once and returns ``(loss, grads)``
with the work finished. The contract is described in ``workloads.py``.

This module imports only NumPy at import time: each backend imports its framework when built.
"""
from __future__ import annotations

import numpy as np


def make_inputs(workload: Workload, size, dtype: str, seed: int = 0):
    """The NumPy inputs (params, consts) of a workload; the same for every framework."""
    return workload.make(np.random.default_rng(seed), size, np.dtype(dtype))



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

    def logsumexp(self, x, axis):
        return self.lib.logsumexp(x, dim=axis)

    def cross_entropy(self, logits, targets):
        return self.lib.nn.functional.cross_entropy(logits, targets)

    def cholesky(self, a):
        return self.lib.linalg.cholesky(a)

    def cho_solve(self, L, b):
        return self.lib.cholesky_solve(b[:, None], L)[:, 0]

    def diagonal(self, a):
        return self.lib.diagonal(a)

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

    def logsumexp(self, x, axis):
        return self._logsumexp(x, axis=axis)

    def cross_entropy(self, logits, targets):
        picked = self.log_softmax(logits, 1)[np.arange(len(targets)), targets]
        return -self.anp.mean(picked)

    def cholesky(self, a):
        return self.anp.linalg.cholesky(a)

    def cho_solve(self, L, b):
        from autograd.scipy.linalg import solve_triangular

        return solve_triangular(L.T, solve_triangular(L, b, lower=True), lower=False)

    def diagonal(self, a):
        return self.anp.diagonal(a)

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
            import jax.scipy.linalg  # noqa: F401  (cho_solve)
            import jax.scipy.special  # noqa: F401  (logsumexp)
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

    def logsumexp(self, x, axis):
        return self.jax.scipy.special.logsumexp(x, axis=axis)

    def cross_entropy(self, logits, targets):
        logp = self.jax.nn.log_softmax(logits, axis=1)
        return -self.jnp.mean(self.jnp.take_along_axis(logp, targets[:, None], axis=1))

    def cholesky(self, a):
        return self.jnp.linalg.cholesky(a)

    def cho_solve(self, L, b):
        return self.jax.scipy.linalg.cho_solve((L, True), b)

    def diagonal(self, a):
        return self.jnp.diagonal(a)

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

    def logsumexp(self, x, axis):
        m = np.max(x, axis=axis, keepdims=True)
        return np.squeeze(m, axis) + np.log(np.sum(np.exp(x - m), axis=axis))

    def cross_entropy(self, logits, targets):
        return -np.mean(self.log_softmax(logits, 1)[np.arange(len(targets)), targets])

    def cholesky(self, a):
        return np.linalg.cholesky(a)

    def cho_solve(self, L, b):
        return np.linalg.solve(L.T, np.linalg.solve(L, b))

    def diagonal(self, a):
        return np.diagonal(a)

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
