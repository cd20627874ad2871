"""``jitgrad.utils.data``: datasets, samplers and the ``DataLoader`` (torch.utils.data's API).

Tensors and NumPy arrays batch into jitgrad Tensors; random orders come from jitgrad's global
generator (seeded by ``jitgrad.manual_seed``) or a ``generator=`` of their own; workers are
threads (Note [loader workers] in ``dataloader.py``).
"""
from .collate import default_collate, default_convert
from .dataloader import DataLoader, WorkerInfo, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                      TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DataLoader", "default_collate", "default_convert", "get_worker_info", "WorkerInfo"]
