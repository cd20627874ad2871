"""The import graph of jitgrad, drawn from the code (imports inside functions count: they are
arrows too). Run it to print the layers, the arrows between packages, every arrow that runs back
up the layers and every import cycle:

    python tests/import_graph.py [--files]

``tests/test_layers.py`` asserts on the same graph. Layers, bottom to top (docs/design.md; the autograd API sits below ``tensor.py``: it reaches the
Tensor type through ops' registrations, and ``Tensor.backward`` calls it):
a module may import its own layer's modules and any layer below; a package must not import
another one that imports it back (no cycles between packages, even within one layer).
"""
from __future__ import annotations

import ast
import pathlib
import sys
from collections import defaultdict

PKG = pathlib.Path(__file__).resolve().parents[1] / "jitgrad"

#: (module prefix, layer), bottom to top; the longest matching prefix gives a module's layer
LAYERS = (
    ("jitgrad._config", 0), ("jitgrad.dtypes", 0), ("jitgrad._device", 0),
    ("jitgrad.kernels", 1),
    ("jitgrad.graph", 2),
    ("jitgrad.engine", 3),
    ("jitgrad.ops.core", 4), ("jitgrad.ops", 5),
    ("jitgrad.autograd", 6),
    ("jitgrad.tensor", 7),
    ("jitgrad._protocols", 8), ("jitgrad._ndarray_methods", 8), ("jitgrad._torch_functions", 8),
    ("jitgrad.func", 8), ("jitgrad.numpy", 8), ("jitgrad.scipy", 8), ("jitgrad.linalg", 8),
    ("jitgrad.nn", 8), ("jitgrad.optim", 8), ("jitgrad.utils", 8), ("jitgrad.serialization", 8),
    ("jitgrad.threads", 8), ("jitgrad.cuda", 8), ("jitgrad.viz", 8),
    ("jitgrad.distributions", 8), ("jitgrad.special", 8), ("jitgrad.fft", 8),
    ("jitgrad.compile", 9),
    ("jitgrad", 10),
    ("jitgrad.distributed", 11), ("jitgrad.testing", 11), ("jitgrad.__main__", 11),
)
LAYER_NAMES = {0: "helpers", 1: "kernels", 2: "graph", 3: "engine", 4: "ops core",
               5: "op families", 6: "autograd API", 7: "tensor", 8: "public API", 9: "compile",
               10: "jitgrad (the package)", 11: "distributed, testing, __main__"}


def module_of(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def resolve(path: pathlib.Path, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` statement reads from."""
    if not node.level:
        return node.module or ""
    package = module_of(path) if path.name == "__init__.py" else module_of(path).rsplit(".", 1)[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def walk(tree, module_level_only: bool):
    """The nodes of ``tree`` with, for each, whether it is inside a function body (class bodies
    run at import, so they count as module level); with ``module_level_only``, only those that
    are not."""
    stack = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        yield node, in_function
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            if module_level_only and inner:
                continue
            stack.append((child, inner))


def is_package(mod: str) -> bool:
    return (PKG.parent.joinpath(*mod.split(".")) / "__init__.py").exists()


def is_module(mod: str) -> bool:
    path = PKG.parent.joinpath(*mod.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports(path: pathlib.Path, module_level_only: bool = False):
    """``(module, lineno, in_function)`` for every module a file imports, and ``module.name``
    for every name it imports from one (a name may be a submodule)."""
    tree = ast.parse(path.read_text())
    for node, in_function in walk(tree, module_level_only):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, in_function
        elif isinstance(node, ast.ImportFrom):
            mod = resolve(path, node)
            if not is_package(mod):  # a package is only the namespace of the names imported
                yield mod, node.lineno, in_function
            for alias in node.names:
                yield f"{mod}.{alias.name}", node.lineno, in_function


def within(mod: str, prefixes) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def layer_of(mod: str) -> int:
    best = max((p for p, _ in LAYERS if within(mod, (p,))), key=len)
    return dict(LAYERS)[best]


def unit_of(mod: str) -> str:
    """The package (or top-level module) a module belongs to: the unit of the package graph."""
    if within(mod, ("jitgrad.ops.core",)):
        return "jitgrad.ops.core"
    parts = mod.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else mod


def target_module(mod: str) -> str:
    """The file-level module an imported name lives in (``jitgrad.ops.core.dispatch.unary_op`` ->
    ``jitgrad.ops.core.dispatch``)."""
    while mod and not is_module(mod):
        mod = mod.rpartition(".")[0]
    return mod


def edges():
    """``{(importer, imported): [(lineno, in_function), ...]}`` over jitgrad's modules."""
    found = defaultdict(list)
    for path in sorted(PKG.rglob("*.py")):
        src = module_of(path)
        for mod, line, in_function in imports(path):
            if not within(mod, ("jitgrad",)):
                continue
            dst = target_module(mod)
            if dst and dst != src and (line, in_function) not in found[(src, dst)]:
                found[(src, dst)].append((line, in_function))
    return found


def upward(found):
    """The arrows from a module to a higher layer: ``[(src, dst, lines)]``. A package's
    ``__init__`` importing its own submodules is not one."""
    out = []
    for (src, dst), lines in sorted(found.items()):
        if within(dst, (src,)):
            continue
        if layer_of(dst) > layer_of(src):
            out.append((src, dst, lines))
    return out


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, comps, counter = {}, {}, set(), [], [], [0]
    nodes = sorted(set(graph) | {d for ds in graph.values() for d in ds})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def file_graph(found):
    """Module -> modules it imports (a package's ``__init__`` and its submodules included)."""
    graph = defaultdict(set)
    for src, dst in found:
        graph[src].add(dst)
    return graph


def package_graph(found):
    """Package -> packages it imports (arrows inside one package left out)."""
    graph = defaultdict(set)
    for src, dst in found:
        a, b = unit_of(src), unit_of(dst)
        if a != b and a != "jitgrad" and b != "jitgrad":
            graph[a].add(b)
    return graph


def summary(found) -> dict:
    function_level = sum(1 for lines in found.values() for _, f in lines if f)
    return {
        "modules": len({m for e in found for m in e}),
        "arrows": len(found),
        "function-level imports": function_level,
        "upward arrows": len(upward(found)),
        "file cycles": [len(c) for c in cycles(file_graph(found))],
        "package cycles": cycles(package_graph(found)),
    }


def main(argv) -> None:
    found = edges()
    print("layers, bottom to top:")
    for rank in sorted(LAYER_NAMES):
        members = sorted(p.replace("jitgrad.", "") for p, r in LAYERS if r == rank)
        print(f"  {rank:2d} {LAYER_NAMES[rank]:20s} {', '.join(members)}")
    print("\narrows between packages (module-level + function-level imports):")
    counts = defaultdict(lambda: [0, 0])
    for (src, dst), lines in found.items():
        a, b = unit_of(src), unit_of(dst)
        if a != b:
            for _, in_function in lines:
                counts[(a, b)][in_function] += 1
    for (a, b), (mod, fn) in sorted(counts.items()):
        mark = "  UP" if layer_of(b) > layer_of(a) and a != "jitgrad" else ""
        print(f"  {a:32s} -> {b:32s} {mod:3d} + {fn:3d}{mark}")
    print("\narrows back up the layers:")
    for src, dst, lines in upward(found):
        where = ", ".join(f"{ln}{' (in a function)' if f else ''}" for ln, f in lines)
        print(f"  {src} -> {dst}: line {where}")
    print("\nimport cycles between files:")
    for comp in cycles(file_graph(found)):
        print(f"  {len(comp)} files: {', '.join(c.replace('jitgrad.', '') for c in comp)}"
              if "--files" in argv else f"  {len(comp)} files, e.g. {comp[0]}")
    print("\nsummary:", summary(found))


if __name__ == "__main__":
    main(sys.argv[1:])
