"""The relaxed one-hot categorical (concrete / Gumbel-softmax) distribution and its log form."""
from __future__ import annotations

import math

from ..ops import reduce as _reduce
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import as_tensor, clamp_probs, from_numpy, rng

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


def _logsumexp(x):
    return _reduce.logsumexp(x, -1, keepdim=True)


class ExpRelaxedCategorical(Distribution):
    r"""The log of a relaxed one-hot categorical draw (Maddison et al., 2017; Jang et al.,
    2017): with ``temperature`` :math:`\lambda` and normalised logits :math:`\ell` over
    :math:`K` categories,

    .. math:: X = s - \mathrm{logsumexp}(s), \quad s = (\ell + G)/\lambda,
              \quad G_k \text{ i.i.d. standard Gumbel},

    .. math:: \log p(x) = \log\Gamma(K) + (K-1)\log\lambda
              + \sum_k c_k - K\,\mathrm{logsumexp}(c), \quad c = \ell - \lambda x.

    ``rsample`` is reparameterised.
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.independent(constraints.real, 1)
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = as_tensor(temperature)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = tuple(int(s) for s in batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        """The shape of the parameter tensor."""
        return self._categorical.param_shape

    @property
    def logits(self):
        """Normalised log probabilities."""
        return self._categorical.logits

    @property
    def probs(self):
        """Normalised probabilities."""
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        """:math:`s - \\mathrm{logsumexp}(s)`, :math:`s = (\\ell + G)/\\lambda`."""
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        uniforms = clamp_probs(from_numpy(rng().random(shape), logits))
        gumbels = -((-(uniforms.log())).log())
        scores = (logits + gumbels) / self.temperature
        return scores - _logsumexp(scores)

    def log_prob(self, value):
        r"""The concrete density of the log-probabilities ``value`` (see the class)."""
        k = self.event_shape[-1]
        if self._validate_args:
            self._validate_sample(value)
        log_scale = math.lgamma(k) + (k - 1) * self.temperature.log()
        score = self.logits - value * self.temperature
        score = (score - _logsumexp(score)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    r"""The relaxed one-hot categorical (concrete / Gumbel-softmax) distribution on the simplex:
    the exponential of an ``ExpRelaxedCategorical`` draw with ``temperature`` and ``probs`` or
    ``logits``. As the temperature goes to 0 its draws approach one-hot categorical draws;
    ``rsample`` is reparameterised."""

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """The relaxation temperature :math:`\\lambda`."""
        return self.base_dist.temperature

    @property
    def logits(self):
        """Normalised log probabilities."""
        return self.base_dist.logits

    @property
    def probs(self):
        """Normalised probabilities."""
        return self.base_dist.probs
