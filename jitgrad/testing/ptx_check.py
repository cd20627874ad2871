"""Do the CUDA kernels compile for a real GPU? A check that needs no GPU.

Numba's simulator runs kernels as plain Python, so it accepts code the CUDA compiler would
reject. This closes that gap in two steps:

1. While the CUDA tests run under the simulator, ``install_recorder(path)`` notes every kernel
   launch: which kernel (a module-level ``@cuda.jit`` function by module and name, or a generated
   elementwise kernel by its body and operand modes) and the Numba types of its arguments.
2. ``python -m jitgrad.testing.ptx_check RECORDS`` (a process *without* the simulator) compiles
   each distinct (kernel, signature) to PTX for compute capability 9.0 (H100/H200) with NVVM, as a
   GPU would on first launch, and reports every failure. It needs NVVM (the ``nvidia-nvvm``
   wheel or a CUDA toolkit), not a GPU or driver.
"""
from __future__ import annotations

import json
import sys

import numpy as np

CC = (9, 0)


def _describe(arg):
    """A JSON description of a kernel argument's Numba type."""
    ary = getattr(arg, "_ary", None)  # the simulator's device array wraps a host array
    if ary is not None:
        layout = "C" if ary.flags.c_contiguous else ("F" if ary.flags.f_contiguous else "A")
        return ["array", ary.dtype.str, ary.ndim, layout]
    if isinstance(arg, tuple):
        return ["tuple", [_describe(a) for a in arg]]
    if isinstance(arg, (bool, np.bool_)):
        return ["scalar", "?"]
    if isinstance(arg, int):
        return ["scalar", "<i8"]
    if isinstance(arg, float):
        return ["scalar", "<f8"]
    if isinstance(arg, np.generic):
        return ["scalar", arg.dtype.str]
    return ["unknown", type(arg).__name__]


def _kernel_id(fn):
    key = getattr(fn, "jitgrad_key", None)
    if key is not None:
        return list(key)
    return ["module", fn.__module__, fn.__qualname__]


def install_recorder(path: str) -> None:
    """Append a JSON line per distinct simulated kernel launch to ``path``."""
    from numba.cuda.simulator import kernel as sim_kernel

    original = sim_kernel.FakeCUDAKernel.__call__
    seen = set()

    def recording_call(self, *args):
        if not self._device and not sim_kernel._kernel_context:
            record = json.dumps([_kernel_id(self.fn), [_describe(a) for a in args]])
            if record not in seen:
                seen.add(record)
                with open(path, "a") as fh:
                    fh.write(record + "\n")
        return original(self, *args)

    sim_kernel.FakeCUDAKernel.__call__ = recording_call


def _numba_type(desc):
    import numba
    from numba import types

    kind = desc[0]
    if kind == "array":
        return types.Array(numba.from_dtype(np.dtype(desc[1])), desc[2], desc[3])
    if kind == "scalar":
        return numba.from_dtype(np.dtype(desc[1]))
    if kind == "tuple":
        items = [_numba_type(d) for d in desc[1]]
        if items and all(t == items[0] for t in items):
            return types.UniTuple(items[0], len(items))
        return types.Tuple(items)
    raise TypeError(f"kernel argument of unsupported type {desc[1]}")


def _resolve(module, qualname):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _find_kernel(kid):
    """The Python function of a recorded kernel, in this (non-simulator) process."""
    import importlib

    if kid[0] == "elementwise":
        from jitgrad.kernels.cuda import backend

        _, module, qualname, modes, flat = kid
        body = importlib.import_module(module)
        for part in qualname.split("."):
            body = getattr(body, part)
        return backend._get_kernel(body, modes, flat).py_func
    if kid[0] == "factory":  # kernels.cuda.backend.tag_kernel: rebuild the kernel from its factory
        _, module, qualname, args = kid
        factory = _resolve(module, qualname)
        built = factory(*[_resolve(*a["fn"]) if isinstance(a, dict) and "fn" in a else
                          np.dtype(a["dtype"]) if isinstance(a, dict) else a for a in args])
        return built.py_func
    _, module, qualname = kid
    if "<locals>" in qualname:
        raise LookupError(f"{module}.{qualname} is made inside a function: give it a "
                          "module-level name (or a jitgrad_key) so the PTX check can find it")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return getattr(obj, "py_func", obj)


def check(records_path: str) -> list:
    """Compile every recorded (kernel, signature); return the failures as strings."""
    from numba import cuda
    import numba.cuda.dispatcher as cuda_dispatcher

    from jitgrad.ops.core import dispatch

    class _TargetDevice:  # device functions ask the current device for its compute capability
        compute_capability = CC

    cuda_dispatcher.get_current_device = lambda: _TargetDevice()
    dispatch.cuda_backend()  # registers the CUDA overloads of the scalar math
    with open(records_path) as fh:
        records = sorted({line.strip() for line in fh if line.strip()})
    failures = []
    for line in records:
        kid, descs = json.loads(line)
        try:
            fn = _find_kernel(kid)
            sig = tuple(_numba_type(d) for d in descs)
            cuda.compile_ptx(fn, sig, cc=CC)
        except Exception as err:  # every failure is reported, the check goes on
            msg = str(err).strip().splitlines()
            failures.append(f"{'.'.join(map(str, kid[1:3]))} {kid[3:] if len(kid) > 3 else ''} "
                            f"{descs}: {type(err).__name__}: {' | '.join(msg[:6])}")
    print(f"PTX check (sm_{CC[0]}{CC[1]}): {len(records)} kernel signatures, "
          f"{len(records) - len(failures)} compiled, {len(failures)} failed")
    return failures


def probe() -> None:
    """Compile one small kernel to PTX: raises when the toolchain (NVVM, NVRTC, libdevice) is
    missing, so callers can skip the check with the reason."""
    import math

    from numba import cuda, float64, types
    import numba.cuda.dispatcher as cuda_dispatcher

    class _TargetDevice:
        compute_capability = CC

    cuda_dispatcher.get_current_device = lambda: _TargetDevice()

    def kernel(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = math.exp(a[i])

    cuda.compile_ptx(kernel, (types.Array(float64, 1, "C"),), cc=CC)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--probe"]:
        probe()
        return 0
    failures = check(argv[0])
    for f in failures:
        print("FAILED", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
