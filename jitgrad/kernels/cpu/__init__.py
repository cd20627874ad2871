"""CPU kernels, compiled with Numba (see ``jitgrad/kernels/__init__.py`` for the modules)."""
