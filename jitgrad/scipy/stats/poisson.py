"""``jitgrad.scipy.stats.poisson``: the Poisson distribution with mean ``mu``, SciPy's
signatures (``k`` shifted by ``loc``), differentiable in ``mu``: ``logpmf``/``pmf`` directly,
``cdf``/``sf`` and their logs through ``gammaincc``/``gammainc`` in ``mu``
(``d cdf(k)/d mu = -pmf(floor(k); mu)``). ``k`` is discrete: a ``k`` (or ``loc``) requiring grad
raises ``NotImplementedError``."""
from __future__ import annotations

import math

import numpy as _np

from ...autograd import forward_ad as _forward_ad
from ...ops import unary as _unary_ops
from ...tensor import Tensor
from .. import special as _special
from . import _common

__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf"]


def _discrete(k, loc, fn):
    for v, name in ((k, "k"), (loc, "loc")):
        if _forward_ad.needs_derivative(v):
            raise NotImplementedError(f"poisson.{fn}: {name} is discrete and has no derivative; "
                                      "pass it without requires_grad (or detach it)")
    return _common.constant(k) - _common.constant(loc)


def logpmf(k, mu, loc=0):
    """``k log mu - mu - gammaln(k + 1)`` for integer ``k >= 0`` (``-inf`` otherwise)."""
    kv = _discrete(k, loc, "logpmf")
    mu = _common.tensor(mu)
    bad = (kv < 0) | (kv != _np.floor(kv))
    ks = Tensor._make(_np.where(bad, 0.0, kv))
    bad = Tensor._make(bad)
    out = _special.xlogy(ks, mu) - mu - _special.gammaln(ks + 1.0)
    return _common.where(bad, -math.inf, out)


def pmf(k, mu, loc=0):
    """``exp(logpmf)``."""
    return _unary_ops.exp(logpmf(k, mu, loc))


def _floor_k(k, loc, fn):
    return _np.floor(_discrete(k, loc, fn))


def cdf(k, mu, loc=0):
    """``P(K <= k) = gammaincc(floor(k) + 1, mu)`` (0 for ``k < 0``)."""
    kf = _floor_k(k, loc, "cdf")
    out = _special.gammaincc(_np.maximum(kf, 0.0) + 1.0, mu)
    return _common.where(Tensor._make(kf < 0), 0.0, out)


def sf(k, mu, loc=0):
    """``P(K > k) = gammainc(floor(k) + 1, mu)`` (1 for ``k < 0``)."""
    kf = _floor_k(k, loc, "sf")
    out = _special.gammainc(_np.maximum(kf, 0.0) + 1.0, mu)
    return _common.where(Tensor._make(kf < 0), 1.0, out)


def logcdf(k, mu, loc=0):
    """``log(cdf)``."""
    return _unary_ops.log(cdf(k, mu, loc))


def logsf(k, mu, loc=0):
    """``log(sf)``."""
    return _unary_ops.log(sf(k, mu, loc))


def __getattr__(name):
    raise _common.missing(__name__, name)


_common.make_distribution(__name__)
