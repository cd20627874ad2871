"""Drawing the backward graph: ``to_dot`` (DOT text), ``make_dot`` (a graphviz ``Digraph``) and
``print_graph`` (a text tree for the terminal).

The graph drawn is the one ``backward()`` walks: start at ``tensor.grad_fn`` and follow
``next_functions`` until the ``AccumulateGrad`` sinks of the leaves. Edges point the way the
forward computation ran (from an input's node to the node that consumed it), as in torchviz; each
edge is labelled with the shape and dtype of the tensor that flowed along it.

``to_dot`` and ``print_graph`` need nothing beyond jitgrad. ``make_dot`` needs the ``graphviz``
Python package (``pip install 'jitgrad[viz]'``); rendering to SVG/PNG further needs the Graphviz
``dot`` program, but ``make_dot(...).source`` is DOT text either way.

>>> import jitgrad
>>> from jitgrad.viz import format_graph
>>> x = jitgrad.tensor(2.0, requires_grad=True)
>>> print(format_graph((x * 3 + 4) ** 2, params={"x": x}))
PowBackward0
└── AddBackward0
    └── MulBackward0
        └── AccumulateGrad  x  () float64
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

__all__ = ["to_dot", "make_dot", "print_graph", "format_graph"]

# colours follow torchviz, so drawings look familiar to PyTorch users
_LEAF_COLOR = "lightblue"
_ROOT_COLOR = "darkolivegreen1"
_SAVED_COLOR = "orange"


@dataclass
class _Graph:
    """The drawing as plain data: rendered to DOT text by ``to_dot`` or fed to a ``Digraph``."""

    nodes: list = field(default_factory=list)  # (id, label, attrs)
    edges: list = field(default_factory=list)  # (tail, head, attrs)


def _dtype_name(dtype) -> str:
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).rsplit(".", 1)[-1]


def _shape_str(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _meta_str(shape, dtype) -> str:
    return f"{_shape_str(tuple(shape))} {_dtype_name(dtype)}"


def _param_names(params) -> dict:
    """id(tensor) -> name, from a dict, (name, tensor) pairs, or a Module's named_parameters()."""
    if params is None:
        return {}
    if hasattr(params, "named_parameters"):
        params = params.named_parameters()
    items = params.items() if hasattr(params, "items") else params
    names = {}
    for name, t in items:
        names.setdefault(id(t), name)
    return names


def _roots(tensor) -> list:
    tensors = list(tensor) if isinstance(tensor, (tuple, list)) else [tensor]
    for t in tensors:
        if not hasattr(t, "grad_fn"):
            raise TypeError(f"expected a jitgrad Tensor or a sequence of them, got {type(t).__name__}")
    return tensors


def _saved_entries(node) -> list:
    """(label, meta) for each value the node saved for backward; meta is "" for non-tensors."""
    saved = getattr(node, "_saved", None)
    if not saved:
        return []
    items = saved.items() if isinstance(saved, dict) else (
        (f"saved_tensors[{i}]", v) for i, v in enumerate(saved))
    out = []
    for name, value in items:
        if value is None:
            continue
        if hasattr(value, "unpack"):  # a SavedTensor: read its metadata without unpacking
            t = getattr(value, "_tensor", None)
            if t is not None:
                out.append((name, _meta_str(t.shape, t.dtype)))
            else:
                out.append((name, _meta_str(value._data.shape, value._data.dtype)))
        elif hasattr(value, "shape") and hasattr(value, "dtype"):
            out.append((name, _meta_str(value.shape, value.dtype)))
        else:
            out.append((f"{name} = {value!r}", ""))
    return out


def _build(tensor, params, show_saved) -> _Graph:
    names = _param_names(params)
    graph = _Graph()
    ids: dict = {}  # id(node) -> dot id
    counter = iter(range(sys.maxsize))

    def new_id() -> str:
        return f"n{next(counter)}"

    def visit(node) -> str:
        key = id(node)
        if key in ids:
            return ids[key]
        nid = ids[key] = new_id()
        label = node.name()
        if show_saved and getattr(node, "_released", False) and not hasattr(node, "variable"):
            label += "\n(saved tensors released)"
        graph.nodes.append((nid, label, {"shape": "box"}))
        variable = getattr(node, "variable", None)
        if variable is not None:  # AccumulateGrad: draw the leaf it writes .grad into
            vid = new_id()
            name = names.get(id(variable), "")
            vlabel = (name + "\n" if name else "") + _meta_str(variable.shape, variable.dtype)
            graph.nodes.append((vid, vlabel, {"shape": "box", "style": "filled",
                                              "fillcolor": _LEAF_COLOR}))
            graph.edges.append((vid, nid, {}))
        if show_saved:
            for sname, meta in _saved_entries(node):
                sid = new_id()
                slabel = sname + ("\n" + meta if meta else "")
                graph.nodes.append((sid, slabel, {"shape": "ellipse", "style": "filled",
                                                  "fillcolor": _SAVED_COLOR}))
                graph.edges.append((sid, nid, {"style": "dashed", "dir": "none"}))
        metas = getattr(node, "_next_meta", ())
        for i, (child, _nr) in enumerate(node.next_functions):
            if child is None:
                continue
            cid = visit(child)
            meta = metas[i] if i < len(metas) else None
            attrs = {"label": _meta_str(*meta)} if meta else {}
            graph.edges.append((cid, nid, attrs))
        return nid

    for k, t in enumerate(_roots(tensor)):
        name = names.get(id(t), "output" if k == 0 else f"output{k}")
        rid = new_id()
        graph.nodes.append((rid, f"{name}\n{_meta_str(t.shape, t.dtype)}",
                            {"shape": "box", "style": "filled", "fillcolor": _ROOT_COLOR}))
        fn = t.grad_fn
        if fn is None:
            continue  # a leaf or a tensor recorded without grad: nothing to draw above it
        graph.edges.append((visit(fn), rid, {}))
    return graph


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attr_str(attrs: dict) -> str:
    return ", ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items())


_GRAPH_ATTRS = {"rankdir": "TB"}
_NODE_ATTRS = {"fontname": "monospace", "fontsize": "12", "height": "0.2"}
_EDGE_ATTRS = {"fontname": "monospace", "fontsize": "10"}


def to_dot(tensor, params=None, show_saved: bool = False) -> str:
    """The backward graph of ``tensor`` (or a sequence of tensors) as DOT text.

    One box per node (``MulBackward0``, ``AccumulateGrad``, ...); each leaf is a light blue box
    with its name (from ``params``: a dict, ``(name, tensor)`` pairs such as
    ``module.named_parameters()``, or a module itself), shape and dtype; each edge carries the
    shape and dtype of the tensor that flowed along it. With ``show_saved``, the values each node
    saved for backward are drawn as orange ellipses attached to it (nodes whose saved tensors
    were freed by ``backward()`` say so). Needs no third-party package.
    """
    g = _build(tensor, params, show_saved)
    lines = ["digraph {"]
    lines.append(f"  graph [{_attr_str(_GRAPH_ATTRS)}]")
    lines.append(f"  node [{_attr_str(_NODE_ATTRS)}]")
    lines.append(f"  edge [{_attr_str(_EDGE_ATTRS)}]")
    for nid, label, attrs in g.nodes:
        lines.append(f"  {nid} [{_attr_str({'label': label, **attrs})}]")
    for tail, head, attrs in g.edges:
        lines.append(f"  {tail} -> {head}" + (f" [{_attr_str(attrs)}]" if attrs else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def make_dot(tensor, params=None, show_saved: bool = False):
    """The backward graph of ``tensor`` as a ``graphviz.Digraph`` (see ``to_dot`` for what is drawn).

    ``.source`` is DOT text; ``.render()``/``.pipe(format="svg")`` need the Graphviz ``dot``
    program. Requires the ``graphviz`` package: ``pip install 'jitgrad[viz]'``.
    """
    try:
        from graphviz import Digraph
    except ImportError as e:
        raise ImportError("jitgrad.viz.make_dot needs the graphviz package: "
                          "pip install 'jitgrad[viz]' (or use jitgrad.viz.to_dot for DOT text)") from e
    g = _build(tensor, params, show_saved)
    dot = Digraph(graph_attr=dict(_GRAPH_ATTRS), node_attr=dict(_NODE_ATTRS),
                  edge_attr=dict(_EDGE_ATTRS))
    # graphviz quotes labels but keeps backslashes as DOT escapes: write "\n" as the escape
    esc = lambda s: s.replace("\\", "\\\\").replace("\n", "\\n")  # noqa: E731
    for nid, label, attrs in g.nodes:
        dot.node(nid, esc(label), **attrs)
    for tail, head, attrs in g.edges:
        dot.edge(tail, head, **{k: esc(v) for k, v in attrs.items()})
    return dot


def format_graph(tensor, params=None) -> str:
    """The backward graph of ``tensor`` as a text tree, one node per line (``print_graph`` prints it).

    Children are the node's ``next_functions`` in order; inputs that need no gradient
    (``(None, 0)`` edges) are left out. A node reached a second time (a shared subgraph) is
    printed once more with ``(see above)`` instead of its subtree.
    """
    names = _param_names(params)
    lines: list = []
    seen: set = set()

    def label(node) -> str:
        variable = getattr(node, "variable", None)
        if variable is None:
            return node.name()
        name = names.get(id(variable))
        return f"{node.name()}  " + (f"{name}  " if name else "") + _meta_str(variable.shape,
                                                                              variable.dtype)

    def walk(node, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└── " if last else "├── ")
        again = id(node) in seen
        lines.append(prefix + branch + label(node) + ("  (see above)" if again else ""))
        if again:
            return
        seen.add(id(node))
        children = [c for c, _ in node.next_functions if c is not None]
        inner = prefix if top else prefix + ("    " if last else "│   ")
        for i, child in enumerate(children):
            walk(child, inner, i == len(children) - 1, False)

    for t in _roots(tensor):
        if t.grad_fn is None:
            lines.append(f"(no grad_fn: {'a leaf' if t.requires_grad else 'not recorded'})")
        else:
            walk(t.grad_fn, "", True, True)
    return "\n".join(lines)


def print_graph(tensor, params=None, file=None) -> None:
    """Print the backward graph of ``tensor`` as a tree: the seed tutorial's ``next_functions``
    walk, over every branch.

    >>> import jitgrad
    >>> a = jitgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> b = jitgrad.tensor([3.0, 4.0], requires_grad=True)
    >>> print_graph((a * b).sum(), params={"a": a, "b": b})
    SumBackward0
    └── MulBackward0
        ├── AccumulateGrad  a  (2,) float64
        └── AccumulateGrad  b  (2,) float64
    """
    print(format_graph(tensor, params), file=file if file is not None else sys.stdout)
