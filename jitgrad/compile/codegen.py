"""Code generation: each run of elementwise nodes becomes ONE generated Numba loop.

Note [compiled elementwise runs]: consecutive elementwise nodes of one result shape (forward
or backward: the traced backward rules are elementwise rows too) are a ``FusedGroup``. Its
kernel loops once over the shape and computes every node's scalar body per element, in order,
from the rows' own bodies (``op.forward``), with the compute and result dtypes dispatch chose
in the trace: no temporaries, and only the values used outside the group are stored. Operands
of other shapes are read through broadcast indices (nothing is materialised), 0-d values and
floats are scalars. The source is written as a file in the kernel cache (``cpu.load_generated``)
and compiled with jitgrad's disk cache (``kernel_cache.njit``), so a new process loads it from
disk; the import of each row body carries that body's source hash (Note [source keys] in
``kernels/sources.py``), so an edited body makes a new kernel, never a stale one. Small groups
run serial, large ones the ``prange`` variant (``cpu._parallel``, the threshold eager kernels
use).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from ..kernels.cpu import elementwise as cpu, kernel_cache, pool
from ..kernels import sources

_SCALAR_TYPES = (bool, int, float)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _alias(graph, node) -> bool:
    """A broadcast (read through broadcast indices) or a reshape of one element (a scalar):
    no computation of its own inside a run (the row's ``alias``, Note [what compile knows of
    a row])."""
    alias = node.op.alias
    if alias is None or len(node.args) != 1 or node.args[0][0] != "v":
        return False
    src = graph.values[node.args[0][1]]
    if src.dtype not in _FLOATS:
        return False
    return alias == "broadcast" or math.prod(src.shape) == 1


def literal(value) -> str:
    """A Python constant as source (``inf`` and ``nan`` as NumPy's names)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "np.nan" if math.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
    return repr(value)


def fusible(graph, node) -> bool:
    op = node.op
    if not op.elementwise:
        return _alias(graph, node)
    if node.compute_dtype not in _FLOATS:
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


def _shape(graph, node):
    """A node's result shape; None for a one-element alias (it joins a run of any shape)."""
    if node.op.elementwise:
        return node.shape
    shape = graph.values[node.outputs[0]].shape
    return None if math.prod(shape) == 1 else shape


def partition(graph, nodes, weak, live: set, min_run: int = 2):
    """``nodes`` as a list of single nodes and ``FusedGroup``s (runs of ``min_run`` or more
    fusible nodes of one shape). ``live``: values needed after these nodes (outputs, saved)."""
    users: dict = {}
    for k, node in enumerate(nodes):
        for vid in node.value_args():
            users.setdefault(vid, []).append(k)
    flags = []
    for node in nodes:
        ok = fusible(graph, node)
        if ok and not node.op.elementwise:  # an alias stays out if read outside a run
            vid = node.outputs[0]
            ok = vid not in live and all(fusible(graph, nodes[u]) for u in users.get(vid, ()))
        flags.append(ok)
    order = schedule(graph, nodes, flags)
    nodes = [nodes[k] for k in order]
    can_fuse = {k: flags[j] for k, j in enumerate(order)}
    users = {}
    for k, node in enumerate(nodes):
        for vid in node.value_args():
            users.setdefault(vid, []).append(k)
    out, run = [], []

    def stored_of(members):
        ids = {id(n) for n in members}
        first, last = run[0][0], run[-1][0]
        return [v for n in members for v in n.outputs
                if v in live or any(not first <= u <= last or id(nodes[u]) not in ids
                                    for u in users.get(v, ()))]

    def flush():
        if not run:
            return
        members = [n for _, n in run]
        stored = stored_of(members)
        # an alias read outside the run runs before it, on its own (its result has its own
        # shape, not the run's); one whose source the run makes keeps the run unfused
        outside = [n for n in members if not n.op.elementwise and n.outputs[0] in stored]
        made = {v for n in members for v in n.outputs}
        read_inside = {v for n in members for v in n.value_args()}
        before = [n for n in outside if n.args[0][1] not in made]
        after = [n for n in outside if n.args[0][1] in made and n.outputs[0] not in read_inside]
        if len(before) + len(after) == len(outside):
            out.extend(before)  # an alias of a value from before the run: it runs first
            members = [n for n in members if all(n is not o for o in outside)]
            stored = stored_of(members)
            outside = []
        else:
            after = []
        if not outside and sum(n.op.elementwise for n in members) >= min_run:
            # independent branches: a kernel each (one element: one kernel, calls cost most)
            one_element = run_shape[0] is not None and math.prod(run_shape[0]) <= 1
            for part in ([members] if one_element else _components(members)):
                if sum(n.op.elementwise for n in part) >= min_run:
                    out.extend(bounded_groups(graph, part, [v for v in stored if any(
                        v in n.outputs for n in part)], weak))
                else:
                    out.extend(part)
        else:
            out.extend(members)
        out.extend(after)  # an alias of a value the run made, read only after it
        run.clear()

    run_shape = [None]
    for k, node in enumerate(nodes):
        shape = _shape(graph, node)
        if can_fuse[k] and (shape is None or run_shape[0] is None or shape == run_shape[0]):
            if shape is not None:
                run_shape[0] = shape
            run.append((k, node))
            continue
        flush()
        run_shape[0] = None
        if can_fuse[k]:
            run_shape[0] = shape
            run.append((k, node))
        else:
            out.append(node)
    flush()
    return out


def _reads(node) -> list:
    from .trace import CtxRef

    return list(node.value_args()) + [v.vid for v in node.attrs.values() if isinstance(v, CtxRef)]


def _writes(node) -> list:
    tape = getattr(node, "tape", None)  # a loop's tape (Note [loop tape])
    return list(node.outputs) + list(node.ctx.values()) + ([tape] if tape is not None else [])


def schedule(graph, nodes, fusible_flags) -> list:
    """An order of ``nodes`` (indices) that keeps every dependency and the relative order of
    the nodes that cannot fuse, and moves fusible nodes next to others of their shape, so the
    runs ``partition`` makes are as long and as few as possible: greedily continue the current
    run; when it cannot continue, run a ready unfusible node first (it may free more nodes of
    the run's shape), else start a new run at the earliest ready node."""
    writer = {}
    for k, node in enumerate(nodes):
        for vid in _writes(node):
            writer[vid] = k
    waiting = [0] * len(nodes)
    dependents: list = [[] for _ in nodes]
    previous_fixed = None
    for k, node in enumerate(nodes):
        deps = {writer[v] for v in _reads(node) if writer.get(v, k) < k}
        if not fusible_flags[k]:
            if previous_fixed is not None:
                deps.add(previous_fixed)
            previous_fixed = k
        waiting[k] = len(deps)
        for d in deps:
            dependents[d].append(k)
    ready = [k for k in range(len(nodes)) if waiting[k] == 0]
    order, run_shape = [], None
    while ready:
        pick = None
        if run_shape is not None:
            pick = next((k for k in sorted(ready) if fusible_flags[k] and
                         _shape(graph, nodes[k]) in (None, run_shape)), None)
        if pick is None:
            fixed = [k for k in ready if not fusible_flags[k]]
            pick = min(fixed) if fixed else min(ready)
            run_shape = None
        if fusible_flags[pick] and _shape(graph, nodes[pick]) is not None:
            run_shape = _shape(graph, nodes[pick])
        ready.remove(pick)
        order.append(pick)
        for d in dependents[pick]:
            waiting[d] -= 1
            if waiting[d] == 0:
                ready.append(d)
    if len(order) != len(nodes):  # (a cycle cannot happen in a trace: keep the given order)
        return list(range(len(nodes)))
    return order


#: the most elementwise nodes one generated kernel computes (Note [bounded kernels])
MAX_GROUP_NODES = 96
#: the fewest elements for which a kernel inlines the rows' bodies (Note [bounded kernels])
INLINE_MIN_ELEMENTS = 64


def bounded_groups(graph, members, stored, weak) -> list:
    """``members`` (a fusible run, in order) as ``FusedGroup``s of at most ``MAX_GROUP_NODES``
    elementwise nodes each.

    Note [bounded kernels]: LLVM's time and memory grow faster than linearly with the length of
    one function, so a run of thousands of nodes (an unrolled Python loop: the trace of
    ``for t in range(300): c = tanh(c * w + xs[t])`` and its backward) compiled as one kernel
    took minutes and gigabytes. Runs are cut into pieces of bounded size instead, and the cuts
    fall a whole number of the run's periods apart (``_period``): the pieces of a repeated body
    then have the same source (local names are numbered per kernel), so they share ONE compiled
    kernel (``cpu.load_generated`` keys by the source's hash) and the compile cost is that of a
    few distinct pieces, whatever the trip count. Values one piece makes and a later piece reads
    are stored by the first and read by the second; an alias (broadcast) is repeated in each
    piece that reads it (it costs nothing)."""
    elementwise = [k for k, n in enumerate(members) if n.op.elementwise]
    if len(elementwise) <= MAX_GROUP_NODES:
        return [FusedGroup(graph, members, stored, weak)]
    tokens = _tokens(graph, members)
    pieces, start = [], 0
    while start < len(members):
        period = _period(tokens, start)
        if period > 1:  # whole periods: the next piece starts at the same phase
            per_period = sum(n.op.elementwise for n in members[start:start + period]) or 1
            end = start + max(1, MAX_GROUP_NODES // per_period) * period
        else:
            end, count = start, 0
            while end < len(members) and count < MAX_GROUP_NODES:
                count += bool(members[end].op.elementwise)
                end += 1
        pieces.append(members[start:end])
        start = end
    alias_of = {n.outputs[0]: n for n in members if not n.op.elementwise}
    for j, piece in enumerate(pieces):  # an alias read here but made elsewhere is repeated
        own = {id(n) for n in piece}
        extra = [alias_of[v] for n in piece for v in n.value_args()
                 if v in alias_of and id(alias_of[v]) not in own]
        pieces[j] = list({id(a): a for a in extra}.values()) + piece
    readers: dict = {}
    for j, piece in enumerate(pieces):
        for n in piece:
            for v in n.value_args():
                readers.setdefault(v, set()).add(j)
    groups = []
    for j, piece in enumerate(pieces):
        out = [v for n in piece if n.op.elementwise for v in n.outputs
               if v in stored or readers.get(v, {j}) - {j}]
        groups.append(FusedGroup(graph, piece, out, weak))
        groups[-1].piece = True
    return groups


def _tokens(graph, members) -> list:
    """What each node of ``members`` does, as a comparable token: the op, dtypes, constants,
    and where each argument comes from (the distance back to its maker in the run, or the
    shape of a value from outside it). Equal token windows generate the same kernel source."""
    position = {v: k for k, n in enumerate(members) for v in n.outputs}
    shape = next(n.shape for n in members if n.op.elementwise)
    tokens = []
    for k, n in enumerate(members):
        # (a value of the run's shape read from outside is read as one made by an earlier
        # piece is: a full-shape input)
        args = tuple(("c", r[1]) if r[0] != "v" else
                     ("i", k - position[r[1]]) if r[1] in position else
                     ("o",) if graph.values[r[1]].shape == shape else
                     ("e", graph.values[r[1]].shape) for r in n.args)
        tokens.append((n.op.name, str(getattr(n, "compute_dtype", "")), args,
                       tuple(repr(n.attrs.get(a)) for a in getattr(n.op, "attrs", ()))))
    return tokens


def _period(tokens, start: int) -> int:
    """The smallest p <= ``MAX_GROUP_NODES`` with which the tokens from ``start`` on repeat
    over the next ``MAX_GROUP_NODES`` nodes (1 when none does): pieces a whole number of
    periods long then start at the same phase. Note [bounded kernels]."""
    def seen_from(first, k):
        # an argument made before the piece's first node is read from outside it, however far
        op, dtype, args, attrs = tokens[first + k]
        return op, dtype, tuple(("o",) if a[0] == "i" and a[1] > k else a for a in args), attrs

    window = min(MAX_GROUP_NODES, len(tokens) - start)
    for p in range(1, MAX_GROUP_NODES + 1):
        span = min(window, len(tokens) - start - p)
        if span < p:
            break
        if all(seen_from(start, k) == seen_from(start + p, k) for k in range(span)):
            return p
    return 1


def _components(members) -> list:
    """``members`` (in order) split into the groups that share no value made among them: the
    independent branches of a run (a kernel reading every branch's arrays at once streams too
    many arrays per element to be fast)."""
    parent = list(range(len(members)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    maker = {v: i for i, n in enumerate(members) for v in n.outputs}
    for i, n in enumerate(members):
        for v in n.value_args():
            j = maker.get(v)
            if j is not None:
                parent[find(i)] = find(j)
    groups: dict = {}
    for i, n in enumerate(members):
        groups.setdefault(find(i), []).append(n)
    return sorted(groups.values(), key=lambda g: members.index(g[0]))


class FusedGroup:
    """Elementwise nodes of one shape run as one generated kernel (Note [compiled elementwise
    runs])."""

    def __init__(self, graph, nodes, stored, weak):
        self.nodes = nodes
        self.shape = next(n.shape for n in nodes if n.op.elementwise)
        self.stored = stored
        made = {v for n in nodes for v in n.outputs}
        self.inputs = []  # value ids read from outside the group, in first-use order
        for n in nodes:
            for vid in n.value_args():
                if vid not in made and vid not in self.inputs:
                    self.inputs.append(vid)
        self.graph = graph
        self.weak = weak
        self.piece = False  # one piece of a run cut by ``bounded_groups``
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
        # Note [bounded kernels]: Numba's inlining of every body costs most of a kernel's
        # compile time; it pays only where a loop over many elements vectorises
        self.inline = math.prod(self.shape) >= INLINE_MIN_ELEMENTS
        self._kernels = {}

    def imports(self, prefix: str = "_b") -> tuple:
        """``(import lines, {body: alias})`` for the rows' scalar bodies (inlined)."""
        lines, bodies = [], {}
        for n in self.nodes:
            body = n.op.forward
            if n.op.elementwise and body not in bodies:
                alias = f"{prefix}{len(bodies)}"
                bodies[body] = alias
                lines.append(f"from {body.__module__} import {body.__name__} as {alias}_py"
                             f"  # {sources.body_digest(body)}")
                inline = ", inline='always'" if self.inline else ""
                lines.append(f"{alias} = njit(nogil=True, error_model='numpy'{inline})"
                             f"({alias}_py)")
        return lines, bodies

    def element_code(self, inputs: list, outputs: list, index: str, bodies: dict,
                     local: str = "v") -> list:
        """The statements computing one element: ``inputs[k]`` names input k's array (or
        scalar), ``outputs[j]`` stored value j's array; ``index`` the element's index."""
        graph, nd = self.graph, len(self.shape)
        names = {}
        for name, vid, mode in zip(inputs, self.inputs, self.modes):
            if mode == "s":
                names[vid] = name
            elif mode == "f":
                names[vid] = f"{name}[{index}]"
            else:  # the operand's own dims: the last ones of the padded shape
                own = len(graph.values[vid].shape)
                names[vid] = "{}[{}]".format(name, ", ".join(
                    "0" if size == 1 else f"i{d}" for d, size in enumerate(mode)
                    if d >= nd - own))
        lines = []
        for n in self.nodes:
            if not n.op.elementwise:  # an alias: read its source
                names[n.outputs[0]] = names[n.args[0][1]]
                continue
            dt = n.compute_dtype.name
            args = []
            for r in n.args:
                if r[0] == "c":
                    args.append(f"np.{dt}({literal(r[1])})")
                else:
                    v = graph.values[r[1]]
                    name = names[r[1]]
                    args.append(name if v.dtype == n.compute_dtype else f"np.{dt}({name})")
            args += [literal(n.attrs[a]) for a in n.op.attrs]
            call = f"{bodies[n.op.forward]}({', '.join(args)})"
            if n.out_dtype != n.compute_dtype and n.out_dtype != np.dtype(bool):
                call = f"np.{n.out_dtype.name}({call})"
            # local names numbered within the group: groups computing the same thing (the
            # branches of a wide graph) have the same source, hence one compiled kernel
            name = f"{local}{len(lines)}"
            lines.append(f"{name} = {call}")
            names[n.outputs[0]] = name
        lines += [f"{out}[{index}] = {names[vid]}" for out, vid in zip(outputs, self.stored)]
        return lines

    def loops(self, body: list, first_out: str, loop: str = "range") -> list:
        """``body`` inside the loop nest over the group's shape (``first_out``: an output array
        of that shape, or of its size when the group is flat)."""
        if self.flat:
            return [f"for i in {loop}({first_out}.size):"] + ["    " + ln for ln in body]
        lines = []
        for d in range(len(self.shape)):
            lines.append("    " * d + f"for i{d} in {loop if d == 0 else 'range'}"
                         f"({first_out}.shape[{d}]):")
        return lines + ["    " * len(self.shape) + ln for ln in body]

    def index(self) -> str:
        return "i" if self.flat else ", ".join(f"i{d}" for d in range(len(self.shape)))

    def source(self, parallel: bool) -> str:
        imports, bodies = self.imports()
        ins = [f"a{k}" for k in range(len(self.inputs))]
        outs = [f"o{j}" for j in range(len(self.stored))]
        body = self.element_code(ins, outs, self.index(), bodies)
        flags = "nogil=True, error_model='numpy'" + (", parallel=True" if parallel else "")
        lines = ["# Generated by jitgrad.compile (Note [compiled elementwise runs]); do not edit.",
                 "import numpy as np", "from numba import njit, prange",
                 "from jitgrad.kernels.cpu.kernel_cache import njit as cached_njit", *imports, "",
                 f"@cached_njit({flags})", f"def kernel({', '.join(outs + ins)}):"]
        lines += ["    " + ln for ln in self.loops(body, "o0", "prange" if parallel else "range")]
        return "\n".join(lines) + "\n"

    def module_name(self, parallel: bool) -> str:
        """The generated module's name (written and imported on first use)."""
        self.kernel(parallel)
        return self._kernels[parallel][0]

    def kernel(self, parallel: bool):
        entry = self._kernels.get(parallel)
        if entry is None:
            src = self.source(parallel)
            name = "jgc_" + hashlib.sha1(src.encode()).hexdigest()[:20]
            kernel = kernel_cache.read_only_inputs(cpu.load_generated(name, src).kernel,
                                                   range(len(self.stored)))  # Note [read-only inputs]
            entry = self._kernels[parallel] = (name, kernel)
        return entry[1]

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
        if nbytes < min(cpu.PARALLEL_MIN_BYTES, pool.CPU.min_bytes) and math.prod(shape) == 1:
            return self._small_step(plan, out_dtypes)

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

    def _small_step(self, plan, out_dtypes):
        """The step of a one-element group (0-d losses, W1-sized functions), where the
        per-call Python is the cost: serial kernel, plain ``np.empty``, nothing recomputed per
        call. Scalars are read as Python numbers where that keeps the dtype (float64, int64,
        bool: Numba types them alike, and a Python float crosses the dispatcher in 0.24 us
        against 0.39 us for a NumPy scalar), else by ``a[()]``, which keeps it."""
        shape, stored = self.shape, self.stored
        as_python = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool))
        reads = [(vid, dt.type, dt in as_python, dt == np.float64) for vid, _, dt in plan]
        kernel = []  # compiled on the first call (``kernel`` loads the generated module)
        empty = np.empty

        def step(env):
            args = []
            for vid, to_scalar, python, f64 in reads:
                a = env[vid]
                if type(a) is np.ndarray:
                    args.append(a.item() if python else a.reshape(-1)[0])
                else:  # a float argument of the function
                    args.append(a if f64 and type(a) is float else to_scalar(a))
            outs = [empty(1, dt) for dt in out_dtypes]
            if not kernel:
                kernel.append(self.kernel(False))
            kernel[0](*outs, *args)
            for vid, o in zip(stored, outs):
                env[vid] = o.reshape(shape)
        return step
