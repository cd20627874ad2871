"""``default_collate`` and ``default_convert``: how a ``DataLoader`` turns a list of samples into
a batch (torch.utils.data's rules, the containers kept as torch keeps them)."""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from ...ops import creation, shape
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
          "found {}")


def _numeric_array(a) -> bool:
    """A NumPy array or scalar that can become a Tensor (not strings or objects)."""
    return isinstance(a, (np.ndarray, np.generic)) and a.dtype.kind in "biufc"


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _same_container(elem, values):
    """``values`` in the container type of ``elem`` (a plain dict / list when that type cannot
    be built from them)."""
    try:
        return type(elem)(values)
    except TypeError:
        return dict(values) if isinstance(elem, collections.abc.Mapping) else list(values)


def default_convert(data):
    """Convert NumPy arrays and scalars in ``data`` to Tensors, leaving everything else as is.

    Recurses into mappings (their type kept), namedtuples, tuples (returned as lists, as torch
    does) and other sequences; strings and bytes are returned unchanged. It is the collation of
    a ``DataLoader`` with ``batch_size=None`` (no batching)."""
    if isinstance(data, Tensor):
        return data
    if _numeric_array(data):
        return creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _same_container(data, {k: default_convert(v) for k, v in data.items()})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _same_container(data, [default_convert(d) for d in data])
    return data


def _stack(batch):
    first = batch[0].shape
    for i, t in enumerate(batch):
        if t.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(t.shape)} at entry {i}")
    return shape.stack(list(batch), 0)


def default_collate(batch):
    """Collate a list of samples into a batch, by the type of the first sample:

    * Tensor: stacked along a new dim 0 (the batch requires grad only if a sample did);
    * NumPy array (numeric): converted and stacked; NumPy scalar: a 1-d Tensor of the batch;
    * float: a float64 Tensor; int (and bool): an int64 (bool) Tensor;
    * str / bytes: the list unchanged;
    * mapping: the same mapping type with each key collated over the samples;
    * namedtuple: the same namedtuple type of the collated fields;
    * tuple or other sequence: each position collated over the samples (all samples must have
      the same length), returned as a list for tuples and as the sequence's own type otherwise.

    Anything else raises a TypeError naming the type found."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray):
        if not _numeric_array(elem):
            raise TypeError(_ERROR.format(elem.dtype))
        return _stack([creation.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        if not _numeric_array(elem):
            raise TypeError(_ERROR.format(elem.dtype))
        return creation.as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return creation.tensor(batch, dtype="float64")
    if isinstance(elem, (bool, numbers.Integral)) and isinstance(elem, int):
        return creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _same_container(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(s) != len(elem) for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _same_container(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))
