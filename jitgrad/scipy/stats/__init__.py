"""``jitgrad.scipy.stats``: differentiable log-densities, CDFs and quantiles of ``norm``, ``t``,
``gamma``, ``beta``, ``chi2``, ``expon``, ``laplace``, ``cauchy``, ``uniform``, ``poisson``,
``multivariate_normal`` and ``dirichlet``, with SciPy's
signatures (``loc``, ``scale``, shape parameters).

Each distribution is a real module, so both spellings work::

    import jitgrad.scipy.stats.norm as norm            # HIPS autograd style
    from jitgrad.scipy import stats; stats.norm.logpdf(x, loc, scale)   # SciPy's attribute form
    stats.norm(loc, scale).logpdf(x)                   # a frozen distribution, as in SciPy

Which arguments are differentiable is stated in each module (shape parameters of the CDFs built
on incomplete gamma/beta functions are not; passing them with ``requires_grad`` raises)."""
from . import (beta, cauchy, chi2, dirichlet, expon, gamma, laplace, multivariate_normal,  # noqa: F401
               norm, poisson, t, uniform)

__all__ = ["norm", "t", "gamma", "beta", "poisson", "multivariate_normal", "dirichlet", "chi2",
           "expon", "laplace", "cauchy", "uniform"]
