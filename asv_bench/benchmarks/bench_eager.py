"""Issue 21's eager per-op rows through jitgrad (``asv_bench/eager_ops.py`` prints the same rows
side by side with PyTorch, interleaved in one process; the rows are defined once, in
``eager_rows.py``).

``TimeEagerOp``: one forward call on (100,) float64 tensors that require grad, with grad mode
on (it records a node) and under ``no_grad``. ``TimeEagerBackward``: one ``backward()`` over a
graph built in ``setup`` (``chain_node``: the whole 1000-node chain; divide by 1000 for the
per-node figure); ``number = 1`` so every sample gets a fresh graph. ``TimeEagerWorkloads``:
W1, W6, W7 eager forward+backward.
"""
import jitgrad

from .eager_rows import op_rows
from .workloads import WORKLOADS, JitgradBackend

_FORWARD = ["mul", "add", "tanh", "sum", "slice", "roll"]


class TimeEagerOp:
    params = [_FORWARD, [True, False]]
    param_names = ["op", "grad"]

    def setup(self, op, grad):
        _, make = op_rows(jitgrad)[op if grad else "nograd_" + op]
        self.call = make()
        self.call()  # compiles the kernel

    def time_forward(self, op, grad):
        self.call()


class TimeEagerBackward:
    params = [["chain_node", "backward"]]
    param_names = ["graph"]
    number = 1
    repeat = 50
    warmup_time = 0

    def setup(self, graph):
        _, (_, make) = op_rows(jitgrad)[graph]
        build, self.run, _ = make()
        self.run(build())  # compiles every kernel the backward needs
        self.graph = build()

    def time_backward(self, graph):
        self.run(self.graph)


class TimeEagerForwardBackward:
    def setup(self):
        _, make = op_rows(jitgrad)["fwd_bwd"]
        self.call = make()
        self.call()

    def time_fwd_bwd(self):
        self.call()


class TimeEagerWorkloads:
    params = [["W1", "W6", "W7"]]
    param_names = ["workload"]
    timeout = 120

    def setup(self, key):
        wl = WORKLOADS[key]
        self.step = JitgradBackend().prepare(wl, wl.size, "float64")
        self.step()

    def time_forward_backward(self, key):
        self.step()
