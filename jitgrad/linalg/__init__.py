"""``jitgrad.linalg``: ``torch.linalg``'s functions, signatures (``out=`` included) and
named-tuple results (``torch.return_types.linalg_*`` field names).

* ``_basic``: norms and decompositions on the ``ops.nplinalg`` rows (node names as PyTorch's:
  ``LinalgInvExBackward0``, ``LinalgSolveExBackward0``, ``LinalgCholeskyExBackward0``...)
* ``_factor``: triangular and LU solves, ``lu_factor`` (the ``ops.scipy_linalg`` LU row,
  ``LinalgLuFactorExBackward0``) and the ``*_ex`` variants with LAPACK's ``info``
* ``_functions``: matrix functions and products written with differentiable Tensor ops
"""
from __future__ import annotations

from ._basic import (cholesky, det, eigh, eigvalsh, inv, lstsq, matrix_norm, norm, pinv, qr,
                     slogdet, solve, svd, svdvals, vector_norm)
from ._factor import (LinAlgError, cholesky_ex, inv_ex, ldl_factor, ldl_factor_ex, ldl_solve, lu,
                      lu_factor, lu_factor_ex, lu_solve, solve_ex, solve_triangular)
from ._functions import (cond, cross, diagonal, eigvals, householder_product, matmul, matrix_exp,
                         matrix_power, matrix_rank, multi_dot, tensorinv, tensorsolve, vander,
                         vecdot)

__all__ = ["norm", "vector_norm", "matrix_norm", "solve", "inv", "det", "slogdet", "cholesky",
           "qr", "svd", "svdvals", "eigh", "eigvalsh", "lstsq", "pinv", "LinAlgError",
           "solve_triangular", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "inv_ex",
           "cholesky_ex", "solve_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "eigvals", "matrix_exp", "matrix_power", "matrix_rank", "cond",
           "multi_dot", "vecdot", "vander", "cross", "diagonal", "matmul", "householder_product",
           "tensorinv", "tensorsolve"]
