"""Note [attribute readers] (jitgrad/ops/core/registry.py): a node class gets its attribute
readers when it is made, from the row (its ``attrs`` and the names its functions use as
``ctx.<name>``), and no class changes at run time. ``OpNode.__getattr__`` still serves a name
the analysis missed, at the cost of a failed look-up each time: the op database's backward
passes must never need it.
"""
import numpy as np

import jitgrad as jg
import jitgrad.nn  # noqa: F401  (their rows)
import jitgrad.numpy  # noqa: F401
import jitgrad.scipy.linalg  # noqa: F401
import jitgrad.scipy.signal  # noqa: F401
import jitgrad.scipy.special  # noqa: F401
import jitgrad.scipy.stats  # noqa: F401
from jitgrad.ops.core import registry
from jitgrad.ops.core.registry import OPS, ctx_names
from jitgrad.testing import opinfo
from jitgrad.testing.op_db import all_entries


def _stash(ctx, x, dims):
    ctx.dims, ctx.shape_in = dims, x.shape


def _forward(ctx, x, dims=()):
    _stash(ctx, x, dims)
    ctx.count = 3
    return x


def _backward(node, g):
    def inner():
        return node.offset  # a nested function reading the ctx it closes over
    return g * node.count + inner() + node.scale.real


def test_ctx_names_follow_helpers_and_nested_functions():
    names = ctx_names((_forward, _backward))
    assert {"dims", "shape_in", "count", "offset", "scale"} <= names
    assert "real" not in names and "shape" not in names  # attributes of other values


def test_row_gets_its_readers_when_made():
    sum_cls = OPS["sum"].node_cls
    for name in ("dims", "keepdim", "in_shape", "keep_shape"):  # attrs and what forward stashes
        assert isinstance(vars(sum_cls)[name], registry._AttrReader)
    for name in ("name", "apply", "needs_input_grad", "_next_meta", "_attrs"):
        assert not isinstance(vars(sum_cls).get(name), registry._AttrReader)


def test_readers_read_per_node_and_instance_attributes_win():
    x = jg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    first, second = x.sum(dim=0).grad_fn, x.sum(dim=1).grad_fn
    assert first.dims == (0,) and second.dims == (1,)
    second.dims = (5,)
    assert second.dims == (5,) and first.dims == (0,)
    del second.dims
    del second._attrs["dims"]
    try:
        second.dims
    except AttributeError as e:
        assert "'SumBackward1' object has no attribute 'dims'" in str(e)
    else:
        raise AssertionError("no AttributeError")
    assert getattr(second, "unknown_name", "missing") == "missing"


def _classes():
    return {name: dict(vars(op.node_cls)) for name, op in OPS.items()}


def _run_backward(op, rng):
    """One sample of ``op``: a plain backward and a ``create_graph`` one (their rules read
    different names: a plain backward may build arrays directly)."""
    for sample, fn, inputs in opinfo.diff_samples(op, rng):
        if not inputs:
            continue
        outs = [o for o in opinfo.flat(fn(*inputs)) if o.requires_grad]
        if not outs:
            continue
        seeds = [jg.tensor(rng.standard_normal(o.shape)) for o in outs]
        jg.autograd.grad(outs, inputs, seeds, retain_graph=True, allow_unused=True)
        jg.autograd.grad(outs, inputs, seeds, create_graph=True, allow_unused=True)
        return


def _composite(op) -> bool:
    rows = set(op.rows) | set(op.gradient_rows)
    return any(name in OPS and not OPS[name].elementwise for name in rows) or not rows


def test_op_database_backward_needs_no_fallback(monkeypatch):
    """Every name a composite row's backward reads from its node has a reader, and the node
    classes are the same after the backward passes as before."""
    served = set()
    fallback = registry.OpNode.__getattr__

    def spy(self, name):
        if name in self._attrs:
            served.add((type(self).__name__, name))
        return fallback(self, name)

    monkeypatch.setattr(registry.OpNode, "__getattr__", spy)
    rng = np.random.default_rng(0)
    entries = [op for op in all_entries() if op.differentiable and _composite(op)]
    before = _classes()
    for op in entries:
        _run_backward(op, rng)
    # views regenerated after in-place writes, CopySlices (rows no entry runs this way)
    x = jg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    a = x * 1.0
    b = a[1:, ::2]
    a.mul_(2.0)
    a[0].add_(1.0)
    (b.sum() + a.sum()).backward()
    assert not served, sorted(served)
    after = _classes()
    assert {k: v for k, v in after.items() if k in before} == before
