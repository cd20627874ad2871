"""Parameters as a small tree (a Tensor or ndarray, or dicts / lists / tuples of them),
flattened to a list of ndarrays for the wire and rebuilt on either side. The tree description
is plain tuples and strings: it crosses to the workers as data, never as code."""
from __future__ import annotations

import numpy as np

_LEAF, _DICT, _LIST, _TUPLE = "leaf", "dict", "list", "tuple"


def _is_tensor(obj):
    from ..tensor import Tensor

    return isinstance(obj, Tensor)


def tree_flatten(tree):
    """``(leaves, treedef)``: leaves are ndarrays (host copies of Tensors), ``treedef`` says
    how to rebuild the tree and which leaves were Tensors (and on which device)."""
    leaves: list = []

    def walk(node):
        if isinstance(node, dict):
            keys = list(node)
            return (_DICT, tuple(keys), tuple(walk(node[k]) for k in keys))
        if isinstance(node, (list, tuple)):
            return (_LIST if isinstance(node, list) else _TUPLE, tuple(walk(v) for v in node))
        if _is_tensor(node):
            t = node.detach()
            leaves.append(np.array(t.cpu().numpy() if t.is_cuda else t.numpy(), copy=True))
            return (_LEAF, "tensor", str(node.device))
        if isinstance(node, (np.ndarray, np.generic, float, int)) and not isinstance(node, bool):
            arr = np.asarray(node)
            if arr.dtype.kind not in "fc":
                raise TypeError("jitgrad.distributed: parameters must be floating-point, got "
                                f"dtype {arr.dtype}")
            leaves.append(np.array(arr, copy=True))
            return (_LEAF, "ndarray", "cpu")
        raise TypeError("jitgrad.distributed: parameters must be a Tensor, an ndarray, or "
                        f"dicts / lists / tuples of them; got {type(node).__name__}")

    treedef = walk(tree)
    return leaves, treedef


def tree_devices(treedef):
    """The devices of the Tensor leaves."""
    kind = treedef[0]
    if kind == _LEAF:
        return {treedef[2]}
    children = treedef[2] if kind == _DICT else treedef[1]
    out = set()
    for c in children:
        out |= tree_devices(c)
    return out


def tree_unflatten(treedef, leaves, *, as_given=False):
    """Rebuild the tree from ``leaves`` (taken in order). With ``as_given`` each leaf comes
    back as the type it was given as (Tensor leaves as CPU Tensors on the client, ndarray
    leaves as ndarrays); otherwise the leaves are placed as they are (the workers' Tensors)."""
    it = iter(leaves)

    def build(node):
        kind = node[0]
        if kind == _LEAF:
            leaf = next(it)
            if as_given and node[1] == "tensor":
                from ..tensor import Tensor

                leaf = Tensor._make(np.asarray(leaf))
                if node[2] != "cpu":
                    leaf = leaf.to(node[2])
            return leaf
        if kind == _DICT:
            return {k: build(c) for k, c in zip(node[1], node[2])}
        values = [build(c) for c in node[1]]
        return values if kind == _LIST else tuple(values)

    return build(treedef)
