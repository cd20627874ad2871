"""The device layer: WHERE kernels run. Imports nothing else from jitgrad but ``_config``.

``cpu`` builds Numba kernels (serial and parallel) from scalar bodies; ``cpu_reduce`` holds the
hand-written reduction kernels. A CUDA backend will sit beside them (issue: CUDA target).
"""
from . import cpu, cpu_reduce  # noqa: F401

__all__ = ["cpu", "cpu_reduce"]
