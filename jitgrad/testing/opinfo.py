"""The op database: one ``OpInfo`` per op drives the generated op tests in ``tests/ops``.

Each family registers its entries in its own module (``db_elementwise``, ``db_reduce``,
``db_shape``...). An entry gives the jitgrad call, a NumPy reference and sample inputs; the tests
check the forward against NumPy, gradients against finite differences (float64), second
derivatives, and that plain backward equals ``create_graph`` backward.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

OP_DB: list = []


@dataclass
class Sample:
    """Positional arguments (NumPy arrays become tensors; others pass through) and kwargs."""

    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass
class OpInfo:
    name: str
    fn: Callable  # jitgrad call: fn(*tensors_and_values, **kwargs)
    ref: Callable  # NumPy reference on arrays: ref(*arrays_and_values, **kwargs)
    samples: Callable  # samples(rng, np_dtype) -> list[Sample]
    differentiable: bool = True
    gradgrad: bool = True
    dtypes: tuple = ("float64", "float32")
    rtol: float = 1e-7
    atol: float = 1e-9
    grad_atol: float = 1e-5
    output: int | None = None  # for tuple outputs: which one is differentiable and compared

    def __post_init__(self):
        OP_DB.append(self)


def to_tensors(sample: Sample, requires_grad: bool):
    """Tensors for the sample's arrays: float arrays require grad when asked."""
    import jitgrad

    out = []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            out.append(jitgrad.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == "f"))
        else:
            out.append(a)
    return out


def select(op: OpInfo, out):
    return out[op.output] if op.output is not None else out
