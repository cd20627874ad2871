"""vmap: batched execution of registry ops (a real batched implementation, no Python loop).

Note [batched tensors]: inside ``vmap(f)``, ``f`` sees ``BatchedTensor``s: Tensors whose shape,
ndim and dtype are those of ONE example (so every shape check, ``dim`` wrap and ``-1`` in a
shape works unchanged) and whose values live in ``_bt_inner``, a tensor with the batch as its
dim 0. Every registry op reaching ``dispatch`` with a batched argument is routed here
(Note [transform hooks]) and runs ONCE on the inner tensors:

* elementwise rows: NumPy broadcasting does it, once each batched operand is padded with 1s
  to the example rank (``(B, 3)`` against an unbatched ``(2, 3)`` becomes ``(B, 1, 3)``);
* composite rows: the row's ``batch_rule(args, batched, **attrs)`` remaps the op (``dim + 1``,
  a leading batch in shapes and indices, batched matmul...) and returns outputs batched at 0;
* a row without a rule raises ``BatchingRuleError`` naming the op.

Ops on the inner tensors are ordinary ops: they record autograd graphs, carry forward-mode
tangents, and are batched again when the inner tensor is itself batched (nested vmap: levels
grow inwards, an outer vmap's tensors are the inner tensors of an inner vmap's).

A batched tensor's own ``_data`` is a placeholder (one NaN broadcast to the example shape) that
refuses NumPy computation, so code that reads tensor values directly (``item()``, ``numpy()``,
a kernel called on ``_data``) fails loudly with a vmap error instead of computing garbage.
Gradients are never recorded on batched tensors themselves: ``jitgrad.func`` transforms work
on the inner tensors (``materialize`` / ``wrap``), where examples are independent.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..autograd import transforms
from ..ops.core import dispatch
from ..ops import shape as _shape
from ..tensor import Tensor


class BatchingRuleError(NotImplementedError):
    """An op or function that vmap cannot batch (no batching rule, or it reads tensor values)."""


# --- the placeholder data of a batched tensor -------------------------------------------------
def _caller() -> str:
    """The outermost jitgrad function (outside this package) on the stack, for messages."""
    name = None
    for frame in inspect.stack()[2:]:
        mod = frame.frame.f_globals.get("__name__", "")
        if mod.startswith("jitgrad.") and not mod.startswith("jitgrad.func"):
            name = f"{mod}.{frame.function}"
        elif name is not None:
            break
    return name or "a function"


def _placeholder_error(what):
    return BatchingRuleError(
        f"vmap: {_caller()} reads the values of a batched tensor directly ({what}); it has no "
        "batching rule, so it cannot run inside vmap (nor jacrev/jacfwd/hessian, which use "
        "vmap). Apply it outside vmap or per example.")


class _Flags:
    c_contiguous = f_contiguous = writeable = owndata = aligned = False


class _Placeholder:
    """The ``_data`` of a BatchedTensor: array metadata of ONE example (shape, dtype, ...),
    and no values: converting it to an array, indexing it, computing with it (NumPy, Numba,
    Python operators) raises a vmap error naming the jitgrad function that tried."""

    __slots__ = ("shape", "dtype")
    flags = _Flags()
    base = None

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    strides = property(lambda self: (0,) * len(self.shape))

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        shape = list(shape)
        if -1 in shape:
            known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
            shape[shape.index(-1)] = self.size // known if known else 0
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
        return _Placeholder(shape, self.dtype)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __array__(self, *args, **kwargs):
        raise _placeholder_error("conversion to a NumPy array")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _placeholder_error(f"NumPy ufunc {ufunc.__name__}")

    def __array_function__(self, func, types, args, kwargs):
        if func is np.reshape:
            return args[0].reshape(*args[1:], **{k: v for k, v in kwargs.items()
                                                 if k in ("order", "copy", "shape")})
        if func is np.shape:
            return self.shape
        if func is np.ndim:
            return self.ndim
        if func is np.result_type:
            return np.result_type(*[a.dtype if isinstance(a, _Placeholder) else a for a in args])
        raise _placeholder_error(f"NumPy function {func.__name__}")

    def __getattr__(self, name):
        if name.startswith("__array"):
            raise _placeholder_error("conversion to a NumPy array")
        raise _placeholder_error(f"ndarray.{name}")

    def _refuse(self, *args, **kwargs):
        raise _placeholder_error("a Python operator on its data")

    (__getitem__, __setitem__, __iter__, __bool__, __float__, __int__, __index__, __eq__,
     __ne__, __lt__, __le__, __gt__, __ge__, __add__, __radd__, __sub__, __rsub__, __mul__,
     __rmul__, __truediv__, __rtruediv__, __pow__, __rpow__, __neg__, __abs__, __and__,
     __or__, __invert__, __matmul__, __rmatmul__) = (_refuse,) * 30
    __hash__ = None


def _placeholder(shape, dtype):
    return _Placeholder(shape, dtype)


# --- BatchedTensor -------------------------------------------------------------------------
def _refuse(what):
    def method(self, *args, **kwargs):
        raise BatchingRuleError(f"vmap: {what} is not supported on a batched tensor inside vmap "
                                f"(level {self._bt_level})")

    method.__name__ = what
    return method


class BatchedTensor(Tensor):
    """A tensor inside ``vmap`` (Note [batched tensors]): example shape, batched values."""

    __slots__ = ("_bt_inner", "_bt_level")

    def __repr__(self):
        return f"BatchedTensor(lvl={self._bt_level}, bdim=0, value=\n{self._bt_inner!r})"

    def detach(self):
        return wrap(self._bt_inner.detach(), self._bt_level)

    @property
    def data(self):
        return self.detach()

    @property
    def requires_grad(self):
        return False

    @requires_grad.setter
    def requires_grad(self, value):
        raise BatchingRuleError(
            "vmap: requires_grad cannot be set on a batched tensor; to differentiate inside "
            "vmap use jitgrad.func.grad / vjp / jacrev")

    item = _refuse("item()")
    tolist = _refuse("tolist()")
    numpy = _refuse("numpy()")
    __array__ = _refuse("conversion to a NumPy array")
    __bool__ = _refuse("Python control flow on values (bool())")
    __float__ = _refuse("float()")
    __int__ = _refuse("int()")
    __index__ = _refuse("use as an index (__index__)")
    __setitem__ = _refuse("item assignment (x[...] = v)")
    __reduce_ex__ = _refuse("pickling")
    backward = _refuse(".backward() (use jitgrad.func.grad / vjp inside vmap)")
    register_hook = _refuse("register_hook")
    retain_grad = _refuse("retain_grad")
    requires_grad_ = _refuse("requires_grad_() (use jitgrad.func.grad / vjp inside vmap)")


for _name in dir(Tensor):  # in-place methods: add_, mul_, fill_, copy_, ...
    if (_name.endswith("_") and not _name.startswith("_") and _name not in vars(BatchedTensor)
            and callable(getattr(Tensor, _name, None))):
        setattr(BatchedTensor, _name, _refuse(f"the in-place operation {_name}"))
for _name in ("__iadd__", "__isub__", "__imul__", "__itruediv__"):
    setattr(BatchedTensor, _name, _refuse(f"the in-place operator {_name}"))


def wrap(inner, level):
    """A BatchedTensor at ``level`` whose examples are ``inner``'s slices along dim 0."""
    if inner.ndim == 0:
        raise BatchingRuleError("vmap: internal error, a batched value has no batch dim")
    t = BatchedTensor._make(_placeholder(inner.shape[1:], inner.dtype.np))
    t._bt_inner = inner
    t._bt_level = level
    return t


def wrap_at(t, level):
    """``t`` whose leading logical dim is level ``level``'s batch, as a tensor batched at
    ``level`` (the inverse of ``expose``): ``t`` may also be batched at higher levels, whose
    wrappers must stay outside."""
    if type(t) is BatchedTensor and t._bt_level > level:
        return wrap(wrap_at(movedim(t._bt_inner, 0, 1), level), t._bt_level)
    return wrap(t, level)


def is_batched(t) -> bool:
    return type(t) is BatchedTensor


def inner(t):
    return t._bt_inner


def level_of(t) -> int:
    return t._bt_level


def levels_of(t) -> set:
    """Every vmap level at which ``t`` is batched."""
    out = set()
    while type(t) is BatchedTensor:
        out.add(t._bt_level)
        t = t._bt_inner
    return out


# --- vmap levels -------------------------------------------------------------------------------
_sizes: dict = {}  # open vmap level -> batch size
_next_level = [1]


def push_level(size: int) -> int:
    level = _next_level[0]
    _next_level[0] += 1
    _sizes[level] = size
    if len(_sizes) == 1:
        transforms.set_batch_runner(run_batched, _this_module())
    return level


def pop_level(level: int) -> None:
    del _sizes[level]
    if not _sizes:
        transforms.set_batch_runner(None)


def _this_module():
    import sys

    return sys.modules[__name__]


def batch_size(level: int) -> int:
    return _sizes[level]


def open_levels() -> list:
    return sorted(_sizes)


# --- moving between logical and real layouts ---------------------------------------------------
def movedim(t, src: int, dst: int):
    nd = t.ndim
    src, dst = src % nd, dst % nd
    if src == dst:
        return t
    order = [d for d in range(nd) if d != src]
    order.insert(dst, src)
    return _shape.permute(t, tuple(order))


def _add_batch(t, size):
    """``t`` with a new leading dim of ``size`` (a broadcast view)."""
    return _shape.expand(_shape.unsqueeze(t, 0), (size,) + tuple(t.shape))


def expose(t, level):
    """``t`` as a tensor with level ``level``'s batch as its leading logical dim, still
    batched at its other levels (an unbatched ``t`` is broadcast)."""
    if type(t) is BatchedTensor:
        if t._bt_level == level:
            return t._bt_inner
        if t._bt_level > level:  # the batch of ``level`` sits inside: swap it out
            return wrap(movedim(expose(t._bt_inner, level), 1, 0), t._bt_level)
    return _add_batch(t, _sizes[level])


def materialize(t, levels):
    """A plain tensor of shape ``(B_l for l in levels) + t.shape`` (``levels`` ascending and
    covering every level ``t`` is batched at): the real layout of ``t``."""
    for lev in sorted(levels, reverse=True):
        t = expose(t, lev)
    if type(t) is BatchedTensor:
        raise BatchingRuleError(f"vmap: a tensor batched at level {t._bt_level} escaped its vmap")
    return t


def wrap_levels(real, levels):
    """Inverse of ``materialize``: ``real``'s leading dims become the batches of ``levels``."""
    for lev in sorted(levels):
        real = wrap(real, lev)
    return real


def unmaterialize(t, levels):
    """``t`` whose leading logical dims are the batches of ``levels`` (ascending), and which
    may be batched at other levels too, as a logical tensor batched at all of them."""
    levels = sorted(levels)
    others = sorted(levels_of(t))
    real = materialize(t, others)
    k, m = len(others), len(levels)
    # real: (B_others..., B_levels..., *example) -> every batch dim in ascending level order
    order_levels = others + levels
    perm = sorted(range(k + m), key=lambda i: order_levels[i])
    real = _shape.permute(real, tuple(perm) + tuple(range(k + m, real.ndim)))
    return wrap_levels(real, sorted(order_levels))


# --- running an op batched --------------------------------------------------------------------
def run_batched(op, args, attrs):
    """Run registry op ``op`` on arguments some of which are batched (the dispatch hook)."""
    level = 0
    for a in args:
        if type(a) is BatchedTensor and a._bt_level > level:
            level = a._bt_level
    if not level:
        return NotImplemented
    batched = tuple(type(a) is BatchedTensor and a._bt_level == level for a in args)
    inner_args = [a._bt_inner if b else a for a, b in zip(args, batched)]
    if op.elementwise:
        out = _elementwise_rule(op, inner_args, batched, attrs)
    else:
        if op.batch_rule is None:
            raise BatchingRuleError(
                f"vmap: no batching rule for op '{op.name}' ({op.node_name}); it cannot run "
                "inside vmap (nor jacrev/jacfwd/hessian, which use vmap). Apply it outside vmap "
                "or per example.")
        out = op.batch_rule(inner_args, batched, **attrs)
    if isinstance(out, tuple):
        return tuple(wrap(o, level) for o in out)
    return wrap(out, level)


def _example_ndim(a, b) -> int:
    if b:
        return a.ndim - 1
    return a.ndim if isinstance(a, (Tensor, np.ndarray)) else np.ndim(a)


def _elementwise_rule(op, args, batched, attrs):
    nd = max(_example_ndim(a, b) for a, b in zip(args, batched))
    new = []
    for a, b in zip(args, batched):
        if b and a.ndim - 1 < nd:
            a = _shape.reshape(a, (a.shape[0],) + (1,) * (nd - a.ndim + 1) + tuple(a.shape[1:]))
        new.append(a)
    return dispatch.elementwise(op, *new, **attrs)
