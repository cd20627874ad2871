"""The CUDA forward of the ``ops.views`` row (its ``cuda_forward=``), with the kernels of
``kernels.cuda.index`` (reached lazily: Note [lazy cuda])."""
from __future__ import annotations

from .core import dispatch
from .index_common import flat_index


def as_strided_view_forward(ctx, x, geom):
    ctx.input_shape = x.shape
    return dispatch.cuda_kernels("index").take(x, flat_index(geom))
