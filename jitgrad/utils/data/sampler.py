"""Samplers: the order in which a ``DataLoader`` visits a map-style dataset (torch.utils.data's
``Sampler`` family, same constructors and iteration semantics).

Random samplers draw from ``generator`` (``_random.py``: None is jitgrad's global generator,
which ``jitgrad.manual_seed`` seeds; or a NumPy / jitgrad generator).
"""
from __future__ import annotations

import numbers

import numpy as np

from ...tensor import Tensor
from . import _random

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Base class of samplers: an iterable of dataset indices (or of lists of indices, for a
    batch sampler). Subclasses define ``__iter__`` and, where it is known, ``__len__``."""

    def __init__(self, *args, **kwargs):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """The indices ``0, 1, ..., len(data_source) - 1`` in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _positive_int(owner, name, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{owner}: {name} should be a positive integer value, but got "
                         f"{name}={value!r}")
    return int(value)


class RandomSampler(Sampler):
    """Random indices into ``data_source``.

    Without ``replacement``: a fresh permutation per pass over the data (``num_samples`` longer
    than the data starts a new permutation each ``len(data_source)`` indices). With
    ``replacement``: ``num_samples`` independent uniform draws. ``num_samples`` defaults to
    ``len(data_source)``; ``generator`` as in the module docstring."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement should be a boolean value, but got "
                            f"replacement={replacement!r}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _positive_int("RandomSampler", "num_samples", self.num_samples)

    @property
    def num_samples(self) -> int:
        """How many indices one iteration yields (``len(data_source)`` unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, total = len(self.data_source), self.num_samples
        if self.replacement:
            yield from _random.integers(n, total, self.generator)
            return
        for _ in range(total // n):
            yield from _random.permutation(n, self.generator)
        if total % n:
            yield from _random.permutation(n, self.generator)[:total % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (a new permutation each iteration)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for k in _random.permutation(len(self.indices), self.generator):
            yield self.indices[k]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices in ``[0, len(weights))``, index ``i`` drawn with probability
    ``weights[i] / sum(weights)`` (with ``replacement``, or without: then no index repeats and
    ``num_samples`` may not exceed the number of non-zero weights). Weights need not sum to 1."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _positive_int("WeightedRandomSampler", "num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"WeightedRandomSampler: replacement should be a boolean value, but "
                             f"got replacement={replacement!r}")
        w = np.asarray(weights._host("WeightedRandomSampler weights") if isinstance(weights, Tensor)
                       else weights, np.float64)
        if w.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but given "
                             f"weights have shape {tuple(w.shape)}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, non-negative and "
                             "not all zero")
        if not replacement and num_samples > np.count_nonzero(w):
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples without "
                             f"replacement from {np.count_nonzero(w)} non-zero weights")
        self._p = w
        self.weights = Tensor._make(w)
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from _random.weighted(self._p, self.num_samples, self.replacement, self.generator)

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        _positive_int("BatchSampler", "batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last should be a boolean value, but got "
                             f"drop_last={drop_last!r}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
