"""Tests generated from the op database (jitgrad.testing.opinfo): every op, every check."""
import pytest

from jitgrad.testing import db_elementwise, db_reduce, db_shape  # noqa: F401  (register entries)
from jitgrad.testing.opinfo import (OP_DB, check_forward, check_fused_equals_graph,
                                    check_gradients)

DIFF = [op for op in OP_DB if op.differentiable]
GRADGRAD = [op for op in DIFF if op.gradgrad]


def _ids(ops):
    return [op.name for op in ops]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", OP_DB, ids=_ids(OP_DB))
def test_forward_matches_numpy(op, dtype):
    if dtype not in op.dtypes:
        pytest.skip(f"{op.name} is not defined for {dtype}")
    check_forward(op, dtype)


@pytest.mark.parametrize("op", DIFF, ids=_ids(DIFF))
def test_gradcheck(op):
    check_gradients(op, 1)


@pytest.mark.parametrize("op", GRADGRAD, ids=_ids(GRADGRAD))
def test_gradgradcheck(op):
    check_gradients(op, 2)


@pytest.mark.parametrize("op", DIFF, ids=_ids(DIFF))
def test_kernel_backward_equals_graph_backward(op):
    check_fused_equals_graph(op)
