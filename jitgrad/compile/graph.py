"""The graph a trace records: values (shape, dtype, where they come from) and op nodes.

A node is one registry op row with its arguments and attributes; an argument is ``("v", id)``
(a value) or ``("c", constant)`` (a Python constant). The graph assumes nothing about the
device: the CPU program (``program.py``) is one back end of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ops.core import operands


@dataclass
class Value:
    """One value of the graph: an input, a constant, an op's output or an array a composite
    forward stashed for its backward (``kind`` "ctx")."""

    shape: tuple
    dtype: np.dtype
    # "input" (a tensor argument), "scalar" (a float argument), "closure" (a tensor read from
    # outside), "const" (a tensor made inside from constants), "cotangent" (a gradient seed of
    # the backward), "op", "ctx"
    kind: str
    info: dict = field(default_factory=dict)


class Node:
    """``op(*args, **attrs) -> outputs``; elementwise nodes also carry their compute dtype,
    result dtype and broadcast shape, as dispatch chose them."""

    __slots__ = ("op", "args", "attrs", "outputs", "phase", "ctx", "compute_dtype",
                 "out_dtype", "shape")

    def __init__(self, op, args, attrs, phase="forward"):
        self.op = op
        self.args = args
        self.attrs = attrs
        self.outputs: list = []
        self.phase = phase  # "forward" or "backward"
        self.ctx: dict = {}  # composite: stashed array name -> value id
        self.compute_dtype = self.out_dtype = self.shape = None

    def elementwise_types(self, call_args, attrs) -> None:
        _, _, _, dt, out_dt, shape = operands.prepare(self.op, call_args, attrs)
        self.compute_dtype, self.out_dtype, self.shape = dt.np, out_dt.np, tuple(shape)

    def value_args(self):
        return [r[1] for r in self.args if r[0] == "v"]

    def __repr__(self):
        args = ", ".join(f"%{r[1]}" if r[0] == "v" else repr(r[1]) for r in self.args)
        outs = ", ".join(f"%{v}" for v in self.outputs)
        return f"{outs} = {self.op.name}({args}){self.attrs or ''}"


class Graph:
    """Values and nodes in execution order (forward nodes first, then the backward's)."""

    def __init__(self):
        self.values: list = []
        self.nodes: list = []

    def new_value(self, shape, dtype, kind, **info) -> int:
        self.values.append(Value(tuple(shape), np.dtype(dtype), kind, info))
        return len(self.values) - 1

    def of_kind(self, kind: str) -> list:
        return [i for i, v in enumerate(self.values) if v.kind == kind]

    def __repr__(self):
        lines = [f"%{i}: {v.kind} {v.dtype}{list(v.shape)}" for i, v in enumerate(self.values)
                 if v.kind != "op"]
        return "\n".join(lines + [repr(n) for n in self.nodes])
