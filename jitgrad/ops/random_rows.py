"""Random draws as rows: a mask or samples shaped like a tensor, drawn from the default
generator (the one ``jitgrad.manual_seed`` seeds) by the row's forward. ``rand``, ``randn``
and the distributions' reparameterised samples draw through ``samples`` (the row on a
template of the shape).

As rows, the draws are recorded by ``jitgrad.compile`` like any op, and a compiled program
draws at each call, in the order eager draws (Note [random rows] in ``compile/trace.py``): a
compiled training step with dropout gives eager's results under the same seed. The inputs
give only the shape and dtype; no gradient flows through a draw.
"""
from __future__ import annotations

import numpy as np

from ..graph.grad_mode import no_grad
from .core import dispatch
from .core.registry import def_composite
from . import creation


def _draws():
    # (no ``upper.random_hook`` here: the trace records this row; other draws break it)
    return creation.default_generator.numpy_generator()


def _dropout_mask_fwd(ctx, x, p, shape):
    """``m = 1[u >= p] / (1 - p)`` with ``u ~ U[0, 1)`` of ``shape``, in ``x``'s dtype
    (``m = 0`` everywhere when ``p = 1``): the mask dropout multiplies by."""
    keep = _draws().random(shape) >= p
    return (keep * (0.0 if p == 1 else 1.0 / (1.0 - p))).astype(x.dtype)


def _random_like_fwd(ctx, x, kind, dtype):
    """Samples of ``x``'s shape: ``u ~ U[0, 1)`` (``kind="uniform"``) or ``z ~ N(0, 1)``
    (``"normal"``), drawn in float64 and cast to ``dtype``."""
    draws = _draws()
    samples = draws.random(x.shape) if kind == "uniform" else draws.standard_normal(x.shape)
    return samples.astype(dtype)


def _no_backward(ctx, g):
    raise AssertionError("a random draw has no differentiable input")


def _no_tangent(tangents, primals, outs, **attrs):
    """Forward mode: a draw is a constant of the graph (no tangent)."""
    return None


def _same_for_every_example(name):
    """The vmap rule of a draw: one example's draw, the same for every example (vmap's
    documented randomness: a random tensor made inside the function is shared)."""
    def rule(args, batched, **attrs):
        (x,) = args  # (batch, *example)
        draw = dispatch.composite(ROWS[name], x[0], **attrs)
        return draw.unsqueeze(0).expand((x.shape[0],) + tuple(draw.shape))
    return rule


DROPOUT_MASK = def_composite("dropout_mask", "DropoutMaskBackward", ("x",), _dropout_mask_fwd,
                             _no_backward, attrs=("p", "shape"), no_grad=("x",), random=True,
                             jvp=_no_tangent,
                             batch_rule=_same_for_every_example("dropout_mask"))
RANDOM_LIKE = def_composite("random_like", "RandomLikeBackward", ("x",), _random_like_fwd,
                            _no_backward, attrs=("kind", "dtype"), no_grad=("x",), random=True,
                            jvp=_no_tangent, batch_rule=_same_for_every_example("random_like"))
ROWS = {"dropout_mask": DROPOUT_MASK, "random_like": RANDOM_LIKE}


def dropout_mask(x, p: float, shape=None):
    """Dropout's mask (``_dropout_mask_fwd``) for the CPU tensor ``x``, of ``shape`` (x's by
    default; a feature dropout's has ones in the dims it broadcasts over)."""
    with no_grad():  # (a constant of the graph: the mask of ``MulBackward0``, as PyTorch's)
        return dispatch.composite(DROPOUT_MASK, x, p=float(p),
                                  shape=tuple(x.shape) if shape is None else tuple(shape))


def random_like(x, kind: str, dtype):
    """Uniform or normal samples shaped like the CPU tensor ``x`` (``_random_like_fwd``)."""
    with no_grad():
        return dispatch.composite(RANDOM_LIKE, x, kind=kind, dtype=np.dtype(dtype).name)


def samples(shape, kind: str, dtype):
    """Uniform (``kind="uniform"``) or standard normal samples of ``shape`` in the float
    ``dtype``, on the CPU: ``random_like`` of a template of that shape (the same numbers as
    ``generator.random(shape).astype(dtype)`` or ``standard_normal``)."""
    return random_like(creation.template(shape, dtype), kind, dtype)
