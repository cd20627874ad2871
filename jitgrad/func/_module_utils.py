"""``stack_module_state``, ``functionalize``, ``debug_unwrap`` and
``replace_all_batch_norm_modules_`` (PyTorch's ``torch.func`` helpers)."""
from __future__ import annotations

import functools

from ..graph.grad_mode import no_grad
from ..ops.shape import stack
from . import _batching


def _named(model, kind):
    return list(getattr(model, f"named_{kind}")())


def stack_module_state(models):
    """``(params, buffers)``: each parameter and buffer of the identically structured
    ``models`` stacked along a new leading dim, keyed by name, for model ensembling with
    ``vmap`` + ``functional_call``::

        params, buffers = stack_module_state(models)
        vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, x)

    The stacked parameters are new leaf tensors (detached copies) that require grad where the
    originals do; the buffers never do."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if any(type(m) is not first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    out = []
    for kind in ("parameters", "buffers"):
        names = [n for n, _ in _named(models[0], kind)]
        per_model = [dict(_named(m, kind)) for m in models]
        if any(sorted(d) != sorted(names) for d in per_model):
            raise RuntimeError(f"stack_module_state: Expected all models to have the same "
                               f"{kind} (names {names}).")
        stacked = {}
        for name in names:
            with no_grad():
                value = stack([d[name].detach() for d in per_model])
            if kind == "parameters" and per_model[0][name].requires_grad:
                value.requires_grad_(True)
            stacked[name] = value
        out.append(stacked)
    return out[0], out[1]


def functionalize(func, *, remove="mutations"):
    """``func`` as a function without (observable) mutations, as ``torch.func.functionalize``:
    it computes the same results, and mutations of its inputs are visible afterwards as in
    PyTorch (which copies them back).

    In jitgrad every in-place op is already recorded functionally: the autograd graph saves the
    values an op needs and each tensor's version counter makes a stale read an error, and the
    transforms (``grad``, ``vjp``, ``jvp``, ``vmap``) work on functions that mutate their
    intermediates. So the returned function calls ``func`` unchanged; ``remove`` (``"mutations"``
    or ``"mutations_and_views"``) is checked and accepted."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize: remove must be 'mutations' or "
                           f"'mutations_and_views', got {remove!r}")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)
    return functionalized


def debug_unwrap(tensor, *, recurse=True):
    """The tensor underneath a ``vmap`` ``BatchedTensor`` (its values with the batch as dim 0;
    every level when ``recurse``); any other tensor is returned as is. For debugging only: the
    result is outside the transform."""
    while _batching.is_batched(tensor):
        tensor = _batching.inner(tensor)
        if not recurse:
            break
    return tensor


def _is_batch_norm(module):
    names = {c.__name__ for c in type(module).__mro__}
    return "_BatchNorm" in names and "_InstanceNorm" not in names


def replace_all_batch_norm_modules_(root):
    """In place: every BatchNorm module under ``root`` stops tracking running statistics
    (``running_mean``, ``running_var``, ``num_batches_tracked`` set to None,
    ``track_running_stats=False``), so it always normalizes with the batch's statistics and
    writes no buffers, which ``vmap`` over a model needs. Returns ``root``."""
    for module in root.modules():
        if _is_batch_norm(module):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
