"""The layout of ``jitgrad.numpy``: topic modules gathered by a short ``__init__``.

* no import cycle among the package's files, and no submodule imports the package itself (at
  any level: an import inside a function is an arrow too; ``tests/import_graph.py``);
* every file stays a size a reader can take in;
* each topic module's public function is the package's own object: ``_plain.install`` rebinds
  the names in the modules the functions come from, so a call from one function to another
  goes through Note [plain inputs]'s wrapper exactly as a call from outside does.
"""
import importlib
import importlib.util
import pathlib

import numpy as np

import jitgrad.numpy as jnp
from jitgrad.numpy import _plain

_GRAPH = pathlib.Path(__file__).resolve().parents[1] / "import_graph.py"
_spec = importlib.util.spec_from_file_location("_numpy_layout_import_graph", _GRAPH)
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)

PKG_DIR = pathlib.Path(jnp.__file__).resolve().parent
MAX_LINES = 700

#: the modules whose ``__all__`` the package gathers
TOPICS = ("_constants", "_creation", "_elementwise", "_nodiff", "_reductions", "_shape", "_join",
          "_matrix", "_sorting", "_array_api", "_math_more", "_stats", "_poly", "_assemble",
          "_passthrough")


def _numpy_edges():
    return {(src, dst): lines for (src, dst), lines in import_graph.edges().items()
            if src.startswith("jitgrad.numpy") and dst.startswith("jitgrad.numpy")}


def test_no_import_cycle_among_numpy_files():
    graph = import_graph.file_graph(_numpy_edges())
    assert import_graph.cycles(graph) == []


def test_submodules_never_import_the_package():
    back = sorted((src, lines) for (src, dst), lines in _numpy_edges().items()
                  if dst == "jitgrad.numpy")
    assert back == [], "a submodule of jitgrad.numpy imports the package (import the topic " \
                       f"module that defines the name instead): {back}"


def test_files_stay_small():
    big = {p.name: n for p in sorted(PKG_DIR.glob("*.py"))
           if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert big == {}


def test_topic_functions_are_the_public_ones():
    """Each name of a topic module's ``__all__`` is the package's object (the wrapper where
    ``_plain.install`` made one), in the module that defines it too."""
    seen = {}
    for name in TOPICS:
        module = importlib.import_module(f"jitgrad.numpy.{name}")
        for n in module.__all__:
            assert n not in seen, f"{n} is exported by both {seen[n]} and {name}"
            seen[n] = name
            assert getattr(module, n) is getattr(jnp, n), f"jitgrad.numpy.{name}.{n}"
    assert set(seen) <= set(jnp.__all__)


def test_imported_names_are_rebound_too():
    """A function imported from another topic module is the public one (``ravel`` in
    ``_reductions``, ``roll`` in ``fft``): the wrappers are used between modules as well."""
    from jitgrad.numpy import _join, _matrix, _reductions, fft, linalg

    assert hasattr(jnp.ravel, "impl")  # (a wrapped function, Note [plain inputs])
    assert _reductions.ravel is jnp.ravel
    assert _join.atleast_1d is jnp.atleast_1d
    assert _matrix.stack is jnp.stack
    assert fft._roll is jnp.roll
    assert linalg._vecdot is jnp.vecdot
    assert _plain.enter(jnp.ravel) is jnp.FUNCTIONS[np.ravel]
