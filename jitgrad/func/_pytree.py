"""Pytrees: nested tuples, lists and dicts (namedtuples too) whose leaves are tensors (or
anything else). ``None`` is an empty node (no leaf), as in JAX and torch.utils._pytree; dict
keys keep their insertion order."""
from __future__ import annotations


class TreeSpec:
    """The structure of a pytree: ``kind`` is "leaf", "none", "tuple", "list" or "dict"."""

    __slots__ = ("kind", "ctx", "children", "n_leaves", "_hash")

    def __init__(self, kind, ctx=None, children=()):
        self.kind, self.ctx, self.children = kind, ctx, tuple(children)
        self.n_leaves = (1 if kind == "leaf" else 0) + sum(c.n_leaves for c in self.children)
        self._hash = hash((kind, self.children))  # immutable: hashed once (compile keys)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind and self.ctx == other.ctx
                and self.children == other.children)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.ctx, self.children)) + "}"
        return f"[{inner}]" if self.kind == "list" else f"({inner})"


LEAF = TreeSpec("leaf")


def tree_flatten(tree):
    """``(leaves, spec)`` with the leaves in depth-first order."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves) -> TreeSpec:
    if tree is None:
        return TreeSpec("none")
    if isinstance(tree, tuple):
        return TreeSpec("tuple", type(tree), [_flatten(x, leaves) for x in tree])
    if isinstance(tree, list):
        return TreeSpec("list", None, [_flatten(x, leaves) for x in tree])
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeSpec("dict", keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec: TreeSpec):
    """Rebuild the tree of ``spec`` from ``leaves`` (inverse of ``tree_flatten``)."""
    it = iter(leaves)
    out = _unflatten(it, spec)
    if next(it, _END) is not _END:
        raise ValueError(f"tree_unflatten: more leaves than the {spec.n_leaves} of {spec!r}")
    return out


_END = object()


def _unflatten(it, spec):
    if spec.kind == "leaf":
        leaf = next(it, _END)
        if leaf is _END:
            raise ValueError("tree_unflatten: too few leaves")
        return leaf
    if spec.kind == "none":
        return None
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind == "list":
        return children
    if spec.kind == "dict":
        return dict(zip(spec.ctx, children))
    cls = spec.ctx
    if cls is tuple:
        return tuple(children)
    if hasattr(cls, "_fields"):  # namedtuple
        return cls(*children)
    return cls(children)


def unflattener(spec: TreeSpec):
    """A function ``leaves -> tree`` of ``spec``'s structure, for calls that rebuild one
    structure many times (a compiled function's outputs): the structure written out as one
    expression, so a call is one Python frame instead of a recursion over the spec."""
    names: dict = {}
    counter = iter(range(spec.n_leaves))

    def expr(s) -> str:
        if s.kind == "leaf":
            return f"r[{next(counter)}]"
        if s.kind == "none":
            return "None"
        items = [expr(c) for c in s.children]
        if s.kind == "list":
            return "[" + ", ".join(items) + "]"
        if s.kind == "dict":
            key = f"k{len(names)}"
            names[key] = s.ctx
            return f"dict(zip({key}, ({''.join(i + ', ' for i in items)})))"
        if s.ctx is tuple:
            return "(" + "".join(i + ", " for i in items) + ")"
        cls = f"c{len(names)}"
        names[cls] = s.ctx
        if hasattr(s.ctx, "_fields"):  # namedtuple
            return f"{cls}(" + ", ".join(items) + ")"
        return f"{cls}([" + ", ".join(items) + "])"
    return eval(f"lambda r: {expr(spec)}", names)  # noqa: S307 (built from the spec only)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree, what: str) -> list:
    """One entry of ``prefix`` per leaf of ``tree``: ``prefix`` is a tree whose structure is a
    prefix of ``tree``'s (a leaf of ``prefix`` applies to the whole subtree below it)."""
    out: list = []
    _broadcast(prefix, tree, out, what)
    return out


def _broadcast(prefix, tree, out, what):
    if not isinstance(prefix, (tuple, list, dict)):
        out.extend([prefix] * tree_flatten(tree)[1].n_leaves)
        return
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            raise ValueError(f"{what}: the dict structure {list(prefix)} does not match the "
                             f"argument's ({type(tree).__name__})")
        for k in tree:
            _broadcast(prefix[k], tree[k], out, what)
        return
    if not isinstance(tree, (tuple, list)) or len(prefix) != len(tree):
        raise ValueError(f"{what}: expected a structure of {len(prefix)} entries to match the "
                         f"argument, got {type(tree).__name__}"
                         f"{'' if not isinstance(tree, (tuple, list)) else f' of {len(tree)}'}")
    for p, t in zip(prefix, tree):
        _broadcast(p, t, out, what)
