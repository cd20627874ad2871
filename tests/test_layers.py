"""The layer contract (DESIGN.md §1, docs/design.md "Layers"): imports go one way only.

kernels <- graph <- engine <- ops.core <- op families <- autograd's user API <- tensor <- the
public API packages <- compile <- jitgrad <- distributed, testing (``tests/import_graph.py``
draws the graph and ranks the layers). Every claim below is checked by a test in this file
("any level": imports inside functions count too):

1. kernels imports no other jitgrad layer but ``_config``, at any level.
2. the graph primitives (``jitgrad.graph``) import only each other and kernels.
3. The engine knows nodes, never ops or devices: it imports the engine, the graph primitives and
   ``_config`` only.
4. ops imports only ops, kernels, the graph primitives and the low-level helpers (dtypes,
   ``_config``, ``_device``): never tensor, autograd's user API, func, nn...
5. autograd's user API never imports tensor: it reaches the Tensor type through ops (it sits
   below ``tensor.py``, whose ``backward`` calls it).
6. The layers above hand ops what it needs only through ``ops/core/upper.py`` (Note [upper
   registrations]): no module assigns to an attribute of an ops module, and ``ops.dispatch``'s
   re-exported copies follow the registrations.
7. No module imports another module's private name (``from m import _x``), apart from the known
   exceptions listed here (each still present, so the list cannot go stale).
8. No arrow runs from a layer to a higher one (apart from the listed exceptions, each with its
   reason); an upward need is met by registration.
9. No import cycle between packages; 10. none between files (apart from the listed ones).
"""
import ast
import pathlib

import pytest

import import_graph  # tests/import_graph.py: the graph drawn from the code

PKG = import_graph.PKG

PRIMITIVES = ("jitgrad.graph",)
PRIMITIVE_FILES = ("graph",)
API_FILES = ("autograd/api.py", "autograd/function.py", "autograd/gradcheck.py",
             "autograd/forward_ad.py", "autograd/transforms.py", "autograd/__init__.py")

# layer -> (its files, the jitgrad modules it may import: these and their submodules)
ALLOWED = {
    "kernels": (("kernels",), ("jitgrad.kernels", "jitgrad._config")),
    "graph": (PRIMITIVE_FILES, ("jitgrad.kernels",) + PRIMITIVES),
    "engine": (("engine",), ("jitgrad.engine", "jitgrad._config") + PRIMITIVES),
    "ops": (("ops",), ("jitgrad.ops", "jitgrad.kernels", "jitgrad.dtypes", "jitgrad._config",
                       "jitgrad._device") + PRIMITIVES),
}


def _walk(tree, module_level_only: bool):
    return (node for node, _ in import_graph.walk(tree, module_level_only))


def _imports(path: pathlib.Path, module_level_only: bool = False):
    return ((mod, line) for mod, line, _ in import_graph.imports(path, module_level_only))


_resolve = import_graph.resolve


def _files(parts):
    for part in parts:
        if part.endswith(".py"):
            yield PKG / part
        else:
            yield from sorted((PKG / part).rglob("*.py"))


_within = import_graph.within


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_imports_go_one_way(layer):
    """Claims 1-4."""
    parts, allowed = ALLOWED[layer]
    bad = []
    for path in _files(parts):
        for mod, line in _imports(path):
            if _within(mod, ("jitgrad",)) and not _within(mod, allowed):
                bad.append(f"{path.relative_to(PKG.parent)}:{line} imports {mod}")
    assert not bad, "\n".join(bad)


#: arrows from a layer to a higher one that remain, each with its reason (tests/import_graph.py
#: draws them; imports inside functions count): (importer, imported) -> why
UPWARD_EXCEPTIONS = {}


def test_no_arrow_runs_back_up_the_layers():
    """Claim 8: no import (at any level) from a module to a higher layer, outside the list."""
    found = {(src, dst) for src, dst, _ in import_graph.upward(import_graph.edges())}
    new = sorted(found - set(UPWARD_EXCEPTIONS))
    assert not new, "imports from a lower layer to a higher one (register from above instead): " \
        + ", ".join(f"{a} -> {b}" for a, b in new)
    stale = sorted(set(UPWARD_EXCEPTIONS) - found)
    assert not stale, f"fixed: remove from UPWARD_EXCEPTIONS: {stale}"


def test_no_import_cycles_between_packages():
    """Claim 9: the packages (jitgrad.ops.core apart from the op families) form no cycle."""
    assert import_graph.cycles(import_graph.package_graph(import_graph.edges())) == []


#: file-level import cycles that remain inside one package (each a sorted list of modules)
KNOWN_FILE_CYCLES = []


def test_no_import_cycles_between_files():
    """Claim 10: no module imports, through others, a module that imports it (a package's
    ``__init__`` and its submodules included), outside the list."""
    found = import_graph.cycles(import_graph.file_graph(import_graph.edges()))
    assert sorted(found) == sorted(KNOWN_FILE_CYCLES)


def test_the_graph_sees_arrows_and_cycles():
    """The graph helpers can fail: an upward arrow and a cycle built by hand are found."""
    graph = {"jitgrad.a": {"jitgrad.b"}, "jitgrad.b": {"jitgrad.c"}, "jitgrad.c": {"jitgrad.a"},
             "jitgrad.d": {"jitgrad.a"}}
    assert import_graph.cycles(graph) == [["jitgrad.a", "jitgrad.b", "jitgrad.c"]]
    edges = {("jitgrad.kernels.cpu.pool", "jitgrad.ops.core.dispatch"): [(3, True)],
             ("jitgrad.ops.unary", "jitgrad.kernels.cpu.pool"): [(4, False)]}
    assert [(a, b) for a, b, _ in import_graph.upward(edges)] == [
        ("jitgrad.kernels.cpu.pool", "jitgrad.ops.core.dispatch")]
    assert import_graph.layer_of("jitgrad.ops.core.recording") < import_graph.layer_of(
        "jitgrad.ops.views") < import_graph.layer_of("jitgrad.tensor")


def test_the_layer_rules_can_fail():
    """The checker sees imports inside functions, relative imports and names from packages."""
    source = ("import os\nfrom . import dispatch\ndef f():\n    from ..autograd import forward_ad\n"
              "    from ..tensor import Tensor\n")
    probe = PKG / "ops" / "_layer_probe.py"
    tree = ast.parse(source)
    found = set()
    for node in _walk(tree, module_level_only=False):
        if isinstance(node, ast.ImportFrom):
            mod = _resolve(probe, node)
            found.update([mod] + [f"{mod}.{a.name}" for a in node.names])
    assert {"jitgrad.ops.dispatch", "jitgrad.autograd.forward_ad", "jitgrad.tensor"} <= found
    assert not _within("jitgrad.autograd.forward_ad", ALLOWED["ops"][1])
    assert not _within("jitgrad.tensor", ALLOWED["ops"][1])
    module_level = {n.lineno for n in _walk(tree, module_level_only=True)
                    if isinstance(n, ast.ImportFrom)}
    assert module_level == {2}


def test_autograd_api_never_imports_tensor():
    """Claim 5."""
    bad = []
    for path in _files(API_FILES):
        rel = path.relative_to(PKG.parent)
        for mod, line in _imports(path):
            if _within(mod, ("jitgrad.tensor",)):
                bad.append(f"{rel}:{line} imports {mod}")
    assert not bad, "\n".join(bad)


def _ops_module_names(path: pathlib.Path) -> set:
    """Names a file binds to modules of ``jitgrad.ops`` (``from ..ops import dispatch``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            mod = _resolve(path, node)
            for alias in node.names:
                full = f"{mod}.{alias.name}"
                if _within(full, ("jitgrad.ops",)) and (
                        (PKG.parent / full.replace(".", "/")).with_suffix(".py").exists()):
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _within(alias.name, ("jitgrad.ops",)) and alias.asname:
                    names.add(alias.asname)
    return names


#: test harnesses that wrap ops entry points for a while and restore them (not a channel from
#: the layers above): file -> why
INSTRUMENTERS = {
    "testing/opinfo.py": "recording_rows: the op-database coverage check records which rows a "
                         "call runs by wrapping dispatch's four entry points, then restores them",
}


def test_ops_hears_from_above_only_through_upper():
    """Claim 6, statically: no ``dispatch.X = ...`` (nor ``setattr(dispatch, ...)``, nor an
    assignment to an attribute of a call's result, ``_ops().X = ...``) anywhere in the
    package; ops/core/upper.py's setters are the only writers."""
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        if path == PKG / "ops" / "core" / "upper.py" or path.relative_to(PKG).as_posix() in INSTRUMENTERS:
            continue
        modules = _ops_module_names(path)
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("setattr", "delattr") and node.args
                  and isinstance(node.args[0], ast.Name) and node.args[0].id in modules):
                bad.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {node.func.id} on "
                           f"{node.args[0].id}")
            for t in targets:  # a row's attribute (``shape.VIEW.cuda_forward = f``) is fine
                for sub in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(sub, ast.Attribute) and (
                            (isinstance(sub.value, ast.Name) and sub.value.id in modules)
                            or isinstance(sub.value, ast.Call)):
                        bad.append(f"{path.relative_to(PKG.parent)}:{node.lineno} assigns "
                                   f"{ast.unparse(sub)}")
    assert not bad, "\n".join(bad)


def test_upper_registrations_reach_dispatch():
    """Claim 6 at run time: the registered Tensor class and transform hook are what ops reads
    through ``upper`` and through every module that binds them (``upper.bind``)."""
    import jitgrad
    from jitgrad.autograd import forward_ad
    from jitgrad.ops.core import allocation, dispatch, operands, recording, upper, writes

    for module in (upper, dispatch, operands, recording, writes, allocation):
        assert module.Tensor is jitgrad.Tensor, module.__name__
    assert upper.transform_hook is None and dispatch.transform_hook is None
    x = jitgrad.tensor([1.0, 2.0])
    with forward_ad.dual_level():
        assert upper.transform_hook is not None
        assert dispatch.transform_hook is upper.transform_hook
        assert upper.inplace_tangents is not None and upper.inplace_tangents.has_levels()
        dual = forward_ad.make_dual(x.clone(), jitgrad.tensor([1.0, 1.0]))
        dual.mul_(3.0)  # an in-place write moves the tangent through upper.inplace_tangents
        assert forward_ad.unpack_dual(dual).tangent.tolist() == [3.0, 3.0]
    assert upper.transform_hook is None and dispatch.transform_hook is None
    assert upper.inplace_tangents is None


def test_dispatch_exposes_every_name_used_through_it():
    """``ops.dispatch`` re-exports what call sites read from it (``dispatch.<name>``)."""
    from jitgrad.ops.core import dispatch

    used = set()
    for path in sorted(PKG.rglob("*.py")):
        used.update(node.attr for node in ast.walk(ast.parse(path.read_text()))
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "dispatch")
        for node in ast.walk(ast.parse(path.read_text())):  # from ..ops.dispatch import name
            if isinstance(node, ast.ImportFrom) and _resolve(path, node) == "jitgrad.ops.core.dispatch":
                used.update(alias.name for alias in node.names)
    missing = sorted(n for n in used if not hasattr(dispatch, n))
    assert not missing, missing


# Claim 7's known exceptions: (importing file, module, private name), to be made public or moved
KNOWN_PRIVATE_IMPORTS = {
    ("kernels/cpu/norm.py", "jitgrad.kernels.cpu.nn", "_flat"),
    ("kernels/cpu/norm.py", "jitgrad.kernels.cpu.nn", "_get"),
    ("kernels/cpu/norm.py", "jitgrad.kernels.cpu.nn", "_par"),
    ("kernels/cpu/optim.py", "jitgrad.kernels.cpu.nn", "_get"),
    ("kernels/cpu/optim.py", "jitgrad.kernels.cpu.nn", "_par"),
    ("kernels/cuda/jacobi.py", "jitgrad.kernels.cuda.solver", "_check"),
    ("kernels/cuda/jacobi.py", "jitgrad.kernels.cuda.solver", "_launch"),
    ("kernels/cuda/jacobi.py", "jitgrad.kernels.cuda.solver", "_mat"),
    ("kernels/cuda/jacobi.py", "jitgrad.kernels.cuda.solver", "_off"),
    ("kernels/cuda/jacobi.py", "jitgrad.kernels.cuda.solver", "_tol"),
    ("func/_jacobian.py", "jitgrad.func._api", "_VJP"),
    ("nn/modules/container.py", "jitgrad.nn.modules.module", "_addindent"),
    ("nn/modules/conv.py", "jitgrad.nn.modules.linear", "_check_device"),
    ("nn/modules/conv.py", "jitgrad.nn.modules.linear", "_empty"),
    ("nn/modules/conv.py", "jitgrad.nn.modules.linear", "_place"),
    ("nn/modules/linear.py", "jitgrad.nn.modules.module", "_check_cuda"),
    ("nn/modules/normalization.py", "jitgrad.nn.modules.linear", "_check_device"),
    ("nn/modules/normalization.py", "jitgrad.nn.modules.linear", "_empty"),
    ("nn/modules/normalization.py", "jitgrad.nn.modules.linear", "_place"),
    ("nn/modules/sparse.py", "jitgrad.nn.modules.linear", "_check_device"),
    ("nn/modules/sparse.py", "jitgrad.nn.modules.linear", "_empty"),
    ("nn/modules/sparse.py", "jitgrad.nn.modules.linear", "_place"),
    ("numpy/__init__.py", "jitgrad.numpy._array_api", "_missing_message"),
}


def _private_imports():
    """``(file, module, name)`` for every ``from jitgrad... import _name`` of a name that is
    not a module (a package's private module, ``from . import _config``, is its own)."""
    found = set()
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            mod = _resolve(path, node)
            if not _within(mod, ("jitgrad",)):
                continue
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__"):
                    continue
                target = PKG.parent.joinpath(*mod.split("."), name)
                if target.with_suffix(".py").exists() or (target / "__init__.py").exists():
                    continue
                found.add((str(path.relative_to(PKG).as_posix()), mod, name))
    return found


def test_no_imports_of_private_names():
    """Claim 7."""
    found = _private_imports()
    new = sorted(found - KNOWN_PRIVATE_IMPORTS)
    assert not new, f"imports of another module's private names (make them public): {new}"
    stale = sorted(KNOWN_PRIVATE_IMPORTS - found)
    assert not stale, f"fixed: remove from KNOWN_PRIVATE_IMPORTS: {stale}"
