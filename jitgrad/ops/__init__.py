"""WHAT is computed: the op registry, dispatch, and one module per op family."""
from . import binary, unary
from .core import dispatch, registry, smath  # noqa: F401
from .core.registry import OPS  # noqa: F401
from . import torch_extra, torch_index, torch_math, torch_random, torch_reduce, torch_windows  # noqa: F401,E501  (issue 35)
from . import special_torch  # noqa: F401  (torch.special's rows, issue 35)
from . import checks  # noqa: F401  (bool reductions and value checks: Note [value checks])
