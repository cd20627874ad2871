"""The multivariate normal distribution with a low-rank-plus-diagonal covariance."""
from __future__ import annotations

import math

import numpy as np

from .. import linalg
from ..ops import creation
from . import constraints
from .distribution import Distribution
from .multivariate_normal import tril_solve
from .utils import as_tensor, draw, lazy_property

__all__ = ["LowRankMultivariateNormal"]


class LowRankMultivariateNormal(Distribution):
    r"""The multivariate normal distribution with covariance :math:`\Sigma = WW^T + D`: ``loc``
    :math:`\mu` (..., k), ``cov_factor`` :math:`W` (..., k, r) and ``cov_diag`` :math:`D`
    (..., k, positive). With the capacitance :math:`C = I_r + W^TD^{-1}W = L_CL_C^T`, the
    Woodbury identity and the matrix determinant lemma give

    .. math:: x^T\Sigma^{-1}x = x^TD^{-1}x - \|L_C^{-1}W^TD^{-1}x\|^2, \qquad
              \log|\Sigma| = 2\sum_i\log(L_C)_{ii} + \sum_j\log D_j,

    so ``log_prob`` costs :math:`O(kr^2 + r^3)`. ``rsample`` is
    :math:`\mu + W\varepsilon_W + \sqrt D\odot\varepsilon_D`.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        loc = as_tensor(loc)
        cov_factor = as_tensor(cov_factor, like=loc)
        cov_diag = as_tensor(cov_diag, like=loc)
        if loc.ndim < 1:
            raise ValueError("LowRankMultivariateNormal: loc must be at least one-dimensional")
        k = loc.shape[-1]
        if cov_factor.ndim < 2 or cov_factor.shape[-2] != k:
            raise ValueError("LowRankMultivariateNormal: cov_factor must be at least "
                             f"two-dimensional with shape (..., {k}, rank), got "
                             f"{tuple(cov_factor.shape)}")
        if cov_diag.ndim < 1 or cov_diag.shape[-1] != k:
            raise ValueError("LowRankMultivariateNormal: cov_diag must be at least "
                             f"one-dimensional with shape (..., {k}), got {tuple(cov_diag.shape)}")
        try:
            batch = np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                        tuple(cov_diag.shape[:-1]))
        except ValueError:
            raise ValueError("LowRankMultivariateNormal: incompatible batch shapes: loc "
                             f"{tuple(loc.shape)}, cov_factor {tuple(cov_factor.shape)}, "
                             f"cov_diag {tuple(cov_diag.shape)}") from None
        self.loc = loc.expand(*batch, k)
        self.cov_factor = cov_factor.expand(*batch, *cov_factor.shape[-2:])
        self.cov_diag = cov_diag.expand(*batch, k)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = self._capacitance(cov_factor, cov_diag)
        super().__init__(batch, (k,), validate_args=validate_args)

    @staticmethod
    def _capacitance(W, D):
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        eye = creation.eye(W.shape[-1], dtype=W.dtype)
        return linalg.cholesky(Wt_Dinv @ W + eye)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LowRankMultivariateNormal, batch_shape, _instance)
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        r""":math:`\Sigma_{ii} = \sum_j W_{ij}^2 + D_i`."""
        v = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return v.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """:math:`WW^T + \\mathrm{diag}(D)`."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eye = creation.eye(W.shape[-2], dtype=W.dtype)
        cov = W @ W.mT + D.unsqueeze(-1) * eye
        return cov.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        r""":math:`D^{-1} - D^{-1}WC^{-1}W^TD^{-1}` (Woodbury)."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = tril_solve(self._capacitance_tril, W.mT / D.unsqueeze(-2))
        eye = creation.eye(W.shape[-2], dtype=W.dtype)
        prec = D.reciprocal().unsqueeze(-1) * eye - A.mT @ A
        return prec.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self):
        """The Cholesky factor of the covariance matrix."""
        return linalg.cholesky(self.covariance_matrix)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rank = self._unbroadcasted_cov_factor.shape[-1]
        eps_w = draw(shape[:-1] + (rank,), "normal", self.loc)
        eps_d = draw(shape, "normal", self.loc)
        W = self._unbroadcasted_cov_factor
        return (self.loc + (W @ eps_w.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self):
        C = self._capacitance_tril
        return (2 * C.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                + self._unbroadcasted_cov_diag.log().sum(-1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv_x = (W.mT @ (diff / D).unsqueeze(-1))
        m = (diff.pow(2) / D).sum(-1) - tril_solve(self._capacitance_tril,
                                                    Wt_Dinv_x).squeeze(-1).pow(2).sum(-1)
        k = self._event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m + self._log_det())

    def entropy(self):
        r""":math:`\tfrac12(k(1 + \log 2\pi) + \log|\Sigma|)`."""
        k = self._event_shape[0]
        h = 0.5 * (k * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(*self._batch_shape) if self._batch_shape else h
