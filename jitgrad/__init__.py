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
from . import _protocols  # noqa: F401  (registers NumPy's protocols for Tensor)
from .kernels.cpu.pool import empty_cache, memory_stats
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops.creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                           linspace, manual_seed, ones, ones_like, rand, randint, randn, tensor,
                           zeros, zeros_like)
from .ops.core import registry as _registry
# the op functions the rows name (``export=``, Note [derived surface] in ops/core/registry.py); the
# rows' modules are imported by ``.tensor`` above
globals().update({_name: _fn for _names, _fn, _op in _registry.surface("export")
                  for _name in _names})
del _registry
# op functions no single row backs: wrappers that pick among rows by their arguments
from .ops.reduce import argmax, argmin  # noqa: E402
from .ops.shape import flatten, reshape  # noqa: E402
from .ops.linalg import dot, matmul, mm  # noqa: E402
# PyTorch's functions that span several rows (jitgrad/_torch_functions.py), and torch.linalg
from . import _torch_functions  # noqa: E402
globals().update({_fn.__name__: _fn for _fn in _torch_functions.FUNCTIONS})
from . import _ndarray_methods  # noqa: E402,F401  (NumPy's ndarray methods, issue 19)
from .ops.core import methods as _methods  # noqa: E402

_methods.install(Tensor)  # what the two modules above declared (Note [tensor methods])
del _methods
from . import linalg  # noqa: E402
from . import nn, optim
from . import func, utils
from .compile import CompileError, compile, cond, fori_loop, scan, while_loop  # noqa: A004 - torch.compile's name
from . import cuda
from ._device import Device

device = Device  # PyTorch's constructor: jitgrad.device("cuda", 0), isinstance(d, jitgrad.device)
from .serialization import load, save
from .threads import (are_deterministic_algorithms_enabled, get_num_interop_threads,
                      get_num_threads, set_num_interop_threads, set_num_threads,
                      use_deterministic_algorithms)

bool = bool_  # noqa: A001 - PyTorch's spelling (jitgrad.bool)
float = float32  # noqa: A001 - PyTorch's aliases: float is float32, double float64, long int64
double = float64
cfloat, cdouble = complex64, complex128  # PyTorch's aliases
long = int64


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
