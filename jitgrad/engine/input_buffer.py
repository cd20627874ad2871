"""InputBuffer: the gradients on their way into one node, and what they pass through to get there.

Every gradient a node returns is shaped like the forward input it belongs to
(``validate_outputs``, Note [broadcast reduction]) and then added into the ``InputBuffer`` of the
node that edge leads to: one slot per forward output of that node, as PyTorch's InputBuffer.
The engine counts the node's dependencies down as contributions are stored; when the count
reaches zero the buffer goes into the ready queue with its node, and the node's ``apply``
receives the buffer itself (a plain list: ``buffer[k]`` is the gradient of forward output
``k``). In deterministic mode the buffers are handled by ``OrderedInputBuffer``.

Note [broadcast reduction]: a gradient whose shape differs from the forward input's recorded
shape is summed down to it here, in one place (PyTorch's ``validate_outputs``), so no op's
backward rule unbroadcasts by hand. Tensors are handled by duck typing (``shape``, ``dtype``,
``_data.dtype``, ``_sum_to_shape``, ``_cast``, ``+``, ``_add_in_place``).
"""
from __future__ import annotations

from ..graph.node import sole_owner

def validate_outputs(node, grads) -> list:
    """The engine's own list of ``node``'s gradients, one per next edge, each summed down to
    the shape of the forward input it belongs to and cast to its dtype (Note [broadcast
    reduction]); raises, naming the node, for a wrong count or a shape that does not reduce."""
    if len(grads) != len(node._next_edges):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(node._next_edges)}, got {len(grads)})")
    out = list(grads)  # the engine's own list: gradients are moved out of it as they go on
    metas = node._next_meta
    for i in range(len(out)):
        g = out[i]
        if g is None:
            continue
        meta = metas[i]
        if meta is None:
            continue
        shape, dtype = meta
        if g._data.shape != shape:  # (``g.shape``, without the property's frame)
            try:
                g = g._sum_to_shape(shape)
            except ValueError:
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}") from None
        if g._data.dtype is not dtype.np and g.dtype is not dtype:  # the first test is cheap
            g = g._cast(dtype)
        out[i] = g
    return out


def sum_gradients(a, b, create_graph: bool):
    """``a + b`` for two gradients meeting in one input slot; the caller holds each in exactly
    one variable and nowhere else. Unless recorded (``create_graph``), the sum is written into
    whichever of the two the engine holds alone (Note [owned buffers] in graph/node.py), as
    PyTorch's InputBuffer does: no new buffer per addition, and the result is again the
    engine's alone for the next one (and for AccumulateGrad to keep). The tensor decides
    whether a raw in-place add is exact (``_add_in_place``: not while a transform needs the
    tangents added too, not for subclasses). Floating-point addition is commutative: the
    result is bitwise the same either way."""
    if not create_graph and a is not b:
        if sole_owner(a, 2) and a._add_in_place(b):  # 2: the caller's variable and ``a``
            return a
        if sole_owner(b, 2) and b._add_in_place(a):
            return b
    return a + b  # recorded iff create_graph


class InputBuffer:
    """The gradients a node has received so far: a plain list, one slot per forward output of
    the node (None: nothing yet), which the node's ``apply`` receives as it is once every
    contribution has arrived. This class holds what is done to such a list (PyTorch's
    InputBuffer wraps a vector the same way). The list is not an instance of a subclass: one is
    made per node that receives a gradient (``[None] * n``, in ``engine._deliver``), and a
    subclass was measurably slower to make and index per node of a chain (docs/engine.md)."""

    __slots__ = ()

    @staticmethod
    def add(buffer: list, input_nr: int, grads: list, i: int, seq, create_graph: bool) -> None:
        """Move ``grads[i]`` into slot ``input_nr``; a gradient already there is summed with it
        (``sum_gradients``, in place when the engine owns one of the two). ``seq``: the
        producer's ``sequence_nr``; only ``OrderedInputBuffer`` keeps it (with ``i``)."""
        grad = grads[i]
        grads[i] = None  # moved: ``grad`` is its only holder here (Note [owned buffers])
        if grad is None:
            return
        old = buffer[input_nr]
        if old is None:
            buffer[input_nr] = grad
        else:
            buffer[input_nr] = None
            buffer[input_nr] = sum_gradients(old, grad, create_graph)

    @staticmethod
    def take(buffer: list, input_nr: int):
        """Take the gradient out of slot ``input_nr`` (to add to it outside a lock, or to hand
        it to a fused region's kernel)."""
        grad = buffer[input_nr]
        buffer[input_nr] = None
        return grad

    @staticmethod
    def variables(buffer: list, create_graph: bool) -> list:
        """The node's input gradients, once every contribution has arrived."""
        return buffer


class _Contributions(list):
    """Deterministic mode: the ``(key, gradient)`` pairs that reached one input slot."""

    __slots__ = ()


def _key(item):
    return item[0]


class OrderedInputBuffer(InputBuffer):
    """Deterministic mode (``use_deterministic_algorithms``): each slot keeps its contributions
    apart, with their producers' ``(sequence_nr, edge)``, and ``variables`` adds them in that
    order (latest first), whatever order threads delivered them in."""

    __slots__ = ()

    @staticmethod
    def add(buffer: list, input_nr: int, grads: list, i: int, seq, create_graph: bool) -> None:
        grad = grads[i]
        grads[i] = None  # moved into the slot (Note [owned buffers])
        if grad is None:
            return
        slot = buffer[input_nr]
        if slot is None:
            slot = buffer[input_nr] = _Contributions()
        slot.append(((seq, i), grad))

    @staticmethod
    def variables(buffer: list, create_graph: bool) -> list:
        for nr in range(len(buffer)):
            slot = buffer[nr]
            if type(slot) is _Contributions:
                slot.sort(key=_key, reverse=True)
                total = None
                for k in range(len(slot)):
                    g = slot[k][1]
                    slot[k] = None  # moved out: ``g`` is its only holder here (Note [owned buffers])
                    total = g if total is None else sum_gradients(total, g, create_graph)
                buffer[nr] = total
        return buffer
