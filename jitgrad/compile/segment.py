"""Statements of generated Numba code for the parts of a program (a loop body's steps).

Note [generated loops]: a captured loop whose body is made only of fused elementwise runs and
the shape rows below becomes ONE generated function per direction (``loop.py``): the whole
loop runs inside Numba, with no Python per step. Each part is emitted as statements over
local arrays named ``v<id>``:

- a ``FusedGroup``: a call of its generated kernel (compiled once, shared with the eager-step
  program) on fresh local outputs;
- ``getitem_slice`` with basic slices and integers, ``index_backward`` of such an index
  (zeros, then the gradient written into the slice), ``cat``, ``view`` / ``reshape_copy``:
  the same NumPy expressions their rows' forwards compute, which Numba compiles.

Anything else makes the loop a Python loop over the steps (correct, just slower).
"""
from __future__ import annotations

import math

import numpy as np

from . import codegen


def index_source(index) -> str | None:
    """``index`` (a basic index: a tuple of slices, ints, None and Ellipsis) as source, or
    None for anything else."""
    parts = []
    for item in index if isinstance(index, tuple) else (index,):
        if isinstance(item, slice):
            if item.step not in (None, 1) and not isinstance(item.step, int):
                return None
            fields = ["" if v is None else repr(int(v)) for v in (item.start, item.stop)]
            parts.append(":".join(fields) + ("" if item.step in (None, 1) else f":{item.step}"))
        elif item is Ellipsis:
            parts.append("...")
        elif item is None:
            parts.append("None")
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            parts.append(repr(int(item)))
        else:
            return None
    while parts and parts[-1] == "...":
        parts.pop()
    return ", ".join(parts) if parts else "..."


def supported(graph, part, weak) -> bool:
    """Whether ``part`` can be emitted (Note [generated loops])."""
    if isinstance(part, codegen.FusedGroup):
        return len(part.shape) >= 1 and all(len(graph.values[v].shape) >= 1
                                            for v in part.stored)
    name = part.op.name
    args = part.args
    if any(r[0] != "v" or r[1] in weak for r in args):
        return False
    if any(len(graph.values[v].shape) == 0 for v in part.outputs + part.value_args()):
        return False
    if name == "getitem_slice":
        return part.attrs.get("kind") == "slice" and index_source(part.attrs["index"]) is not None
    if name == "index_backward":
        return part.attrs.get("kind") == "slice" and index_source(part.attrs["index"]) is not None
    if name == "cat":
        dtypes = {graph.values[v].dtype for v in part.value_args()}
        return len(dtypes) == 1 and all(math.prod(graph.values[v].shape) > 0
                                        for v in part.value_args())
    return part.op.alias == "reshape"


def emit(graph, part, weak, imports: list, setup: list) -> list:
    """The statements computing ``part`` (``supported``) once per loop step, appending the
    imports it needs and, to ``setup``, what runs once before the loop (the buffers a fused
    run writes, reused by every step: each step's values are consumed within the step)."""
    name_of = _name
    if isinstance(part, codegen.FusedGroup):
        if not part.stored:  # nothing it computes is read (a dead result): nothing to emit
            return []
        if part.flat and len(part.shape) > 1:
            return _call(graph, part, weak, imports)
        k = len(imports)
        lines, bodies = part.imports(prefix=f"_g{k}b")
        imports.extend(lines)
        if not bodies:  # (an alias-only run: nothing to compute)
            return _call(graph, part, weak, imports)
        outs = []
        for vid in part.stored:
            value = graph.values[vid]
            setup.append(f"o{vid} = np.empty({value.shape!r}, np.{value.dtype.name})")
            outs.append(f"o{vid}")
        lines, ins = [], []
        for vid, mode in zip(part.inputs, part.modes):
            if mode == "s" and vid not in weak:
                lines.append(f"s{vid} = {name_of(vid)}.ravel()[0]")
                ins.append(f"s{vid}")
            else:
                ins.append(name_of(vid))
        body = part.element_code(ins, outs, part.index(), bodies, local=f"e{k}_")
        lines += part.loops(body, outs[0])
        lines += [f"{name_of(vid)} = o{vid}" for vid in part.stored]
        return lines
    op, attrs = part.op.name, part.attrs
    src = [name_of(v) for v in part.value_args()]
    out = name_of(part.outputs[0])
    if op == "getitem_slice":
        return [f"{out} = {src[0]}[{index_source(attrs['index'])}]"]
    if op == "index_backward" or op == "cat":  # (the two emitters that write a buffer)
        # one buffer for every step (as a fused run's outputs): index_backward's zeros are
        # written once, each step rewrites only the slice; cat's pieces fill it completely
        value = graph.values[part.outputs[0]]
        buffer = f"o{part.outputs[0]}"
        fill = "zeros" if op == "index_backward" else "empty"
        setup.append(f"{buffer} = np.{fill}({value.shape!r}, np.{value.dtype.name})")
        if op == "index_backward":
            lines = [f"{buffer}[{index_source(attrs['index'])}] = {src[0]}"]
        else:
            dim = attrs["dim"] % len(value.shape)
            lines, start = [], 0
            for vid, piece in zip(part.value_args(), src):
                stop = start + graph.values[vid].shape[dim]
                index = ", ".join([":"] * dim + [f"{start}:{stop}"])
                lines.append(f"{buffer}[{index}] = {piece}")
                start = stop
        return lines + [f"{out} = {buffer}"]
    shape = graph.values[part.outputs[0]].shape
    return [f"{out} = np.ascontiguousarray({src[0]}).reshape({shape!r})"]


def _call(graph, part, weak, imports) -> list:
    """A fused run as a call of its own generated kernel, on fresh outputs."""
    name_of = _name
    module = part.module_name(parallel=False)
    alias = f"_k{len(imports)}"
    imports.append(f"from jitgrad._kernels.{module} import kernel as {alias}")
    lines, outs = [], []
    flat = part.flat
    size = math.prod(part.shape)
    for vid in part.stored:
        dt = graph.values[vid].dtype.name
        shape = (size,) if flat else part.shape
        lines.append(f"o{vid} = np.empty({shape!r}, np.{dt})")
        outs.append(f"o{vid}")
    args = []
    for vid, mode in zip(part.inputs, part.modes):
        if vid in weak:
            args.append(name_of(vid))
        elif mode == "s":
            args.append(f"{name_of(vid)}.ravel()[0]")
        elif flat:
            args.append(f"np.ascontiguousarray({name_of(vid)}).ravel()")
        else:
            args.append(name_of(vid))
    lines.append(f"{alias}({', '.join(outs + args)})")
    for vid in part.stored:
        shape = graph.values[vid].shape
        lines.append(f"{name_of(vid)} = o{vid}.reshape({shape!r})" if flat
                     else f"{name_of(vid)} = o{vid}")
    return lines


def _name(vid) -> str:
    return f"v{vid}"
