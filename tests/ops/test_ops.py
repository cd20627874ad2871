"""Tests generated from the one op database (jitgrad.testing.op_db): every entry of every family
(tensor ops, nn layers, jitgrad.numpy), every check its flags ask for."""
import pytest

from jitgrad.testing.op_db import all_entries
from jitgrad.testing.opinfo import check_forward, check_fused_equals_graph, check_gradients

ENTRIES = all_entries()
DIFF = [op for op in ENTRIES if op.differentiable]
GRADGRAD = [op for op in DIFF if op.gradgrad]
FUSED = [op for op in DIFF if op.fused_check]
FORWARD = [(op, dtype) for op in ENTRIES for dtype in ("float64", "float32") if dtype in op.dtypes]


def _ids(ops):
    return [op.name for op in ops]


@pytest.mark.parametrize("op, dtype", FORWARD, ids=[f"{op.name}-{dt}" for op, dt in FORWARD])
def test_forward_matches_numpy(op, dtype):
    ran = check_forward(op, dtype)
    # the rows the entry names (tests/ops/test_coverage.py) are rows its forward really runs
    assert set(op.rows) <= ran, (op.name, sorted(set(op.rows) - ran), sorted(ran))


@pytest.mark.parametrize("op", DIFF, ids=_ids(DIFF))
def test_gradcheck(op):
    check_gradients(op, 1)


@pytest.mark.parametrize("op", GRADGRAD, ids=_ids(GRADGRAD))
def test_gradgradcheck(op):
    ran = check_gradients(op, 2)
    assert set(op.gradient_rows) <= ran, (op.name, sorted(set(op.gradient_rows) - ran))


@pytest.mark.parametrize("op", FUSED, ids=_ids(FUSED))
def test_kernel_backward_equals_graph_backward(op):
    check_fused_equals_graph(op)
