"""Utilities: ``checkpoint`` (activation checkpointing: recompute in backward to save memory).

``jitgrad.utils.checkpoint(fn, *args)`` and PyTorch's spelling
``jitgrad.utils.checkpoint.checkpoint(fn, *args)`` both work.
"""
from . import checkpoint  # noqa: F401  (the module is callable)
from . import data  # noqa: F401
from .checkpoint import checkpoint_sequential  # noqa: F401

__all__ = ["checkpoint", "checkpoint_sequential"]
