"""Where a compiled function finds the tensors it reads from outside (closures, globals, module
parameters), so each call can check they are still the same objects.

Note [closure guards]: a program reads a closure tensor's current values at every call, which
covers in-place updates (an optimizer step); a NAME rebound to another tensor is a different
input. ``locate`` finds a path to the tensor from the function: a closure cell or a global the
code names, then (up to three levels) an item of a dict, list or tuple, or an attribute (an
``nn.Module``'s parameter); wrapped functions (``func.grad(f)``, partials, bound methods) are
searched through. Each call resolves the paths again and retraces when one leads elsewhere.
A tensor reachable by none of these paths (deeper structures) is read as traced: docs/compile.md
says so.
"""
from __future__ import annotations

import functools
import types

_MISSING = object()
_DEPTH = 3


def _roots(fn, seen):
    """``(path, object)`` for the closure cells and named globals of ``fn`` and of the
    functions it wraps."""
    if id(fn) in seen:
        return
    seen.add(id(fn))
    if isinstance(fn, functools.partial):
        yield from ((("partial",) + p, o) for p, o in _roots(fn.func, seen))
        for i, a in enumerate(fn.args):
            yield ("partial_arg", i), a
        return
    if isinstance(fn, types.MethodType):
        yield ("self",), fn.__self__
        yield from ((("func",) + p, o) for p, o in _roots(fn.__func__, seen))
        return
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None:
        yield from ((("wrapped",) + p, o) for p, o in _roots(wrapped, seen))
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    for i, cell in enumerate(fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        yield ("cell", i), value
        if callable(value) and not isinstance(value, type):
            yield from ((("cell_fn", i) + p, o) for p, o in _roots(value, seen))
    globals_ = fn.__globals__
    for name in code.co_names:
        value = globals_.get(name, _MISSING)
        if value is not _MISSING and not isinstance(value, (types.ModuleType, type)):
            yield ("global", name), value


_OPAQUE = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
           types.ModuleType, functools.partial)


def _children(obj):
    if isinstance(obj, dict):
        yield from ((("item", k), v) for k, v in obj.items())
    elif isinstance(obj, (list, tuple)):
        yield from ((("item", i), v) for i, v in enumerate(obj))
    elif not isinstance(obj, _OPAQUE) and hasattr(obj, "__dict__"):
        yield from ((("attr", k), v) for k, v in vars(obj).items())


def locate(fn, tensor):
    """A path from ``fn`` to ``tensor`` (Note [closure guards]), or None."""
    frontier = [(p, o) for p, o in _roots(fn, set())]
    for _ in range(_DEPTH + 1):
        nxt = []
        for path, obj in frontier:
            if obj is tensor:
                return path
            if type(obj).__name__ == "Tensor":
                continue
            nxt.extend((path + step, child) for step, child in _children(obj))
        frontier = nxt
    return None


def resolve(fn, path):
    """The object at ``path`` from ``fn`` now (``_MISSING`` when the path is broken)."""
    obj = fn
    try:
        it = iter(path)
        for step in it:
            if step == "partial":
                obj = obj.func
            elif step == "partial_arg":
                obj = obj.args[next(it)]
            elif step == "self":
                obj = obj.__self__
            elif step == "func":
                obj = obj.__func__
            elif step == "wrapped":
                obj = obj.__wrapped__
            elif step in ("cell", "cell_fn"):
                obj = obj.__closure__[next(it)].cell_contents
            elif step == "global":
                obj = obj.__globals__[next(it)]
            elif step == "item":
                obj = obj[next(it)]
            elif step == "attr":
                obj = vars(obj)[next(it)]
            else:
                return _MISSING
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return _MISSING
    return obj
