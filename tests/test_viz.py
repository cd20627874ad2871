"""jitgrad.viz: the DOT text and text tree of the backward graph (the seed example y = (3x + 4)^2)."""
import io
import re
import sys

import pytest

import jitgrad
from jitgrad import nn
from jitgrad.viz import format_graph, make_dot, print_graph, to_dot

_NODE = re.compile(r'^\s*(n\d+) \[label="((?:[^"\\]|\\.)*)"(.*)\]$')
_EDGE = re.compile(r'^\s*(n\d+) -> (n\d+)(?: \[(.*)\])?$')


def parse(dot: str):
    """(labels: id -> label, edges: [(tail label, head label, attrs text)]) of to_dot's output."""
    labels, edges = {}, []
    for line in dot.splitlines():
        if m := _NODE.match(line):
            labels[m[1]] = m[2].replace("\\n", "\n")
        elif m := _EDGE.match(line):
            edges.append((m[1], m[2], m[3] or ""))
    return labels, [(labels[t], labels[h], a) for t, h, a in edges]


def seed():
    x = jitgrad.tensor(2.0, requires_grad=True)
    return x, (x * 3 + 4) ** 2


def test_seed_example_nodes_and_edges():
    x, y = seed()
    dot = to_dot(y, params={"x": x})
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    labels, edges = parse(dot)
    assert sorted(labels.values()) == sorted([
        "output\n() float64", "PowBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad",
        "x\n() float64"])
    # edges run the forward way: leaf -> AccumulateGrad -> Mul -> Add -> Pow -> output,
    # each op edge labelled with the shape and dtype that flowed along it
    assert [(t, h) for t, h, _ in edges] == [
        ("x\n() float64", "AccumulateGrad"),
        ("AccumulateGrad", "MulBackward0"),
        ("MulBackward0", "AddBackward0"),
        ("AddBackward0", "PowBackward0"),
        ("PowBackward0", "output\n() float64"),
    ]
    assert [a for _, h, a in edges if h in ("MulBackward0", "AddBackward0", "PowBackward0")] == \
        ['label="() float64"'] * 3
    # no edge for the constants 3 and 4: their next_functions entries are (None, 0)
    assert y.grad_fn.next_functions[0][0].next_functions[1] == (None, 0)


def test_one_box_per_node_and_shared_nodes_drawn_once():
    a = jitgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.exp()
    y = (b * b + b).sum()          # b's ExpBackward0 feeds three edges
    labels, edges = parse(to_dot(y, params={"a": a}))
    names = sorted(v for v in labels.values() if "Backward" in v or v == "AccumulateGrad")
    assert names == ["AccumulateGrad", "AddBackward0", "ExpBackward0", "MulBackward0", "SumBackward0"]
    into_mul = [(t, a_) for t, h, a_ in edges if h == "MulBackward0"]
    assert into_mul == [("ExpBackward0", 'label="(3,) float64"')] * 2
    assert ("a\n(3,) float64", "AccumulateGrad", "") in edges


def test_leaf_names_from_named_parameters_and_shapes_on_edges():
    jitgrad.manual_seed(0)
    lin = nn.Linear(3, 2)
    x = jitgrad.ones(4, 3)
    labels, edges = parse(to_dot(lin(x).sum(), params=lin))
    dt = str(lin.weight.dtype).rsplit(".", 1)[-1]
    leaf_labels = sorted(v for v in labels.values() if v.startswith(("weight\n", "bias\n")))
    assert leaf_labels == [f"bias\n(2,) {dt}", f"weight\n(2, 3) {dt}"]
    # the same names from the (name, tensor) pairs named_parameters() yields
    labels2, _ = parse(to_dot(lin(x).sum(), params=lin.named_parameters()))
    assert set(leaf_labels) <= set(labels2.values())
    # the sum's input edge carries the output shape (4, 2)
    assert any(h == "SumBackward0" and "(4, 2)" in a for _, h, a in edges)


def test_show_saved_and_release():
    x, y = seed()
    labels, edges = parse(to_dot(y, show_saved=True))
    saved_into_pow = sorted(t for t, h, a in edges if h == "PowBackward0" and "dashed" in a)
    assert saved_into_pow == ["exponent = 2", "x\n() float64"]
    assert ("y = 3", "MulBackward0", 'style="dashed", dir="none"') in edges
    assert "x\n() float64" not in labels.values() or "AccumulateGrad" in labels.values()
    y.backward()
    labels, edges = parse(to_dot(y, show_saved=True))
    assert "PowBackward0\n(saved tensors released)" in labels.values()
    assert not any("dashed" in a for _, _, a in edges)
    # without show_saved nothing about saved values is drawn
    assert "released" not in to_dot(y)


def test_several_roots_and_leaf_root():
    x, y = seed()
    labels, edges = parse(to_dot([y, x * 2], params={"x": x}))
    assert "output\n() float64" in labels.values() and "output1\n() float64" in labels.values()
    assert sum(v == "AccumulateGrad" for v in labels.values()) == 1  # one sink for x
    labels, edges = parse(to_dot(x, params={"x": x}))
    assert list(labels.values()) == ["x\n() float64"] and edges == []
    with pytest.raises(TypeError, match="jitgrad Tensor"):
        to_dot(3.0)


def test_labels_are_escaped():
    x = jitgrad.tensor(1.0, requires_grad=True)
    dot = to_dot(x * 2, params={'my "x"\\': x})
    assert r'label="my \"x\"\\\n() float64"' in dot


def test_print_graph_seed_tree():
    x, y = seed()
    buf = io.StringIO()
    print_graph(y, params={"x": x}, file=buf)
    assert buf.getvalue() == (
        "PowBackward0\n"
        "└── AddBackward0\n"
        "    └── MulBackward0\n"
        "        └── AccumulateGrad  x  () float64\n")


def test_format_graph_branches_and_repeats():
    a = jitgrad.tensor([1.0, 2.0], requires_grad=True)
    b = jitgrad.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    assert format_graph((c + c).sum(), params={"a": a}) == (
        "SumBackward0\n"
        "└── AddBackward0\n"
        "    ├── MulBackward0\n"
        "    │   ├── AccumulateGrad  a  (2,) float64\n"
        "    │   └── AccumulateGrad  (2,) float64\n"
        "    └── MulBackward0  (see above)")
    with jitgrad.no_grad():
        assert format_graph(a * 2) == "(no grad_fn: not recorded)"
    assert format_graph(a) == "(no grad_fn: a leaf)"


def test_make_dot_returns_digraph():
    graphviz = pytest.importorskip("graphviz")
    x, y = seed()
    dot = make_dot(y, params={"x": x}, show_saved=True)
    assert isinstance(dot, graphviz.Digraph)
    src = dot.source
    for name in ("PowBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad", "exponent = 2"):
        assert name in src
    assert r'[label="x\n() float64"' in src  # line breaks as the DOT escape, not raw newlines
    # the same nodes and edges as to_dot, in the same order
    edges = re.findall(r"(n\d+) -> (n\d+)", src)
    assert edges == re.findall(r"(n\d+) -> (n\d+)", to_dot(y, params={"x": x}, show_saved=True))


def test_make_dot_without_graphviz_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    x, y = seed()
    with pytest.raises(ImportError, match=r"jitgrad\[viz\]"):
        make_dot(y)
