"""WHAT is computed: the op registry, dispatch, and one module per op family."""
from . import binary, unary
from .core import dispatch, registry, smath  # noqa: F401
from .core.registry import OPS  # noqa: F401
