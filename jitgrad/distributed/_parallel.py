"""``DataParallel``: synchronous data-parallel training of an ``nn.Module`` on Dask workers.

Note [replicas stay identical]: each worker holds one replica (module + optimizer) in a
worker-local registry, and every task that touches it is pinned to that worker. A step is

1. the batch split into one shard per worker (contiguous rows), each sent to its worker only
   (inside the task up to 1 MiB, scattered to that worker above);
2. forward + backward of the shard on its replica; gradients scaled by shard rows / batch rows;
3. the scaled gradients summed by a tree of ``combine`` tasks on the cluster (reduce) and the
   sum fetched by every replica from the worker that holds it (broadcast): an all-reduce;
4. each replica sets ``p.grad`` to that sum and runs its optimizer step.

All replicas start from the same ``state_dict`` and apply the same bytes through the same
deterministic kernels, so they stay bitwise identical; each step returns a SHA-256 digest of
every replica's parameters and the step raises if any two differ. State crosses the wire as
``jitgrad.save`` bytes (the safe format), never as pickled objects; only ``module_fn``,
``optimizer_fn`` and ``loss_fn`` travel as code, once, when the replicas are built.
"""
from __future__ import annotations

import uuid

import numpy as np

from . import _worker
from ._grad import get_client, tree_reduce

# Shards up to this size travel inside the task (no extra round trip); larger ones are
# scattered to their worker first.
_INLINE_BYTES = 1 << 20


def _to_numpy(a):
    from ..tensor import Tensor

    if isinstance(a, Tensor):
        t = a.detach()
        return np.asarray(t.cpu().numpy() if t.is_cuda else t.numpy())
    return np.asarray(a)


class DataParallel:
    """One model replica per Dask worker, trained in lockstep on shards of every batch.

    Parameters
    ----------
    module_fn : callable
        ``module_fn() -> nn.Module``: builds the architecture (on the client once, for the
        initial state, and on every worker).
    optimizer_fn : callable
        ``optimizer_fn(parameters) -> Optimizer`` (e.g. ``lambda p: optim.SGD(p, lr=0.1)``).
    loss_fn : callable
        ``loss_fn(module, *shard) -> scalar Tensor``: the *mean* loss over the shard's rows.
        Each worker's gradient is weighted by its share of the batch rows, so a step equals
        one single-process step on the whole batch's mean loss, whatever the shard sizes.
    client : distributed.Client, optional
    state_dict : dict, optional
        Initial parameters (default: those of ``module_fn()`` built on the client).
    workers : list of str, optional
        Worker addresses to hold replicas (default: every worker of the client).
    split_every : int
        Fan-in of the gradient reduction tree.
    """

    def __init__(self, module_fn, optimizer_fn, loss_fn, client=None, *, state_dict=None,
                 workers=None, split_every=8):
        self.client = get_client(client)
        self._fns = (module_fn, optimizer_fn, loss_fn)
        self.split_every = max(2, int(split_every))
        self.steps = 0
        self.last_digests: list = []
        model = module_fn()
        if state_dict is not None:
            model.load_state_dict(state_dict)
        self._build(_worker.state_bytes(model.state_dict()), None, workers)

    def _build(self, model_state, optimizer_state, workers):
        self.workers = sorted(workers or _worker_addresses(self.client))
        if not self.workers:
            raise RuntimeError("jitgrad.distributed.DataParallel: the cluster has no workers")
        self.rid = uuid.uuid4().hex[:12]
        module_fn, optimizer_fn, loss_fn = self._fns
        futs = [self.client.submit(_worker.replica_create, self.rid, module_fn, optimizer_fn,
                                   loss_fn, model_state, optimizer_state, workers=[w],
                                   allow_other_workers=False, pure=False,
                                   key=f"jitgrad-replica-{self.rid}-{k}")
                for k, w in enumerate(self.workers)]
        self._check(self._gather(futs), "after building the replicas")

    def _check(self, digests, when):
        self.last_digests = list(digests)
        if len(set(digests)) != 1:
            raise RuntimeError(f"jitgrad.distributed.DataParallel: replicas differ {when} "
                               f"(parameter digests {dict(zip(self.workers, digests))})")

    def _alive(self):
        current = _worker_addresses(self.client)
        gone = [w for w in self.workers if w not in current]
        if gone:
            raise RuntimeError(f"jitgrad.distributed.DataParallel: the replicas on workers "
                               f"{gone} are gone (worker lost); call resync() to rebuild every "
                               "replica from a surviving one")

    def _gather(self, futures):
        """Gather pinned tasks; a task pinned to a worker that left would wait forever, so
        while waiting, check that every replica's worker is still there."""
        from distributed import TimeoutError as WaitTimeout
        from distributed import wait

        while True:
            try:
                wait(futures, timeout=1.0)
                break
            except WaitTimeout:
                self._alive()
        return self.client.gather(futures)

    def _pinned(self, fn, k, *args, key):
        return self.client.submit(fn, self.rid, *args, workers=[self.workers[k]],
                                  allow_other_workers=False, pure=False,
                                  key=f"{key}-{self.rid}-{self.steps}-{k}")

    def step(self, *batch) -> float:
        """One synchronous step on ``batch`` (arrays or Tensors sharing the first axis):
        returns the batch's mean loss (before the step)."""
        arrays = [_to_numpy(a) for a in batch]
        if not arrays:
            raise ValueError("DataParallel.step: pass the batch's arrays")
        n = arrays[0].shape[0] if arrays[0].ndim else None
        if n is None or any(a.ndim == 0 or a.shape[0] != n for a in arrays):
            raise ValueError("DataParallel.step: the batch's arrays must share their first "
                             f"axis, got shapes {[a.shape for a in arrays]}")
        self._alive()
        w = len(self.workers)
        bounds = np.linspace(0, n, w + 1).round().astype(int)
        grads = []
        for k, addr in enumerate(self.workers):
            shard = tuple(a[bounds[k]:bounds[k + 1]] for a in arrays)
            if sum(a.nbytes for a in shard) > _INLINE_BYTES:  # big: straight to its worker
                (shard,) = self.client.scatter([shard], workers=[addr], hash=False)
            weight = (bounds[k + 1] - bounds[k]) / n
            grads.append(self._pinned(_worker.replica_grad, k, weight, shard,
                                      key="jitgrad-dp-grad"))
        total, _ = tree_reduce(self.client, grads, self.split_every,
                                f"dp-{self.rid}-{self.steps}")
        steps = [self._pinned(_worker.replica_step, k, total, key="jitgrad-dp-step")
                 for k in range(w)]
        results = self._gather(steps)
        self.steps += 1
        self._check([d for d, _ in results], f"after step {self.steps}")
        return float(results[0][1])

    def state_dict(self):
        """The model's ``state_dict`` (from replica 0, via jitgrad.save bytes)."""
        model_state, _ = self._state(0)
        return _worker.from_bytes(model_state)

    def optimizer_state_dict(self):
        _, opt_state = self._state(0)
        return _worker.from_bytes(opt_state)

    def module(self):
        """A local module (``module_fn()``) holding the replicas' current parameters."""
        model = self._fns[0]()
        model.load_state_dict(self.state_dict())
        return model

    def _state(self, k):
        fut = self.client.submit(_worker.replica_state, self.rid, workers=[self.workers[k]],
                                 allow_other_workers=False, pure=False)
        return self._gather([fut])[0]

    def resync(self, workers=None):
        """Rebuild every replica (on ``workers``, default the cluster's current ones) from the
        model and optimizer state of a replica that survives."""
        current = _worker_addresses(self.client)
        for k, addr in enumerate(self.workers):
            if addr in current:
                try:
                    state = self._state(k)
                except RuntimeError:
                    continue
                old = self.rid
                self._build(state[0], state[1], workers)
                self._drop(old)
                return self
        raise RuntimeError("jitgrad.distributed.DataParallel.resync: no replica survives; "
                           "build a new DataParallel from a saved state_dict")

    def _drop(self, rid):
        try:
            self.client.run(_worker.replica_drop, rid)
        except Exception:  # noqa: BLE001 - best effort on shutdown
            pass

    def close(self):
        """Drop the replicas from the workers."""
        self._drop(self.rid)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _worker_addresses(client):
    """The addresses of the cluster's current workers, asked of the scheduler on every call.

    Not ``client.scheduler_info()``: that returns the client's cached identity, which the
    client's own periodic refresh (every ``distributed.client.scheduler-info-interval``, and
    without per-worker entries) may overwrite between the refresh the call asked for and the
    read, so on a busy machine it sometimes lists no workers at all."""
    kwargs = {"n_workers": -1} if _takes_n_workers(client) else {}
    return set(client.sync(client.scheduler.identity, **kwargs)["workers"])


def _takes_n_workers(client):
    import inspect

    try:
        return "n_workers" in inspect.signature(client.scheduler_info).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False
