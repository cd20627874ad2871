"""``jitgrad.compile``: capture a function once, run its forward and backward as a program.

The pipeline (docs/compile.md): ``trace`` (run the function through the registry ops,
recording) -> ``graph`` (values and op nodes) -> the backward traced into the same graph ->
``program`` (dead nodes dropped, steps built) -> ``codegen`` (runs of elementwise nodes as one
generated Numba loop each) -> ``api`` (cache key, guards, fallbacks, the joining node).
"""
from .api import CompileError, CompiledFunction, compile
from .loop import fori_loop, scan
from .branch import cond
from .while_loop import while_loop

__all__ = ["compile", "CompiledFunction", "CompileError", "fori_loop", "scan", "while_loop", "cond"]
