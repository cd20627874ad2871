"""What runs on the Dask workers: one partition's loss and gradient (or Hessian-vector
product), the pairwise sum of partial results, partition metadata, and the model replicas of
``DataParallel``.

Every function here is a plain module-level function, so Dask sends it by reference (a module
and a name) and the worker imports jitgrad itself; only the user's loss function and module
factory travel as code. A partial result is the tuple ``(loss, grads, rows, parts, seconds,
slowest, fastest)``: the partition's loss, its gradient leaves (float ndarrays), its row count,
how many partitions it sums (1 for a partition, more after ``combine``), and compute seconds
(total, slowest and fastest partition), so the client can check that no partition went missing.
"""
from __future__ import annotations

import hashlib
import io
import threading
import time

import numpy as np

from ._tree import tree_unflatten


def _tensor(arr, requires_grad=False, device="cpu"):
    from ..tensor import Tensor

    t = Tensor._make(np.array(arr, copy=True) if requires_grad else np.asarray(arr),
                     requires_grad=requires_grad)
    return t if device == "cpu" else t.to(device)


def _host(t):
    t = t.detach()
    return np.array(t.cpu().numpy() if t.is_cuda else t.numpy(), copy=True)


def _as_parts(parts):
    """A partition passed as one value that holds a tuple of arrays is unpacked."""
    if len(parts) == 1 and isinstance(parts[0], (tuple, list)):
        return tuple(parts[0])
    return tuple(parts)


def check_scalar(value, where):
    from ..tensor import Tensor

    if not isinstance(value, Tensor):
        raise TypeError(f"{where}: loss_fn must return a jitgrad Tensor, got "
                        f"{type(value).__name__}")
    if value.numel() != 1:
        raise ValueError(f"{where}: loss_fn must return a scalar, got shape "
                         f"{tuple(value.shape)} (sum or average it over the partition's rows)")
    return value.reshape(())


def _leaves(params, device):
    return [_tensor(p, requires_grad=True, device=device) for p in params]


def _grads(value, leaves, create_graph=False):
    from .. import autograd

    if not value.requires_grad:  # a loss that does not depend on the parameters
        return [None] * len(leaves)
    return list(autograd.grad(value, leaves, allow_unused=True, create_graph=create_graph))


def _partition_loss(loss_fn, treedef, device, params, parts):
    """``(arrays, leaves, value)``: one partition's arrays, the parameters as leaves that
    require grad on ``device``, and ``loss_fn(params, *partition)`` (call with grad enabled)."""
    arrays = _as_parts(parts)
    leaves = _leaves(params, device)
    value = check_scalar(loss_fn(tree_unflatten(treedef, leaves),
                                 *[_tensor(a, device=device) for a in arrays]),
                         "jitgrad.distributed")
    return arrays, leaves, value


def _result(value, out, arrays, start):
    """The partial result a partition task returns (``combine`` adds them up)."""
    seconds = time.perf_counter() - start
    return float(value.item()), out, int(np.shape(arrays[0])[0]), 1, seconds, seconds, seconds


def partition_value_and_grad(loss_fn, treedef, device, params, *parts):
    """``loss_fn(params, *partition)`` and its gradient for one partition."""
    from ..autograd import enable_grad

    start = time.perf_counter()
    with enable_grad():
        arrays, leaves, value = _partition_loss(loss_fn, treedef, device, params, parts)
        grads = _grads(value, leaves)
    out = [np.zeros(np.shape(p), dtype=np.result_type(np.asarray(p).dtype, np.float64))
           if g is None else _host(g) for p, g in zip(params, grads)]
    return _result(value, out, arrays, start)


def partition_hvp(loss_fn, treedef, device, params, vector, *parts):
    """The Hessian of ``loss_fn(params, *partition)`` times ``vector`` (double backward)."""
    from ..autograd import enable_grad

    start = time.perf_counter()
    with enable_grad():
        arrays, leaves, value = _partition_loss(loss_fn, treedef, device, params, parts)
        grads = _grads(value, leaves, create_graph=True)
        dot = None
        for g, v in zip(grads, vector):
            if g is not None and g.requires_grad:
                term = (g * _tensor(v, device=device)).sum()
                dot = term if dot is None else dot + term
        hv = [None] * len(leaves) if dot is None else _grads(dot, leaves)
    out = [np.zeros(np.shape(p), dtype=np.float64) if h is None else _host(h)
           for p, h in zip(params, hv)]
    return _result(value, out, arrays, start)


def combine(*results):
    """The sum of partial results (one node of the tree reduction)."""
    loss, grads, rows, parts, seconds, slowest, fastest = results[0]
    grads = [np.array(g, copy=True) for g in grads]
    for other in results[1:]:
        loss += other[0]
        for acc, g in zip(grads, other[1]):
            acc += g
        rows += other[2]
        parts += other[3]
        seconds += other[4]
        slowest = max(slowest, other[5])
        fastest = min(fastest, other[6])
    return loss, grads, rows, parts, seconds, slowest, fastest


def describe(*parts):
    """``[(shape, dtype string), ...]`` of one partition's arrays."""
    return [(tuple(int(n) for n in np.shape(a)), str(np.asarray(a).dtype))
            for a in _as_parts(parts)]


def frame_to_numpy(frame):
    """A pandas DataFrame partition as a 2-D array (a Series as 1-D)."""
    arr = frame.to_numpy()
    if arr.dtype == object:
        raise TypeError("jitgrad.distributed: a dataframe partition has non-numeric columns "
                        f"({dict(frame.dtypes.astype(str)) if hasattr(frame, 'columns') else frame.dtype}); "
                        "select numeric columns first")
    return arr


def has_device(device):
    """Whether this worker can hold tensors on ``device`` (client.run target)."""
    if str(device).startswith("cuda"):
        from .. import cuda

        return bool(cuda.is_available())
    return True


def warm(loss_fn, treedef, params, probe):
    """Run ``loss_fn`` forward and backward once on a small probe partition so its kernels are
    compiled (or loaded from the on-disk cache) before the first real call."""
    start = time.perf_counter()
    if loss_fn is None:
        from .. import autograd
        from ..autograd import enable_grad

        with enable_grad():
            w = _tensor(np.linspace(-1.0, 1.0, 4), requires_grad=True)
            x = _tensor(np.linspace(0.0, 1.0, 32).reshape(8, 4))
            eta = x @ w
            value = (eta.exp().log1p() - eta * 0.5).sum() + (w * w).sum()
            autograd.grad(value, [w])
    else:
        partition_value_and_grad(loss_fn, treedef, "cpu", params, *probe)
    return time.perf_counter() - start


# --- DataParallel replicas ------------------------------------------------------------------

_REPLICAS: dict = {}
_LOCK = threading.Lock()


class _Replica:
    def __init__(self, module, optimizer, loss_fn):
        self.module, self.optimizer, self.loss_fn = module, optimizer, loss_fn
        self.lock = threading.Lock()


def state_bytes(obj) -> bytes:
    from ..serialization import save

    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def from_bytes(data: bytes):
    from ..serialization import load

    return load(io.BytesIO(data))


def param_digest(module) -> str:
    digest = hashlib.sha256()
    for name, p in module.named_parameters():
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(_host(p)).tobytes())
    return digest.hexdigest()


def replica_create(rid, module_fn, optimizer_fn, loss_fn, model_state, optimizer_state=None):
    """Build this worker's replica: the architecture from ``module_fn()``, its values from
    ``model_state`` (jitgrad.save bytes), so every replica starts from the same parameters
    whatever the worker's random state."""
    module = module_fn()
    module.load_state_dict(from_bytes(model_state))
    optimizer = optimizer_fn(module.parameters())
    if optimizer_state is not None:
        optimizer.load_state_dict(from_bytes(optimizer_state))
    with _LOCK:
        _REPLICAS[rid] = _Replica(module, optimizer, loss_fn)
    return param_digest(module)


def _replica(rid):
    try:
        return _REPLICAS[rid]
    except KeyError:
        raise RuntimeError(f"jitgrad.distributed.DataParallel: replica {rid} is not on this "
                           "worker (was the worker restarted?); call DataParallel.resync()") from None


def replica_grad(rid, weight, *shard):
    """Forward and backward of this worker's shard; the gradient leaves are scaled by
    ``weight`` (shard rows / batch rows) so the tree sum is the whole batch's mean gradient."""
    from ..autograd import enable_grad

    rep = _replica(rid)
    start = time.perf_counter()
    with rep.lock:
        params = list(rep.module.parameters())
        arrays = _as_parts(shard)
        rows = int(np.shape(arrays[0])[0])
        if rows == 0:
            out = [np.zeros(tuple(p.shape), dtype=_host(p).dtype) for p in params]
            return 0.0, out, 0, 1, 0.0, 0.0, 0.0
        rep.module.train()
        with enable_grad():
            value = check_scalar(rep.loss_fn(rep.module, *[_tensor(a) for a in arrays]),
                            "jitgrad.distributed.DataParallel")
            grads = _grads(value, params)
        out = [np.zeros(tuple(p.shape)) if g is None else _host(g) * weight
               for p, g in zip(params, grads)]
    seconds = time.perf_counter() - start
    return float(value.item()) * weight, out, rows, 1, seconds, seconds, seconds


def replica_step(rid, total):
    """Set every parameter's gradient to the all-reduced one and take the optimizer step;
    returns the parameter digest (replicas must agree) and the batch loss."""
    from ..tensor import Tensor

    rep = _replica(rid)
    loss, grads = total[0], total[1]
    with rep.lock:
        params = list(rep.module.parameters())
        for p, g in zip(params, grads):
            p.grad = Tensor._make(np.array(g, dtype=p._data.dtype, copy=True)).to(p.device)
        rep.optimizer.step()
        rep.optimizer.zero_grad()
        return param_digest(rep.module), loss


def replica_state(rid):
    """The replica's model and optimizer state as jitgrad.save bytes."""
    rep = _replica(rid)
    with rep.lock:
        return (state_bytes(rep.module.state_dict()),
                state_bytes(rep.optimizer.state_dict()))


def replica_drop(rid):
    with _LOCK:
        return _REPLICAS.pop(rid, None) is not None
