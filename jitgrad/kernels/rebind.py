"""``bind``: a copy of a plain kernel function with extra globals, so one kernel body can be
compiled into several specialised kernels (per combine op, element map, dtype...) by the CPU
and CUDA kernel builders."""
from __future__ import annotations

import types


def bind(f, name: str, **env):
    """A copy of plain function ``f`` named ``name`` whose globals also hold ``env``. The name
    is also its ``__qualname__``: Numba keys its on-disk cache by it, one entry per variant."""
    g = dict(f.__globals__)
    g.update(env)
    fn = types.FunctionType(f.__code__, g, name, f.__defaults__, f.__closure__)
    fn.__qualname__ = name
    return fn
