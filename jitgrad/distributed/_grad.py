"""``value_and_grad``, ``hvp``, ``persist``, ``minimize`` and ``warmup`` over Dask partitions.

Note [partitioned gradient]: for ``L(θ) = Σ_p ℓ(θ; D_p)`` the gradient is ``Σ_p ∇ℓ(θ; D_p)``
(and the Hessian-vector product ``Σ_p ∇²ℓ(θ; D_p) v``), so each partition's term is computed by
jitgrad on the worker that holds ``D_p`` and only the gradient-sized partial sums travel: the
parameters are scattered once per call to every worker (``broadcast=True``), one task per
partition returns ``(ℓ_p, ∇ℓ_p, rows_p, 1, ...)``, and ``combine`` tasks add them in a tree of
fan-in ``split_every`` on the cluster; the client gathers the root only. The root carries the
number of partitions and rows it summed, and the call checks both against the partitions it
sent, so a lost partition can never shrink the sum unnoticed.
"""
from __future__ import annotations

import functools
import time
import uuid
from collections import namedtuple

import numpy as np

from . import _partitions, _worker
from ._tree import tree_devices, tree_flatten, tree_unflatten

__all__ = ["PartitionError", "CallStats", "value_and_grad", "hvp", "persist", "minimize",
           "warmup"]

CallStats = namedtuple("CallStats", "partitions rows params_bytes result_bytes "
                                    "compute_seconds slowest_partition_seconds "
                                    "fastest_partition_seconds wall_seconds")
CallStats.__doc__ = """What one distributed call moved and spent: ``params_bytes`` sent to each
worker once, ``result_bytes`` per partial result (one per partition and per tree node),
compute seconds summed over partitions and for the slowest and fastest one, and the call's wall
time."""


class PartitionError(RuntimeError):
    """A partition's task failed for good (its loss raised, or the workers running it died more
    often than ``distributed.scheduler.allowed-failures`` allows, or its data was lost).
    ``partitions`` lists the failed partition indices; ``__cause__`` is Dask's error."""

    def __init__(self, message, partitions):
        super().__init__(message)
        self.partitions = list(partitions)


def get_client(client):
    if client is not None:
        return client
    try:
        from distributed import default_client

        return default_client()
    except ValueError:
        raise ValueError("jitgrad.distributed: no Dask client; pass client= or start one "
                         "(distributed.Client(...)) first") from None


def _check_reduce(reduce):
    if reduce not in ("sum", "mean"):
        raise ValueError(f"jitgrad.distributed: reduce must be 'sum' or 'mean', got {reduce!r}")


def _device(treedef, device):
    devices = tree_devices(treedef) - {"cpu"}
    if device is None:
        if len(devices) > 1:
            raise ValueError(f"jitgrad.distributed: parameters on several devices {sorted(devices)}")
        device = devices.pop() if devices else "cpu"
    return str(device)


def _check_workers_device(client, device):
    if device == "cpu":
        return
    found = client.run(_worker.has_device, device)
    lacking = sorted(addr for addr, ok in found.items() if not ok)
    if lacking:
        raise ValueError(f"jitgrad.distributed: the parameters are on {device} but workers "
                         f"{lacking} have no CUDA device (jitgrad.cuda.is_available() is False "
                         "there); move the parameters to the CPU (or pass device='cpu'), or run "
                         "the workers where the GPU is")


def _probe(loss_fn, params, treedef, meta, what):
    """Run ``loss_fn`` here on a zero partition of two rows: a wrong return (not a Tensor, not
    a scalar) is reported before any work is sent."""
    from ..autograd import enable_grad
    from ..tensor import Tensor

    arrays = [Tensor._make(a) for a in _partitions.probe_arrays(meta)]
    leaves = [Tensor._make(np.array(p, copy=True), requires_grad=True) for p in params]
    try:
        with enable_grad():
            value = loss_fn(tree_unflatten(treedef, leaves), *arrays)
    except Exception as err:  # noqa: BLE001 - reported with the probe's shapes
        shapes = ", ".join(f"{tuple(a.shape)} {a.dtype}" for a in arrays)
        raise ValueError(f"{what}: loss_fn failed on a probe partition of two rows of zeros "
                         f"({shapes}): {type(err).__name__}: {err}. Fix loss_fn, or pass "
                         "check=False to skip this check") from err
    _worker.check_scalar(value, what)


def tree_reduce(client, results, split_every, token):
    level, depth, nodes = list(results), 0, []
    while len(level) > 1:
        nxt = []
        for j in range(0, len(level), split_every):
            group = level[j:j + split_every]
            if len(group) == 1:
                nxt.append(group[0])
                continue
            fut = client.submit(_worker.combine, *group, key=f"jitgrad-sum-{token}-{depth}-{j}",
                                pure=False)
            nxt.append(fut)
            nodes.append(fut)
        level, depth = nxt, depth + 1
    return level[0], nodes


def _raise_partition_error(err, part_futs, what):
    """Name the partitions that failed: those whose task raised (or ran out of worker deaths,
    KilledWorker) first, with their error as the cause; then those cancelled because data they
    needed was lost with every worker that held it."""
    errored = [i for i, f in enumerate(part_futs) if f.status == "error"]
    cancelled = [i for i, f in enumerate(part_futs) if f.status in ("lost", "cancelled")]
    if not errored and not cancelled:
        raise RuntimeError(f"{what}: the tree reduction failed: {type(err).__name__}: "
                           f"{err}") from err
    cause = None
    if errored:
        try:
            cause = part_futs[errored[0]].exception()
        except Exception:  # noqa: BLE001 - the exception itself may not come back
            cause = None
    cause = cause if cause is not None else err

    def names(idx):
        return ", ".join(map(str, idx[:10])) + (" ..." if len(idx) > 10 else "")

    if errored:
        msg = (f"{what}: partition {names(errored)} (of {len(part_futs)}) failed: "
               f"{type(cause).__name__}: {cause}")
        if cancelled:
            msg += f"; partition {names(cancelled)} cancelled with it"
    else:
        msg = (f"{what}: partition {names(cancelled)} (of {len(part_futs)}) failed: its task "
               "was cancelled because data it needs (the parameters or the partition) was lost "
               f"with every worker that held it ({type(err).__name__}: {err}); call again")
    raise PartitionError(msg, errored + cancelled) from cause


def _submit(client, kernel, data, param_leaves, extra, split_every, retries, what):
    """The parameters scattered, one task per partition and the tree reduction over them:
    ``(partition futures, root future, reduction futures)``."""
    token = uuid.uuid4().hex[:10]
    (params_f,) = client.scatter([param_leaves], broadcast=True, hash=False)
    extra_f = ()
    if extra is not None:
        (vec_f,) = client.scatter([extra], broadcast=True, hash=False)
        extra_f = (vec_f,)
    n = len(data.futures)
    columns = list(zip(*data.futures))
    part_futs = client.map(kernel, *([[params_f] * n] + [[e] * n for e in extra_f] + columns),
                           key=[f"jitgrad-{what.rsplit('.', 1)[-1]}-{token}-p{i}"
                                for i in range(n)],
                           retries=retries, pure=False)
    root, nodes = tree_reduce(client, part_futs, max(2, int(split_every)), token)
    return part_futs, root, nodes


def _run(client, kernel, data, param_leaves, extra, *, split_every, retries, progress, what):
    """Scatter the parameters, one task per partition, tree-reduce, gather the root. A call
    whose tasks were cancelled only because data they need was lost with the workers that held
    it (the parameters, scattered to workers one of which then died) runs once more, from a
    fresh scatter; any other failure, or a second loss, raises ``PartitionError``."""
    start = time.perf_counter()
    n = len(data.futures)
    for attempt in (1, 2):
        part_futs, root, nodes = _submit(client, kernel, data, param_leaves, extra, split_every,
                                         retries, what)
        if progress:
            from distributed import progress as show_progress

            show_progress(part_futs + nodes, notebook=False)
        try:
            loss, grads, rows, parts, seconds, slowest, fastest = root.result()
            break
        except Exception as err:  # noqa: BLE001 - Dask raises the failed task's own error
            lost_only = (not any(f.status == "error" for f in part_futs)
                         and any(f.status in ("lost", "cancelled") for f in part_futs))
            if attempt == 2 or not lost_only:
                _raise_partition_error(err, part_futs, what)
    if parts != n or rows != data.nrows:  # Note [partitioned gradient]: nothing dropped
        raise RuntimeError(f"{what}: the reduction summed {parts} of {n} partitions "
                           f"({rows} of {data.nrows} rows); refusing a partial result")
    params_bytes = int(sum(np.asarray(p).nbytes for p in param_leaves))
    stats = CallStats(n, rows, params_bytes, int(sum(g.nbytes for g in grads)) + 48,
                      seconds, slowest, fastest, time.perf_counter() - start)
    return loss, grads, stats


def persist(partitions, client=None, *, loss_fn=None, params=None):
    """Put the partitions in the workers' memory once and return :class:`Partitions`.

    Later calls that take it send no data. With ``loss_fn`` and ``params`` the loss is first
    checked locally on a probe partition (as :func:`value_and_grad` does)."""
    client = get_client(client)
    plan = _partitions.plan(partitions)
    if loss_fn is not None and plan.meta is not None:
        leaves, treedef = tree_flatten(params)
        _probe(loss_fn, leaves, treedef, plan.meta, "jitgrad.distributed.persist")
    data = _partitions.materialize(client, plan)
    if loss_fn is not None and plan.meta is None:
        leaves, treedef = tree_flatten(params)
        _probe(loss_fn, leaves, treedef, data.meta, "jitgrad.distributed.persist")
    return data


def _prepare(loss_fn, params, partitions, client, reduce, device, check, what):
    _check_reduce(reduce)
    client = get_client(client)
    leaves, treedef = tree_flatten(params)
    device = _device(treedef, device)
    plan = _partitions.plan(partitions)  # form and known shapes: nothing sent yet
    _check_workers_device(client, device)
    if check and plan.meta is not None:
        _probe(loss_fn, leaves, treedef, plan.meta, what)
    data = _partitions.materialize(client, plan)
    if check and plan.meta is None:
        _probe(loss_fn, leaves, treedef, data.meta, what)
    return client, leaves, treedef, device, data


def value_and_grad(loss_fn, params, partitions, client=None, *, reduce="sum", device=None,
                   split_every=8, retries=0, progress=False, check=True, return_stats=False):
    """The value and gradient of ``Σ_p loss_fn(params, *partition_p)`` over Dask partitions.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(params, *partition) -> scalar Tensor``, an ordinary jitgrad function of one
        partition (its arrays arrive as Tensors). For ``reduce="mean"`` it should return the
        partition's *sum* over rows: the total is divided by the number of rows of all
        partitions, which is exact for partitions of unequal size.
    params : Tensor, ndarray, or dict / list / tuple of them
        Sent once per call to every worker (broadcast).
    partitions : dask array (or tuple of them), dask DataFrame / Series (or tuple), list of
        Futures / Delayed, or :class:`Partitions`
        See ``jitgrad.distributed._partitions`` for how each becomes partitions.
    client : distributed.Client, optional
        Default: the current client (``distributed.default_client()``).
    reduce : "sum" or "mean"
    device : str, optional
        Where the workers compute; default the parameters' device. A CUDA device every worker
        must have (checked first).
    split_every : int
        Fan-in of the tree reduction on the cluster.
    retries : int
        Dask retries of a partition task that raised (a worker that dies is handled by the
        scheduler's ``allowed-failures`` instead).
    progress : bool
        Show distributed's progress bar of the partition and reduction tasks.
    check : bool
        Run ``loss_fn`` locally on a two-row zero partition first (clear errors early).
    return_stats : bool
        Also return a :class:`CallStats`.

    Returns
    -------
    (value, grads) or (value, grads, stats)
        ``value`` a float; ``grads`` shaped like ``params`` (Tensor leaves as Tensors on their
        device, ndarray leaves as ndarrays).

    Raises
    ------
    PartitionError
        A partition failed for good (named by index); nothing is ever summed without it.
    ValueError, TypeError
        Bad input, before any work is sent: partitions of mismatched shapes, a loss that does
        not return a scalar Tensor, parameters on a device the workers lack.
    """
    what = "jitgrad.distributed.value_and_grad"
    client, leaves, treedef, device, data = _prepare(loss_fn, params, partitions, client,
                                                     reduce, device, check, what)
    kernel = functools.partial(_worker.partition_value_and_grad, loss_fn, treedef, device)
    loss, grads, stats = _run(client, kernel, data, leaves, None, split_every=split_every,
                              retries=retries, progress=progress, what=what)
    if reduce == "mean":
        loss, grads = loss / data.nrows, [g / data.nrows for g in grads]
    out = tree_unflatten(treedef, grads, as_given=True)
    return (loss, out, stats) if return_stats else (loss, out)


def hvp(loss_fn, params, vector, partitions, client=None, *, reduce="sum", device=None,
        split_every=8, retries=0, progress=False, check=True):
    """The Hessian-vector product ``Σ_p ∇²loss_fn(params, *partition_p) · vector`` (double
    backward on each worker, tree-reduced as :func:`value_and_grad`). ``vector`` is shaped
    like ``params``; the result too."""
    what = "jitgrad.distributed.hvp"
    client, leaves, treedef, device, data = _prepare(loss_fn, params, partitions, client,
                                                     reduce, device, check, what)
    vec_leaves, vec_def = tree_flatten(vector)
    if [np.shape(v) for v in vec_leaves] != [np.shape(p) for p in leaves]:
        raise ValueError(f"{what}: vector shapes {[np.shape(v) for v in vec_leaves]} differ "
                         f"from the parameters' {[np.shape(p) for p in leaves]}")
    kernel = functools.partial(_worker.partition_hvp, loss_fn, treedef, device)
    _, hv, _ = _run(client, kernel, data, leaves, vec_leaves, split_every=split_every,
                    retries=retries, progress=progress, what=what)
    if reduce == "mean":
        hv = [h / data.nrows for h in hv]
    return tree_unflatten(treedef, hv, as_given=True)


def minimize(loss_fn, x0, partitions, client=None, *, reduce="sum", method="L-BFGS-B",
             bounds=None, constraints=(), tol=None, callback=None, options=None, device=None,
             split_every=8, retries=0, progress=False, check=True):
    """Minimise ``Σ_p loss_fn(x, *partition_p)`` with ``jitgrad.scipy.optimize.minimize``.

    The partitions are persisted on the workers once; each point the optimiser asks for costs
    one distributed :func:`value_and_grad` (the parameters go out, one gradient-sized result
    per tree node comes back). Second-order methods (``trust-constr``, ``Newton-CG``,
    ``trust-ncg``, ``trust-krylov``) get exact distributed Hessian-vector products.
    ``x0`` is an array of any shape; the result is SciPy's ``OptimizeResult`` with
    ``x`` of that shape, plus ``ncalls`` (distributed calls made) and ``stats`` (the last
    call's :class:`CallStats`).
    """
    from ..autograd import Function
    from ..scipy import optimize as jitgrad_optimize
    from ..tensor import Tensor

    what = "jitgrad.distributed.minimize"
    _check_reduce(reduce)
    client = get_client(client)
    x0 = np.asarray(x0._host(what) if isinstance(x0, Tensor) else x0, dtype=np.float64)
    shape = x0.shape
    plan = _partitions.plan(partitions)
    _check_workers_device(client, _device(tree_flatten(x0)[1], device))
    if check and plan.meta is not None:
        _probe(loss_fn, [x0], tree_flatten(x0)[1], plan.meta, what)
    data = _partitions.materialize(client, plan)  # persisted once for every iteration
    if check and plan.meta is None:
        _probe(loss_fn, [x0], tree_flatten(x0)[1], data.meta, what)
    record = {"ncalls": 0, "stats": None}
    common = dict(reduce=reduce, device=device, split_every=split_every, retries=retries,
                  progress=progress, check=False)

    class DistributedObjective(Function):
        """The partitioned loss as one node: forward runs the distributed call, backward hands
        back its gradient (so jitgrad's minimize takes value and gradient from one call)."""

        @staticmethod
        def forward(ctx, x):
            value, grad, stats = value_and_grad(loss_fn, np.array(x._host(what)), data, client,
                                                return_stats=True, **common)
            record["ncalls"] += 1
            record["stats"] = stats
            ctx.grad = grad
            return Tensor._make(np.array(value))

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * Tensor._make(ctx.grad)

    def objective(x):
        return DistributedObjective.apply(x)

    def exact_hessp(x, p):
        hv = hvp(loss_fn, np.asarray(x, dtype=np.float64).reshape(shape),
                 np.asarray(p, dtype=np.float64).reshape(shape), data,
                 client, **common)
        return np.asarray(hv).reshape(-1)

    kwargs = {}
    if (method or "").lower() in ("trust-constr", "newton-cg", "trust-ncg", "trust-krylov"):
        kwargs["hessp"] = exact_hessp
    res = jitgrad_optimize.minimize(objective, x0, method=method, bounds=bounds,
                                    constraints=constraints, tol=tol, callback=callback,
                                    options=options, **kwargs)
    res.ncalls, res.stats = record["ncalls"], record["stats"]
    return res


def warmup(client=None, loss_fn=None, params=None, partition=None):
    """Compile jitgrad's kernels on every worker before the first real call.

    Each worker process compiles on first use (or loads the kernels from the on-disk cache,
    ``JITGRAD_CACHE_DIR``, when it is on a filesystem the workers share). With ``loss_fn``,
    ``params`` and ``partition`` (a small tuple of local arrays, a few rows) every worker runs
    that loss forward and backward once, which compiles exactly the kernels it uses; without
    them, a small generic forward/backward. Returns ``{worker address: seconds}``.
    """
    client = get_client(client)
    if loss_fn is None:
        return client.run(_worker.warm, None, None, None, None)
    leaves, treedef = tree_flatten(params)
    probe = tuple(np.asarray(a) for a in (partition if isinstance(partition, (tuple, list))
                                         else (partition,)))
    return client.run(_worker.warm, loss_fn, treedef, leaves, probe)
