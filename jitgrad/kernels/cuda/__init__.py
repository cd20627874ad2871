"""CUDA kernels through ``numba-cuda``, imported on the first use of ``device="cuda"`` (see
``jitgrad/kernels/__init__.py`` for the modules)."""
