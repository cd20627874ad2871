"""The CUDA forward of the ``ops.views`` row (its ``cuda_forward=``), with the kernels of
``kernels.cuda.index`` (reached lazily: Note [lazy cuda])."""
from __future__ import annotations

from .core import dispatch


def as_strided_view_forward(ctx, x, geom):
    from .views import flat_index  # call time: ops.views imports this module at its top

    ctx.input_shape = x.shape
    return dispatch.cuda_kernels("index").take(x, flat_index(geom))
