"""W1-W15 through jitgrad: forward+backward (and forward alone), over size and dtype.

The workloads are defined once, in ``workloads.py`` (compare.py runs the same ones through NumPy,
PyTorch, HIPS autograd and JAX). Every ``setup`` runs the workload once, so the timings measure
compiled kernels, not Numba's compiler (``bench_compile.py`` measures that). ``peakmem_*`` is the
peak RSS of the benchmark process (Numba and LLVM alone are ~150-200 MB of it).
"""
import os

from .workloads import DTYPES, WORKLOADS, JitgradBackend, JitgradCompileBackend

#: where the workloads run: ``JITGRAD_BENCH_DEVICE=cuda asv run ...`` times them on the GPU
DEVICE = os.environ.get("JITGRAD_BENCH_DEVICE", "cpu")


def _params(key):
    wl = WORKLOADS[key]
    if wl.size is None:
        return [list(DTYPES)], ["dtype"]
    return [list(wl.asv_sizes()), list(DTYPES)], [wl.size_name, "dtype"]


class _Workload:
    key = ""
    timeout = 300  # setup compiles the kernels on a cold cache

    def setup(self, *params):
        *size, dtype = params
        wl = WORKLOADS[self.key]
        size = size[0] if size else wl.size
        backend = JitgradBackend(DEVICE)
        self.step = backend.prepare(wl, size, dtype)
        self.forward = backend.prepare(wl, size, dtype, mode="fwd")
        self.step()
        self.forward()

    def time_forward_backward(self, *params):
        self.step()

    def time_forward(self, *params):
        self.forward()


class _PeakMem:
    def peakmem_forward_backward(self, *params):
        self.step()


class W1Overhead(_Workload):
    """W1: y = ((x*3)+4)**2 on a 0-d tensor: per-op overhead (record, dispatch, engine)."""
    key = "W1"
    params, param_names = _params(key)


class W2Elementwise(_Workload, _PeakMem):
    """W2: sum(tanh(sin(x)*exp(-x*x) + 0.5*x))."""
    key = "W2"
    params, param_names = _params(key)


class W3Broadcast(_Workload, _PeakMem):
    """W3: sum((A*b + b)**2), A (n, n), b (n,): gradients of A and b."""
    key = "W3"
    params, param_names = _params(key)


class W4MLP(_Workload, _PeakMem):
    """W4: MLP 784-512-512-10, ReLU, softmax cross-entropy."""
    key = "W4"
    params, param_names = _params(key)


class W5Wide(_Workload):
    """W5: 16 independent branches of 10 elementwise ops on 5e4 elements, summed
    (bench_engine.py times it with 1 vs 2 inter-op threads)."""
    key = "W5w"
    params, param_names = _params(key)


class W5Heavy(_Workload, _PeakMem):
    """W5: sum(exp(sin x)) + sum(log(cosh x)) on 4e6 elements."""
    key = "W5h"
    params, param_names = _params(key)


class W6Springs(_Workload):
    """W6: spring chain, N particles, 100 explicit Euler steps; gradient of the final energy
    with respect to the initial positions."""
    key = "W6"
    params, param_names = _params(key)


class W7Deep(_Workload):
    """W7: 1000 sequential small ops (x*1.0001, x+0.001, tanh) on a (100,) vector."""
    key = "W7"
    params, param_names = _params(key)


class W8Reductions(_Workload, _PeakMem):
    """W8: sum(x.max(dim=1).values) + sum(x.mean(dim=0)**2), x (n, n)."""
    key = "W8"
    params, param_names = _params(key)


class _Compiled:
    """A workload through ``jitgrad.compile(func.value_and_grad(...))`` (``B.loop`` is
    ``jitgrad.fori_loop``): ``setup`` traces and compiles, the timings run the program."""

    key = ""
    timeout = 300

    def setup(self, *params):
        *size, dtype = params
        wl = WORKLOADS[self.key]
        backend = JitgradCompileBackend()
        self.step = backend.prepare(wl, size[0] if size else wl.size, dtype)
        self.step()

    def time_compiled_forward_backward(self, *params):
        self.step()


class W1Compiled(_Compiled):
    key = "W1"
    params, param_names = _params(key)


class W2Compiled(_Compiled):
    key = "W2"
    params, param_names = _params(key)


class W5WideCompiled(_Compiled):
    key = "W5w"
    params, param_names = _params(key)


class W6Compiled(_Compiled):
    key = "W6"
    params, param_names = _params(key)


class W7Compiled(_Compiled):
    key = "W7"
    params, param_names = _params(key)


class W9WhileLoop(_Workload):
    """W9: Newton's method for x^3 = a iterated until converged (``jitgrad.while_loop``), its
    gradient by reverse mode through the checkpointed tape."""
    key = "W9"
    params, param_names = _params(key)


class W10Scan(_Workload):
    """W10: ``jitgrad.scan`` of 1000 steps of h = tanh(w h + u x_t), the ys stacked."""
    key = "W10"
    params, param_names = _params(key)


class W10Compiled(_Compiled):
    key = "W10"
    params, param_names = _params(key)


class W12GaussianProcess(_Workload):
    """W12: GP negative log marginal likelihood (Cholesky, n = 200) and its gradient."""
    key = "W12"
    params, param_names = _params(key)


class W12Compiled(_Compiled):
    key = "W12"
    params, param_names = _params(key)


class W13LogisticCompiled(_Compiled):
    """W13: logistic regression with ``cross_entropy`` on class targets, compiled."""
    key = "W13"
    params, param_names = _params(key)


class W14EightSchoolsCompiled(_Compiled):
    """W14: the eight-schools log density (10 parameters), compiled: per-call overhead."""
    key = "W14"
    params, param_names = _params(key)


class W15MixtureCompiled(_Compiled):
    """W15: Gaussian-mixture NLL with ``logsumexp`` (n = 1000, K = 3), compiled."""
    key = "W15"
    params, param_names = _params(key)
