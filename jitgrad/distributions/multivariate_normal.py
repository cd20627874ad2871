"""The multivariate normal distribution, parameterised by a covariance, precision or
lower-triangular scale matrix."""
from __future__ import annotations

import math

import numpy as np

from .. import linalg
from ..ops import creation
from ..scipy.linalg import solve_triangular
from . import constraints
from .distribution import Distribution
from .utils import as_tensor, draw, lazy_property

__all__ = ["MultivariateNormal", "batch_mahalanobis", "tril_solve"]


def tril_solve(L, b):
    r""":math:`L^{-1}b` for lower-triangular ``L`` (..., n, n) and ``b`` (..., n, m), their batch
    dims broadcast."""
    batch = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(b.shape[:-2]))
    L = L.expand(*batch, *L.shape[-2:])
    b = b.expand(*batch, *b.shape[-2:])
    return solve_triangular(L, b, lower=True)


def batch_mahalanobis(L, x):
    r"""The squared Mahalanobis distance :math:`\|L^{-1}x\|^2 = x^T(LL^T)^{-1}x` for the
    lower-triangular ``L`` (..., n, n) and vectors ``x`` (..., n), batch dims broadcast."""
    return tril_solve(L, x.unsqueeze(-1)).squeeze(-1).pow(2).sum(-1)


def _diag(m):
    return m.diagonal(dim1=-2, dim2=-1)


class MultivariateNormal(Distribution):
    r"""The multivariate normal distribution :math:`\mathcal{N}(\mu, \Sigma)` with mean ``loc``
    and exactly one of ``covariance_matrix`` :math:`\Sigma`, ``precision_matrix``
    :math:`\Sigma^{-1}` or ``scale_tril`` :math:`L` (:math:`\Sigma = LL^T`, lower triangular with
    a positive diagonal):

    .. math:: \log p(x) = -\tfrac12\|L^{-1}(x-\mu)\|^2 - \sum_i\log L_{ii} - \tfrac k2\log 2\pi.

    ``rsample`` is :math:`\mu + L\varepsilon`, :math:`\varepsilon \sim \mathcal{N}(0, I)`.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        loc = as_tensor(loc)
        if loc.ndim < 1:
            raise ValueError("MultivariateNormal: loc must be at least one-dimensional, got "
                             f"shape {tuple(loc.shape)}")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("MultivariateNormal: exactly one of covariance_matrix, "
                             f"precision_matrix or scale_tril may be specified (got "
                             f"{[n for n, _ in given] or 'none'})")
        name, matrix = given[0]
        matrix = as_tensor(matrix, like=loc)
        if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
            raise ValueError(f"MultivariateNormal: {name} must be a (batch of) square "
                             f"matrices, got shape {tuple(matrix.shape)}")
        if matrix.shape[-1] != loc.shape[-1]:
            raise ValueError(f"MultivariateNormal: {name} of shape {tuple(matrix.shape)} does "
                             f"not match loc of shape {tuple(loc.shape)} in its last dim")
        batch = np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        event = tuple(loc.shape[-1:])
        setattr(self, name, matrix.expand(*batch, *matrix.shape[-2:]))
        self.loc = loc.expand(*batch, *event)
        super().__init__(batch, event, validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(MultivariateNormal, batch_shape, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self):
        """The lower-triangular :math:`L` with :math:`\\Sigma = LL^T`."""
        L = self._unbroadcasted_scale_tril
        return L.expand(*self._batch_shape, *L.shape[-2:])

    @lazy_property
    def covariance_matrix(self):
        """:math:`\\Sigma = LL^T`."""
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(*self._batch_shape, *L.shape[-2:])

    @lazy_property
    def precision_matrix(self):
        """:math:`\\Sigma^{-1} = L^{-T}L^{-1}`."""
        L = self._unbroadcasted_scale_tril
        eye = creation.eye(L.shape[-1], dtype=L.dtype)
        L_inv = tril_solve(L, eye.expand(*L.shape))
        return (L_inv.mT @ L_inv).expand(*self._batch_shape, *L.shape[-2:])

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        r""":math:`\Sigma_{ii} = \sum_j L_{ij}^2`."""
        L = self._unbroadcasted_scale_tril
        return L.pow(2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = draw(shape, "normal", self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        L = self._unbroadcasted_scale_tril
        m = batch_mahalanobis(L, value - self.loc)
        half_log_det = _diag(L).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        r""":math:`\tfrac k2(1 + \log 2\pi) + \sum_i\log L_{ii}`."""
        L = self._unbroadcasted_scale_tril
        half_log_det = _diag(L).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h.expand(*self._batch_shape) if self._batch_shape else h
