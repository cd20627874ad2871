"""WHAT is computed: the op registry, dispatch, and one module per op family."""
from . import binary, dispatch, registry, smath, unary  # noqa: F401
from .registry import OPS  # noqa: F401
