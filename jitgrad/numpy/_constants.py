"""NumPy's constants and scalar types as ``jitgrad.numpy`` names (``pi``, ``newaxis``,
``float64``, ``dtype``...: NumPy's own objects; ``ndarray`` is the Tensor type), and the Array
API's ``isdtype``. ``finfo``/``iinfo`` are ``_array_api``'s (they also take Tensors)."""
from __future__ import annotations

import numpy as _np

from ..tensor import Tensor
from ._passthrough import mark as _mark_passthrough

__all__ = ["ndarray", "bool", "pi", "e", "inf", "nan", "newaxis", "euler_gamma", "float64",
           "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool_",
           "complex128", "double", "single", "intp", "integer", "floating", "number", "dtype",
           "complex64", "complexfloating", "isdtype"]

ndarray = Tensor
bool = _np.bool_  # noqa: A001 - the Array API's dtype name
pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, None, _np.euler_gamma
(float64, float32, float16, int64, int32, int16, int8, uint8, bool_, complex128, double, single,
 intp, integer, floating, number, dtype) = (
    _np.float64, _np.float32, _np.float16, _np.int64, _np.int32, _np.int16, _np.int8, _np.uint8,
    _np.bool_, _np.complex128, _np.double, _np.single, _np.intp, _np.integer, _np.floating,
    _np.number, _np.dtype)
complex64, complexfloating = _np.complex64, _np.complexfloating


@_mark_passthrough
def isdtype(dtype, kind):
    """Array API ``isdtype`` for NumPy dtypes (and jitgrad dtypes)."""
    dtype = _np.dtype(getattr(dtype, "np", dtype))
    kinds = kind if isinstance(kind, tuple) else (kind,)
    table = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
             "real floating": "f", "complex floating": "c", "numeric": "iufc"}
    for k in kinds:
        if isinstance(k, str):
            if dtype.kind in table[k]:
                return True
        elif dtype == _np.dtype(getattr(k, "np", k)):
            return True
    return False
