"""The device layer: WHERE kernels run. Imports nothing else from jitgrad but ``_config``.

CPU (Numba): ``cpu`` builds the elementwise kernels (serial and parallel) from the ops' scalar
bodies; ``cpu_reduce`` holds the hand-written reductions, ``cpu_nn`` / ``cpu_norm`` the
neural-network layers, ``cpu_optim`` the fused optimizer updates; ``vmath`` the vectorisable
transcendental functions those kernels call, ``pool`` the caching pool of host buffers.

CUDA (``numba-cuda``; never imported from here: ``ops.dispatch`` loads these modules when the
first CUDA tensor is made): ``cuda`` holds the device arrays, their memory pool and the
elementwise kernels built from the same scalar bodies; ``cuda_reduce``, ``cuda_linalg``
(matmul), ``cuda_solver`` and ``cuda_jacobi`` (batched decompositions), ``cuda_index``,
``cuda_nn`` / ``cuda_nn_norm``, ``cuda_optim`` and ``cuda_special`` are the CPU kernels' twins.

Shared by both targets: ``optim_updates`` (the optimizer formulas, written once) and ``rebind``
(copies of a kernel body with extra globals, one per specialisation).

The disk cache of compiled CPU kernels: ``kernel_cache`` (generated kernel sources and Numba's
compiled code, healing: Note [healing cache]; its ``njit`` is ``numba.njit`` with that cache)
and ``sources`` (the source hashes every generated kernel is keyed by: Note [source keys]).
"""
from . import cpu, cpu_reduce  # noqa: F401

__all__ = ["cpu", "cpu_reduce"]
