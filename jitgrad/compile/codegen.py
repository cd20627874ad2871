"""Code generation: each run of elementwise nodes becomes ONE generated Numba loop.

Note [compiled elementwise runs]: consecutive elementwise nodes of one result shape (forward
or backward: the traced backward rules are elementwise rows too) are a ``FusedGroup``. Its
kernel loops once over the shape and computes every node's scalar body per element, in order,
from the rows' own bodies (``op.forward``), with the compute and result dtypes dispatch chose
in the trace: no temporaries, and only the values used outside the group are stored. Operands
of other shapes are read through broadcast indices (nothing is materialised), 0-d values and
floats are scalars. The source is written as a file in the kernel cache (``cpu.load_generated``)
and compiled with ``cache=True``, so a new process loads it from disk. Small groups run serial,
large ones the ``prange`` variant (``cpu._parallel``, the threshold eager kernels use).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from ..device import cpu, pool

_SCALAR_TYPES = (bool, int, float)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _fusible(graph, node) -> bool:
    op = node.op
    if not op.elementwise or node.compute_dtype not in _FLOATS:
        return False
    if node.out_dtype not in _FLOATS and node.out_dtype != np.dtype(bool):
        return False
    for r in node.args:
        if r[0] == "c" and type(r[1]) not in _SCALAR_TYPES:
            return False
        if r[0] == "v":
            v = graph.values[r[1]]
            if v.dtype not in _FLOATS and v.dtype != np.dtype(bool):
                return False
    return all(type(node.attrs[a]) in _SCALAR_TYPES for a in op.attrs)


def partition(graph, nodes, weak, live: set):
    """``nodes`` as a list of single nodes and ``FusedGroup``s (runs of two or more fusible
    nodes of one shape). ``live``: values needed after these nodes (outputs, saved)."""
    users: dict = {}
    for k, node in enumerate(nodes):
        for vid in node.value_args():
            users.setdefault(vid, []).append(k)
    out, run = [], []

    def flush():
        if len(run) >= 2:
            members = {id(n) for _, n in run}
            first, last = run[0][0], run[-1][0]
            stored = [v for _, n in run for v in n.outputs
                      if v in live or any(not first <= u <= last or id(nodes[u]) not in members
                                          for u in users.get(v, ()))]
            out.append(FusedGroup(graph, [n for _, n in run], stored, weak))
        else:
            out.extend(n for _, n in run)
        run.clear()

    for k, node in enumerate(nodes):
        if _fusible(graph, node) and (not run or run[0][1].shape == node.shape):
            run.append((k, node))
            continue
        flush()
        if _fusible(graph, node):
            run.append((k, node))
        else:
            out.append(node)
    flush()
    return out


class FusedGroup:
    """Elementwise nodes of one shape run as one generated kernel (Note [compiled elementwise
    runs])."""

    def __init__(self, graph, nodes, stored, weak):
        self.nodes = nodes
        self.shape = nodes[0].shape
        self.stored = stored
        made = {v for n in nodes for v in n.outputs}
        self.inputs = []  # value ids read from outside the group, in first-use order
        for n in nodes:
            for vid in n.value_args():
                if vid not in made and vid not in self.inputs:
                    self.inputs.append(vid)
        self.graph = graph
        self.weak = weak
        # how each input is read: "s" scalar, "f" full shape, or a broadcast (padded shape)
        nd = len(self.shape)
        self.modes = []
        for vid in self.inputs:
            shape = graph.values[vid].shape
            if vid in weak or math.prod(shape) == 1:
                self.modes.append("s")
            elif shape == self.shape:
                self.modes.append("f")
            else:
                self.modes.append((1,) * (nd - len(shape)) + tuple(shape))
        self.flat = all(m in ("s", "f") for m in self.modes)
        self._kernels = {}

    def source(self, parallel: bool) -> str:
        graph, shape = self.graph, self.shape
        nd = len(shape)
        lines, imports, bodies = [], [], {}
        for n in self.nodes:
            body = n.op.forward
            if body not in bodies:
                alias = f"_b{len(bodies)}"
                bodies[body] = alias
                imports.append(f"from {body.__module__} import {body.__name__} as {alias}_py")
                imports.append(f"{alias} = njit(nogil=True, error_model='numpy', "
                               f"inline='always')({alias}_py)")
        if self.flat:
            index = "i"
        else:
            index = ", ".join(f"i{d}" for d in range(nd))
        names = {}
        for k, (vid, mode) in enumerate(zip(self.inputs, self.modes)):
            if mode == "s":
                names[vid] = f"a{k}"
            elif mode == "f":
                names[vid] = f"a{k}[{index}]"
            else:
                names[vid] = "a{}[{}]".format(k, ", ".join(
                    "0" if size == 1 else f"i{d}" for d, size in enumerate(mode)))
        body_lines = []
        for n in self.nodes:
            dt = n.compute_dtype.name
            args = []
            for r in n.args:
                if r[0] == "c":
                    args.append(f"np.{dt}({r[1]!r})")
                else:
                    v = graph.values[r[1]]
                    name = names[r[1]]
                    args.append(name if v.dtype == n.compute_dtype else f"np.{dt}({name})")
            args += [repr(n.attrs[a]) for a in n.op.attrs]
            out = n.outputs[0]
            call = f"{bodies[n.op.forward]}({', '.join(args)})"
            if n.out_dtype != n.compute_dtype and n.out_dtype != np.dtype(bool):
                call = f"np.{n.out_dtype.name}({call})"
            body_lines.append(f"v{out} = {call}")
            names[out] = f"v{out}"
        for j, vid in enumerate(self.stored):
            body_lines.append(f"o{j}[{index}] = v{vid}")
        outs = ", ".join(f"o{j}" for j in range(len(self.stored)))
        ins = ", ".join(f"a{k}" for k in range(len(self.inputs)))
        flags = "nogil=True, cache=True, error_model='numpy'" + (", parallel=True"
                                                               if parallel else "")
        lines = ["# Generated by jitgrad.compile (Note [compiled elementwise runs]); do not edit.",
                 "import numpy as np", "from numba import njit, prange", *imports, "",
                 f"@njit({flags})", f"def kernel({outs}, {ins}):"]
        loop = "prange" if parallel else "range"
        if self.flat:
            lines.append(f"    for i in {loop}(o0.size):")
            depth = 2
        else:
            for d in range(nd):
                lines.append("    " * (d + 1) + f"for i{d} in {loop if d == 0 else 'range'}"
                             f"(o0.shape[{d}]):")
            depth = nd + 1
        lines += ["    " * depth + line for line in body_lines]
        return "\n".join(lines) + "\n"

    def kernel(self, parallel: bool):
        kern = self._kernels.get(parallel)
        if kern is None:
            src = self.source(parallel)
            name = "jgc_" + hashlib.sha1(src.encode()).hexdigest()[:20]
            kern = self._kernels[parallel] = cpu.load_generated(name, src).kernel
        return kern

    def step(self):
        graph, shape = self.graph, self.shape
        flat_shape = (math.prod(shape),) if self.flat else shape
        out_dtypes = [graph.values[v].dtype for v in self.stored]
        stored = self.stored
        plan = []
        for vid, mode in zip(self.inputs, self.modes):
            dt = graph.values[vid].dtype
            plan.append((vid, mode, dt))
        nbytes = math.prod(shape) * 8
        flat = self.flat

        def step(env):
            args = []
            for vid, mode, dt in plan:
                a = env[vid]
                if mode == "s":
                    a = dt.type(a) if not isinstance(a, np.ndarray) else a.reshape(-1)[0]
                elif flat:
                    a = a.reshape(-1) if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(-1)
                args.append(a)
            outs = [pool.empty(flat_shape, dt) for dt in out_dtypes]
            if flat_shape[0] if flat else math.prod(shape):
                self.kernel(cpu._parallel(nbytes))(*outs, *args)
            for vid, o in zip(stored, outs):
                env[vid] = o.reshape(shape) if flat else o
        return step
