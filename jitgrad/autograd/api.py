"""``backward`` and ``grad``: the entry points into the engine, with PyTorch's checks."""
from __future__ import annotations

import warnings

import numpy as np

from .. import engine
from . import forward_ad, transforms
from ..graph.grad_mode import set_grad_enabled
from ..graph.node import grad_lock


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


_dispatch = None  # ops.dispatch, imported on first use (autograd sits below ops)


def _ops_dispatch():
    """``jitgrad.ops.core.dispatch``, imported once (an import statement per ``backward()`` call
    showed in its fixed cost)."""
    global _dispatch
    if _dispatch is None:
        from ..ops.core import dispatch

        _dispatch = dispatch
    return _dispatch


def _tensor_type():
    return _ops_dispatch().Tensor


def _implicit_grad(o):
    """``ones_like(o)``: the gradient ``backward()`` seeds a scalar output with; a CPU one
    made at once (what ``ones_like`` gives: a fresh filled array of ``o``'s dtype)."""
    data = o._data  # device read: its type, shape and dtype only
    if type(data) is np.ndarray and not transforms.tracing():  # (a trace's seed: a constant)
        g = np.empty(data.shape, data.dtype)
        g.fill(1)
        return _tensor_type()._make(g)
    from ..ops.creation import ones_like

    return ones_like(o)


def _make_grads(outputs, grad_outputs, create_graph):
    Tensor = _tensor_type()
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs: got "
                           f"{len(grads)} gradients for {len(outputs)} outputs")
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if not o.requires_grad:
                out.append(None)  # _root_edges raises PyTorch's "does not require grad" error
                continue
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {o.dtype}")
            g = _implicit_grad(o)
        else:
            if not isinstance(g, Tensor):
                from ..ops.creation import tensor

                g = tensor(g, dtype=o.dtype)
            if g.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{list(g.shape)} and output[{i}] has a shape of {list(o.shape)}.")
            if g.dtype is not o.dtype:  # as PyTorch: the backward runs in the output's dtype
                check_complex_match(g.dtype, o.dtype, i)
                g = g._cast(o.dtype)
            if not create_graph:
                g = _detach(g)
        out.append(g)
    return out


def check_complex_match(g_dtype, o_dtype, i) -> None:
    """PyTorch's rule: a cotangent and its output are both complex or both real (a cast
    between them would drop the imaginary part, or invent one: a wrong gradient)."""
    if g_dtype.is_complex != o_dtype.is_complex:
        raise RuntimeError(f"For complex Tensors, both grad_output and output are required to "
                           f"have the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype "
                           f"of jitgrad.{g_dtype.name} and output[{i}] has a dtype of "
                           f"jitgrad.{o_dtype.name}.")


def _detach(g):
    """``g`` off the reverse graph; inside a dual level with its tangents (Note [backward
    inside a dual level] in forward_ad.py)."""
    return forward_ad.detach_keep_tangents(g) if forward_ad._has_levels() else g.detach()


def _root_edges(outputs):
    gradient_edge = _ops_dispatch().gradient_edge
    edges = []
    for i, o in enumerate(outputs):
        if o.grad_fn is None and not o.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                               "grad_fn")
        edges.append(gradient_edge(o))
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves.

    ``grad_tensors`` is needed for non-scalar outputs; the graph is freed unless ``retain_graph``
    (default: ``create_graph``); ``create_graph`` records the backward itself for higher-order
    derivatives; ``inputs`` restricts accumulation to those tensors (leaves or not).
    ``grad_variables``: PyTorch's deprecated name of ``grad_tensors`` (a warning).
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    if not tensors:
        raise RuntimeError("backward: no tensors given")
    if retain_graph is None:
        retain_graph = create_graph
    if transforms.tracing():  # Note [backward under compile] (jitgrad/compile/mutations.py)
        if create_graph:  # a .grad with history: the trace refuses it (as a read in Python)
            _ops_dispatch().upper.host_read(tensors[0], "backward(create_graph=True)")
        create_graph = True
    grads = _make_grads(tensors, grad_tensors, create_graph)
    edges = _root_edges(tensors)
    if inputs is None:
        engine.execute(edges, grads, retain_graph, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    from ..ops.core.dispatch import gradient_edge

    for t in inputs:
        if not t.requires_grad:  # PyTorch retains grad on each input, hence its wording
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    captured = engine.execute(edges, grads, retain_graph, create_graph,
                              capture_edges=[gradient_edge(t) for t in inputs], accumulate=True)
    with set_grad_enabled(create_graph):
        for t, g in zip(inputs, captured):
            if t.grad_fn is not None and g is not None:  # non-leaf inputs accumulate like leaves
                with grad_lock(t):
                    t._accumulate_grad(g)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) (vector-Jacobian products with ``grad_outputs``) without
    touching ``.grad``. ``allow_unused`` permits inputs the outputs do not depend on (None, or
    zeros with ``materialize_grads``). ``is_grads_batched``: each of ``grad_outputs`` has a
    leading batch dim; the result is every batch element's vector-Jacobian product, stacked
    (each gradient with that leading dim). ``only_inputs``: deprecated and ignored, as in
    PyTorch (a warning when False)."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "jitgrad.autograd.backward.", FutureWarning, stacklevel=2)
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs, create_graph)
    edges = _root_edges(outputs)
    gradient_edge = _ops_dispatch().gradient_edge
    captured = engine.execute(edges, grads, retain_graph, create_graph,
                              capture_edges=[gradient_edge(t) for t in inputs], accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize_grads:
                from ..ops.creation import zeros_like

                g = zeros_like(t)
        elif not create_graph:
            g = _detach(g)
        result.append(g)
    return tuple(result)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``grad(..., is_grads_batched=True)``: one backward per batch element of the
    ``grad_outputs`` (the graph kept for all but the last), the gradients stacked. PyTorch
    runs it under vmap; the values are the same, and with ``create_graph`` the stack is
    recorded too, so the result can be differentiated again."""
    from ..ops.shape import stack

    Tensor = _tensor_type()
    outputs = _as_tuple(outputs)
    cotangents = _as_tuple(grad_outputs)
    if (len(cotangents) != len(outputs)
            or not all(isinstance(g, Tensor) and g.ndim >= 1 for g in cotangents)):
        raise RuntimeError("grad(is_grads_batched=True): grad_outputs must hold one Tensor per "
                           f"output ({len(outputs)}), each with a leading batch dimension; got "
                           f"{[type(g).__name__ for g in cotangents]}")
    sizes = sorted({g.shape[0] for g in cotangents})
    if len(sizes) != 1 or sizes[0] == 0:
        raise RuntimeError("grad(is_grads_batched=True): every grad_output needs the same "
                           f"non-zero batch size (dim 0); got batch sizes {sizes}")
    batch = sizes[0]
    if retain_graph is None:
        retain_graph = create_graph
    per_element = [grad(outputs, inputs, [g[b] for g in cotangents],
                        retain_graph=retain_graph if b == batch - 1 else True,
                        create_graph=create_graph, allow_unused=allow_unused,
                        materialize_grads=materialize_grads)
                   for b in range(batch)]
    return tuple(None if column[0] is None else stack(list(column))
                 for column in zip(*per_element))
