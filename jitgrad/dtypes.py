"""Supported dtypes, NumPy-style promotion, and the default floating dtype.

jitgrad follows NumPy (NEP 50) for promotion: ``float32 tensor * 2.5`` stays float32,
``int64 tensor * 2.5`` becomes the default float dtype, ``int64 / int64`` is floating.
"""
from __future__ import annotations

import numpy as np

from . import _config


class dtype:
    """A tensor element type; a thin, hashable wrapper around a NumPy dtype."""

    __slots__ = ("name", "np", "is_floating_point", "itemsize")

    def __init__(self, name: str):
        self.name = name
        self.np = np.dtype(name)
        self.is_floating_point = self.np.kind == "f"
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return f"jitgrad.{self.name}"

    # Interop with NumPy and the Array API: ``np.dtype(jitgrad.float64)`` works (NumPy reads a
    # ``dtype`` attribute), and a jitgrad dtype equals the NumPy dtype/type it wraps, so
    # ``x.dtype == xp.float64`` holds for ``xp = jitgrad.numpy`` (whose dtypes are NumPy's).
    @property
    def dtype(self):
        return self.np

    def __eq__(self, other):
        if other is self:
            return True
        if isinstance(other, dtype):
            return self.np == other.np
        if isinstance(other, np.dtype) or (isinstance(other, type)
                                           and issubclass(other, np.generic)):
            return self.np == np.dtype(other)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.np)  # equal to np.dtype(name)'s hash, as __eq__ requires

    def __reduce__(self):
        return (to_dtype, (self.name,))


float32 = dtype("float32")
float64 = dtype("float64")
int32 = dtype("int32")
int64 = dtype("int64")
bool_ = dtype("bool")
float16 = dtype("float16")
int8 = dtype("int8")
uint8 = dtype("uint8")
int16 = dtype("int16")

_BY_NAME = {d.name: d for d in (float32, float64, int32, int64, bool_, float16, int8, uint8, int16)}
_BY_NP = {d.np: d for d in _BY_NAME.values()}  # the hot path: ndarray.dtype -> jitgrad dtype
_ALIASES = {"float": float64, "double": float64, "long": int64, "int": int64, "bool": bool_}

_default_float = _BY_NAME.get(_config.DEFAULT_DTYPE, float64)


def to_dtype(d) -> dtype:
    """Convert a jitgrad dtype, NumPy dtype, type or name to a jitgrad dtype."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, np.dtype):
        found = _BY_NP.get(d)
        if found is not None:
            return found
    if d is None:
        return _default_float
    if isinstance(d, str) and d in _ALIASES:
        return _ALIASES[d]
    if d is float:
        return _default_float
    if d is int:
        return int64
    if d is bool:
        return bool_
    try:
        name = np.dtype(d).name
    except TypeError:
        raise TypeError(f"jitgrad: unsupported dtype {d!r}; use one of {sorted(_BY_NAME)}") from None
    if name not in _BY_NAME:
        raise TypeError(f"jitgrad: unsupported dtype {name}; use one of {sorted(_BY_NAME)}")
    return _BY_NAME[name]


def get_default_dtype() -> dtype:
    """The dtype Python floats and float constructors produce (float64 unless changed)."""
    return _default_float


def set_default_dtype(d) -> None:
    """Set the default floating dtype (float32 or float64), like ``torch.set_default_dtype``."""
    global _default_float
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point dtypes are supported, got {d}")
    _default_float = d


def result_type(*operands) -> dtype:
    """Promote operands (arrays, NumPy dtypes or Python scalars) the way NumPy 2 does.

    Python ints/floats are weak: they do not widen an array's dtype. A Python float with only
    integer/bool arrays gives the default float dtype (NumPy would give float64).
    """
    weak = 0  # strongest Python scalar kind seen: 1 bool, 2 int, 3 float
    arrays = []
    for o in operands:
        kind = type(o)
        if kind is float:
            weak = 3
        elif kind is int:
            weak = max(weak, 2)
        elif kind is bool:
            weak = max(weak, 1)
        else:
            arrays.append(o.dtype)
    if not arrays:
        return (bool_, bool_, int64, _default_float)[weak]
    res = arrays[0] if all(a == arrays[0] for a in arrays) else np.result_type(*arrays)
    if res.kind in "biu" and weak == 3:
        return _default_float
    if res.kind == "b" and weak == 2:
        return int64
    return to_dtype(res)


def float_type_for(d: dtype) -> dtype:
    """The floating dtype an op like ``exp`` or ``/`` computes in for inputs of dtype ``d``."""
    return d if d.is_floating_point else _default_float
