"""The special-value sweep against PyTorch's pinned forward values and gradients
(tests/ops/test_special_grads_torch.py) with CUDA tensors: the same scalar bodies compiled for
the device. Under the simulator (slow: kernels run as Python) only the rows whose bodies have
special-value handling of their own; on a GPU every case."""
import os
import pathlib
import sys

import pytest

import jitgrad

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ops"))
from test_special_grads_torch import CASES, DTYPES, FUNCTIONS, TORCH_VERSION, sweep  # noqa: E402

SIMULATED = {"abs", "div", "pow", "pow_root", "pow_scalar_1.5", "pow_scalar_-0.5", "clamp",
             "clamp_empty", "arctan2", "logaddexp", "logaddexp2", "remainder", "copysign",
             "relu", "sign", "logit", "logit_eps", "softplus", "maximum", "where"}
# the simulator runs the bodies on NumPy scalars, in its own threads (np.errstate is per thread)
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in scalar:RuntimeWarning")
ON_GPU = os.environ.get("JITGRAD_TEST_CUDA") == "1"
SELECTED = sorted([*CASES, *FUNCTIONS] if ON_GPU else SIMULATED)


@pytest.fixture(scope="module", autouse=True)
def _cuda():
    assert jitgrad.cuda.is_available(), "the CUDA tests need a GPU or NUMBA_ENABLE_CUDASIM=1"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", SELECTED)
def test_cuda_against_torch(case, dtype):
    failures = sweep(case, dtype, device="cuda")
    assert not failures, f"cuda vs torch {TORCH_VERSION}:\n" + "\n".join(failures)
