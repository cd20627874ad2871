"""The CUDA forwards of the ``ops.linalg`` matmul rows and of the LAPACK-backed rows of
``ops.scipy_linalg`` (their ``cuda_forward=``)."""
from __future__ import annotations

import numpy as np

from .core import dispatch


def matmul_forward(ctx, a, b):
    """``device.cuda_linalg.matmul`` (tiled; strided operands read in place)."""
    return dispatch.cuda_kernels("linalg").matmul(a, b)


def host_forward(cpu_forward):
    """The CUDA forward of a LAPACK-backed row (``lu_factor``, ``matrix_exp``) whose CPU
    forward is ``cpu_forward``: computed on host copies of the operands (one round trip: these
    rows have no device kernels yet), the results moved back to the operands' device. The
    backward rules are Tensor code and run on the device."""
    def forward(ctx, *arrays, **attrs):
        device = next(d for d in map(dispatch.device_of, arrays) if d != "cpu")
        result = cpu_forward(ctx, *[dispatch.move(a, "cpu") for a in arrays], **attrs)
        if isinstance(result, tuple):
            return tuple(dispatch.move(np.asarray(r), device) for r in result)
        return dispatch.move(np.asarray(result), device)

    forward.__name__ = forward.__qualname__ = f"{cpu_forward.__name__}_cuda"
    return forward
