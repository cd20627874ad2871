"""Every tensor-op and nn entry of the op database on CUDA (simulated or real) against the CPU backend: forward
values and gradients, float64 and float32."""
import pytest

import jitgrad
from jitgrad.testing.db_misc import DECOMPOSITIONS
from jitgrad.testing.op_db import tensor_entries
from jitgrad.testing.opinfo import check_device_matches_cpu

# the tensor-op and nn entries (the jitgrad.numpy ones: tests/cuda/test_cuda_numpy_ops.py; the
# decompositions, tuple results of CPU-built matrices: tests/cuda/test_cuda_nplinalg.py)
ALL_OPS = [op for op in tensor_entries() if not set(op.rows) & set(DECOMPOSITIONS)]


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
