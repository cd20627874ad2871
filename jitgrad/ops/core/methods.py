"""Tensor's methods beyond its class body: ONE table, each entry declared where it is defined.

Note [tensor methods]: a ``Tensor`` method is either written in the class body (``tensor.py``)
or an entry of this table, never set on the class by hand. The table holds

- the rows' methods: every row with ``method=`` (Note [derived surface] in ``registry.py``),
  the op function itself (a module-level function set on the class is a method: the tensor
  arrives as its first argument, so ``x.sin()`` costs what ``sin(x)`` does), and every row's
  in-place method (``inplace=``: ``x.sin_()``; Note [derived in-place methods] for the rows
  that do not say), made by ``ops/inplace.py``'s maker;
- the methods no single row backs, declared with ``declare`` by the module that defines them:
  the in-place methods with their own argument handling (``ops/inplace.py``), ``real``/``imag``/``conj``/``angle``
  (``ops/complex.py``), PyTorch's functions that span several rows (``_torch_functions.py``)
  and NumPy's ndarray methods (``_ndarray_methods.py``).

A name is declared once and never shadows the class body (``declare`` and ``install`` raise):
where NumPy's signature extends PyTorch's (``item(*index)``, ``flatten(order)``,
``round(decimals)``, ``argsort(axis, kind)``) ONE method takes both. ``install(Tensor)`` puts the
table on the class: ``tensor.py`` calls it once the ops are imported, and ``jitgrad/__init__.py``
again once the modules above ``tensor.py`` have declared theirs (an entry already installed is
left as it is).
"""
from __future__ import annotations

from . import registry

#: name -> (method, property or function; the module that declared it)
_DECLARED: dict = {}
#: the names ``install`` has put on a class (they are the table's, not the class body's)
_INSTALLED: set = set()
#: ``(names, fn, op) -> method`` for the rows' in-place methods (``inplace=``), registered by
#: ``ops/inplace.py`` (``set_inplace_maker``), and the methods it made, by row name
_inplace_maker = None
_inplace_made: dict = {}


def set_inplace_maker(make) -> None:
    global _inplace_maker
    _inplace_maker = make


def declare(methods: dict, where: str) -> None:
    """Add ``{name: method}`` to the table (``where``: the declaring module, for messages)."""
    for name, method in methods.items():
        if name in _DECLARED and _DECLARED[name][0] is not method:
            raise ValueError(f"Tensor.{name} is declared twice: by {_DECLARED[name][1]} and by "
                             f"{where}; declare one method that takes both signatures")
        _DECLARED[name] = (method, where)


def table() -> dict:
    """``{name: method}``: the rows' methods, then the declared ones."""
    out = {}
    for names, fn, _op in registry.surface("method"):
        for name in names:
            out[name] = fn
    if _inplace_maker is not None:
        for names, fn, op in registry.surface("inplace") + _derived_inplace():
            if op.name not in _inplace_made:
                _inplace_made[op.name] = _inplace_maker(names, fn, op)
            for name in names:
                out[name] = _inplace_made[op.name]
    for name, (method, where) in _DECLARED.items():
        if name in out and out[name] is not method:
            raise ValueError(f"Tensor.{name}: declared by {where} and also a row's method")
        out[name] = method
    return out


def _derived_inplace() -> list:
    """Note [derived in-place methods]: an elementwise row with a Tensor method and no
    ``inplace=`` of its own gets PyTorch's in-place form of each method name (``acos_``,
    ``floor_``, ``atan2_``...), made by the in-place maker as for ``inplace=True``; a name
    declared by a module (``pow_``, ``clamp_``: their own argument handling) is left to that
    module, and ``inplace=False`` opts a row out."""
    out = []
    for names, fn, op in registry.surface("method"):
        if op.elementwise and op.inplace is None:
            own = tuple(name + "_" for name in names if name + "_" not in _DECLARED)
            if own:
                out.append((own, fn, op))
    return out


def install(cls) -> None:
    """Put the table's methods on ``cls`` (the Tensor class)."""
    for name, method in table().items():
        if name in cls.__dict__ and name not in _INSTALLED:
            raise ValueError(f"Tensor.{name} is in the class body and in the method table "
                             "(Note [tensor methods]): keep one")
        if cls.__dict__.get(name) is not method:
            setattr(cls, name, method)
        _INSTALLED.add(name)
