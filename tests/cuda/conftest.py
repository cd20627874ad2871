"""The CUDA tests run in their own process: under Numba's simulator on machines without a GPU
(``NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/cuda``, as ``.ci/run`` does) or on a real GPU
(``JITGRAD_TEST_CUDA=1``). The simulator must be chosen before numba.cuda is first imported, so
a plain ``pytest`` run (which shares its processes with the CPU tests) skips this directory."""
import os

if not (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or os.environ.get("JITGRAD_TEST_CUDA") == "1"):
    collect_ignore_glob = ["test_*.py"]

if os.environ.get("JITGRAD_RECORD_LAUNCHES") and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    from jitgrad.testing.ptx_check import install_recorder

    install_recorder(os.environ["JITGRAD_RECORD_LAUNCHES"])
