"""The form of the op rows (ops/core/registry.py): every property of a row is a keyword of its
``def_*`` call, and the public surface (Tensor methods, in-place methods, top-level and
``jitgrad.numpy`` names) is derived from the rows (Note [derived surface])."""
import ast
import dataclasses
import pathlib

import numpy as np

import pytest

import jitgrad
import jitgrad.numpy as jnp
from jitgrad import Tensor
from jitgrad.ops import binary, unary
from jitgrad.ops.core import registry

OPS_DIR = pathlib.Path(registry.__file__).parent.parent
ROW_FIELDS = {f.name for f in dataclasses.fields(registry.OpDef)} - {"node_cls", "save_plans"}


def _sources():
    for path in sorted(OPS_DIR.rglob("*.py")):
        yield path, ast.parse(path.read_text())


def _assigned_attributes(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                if isinstance(t, ast.Attribute):
                    yield node.lineno, t


def test_no_row_attribute_is_assigned_after_the_row():
    found = []
    for path, tree in _sources():
        for lineno, target in _assigned_attributes(tree):
            # ``ctx.x = ...`` in forwards is the ctx's, not a row's
            if isinstance(target.value, ast.Name) and target.value.id in ("ctx", "self"):
                continue
            if target.attr in ROW_FIELDS:
                found.append(f"{path.name}:{lineno}: {ast.unparse(target)} = ...")
    assert found == []


def test_the_scan_finds_an_assignment():
    # the scan above must be able to fail
    tree = ast.parse("ROW.cuda_forward = f\nA.jvp, B.batch_rule = j, b\n")
    assert [t.attr for _, t in _assigned_attributes(tree)] == ["cuda_forward", "jvp", "batch_rule"]


def test_no_register_functions():
    found = [f"{path.name}:{node.lineno}" for path, tree in _sources() for node in tree.body
             if isinstance(node, ast.FunctionDef) and node.name == "register"]
    assert found == []


def _module_imports(tree):
    """The sibling modules a module imports at its top level (``from . import x``,
    ``from .x import y``)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module is None:
                names.update(alias.name for alias in node.names)
            else:
                names.add(node.module.split(".")[0])
    return names


def test_cuda_siblings_do_not_import_their_family():
    trees = dict((path.stem, tree) for path, tree in _sources())
    siblings = [name for name in trees if name.endswith("_cuda")]
    assert {"shape_cuda", "reduce_cuda", "nn_cuda", "nplinalg_cuda", "indexing_cuda",
            "scatter_cuda", "views_cuda", "linalg_cuda", "unary_cuda"} <= set(siblings)
    for sibling in siblings:
        families = {name for name, tree in trees.items() if sibling in _module_imports(tree)}
        assert families, f"{sibling} is imported by no family module"
        assert not families & _module_imports(trees[sibling]), sibling


def test_cuda_forwards_live_in_the_cuda_siblings():
    """A row's ``cuda_forward=`` is a function of a ``*_cuda`` module (or built by one:
    ``npfuncs_cuda.scan_forward(...)``), or its own ``forward`` (written for both devices)."""
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "def_composite"):
                continue
            cuda = next((k.value for k in node.keywords if k.arg == "cuda_forward"), None)
            if cuda is None:
                continue
            made = cuda.func if isinstance(cuda, ast.Call) else cuda
            sibling = (isinstance(made, ast.Attribute) and isinstance(made.value, ast.Name)
                       and made.value.id.endswith("_cuda"))
            if not sibling and ast.unparse(cuda) != ast.unparse(node.args[3]):
                found.append(f"{path.name}:{node.lineno}: cuda_forward={ast.unparse(cuda)}")
    assert found == []


def test_opdef_is_keyword_only():
    with pytest.raises(TypeError):
        registry.OpDef("x", "XBackward0", ("x",), None)


@pytest.mark.parametrize("kind", ["method", "inplace", "export", "numpy"])
def test_every_row_flagged_has_its_function_bound(kind):
    rows = registry.surface(kind)  # raises for a flagged row without @public
    assert rows
    for names, fn, op in rows:
        assert registry.PUBLIC[op.name] is fn
        assert fn.__doc__, fn.__name__  # help(jitgrad.sin) keeps its text


def test_methods_are_the_public_functions():
    for names, fn, _ in registry.surface("method"):
        for name in names:
            assert getattr(Tensor, name) is fn, name
    assert Tensor.sin is unary.sin  # no wrapper on the hot path
    assert Tensor.negative is Tensor.neg and Tensor.clip is Tensor.clamp


def test_inplace_methods_exist():
    for names, _, op in registry.surface("inplace"):
        methods = {getattr(Tensor, name) for name in names}
        assert len(methods) == 1, names  # aliases are the same method
        method = methods.pop()
        assert method.__name__ == names[0] and op.name in method.__doc__
    x = jitgrad.tensor([1.0, 4.0])
    assert x.sqrt_() is x and x.tolist() == [1.0, 2.0]
    x.add_(jitgrad.tensor([1.0, 1.0]), alpha=2)  # add_/sub_ take PyTorch's alpha
    assert x.tolist() == [3.0, 4.0]


def test_exports_are_the_public_functions():
    for names, fn, _ in registry.surface("export"):
        for name in names:
            # (or the wrapper with PyTorch's parameter names and out=, Note [torch signatures])
            exported = getattr(jitgrad, name)
            assert getattr(exported, "public_function", exported) is fn, name
    assert jitgrad.clip.public_function is binary.clamp


def test_numpy_names_wrap_the_public_functions():
    for names, fn, _ in registry.surface("numpy"):
        wrappers = {getattr(jnp, name) for name in names}
        assert len(wrappers) == 1, names
        wrapper = wrappers.pop()
        assert wrapper.__name__ == names[0] and wrapper.__doc__
    out = jnp.absolute(jnp.array([-1.0, 2.0]))
    assert isinstance(out, Tensor) and out.tolist() == [1.0, 2.0]
    out = jnp.absolute([-1.0, 2.0])  # plain data: NumPy's result (jitgrad/numpy/_plain.py)
    assert type(out) is np.ndarray and out.tolist() == [1.0, 2.0]
    assert jnp.abs is jnp.absolute is jnp.fabs


def test_public_binds_one_function_per_row():
    with pytest.raises(TypeError, match="already bound"):
        registry.public(unary.SIN)(lambda x: x)


def test_ctx_attribute_reads_are_per_node():
    """Note on ``OpNode.__getattr__``: a node attribute read once is served by a descriptor on
    the node class afterwards; each node still reads its own value, a node without it raises
    AttributeError, an attribute set on the instance wins, and methods are never shadowed."""
    x = jitgrad.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    first, second = x.sum(dim=0).grad_fn, x.sum(dim=1).grad_fn
    assert type(first) is type(second)
    assert first.dims == (0,) and second.dims == (1,)  # the first read installs the reader
    assert isinstance(type(first).__dict__.get("dims"), registry._AttrReader)
    assert first.dims == (0,) and second.dims == (1,)
    del second._attrs["dims"]
    with pytest.raises(AttributeError, match="has no attribute 'dims'"):
        second.dims
    assert getattr(second, "dims", "missing") == "missing"
    second.dims = (5,)
    assert second.dims == (5,) and first.dims == (0,)
    assert first.name() == "SumBackward1"
