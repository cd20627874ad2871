"""The relaxed (concrete / Gumbel-softmax) Bernoulli distribution and its logit form."""
from __future__ import annotations

import numbers

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (BinaryProbsLogits, as_tensor, broadcast_all, clamp_probs, from_numpy,
                    one_of_probs_logits, rng, softplus)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(BinaryProbsLogits, Distribution):
    r"""The logit of a relaxed Bernoulli draw (Maddison et al., 2017): with ``temperature``
    :math:`\lambda` and logits :math:`\ell` (or ``probs``, exactly one),

    .. math:: X = (\ell + \log U - \log(1 - U))/\lambda, \quad U \sim U(0, 1),

    .. math:: \log p(x) = \log\lambda + d - 2\,\mathrm{softplus}(d), \quad d = \ell - \lambda x.

    ``rsample`` is reparameterised in :math:`\ell` and :math:`\lambda`.
    """

    clamped = True
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = as_tensor(temperature)
        name, param = one_of_probs_logits(type(self).__name__, probs, logits)
        is_scalar = isinstance(param, numbers.Number)
        (param,) = broadcast_all(param)
        setattr(self, name, param)
        self._param = param
        super().__init__(() if is_scalar else tuple(param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = tuple(int(s) for s in batch_shape)
        new.temperature = self.temperature
        name = "probs" if "probs" in self.__dict__ else "logits"
        new.__dict__[name] = self.__dict__[name].expand(*batch_shape)
        new._param = new.__dict__[name]
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        """:math:`(\\ell + \\log U - \\log(1 - U))/\\lambda` (reparameterised)."""
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(*shape))
        uniforms = clamp_probs(from_numpy(rng().random(shape), probs))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) \
            / self.temperature

    def log_prob(self, value):
        r""":math:`\log\lambda + d - 2\,\mathrm{softplus}(d)`, :math:`d = \ell - \lambda x`."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    r"""The relaxed Bernoulli (binary concrete) distribution on :math:`(0, 1)`: the sigmoid of a
    ``LogitRelaxedBernoulli`` draw with ``temperature`` and ``probs`` or ``logits``. As the
    temperature goes to 0 its draws approach Bernoulli draws; ``rsample`` is reparameterised.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """The relaxation temperature :math:`\\lambda`."""
        return self.base_dist.temperature

    @property
    def logits(self):
        """The log-odds."""
        return self.base_dist.logits

    @property
    def probs(self):
        """The probabilities."""
        return self.base_dist.probs
