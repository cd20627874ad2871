"""PyTorch's random sampling functions that jitgrad lacked (issue 35): ``rand_like``,
``randn_like``, ``randint_like``, ``randperm``, ``bernoulli``, ``multinomial``, ``normal``,
``poisson``. They draw from jitgrad's generator (``manual_seed``; ``ops.creation.generator``,
which also tells ``jitgrad.compile`` of the draw) or from ``generator=``: a
``numpy.random.Generator`` or an object with a ``numpy_generator()`` method (what
``jitgrad.Generator`` provides). Samples are constants (no gradient), except ``normal``, whose
result is ``mean + std * eps``: differentiable in a tensor ``mean`` and ``std`` (PyTorch's
``normal`` gives them zero gradients; the reparameterised gradient here is the useful one and
is exact for the drawn ``eps``).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from . import creation, random_rows
from ..graph.grad_mode import no_grad
from .core import dispatch, methods
from .torch_common import constant, host_arrays, tensor


def _rng(generator, device=None) -> np.random.Generator:
    default = creation.generator(device)  # (reports the draw to a compile trace)
    if generator is None:
        generator = default
    if isinstance(generator, np.random.Generator):
        return generator
    get = getattr(generator, "numpy_generator", None)
    if get is None:
        raise TypeError(f"generator must be a jitgrad.Generator or a numpy.random.Generator, "
                        f"not {type(generator).__name__}")
    return get()


def _like_dtype(input, dtype):
    return input._data.dtype if dtype is None else dtypes.to_dtype(dtype).np


def _finish(array, like, dtype, device, requires_grad):
    out = constant(np.asarray(array).astype(dtype, copy=False))
    target = device if device is not None else (like.device if like is not None else None)
    if target is not None and str(target) != "cpu":
        out = out.to(target)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _sampled(kind, fallback, size, generator, dtype, device, requires_grad):
    """``rand``/``randn``: from the default generator on the CPU the random row draws them, so
    ``jitgrad.compile`` captures the draw (``creation.row_draw``); else ``fallback``
    (``creation.rand``/``randn``). The same numbers either way."""
    if creation.row_draw(generator, dtype, device):
        return _drawn(random_rows.samples(creation.size_of(size), kind,
                                          creation.float_dtype(dtype)), requires_grad)
    return fallback(*size, generator=generator, dtype=dtype, device=device,
                    requires_grad=requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1) of ``size`` (default float dtype)."""
    return _sampled("uniform", creation.rand, size, generator, dtype, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples of ``size`` (default float dtype)."""
    return _sampled("normal", creation.randn, size, generator, dtype, device, requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, generator=None):
    """Uniform samples in [0, 1) with ``input``'s shape (and dtype unless given)."""
    x = tensor(input, "rand_like")
    dt = _like_dtype(x, dtype)
    if generator is None and not x.is_cuda and device is None and dt.kind == "f":
        return _drawn(random_rows.random_like(x, "uniform", dt), requires_grad)
    return _finish(_rng(generator, x.device).random(tuple(x.shape)), x, dt, device,
                   requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, generator=None):
    """Standard normal samples with ``input``'s shape (and dtype unless given)."""
    x = tensor(input, "randn_like")
    dt = _like_dtype(x, dtype)
    if generator is None and not x.is_cuda and device is None and dt.kind == "f":
        return _drawn(random_rows.random_like(x, "normal", dt), requires_grad)
    return _finish(_rng(generator, x.device).standard_normal(tuple(x.shape)), x, dt, device,
                   requires_grad)


def _drawn(t, requires_grad):
    """A draw of the default generator by a row (captured by ``jitgrad.compile``)."""
    return t.requires_grad_(True) if requires_grad else t


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, generator=None):
    """Integers uniform in ``[low, high)`` (``randint_like(x, high)``: from 0) with
    ``input``'s shape, in ``input``'s dtype unless given."""
    x = tensor(input, "randint_like")
    if high is None:
        low, high = 0, low
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = _like_dtype(x, dtype)
    draw = _rng(generator, x.device).integers(int(low), int(high), tuple(x.shape))
    return _finish(draw, x, dt, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``)."""
    if int(n) < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = np.int64 if dtype is None else dtypes.to_dtype(dtype).np
    return _finish(_rng(generator, device).permutation(int(n)), None, dt, device,
                   requires_grad)


def bernoulli(input, p=None, *, generator=None):
    """Samples 1 with probability ``input`` (or ``p``), else 0, in ``input``'s dtype. No
    gradient."""
    x = tensor(input, "bernoulli")
    (probs,) = host_arrays("bernoulli", x) if p is None else (np.asarray(p, dtype=np.float64),)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("bernoulli: all elements of input must be in [0, 1]")
    draw = _rng(generator, x.device).random(tuple(x.shape)) < probs
    return _finish(draw, x, x._data.dtype, None, False)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices per row of the (1-D or 2-D) non-negative weights
    ``input`` (need not sum to 1); without ``replacement`` each row's draws are distinct.
    int64, no gradient."""
    x = tensor(input, "multinomial")
    if x.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {x.ndim}")
    (w,) = host_arrays("multinomial", x)
    rows = w.reshape(-1, w.shape[-1]).astype(np.float64)
    if np.any(rows < 0) or not np.all(np.isfinite(rows)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    n = int(num_samples)
    if not replacement and n > rows.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rng = _rng(generator, x.device)
    out = np.empty((rows.shape[0], n), dtype=np.int64)
    for i, row in enumerate(rows):
        total = row.sum()
        if total <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and np.count_nonzero(row) < n:
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                               "enough non-negative category to sample)")
        out[i] = rng.choice(row.size, size=n, replace=replacement, p=row / total)
    return _finish(out.reshape(w.shape[:-1] + (n,)), x, np.int64, None, False)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False, out=None):
    """Normal samples ``mean + std * eps`` (``eps`` standard normal): tensors ``mean`` and
    ``std`` broadcast together; with two numbers, ``size`` gives the shape. As PyTorch's, the
    result requires grad when ``mean`` or ``std`` does and their gradients are zero (a
    reparameterised sample is ``distributions.Normal(mean, std).rsample()``)."""
    if out is not None:
        raise TypeError("normal(): out= is not supported here; assign the result instead")
    if not isinstance(mean, dispatch.Tensor) and not isinstance(std, dispatch.Tensor):
        if size is None:
            raise TypeError("normal(): with a float mean and std, pass size=")
        shape = tuple(size) if not isinstance(size, int) else (size,)
        dt = (dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)).np
        draw = float(mean) + float(std) * _rng(generator, device).standard_normal(shape)
        return _finish(draw, None, dt, device, requires_grad)
    m = tensor(mean, "normal")
    s = tensor(std, "normal")
    (scale,) = host_arrays("normal", s)
    if np.any(scale < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(tuple(m.shape), tuple(s.shape))
    dt = np.result_type(m._data.dtype, s._data.dtype)
    eps = constant(_rng(generator, m.device).standard_normal(shape).astype(dt), m)
    with no_grad():
        draw = m + s * eps
    return draw + m * 0.0 + s * 0.0 if m.requires_grad or s.requires_grad else draw


def poisson(input, generator=None):
    """Poisson samples with rates ``input`` (in ``input``'s dtype; no gradient)."""
    x = tensor(input, "poisson")
    (rates,) = host_arrays("poisson", x)
    if np.any(rates < 0):
        raise RuntimeError("poisson: rates must be non-negative")
    return _finish(_rng(generator, x.device).poisson(rates), x, x._data.dtype, None, False)


FUNCTIONS = (rand, randn, rand_like, randn_like, randint_like, randperm, bernoulli, multinomial,
             normal, poisson)
methods.declare({"bernoulli": bernoulli, "multinomial": multinomial}, __name__)
