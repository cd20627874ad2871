"""Note [bounded kernels] (compile/codegen.py): a long fusible run compiles as pieces of
bounded size, cut a whole number of periods apart so a repeated body shares one kernel; the
result equals eager's, and a very long trace warns and names ``fori_loop``."""
import sys

import numpy as np
import pytest

import jitgrad as jg
from jitgrad import func

codegen = sys.modules["jitgrad.compile.codegen"]


def _unrolled(steps):
    def f(w, b, xs):
        c = jg.zeros(4)
        acc = jg.zeros(())
        for t in range(steps):
            c = jg.tanh(c * w + xs[t] + b)  # b: 0-d, read through a broadcast
            acc = acc + (c * c).sum()
        return acc
    return f


def test_unrolled_loop_compiles_in_shared_pieces(monkeypatch):
    """... and the pieces stay steps of their own (Note [native segments]): never part of a
    segment, whose source would be new for every repeat."""
    native = sys.modules["jitgrad.compile.native"]
    groups, segments = [], []
    original, original_segment = codegen.bounded_groups, native.Segment

    def recording(*args):
        made = original(*args)
        groups.extend(made)
        return made

    def recording_segment(graph, weak, items, *rest):
        segments.append(list(items))
        return original_segment(graph, weak, items, *rest)
    monkeypatch.setattr(codegen, "bounded_groups", recording)
    monkeypatch.setattr(native, "Segment", recording_segment)
    monkeypatch.setattr(native, "ENABLED", True)
    rng = np.random.default_rng(0)
    steps = 80
    w, b = jg.tensor(rng.standard_normal(4)), jg.tensor(0.3)
    xs = jg.tensor(rng.standard_normal((steps, 4)))
    f = _unrolled(steps)
    g = jg.compile(func.grad(f, argnums=(0, 1)))
    with pytest.warns(UserWarning, match="traced unrolled.*fori_loop"):
        first = g(w, b, xs)
    second = g(w, b, xs)  # the compiled program
    want = func.grad(f, argnums=(0, 1))(w, b, xs)
    for got in (first, second):
        for a, e in zip(got, want):
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)
    sizes = [sum(n.op.elementwise for n in grp.nodes) for grp in groups]
    assert max(sizes) <= codegen.MAX_GROUP_NODES and sum(sizes) > 4 * codegen.MAX_GROUP_NODES
    sources = {grp.source(False) for grp in groups}
    assert len(sources) <= len(groups) // 2  # the repeated pieces share their kernels
    assert sum(grp.piece for grp in groups) >= 4
    assert not [item for items in segments for item in items if getattr(item, "piece", False)]


def test_period_finds_the_repeat_and_tolerates_none():
    class Op:
        def __init__(self, name):
            self.name, self.elementwise, self.attrs = name, True, ()

    class Node:
        def __init__(self, name, args, out):
            self.op, self.args, self.outputs, self.attrs = Op(name), args, [out], {}
            self.shape = (4,)
            self.compute_dtype = "float64"

    class Graph:
        values = {}
    nodes, prev = [], 0
    for k in range(60):  # mul, add, tanh, repeated; each reads the one before
        name = ("mul", "add", "tanh")[k % 3]
        nodes.append(Node(name, [("v", prev)], k + 1))
        prev = k + 1
    Graph.values[0] = type("V", (), {"shape": (4,)})()
    tokens = codegen._tokens(Graph, nodes)
    assert codegen._period(tokens, 0) == 3 and codegen._period(tokens, 4) == 3
    irregular = codegen._tokens(Graph, [Node(f"op{k}", [("v", 0)], k + 1) for k in range(20)])
    assert codegen._period(irregular, 0) == 1

