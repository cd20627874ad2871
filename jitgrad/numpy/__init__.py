"""``import jitgrad.numpy as np``: the NumPy API with derivatives.

NumPy's names and argument conventions (``axis``, ``keepdims``, ``ddof``), returning Tensors
that record the graph. The same functions serve NumPy's own entry points: ``numpy.sin(t)`` on
a Tensor goes through ``Tensor.__array_ufunc__`` / ``__array_function__`` (``jitgrad._protocols``)
and lands in the table built at the bottom of this module (``UFUNCS``, ``FUNCTIONS``), so the
protocol path and the namespace path record identical graphs.

A call none of whose arguments holds a Tensor returns NumPy's own result (a 0-d one is an
immutable NumPy scalar), except the array constructors, which return Tensors: Note [plain
inputs] in ``_plain.py``, applied at the bottom of this module.

Names NumPy has and this module lacks raise ``AttributeError`` at lookup (``__getattr__``),
naming the function. Non-differentiable functions (``argmax``, ``shape``, ``isnan``...) run on
the data and return integer/bool Tensors or Python values. See docs/numpy.md.

The functions live in topic modules, which this one gathers (each module's ``__all__``):

* ``_constants``: NumPy's constants and scalar types, ``isdtype``;
* ``_creation``: ``array``/``asarray`` and the constant constructors (``zeros``, ``arange``...);
* ``_elementwise``: the rows' elementwise functions, the operators, ``clip``, ``where``...;
* ``_nodiff``: the non-differentiable functions (indices, masks, shape queries);
* ``_reductions``: ``sum``, ``mean``, ``var``, ``max``..., cumulative sums, ``diff``;
* ``_shape``, ``_join``: reshaping, permuting, indexing; joining and splitting;
* ``_matrix``: products (``dot``, ``einsum``...), diagonals and triangles;
* ``_sorting``: ``sort``, ``partition``;
* ``linalg``, ``fft``, ``random``: NumPy's submodules;
* ``_array_api``, ``_math_more``, ``_stats``, ``_poly``, ``_assemble``, ``_passthrough``: the
  Array API's names and the functions composed of the above (issue 19);

``_common`` holds the helpers they share (``to_tensor``, ``cast``...).
"""
from __future__ import annotations

import numpy as _np

from ..tensor import Tensor  # noqa: F401  (jitgrad.numpy.Tensor, also ndarray)
from . import _plain
from . import (_constants, _creation, _elementwise, _join, _matrix, _nodiff, _reductions,
               _shape, _sorting)
from ._constants import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._nodiff import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403
from ._join import *  # noqa: F401,F403
from ._matrix import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403

__array_api_version__ = "2023.12"

from . import fft, linalg, random  # noqa: E402,F401
from . import _array_api, _assemble, _math_more, _passthrough, _poly, _stats  # noqa: E402
from ._array_api import *  # noqa: E402,F401,F403  (Array API names)
from ._array_api import __array_namespace_info__, _missing_message  # noqa: E402,F401
# issue 19: NumPy functions composed of the above (each module's docstring has the math)
from ._math_more import *  # noqa: E402,F401,F403
from ._stats import *  # noqa: E402,F401,F403
from ._poly import *  # noqa: E402,F401,F403
from ._assemble import *  # noqa: E402,F401,F403
from ._passthrough import *  # noqa: E402,F401,F403  (non-differentiable utilities)

__all__ = sorted(n for n in globals() if not n.startswith("_"))

# --- plain inputs get NumPy's result (Note [plain inputs] in _plain.py) ----------------------
# (the topic modules call each other's functions by name: through the same wrappers)
_plain.install(globals(), _np, "numpy", modules=(
    _constants, _creation, _elementwise, _nodiff, _reductions, _shape, _join, _matrix, _sorting,
    _array_api, _math_more, _stats, _poly, _assemble, _passthrough, linalg, fft))
_plain.install(linalg.__dict__, _np.linalg, "numpy.linalg")
_plain.install(fft.__dict__, _np.fft, "numpy.fft")

# --- the one table: NumPy object -> implementation (used by jitgrad._protocols) ---------------
UFUNCS: dict = {}
FUNCTIONS: dict = {}
_SKIP = {"ndarray", "pi", "e", "inf", "nan", "newaxis", "euler_gamma", "linalg", "random", "fft",
         "Tensor", "fix", "isdtype", "astype"}
for _n, _v in list(globals().items()):
    if _n.startswith("_") or _n in _SKIP or not callable(_v) or isinstance(_v, type):
        continue
    _obj = getattr(_np, _n, None)
    if _obj is None or isinstance(_obj, type):
        continue
    if isinstance(_obj, _np.ufunc):
        UFUNCS[_obj] = _plain.enter(_v)
    elif callable(_obj):
        FUNCTIONS[_obj] = _plain.enter(_v)
for _name in ("linalg", "fft"):
    _mod = globals()[_name]
    for _n in getattr(_mod, "__all__", ()):
        _obj = getattr(getattr(_np, _name), _n, None)  # (NumPy 1.x lacks the Array API names)
        if _obj is not None:
            FUNCTIONS[_obj] = _plain.enter(getattr(_mod, _n))
FUNCTIONS[_np.fix] = _plain.enter(fix)  # noqa: F405  (_elementwise's: a registry row's name)


def __getattr__(name):
    msg = _missing_message(name)
    if msg:
        raise AttributeError(msg)
    if hasattr(_np, name):
        raise AttributeError(
            f"jitgrad.numpy has no '{name}': numpy.{name} is not covered (no derivative rule). "
            f"Run numpy.{name} on the data (tensor.numpy()) if no gradient is needed; "
            "see docs/numpy.md for what is covered")
    raise AttributeError(f"module 'jitgrad.numpy' has no attribute '{name}'")
