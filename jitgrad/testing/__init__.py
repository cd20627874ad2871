"""Testing helpers: finite-difference gradient checks and the op database driving op tests."""
from .checks import assert_close, gradcheck, gradgradcheck, numerical_jacobian  # noqa: F401
