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
from .ops.creation import (as_tensor, empty_like, from_numpy, full_like, manual_seed, ones_like,
                           tensor, zeros_like)
from .ops.core import registry as _registry
from .ops.core.signatures import exported as _exported
# the op functions the rows name (``export=``, Note [derived surface] in ops/core/registry.py),
# with PyTorch's parameter names and out= (Note [torch signatures]); the rows' modules are
# imported by ``.tensor`` above
globals().update({_name: _exported(_fn, _op) for _names, _fn, _op in _registry.surface("export")
                  for _name in _names})
del _registry
# op functions no single row backs: wrappers that pick among rows by their arguments
from .ops import extrema as _extrema, linalg as _linalg, shape as _shape  # noqa: E402
# PyTorch's functions that span several rows (jitgrad/_torch_functions.py), and torch.linalg
from . import _torch_functions  # noqa: E402
from .ops import creation as _creation  # noqa: E402
globals().update({_fn.__name__: _exported(_fn) for _fn in (
    _extrema.argmax, _extrema.argmin, _shape.flatten, _shape.reshape, _linalg.dot,
    _linalg.matmul, _linalg.mm, *_torch_functions.FUNCTIONS, _creation.arange, _creation.empty,
    _creation.eye, _creation.full, _creation.linspace, _creation.ones, _creation.randint,
    _creation.zeros)})
del _extrema, _linalg, _shape, _creation
# the op families' functions no single row backs (issue 35), each family's ``FUNCTIONS``
from .ops import (torch_extra, torch_index, torch_math, torch_random, torch_reduce,  # noqa: E402
                  torch_windows)
globals().update({_fn.__name__: _exported(_fn) for _family in (
    torch_index, torch_math, torch_random, torch_reduce, torch_windows, torch_extra)
    for _fn in _family.FUNCTIONS})
del torch_extra, torch_index, torch_math, torch_random, torch_reduce, torch_windows
from . import _torch_methods  # noqa: E402  (PyTorch's Tensor methods no row backs)
globals().update({_fn.__name__: _exported(_fn) for _fn in _torch_methods.FUNCTIONS})
from . import _torch_runtime  # noqa: E402  (PyTorch's values, dtype queries and settings)
globals().update({_name: getattr(_torch_runtime, _name) for _name in _torch_runtime.NAMES})
from . import _torch_linalg  # noqa: E402  (torch.det, torch.svd...: the older spellings)
from .ops.core.signatures import torch_function as _torch_function  # noqa: E402
globals().update({_fn.__name__: _torch_function(_fn, out=_fn.__name__ in _torch_linalg.WITH_OUT)
                  for _fn in _torch_linalg.FUNCTIONS})
from ._device import Size  # noqa: E402
from .ops.creation import Generator, default_generator  # noqa: E402
from .autograd import inference_mode, is_inference_mode_enabled  # noqa: E402
from .autograd.inference import is_inference  # noqa: E402
from . import _ndarray_methods  # noqa: E402,F401  (NumPy's ndarray methods, issue 19)
from .ops.core import methods as _methods  # noqa: E402

_methods.install(Tensor)  # what the two modules above declared (Note [tensor methods])
del _methods
from . import linalg  # noqa: E402
from . import nn, optim
from . import distributions, fft, func, special, utils  # noqa: E402
from .func import vmap  # noqa: E402  (torch.vmap)
# the nn.functional functions torch also has on the top level (torch.conv2d, torch.selu, ...)
from .nn.functional import (adaptive_avg_pool1d, avg_pool1d, bilinear, celu, celu_,  # noqa: E402
                            channel_shuffle, conv1d, conv2d, conv3d, conv_tbc,
                            conv_transpose1d, conv_transpose2d, conv_transpose3d,
                            cosine_similarity, hardshrink, native_channel_shuffle,
                            pairwise_distance, pixel_shuffle, pixel_unshuffle, prelu, relu_,
                            rrelu_, selu, selu_, threshold_)
# (compile: torch.compile's name; cond, scan, while_loop: JAX's control flow)
from .compile import CompileError, compile, cond, fori_loop, scan, while_loop  # noqa: A004
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


def is_tensor(obj) -> "bool_":
    """Whether ``obj`` is a jitgrad Tensor."""
    return isinstance(obj, Tensor)


def numel(input) -> int:  # noqa: A002 - PyTorch's name
    """The number of elements of ``input``."""
    return input.numel()
