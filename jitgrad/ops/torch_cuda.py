"""The CUDA forwards of the torch_* families' rows and of the LAPACK-backed rows of
``ops.scipy_linalg`` (``lu_factor``, ``matrix_exp``) (``OpDef.cuda_forward``).

These ops are about coverage, not speed (Note [pointwise rows] in ops/torch_common.py): each
CUDA forward runs the row's own NumPy forward on host copies of the operands and moves the
results back to the operands' device, so values, special values and result dtypes are the
CPU's exactly; the cost is one round trip through the host per call. The backward rules are
Tensor code and run on the device.
"""
from __future__ import annotations

import numpy as np

from .core import dispatch


def host_forward(cpu_forward):
    """The CUDA forward of a row whose CPU forward is ``cpu_forward``: computed on the host."""
    def forward(ctx, *arrays, **attrs):
        device = next(d for d in map(dispatch.device_of, arrays) if d != "cpu")
        result = cpu_forward(ctx, *[dispatch.move(a, "cpu") for a in arrays], **attrs)
        if isinstance(result, tuple):
            return tuple(dispatch.move(np.asarray(r), device) for r in result)
        return dispatch.move(np.asarray(result), device)

    forward.__name__ = forward.__qualname__ = f"{cpu_forward.__name__}_cuda"
    return forward
