"""``MixtureSameFamily``: a finite mixture of components of one distribution family."""
from __future__ import annotations

from ..ops import nn, reduce, scatter
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]

class MixtureSameFamily(Distribution):
    r"""A mixture :math:`p(x) = \sum_k \pi_k\,p_k(x)` whose mixing weights :math:`\pi` are a
    :class:`Categorical` (``mixture_distribution``, batch shape ``B``) and whose components are
    one distribution (``component_distribution``) with batch shape ``B + (K,)``, the rightmost
    batch dim indexing the :math:`K` components:

    .. math:: \log p(x) = \mathrm{logsumexp}_k\,(\log\pi_k + \log p_k(x)).
    """

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("MixtureSameFamily: the mixture_distribution must be a "
                             f"Categorical, got {type(mixture_distribution).__name__}")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("MixtureSameFamily: the component_distribution must be a "
                             f"Distribution, got {type(component_distribution).__name__}")
        mix_batch = tuple(mixture_distribution.batch_shape)
        comp_batch = tuple(component_distribution.batch_shape)
        if len(comp_batch) < 1 or comp_batch[:-1] != mix_batch:
            raise ValueError("MixtureSameFamily: the component batch shape without its last "
                             f"dim, {comp_batch[:-1]}, must equal the mixture batch shape "
                             f"{mix_batch}")
        k = mixture_distribution.logits.shape[-1]
        if comp_batch[-1] != k:
            raise ValueError(f"MixtureSameFamily: the mixture has {k} components but the "
                             f"component distribution's last batch dim is {comp_batch[-1]}")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = k
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(mix_batch, tuple(component_distribution.event_shape),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = tuple(batch_shape)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        """The :class:`Categorical` of the mixing weights."""
        return self._mixture_distribution

    @property
    def component_distribution(self):
        """The components (their last batch dim indexes the components)."""
        return self._component_distribution

    def _weights(self):
        """The mixing probabilities, shaped to multiply component statistics."""
        probs = self._mixture_distribution.probs
        return probs.reshape(*probs.shape, *((1,) * self._event_ndims))

    @property
    def mean(self):
        r""":math:`\sum_k\pi_k\mu_k`."""
        return (self._weights() * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        r"""The law of total variance:
        :math:`\sum_k\pi_k\sigma_k^2 + \sum_k\pi_k(\mu_k - \bar\mu)^2`."""
        w = self._weights()
        dim = -1 - self._event_ndims
        comp = self._component_distribution
        mean_cond_var = (w * comp.variance).sum(dim)
        var_cond_mean = (w * (comp.mean - self.mean.unsqueeze(dim)).pow(2)).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        r""":math:`\sum_k\pi_k F_k(x)` (univariate components)."""
        x = self._pad(x)
        return (self._component_distribution.cdf(x)
                * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix = nn.log_softmax(self._mixture_distribution.logits, dim=-1)
        return reduce.logsumexp(log_prob_x + log_mix, -1)

    def sample(self, sample_shape=()):
        mix = self._mixture_distribution.sample(sample_shape)
        comp = self._component_distribution.sample(sample_shape)
        index = mix.reshape(*mix.shape, 1, *((1,) * self._event_ndims))
        index = index.expand(*mix.shape, 1, *self._event_shape)
        dim = comp.ndim - self._event_ndims - 1
        return scatter.gather(comp, dim, index).squeeze(dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution},\n"
                f"  {self._component_distribution})")
