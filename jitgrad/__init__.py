"""jitgrad: a Numba-JIT reverse-mode autograd with PyTorch's autograd semantics.

Nothing is compiled at import: kernels compile on first use and are cached on disk
(``JITGRAD_CACHE_DIR``).
"""
from . import _config
from ._config import __version__
from .dtypes import (bool_, complex64, complex128, dtype, float16, float32, float64,
                     get_default_dtype, int8, int16, int32, int64, is_complex, set_default_dtype,
                     uint8)
from .tensor import Tensor
from .device.pool import empty_cache, memory_stats
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                           linspace, manual_seed, ones, ones_like, rand, randint, randn, tensor,
                           zeros, zeros_like)
from .ops.unary import (abs, clone, cos, cosh, erf, exp, expm1, log, log1p, neg, reciprocal, relu,
                        sigmoid, sign, sin, sinh, sqrt, tan, tanh)
from .ops.binary import add, clamp, div, maximum, minimum, mul, pow, sub, where
from .ops.reduce import amax, amin, argmax, argmin, logsumexp, max, mean, min, prod, std, sum, var
from .ops.shape import (cat, expand, flatten, permute, reshape, squeeze, stack, t, transpose,
                        unsqueeze, view)
from .ops.linalg import dot, matmul, mm
from .ops.nn import log_softmax, softmax
from . import nn, optim
from . import func, utils
from . import cuda
from ._device import Device
from .serialization import load, save
from .threads import (are_deterministic_algorithms_enabled, get_num_interop_threads,
                      get_num_threads, set_num_interop_threads, set_num_threads,
                      use_deterministic_algorithms)

bool = bool_  # noqa: A001 - PyTorch's spelling (jitgrad.bool)
float = float32  # noqa: A001 - PyTorch's aliases: float is float32, double float64, long int64
double = float64
cfloat, cdouble = complex64, complex128  # PyTorch's aliases
long = int64
clip = clamp


def lt(x, y):
    return x < y


def gt(x, y):
    return x > y


def le(x, y):
    return x <= y


def ge(x, y):
    return x >= y


def eq(x, y):
    return Tensor.__eq__(tensor(x) if not isinstance(x, Tensor) else x, y)


def ne(x, y):
    return Tensor.__ne__(tensor(x) if not isinstance(x, Tensor) else x, y)


def is_tensor(obj) -> "bool_":
    return isinstance(obj, Tensor)


def numel(t) -> int:
    return t.numel()
