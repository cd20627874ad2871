"""Where the samplers draw their random numbers (torch's ``generator=`` protocol).

A sampler's ``generator`` may be

* ``None``: jitgrad's global generator, the one ``jitgrad.manual_seed`` seeds (so a seeded
  program shuffles the same way every run);
* a ``numpy.random.Generator`` (or a legacy ``numpy.random.RandomState``): drawn from directly;
* an object with torch's ``Generator`` protocol (``manual_seed``/``initial_seed``/``get_state``),
  such as ``jitgrad.Generator``: drawn from through the NumPy generator it wraps, which it hands
  out as ``numpy_generator()`` or, as ``jitgrad.numpy.random.Generator`` does, by exposing
  NumPy's drawing methods itself.
"""
from __future__ import annotations

import numpy as np

from ...ops import creation

__all__ = ["numpy_rng", "permutation", "integers", "weighted"]


def numpy_rng(generator):
    """The NumPy generator the draws of ``generator`` come from (see the module docstring)."""
    if generator is None:
        generator = creation.generator()
    if isinstance(generator, (np.random.Generator, np.random.RandomState)):
        return generator
    unwrap = getattr(generator, "numpy_generator", None)
    if callable(unwrap):
        return numpy_rng(unwrap())
    if all(callable(getattr(generator, m, None)) for m in ("permutation", "integers", "choice")):
        return generator
    raise TypeError(
        f"generator: expected None, a numpy.random.Generator or a jitgrad.Generator, got "
        f"{type(generator).__name__}; pass generator=numpy.random.default_rng(seed) for a "
        "seeded order of its own, or seed the global one with jitgrad.manual_seed")


def _ints(values) -> list:
    return [int(v) for v in np.asarray(values).reshape(-1)]


def permutation(n: int, generator) -> list:
    """A random permutation of ``range(n)`` as Python ints."""
    rng = numpy_rng(generator)
    return _ints(rng.permutation(n))


def integers(high: int, size: int, generator) -> list:
    """``size`` integers drawn uniformly from ``[0, high)``."""
    rng = numpy_rng(generator)
    draw = rng.integers if hasattr(rng, "integers") else rng.randint
    return _ints(draw(0, high, size))


def weighted(weights: np.ndarray, size: int, replacement: bool, generator) -> list:
    """``size`` indices drawn with probabilities proportional to ``weights`` (with or without
    replacement)."""
    rng = numpy_rng(generator)
    return _ints(rng.choice(len(weights), size=size, replace=replacement,
                            p=weights / weights.sum()))
