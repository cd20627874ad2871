"""Dump torch's public surface (names and signatures) to ``torch_surface.json`` beside this file.

Run with torch installed (CI never does; the tests read the JSON):

    python tests/surface/dump_torch_surface.py

Per namespace: every public name (no leading underscore) that is a function, a class or, for
``torch.Tensor``, a method or property, with its parameter names where Python or the first line of
the docstring gives them. What is in scope is decided by ``exclusions.py``, not here: the dump is
torch as it is.
"""
import inspect
import json
import re
import sys
from pathlib import Path

NAMESPACES = ("torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init",
              "torch.nn.utils", "torch.autograd", "torch.func", "torch.linalg", "torch.special",
              "torch.fft", "torch.distributions", "torch.optim", "torch.optim.lr_scheduler",
              "torch.utils.data")

_DOC_SIGNATURE = re.compile(r"^\s*(?:[\w.]+\.)?(\w+)\((.*?)\)\s*(->|$)", re.M)


def _params_from_doc(name, doc):
    """Parameter names from a docstring's ``name(a, b, *, c=None) -> Tensor`` first line."""
    for match in _DOC_SIGNATURE.finditer(doc or ""):
        if match.group(1) != name:
            continue
        params = []
        for part in match.group(2).split(","):
            part = part.strip().split("=")[0].split(":")[0].strip()
            if part in ("", "/", "self") or part.startswith("["):
                continue
            params.append(part)
        return params
    return None


def _params(name, obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return _params_from_doc(name, getattr(obj, "__doc__", None))
    params = []
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        if p.kind is p.KEYWORD_ONLY and "*" not in params:
            params.append("*")
        params.append(("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD
                       else "") + p.name)
    return params


def _documented(obj):
    doc = getattr(obj, "__doc__", None)
    return isinstance(doc, str) and bool(doc.strip())


def _kind(obj):
    if inspect.isclass(obj):
        return "class"
    if isinstance(obj, (property,)) or type(obj).__name__ == "getset_descriptor":
        return "attribute"
    return "function" if callable(obj) else "value"


def dump(torch):
    import importlib
    surface = {}
    for namespace in NAMESPACES:
        if namespace == "torch.Tensor":
            owner, names = torch.Tensor, dir(torch.Tensor)
        else:
            owner = importlib.import_module(namespace)
            names = getattr(owner, "__all__", None) or dir(owner)
        entries = {}
        for name in sorted(set(names)):
            if name.startswith("_"):
                continue
            obj = inspect.getattr_static(owner, name, None) if namespace == "torch.Tensor" \
                else getattr(owner, name, None)
            if obj is None or inspect.ismodule(obj):
                continue
            kind = _kind(obj)
            if kind == "value" and namespace != "torch":
                continue
            if isinstance(obj, (staticmethod, classmethod)):
                obj = obj.__func__
            entries[name] = {"kind": kind, "documented": _documented(obj),
                             "params": _params(name, obj) if kind in ("function", "class") else None}
        surface[namespace] = entries
    return {"torch_version": torch.__version__.split("+")[0], "namespaces": surface}


if __name__ == "__main__":
    import torch
    out = Path(__file__).with_name("torch_surface.json")
    out.write_text(json.dumps(dump(torch), indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}: " + ", ".join(f"{ns} {len(v)}" for ns, v in
                                        json.loads(out.read_text())["namespaces"].items()),
          file=sys.stderr)
