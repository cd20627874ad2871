"""W11 in asv: one training step (forward, backward, Adam update) of W4's MLP through jitgrad,
eager and as one compiled program. The peers (PyTorch eager, JAX ``jit`` with a hand-written
Adam) are in ``asv_bench/train_step_compare.py``, whose set-up this reuses."""
from __future__ import annotations

import importlib.util
import os

_SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "train_step_compare.py")


def _compare_module():
    spec = importlib.util.spec_from_file_location("train_step_compare", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class W11TrainStep:
    """W11: MLP 784-512-512-10 + Adam, batch 256: eager step vs compiled step."""

    params = [["float32", "float64"], [False, True]]
    param_names = ["dtype", "compiled"]
    timeout = 300

    def setup(self, dtype, compiled):
        self.step = _compare_module()._jitgrad(dtype, compiled)
        self.step()  # (compiled: traces; the next call builds the program)
        self.step()

    def time_train_step(self, dtype, compiled):
        self.step()
