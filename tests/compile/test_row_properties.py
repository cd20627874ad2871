"""What jitgrad.compile knows of an op is a property of its row, never a list of names in
``compile/`` (Note [what compile knows of a row] in jitgrad/ops/core/registry.py), and the tracer
meets eager only through registered hooks (Note [compile tracing])."""
import ast
import pathlib
import warnings

import numpy as np
import pytest

import jitgrad
from jitgrad.ops.core import registry, upper

COMPILE = pathlib.Path(jitgrad.__file__).resolve().parent / "compile"
TRANSCENDENTAL = ("exp", "log", "tanh", "sin", "cos", "sigmoid", "erf", "sqrt", "pow", "rpow",
                  "pow_scalar", "softplus", "gelu", "logaddexp")
# what compile/program.py listed by hand before the rows said it (each must stay cheap)
ONCE_LISTED_CHEAP = ("add", "sub", "mul", "div", "neg", "rsub", "pow_square", "maximum",
                     "minimum", "where", "clamp", "relu", "abs", "sign", "eq", "ne", "lt", "le",
                     "gt", "ge")


@pytest.mark.parametrize("name", sorted(registry.OPS))
def test_every_row_states_what_compile_needs(name):
    op = registry.OPS[name]
    assert isinstance(op.cheap, bool) and isinstance(op.value_dependent_shape, bool)
    assert op.alias in (None, "reshape", "broadcast")
    assert op.identity is None or (callable(op.identity) and op.view)
    if not op.elementwise:
        assert not op.cheap
    if op.alias is not None:  # an alias computes nothing: one input, shape attributes only
        assert len(op.inputs) == 1 and op.attrs == ("shape",)


def test_cheap_is_derived_from_the_forward_body():
    cheap = {n for n, op in registry.OPS.items() if op.cheap}
    assert set(ONCE_LISTED_CHEAP) <= cheap
    assert not cheap & set(TRANSCENDENTAL)
    assert registry.arithmetic_only(lambda x, y: abs(x) * y - 1.0 if x < y else y)
    assert not registry.arithmetic_only(lambda x: x ** 2.5)
    assert not registry.arithmetic_only(lambda x: np.tanh(x))


def test_identity_views_follow_the_row():
    permute = registry.OPS["permute"]
    assert permute.identity({"dims": (0, 1, 2)}, 3)
    assert not permute.identity({"dims": (1, 0, 2)}, 3)


def _op_names_in_tuples(tree) -> list:
    """Tuples/sets/lists of two or more string literals that are all registry op names."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.Set, ast.List)) and len(node.elts) >= 2:
            names = [e.value for e in node.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(names) == len(node.elts) and all(n in registry.OPS for n in names):
                found.append((node.lineno, names))
    return found


def test_compile_keeps_no_lists_of_op_names():
    found = {}
    for path in sorted(COMPILE.glob("*.py")):
        hits = _op_names_in_tuples(ast.parse(path.read_text()))
        if hits:
            found[path.name] = hits
    assert not found, f"lists of op names in compile/ (make them row properties): {found}"


def test_the_list_scan_can_fail():
    tree = ast.parse('CHEAP = frozenset({"add", "mul"})\nx = ("view", "reshape_copy")')
    assert sorted(names for _, names in _op_names_in_tuples(tree)) == [["add", "mul"],
                                                                 ["view", "reshape_copy"]]


def test_a_value_dependent_row_is_refused(monkeypatch):
    """A row whose output shape depends on values is never captured: the compiled function
    runs eagerly with a warning and eager's values at every call."""
    monkeypatch.setattr(registry.OPS["cumsum"], "value_dependent_shape", True)
    fn = jitgrad.compile(lambda x: jitgrad.cumsum(x, 0) * 2)
    x = jitgrad.tensor([1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="output shape depends on the input values"):
        np.testing.assert_allclose(fn(x).numpy(), [2.0, 6.0, 12.0])
    assert fn.stats()["cached"] == 0


def test_tracing_registers_hooks_and_swaps_nothing():
    """While a trace runs, the tracer's hooks are registered with ops/core/upper.py; the Tensor
    class and ops' bound constructor are never replaced."""
    from jitgrad.ops import creation
    from jitgrad.tensor import Tensor

    make, bound, rng, seen = Tensor.__dict__["_make"], upper.make_tensor, creation._rng, []

    def f(x):
        seen.append((Tensor.__dict__["_make"] is make, upper.make_tensor == bound,
                     creation._rng is rng, upper.creation_hook is not None,
                     upper.host_read_hook is not None, upper.random_hook is not None))
        return x * 2

    jitgrad.compile(f)(jitgrad.tensor([1.0]))
    assert seen == [(True,) * 6]
    assert upper.creation_hook is None and upper.host_read_hook is None
    assert upper.random_hook is None


def test_trace_module_walks_no_frames():
    source = (COMPILE / "trace.py").read_text()
    assert "_getframe" not in source and "f_back" not in source and "f_locals" not in source


def test_a_constant_maker_made_anywhere_is_a_constant():
    """A new constructor marked ``upper.constant_maker`` in any module is a constant of the
    traced program (no list of module and function names to keep in step)."""

    @upper.constant_maker
    def my_ones(n):
        return jitgrad.Tensor._make(np.ones(n))

    fn = jitgrad.compile(lambda x: x + my_ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for v in (1.0, 2.0):
            np.testing.assert_allclose(fn(jitgrad.tensor([v] * 3)).numpy(), [v + 1] * 3)
    assert fn.stats()["cached"] == 1 and fn.stats()["fallbacks"] == []
