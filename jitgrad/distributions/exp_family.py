"""``ExponentialFamily``: distributions of the form
:math:`p_F(x;\\theta) = \\exp(\\langle t(x), \\theta\\rangle - F(\\theta) + k(x))`."""
from __future__ import annotations

from ..autograd.api import grad
from ..graph.grad_mode import enable_grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    r"""Base class of exponential-family distributions
    :math:`p(x;\theta) = \exp(\langle t(x), \theta\rangle - F(\theta) + k(x))`, with
    :math:`t` the sufficient statistic, :math:`\theta` the natural parameters, :math:`F` the log
    normaliser and :math:`k` the carrier measure.

    A subclass gives ``_natural_params`` (a tuple of tensors), ``_log_normalizer(*params)`` and
    ``_mean_carrier_measure`` (:math:`\mathbb{E}[k(X)]`); ``entropy`` and the KL divergence
    between two members of one family then follow from the Bregman divergence of :math:`F`:
    :math:`H = F(\theta) - \langle\theta, \nabla F(\theta)\rangle - \mathbb{E}[k(X)]`.
    """

    @property
    def _natural_params(self):
        raise NotImplementedError(f"{type(self).__name__} does not define its natural parameters")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not define its log normalizer")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__} does not define its mean carrier "
                                  "measure")

    def entropy(self):
        r"""The entropy by the Bregman divergence of the log normaliser:
        :math:`H = F(\theta) - \langle\theta, \nabla F(\theta)\rangle - \mathbb{E}[k(X)]`
        (differentiable: the gradient of :math:`F` is taken with ``create_graph``)."""
        result = -self._mean_carrier_measure
        with enable_grad():
            # a parameter in the graph keeps it, so the entropy is differentiable in it
            params = [p if p.requires_grad else p.detach().requires_grad_()
                      for p in self._natural_params]
            lg_normal = self._log_normalizer(*params)
            gradients = grad(lg_normal.sum(), params, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(params, gradients):
            result = result - (np_ * g).reshape(*self._batch_shape, -1).sum(-1)
        return result
