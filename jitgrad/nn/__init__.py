"""``jitgrad.nn``: modules, parameters, initialisers and the functional layer API, with
PyTorch's names and semantics (``jitgrad.nn.Linear`` is ``torch.nn.Linear``)."""
from . import functional, init, utils
from . import modules
from .modules import *  # noqa: F401,F403 - every layer class (modules.__all__)
from .parameter import Buffer, Parameter

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *modules.__all__]
