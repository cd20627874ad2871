"""The CUDA forward of the ``ops.linalg`` matmul rows (their ``cuda_forward=``)."""
from __future__ import annotations

from .core import dispatch


def matmul_forward(ctx, a, b):
    """``device.cuda_linalg.matmul`` (tiled; strided operands read in place)."""
    return dispatch.cuda_kernels("linalg").matmul(a, b)
