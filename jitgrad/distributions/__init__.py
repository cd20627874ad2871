"""Probability distributions with reparameterised sampling and closed-form KL divergences
(PyTorch's ``torch.distributions``)."""
__all__ = []

# --- helper B ---
from . import constraints, transforms  # noqa: E402
from .constraint_registry import biject_to, transform_to  # noqa: E402
from .transforms import *  # noqa: E402,F401,F403
from .transformed_distribution import TransformedDistribution  # noqa: E402
from .generalized_pareto import GeneralizedPareto  # noqa: E402
from .gumbel import Gumbel  # noqa: E402
from .half_cauchy import HalfCauchy  # noqa: E402
from .half_normal import HalfNormal  # noqa: E402
from .inverse_gamma import InverseGamma  # noqa: E402
from .kumaraswamy import Kumaraswamy  # noqa: E402
from .log_normal import LogNormal  # noqa: E402
from .logistic_normal import LogisticNormal  # noqa: E402
from .pareto import Pareto  # noqa: E402
from .relaxed_bernoulli import RelaxedBernoulli  # noqa: E402
from .relaxed_categorical import RelaxedOneHotCategorical  # noqa: E402
from .weibull import Weibull  # noqa: E402

__all__ += ["constraints", "transforms", "biject_to", "transform_to", "TransformedDistribution",
            "GeneralizedPareto", "Gumbel", "HalfCauchy", "HalfNormal", "InverseGamma",
            "Kumaraswamy", "LogNormal", "LogisticNormal", "Pareto",
            "RelaxedBernoulli", "RelaxedOneHotCategorical", "Weibull"] + transforms.__all__
# --- end helper B ---

# --- helper A ---
from . import kl_cross, kl_transformed  # noqa: E402,F401  (register more KL divergences)
from .bernoulli import Bernoulli  # noqa: E402
from .beta import Beta  # noqa: E402
from .binomial import Binomial  # noqa: E402
from .categorical import Categorical  # noqa: E402
from .cauchy import Cauchy  # noqa: E402
from .continuous_bernoulli import ContinuousBernoulli  # noqa: E402
from .dirichlet import Dirichlet  # noqa: E402
from .distribution import Distribution  # noqa: E402
from .exp_family import ExponentialFamily  # noqa: E402
from .exponential import Exponential  # noqa: E402
from .fishersnedecor import FisherSnedecor  # noqa: E402
from .gamma import Chi2, Gamma  # noqa: E402
from .geometric import Geometric  # noqa: E402
from .independent import Independent  # noqa: E402
from .kl import kl_divergence, register_kl  # noqa: E402
from .laplace import Laplace  # noqa: E402
from .lkj_cholesky import LKJCholesky  # noqa: E402
from .lowrank_multivariate_normal import LowRankMultivariateNormal  # noqa: E402
from .mixture_same_family import MixtureSameFamily  # noqa: E402
from .multinomial import Multinomial  # noqa: E402
from .multivariate_normal import MultivariateNormal  # noqa: E402
from .negative_binomial import NegativeBinomial  # noqa: E402
from .normal import Normal  # noqa: E402
from .one_hot_categorical import (OneHotCategorical,  # noqa: E402
                                  OneHotCategoricalStraightThrough)
from .poisson import Poisson  # noqa: E402
from .studentt import StudentT  # noqa: E402
from .uniform import Uniform  # noqa: E402
from .von_mises import VonMises  # noqa: E402
from .wishart import Wishart  # noqa: E402

__all__ += ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
            "ContinuousBernoulli", "Dirichlet", "LKJCholesky", "Wishart",
            "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
            "Geometric", "Independent", "Laplace", "LowRankMultivariateNormal",
            "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
            "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
            "StudentT", "Uniform", "VonMises", "kl_divergence", "register_kl"]
# --- end helper A ---
