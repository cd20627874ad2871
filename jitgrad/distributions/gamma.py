"""The gamma distribution and its special case chi-squared; ``standard_gamma``, the
reparameterised gamma draw the gamma-based distributions (Beta, Dirichlet, StudentT,
FisherSnedecor) sample through."""
from __future__ import annotations

import numpy as np

from ..autograd.function import Function
from ..graph.grad_mode import is_grad_enabled, no_grad
from ..ops import binary
from ..scipy import special
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, from_numpy, host, rng

__all__ = ["Gamma", "Chi2", "standard_gamma", "gamma_cdf"]


def _dcdf_dalpha(alpha, x):
    r""":math:`\partial P(\alpha, x)/\partial\alpha` of the regularised lower incomplete gamma
    function, which has no closed form: a central difference in :math:`\alpha` with one
    Richardson step (error :math:`O(h^4)`, :math:`h = 10^{-3}\alpha`, about 1e-10 relative in
    float64)."""
    h = 1e-3 * alpha

    def central(step):
        return (special.gammainc(alpha + step, x) - special.gammainc(alpha - step, x)) / (2 * step)

    return (4 * central(h / 2) - central(h)) / 3


class _FirstOrderOnly(Function):
    """Passes a first-order gradient through unchanged and refuses to be differentiated again
    (PyTorch's ``once_differentiable``): the derivatives in shape parameters below have no
    closed form, so their second order is refused rather than silently dropped."""

    @staticmethod
    def forward(ctx, value, *inputs):
        return value.clone()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("the derivative of a gamma draw or gamma cdf in its shape parameter "
                           "is differentiable once only (no second-order implicit "
                           "reparameterisation gradient)")


def _first_order(value, *inputs):
    """``value``, marked as not differentiable again when a graph of the gradient is being
    built (``create_graph=True``)."""
    return _FirstOrderOnly.apply(value, *inputs) if is_grad_enabled() else value


class _StandardGamma(Function):
    r"""A draw :math:`x \sim \mathrm{Gamma}(\alpha, 1)` with the implicit reparameterisation
    gradient :math:`dx/d\alpha = -\,(\partial P(\alpha, x)/\partial\alpha) / p(x;\alpha)`
    (differentiating :math:`P(\alpha, x) = u` at fixed :math:`u`). Where the density underflows
    (tiny :math:`x`, small :math:`\alpha`) it uses the small-:math:`x` limit
    :math:`P \approx x^\alpha/\Gamma(\alpha+1)`:
    :math:`dx/d\alpha = x(\psi(\alpha+1) - \log x)/\alpha`."""

    @staticmethod
    def forward(ctx, alpha):
        draws = rng().standard_gamma(host(alpha, "standard_gamma"))
        tiny = np.finfo(alpha.dtype.np).tiny
        x = from_numpy(np.maximum(draws, tiny), alpha)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        x_saved, alpha_saved = ctx.saved_tensors
        with no_grad():
            x, alpha = x_saved.detach(), alpha_saved.detach()
            log_pdf = (alpha - 1) * x.log() - x - special.gammaln(alpha)
            implicit = -_dcdf_dalpha(alpha, x) / log_pdf.exp()
            small = x * (special.digamma(alpha + 1) - x.log()) / alpha
            use_small = (x < 1e-6) | ~implicit.isfinite()
            dx = binary.where(use_small, small, implicit)
        return _first_order(grad_output * dx, grad_output, alpha_saved)


class _ShapeTangent(Function):
    r"""Zero, with the first-order gradient :math:`\partial P(\alpha, z)/\partial\alpha` in
    :math:`\alpha` (and none in :math:`z`, exact at the point itself): added to
    :math:`P(\alpha_{\text{detached}}, z)` it makes the gamma cdf differentiable once in
    :math:`\alpha`."""

    @staticmethod
    def forward(ctx, alpha, z):
        ctx.save_for_backward(alpha, z)
        return (alpha * 0 + z * 0).clone()

    @staticmethod
    def backward(ctx, grad_output):
        alpha, z = ctx.saved_tensors
        with no_grad():
            d_alpha = _dcdf_dalpha(alpha.detach(), z.detach())
        return _first_order(grad_output * d_alpha, grad_output, alpha), None


def gamma_cdf(alpha, z):
    r"""The regularised lower incomplete gamma function :math:`P(\alpha, z)`, differentiable in
    :math:`z` (any order) and once in :math:`\alpha` (numerical derivative, see
    ``_dcdf_dalpha``)."""
    value = special.gammainc(alpha.detach(), z)
    if alpha.requires_grad:
        value = value + _ShapeTangent.apply(alpha, z)
    return value


def standard_gamma(concentration):
    r"""Draws :math:`x \sim \mathrm{Gamma}(\alpha, 1)` of ``concentration``'s shape,
    differentiable in :math:`\alpha` by implicit reparameterisation (see ``Gamma.rsample``)."""
    return _StandardGamma.apply(concentration)


class Gamma(ExponentialFamily):
    r"""The gamma distribution with shape ``concentration`` :math:`\alpha` and ``rate``
    :math:`\beta`:

    .. math:: \log p(x) = \alpha\log\beta + (\alpha-1)\log x - \beta x - \log\Gamma(\alpha).

    ``rsample`` draws :math:`g \sim \mathrm{Gamma}(\alpha, 1)` and returns :math:`g/\beta`; the
    gradient in :math:`\alpha` is the implicit reparameterisation gradient
    :math:`dg/d\alpha = -(\partial_\alpha P(\alpha, g))/p(g;\alpha)` (first order only).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return binary.clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)
        tiny = float(np.finfo(value.dtype.np).tiny)
        return binary.clamp(value, min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return special.xlogy(a, b) + special.xlogy(a - 1, value) - b * value - special.gammaln(a)

    def entropy(self):
        r""":math:`\alpha - \log\beta + \log\Gamma(\alpha) + (1-\alpha)\psi(\alpha)`."""
        a = self.concentration
        return a - self.rate.log() + special.gammaln(a) + (1.0 - a) * special.digamma(a)

    def cdf(self, value):
        r""":math:`P(\alpha, \beta x)`, the regularised lower incomplete gamma function
        (differentiable once in :math:`\alpha`, where PyTorch is not at all)."""
        if self._validate_args:
            self._validate_sample(value)
        return gamma_cdf(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return special.gammaln(x + 1) + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    r"""The chi-squared distribution with ``df`` :math:`k` degrees of freedom:
    :math:`\mathrm{Gamma}(\alpha = k/2, \beta = 1/2)`."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        df, = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        """The degrees of freedom, :math:`2\\alpha`."""
        return self.concentration * 2
