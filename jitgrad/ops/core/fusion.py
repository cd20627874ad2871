"""Fused backward: a region of elementwise nodes runs as one generated kernel.

Note [fused backward]: the engine hands an elementwise node the *region* below it (Note [fused
regions] in ``engine/regions.py``): elementwise nodes of its output shape and dtype whose whole
gradient is computed inside the region. Run node by node, every node writes a full-size gradient
that the next one reads back, and pays the Python cost of a node, per node and input. Fused, the
region is ONE kernel whose scalar body is generated here from the ops' own backward bodies (the
same derivative formulas, so one rule still serves every path)::

    def fused_<digest>(g, a1, a2):
        c0 = b0(g, a1)            # CosBackward0 -> its input: a member of the region
        g1 = c0
        c1 = b1(g1, a2)           # MulBackward0 (x * x): both inputs are x, outside
        c2 = b2(g1, a2)
        return c1 + c2            # the gradients leaving through one edge, summed

``g`` is the root's gradient and ``a<k>`` the saved operands (one per array, however many nodes
saved it), read per element (scalars,
broadcast rows/columns and stride-0 gradients as in every elementwise kernel: ``kernels.cpu.elementwise``).
Gradients leaving through the same outside edge are summed inside the kernel (in member order,
whatever order threads would have delivered them: deterministic), and two edges that receive the
very same value (``a + b`` under a ReLU, say) share one output. The body is compiled once per
region *structure* (ops, which inputs need gradients, where each gradient goes) and kept on disk
like every generated kernel; the engine fuses only regions of ``FUSION_MIN_ELEMENTS`` gradient
elements or more, where that compile pays for itself, and only on real floating CPU tensors
outside transforms (anything else runs node by node, as before).
"""
from __future__ import annotations

import hashlib
import sys
import threading
from typing import NamedTuple

import numpy as np

from ...kernels.cpu import elementwise as cpu
from ...kernels import sources
from ...graph.node import Destination, FusedGradients
from . import dispatch
from .bodies import passthrough

_FUSED: dict = {}  # _Structure -> (body or None, output of each outside edge), or None
# CPython passes more than 30 arguments as a tuple (CALL_FUNCTION_EX), which Numba cannot inline
MAX_OPERANDS = 28
_lock = threading.Lock()


class _Structure(NamedTuple):
    """What a region's generated body depends on (the key of its compiled kernel):
    ``n_edges`` outside edges; per member, ``(op name, destination of each input's gradient or
    None)``; the operand index of each saved value the bodies read, in order; and
    ``(outside edge, operand index)`` of each waiting partial sum added in."""

    n_edges: int
    members: tuple
    slots: tuple
    partials: tuple


def apply_fused(region, g):
    """The gradients leaving ``region`` (a ``FusedRegion``, Note [fused regions] in
    engine/regions.py) through its outside edges, computed by one kernel, as
    ``FusedGradients``; None to decline (run node by node). ``g``: the root's gradient.
    A partial sum the engine hands over for an edge (``region.partials``) is added into the
    kernel's output for that edge where it can (one pass, not two) and listed in ``added``.
    The output is a new array, not the partial's: a kernel writing over an operand it reads
    fails LLVM's alias check and runs unvectorised (docs/engine.md, 'Measurements behind the
    code')."""
    nodes, n_edges = region.nodes, region.n_edges
    data = g._data
    if type(data) is not np.ndarray:  # CUDA: node by node (its kernels queue asynchronously)
        nodes[0]._fusible = False  # no need to ask again
        return None
    if data.dtype.kind != "f" or data.dtype.itemsize < 4 or dispatch.transform_hook is not None:
        return None
    members, operands, slots, seen = [], [data], [], {}
    for node, node_destinations in zip(nodes, region.destinations):
        op = node._op
        params = op.params
        entry = [op.name]
        for name, dest, need in zip(op.inputs, node_destinations, node.needs_input_grad):
            if dest is None or not need:
                entry.append(None)
                continue
            entry.append(dest)
            for param in params[name]:
                value = node._saved_value(param)  # checks versions: raises as the node would
                if type(value) is np.ndarray:
                    if value.dtype.kind == "c":
                        return None
                elif isinstance(value, complex) or not isinstance(value, (bool, int, float,
                                                                           np.number)):
                    return None  # a complex scalar, or a CUDA array
                # one operand per array however many nodes saved it (x in x * x, say)
                slot = seen.get(id(value)) if type(value) is np.ndarray else None
                if slot is None:
                    slot = len(operands)
                    operands.append(value)
                    if type(value) is np.ndarray:
                        seen[id(value)] = slot
                slots.append(slot)
        members.append(tuple(entry))
    shape, dt = nodes[0]._output_meta[0][0], data.dtype
    partials = []  # (edge, operand index) of the partial sums added into
    if region.partials is not None:
        for t, old in enumerate(region.partials):
            a = old._data if type(old) is dispatch.Tensor else None
            if (type(a) is np.ndarray and a.shape == shape and a.dtype == dt
                    and a.flags.c_contiguous and a.flags.writeable):
                partials.append((t, len(operands)))
                operands.append(a)
    if len(operands) > MAX_OPERANDS:
        return None
    key = _Structure(n_edges, tuple(members), tuple(slots), tuple(partials))
    if key not in _FUSED:
        with _lock:
            if key not in _FUSED:
                _FUSED[key] = _build(nodes, key)
    fused = _FUSED[key]
    if fused is None:  # a body this module cannot import: node by node
        return None
    body, which = fused
    if body is None:
        return FusedGradients([None] * n_edges, ())
    n_out = 1 + max(w for w in which if w is not None)
    result = cpu.elementwise(body, operands, shape, dt, dt, n_out=n_out)
    result = [dispatch.Tensor._make(r) for r in (result if n_out > 1 else (result,))]
    added = tuple(t for t, _ in partials if which[t] is not None)
    return FusedGradients([None if w is None else result[w] for w in which], added)


def _importable(body) -> bool:
    module = sys.modules.get(body.__module__)
    return module is not None and getattr(module, body.__name__, None) is body


def _build(nodes, key: _Structure):
    """Generate and load the fused body for a region structure ``key`` (see the Note); None
    when a derivative body is not importable by name (the generated module imports it)."""
    slots, partials = iter(key.slots), dict(key.partials)
    lines, imports = [], {}
    contributions: dict = {}  # Destination -> terms of the gradient it receives
    for k, (node, entry) in enumerate(zip(nodes, key.members)):
        op = node._op
        if k == 0:
            grad = "g"
        else:
            terms = contributions.pop(Destination(False, k), None)
            grad = f"g{k}" if terms else None
            if terms:
                lines.append(f"    g{k} = {' + '.join(terms)}")
        for name, dest in zip(op.inputs, entry[1:]):
            if dest is None:
                continue
            args = [f"a{next(slots)}" for _ in op.params[name]]
            if grad is None:
                continue
            body = op.backward[name]
            if body is passthrough:
                term = grad
            else:
                if not _importable(body):
                    return None
                alias = imports.setdefault(body, f"b{len(imports)}")
                term = f"c{len(lines)}"
                lines.append(f"    {term} = {alias}({', '.join([grad] + args)})")
            contributions.setdefault(dest, []).append(term)
    outputs, which = [], []
    for t in range(key.n_edges):
        terms = contributions.get(Destination(True, t))
        if not terms:
            which.append(None)
            continue
        expr = " + ".join(terms)
        if t in partials:  # the engine's partial sum first, as its in-place add would do
            expr = f"a{partials[t]} + ({expr})"
        if expr not in outputs:
            outputs.append(expr)
        which.append(outputs.index(expr))
    if not outputs:
        return None, which
    returned = outputs[0] if len(outputs) == 1 else "(" + ", ".join(outputs) + ")"
    lines.append(f"    return {returned}")
    header = ["# Generated by jitgrad.ops.core.fusion (Note [fused backward]); do not edit.",
              "from numba import njit"]
    for body, alias in imports.items():
        # the component's source hash: an edited derivative (or a helper it calls) makes a new
        # file, not a stale kernel (Note [source keys] in kernels/sources.py)
        digest = sources.body_digest(body)
        header += [f"from {body.__module__} import {body.__name__} as _{alias}  # {digest}",
                   f"{alias} = njit(nogil=True, error_model='numpy', inline='always')(_{alias})"]
    n_args = 1 + max([*key.slots, *partials.values()], default=0)  # operand 0 is g
    params = ", ".join(["g"] + [f"a{j}" for j in range(1, n_args)])
    text = "\n".join(header + ["", "", f"def fused({params}):"] + lines) + "\n"
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    name = f"fused_{digest}"
    module = cpu.load_generated(f"jg_{name}", text.replace("def fused(", f"def {name}("))
    return getattr(module, name), which
