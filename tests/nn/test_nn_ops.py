"""The op-database checks for the nn layers (jitgrad.testing.db_nn): forward vs NumPy in
float64 and float32, gradcheck, gradgradcheck, fused backward == create_graph backward."""
import pytest

from jitgrad.testing.db_nn import NN_OPS
from jitgrad.testing.opinfo import check_forward, check_fused_equals_graph, check_gradients

DIFF = [op for op in NN_OPS if op.differentiable]
GRADGRAD = [op for op in DIFF if op.gradgrad]


def _ids(ops):
    return [op.name for op in ops]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", NN_OPS, ids=_ids(NN_OPS))
def test_forward_matches_numpy(op, dtype):
    # layers accumulate in float32 over many terms: a looser float32 tolerance than single ops
    check_forward(op, dtype, tol32=(2e-5, 2e-5), same_dtype_as_input=True)


@pytest.mark.parametrize("op", DIFF, ids=_ids(DIFF))
def test_gradcheck(op):
    check_gradients(op, 1)


@pytest.mark.parametrize("op", GRADGRAD, ids=_ids(GRADGRAD))
def test_gradgradcheck(op):
    check_gradients(op, 2)


@pytest.mark.parametrize("op", DIFF, ids=_ids(DIFF))
def test_fused_backward_equals_graph_backward(op):
    check_fused_equals_graph(op, rtol=1e-10)
