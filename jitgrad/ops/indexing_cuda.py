"""The CUDA forwards of the ``ops.indexing`` rows (their ``cuda_forward=``): the same contract
as the CPU forwards over ``kernels.cuda.backend.CudaArray`` operands, with the kernels of
``kernels.cuda.index`` (reached lazily: Note [lazy cuda]). Index arrays stay on the host, where
they are validated; positions (``ops.index_common.positions``) go to the device.
"""
from __future__ import annotations

from .core import dispatch
from .index_common import check_basic, index_kernels, positions


def getitem_forward(ctx, a, index, kind):
    ctx.input_shape = a.shape
    if kind == "advanced":  # host positions from the host index arrays (validated there)
        return index_kernels().take(a, positions(a.shape, index))
    check_basic(index, a.ndim)
    return a[index]


def index_backward_forward(ctx, g, shape, index, kind):
    be = dispatch.cuda_backend()
    out = be.zeros(shape, g.dtype, g.index)
    if kind == "advanced":  # atomic adds: repeated indices accumulate
        index_kernels().put(out, positions(shape, index), g, accumulate=True)
    else:
        be.copy_into(out[index], g)
    return out


def take_forward(ctx, x, index):
    ctx.input_shape = x.shape
    return index_kernels().take(x, index)
