"""Writes of ``nn`` and ``optim`` into existing tensors outside the ops (``init``, gradient
clipping, ``load_state_dict``, buffers, optimizer steps).

Each asks the write guard first, as the ops' in-place writes do (``ops/writes.py``,
``check_writable``): while jitgrad.compile traces, the guard refuses (Note [compile tracing] in
jitgrad/compile/trace.py), since a write the trace did not record would not happen on a later
call. Outside a trace this costs one check.
"""
from __future__ import annotations

from ..ops import upper


def guard_writes(*tensors) -> None:
    """Call the write guard (if one is set) with each tensor about to be written in place."""
    if upper.write_guard is not None:
        for t in tensors:
            upper.write_guard(t)
