"""Helpers shared by the distributions: parameter broadcasting, logits/probs conversion, lazy
properties and the random draws every ``sample`` makes."""
from __future__ import annotations

import numbers

import numpy as np

from .. import dtypes
from ..nn import functional
from ..ops import binary, creation, nn, random_rows, unary
from ..tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property",
           "as_tensor", "extended_shape", "rng", "from_numpy", "draw", "host", "sum_rightmost",
           "euler"]

#: the Euler-Mascheroni constant (the mean of the standard Gumbel, entropy terms)
euler = 0.57721566490153286061


def _float_dtype(values):
    """The dtype parameters of a distribution take: the promoted float dtype of the tensors among
    ``values``, else the default dtype."""
    found = [v.dtype for v in values if isinstance(v, Tensor) and v.is_floating_point()]
    if not found:
        return dtypes.get_default_dtype()
    return dtypes.to_dtype(np.result_type(*(dt.np for dt in found)))


def as_tensor(value, like=None) -> Tensor:
    """``value`` as a floating tensor (a Python number becomes a 0-d tensor of ``like``'s dtype,
    or the default dtype); a tensor is returned as it is (its graph kept), an integer tensor is
    cast to the default float dtype."""
    if isinstance(value, Tensor):
        return value if value.is_floating_point() else value.to(dtypes.get_default_dtype())
    dt = like.dtype if isinstance(like, Tensor) else dtypes.get_default_dtype()
    return creation.tensor(value, dtype=dt)


def broadcast_all(*values):
    """Broadcast ``values`` (tensors or Python numbers) to one shape.

    Numbers become tensors of the tensors' promoted float dtype (default float64); tensors keep
    their graph, so gradients flow to the parameters a distribution was built from.

    Raises
    ------
    ValueError
        if a value is neither a number nor a tensor, or the shapes do not broadcast.
    """
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ValueError(f"broadcast_all: expected tensors or numbers, got "
                             f"{type(v).__name__}")
    dt = _float_dtype(values)
    tensors = [v if isinstance(v, Tensor) else creation.tensor(float(v), dtype=dt)
               for v in values]
    tensors = [t if t.is_floating_point() else t.to(dt) for t in tensors]
    try:
        target = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError:
        raise ValueError("broadcast_all: shapes " + ", ".join(str(tuple(t.shape)) for t in tensors)
                         + " do not broadcast to one shape") from None
    return tuple(t if tuple(t.shape) == target else t.expand(*target) for t in tensors)


def clamp_probs(probs):
    r"""Clamp probabilities to :math:`[\epsilon, 1-\epsilon]` (:math:`\epsilon` the dtype's
    machine epsilon), so that their logs stay finite."""
    eps = float(np.finfo(probs.dtype.np).eps)
    return binary.clamp(probs, min=eps, max=1.0 - eps)


def logits_to_probs(logits, is_binary=False):
    r"""Probabilities from logits: :math:`\sigma(\ell)` for a binary variable, else
    :math:`\mathrm{softmax}(\ell)` over the last dim."""
    if is_binary:
        return unary.sigmoid(logits)
    return nn.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    r"""Logits from probabilities (clamped away from 0 and 1): :math:`\log p - \log(1-p)` for a
    binary variable, else :math:`\log p` (normalised logits up to a constant)."""
    p = clamp_probs(probs)
    if is_binary:
        return p.log() - (-p).log1p()
    return p.log()


class lazy_property:
    """A property computed on first access and then stored on the instance (so ``probs`` and
    ``logits`` are derived from one another only when asked for)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class BinaryProbsLogits:
    """``probs`` and ``logits`` of a distribution with one success probability per element,
    each derived from the other on first use: :math:`\\ell = \\log p - \\log(1-p)`,
    :math:`p = \\sigma(\\ell)` (``clamped``: ``p`` kept inside ``(0, 1)``, for the relaxed and
    continuous Bernoulli). The class stores the given one as ``_param``."""

    clamped = False

    @lazy_property
    def logits(self):
        """The log-odds of a success."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The success probability."""
        p = logits_to_probs(self.logits, is_binary=True)
        return clamp_probs(p) if self.clamped else p

    @property
    def param_shape(self):
        """The shape of the parameter tensor."""
        return tuple(self._param.shape)


class CategoricalParams:
    """``probs``, ``logits`` (normalised), ``param_shape`` of a distribution built on a
    ``Categorical`` kept as ``_categorical`` (``OneHotCategorical``, ``Multinomial``)."""

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """Normalised category probabilities."""
        return self._categorical.probs

    @property
    def logits(self):
        """Normalised log probabilities."""
        return self._categorical.logits

    @property
    def param_shape(self):
        """The shape of the parameter tensor."""
        return self._categorical.param_shape


def extended_shape(sample_shape, batch_shape, event_shape) -> tuple:
    """``sample_shape + batch_shape + event_shape`` as a tuple (``sample_shape`` may be an int,
    a tuple, a list or a ``Size``)."""
    if isinstance(sample_shape, numbers.Integral):
        sample_shape = (sample_shape,)
    return tuple(int(s) for s in sample_shape) + tuple(batch_shape) + tuple(event_shape)


def rng():
    """jitgrad's global NumPy generator (seeded by ``jitgrad.manual_seed``)."""
    return creation.generator()


def from_numpy(array, like) -> Tensor:
    """A new tensor holding ``array`` in ``like``'s dtype (no graph)."""
    return creation.tensor(np.asarray(array), dtype=like.dtype)


def draw(shape, kind: str, like) -> Tensor:
    """Uniform samples in [0, 1) (``kind="uniform"``) or standard normal ones of ``shape``, in
    ``like``'s dtype, from jitgrad's generator: drawn by the random row where ``rand`` and
    ``randn`` are (``creation.row_draw``: ``jitgrad.compile`` captures the draw), else as
    ``from_numpy(rng().random(shape), like)``; the same numbers either way."""
    if creation.row_draw(None, like.dtype, None):
        return random_rows.samples(tuple(shape), kind, like.dtype.np)
    g = rng()
    return from_numpy(g.random(shape) if kind == "uniform" else g.standard_normal(shape), like)


def host(t, who) -> np.ndarray:
    """The values of tensor ``t`` as a NumPy array, read for the random draws of ``who``."""
    return np.asarray(t.detach()._host(who))


def sum_rightmost(value, dim):
    """Sum out the ``dim`` rightmost dims of ``value`` (none when ``dim`` is 0)."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.ndim - dim], -1).sum(-1)


def one_of_probs_logits(cls_name, probs, logits):
    """Check that exactly one of ``probs`` and ``logits`` is given (``ValueError`` naming the
    distribution otherwise) and return ``(name, tensor)`` of the one given."""
    if (probs is None) == (logits is None):
        raise ValueError(f"{cls_name}: pass either `probs` or `logits`, but not both "
                         f"(got {'both' if probs is not None else 'neither'})")
    return ("probs", probs) if probs is not None else ("logits", logits)


def softplus(x):
    r""":math:`\log(1 + e^x)`, computed stably (``jitgrad.nn.functional.softplus``)."""
    return functional.softplus(x)


def log_sigmoid(x):
    r""":math:`\log\sigma(x) = -\mathrm{softplus}(-x)`."""
    return -softplus(-x)
