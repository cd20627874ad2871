"""Partitions: a Dask collection (or a list of Futures / Delayed) turned into one tuple of
Futures per partition, checked before any loss or gradient work is sent.

Accepted forms, each partition becoming the arrays ``loss_fn(params, *partition)`` receives:

- a dask array, or a tuple of dask arrays with the same number of rows: the blocks along
  axis 0 (the other axes are merged into one block; arrays chunked differently along axis 0
  are rechunked to the first one's row blocks);
- a dask DataFrame / Series, or a tuple of them with the same partitioning: each partition as
  a NumPy array (a DataFrame as 2-D ``rows x columns``, a Series as 1-D);
- a list whose entries are Futures / Delayed (one value, or a tuple of arrays), or tuples of
  Futures / Delayed;
- a :class:`Partitions` (from :func:`persist`): already on the workers, nothing is re-sent.
"""
from __future__ import annotations

import math

import numpy as np

from . import _worker


class Partitions:
    """Partitions held on the workers (see :func:`persist`).

    ``futures``: one tuple of Futures per partition; ``rows``: rows per partition;
    ``meta``: per array of a partition, ``(shape after the rows axis, dtype)``.
    Holding this object keeps the data in the workers' memory; drop it to release it.
    """

    def __init__(self, client, futures, rows, meta, source):
        self.client, self.futures, self.rows, self.meta = client, futures, rows, meta
        self.source = source

    def __len__(self):
        return len(self.futures)

    @property
    def nrows(self) -> int:
        return int(sum(self.rows))

    def nbytes(self) -> int:
        """Bytes of partition data held on the workers."""
        row_bytes = sum(int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
                        for shape, dtype in self.meta)
        return self.nrows * row_bytes

    def __repr__(self):
        arrays = ", ".join(f"(rows, {', '.join(map(str, s))}) {d}" if s else f"(rows,) {d}"
                           for s, d in self.meta)
        return (f"Partitions({len(self)} partitions, {self.nrows} rows, arrays: {arrays}, "
                f"from {self.source})")


def _is_dask_array(obj):
    try:
        import dask.array
    except ImportError:  # pragma: no cover - dask[array] is part of the extra
        return False
    return isinstance(obj, dask.array.Array)


def _is_dask_frame(obj):
    module = type(obj).__module__
    return (module.startswith(("dask.dataframe", "dask_expr"))
            and hasattr(obj, "npartitions") and hasattr(obj, "to_delayed"))


def _is_lazy_or_future(obj):
    from dask.delayed import Delayed
    from distributed import Future

    return isinstance(obj, (Delayed, Future))


def _fail(msg):
    raise ValueError(f"jitgrad.distributed: {msg}")


class _Plan:
    """What will be sent, before anything is: lazy parts per partition plus their metadata."""

    def __init__(self, parts, rows, meta, source):
        self.parts, self.rows, self.meta, self.source = parts, rows, meta, source


def _plan_arrays(arrays):
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            _fail(f"array {i} of the partitions is 0-d; partitions split arrays along axis 0")
        if any(math.isnan(c) for c in a.chunks[0]):
            _fail(f"array {i} has unknown chunk sizes along axis 0; call "
                  "compute_chunk_sizes() on it first")
    n = arrays[0].shape[0]
    for i, a in enumerate(arrays[1:], 1):
        if a.shape[0] != n:
            _fail(f"partitions of mismatched shapes: array 0 has {n} rows but array {i} has "
                  f"{a.shape[0]} (shapes {tuple(arrays[0].shape)} and {tuple(a.shape)})")
    row_chunks = arrays[0].chunks[0]
    aligned = [a.rechunk((row_chunks,) + tuple(-1 for _ in a.shape[1:])) for a in arrays]
    blocks = [a.to_delayed().reshape(-1) for a in aligned]
    parts = [tuple(b[i] for b in blocks) for i in range(len(row_chunks))]
    meta = [(tuple(int(s) for s in a.shape[1:]), str(a.dtype)) for a in arrays]
    return _Plan(parts, [int(r) for r in row_chunks], meta, "dask array")


def _frame_meta(frame):
    meta = frame._meta
    arr = meta.to_numpy()
    if arr.dtype == object:
        dtypes = dict(meta.dtypes.astype(str)) if hasattr(meta, "columns") else str(meta.dtype)
        _fail(f"a dataframe has non-numeric columns ({dtypes}); select numeric columns first")
    return (tuple(int(s) for s in arr.shape[1:]), str(arr.dtype))


def _plan_frames(frames):
    import dask

    n = frames[0].npartitions
    for i, f in enumerate(frames[1:], 1):
        if f.npartitions != n:
            _fail(f"partitions of mismatched shapes: dataframe 0 has {n} partitions but "
                  f"dataframe {i} has {f.npartitions}; repartition them alike")
        if (frames[0].known_divisions and f.known_divisions
                and tuple(f.divisions) != tuple(frames[0].divisions)):
            _fail(f"dataframes 0 and {i} are partitioned differently (divisions differ); "
                  "repartition them alike")
    convert = dask.delayed(_worker.frame_to_numpy, pure=True)
    blocks = [[convert(d) for d in f.to_delayed()] for f in frames]
    parts = [tuple(b[i] for b in blocks) for i in range(n)]
    meta = [_frame_meta(f) for f in frames]
    return _Plan(parts, None, meta, "dask dataframe")


def _plan_list(entries):
    parts = []
    for i, e in enumerate(entries):
        group = tuple(e) if isinstance(e, (tuple, list)) else (e,)
        for g in group:
            if not _is_lazy_or_future(g):
                _fail(f"partition {i}: a list of partitions holds Futures or Delayed (or tuples "
                      f"of them), got {type(g).__name__}; wrap local arrays with "
                      "client.scatter or dask.delayed, or pass a dask collection")
        parts.append(group)
    if not parts:
        _fail("no partitions")
    return _Plan(parts, None, None, "list of futures/delayed")


def plan(partitions) -> _Plan:
    """Check the collection's form and, where Dask knows them, its shapes; nothing runs."""
    if isinstance(partitions, Partitions):
        return partitions
    items = partitions if isinstance(partitions, tuple) else (partitions,)
    if all(_is_dask_array(a) for a in items):
        return _plan_arrays(list(items))
    if all(_is_dask_frame(f) for f in items):
        return _plan_frames(list(items))
    if isinstance(partitions, list):
        return _plan_list(partitions)
    kinds = ", ".join(sorted({type(a).__name__ for a in items}))
    raise TypeError("jitgrad.distributed: partitions must be a dask array (or a tuple of dask "
                    "arrays), a dask DataFrame/Series (or a tuple of them), a list of "
                    f"Futures/Delayed, or jitgrad.distributed.Partitions; got {kinds}")


def check_meta(meta):
    """Every partition must hold the same arrays: the same count, the same trailing shape and
    dtype for each, and one row count within a partition."""
    first = meta[0]
    for i, parts in enumerate(meta):
        if len(parts) != len(first):
            _fail(f"partitions of mismatched shapes: partition {i} has {len(parts)} arrays but "
                  f"partition 0 has {len(first)}")
        lengths = {shape[0] if shape else None for shape, _ in parts}
        if None in lengths:
            _fail(f"partition {i} holds a 0-d array; partitions split arrays along axis 0")
        if len(lengths) != 1:
            _fail(f"partitions of mismatched shapes: the arrays of partition {i} have "
                  f"different row counts {[s for s, _ in parts]}")
        for j, ((shape, dtype), (shape0, dtype0)) in enumerate(zip(parts, first)):
            if shape[1:] != shape0[1:] or np.dtype(dtype).kind != np.dtype(dtype0).kind:
                _fail(f"partitions of mismatched shapes: array {j} of partition {i} is "
                      f"{shape} {dtype} but in partition 0 it is {shape0} {dtype0}")
    return [p[0][0][0] for p in meta], [(s[1:], d) for s, d in first]


def materialize(client, plan_) -> Partitions:
    """Send the partitions to the workers (compute the Delayed ones, keep Futures) and read
    the metadata Dask did not know."""
    if isinstance(plan_, Partitions):
        return plan_
    flat = [g for group in plan_.parts for g in group]
    lazy = [k for k, g in enumerate(flat) if not _is_future(g)]
    if lazy:
        computed = client.compute([flat[k] for k in lazy])
        for k, fut in zip(lazy, computed):
            flat[k] = fut
    it = iter(flat)
    futures = [tuple(next(it) for _ in group) for group in plan_.parts]
    rows, meta = plan_.rows, plan_.meta
    if rows is None or meta is None:
        described = client.gather(client.map(_worker.describe, *zip(*futures), pure=False)
                                  if len({len(f) for f in futures}) == 1 else
                                  [client.submit(_worker.describe, *f, pure=False)
                                   for f in futures])
        rows, meta = check_meta(described)
    return Partitions(client, futures, [int(r) for r in rows], meta, plan_.source)


def _is_future(obj):
    from distributed import Future

    return isinstance(obj, Future)


def probe_arrays(meta, rows=2):
    """Zero arrays shaped like a partition of ``rows`` rows (to check the loss locally)."""
    return [np.zeros((rows,) + tuple(shape), dtype=np.dtype(dtype)) for shape, dtype in meta]
