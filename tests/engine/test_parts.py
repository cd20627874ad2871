"""The engine's named parts on their own: ReadyQueue order, InputBuffer additions (plain and
deterministic), the broadcast reduction of validate_outputs, and the FusedRegion a region's
root is handed (Destination of each gradient)."""
import numpy as np
import pytest

import jitgrad as jg
from jitgrad.graph.node import GraphRoot, Node
from jitgrad.engine import regions
from jitgrad.engine.graph_task import GraphTask, ReadyQueue, count_dependencies
from jitgrad.engine.input_buffer import InputBuffer, OrderedInputBuffer, validate_outputs


class Stub(Node):
    """A node with a chosen sequence number and input metadata."""

    def __init__(self, seq=0, metas=(None,)):
        super().__init__()
        self._sequence_nr = seq
        self._next_edges = tuple((None, 0) for _ in metas)
        self._next_meta = tuple(metas)


def test_ready_queue_pops_latest_created_first_then_first_pushed():
    queue = ReadyQueue()
    a, b, c = Stub(1), Stub(5), Stub(3)
    sink1, sink2 = Stub(float("inf")), Stub(float("inf"))  # leaf sinks: UINT64_MAX in PyTorch
    for node in (a, sink1, b, c, sink2):
        queue.push(node, [node])
    assert len(queue) == 5 and queue.peek() is sink1
    popped = []
    while queue:
        node, buffer = queue.pop()
        assert buffer == [node]  # each node comes with its own buffer
        popped.append(node)
    assert popped == [sink1, sink2, b, c, a]


def tensor(values):
    return jg.tensor(np.array(values, dtype=np.float64))


def test_input_buffer_moves_the_gradient_and_sums_in_place_when_owned():
    buffer = [None, None]
    first, second = tensor([1.0, 2.0]), tensor([10.0, 20.0])
    grads = [first]
    del first
    InputBuffer.add(buffer, 1, grads, 0, 7, False)
    assert grads == [None] and buffer[0] is None  # moved out of the producer's list
    kept = id(buffer[1])  # (not the tensor: a reference here would make it not the engine's)
    grads = [second]
    del second
    InputBuffer.add(buffer, 1, grads, 0, 8, False)
    assert id(buffer[1]) == kept  # added into the buffer the engine held alone
    assert buffer[1].tolist() == [11.0, 22.0]


def test_input_buffer_adds_out_of_place_when_someone_else_holds_both():
    first, second = tensor([1.0]), tensor([2.0])
    buffer = [first]
    InputBuffer.add(buffer, 0, [second], 0, 0, False)
    assert buffer[0] is not first and buffer[0] is not second
    assert first.tolist() == [1.0] and second.tolist() == [2.0] and buffer[0].tolist() == [3.0]


def test_ordered_input_buffer_sums_by_producer_whatever_the_arrival_order():
    # (1e16 + 1) - 1e16 == 0 in float64, (1e16 - 1e16) + 1 == 1: the order shows in the bits
    arrivals = [((1, 0), -1e16), ((3, 0), 1e16), ((2, 0), 1.0)]
    results = set()
    for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2]):
        buffer = [None]
        for k in order:
            (seq, i), value = arrivals[k]
            grads = [None] * i + [tensor([value])]
            OrderedInputBuffer.add(buffer, 0, grads, i, seq, False)
        results.add(OrderedInputBuffer.variables(buffer, False)[0].item())
    assert results == {0.0}  # producers 3, 2, 1: latest first, as the docs say


def test_validate_outputs_sums_broadcast_gradients_down_to_the_input_shape():
    node = Stub(metas=(((2,), jg.float64), None, ((1, 3), jg.float64)))
    g_wide = tensor(np.ones((4, 2)))
    out = validate_outputs(node, (g_wide, None, tensor(np.ones((2, 3)))))
    assert out[0].shape == (2,) and out[0].tolist() == [4.0, 4.0]
    assert out[1] is None
    assert out[2].shape == (1, 3) and out[2].tolist() == [[2.0, 2.0, 2.0]]


def test_validate_outputs_names_the_node_on_a_wrong_count_or_shape():
    node = Stub(metas=(((2,), jg.float64),))
    with pytest.raises(RuntimeError, match="function Stub returned an incorrect number of "
                                           r"gradients \(expected 1, got 2\)"):
        validate_outputs(node, (None, None))
    with pytest.raises(RuntimeError, match=r"Function Stub returned an invalid gradient at "
                                           r"index 0 - got \[3\] but expected shape compatible "
                                           r"with \[2\]"):
        validate_outputs(node, (tensor([1.0, 2.0, 3.0]),))


def test_collect_names_where_each_gradient_goes():
    """W2's DAG: ``tanh(sin(x) * exp(-x * x) + 0.5 * x)``: every member's gradient for x leaves
    through the region's one outside edge; the others go to members."""
    x = jg.tensor(np.linspace(-1.0, 1.0, 8), requires_grad=True)
    y = jg.tanh(jg.sin(x) * jg.exp(-x * x) + 0.5 * x)
    task = GraphTask(keep_graph=True)
    count_dependencies(task, GraphRoot([(y.grad_fn, 0)], [None]))
    region = regions.collect(task, y.grad_fn)
    names = [node.name() for node in region.nodes]
    assert names[0] == "TanhBackward0" and len(names) == 8
    assert region.n_edges == 1 and region._next_edges[0][0].name() == "AccumulateGrad"
    assert region.name() == "TanhBackward0" and region.partials is None
    outside = regions.Destination(True, 0)
    for node, destinations in zip(region.nodes, region.destinations):
        for (nxt, _), dest in zip(node._next_edges, destinations):
            if nxt is None:
                assert dest is None
            elif nxt in region.nodes:
                assert dest == regions.Destination(False, region.nodes.index(nxt))
            else:
                assert dest == outside and nxt.name() == "AccumulateGrad"
    # x reaches the one outside edge four times: three of those counts are merged away
    assert list(region.merged.values()) == [3]
