"""Plain inputs get NumPy's result: the drop-in rule of ``jitgrad.numpy`` (issue 32).

Note [plain inputs]: NumPy code counts and accumulates with NumPy's immutable scalars::

    n = 0
    for shape in shapes:
        start = n
        n += np.prod(shape)         # NumPy: a new np.int64, ``start`` keeps its value
        idx.append(slice(start, n))

A reduction of ``jitgrad.numpy`` returns a 0-d Tensor, and ``+=`` on a Tensor is in place
(PyTorch's semantics), so ``start`` would move with ``n`` and every slice would come out empty,
with no error until far downstream. HIPS autograd does not have the problem because its
functions return what NumPy returns when no argument is being traced (only boxed values take the
traced path), and JAX's arrays are immutable. ``jitgrad.numpy`` follows HIPS autograd:

* a call none of whose arguments holds a Tensor (Python numbers, tuples, lists, NumPy arrays, at
  any depth of lists, tuples, dicts and object arrays) returns what NumPy returns for that call:
  ``numpy.<name>(*args, **kwargs)`` itself, so a 0-d result is a NumPy scalar and ``+=``
  rebinds;
* the array constructors (``array``, ``asarray``, ``zeros``, ``arange``, ``linspace``, ``eye``,
  ``full``, the ``*_like``, window functions, loaders...: ``CONSTRUCTORS``) return Tensors
  whatever their arguments: they are how a program makes the arrays it differentiates;
* a call with a Tensor argument, or a Python function argument (``apply_along_axis``,
  ``piecewise``: a function may compute with Tensors), runs jitgrad's implementation and
  returns Tensors, with PyTorch's semantics (a 0-d result is a mutable Tensor: ``+=`` on it is in
  place; docs/numpy.md, "Plain inputs, NumPy results").

The rule is applied in one place: ``install`` replaces each public function of a namespace
(``jitgrad.numpy``, ``.linalg``, ``.fft``) by a wrapper that makes the choice (and the same
names in the modules that define the functions, ``jitgrad.numpy``'s topic modules). Only the
outermost call chooses: the wrapper counts the implementations running on this thread, and a
call made inside one (jitgrad's functions call each other with NumPy data: index arrays,
masks) always runs the implementation. An implementation marked ``leaf`` (it calls no public
function with plain data: the rows' elementwise functions, the reductions) skips the count;
one marked ``checks_itself`` applies the rule on its own non-Tensor path and is not wrapped.
The protocol table (``numpy.sum(tensor)`` -> ``jitgrad.numpy.FUNCTIONS``) holds the wrappers' ``enter``, which runs the implementation at
once (a Tensor is involved by construction).

Where NumPy lacks the function (older NumPy and the Array API's spellings: ``unstack``,
``cumulative_sum``...) or a keyword of jitgrad's (``sort(descending=)``), the implementation
runs and its Tensors come back as NumPy values (a 0-d one as a NumPy scalar).
"""
from __future__ import annotations

import functools
import threading
import types

import numpy as _np

from ..tensor import Tensor

__all__ = ["CONSTRUCTORS", "install", "holds_tensor", "leaf", "checks_itself", "plain_call",
           "enter"]

#: functions that make arrays from sizes, Python data or files: they return Tensors whatever
#: their arguments (the other public functions follow Note [plain inputs])
CONSTRUCTORS = frozenset((
    "array asarray asanyarray ascontiguousarray asfortranarray asarray_chkfinite require "
    "from_dlpack zeros ones empty full zeros_like ones_like empty_like full_like eye identity tri "
    "arange linspace logspace geomspace bartlett blackman hamming hanning kaiser fromfunction "
    "frombuffer fromfile fromiter fromregex fromstring load loadtxt genfromtxt "
    "fftfreq rfftfreq").split())

#: functions that never return arrays and take dtypes (NumPy's versions refuse jitgrad's dtype
#: objects): left as they are
_UNWRAPPED = frozenset("finfo iinfo isdtype".split())
_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType)


class _State(threading.local):
    def __init__(self):
        self.depth = [0]  # implementations of wrapped functions running on this thread (a cell:
        # one thread-local read per call, then list updates)


_state = _State()


def holds_tensor(items) -> bool:
    """Whether any of ``items`` is, or holds at any depth of lists, tuples, dicts and object
    arrays, a Tensor, or is a Python function (which may compute with Tensors)."""
    for a in items:
        if isinstance(a, Tensor):
            return True
        if isinstance(a, (list, tuple)):
            if holds_tensor(a):
                return True
        elif isinstance(a, _np.ndarray):
            if a.dtype == object and holds_tensor(a.ravel()):
                return True
        elif isinstance(a, dict):
            if holds_tensor(a.values()):
                return True
        elif callable(a) and not isinstance(a, type):
            return True
    return False


def _to_numpy(r, what):
    """The implementation's result as NumPy values (Tensors at any depth of tuples/lists)."""
    if isinstance(r, Tensor):
        a = r._host(what)
        return a[()] if a.ndim == 0 else a
    if isinstance(r, tuple):
        items = [_to_numpy(v, what) for v in r]
        return type(r)(*items) if hasattr(r, "_fields") else tuple(items)
    if isinstance(r, list):
        return [_to_numpy(v, what) for v in r]
    return r


def _wrap(impl, numpy_fn, qualname):
    """The public function: ``impl`` (jitgrad's) or ``numpy_fn`` (NumPy's, may be None) by
    Note [plain inputs]."""
    state = _state
    what = f"jitgrad.{qualname}"

    def enter(*args, **kwargs):
        depth = state.depth
        depth[0] += 1
        try:
            return impl(*args, **kwargs)
        finally:
            depth[0] -= 1

    def plain(args, kwargs):
        if numpy_fn is not None:
            try:
                return numpy_fn(*args, **kwargs)
            except TypeError as exc:  # a keyword NumPy's version lacks: jitgrad's runs below
                if "unexpected keyword argument" not in str(exc):
                    raise
        return _to_numpy(enter(*args, **kwargs), what)

    if getattr(impl, "plain_leaf", False):
        @functools.wraps(impl)
        def f(*args, **kwargs):
            if ((args and isinstance(args[0], Tensor)) or state.depth[0] or holds_tensor(args)
                    or (kwargs and holds_tensor(kwargs.values()))):
                return impl(*args, **kwargs)  # (calls no public function with plain data)
            return plain(args, kwargs)
    else:
        @functools.wraps(impl)
        def f(*args, **kwargs):
            depth = state.depth
            if ((args and isinstance(args[0], Tensor)) or depth[0] or holds_tensor(args)
                    or (kwargs and holds_tensor(kwargs.values()))):
                depth[0] += 1
                try:
                    return impl(*args, **kwargs)
                finally:
                    depth[0] -= 1
            return plain(args, kwargs)

    f.enter = enter
    f.impl = impl
    return f


def plain_call(args) -> bool:
    """Whether a call with ``args`` is an outermost call with plain inputs (Note [plain
    inputs]): for implementations that test their own arguments (``checks_itself``)."""
    return not _state.depth[0] and not holds_tensor(args)


def checks_itself(fn):
    """Mark ``fn`` (an implementation) as applying Note [plain inputs] itself, on the path its
    non-Tensor arguments take anyway (``plain_call``): ``install`` leaves it unwrapped, so a
    call with Tensors pays nothing for the rule (a wrapper costs ~0.17 us a call). It must
    call no public function with plain data."""
    fn.plain_checked = True
    return fn


def leaf(fn):
    """Mark ``fn`` (an implementation) as calling no public function of jitgrad.numpy with
    plain data (it converts its arguments to Tensors first, or calls the ops only): its
    wrapper then skips counting the implementations running (a hot path's saving)."""
    fn.plain_leaf = True
    return fn


def install(namespace: dict, numpy_module, prefix: str, modules=()) -> None:
    """Apply Note [plain inputs] to the public functions of ``namespace`` (a module's
    ``globals()``); ``numpy_module``: NumPy's counterpart (``numpy``, ``numpy.linalg``...),
    ``prefix``: the namespace's name for messages (``"numpy"``, ``"numpy.linalg"``).

    ``modules``: the modules the functions come from and those that call them by name
    (``jitgrad.numpy``'s topic modules): each of their globals bound to a function wrapped here
    is rebound to its wrapper, so a call from one function to another goes through the rule as
    a call from outside does (as when they all lived in one namespace)."""
    made = {}  # id(impl) -> its wrapper: aliases (abs, absolute, fabs) stay one function
    for name in list(namespace.get("__all__", ())):
        fn = namespace.get(name)
        if (name in CONSTRUCTORS or name in _UNWRAPPED or not isinstance(fn, _FUNCTION_TYPES)
                or getattr(fn, "plain_checked", False)):
            continue
        impl = getattr(fn, "impl", fn)  # (a name shared with another namespace: wrap its impl)
        if id(impl) not in made:
            # NumPy's function of the implementation's own name (of the alias otherwise)
            numpy_fn = getattr(numpy_module, impl.__name__, None)
            if not callable(numpy_fn) or isinstance(numpy_fn, type):
                numpy_fn = getattr(numpy_module, name, None)
            if not callable(numpy_fn) or isinstance(numpy_fn, type):
                numpy_fn = None
            made[id(impl)] = _wrap(impl, numpy_fn, f"{prefix}.{name}")
        namespace[name] = made[id(impl)]
    for module in modules:
        env = vars(module)
        for key, value in list(env.items()):
            wrapper = made.get(id(value))
            if wrapper is not None and wrapper.impl is value:
                env[key] = wrapper


def enter(fn):
    """The protocol table's entry for the public function ``fn``: its implementation, run as a
    call inside jitgrad.numpy (no plain-input check: a Tensor is involved)."""
    return getattr(fn, "enter", fn)
