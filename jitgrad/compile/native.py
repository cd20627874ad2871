"""Native segments: a run of a program's steps as ONE generated Numba function.

Note [native segments]: a compiled program is a list of steps (``program.build_steps``), each a
Python call (``step(env)``) into a kernel: a fused elementwise kernel, or a composite row's
array-level forward. On small arrays those Python calls are the whole cost (eight schools, a
10-parameter log density: 16 steps, 58 µs, where the arithmetic takes well under 1 µs). So a
maximal run of steps that all have a native form (two of them computing: ``_computes``)
becomes one generated ``njit`` function that allocates the intermediates and runs, in order,
the kernels the steps call (Note [inlined callees]):

- a fused group (``codegen.FusedGroup``) runs its own generated kernel (the same source),
  except a piece of a run cut by ``codegen.bounded_groups`` (an unrolled Python loop): it
  stays a step of its own, whose one compiled kernel every repeat of the piece shares. In
  segments, each segment's code was new: a 100-step unrolled loop's program took 19 s to
  compile and a 300-step one 226 s; as steps, 3.5 s for either (docs/compile.md);
- an identity view is a name for its source's array;
- a composite row with an emitter here (``EMITTERS``: reductions through jitgrad's own fold
  kernels, softmax, log_softmax and logsumexp through the kernel eager runs, the views and
  shape rows through Numba's NumPy, ``cat``, basic indexing and its backward, small matrix
  products through Numba's BLAS call, ``nll_loss`` through the eager row's kernels) emits its
  forward inline; an emitter refuses (returns False) attributes, sizes or dtypes it does not
  cover.

Note [inlined callees]: a segment calls each kernel through ``kernel_cache.inline_copy``: an
``inline='always'`` copy of the kernel's Python function, so Numba types it as part of the
segment and LLVM optimises its code once, in the segment. Called as a compiled function
instead, Numba links the callee's optimised module into the segment's and LLVM optimises it
again there (inlining it); the segments of the op database's programs took 15% longer to
compile that way (docs/compile.md, 'Native segments'). The copy is made only for a kernel
compiled with the segment's own options (``kernel_cache.CALLER_OPTIONS``): the fast-math sum
folds and parallel kernels are called, so every kernel keeps its flags and its bits. And only
for a short kernel (``MAX_INLINED_OPS``) the segment calls once: Numba's inlining of a long
fused kernel cost more than LLVM's second optimisation of it (the pieces of a 100-step
unrolled loop, when they still joined segments: 33 s inlined, 19 s called).

A segment reads its inputs from the value table and writes back only the values read after it,
so the rest of the program (outputs, saved values, the backward node) is unchanged. Only serial
work joins a segment: a kernel that would run its parallel variant (``cpu._parallel``, decided
per call by the engine's policy) stays a step of its own. The generated source names every
kernel module it calls (their names are hashes of their sources) and is cached on disk like
the kernels (``cpu.load_generated``), so an edited row or kernel makes a new segment.
"""
from __future__ import annotations

import functools
import hashlib
import math
import os

import numpy as np

from ..kernels.cpu import blas_pool, elementwise as cpu, reduce as cpu_reduce
from ..kernels.cpu import softmax as cpu_softmax
from ..kernels.cpu.kernel_cache import CheckFailed
from . import codegen, segment

#: off: every step runs on its own (``JITGRAD_COMPILE_NATIVE=0``, for comparisons)
ENABLED = os.environ.get("JITGRAD_COMPILE_NATIVE", "1") != "0"
#: Note [inlined callees]: a call with more arguments is compiled by CPython as a call with
#: ``*args`` (past its stack-use guideline of 30), which Numba cannot inline: a plain call
MAX_INLINED_ARGS = 28
#: Note [inlined callees]: the most fused operations of a kernel a segment inlines
MAX_INLINED_OPS = 12
#: fewest computing steps worth a segment (one gains nothing from becoming one native call)
MIN_SEGMENT_STEPS = 2
#: the largest matrix product (multiply-adds) a segment computes (``_matmul``)
MAX_NATIVE_MATMUL = 1 << 18


def _dt(dtype) -> str:
    return f"np.{np.dtype(dtype).name}"


def _tuple(shape) -> str:
    return "(" + "".join(f"{int(s)}, " for s in shape) + ")"


def _ints(*values) -> str:
    """Integer arguments of a called kernel, typed ``int64``: Numba types a bare constant as a
    literal and compiles the callee anew for each value (a fold kernel per array size)."""
    return ", ".join(f"np.int64({int(v)})" for v in values)


class _Emit:
    """The source of one segment being written: lines, imported kernels, value names."""

    def __init__(self, graph, weak, prefix: str = ""):
        self.graph, self.weak, self.prefix = graph, weak, prefix
        self.lines: list = []
        self.imports: dict = {}  # (module path, name, inlined) -> alias
        self.calls: dict = {}  # the same key -> how many calls the source makes
        self.count = 0
        self.made: set = set()  # values this segment computes (arrays, weak ones too)
        self.transposed: dict = {}  # value -> the name of the matrix it is the transpose of
        self.checks = 0  # value checks emitted (Note [value checks])
        self.blas_order = 0  # the largest matrix order a BLAS call here takes (0: none)

    def kernel(self, module: str, attr: str = "kernel", n_args: int = 0, n_ops: int = 1) -> str:
        """The name the source calls kernel ``module.attr`` by (with ``n_args`` arguments,
        computing ``n_ops`` elementwise operations per element)."""
        inline = n_args <= MAX_INLINED_ARGS and n_ops <= MAX_INLINED_OPS
        key = (module, attr, inline)
        alias = self.imports.get(key)
        if alias is None:
            alias = self.imports[key] = f"_{self.prefix}k{len(self.imports)}"
        self.calls[key] = self.calls.get(key, 0) + 1
        return alias

    def tmp(self) -> str:
        self.count += 1
        return f"{self.prefix}t{self.count}"

    def import_lines(self) -> list:
        """Imports of the kernels called: a kernel called once through ``inline_copy`` (Note
        [inlined callees]), one called more often as it is; ``_NOC``, an array, as it is."""
        lines = ["from jitgrad.kernels.cpu.kernel_cache import inline_copy as _inline_copy"]
        if self.checks:
            lines.append("from jitgrad.kernels.cpu.kernel_cache import CheckFailed as _CheckFailed")
        for key, alias in self.imports.items():
            module, attr, inline = key
            if attr == "_NOC" or not inline or self.calls[key] > 1:
                lines.append(f"from {module} import {attr} as {alias}")
            else:
                lines.append(f"from {module} import {attr} as {alias}_kernel")
                lines.append(f"{alias} = _inline_copy({alias}_kernel)")
        return lines

    def shape(self, vid):
        return self.graph.values[vid].shape

    def dtype(self, vid):
        return self.graph.values[vid].dtype

    def scalar(self, vid) -> str:
        """The one element of value ``vid`` as a scalar."""
        if vid in self.weak and vid not in self.made:  # a float argument: passed as a float
            return f"v{vid}"
        nd = len(self.shape(vid))
        return f"v{vid}[()]" if nd == 0 else f"v{vid}[{', '.join('0' * nd)}]"


def _serial(nbytes: int) -> bool:
    return nbytes < cpu.PARALLEL_MIN_BYTES


# --- fused groups --------------------------------------------------------------------------
def _emit_group(e: _Emit, group) -> bool:
    shape = group.shape
    size = math.prod(shape)
    if not _serial(size * 8):
        return False
    module = group.module_name(False)
    k = e.kernel(f"jitgrad._kernels.{module}", n_args=len(group.stored) + len(group.inputs),
                 n_ops=len(group.nodes))
    one = size == 1
    flat_shape = (1,) if one else ((size,) if group.flat else shape)
    outs = []
    for vid in group.stored:
        o = e.tmp()
        e.lines.append(f"{o} = np.empty({_tuple(flat_shape)}, {_dt(e.dtype(vid))})")
        outs.append(o)
    args = []
    for vid, mode in zip(group.inputs, group.modes):
        if one or mode == "s":
            args.append(e.scalar(vid))
        elif group.flat:
            args.append(f"np.ascontiguousarray(v{vid}).reshape(-1)")
        else:
            args.append(f"v{vid}")
    if size:
        e.lines.append(f"{k}({', '.join(outs + args)})")
    e.made.update(v for n in group.nodes for v in n.outputs)
    for vid, o in zip(group.stored, outs):
        reshape = one or group.flat
        e.lines.append(f"v{vid} = {o}.reshape({_tuple(shape)})" if reshape else f"v{vid} = {o}")
    return True


# --- composite rows ------------------------------------------------------------------------
def _float_serial(e: _Emit, vid, limit: int) -> bool:
    """A float32/float64 value of fewer than ``limit`` elements (a serial kernel's size)."""
    return (e.dtype(vid) in (np.dtype(np.float64), np.dtype(np.float32))
            and math.prod(e.shape(vid)) < limit)


def _sum(e: _Emit, node, x: str, out: str) -> bool:
    """``sum``/``sum_dim`` of a float array: ``reduce_sum``'s serial fold kernel on the
    (outer, r, inner) view, as the eager ``_fold`` calls it."""
    (vid,) = node.value_args()
    dt = e.dtype(vid)
    layout = cpu_reduce.fold_layout(e.shape(vid), node.attrs["dims"])
    if (node.attrs["dtype"] is not None or layout is None
            or not _float_serial(e, vid, cpu_reduce.PARALLEL_MIN_SIZE * 8 // dt.itemsize)):
        return False
    outer, r, inner = layout
    kernel = e.kernel("jitgrad.kernels.cpu.reduce", "SERIAL_SUM_ROWS" if inner == 1
                      else "SERIAL_SUM_COLS")
    noc = e.kernel("jitgrad.kernels.cpu.reduce", "_NOC")
    flat, res = e.tmp(), e.tmp()
    e.lines.append(f"{flat} = np.ascontiguousarray({x}).reshape(-1)")
    e.lines.append(f"{res} = np.empty({outer * inner}, {_dt(dt)})")
    if outer * inner:
        sizes = _ints(outer, r) if inner == 1 else _ints(outer, r, inner)
        e.lines.append(f"{kernel}({flat}, {sizes}, {noc}, {_dt(dt)}(0), {res})")
    e.lines.append(f"{out} = {res}.reshape({_tuple(e.shape(node.outputs[0]))})")
    return True


def _emit_slices(e: _Emit, x: str, out: str, vid, layout, mode: int, out_vid) -> None:
    outer, r, inner = layout
    kernel = e.kernel("jitgrad.kernels.cpu.softmax",
                      f"SERIAL_{cpu_softmax.layout(r, inner).upper()}")
    flat, res = e.tmp(), e.tmp()
    size = outer * inner if mode == cpu_softmax.LOGSUMEXP else outer * r * inner
    e.lines.append(f"{flat} = np.ascontiguousarray({x}).reshape(-1)")
    e.lines.append(f"{res} = np.empty({size}, {_dt(e.dtype(vid))})")
    e.lines.append(f"{kernel}({flat}, {_ints(outer, r, inner, mode)}, {res})")
    e.lines.append(f"{out} = {res}.reshape({_tuple(e.shape(out_vid))})")


def _logsumexp(e: _Emit, node, x: str, out: str) -> bool:
    """``logsumexp`` over adjacent dims: the softmax kernel's serial copy, as eager runs it."""
    (vid,) = node.value_args()
    layout = cpu_reduce.fold_layout(e.shape(vid), node.attrs["dims"])
    if (layout is None or 0 in layout
            or not _float_serial(e, vid, cpu_softmax.PAR_MIN_SIZE)):
        return False
    _emit_slices(e, x, out, vid, layout, cpu_softmax.LOGSUMEXP, node.outputs[0])
    return True


def _softmax(e: _Emit, node, x: str, out: str) -> bool:
    """``softmax`` / ``log_softmax`` along ``dim`` (float32/float64): the same kernel."""
    (vid,) = node.value_args()
    layout = cpu_reduce.fold_layout(e.shape(vid), (node.attrs["dim"],))
    if 0 in layout or not _float_serial(e, vid, cpu_softmax.PAR_MIN_SIZE):
        return False
    mode = cpu_softmax.LOG_SOFTMAX if node.attrs["log"] else cpu_softmax.SOFTMAX
    _emit_slices(e, x, out, vid, layout, mode, node.outputs[0])
    return True


def _reshape(e, node, x, out):
    e.lines.append(f"{out} = np.ascontiguousarray({x}).reshape("
                   f"{_tuple(e.shape(node.outputs[0]))})")
    return True


def _reshape_copy(e, node, x, out):
    e.lines.append(f"{out} = np.ascontiguousarray({x}).reshape("
                   f"{_tuple(e.shape(node.outputs[0]))}).copy()")
    return True


def _permuted(e, node, x, out, perm) -> bool:
    """``x`` with its axes in order ``perm``: a strided view with the axes' strides reordered.
    (Numba's ``np.transpose(x, axes)`` took 3 s to compile the first time and 0.3 s each time
    after; this view 0.08 s: docs/compile.md, 'Native segments'.)"""
    strides = "".join(f"{x}.strides[{p}], " for p in perm)
    e.lines.append(f"{out} = np.lib.stride_tricks.as_strided("
                   f"{x}, {_tuple(e.shape(node.outputs[0]))}, ({strides}))")
    if list(perm) == [1, 0]:
        e.transposed[node.outputs[0]] = x
    return True


def _permute(e, node, x, out):
    nd = len(e.shape(node.value_args()[0]))
    if nd == 0:
        e.lines.append(f"{out} = {x}")
        return True
    return _permuted(e, node, x, out, [d % nd for d in node.attrs["dims"]])


def _expand(e, node, x, out):
    e.lines.append(f"{out} = np.broadcast_to({x}, {_tuple(e.shape(node.outputs[0]))})")
    return True


def _transpose(e, node, x, out):
    nd = len(e.shape(node.value_args()[0]))
    if nd == 0:
        e.lines.append(f"{out} = {x}")
        return True
    perm = list(range(nd))
    d0, d1 = node.attrs["dim0"] % nd, node.attrs["dim1"] % nd
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return _permuted(e, node, x, out, perm)


def _cast(e, node, x, out):
    e.lines.append(f"{out} = {x}.astype({_dt(e.dtype(node.outputs[0]))})")
    return True


#: the getitem rows that are basic indexing (a view): ``getitem_<kind>``
_BASIC_KINDS = ("select", "slice", "unsqueeze", "alias")


def _getitem(e, node, x, out):
    index = segment.index_source(node.attrs["index"])
    if index is None or node.attrs.get("kind") not in _BASIC_KINDS:
        return False
    if e.shape(node.outputs[0]) == ():  # Numba's x[i] of a vector is a scalar: a 0-d array
        e.lines.append(f"{out} = np.empty((), {_dt(e.dtype(node.outputs[0]))})")
        e.lines.append(f"{out}[()] = {x}[{index}]")
    else:
        e.lines.append(f"{out} = {x}[{index}]")
    return True


def _index_backward(e, node, g, out):
    index = segment.index_source(node.attrs["index"])
    if index is None or node.attrs["kind"] not in _BASIC_KINDS:
        return False
    e.lines.append(f"{out} = np.zeros({_tuple(node.attrs['shape'])}, "
                   f"{_dt(e.dtype(node.outputs[0]))})")
    e.lines.append(f"{out}[{index}] = {g}")
    return True


def _cat(e, node, *arrays_and_out):
    *arrays, out = arrays_and_out
    if any(math.prod(e.shape(v)) == 0 for v in node.value_args()) or len(arrays) < 2:
        return False  # (the legacy empty-tensor rule stays with eager)
    if len({e.dtype(v) for v in node.value_args()}) != 1:
        return False
    e.lines.append(f"{out} = np.concatenate(({', '.join(arrays)},), {node.attrs['dim']})")
    return True


@functools.cache
def _numba_blas() -> bool:
    """Whether Numba can call BLAS here (it needs SciPy's)."""
    try:
        from numba.np.linalg import ensure_blas
        ensure_blas()
    except ImportError:
        return False
    return True


def _matrix(e, vid, name) -> str:
    """Operand ``vid`` of a BLAS call, typed contiguous: Numba's ``np.dot`` copies an operand
    of unknown layout (a view) whatever it holds, where ``np.ascontiguousarray`` copies only
    one that is not contiguous when it runs. A transpose made in this segment is passed as
    ``src.T`` (typed Fortran-ordered: BLAS reads it transposed, no copy)."""
    source = e.transposed.get(vid)
    if source is not None:
        return f"np.ascontiguousarray({source}).T"
    return f"np.ascontiguousarray({name})"


def _matmul(e, node, a, b, out):
    """``a @ b`` of float matrices and vectors (not two vectors): ``np.dot`` in Numba, a BLAS
    gemm / gemv as eager's ``np.matmul``, up to ``MAX_NATIVE_MATMUL`` multiply-adds (a larger
    product stays a step of its own, on NumPy's threads). Numba's BLAS is SciPy's: the
    segment runs with SciPy's pool at one thread (Note [two BLAS pools] in
    ``kernels/cpu/blas_pool.py``: a 200 x 200 matrix-vector product woke its second thread,
    which fought NumPy's pool: W12 1.9 -> 6.1 ms)."""
    va, vb = node.value_args()
    sa, sb = e.shape(va), e.shape(vb)
    if (not 1 <= len(sa) <= 2 or not 1 <= len(sb) <= 2 or len(sa) + len(sb) < 3
            or e.dtype(va) != e.dtype(vb) or not _float_serial(e, va, math.inf)
            or not _numba_blas()):
        return False
    work = math.prod(sa) * (sb[-1] if len(sb) == 2 else 1)
    if 0 in sa or 0 in sb or work > MAX_NATIVE_MATMUL:
        return False
    e.lines.append(f"{out} = np.dot({_matrix(e, va, a)}, {_matrix(e, vb, b)})")
    e.blas_order = max(e.blas_order, *sa, *sb)
    return True


def _nll(e, node, x, t, w, out):
    """``nll_loss`` of (N, C) log-probabilities at int64 targets: the eager row's kernels, the
    targets checked at every call with the same IndexError."""
    vx, vt, vw = node.value_args()
    dt, reduction = e.dtype(vx), node.attrs["reduction"]
    if (len(e.shape(vx)) != 2 or e.shape(vt) != e.shape(vx)[:1] or e.dtype(vt) != np.int64
            or not _float_serial(e, vx, math.inf)
            or (math.prod(e.shape(vw)) and e.dtype(vw) != dt)):
        return False
    (N, C), ignore = e.shape(vx), node.attrs["ignore_index"]
    check = e.kernel("jitgrad.kernels.cpu.norm", "FIRST_BAD_TARGET")
    gather = e.kernel("jitgrad.kernels.cpu.norm", "SERIAL_NLL_FORWARD")
    bad, losses, total, wsum = e.tmp(), e.tmp(), e.tmp(), e.tmp()
    none = reduction == "none"
    flat = [f"np.ascontiguousarray({a}).reshape(-1)" for a in (x, t, w)]
    e.lines += [f"{bad} = {check}({flat[1]}, {_ints(C, ignore)})",
                f"if {bad} >= 0:",
                f"    raise IndexError('Target ' + str({flat[1]}[{bad}]) + ' is out of bounds.')",
                f"{losses} = np.empty({N if none else 0}, {_dt(dt)})",
                f"{total}, {wsum} = {gather}({', '.join(flat)}, {losses}, {_ints(N, C, ignore)}, "
                f"{none})"]
    if none:
        e.lines.append(f"{out} = {losses}")
    else:
        value = f"{total} / {wsum}" if reduction == "mean" else total
        e.lines += [f"{out} = np.empty((), {_dt(dt)})", f"{out}[()] = {value}"]
    return True


def _bool_reduce(e, node, x, out):
    """``all``/``any`` over adjacent dims: the row's fold kernel on the (outer, r, inner)
    view, as its forward calls it."""
    (vid,) = node.value_args()
    dims, nd = node.attrs["dims"], len(e.shape(vid))
    layout = cpu_reduce.fold_layout(e.shape(vid), range(nd) if dims is None else dims)
    if layout is None or not (e.dtype(vid).kind == "b" or e.dtype(vid) in (
            np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64))):
        return False
    outer, r, inner = layout
    kernel = e.kernel("jitgrad.kernels.cpu.reduce", "SERIAL_BOOL_FOLD")
    flat, res = e.tmp(), e.tmp()
    e.lines += [f"{flat} = np.ascontiguousarray({x}).reshape(-1)",
                f"{res} = np.empty({outer * inner}, np.bool_)",
                f"{kernel}({flat}, {_ints(outer, r, inner)}, {node.attrs['kind'] == 'all'}, "
                f"{res})",
                f"{out} = {res}.reshape({_tuple(e.shape(node.outputs[0]))})"]
    return True


def _check(e, node, ok, value, out):
    """Note [value checks]: ``np.all`` of the flags; a failure raises ``CheckFailed``, and the
    segment's step runs its items one by one, where the row raises eager's error."""
    e.lines += [f"if not np.all({ok}):", "    raise _CheckFailed()",
                f"{out} = np.zeros(0, np.bool_)"]
    e.checks += 1
    return True


#: row name -> emitter(emit, node, *input names, output name) -> bool (False: not covered)
EMITTERS = {
    "sum": _sum, "sum_dim": _sum, "view": _reshape, "unsqueeze": _reshape, "squeeze": _reshape,
    "squeeze_dim": _reshape, "squeeze_dims": _reshape, "reshape_copy": _reshape_copy,
    "expand": _expand, "transpose": _transpose, "permute": _permute, "cast": _cast,
    "index_backward": _index_backward, "cat": _cat, "logsumexp": _logsumexp,
    "softmax": _softmax, "log_softmax": _softmax, "matmul_mm": _matmul, "matmul_mv": _matmul,
    "nll_loss": _nll, "check": _check, "bool_reduce": _bool_reduce,
    **{f"getitem_{kind}": _getitem for kind in _BASIC_KINDS},
}
#: emitters whose operands may be integer arrays (views, and ``_nll``, which checks its own)
_ANY_DTYPE = {_reshape, _reshape_copy, _expand, _transpose, _permute, _getitem, _nll, _check,
              _bool_reduce}


def _emit_node(e: _Emit, node) -> bool:
    emitter = EMITTERS.get(node.op.name)
    if emitter is None or node.ctx or len(node.outputs) != 1:
        return False
    if any(r[0] != "v" for r in node.args) or any(v in e.weak for v in node.value_args()):
        return False
    kinds = "fbiu" if emitter in _ANY_DTYPE else "fb"
    if any(e.dtype(v).kind not in kinds for v in node.value_args()):
        return False
    mark = len(e.lines)
    if not emitter(e, node, *[f"v{v}" for v in node.value_args()], f"v{node.outputs[0]}"):
        del e.lines[mark:]
        return False
    e.made.update(node.outputs)
    return True


#: dtypes a lone elementwise node may compute in (fused runs: float only, ``codegen.fusible``)
_ALONE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64), np.dtype(bool))


def _elementwise_alone(graph, node) -> bool:
    """A lone elementwise node of float, int64 or bool dtypes (the comparisons and masks of a
    recorded backward: ``target == arange(C)``) as a one-node generated kernel: its row's body
    is the one the eager kernel compiles, for the same dtypes."""
    if codegen.fusible(graph, node):
        return True
    dtypes = [node.compute_dtype, node.out_dtype] + [graph.values[r[1]].dtype
                                                     for r in node.args if r[0] == "v"]
    return (all(d in _ALONE_DTYPES for d in dtypes)
            and all(type(r[1]) in (bool, int, float) for r in node.args if r[0] == "c")
            and all(type(node.attrs[a]) in (bool, int, float) for a in node.op.attrs))


# --- segments ------------------------------------------------------------------------------
def _reads(item) -> list:
    if isinstance(item, codegen.FusedGroup):
        return list(item.inputs)
    return codegen._reads(item)


def _made(item) -> list:
    if isinstance(item, codegen.FusedGroup):
        return [v for n in item.nodes for v in n.outputs]
    return list(item.outputs)


def loop_emitter(graph, weak):
    """An emitter for a generated loop's body (Note [generated loops] in ``segment.py``):
    ``emit(part) -> lines or None`` for the parts ``segment.py`` does not write itself (sums,
    one-element runs, the other rows of ``EMITTERS``), and ``imports()`` once all are emitted."""
    e = _Emit(graph, weak, prefix="n")

    def emit(part):
        if not ENABLED:
            return None
        mark = len(e.lines)
        if not _emit_item(e, part, lambda graph, node: False):
            del e.lines[mark:]
            return None
        return e.lines[mark:]
    return emit, e.import_lines


def _emit_item(e: _Emit, item, is_identity_view) -> bool:
    if isinstance(item, codegen.FusedGroup):
        return _emit_group(e, item)
    if hasattr(item, "make_step"):  # a loop
        return False
    if is_identity_view(e.graph, item):
        e.lines.append(f"v{item.outputs[0]} = v{item.args[0][1]}")
        if item.args[0][1] in e.made or item.args[0][1] not in e.weak:
            e.made.update(item.outputs)
            return True
        return False  # (a view of a float argument: the value table holds a float)
    if item.op.elementwise:  # a single elementwise node: a kernel of its own
        return _elementwise_alone(e.graph, item) and _emit_group(
            e, codegen.FusedGroup(e.graph, [item], list(item.outputs), e.weak))
    return _emit_node(e, item)


class Segment:
    """Items (groups and nodes) run as one generated function (Note [native segments]); when
    a value check in it fails, its items run one by one (``make_step``), where the failing
    row raises the user's error (Note [value checks])."""

    def __init__(self, graph, weak, items, needed_after: set, is_identity_view, make_step):
        made = set()
        self.inputs = []
        for item in items:
            for v in _reads(item):
                if v not in made and v not in self.inputs:
                    self.inputs.append(v)
            made.update(_made(item))
        self.outputs = [v for v in sorted(made) if v in needed_after]
        self.weak = weak
        self.items, self.make_step = items, make_step
        self.emit = _Emit(graph, weak)
        for item in items:
            assert _emit_item(self.emit, item, is_identity_view)

    def source(self) -> str:
        e = self.emit
        head = ["# Generated by jitgrad.compile (Note [native segments]); do not edit.",
                "import numpy as np",
                "from jitgrad.kernels.cpu.kernel_cache import njit as cached_njit"]
        head += e.import_lines()
        params = ", ".join(f"v{v}" for v in self.inputs)
        ret = "".join(f"v{v}, " for v in self.outputs)
        body = [f"    {ln}" for ln in e.lines] + [f"    return ({ret})"]
        return "\n".join(head + ["", "", "@cached_njit(nogil=True, error_model='numpy')",
                                 f"def segment({params}):"] + body) + "\n"

    def step(self):
        src = self.source()
        name = "jgn_" + hashlib.sha1(src.encode()).hexdigest()[:20]
        function = []
        reads = [(v, v in self.weak) for v in self.inputs]
        outputs = self.outputs
        order = self.emit.blas_order

        def step(env):
            if not function:
                function.append(cpu.load_generated(name, src).segment)
            args = [float(env[v]) if w else env[v] for v, w in reads]
            try:
                if order:
                    with blas_pool.small_call(order):
                        results = function[0](*args)
                else:
                    results = function[0](*args)
            except CheckFailed:
                for item_step in self.item_steps():
                    item_step(env)  # (the failing check raises here)
                return
            for vid, r in zip(outputs, results):
                env[vid] = r
        return step

    def item_steps(self) -> list:
        """The steps of the items one by one (made on a failed check only)."""
        if not hasattr(self, "_item_steps"):
            self._item_steps = [self.make_step(item) for item in self.items]
        return self._item_steps


def _computes(item) -> bool:
    """Whether ``item`` does arithmetic: a fused run, a kernel, a reduction, not a view or a
    reshape (which cost about a microsecond as a step of their own)."""
    if isinstance(item, codegen.FusedGroup) or item.op.elementwise:
        return True
    return not item.op.view and item.op.name != "reshape_copy"


def segment_steps(graph, items, weak, live, make_step, is_identity_view) -> list:
    """Steps for ``items`` (``codegen.partition``'s output, in order): each maximal run of
    items with a native form, holding at least ``MIN_SEGMENT_STEPS`` that compute, as one
    ``Segment``, the others by ``make_step(item)``. (A segment costs a compilation; one of
    views only, or around a single kernel, saves a microsecond or two per call. A piece of
    a cut run is a step: Note [native segments].)"""
    native = [not getattr(item, "piece", False)
              and _emit_item(_Emit(graph, weak), item, is_identity_view) for item in items]
    needed = [set() for _ in items]
    after = set(live)
    for k in range(len(items) - 1, -1, -1):
        needed[k] = set(after)
        after.update(_reads(items[k]))
    steps, k = [], 0
    while k < len(items):
        j = k
        while j < len(items) and native[j]:
            j += 1
        if sum(_computes(item) for item in items[k:j]) >= MIN_SEGMENT_STEPS:
            steps.append(Segment(graph, weak, items[k:j], needed[j - 1],
                                 is_identity_view, make_step).step())
            k = j
        else:
            steps.append(make_step(items[k]))
            k += 1
    return steps
