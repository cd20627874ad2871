"""The CUDA forwards of the ``ops.scatter`` read rows (their ``cuda_forward=``), with the
kernels of ``kernels.cuda.index`` (reached lazily: Note [lazy cuda]). The writing rows' writers
serve both devices (``ops.scatter``).
"""
from __future__ import annotations

from .core import dispatch


def _ci():
    return dispatch.cuda_kernels("index")


def index_select_forward(ctx, x, dim, index):
    ctx.input_shape = x.shape
    return _ci().dim_gather(x, dim, index, vector=True)


def gather_forward(ctx, x, dim, index):
    ctx.input_shape = x.shape
    return _ci().dim_gather(x, dim, index, vector=False)


def via_host(forward):
    """The CUDA forward of a row that has no kernel yet (``ops.scatter_reduce``): its CPU
    ``forward`` on host copies of the arrays, the result copied up to their device."""
    def cuda_forward(ctx, *arrays, **attrs):
        device = dispatch.device_of(arrays[0])
        out = forward(ctx, *[dispatch.move(a, "cpu") for a in arrays], **attrs)
        return dispatch.move(out, device)
    return cuda_forward
