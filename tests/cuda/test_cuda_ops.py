"""Every op of the op databases on CUDA (simulated or real) against the CPU backend: forward
values and gradients, float64 and float32."""
import pytest

import jitgrad
from jitgrad.testing import db_elementwise, db_reduce, db_shape  # noqa: F401  (register entries)
from jitgrad.testing.db_nn import NN_OPS
from jitgrad.testing.opinfo import OP_DB, check_device_matches_cpu

ALL_OPS = list(OP_DB) + [op for op in NN_OPS if op not in OP_DB]


@pytest.fixture(scope="module", autouse=True)
def _cuda():
    assert jitgrad.cuda.is_available(), "the CUDA tests need a GPU or NUMBA_ENABLE_CUDASIM=1"


@pytest.mark.parametrize("op", ALL_OPS, ids=[op.name for op in ALL_OPS])
def test_op_matches_cpu_float64(op):
    check_device_matches_cpu(op, "cuda:0")


@pytest.mark.parametrize("op", ALL_OPS, ids=[op.name for op in ALL_OPS])
def test_op_matches_cpu_float32(op):
    if "float32" not in op.dtypes:
        pytest.skip(f"{op.name} is not defined for float32")
    check_device_matches_cpu(op, "cuda:0", "float32", rtol=2e-6, atol=1e-6)
