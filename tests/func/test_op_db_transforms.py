"""Every differentiable tensor-op and nn entry of the op database (jitgrad.testing.op_db) under
the transforms:

* forward mode: ``jvp`` equals the reverse-mode Jacobian times the tangent;
* ``vmap``: a batch of three perturbed copies of each sample equals the per-example loop;
* ``jacrev == jacfwd`` (equal to the reverse-mode Jacobian);
* forward-over-reverse (``jvp`` of ``grad``) equals reverse-over-reverse for a Hessian-vector
  product, so every op's backward propagates tangents (saved outputs included).
"""
import os

import numpy as np
import pytest

import jitgrad as jg
import jitgrad.func as F
from jitgrad.testing import assert_close
from jitgrad.testing.checks import analytic_jacobian
from jitgrad.testing.op_db import tensor_entries
from jitgrad.testing.opinfo import select, to_tensors

# the tensor-op and nn entries (the jitgrad.numpy ones call the same rows)
DIFF = [op for op in tensor_entries() if op.differentiable]


_KNOWN = ("no jvp rule for op", "no batching rule for op",
          "in-place operations on dual tensors are not supported",
          "is not supported on a batched tensor inside vmap")


# entries whose composition reads a batched tensor's values (a clear BatchingRuleError under
# vmap): the issue-35 nn functions composed on the host, listed with why
NO_BATCH_RULE = {name: "its composition reads the values on the host (no batching rule)"
                 for name in ("gaussian_nll_loss", "max_pool3d", "adaptive_max_pool2d",
                              "adaptive_max_pool3d", "grid_sample")}


def _missing_rule(e) -> bool:
    """A row without a jvp or batching rule, or an in-place op (not supported under forward
    mode or vmap yet): reported as an expected failure with the message (see docs/func.md)."""
    return any(k in str(e) for k in _KNOWN)


# Elementwise entries list many broadcast patterns, each a separate kernel to compile (cold:
# seconds each); the transforms treat broadcasting generically, so three samples suffice there
# (same shape, a row, a column/outer pattern). Set JITGRAD_TEST_ALL_SAMPLES=1 for all of them.
_ALL = bool(os.environ.get("JITGRAD_TEST_ALL_SAMPLES"))
_ELEMENTWISE = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "where", "clamp"}


def _cases(op, seed):
    rng = np.random.default_rng(seed)
    samples = op.samples(rng, np.dtype("float64"))
    if op.name in _ELEMENTWISE and not _ALL:
        samples = samples[:3]
    for sample in samples:
        tensors = to_tensors(sample, True)
        pos = [i for i, t in enumerate(tensors) if isinstance(t, jg.Tensor) and t.requires_grad]

        def fn(*xs, tensors=tensors, pos=pos, sample=sample):
            args = list(tensors)
            for p, x in zip(pos, xs):
                args[p] = x
            return select(op, op.fn(*args, **sample.kwargs))

        yield sample, fn, [tensors[p].detach() for p in pos], rng


@pytest.mark.filterwarnings("ignore:jacrev.*one row at a time")  # the fallback, checked here
@pytest.mark.parametrize("op", DIFF, ids=[op.name for op in DIFF])
def test_jvp_vmap_and_jacobians(op):
    try:
        _check_jvp_vmap_and_jacobians(op)
    except F.BatchingRuleError as e:
        if op.name not in NO_BATCH_RULE and not _missing_rule(e):
            raise
        pytest.xfail(f"{NO_BATCH_RULE.get(op.name, 'no batching rule')}: {e}")
    except (NotImplementedError, RuntimeError) as e:
        if not _missing_rule(e):
            raise
        pytest.xfail(str(e))


def _check_jvp_vmap_and_jacobians(op):
    vmapped = []
    for sample, fn, xs, rng in _cases(op, 5):
        ts = [jg.tensor(rng.standard_normal(x.shape)) for x in xs]
        out, tout = F.jvp(fn, tuple(xs), tuple(ts))
        J = analytic_jacobian(fn, [x.requires_grad_() for x in xs])
        xs = [x.detach() for x in xs]
        outs, touts = _outputs(out), _outputs(tout)  # decompositions: one tangent per output
        assert len(touts) == len(outs), (op.name, sample)
        for j, t in enumerate(touts):
            expect = sum(J[i][j].T @ ts[i]._data.reshape(-1) for i in range(len(xs)))
            assert_close(t._data.reshape(-1), expect, rtol=1e-10, atol=1e-12,
                         msg=f"jvp {op.name} {sample} output {j}")
        if sum(o.numel() for o in outs) <= 24:  # jacrev batches cotangents, jacfwd tangents
            nums = tuple(range(len(xs)))
            jr, jf = F.jacrev(fn, argnums=nums)(*xs), F.jacfwd(fn, argnums=nums)(*xs)
            if len(outs) == 1:
                jr, jf = (jr,), (jf,)
            for j, o in enumerate(outs):
                for a, b, x, Jm in zip(jr[j], jf[j], xs, J):
                    shape = (o.numel(), x.numel())
                    assert_close(a._data.reshape(shape), Jm[j].T, rtol=1e-12, atol=1e-14)
                    assert_close(b._data.reshape(shape), Jm[j].T, rtol=1e-12, atol=1e-14)
        vmapped.append((sample, fn, xs))
    for sample, fn, xs in vmapped:  # last: a row without a batch rule xfails here
        batch = [jg.tensor(np.stack([x._data + 0.01 * k for k in range(3)])) for x in xs]
        got = _outputs(F.vmap(fn)(*batch))
        each = [_outputs(fn(*[b[k] for b in batch])) for k in range(3)]
        for j, g in enumerate(got):
            ref = jg.stack([e[j] for e in each])
            assert g.shape == ref.shape, (op.name, sample, j)
            assert_close(g, ref, rtol=1e-13, atol=1e-14, msg=f"vmap {op.name} {sample}")


GRADGRAD = [op for op in DIFF if op.gradgrad]


@pytest.mark.parametrize("op", GRADGRAD, ids=[op.name for op in GRADGRAD])
def test_forward_over_reverse_equals_reverse_over_reverse(op):
    try:
        _check_forward_over_reverse(op)
    except (NotImplementedError, RuntimeError) as e:
        if not _missing_rule(e):
            raise
        pytest.xfail(str(e))


def _outputs(result):
    """The op's outputs as a tuple (decompositions return several)."""
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _check_forward_over_reverse(op):
    for sample, fn, xs, rng in _cases(op, 6):
        weights = [jg.tensor(rng.standard_normal(np.shape(out))) for out in _outputs(fn(*xs))]
        nums = tuple(range(len(xs)))

        def h(*a, fn=fn, weights=weights):
            return sum((out * w).sum() for out, w in zip(_outputs(fn(*a)), weights))

        ts = tuple(jg.tensor(rng.standard_normal(x.shape)) for x in xs)
        _, fwd = F.jvp(F.grad(h, argnums=nums), tuple(xs), ts)
        rev = F.grad(lambda *a: sum((g * t).sum() for g, t in zip(F.grad(h, argnums=nums)(*a),
                                                                   ts)), argnums=nums)(*xs)
        for a, b in zip(fwd, rev):
            assert_close(a, b, rtol=1e-10, atol=1e-12, msg=f"{op.name} {sample}")
