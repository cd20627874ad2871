"""The LKJ distribution over Cholesky factors of correlation matrices."""
from __future__ import annotations

import math

import numpy as np

from ..ops import creation
from ..scipy import special
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_numpy, host, rng

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    r"""The LKJ distribution (Lewandowski, Kurowicka & Joe, 2009) over the lower Cholesky factors
    :math:`L` of ``dim`` :math:`\times` ``dim`` correlation matrices :math:`LL^T`, with
    ``concentration`` :math:`\eta`: the density of the correlation matrix is
    :math:`\propto|LL^T|^{\eta-1}`, so with the Jacobian of :math:`L \mapsto LL^T`

    .. math:: \log p(L) = \sum_{i=2}^{d}(d - i + 2\eta - 2)\log L_{ii} - \log c_d(\eta),

    :math:`\log c_d(\eta) = \tfrac{d-1}2\log\pi + \log\Gamma_{d-1}(\eta + \tfrac{d-2}2)
    - (d-1)\log\Gamma(\eta + \tfrac{d-1}2)`.

    ``sample`` uses the onion method: row :math:`i` (:math:`i \ge 1`) is
    :math:`(\sqrt{y}\,u, \sqrt{1-y})` with :math:`u` uniform on the unit sphere of dimension
    :math:`i` and :math:`y \sim \mathrm{Beta}(i/2, \eta + (d-1-i)/2)`. Not reparameterised.
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if int(dim) < 2:
            raise ValueError(f"LKJCholesky: expected dim to be an integer >= 2, got {dim}")
        self.dim = int(dim)
        self.concentration, = broadcast_all(concentration)
        super().__init__(tuple(self.concentration.shape), (self.dim, self.dim),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(LKJCholesky, batch_shape, _instance)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        d = self.dim
        eta = host(self.concentration, "LKJCholesky.sample")
        eta = np.broadcast_to(eta, shape[:-2])
        gen = rng()
        L = np.zeros(shape)
        L[..., 0, 0] = 1.0
        for i in range(1, d):
            y = gen.beta(i / 2, eta + (d - 1 - i) / 2)
            u = gen.standard_normal(shape[:-2] + (i,))
            u /= np.linalg.norm(u, axis=-1, keepdims=True)
            L[..., i, :i] = np.sqrt(y)[..., None] * u
            L[..., i, i] = np.sqrt(np.maximum(1.0 - y, np.finfo(float).tiny))
        return from_numpy(L, self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = self.dim
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = creation.arange(2, d + 1, dtype=self.concentration.dtype)
        exponents = 2 * (self.concentration - 1).unsqueeze(-1) + d - order
        unnormalized = (exponents * diag.log()).sum(-1)
        dm1 = d - 1
        alpha = self.concentration + 0.5 * dm1
        log_c = (0.5 * dm1 * math.log(math.pi) + special.multigammaln(alpha - 0.5, dm1)
                 - dm1 * special.gammaln(alpha))
        return unnormalized - log_c
