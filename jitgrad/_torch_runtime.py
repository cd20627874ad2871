"""PyTorch's top-level values, dtype queries and process settings (``jitgrad.pi``,
``jitgrad.finfo``, ``jitgrad.promote_types``, ``jitgrad.get_rng_state``...).

``jitgrad/__init__.py`` re-exports ``NAMES``. The settings PyTorch keeps for its back ends
(float32 matmul precision, flush-denormal, warn-always, deterministic debug mode) are kept here
with PyTorch's values and checks; where jitgrad has nothing they change (it computes float32
matmuls in float32 through NumPy/Numba), each docstring says so.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import _config, dtypes
from .ops import creation
from .tensor import Tensor

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan

#: PyTorch's dtype aliases (uint32/uint64 are left out: jitgrad refuses them at construction)
uint16 = dtypes.uint16
builtins_int = (0).__class__  # (``int`` below is the dtype alias)
short, int = dtypes.int16, dtypes.int32  # noqa: A001 - PyTorch's spelling (jitgrad.int)


def _as_dtype(d, who: str) -> dtypes.dtype:
    try:
        return dtypes.to_dtype(d)
    except (TypeError, ValueError, KeyError):
        raise TypeError(f"{who}(): argument 'type' must be a dtype, not {type(d).__name__}") \
            from None


class finfo:
    """Machine limits of a floating dtype (PyTorch's fields): ``bits``, ``eps`` (the gap
    above 1), ``max``, ``min`` (= ``-max``), ``tiny`` / ``smallest_normal`` (the smallest
    positive normal number), ``resolution`` (``10**-precision``), ``dtype``. Without an argument:
    the default float dtype."""

    def __init__(self, type=None):  # noqa: A002 - PyTorch's name
        d = dtypes.get_default_dtype() if type is None else _as_dtype(type, "finfo")
        if d.np.kind not in "fc":
            raise TypeError(f"torch.finfo() requires a floating point input type. Use "
                            f"torch.iinfo to handle '{d!r}'")
        info = np.finfo(d.np)
        self.bits = info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(info.resolution)
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype: ``bits``, ``max``, ``min``, ``dtype``."""

    def __init__(self, type):  # noqa: A002 - PyTorch's name
        d = _as_dtype(type, "iinfo")
        if d.np.kind not in "iub":
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to "
                            f"handle '{d!r}'")
        info = np.iinfo(np.uint8 if d.np.kind == "b" else d.np)
        self.bits, self.max, self.min, self.dtype = info.bits, builtins_int(info.max), \
            builtins_int(info.min), d.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


# --- dtype queries ---------------------------------------------------------------------------
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote_types(type1, type2) -> dtypes.dtype:
    """PyTorch's promotion of two dtypes: within one category (bool < integer < float <
    complex) NumPy's table (``uint8, int8 -> int16``); across categories the higher one's
    dtype (``int64, float32 -> float32``), a complex one widened to the float's precision
    (``complex64, float64 -> complex128``)."""
    a, b = _as_dtype(type1, "promote_types"), _as_dtype(type2, "promote_types")
    ca, cb = _CATEGORY[a.np.kind], _CATEGORY[b.np.kind]
    if ca == cb:
        return dtypes.to_dtype(np.promote_types(a.np, b.np))
    low, high = (a, b) if ca < cb else (b, a)
    if high.is_complex and low.is_floating_point:
        return dtypes.to_dtype(np.promote_types(low.np, high.np))
    return high


def result_type(tensor1, tensor2) -> dtypes.dtype:
    """The dtype an arithmetic op on ``tensor1`` and ``tensor2`` (tensors or Python numbers)
    computes in, by jitgrad's promotion (Python numbers are weak, as in PyTorch)."""
    return dtypes.result_type(*(t._data if isinstance(t, Tensor) else t  # device read: dtype only
                                for t in (tensor1, tensor2)))


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rule allows writing ``from_`` values into ``to`` (an op's
    ``out=``, in-place ops): not into a lower category (bool < integer < float < complex)."""
    a, b = _as_dtype(from_, "can_cast"), _as_dtype(to, "can_cast")
    return _CATEGORY[a.np.kind] <= _CATEGORY[b.np.kind]


def is_floating_point(input) -> bool:  # noqa: A002 - PyTorch's name
    """Whether ``input``'s dtype is a floating point one (complex is not)."""
    return input.dtype.is_floating_point


def is_nonzero(input) -> bool:  # noqa: A002
    """Whether a one-element tensor is not zero (as ``bool(input)``; other sizes raise)."""
    n = input.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input)


def typename(obj) -> str:
    """PyTorch's type name: ``'jitgrad.DoubleTensor'`` for a float64 tensor (the scalar-type
    name of its dtype), else the object's qualified class name."""
    if isinstance(obj, Tensor):
        return f"jitgrad.{_TENSOR_TYPE.get(obj.dtype.name, obj.dtype.name)}Tensor"
    cls = obj if isinstance(obj, type) else type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"


_TENSOR_TYPE = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


# --- random state ----------------------------------------------------------------------------
def get_rng_state():
    """The default generator's state (a uint8 tensor, for ``set_rng_state``)."""
    return creation.default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state from ``get_rng_state()``."""
    creation.default_generator.set_state(new_state)


def seed() -> int:
    """Seed the default generator from a fresh nondeterministic seed; returns it."""
    return creation.default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return creation.default_generator.initial_seed()


# --- process settings --------------------------------------------------------------------------
_settings = {"matmul_precision": "highest", "warn_always": False,
             "flush_denormal": False}


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"``, ``"high"`` or ``"medium"``: recorded for ``get_...``; jitgrad computes
    every float32 matmul at full float32 precision (there are no TF32/bfloat16 paths)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision!r}: expected one of 'highest', "
                           "'high', 'medium'")
    _settings["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    """The value last given to ``set_float32_matmul_precision`` (``"highest"``)."""
    return _settings["matmul_precision"]


def set_warn_always(b: bool) -> None:
    """Ask warnings PyTorch issues once per process to be issued every time (recorded)."""
    _settings["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether ``set_warn_always(True)`` is in effect."""
    return _settings["warn_always"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """PyTorch's shorthand for ``use_deterministic_algorithms``: ``0``/``"default"`` off,
    ``1``/``"warn"`` on with ``warn_only``, ``2``/``"error"`` on."""
    mode = _DEBUG_MODES.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected one of 0, 1, 2, 'default', "
                           f"'warn', 'error', but got {debug_mode!r}")
    _config.DETERMINISTIC = mode != 0
    _config.DETERMINISTIC_WARN_ONLY = mode == 1


def get_deterministic_debug_mode() -> builtins_int:
    """0 (off), 1 (on, warn only) or 2 (on), as ``set_deterministic_debug_mode`` takes."""
    if not _config.DETERMINISTIC:
        return 0
    return 1 if _config.DETERMINISTIC_WARN_ONLY else 2


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic mode is on in its warn-only form (``set_deterministic_debug_mode
    (1)``)."""
    return _config.DETERMINISTIC and _config.DETERMINISTIC_WARN_ONLY


def set_flush_denormal(mode: bool) -> bool:
    """PyTorch flushes denormal floats to zero on x86 when asked; jitgrad's kernels keep IEEE
    denormals, so this returns False (not supported), as PyTorch does on CPUs without it."""
    _settings["flush_denormal"] = False
    return False


def set_default_device(device) -> None:
    """The device tensor constructors use when given none (``None``: the CPU)."""
    creation.set_default_device(device)


def get_default_device():
    """The device tensor constructors use when given none."""
    return creation.get_default_device()


_TYPE_DTYPES = {v + "Tensor": k for k, v in _TENSOR_TYPE.items()}


def set_default_tensor_type(t) -> None:
    """PyTorch's deprecated form of ``set_default_dtype``: ``t`` a tensor type name
    (``"torch.DoubleTensor"``, ``"jitgrad.FloatTensor"``) or a dtype; a floating type only."""
    warnings.warn("set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "set_default_dtype() and set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        name = _TYPE_DTYPES.get(t.rsplit(".", 1)[-1])
        if name is None:
            raise TypeError(f"invalid type: '{t}'")
        t = name
    d = _as_dtype(t, "set_default_tensor_type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(d)


NAMES = ("pi", "e", "inf", "nan", "uint16", "short", "int", "finfo", "iinfo",
         "promote_types", "result_type", "can_cast", "is_floating_point", "is_nonzero",
         "typename", "get_rng_state", "set_rng_state", "seed", "initial_seed",
         "set_float32_matmul_precision", "get_float32_matmul_precision", "set_warn_always",
         "is_warn_always_enabled", "set_deterministic_debug_mode", "get_deterministic_debug_mode",
         "is_deterministic_algorithms_warn_only_enabled", "set_flush_denormal",
         "set_default_device", "get_default_device", "set_default_tensor_type")
