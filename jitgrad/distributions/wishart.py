"""The Wishart distribution over positive-definite matrices."""
from __future__ import annotations

import math

import numpy as np

from .. import linalg
from ..ops import binary, creation
from ..scipy import special
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma
from .multivariate_normal import tril_solve
from .utils import as_tensor, from_numpy, lazy_property, rng

__all__ = ["Wishart"]

_LOG_2 = math.log(2.0)


def _mvdigamma(a, p):
    r"""The multivariate digamma :math:`\psi_p(a) = \sum_{i=0}^{p-1}\psi(a - i/2)`."""
    offsets = creation.arange(p, dtype=a.dtype) / 2
    return special.digamma(a.unsqueeze(-1) - offsets).sum(-1)


class Wishart(ExponentialFamily):
    r"""The Wishart distribution :math:`W_p(\nu, V)` over :math:`p\times p` positive-definite
    matrices, with ``df`` :math:`\nu > p-1` and exactly one of ``covariance_matrix`` :math:`V`,
    ``precision_matrix`` :math:`V^{-1}` or ``scale_tril`` :math:`L` (:math:`V = LL^T`):

    .. math:: \log p(X) = \tfrac{\nu-p-1}2\log|X| - \tfrac12\mathrm{tr}(V^{-1}X)
              - \tfrac{\nu p}2\log 2 - \tfrac\nu2\log|V| - \log\Gamma_p(\tfrac\nu2).

    ``rsample`` uses the Bartlett decomposition :math:`X = (LA)(LA)^T`, :math:`A` lower
    triangular with :math:`A_{ii}^2 \sim \chi^2_{\nu-i}` (implicitly reparameterised) and
    standard normal entries below the diagonal.
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Wishart: exactly one of covariance_matrix, precision_matrix or "
                             f"scale_tril may be specified (got {[n for n, _ in given] or 'none'})")
        name, matrix = given[0]
        matrix = as_tensor(matrix)
        if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
            raise ValueError(f"Wishart: {name} must be a (batch of) square matrices, got shape "
                             f"{tuple(matrix.shape)}")
        df = as_tensor(df, like=matrix)
        batch = np.broadcast_shapes(tuple(df.shape), tuple(matrix.shape[:-2]))
        event = tuple(matrix.shape[-2:])
        self.df = df.expand(*batch)
        setattr(self, name, matrix.expand(*batch, *event))
        super().__init__(batch, event, validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(matrix))

    @property
    def arg_constraints(self):
        """``df`` must exceed :math:`p-1`; the matrix parameter is positive definite (or a
        Cholesky factor)."""
        p = self._event_shape[-1] if getattr(self, "_event_shape", ()) else 1
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(p - 1)}

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Wishart, batch_shape, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _p(self):
        return self._event_shape[-1]

    @lazy_property
    def scale_tril(self):
        """The lower-triangular :math:`L` with :math:`V = LL^T`."""
        L = self._unbroadcasted_scale_tril
        return L.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """The scale matrix :math:`V = LL^T`."""
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """:math:`V^{-1}`."""
        L = self._unbroadcasted_scale_tril
        L_inv = tril_solve(L, creation.eye(self._p(), dtype=L.dtype).expand(*L.shape))
        return (L_inv.mT @ L_inv).expand(*self._batch_shape, *self._event_shape)

    @property
    def mean(self):
        r""":math:`\nu V`."""
        return self.df.unsqueeze(-1).unsqueeze(-1) * self.covariance_matrix

    @property
    def mode(self):
        r""":math:`(\nu-p-1)V` where :math:`\nu \ge p+1`, else nan."""
        factor = self.df - self._p() - 1
        factor = binary.where(factor <= 0, math.nan, factor)
        return factor.unsqueeze(-1).unsqueeze(-1) * self.covariance_matrix

    @property
    def variance(self):
        r""":math:`\mathrm{Var}X_{ij} = \nu(V_{ij}^2 + V_{ii}V_{jj})`."""
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self.df.unsqueeze(-1).unsqueeze(-1) * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        p = self._p()
        dfs = self.df.expand(*shape[:-2]).unsqueeze(-1) - creation.arange(p, dtype=self.df.dtype)
        diag = (2 * standard_gamma(0.5 * dfs)).sqrt()
        below = from_numpy(np.tril(rng().standard_normal(shape), -1), self.df)
        eye = creation.eye(p, dtype=self.df.dtype)
        A = diag.unsqueeze(-1) * eye + below
        LA = self._unbroadcasted_scale_tril @ A
        return LA @ LA.mT

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._p()
        L = self._unbroadcasted_scale_tril
        L_inv = tril_solve(L, creation.eye(p, dtype=L.dtype).expand(*L.shape))
        trace = ((L_inv.mT @ L_inv) * value).sum((-2, -1))
        log_det_L = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_L) - special.multigammaln(nu / 2, p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        r""":math:`\tfrac{p+1}2\log|V| + \tfrac{p(p+1)}2\log 2 + \log\Gamma_p(\tfrac\nu2)
        - \tfrac{\nu-p-1}2\psi_p(\tfrac\nu2) + \tfrac{\nu p}2`."""
        nu, p = self.df, self._p()
        log_det_L = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_L) + special.multigammaln(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        return (-0.5 * self.precision_matrix, 0.5 * (self.df - self._p() - 1))

    def _log_normalizer(self, x, y):
        p = x.shape[-1]
        half_nu = y + (p + 1) / 2
        return (half_nu * (p * _LOG_2 - linalg.slogdet(-2 * x).logabsdet)
                + special.multigammaln(half_nu, p))
