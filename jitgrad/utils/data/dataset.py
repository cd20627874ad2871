"""Datasets (torch.utils.data's): map-style ``Dataset`` (``__getitem__``/``__len__``) and
``IterableDataset`` (``__iter__``), the wrappers over them, and ``random_split``."""
from __future__ import annotations

import bisect
import itertools
import math
import numbers
import warnings

from . import _random

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` (and ``__len__`` for the
    default samplers). ``a + b`` is ``ConcatDataset([a, b])``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset given as a stream: subclasses define ``__iter__``. ``a + b`` chains two
    streams (``ChainDataset``). With ``DataLoader(num_workers > 0)`` every worker iterates the
    whole stream unless ``__iter__`` splits it by ``get_worker_info()``."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


def _length(t) -> int:
    return t.shape[0] if t.shape else 0


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; every tensor has the same size in dim
    0. A ``DataLoader`` over it with the default collation gathers a whole batch with one index
    per tensor (``t[indices]``) instead of stacking samples."""

    def __init__(self, *tensors):
        if not tensors or any(_length(t) != _length(tensors[0]) for t in tensors):
            raise ValueError(f"TensorDataset: size mismatch between tensors (sizes in dim 0: "
                             f"{[_length(t) for t in tensors]}); pass at least one tensor, all "
                             "with the same number of samples")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return _length(self.tensors[0])


class StackDataset(Dataset):
    """Zips datasets of equal length: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}`` (positional or keyword, not both)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: supported either ``tuple``- (via ``args``) or "
                             "``dict``- (via ``kwargs``) like input/output, but both types are "
                             "given.")
        if not args and not kwargs:
            raise ValueError("StackDataset: at least one dataset should be passed")
        self.datasets = args if args else kwargs
        parts = args if args else tuple(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError(f"StackDataset: size mismatch between datasets (lengths "
                             f"{[len(d) for d in parts]})")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The samples of several map-style datasets one after another (negative indices count
    from the end). ``cumulative_sizes[k]`` is the total length of the first ``k + 1``."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ValueError("ConcatDataset does not support IterableDataset (use "
                                 "ChainDataset for streams)")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        n = len(self)
        if index < 0:
            if -index > n:
                raise ValueError(f"ConcatDataset: absolute value of index {index} should not "
                                 f"exceed dataset length {n}")
            index += n
        k = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[k - 1] if k else 0
        return self.datasets[k][index - start]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another (chained lazily, each iterated when its
    turn comes). ``len`` is the sum of theirs."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got "
                                f"{type(d).__name__}")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``Subset(d, idx)[i] == d[idx[i]]``, and a list
    of positions ``p`` is passed on as ``d[[idx[i] for i in p]]``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices):
        """The samples at a list of positions, through the dataset's own ``__getitems__`` when
        it has one."""
        many = getattr(self.dataset, "__getitems__", None)
        if callable(many):
            return many([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def _split_lengths(n: int, lengths) -> list:
    """Integer lengths from ``lengths``: integers summing to ``n``, or fractions summing to 1
    (floor of each share, the remainder handed out one by one from the first)."""
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError(f"random_split: fractions should be in [0, 1], got {lengths}")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=3)
        return counts
    if any(isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0
           for k in lengths):
        raise ValueError(f"random_split: lengths should be non-negative integers or fractions "
                         f"summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!"
                         f" (lengths {lengths} sum to {sum(lengths)}, the dataset has {n})")
    return [int(k) for k in lengths]


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given ``lengths``
    (integers summing to ``len(dataset)``, or fractions summing to 1). ``generator``: None for
    jitgrad's global generator (``jitgrad.manual_seed``), or a NumPy / jitgrad generator."""
    counts = _split_lengths(len(dataset), lengths)
    order = _random.permutation(sum(counts), generator)
    starts = [0, *itertools.accumulate(counts)]
    return [Subset(dataset, order[a:b]) for a, b in zip(starts, starts[1:])]
