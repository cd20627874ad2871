"""``skip_init``: build a module without running its initialisers."""
from __future__ import annotations

import inspect

from .. import init as _init

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialised
    (whatever their memory holds): the ``nn.init`` functions write nothing and draw nothing
    from the global generator meanwhile. For a custom initialisation right after. The class
    must take a ``device`` argument (as PyTorch requires)."""
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    with _init.skipped():
        return module_cls(*args, **kwargs)
