"""The scheduler: runs a backward graph. Knows Nodes only; never imports ops or device."""
from .engine import execute

__all__ = ["execute"]
