"""The threaded backward engine: W5 (wide graph, and two heavy branches) with 1 vs 2 inter-op
threads.

W5w: 16 independent branches of 10 elementwise ops on 5e4 elements, each summed, added.
W5h: ``sum(exp(sin x)) + sum(log(cosh x))`` on 4e6 elements.
The workloads are defined once in ``workloads.py``. ``time_backward`` runs ``backward`` over a graph
built (and run once, so every kernel is compiled) in ``setup``, with ``retain_graph=True`` so the
same graph serves every sample; ``time_forward_backward`` records a new graph each call.
``TimeOwnedBuffers``: gradient buffers the engine keeps or adds into instead of copying.
"""
import numpy as np

import jitgrad

from .workloads import WORKLOADS, JitgradBackend, make_inputs


class TimeW5InteropThreads:
    """W5 backward with ``set_num_interop_threads(1)`` (every node on the calling thread) vs 2."""

    params = [["W5w", "W5h"], [1, 2]]
    param_names = ["workload", "interop_threads"]
    timeout = 120

    def setup(self, key, threads):
        self._old_threads = jitgrad.get_num_interop_threads()
        jitgrad.set_num_interop_threads(threads)
        workload = WORKLOADS[key]
        backend = JitgradBackend()
        params, _ = make_inputs(workload, workload.size, "float64")
        self.params_t = tuple(jitgrad.tensor(a, requires_grad=True) for a in params)
        self.forward = lambda: workload.fn(backend, self.params_t, ())
        self.loss = self.forward()
        self.loss.backward(retain_graph=True)  # compiles every kernel the backward needs

    def teardown(self, key, threads):
        jitgrad.set_num_interop_threads(self._old_threads)

    def _clear(self):
        for p in self.params_t:
            p.grad = None

    def time_backward(self, key, threads):
        self._clear()
        self.loss.backward(retain_graph=True)

    def time_forward_backward(self, key, threads):
        self._clear()
        self.forward().backward()


class TimeOwnedBuffers:
    """Gradient buffers the engine owns (Note [owned buffers] in ``graph/node.py``): a
    gradient nobody else references becomes ``.grad`` without a copy, and gradients meeting at
    one node are added in place.

    ``W8``: a 2000x2000 leaf reached by ``max`` (a new gradient) and ``mean`` (a broadcast
    view): one addition into the new one, which is then kept as ``.grad``.
    ``fan_in_8``: a 1e6-element leaf used by 8 branches ``x * c_k``: 7 additions.
    """

    params = [["W8", "fan_in_8"]]
    param_names = ["graph"]
    timeout = 120

    def setup(self, graph):
        rng = np.random.default_rng(0)
        if graph == "W8":
            self.x = jitgrad.tensor(rng.standard_normal((2000, 2000)), requires_grad=True)
            x = self.x
            self.loss = x.max(dim=1).values.sum() + (x.mean(dim=0) ** 2).sum()
        else:
            self.x = jitgrad.tensor(rng.standard_normal(1_000_000), requires_grad=True)
            self.loss = sum((self.x * (k + 1.0)).sum() for k in range(8))
        self.loss.backward(retain_graph=True)  # compiles every kernel the backward needs

    def time_backward(self, graph):
        self.x.grad = None
        self.loss.backward(retain_graph=True)

    def peakmem_backward(self, graph):
        self.x.grad = None
        self.loss.backward(retain_graph=True)


class TimeFusedBackward:
    """Fused backward regions (docs/engine.md, "Fused regions") on and off: W2's elementwise
    DAG (1e6), W5w's 16 branches of 10 ops (5e4) and W5h's two heavy branches (4e6), backward
    only over a graph built in ``setup``."""

    params = [["W2", "W5w", "W5h"], [True, False]]
    param_names = ["workload", "fusion"]
    timeout = 120

    def setup(self, key, fusion):
        from jitgrad import _config

        self._old = _config.FUSION
        _config.FUSION = fusion
        workload = WORKLOADS[key]
        params, _ = make_inputs(workload, workload.size, "float64")
        self.params_t = tuple(jitgrad.tensor(a, requires_grad=True) for a in params)
        self.loss = workload.fn(JitgradBackend(), self.params_t, ())
        self.loss.backward(retain_graph=True)  # compiles every kernel the backward needs

    def teardown(self, key, fusion):
        from jitgrad import _config

        _config.FUSION = self._old

    def time_backward(self, key, fusion):
        for p in self.params_t:
            p.grad = None
        self.loss.backward(retain_graph=True)
