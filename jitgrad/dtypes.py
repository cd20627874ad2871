"""Supported dtypes, NumPy-style promotion, and the default floating dtype.

jitgrad follows NumPy (NEP 50) for promotion: ``float32 tensor * 2.5`` stays float32,
``int64 tensor * 2.5`` becomes the default float dtype, ``int64 / int64`` is floating.
"""
from __future__ import annotations

import numpy as np

from . import _config


class dtype:
    """A tensor element type; a thin, hashable wrapper around a NumPy dtype."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_differentiable", "itemsize")

    def __init__(self, name: str):
        self.name = name
        self.np = np.dtype(name)
        self.is_floating_point = self.np.kind == "f"  # False for complex, as in PyTorch
        self.is_complex = self.np.kind == "c"
        # what may require grad and get a grad_fn: floating point and complex (PyTorch's rule)
        self.is_differentiable = self.np.kind in "fc"
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
complex64 = dtype("complex64")
complex128 = dtype("complex128")
# PyTorch's "limited support" uint16 (storage, casts, comparisons, arithmetic); uint32/uint64
# stay refused at construction (tests/test_construction_dtypes.py)
uint16 = dtype("uint16")

_BY_NAME = {d.name: d for d in (float32, float64, int32, int64, bool_, float16, int8, uint8, int16,
                                complex64, complex128, uint16)}
_BY_NP = {d.np: d for d in _BY_NAME.values()}  # the hot path: ndarray.dtype -> jitgrad dtype
#: NumPy dtype -> jitgrad dtype for the supported ones (``Tensor.dtype`` reads it first)
BY_NUMPY = _BY_NP
_ALIASES = {"float": float64, "double": float64, "long": int64, "int": int64, "bool": bool_,
            "cfloat": complex64, "cdouble": complex128, "short": int16}
# complex <-> real of the same precision (``abs``/``real`` of complex64 are float32)
_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float32: complex64, float64: complex128, float16: complex64}

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
    if d is complex:
        return default_complex()
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


def default_complex() -> dtype:
    """The complex dtype matching the default float (complex128 for float64), like PyTorch."""
    return _TO_COMPLEX[_default_float]


def is_complex(input) -> bool:  # noqa: A002 - PyTorch's name
    """Whether ``input`` (a Tensor, or a jitgrad/NumPy dtype) has a complex dtype."""
    d = getattr(input, "dtype", input) if not isinstance(input, dtype) else input
    return to_dtype(d).is_complex


def to_real(d: dtype) -> dtype:
    """The real dtype of the same precision: complex128 -> float64; real dtypes unchanged."""
    return _TO_REAL.get(d, d)


def to_complex(d: dtype) -> dtype:
    """The complex dtype an op like ``fft`` computes in for inputs of dtype ``d``."""
    if d.is_complex:
        return d
    return _TO_COMPLEX.get(d) or _TO_COMPLEX[_default_float]


def set_default_dtype(d) -> None:
    """Set the default floating dtype (float32 or float64), like ``torch.set_default_dtype``."""
    global _default_float
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point dtypes are supported, got {d}")
    _default_float = d


def result_type(*operands) -> dtype:
    """Promote operands (arrays, NumPy dtypes or Python scalars) the way NumPy 2 does.

    Python ints/floats/complexes are weak: they do not widen an array's dtype. A Python float
    with only integer/bool arrays gives the default float dtype (NumPy would give float64); a
    Python complex makes a real array complex of its precision (float32 -> complex64) and
    integer/bool arrays the default complex dtype.
    """
    weak = 0  # strongest Python scalar kind seen: 1 bool, 2 int, 3 float, 4 complex
    arrays = []
    for o in operands:
        kind = type(o)
        if kind is float:
            weak = max(weak, 3)
        elif kind is complex:
            weak = 4
        elif kind is int:
            weak = max(weak, 2)
        elif kind is bool:
            weak = max(weak, 1)
        else:
            arrays.append(o.dtype)
    if not arrays:
        return (bool_, bool_, int64, _default_float, default_complex())[weak]
    res = arrays[0] if all(a == arrays[0] for a in arrays) else np.result_type(*arrays)
    if weak == 4 and res.kind != "c":
        return to_complex(to_dtype(res) if res.kind == "f" else _default_float)
    if res.kind in "biu" and weak == 3:
        return _default_float
    if res.kind == "b" and weak == 2:
        return int64
    return to_dtype(res)


def float_type_for(d: dtype) -> dtype:
    """The floating dtype an op like ``exp`` or ``/`` computes in for inputs of dtype ``d``
    (complex dtypes stay complex)."""
    return d if d.is_differentiable else _default_float
