"""Writes ``_pinned_modules_more.py``: for each of ``_modules_more_cases.CASES``, PyTorch's
initial state_dict (copied into the jitgrad module so outputs compare exactly), its outputs on
the case's inputs and its repr. Run with a Python that has torch 2.13 (not part of the test
run: CI has no torch): ``python tests/nn/_pin_modules_more.py``."""
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).parent))
from _modules_more_cases import CASES, rng_for  # noqa: E402


def to_torch(a):
    a = np.asarray(a)
    return torch.tensor(a, dtype=torch.float64 if a.dtype.kind == "f" else torch.int64)


def flat(out):
    return [o for v in out for o in flat(v)] if isinstance(out, (tuple, list)) else [out]


def entry(o):
    o = np.asarray(o)
    vals = ", ".join(repr(float(v)) if o.dtype.kind == "f" else str(int(v)) for v in o.ravel())
    return f"({o.dtype.name!r}, {tuple(o.shape)!r}, [{vals}])"


def main():
    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    lines = ['"""PyTorch 2.13 results of ``_modules_more_cases.CASES`` (written by',
             '``_pin_modules_more.py``): name -> (state_dict {key: (dtype, shape, values)},',
             'outputs [(dtype, shape, flat values)], repr)."""', "", "PINNED = {"]
    for name, (make, inputs, _, train) in CASES.items():
        module = make(nn, lambda v: torch.tensor(v, dtype=torch.float64)).train(train)
        state = {k: entry(v.detach().numpy()) for k, v in module.state_dict().items()}
        args = [to_torch(a) for a in inputs(rng_for(name))]
        outs = [o.detach().numpy() for o in flat(module(*args))]
        state_text = ", ".join(f"{k!r}: {v}" for k, v in state.items())
        lines.append(f"    {name!r}: ({{{state_text}}},")
        lines.append(f"        [{', '.join(entry(o) for o in outs)}],")
        lines.append(f"        {repr(module)!r}),")
    lines.append("}")
    Path(__file__).with_name("_pinned_modules_more.py").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
