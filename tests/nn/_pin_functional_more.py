"""Writes ``_pinned_functional_more.py``: PyTorch's outputs for ``_functional_more_cases.CASES``.
Run with a Python that has torch 2.13 (not part of the test run: CI has no torch):
``python tests/nn/_pin_functional_more.py``."""
import sys
import textwrap
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
from _functional_more_cases import CASES, rng_for  # noqa: E402


def to_torch(a):
    a = np.asarray(a)
    return torch.tensor(a, dtype=torch.float64 if a.dtype.kind == "f" else torch.int64)


def flat(out):
    return [o for v in out for o in flat(v)] if isinstance(out, (tuple, list)) else [out]


def entry(o):
    vals = ", ".join(repr(float(v)) if o.dtype.kind == "f" else str(int(v)) for v in o.ravel())
    return f"({o.dtype.name!r}, {tuple(o.shape)!r}, [{vals}])"


def main():
    lines = ['"""PyTorch 2.13 outputs of ``_functional_more_cases.CASES`` (written by',
             '``_pin_functional_more.py``): name -> [(dtype, shape, flat values), ...]."""', "",
             "PINNED = {"]
    for name, (inputs, call, _, _) in CASES.items():
        args = [to_torch(a) for a in inputs(rng_for(name))]
        outs = [o.detach().numpy() for o in flat(call(F, *args))]
        lines.append(textwrap.fill(f"{name!r}: [{', '.join(entry(o) for o in outs)}],", 99,
                                   initial_indent="    ", subsequent_indent="        ",
                                   break_on_hyphens=False))
    lines.append("}")
    Path(__file__).with_name("_pinned_functional_more.py").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
