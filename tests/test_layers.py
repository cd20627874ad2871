"""The layer contract (DESIGN.md §1): imports go one way only.

device <- ops <- tensor/API; the engine knows nodes, never ops or devices; autograd never
imports ops at module level (it reaches the Tensor type lazily through dispatch).
"""
import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "jitgrad"

# package -> jitgrad modules it must never import (at any level of the file)
FORBIDDEN = {
    "device": ("jitgrad.ops", "jitgrad.tensor", "jitgrad.autograd", "jitgrad.engine"),
    "engine": ("jitgrad.ops", "jitgrad.device", "jitgrad.tensor"),
    "ops": ("jitgrad.tensor",),
}


def _imports(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    rel = path.relative_to(PKG.parent).with_suffix("")
    package = ".".join(rel.parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield mod
            for alias in node.names:
                yield f"{mod}.{alias.name}"


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_go_one_way(layer):
    bad = []
    for path in sorted((PKG / layer).rglob("*.py")):
        for mod in _imports(path):
            if any(mod == f or mod.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(PKG.parent)} imports {mod}")
    assert not bad, "\n".join(bad)
