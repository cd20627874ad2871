"""The kernels layer: WHERE kernels run. Imports nothing else from jitgrad but ``_config``.

``cpu/`` (Numba): ``elementwise`` builds the elementwise kernels (serial and parallel) from the
ops' scalar bodies; ``reduce`` holds the hand-written reductions, ``nn`` / ``norm`` the
neural-network layers, ``optim`` the fused optimizer updates, ``shape`` the copies behind
shape ops; ``vmath`` the vectorisable transcendental functions those kernels call, ``pool`` the
caching pool of host buffers; ``kernel_cache`` the disk cache of compiled kernels (generated
kernel sources and Numba's compiled code, healing: Note [healing cache]; its ``njit`` is
``numba.njit`` with that cache).

``cuda/`` (``numba-cuda``; never imported from here: ``ops`` loads these modules when the first
CUDA tensor is made): ``backend`` holds the device arrays, their memory pool and the elementwise
kernels built from the same scalar bodies; ``reduce``, ``linalg`` (matmul), ``solver`` and
``jacobi`` (batched decompositions), ``index``, ``nn`` / ``nn_norm``, ``optim`` and
``special`` are the CPU kernels' twins.

Shared by both targets: ``sources`` (the source hashes every generated kernel is keyed by: Note
[source keys]), ``optim_updates`` (the optimizer formulas, written once), ``special_scalar``
(scalar bodies of the gamma family) and ``rebind`` (copies of a kernel body with extra globals,
one per specialisation).

Until 2026-12 this package was ``jitgrad.device``: that name is PyTorch's device constructor,
``jitgrad.device("cpu")``.
"""
