"""View tracking for autograd: where a view sits in its base, the ``grad_fn`` a view gets when
its base's history changes (``AsStridedBackward0``), and ``CopySlices``, the node an in-place op
on a view gives the base (PyTorch's design, Note [view tracking] in ``recording.py``).

Geometry: a view is located in its root by byte offsets, so any chain of view ops (slices with
negative steps, transposes, diagonals, expands) reduces to one map ``flat_index`` from the
view's elements to the root's elements in C order. The map is computed when a backward needs
it, from ``(offset, shape, strides)`` kept on the node, so a graph holds no index arrays.

``AsStridedBackward0``: ``y = root.flatten()[index]``; derivative: ``g`` scattered back, added
where elements repeat (an expanded view). ``CopySlices(fn)`` after ``view.op_(...)``: the
root's new value is the old one with the view's region replaced by ``fn(old view, others)``.
Its backward takes the region of ``g``, runs ``fn``'s backward on it, and returns
``(g with the region replaced by fn's gradient for the old view, fn's other gradients)``.
"""
from __future__ import annotations

import numpy as np

from ..graph.node import SECOND_BACKWARD_MSG, Node
from .core import dispatch, recording, upper
from . import indexing, views_cuda
from .index_common import flat_index
from .core.registry import LINEAR, def_composite

NO_GRAD_VIEW_REBASED_MSG = (
    "A view was created in no_grad mode and its base or another view of its base has been "
    "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
    "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
    "or both outside (if you want the inplace to be tracked).")


def _ptr(a: np.ndarray) -> int:
    if dispatch.device_of(a) != "cpu":  # a view and its root share one buffer: offsets compare
        return a.offset * a.itemsize
    return a.__array_interface__["data"][0]


def geometry(root: np.ndarray, view: np.ndarray) -> tuple:
    """``(root shape, root strides, itemsize, byte offset of the view, view shape, view
    strides)``: enough to locate every element of ``view`` inside ``root``."""
    return (root.shape, root.strides, root.itemsize, _ptr(view) - _ptr(root), view.shape,
            view.strides)


# --- AsStridedBackward0: the regenerated grad_fn of a view ----------------------------------
def _as_strided_fwd(ctx, x, geom):
    ctx.input_shape = x.shape
    return np.ascontiguousarray(x).reshape(-1)[flat_index(geom)]


def _as_strided_back(ctx, g):
    return (indexing.put_flat(dispatch.zeros(ctx.input_shape, g.dtype, g.device), flat_index(ctx.geom), g,
                              accumulate=True),)


AS_STRIDED = def_composite("as_strided_view", "AsStridedBackward0", ("x",), _as_strided_fwd,
                           _as_strided_back, attrs=("geom",), jvp=LINEAR,
                           cuda_forward=views_cuda.as_strided_view_forward, complex_ok=True)


def refresh_view(view) -> None:
    """Bring a view's ``grad_fn`` up to date after an in-place write to its storage (called by
    ``dispatch.gradient_edge`` and ``Tensor.grad_fn`` when the version moved on; registered
    with the core below)."""
    root = view._base
    if view._view_nograd:
        if view._requires_grad:  # the rebase in inplace.py flagged it
            raise RuntimeError(NO_GRAD_VIEW_REBASED_MSG)
    elif view._requires_grad and root._requires_grad:
        node = recording.new_node(AS_STRIDED)
        recording.record_node(node, (root,), (True,), (view,), (True,))
        node._attrs = {"geom": geometry(root._data, view._data), "input_shape": root._data.shape}
    view._view_version = view._version_counter.value


upper.register_view_refresher(refresh_view)


# --- CopySlices -----------------------------------------------------------------------------
class CopySlices(Node):
    """The grad_fn of a base after an in-place op ``fn`` on one of its views.

    ``next_functions`` are the base's previous history followed by ``fn``'s other inputs, as in
    PyTorch. Backward: ``gv = g[view]``; ``fn``'s gradients for ``gv``; the base gets ``g`` with
    the view's region replaced by the gradient for the view's old value.
    """

    qualified_name = "torch::autograd::CopySlices"  # what PyTorch's messages call it

    def __init__(self, root, view, fn):
        """Wired to ``root``'s history and ``fn``'s other inputs; ``root`` takes it as its
        history (``recording.take_history``) once written."""
        super().__init__()
        self.fn = fn
        self._geom = geometry(root._data, view._data)
        meta = recording.tensor_meta(root)
        recording.record_node(
            self, None, None, edges=(dispatch.gradient_edge(root),) + fn.next_functions[1:],
            next_meta=(meta,) + tuple(fn._next_meta[1:]), output_meta=(meta,))

    def apply(self, grad_outputs: list) -> list:
        if self._released:
            raise RuntimeError(SECOND_BACKWARD_MSG)
        g = grad_outputs[0]
        if g is None:
            return [None] * len(self._next_edges)
        index = flat_index(self._geom)
        res = list(self.fn.apply([indexing.take_flat(g, index)]))
        grad_base = None
        if self._next_edges[0][0] is not None:
            region = (res[0] if res[0] is not None
                      else dispatch.zeros(index.shape, g.dtype, g.device))
            grad_base = indexing.put_flat(g, index, region, unique=True)
        return [grad_base, *res[1:]]

    def _release(self) -> None:
        super()._release()
        self.fn._release()
