"""``DataLoader``: batches of a dataset, in the order of a sampler (torch.utils.data's).

Note [loader workers]: ``num_workers=0`` loads in the calling thread. ``num_workers > 0`` runs
the workers as *threads* of this process, not as processes: jitgrad's kernels release the GIL
and data loading is usually I/O, so threads overlap both without pickling the dataset or the
batches, and a seeded program stays reproducible (jitgrad ops are safe in them: off the main
thread a kernel runs parallel only under a thread-safe Numba layer, ``_config.parallel_kernels``).
Each worker loads the batches ``k`` with ``k % num_workers == worker_id`` (map-style) or
iterates its own ``iter(dataset)`` (iterable-style, to be split with ``get_worker_info()``),
keeping up to ``prefetch_factor`` batches ready; the loader hands them out in turn, so the order
is the same as with ``num_workers=0``. Python-heavy ``__getitem__`` code does not run in parallel (the GIL).
``pin_memory`` is accepted and does nothing (no CUDA pinned memory here).
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

import numpy as np

from ...tensor import Tensor
from . import _random
from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo"]

_local = threading.local()


@dataclass(frozen=True)
class WorkerInfo:
    """What a loader worker knows of itself: ``id`` in ``[0, num_workers)``, ``num_workers``,
    ``seed`` (the loader's base seed plus ``id``) and the ``dataset`` it loads from."""
    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """The ``WorkerInfo`` of the loader worker this code runs in, or None in the main thread
    (``num_workers=0``). An ``IterableDataset.__iter__`` splits its stream with it."""
    return getattr(_local, "info", None)


def _tensor_batch(dataset, indices):
    """A batch of a ``TensorDataset`` with one gather per tensor (what ``default_collate`` of its
    samples would stack)."""
    idx = np.asarray(indices, dtype=np.int64)
    return [t[idx] for t in dataset.tensors]


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Map-style datasets are visited in the order of ``sampler`` (default: ``SequentialSampler``,
    or ``RandomSampler(generator=generator)`` with ``shuffle=True``), grouped by ``batch_size``
    (the last batch shorter unless ``drop_last``) or by ``batch_sampler``; iterable datasets in
    their own order. Each batch is ``collate_fn(list of samples)`` (``default_collate``; with
    ``batch_size=None`` every sample goes through ``default_convert`` unbatched). ``len`` is the
    number of batches where it is known. ``num_workers > 0`` loads with threads (Note [loader
    workers]), each starting with ``worker_init_fn(worker_id)`` and keeping ``prefetch_factor``
    batches ready; ``timeout`` bounds the wait for a worker's batch in seconds. Batches always
    come in the sampler's order (``in_order``); ``pin_memory``, ``pin_memory_device``,
    ``multiprocessing_context`` and ``persistent_workers`` are accepted for torch code and have
    nothing to do with threads (a new iteration starts new threads)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value!r}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_convert if batch_size is None and batch_sampler is None else default_collate)
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers else prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order

    @property
    def _batched(self) -> bool:
        return self.batch_sampler is not None or (
            isinstance(self.dataset, IterableDataset) and self.batch_size is not None)

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    # --- loading -------------------------------------------------------------------------
    def _fetch(self, indices):
        """The batch (or sample) at ``indices`` of a map-style dataset."""
        data = self.dataset
        if not self._batched:
            return self.collate_fn(data[indices])
        if (self.collate_fn is default_collate and type(data) is TensorDataset
                and all(isinstance(t, Tensor) for t in data.tensors)):
            return _tensor_batch(data, indices)
        many = getattr(data, "__getitems__", None)
        samples = many(list(indices)) if callable(many) else [data[i] for i in indices]
        return self.collate_fn(samples)

    def _stream(self):
        """The batches (or samples) of an iterable dataset, in the calling thread."""
        it = iter(self.dataset)
        if not self._batched:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            batch = []
            for sample in it:
                batch.append(sample)
                if len(batch) == self.batch_size:
                    break
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield self.collate_fn(batch)
            if len(batch) < self.batch_size:
                return

    def __iter__(self):
        if self.num_workers == 0:
            if isinstance(self.dataset, IterableDataset):
                return self._stream()
            keys = self.batch_sampler if self.batch_sampler is not None else self.sampler
            return (self._fetch(k) for k in keys)
        return _threaded(self)


def _worker(loader, info, out: queue.Queue, stop: threading.Event, jobs):
    """One loader thread: its share of the batches into ``out``, then a ``None`` end mark
    (an exception travels as ``(exc,)``)."""
    _local.info = info

    def put(item) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    try:
        if loader.worker_init_fn is not None:
            loader.worker_init_fn(info.id)
        for batch in jobs():
            if not put(("ok", batch)):
                return
        put(("end", None))
    except BaseException as exc:  # handed to the main thread, which re-raises it
        put(("error", exc))


def _threaded(loader):
    """Iterate ``loader`` with ``num_workers`` threads (Note [loader workers])."""
    n = loader.num_workers
    base_seed = _random.integers(2 ** 62, 1, loader.generator)[0]
    stop = threading.Event()
    queues = [queue.Queue(maxsize=max(1, loader.prefetch_factor)) for _ in range(n)]
    if isinstance(loader.dataset, IterableDataset):
        plans = [loader._stream for _ in range(n)]
    else:
        keys = list(loader.batch_sampler if loader.batch_sampler is not None else loader.sampler)

        def share(w):
            return lambda: (loader._fetch(k) for k in keys[w::n])
        plans = [share(w) for w in range(n)]
    threads = [threading.Thread(target=_worker, daemon=True, name=f"DataLoader worker {w}",
                                args=(loader, WorkerInfo(w, n, base_seed + w, loader.dataset),
                                      queues[w], stop, plans[w])) for w in range(n)]
    for t in threads:
        t.start()
    try:
        live = list(range(n))
        while live:
            for w in list(live):
                try:
                    kind, value = queues[w].get(timeout=loader.timeout or None)
                except queue.Empty:
                    raise RuntimeError(f"DataLoader timed out after {loader.timeout} seconds "
                                       f"waiting for worker {w}") from None
                if kind == "ok":
                    yield value
                elif kind == "end":
                    live.remove(w)
                else:
                    value.add_note(f"(raised in DataLoader worker {w})")
                    raise value
    finally:
        stop.set()
