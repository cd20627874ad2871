"""The Dirichlet distribution."""
from __future__ import annotations

from ..ops import binary, creation
from ..scipy import special
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma
from .utils import as_tensor

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    r"""The Dirichlet distribution on the simplex with ``concentration`` :math:`\alpha` (the
    last dim holds the :math:`K` categories):

    .. math:: \log p(x) = \sum_k(\alpha_k-1)\log x_k + \log\Gamma(\alpha_0)
              - \sum_k\log\Gamma(\alpha_k), \qquad \alpha_0 = \textstyle\sum_k\alpha_k.

    ``rsample`` normalises independent :math:`\mathrm{Gamma}(\alpha_k)` draws (implicit
    reparameterisation gradients).
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, validate_args=None):
        concentration = as_tensor(concentration)
        if concentration.ndim < 1:
            raise ValueError("Dirichlet: `concentration` must be at least one-dimensional "
                             f"(the categories on its last dim), got shape "
                             f"{tuple(concentration.shape)}")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Dirichlet, batch_shape, _instance)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(*shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (special.xlogy(a - 1.0, value).sum(-1) + special.gammaln(a.sum(-1))
                - special.gammaln(a).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """The mode :math:`(\\alpha_k-1)/(\\alpha_0-K)` (with the :math:`\\alpha_k<1` clamped
        to 1); where every :math:`\\alpha_k < 1` the vertex of the largest one."""
        am1 = binary.clamp(self.concentration - 1, min=0.0)
        mode = am1 / am1.sum(-1, keepdim=True)
        all_small = (self.concentration < 1).all(-1, keepdim=True)
        k = self.concentration.shape[-1]
        vertex = (self.concentration.argmax(-1, keepdim=True)
                  == creation.arange(k)).to(mode.dtype)
        return binary.where(all_small, vertex, mode)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        r""":math:`\log B(\alpha) + (\alpha_0-K)\psi(\alpha_0)
        - \sum_k(\alpha_k-1)\psi(\alpha_k)`."""
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return (special.gammaln(a).sum(-1) - special.gammaln(a0) - (k - a0) * special.digamma(a0)
                - ((a - 1.0) * special.digamma(a)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return special.gammaln(x).sum(-1) - special.gammaln(x.sum(-1))
