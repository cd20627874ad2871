"""The N-d convolution row behind ``jitgrad.scipy.signal`` (``convolve``, ``correlate``,
``convolve2d``, ``correlate2d``, ``fftconvolve``), and the zero-embedding row its backward uses.

``y = convolve(x, w, mode)`` is a slice of the full convolution
``y_full[n] = sum_k x[k] w[n - k]`` (shape ``Nx + Nw - 1`` per axis), starting at
``(full - out) // 2`` per axis (SciPy's centring for ``'same'`` and ``'valid'``). With
``G`` the incoming gradient zero-embedded at that offset into the full shape::

    dL/dx = convolve(G, flip(w), 'valid')      (shape Nx)
    dL/dw = convolve(G, flip(x), 'valid')      (shape Nw)

Both are this row again (with ``flip`` and ``embed``), so derivatives of every order work.
The forward is ``scipy.signal.convolve`` (``method`` ``'auto'``, ``'direct'`` or ``'fft'``).
"""
from __future__ import annotations

import numpy as np

from .core import dispatch
from .core.registry import def_composite


def _offsets(full, out):
    return tuple((f - o) // 2 for f, o in zip(full, out))


def _convolve_fwd(ctx, x, w, mode, method):
    import scipy.signal

    out = np.asarray(scipy.signal.convolve(x, w, mode=mode, method=method))
    return out.astype(np.result_type(x, w), copy=False)


def _convolve_back(ctx, g, x, w):
    from .npfuncs import flip

    full = tuple(a + b - 1 for a, b in zip(x.shape, w.shape))
    if tuple(g.shape) != full:
        g = embed(g, full, _offsets(full, g.shape))
    gx = convolve(g, flip(w), "valid", ctx.method) if ctx.needs_input_grad[0] else None
    gw = convolve(g, flip(x), "valid", ctx.method) if ctx.needs_input_grad[1] else None
    return gx, gw


def _convolve_jvp(tangents, primals, outs, mode, method):
    (tx, tw), (x, w) = tangents, primals  # bilinear: d(x * w) = dx * w + x * dw
    terms = [convolve(tx, w, mode, method) if tx is not None else None,
             convolve(x, tw, mode, method) if tw is not None else None]
    terms = [t for t in terms if t is not None]
    return terms[0] if len(terms) == 1 else terms[0] + terms[1]


CONVOLVE = def_composite("scipy_convolve", "ConvolveBackward0", ("x", "w"), _convolve_fwd,
                         _convolve_back, attrs=("mode", "method"), save=("x", "w"),
                         jvp=_convolve_jvp)


def _embed_fwd(ctx, g, shape, start, in_shape):
    out = np.zeros(shape, dtype=g.dtype)
    out[tuple(slice(s, s + n) for s, n in zip(start, g.shape))] = g
    return out


def _embed_back(ctx, gg):
    return (gg[tuple(slice(s, s + n) for s, n in zip(ctx.start, ctx.in_shape))],)


EMBED = def_composite("scipy_embed", "EmbedBackward0", ("g",), _embed_fwd, _embed_back,
                      attrs=("shape", "start", "in_shape"),
                      jvp=lambda tangents, primals, outs, shape, start, in_shape: embed(
                          tangents[0], shape, start))


def embed(g, shape, start):
    """Zeros of ``shape`` with ``g`` written at offset ``start`` (the transpose of slicing);
    its gradient is the slice."""
    return dispatch.composite(EMBED, g, shape=tuple(shape), start=tuple(start),
                              in_shape=tuple(g.shape))


def convolve(x, w, mode="full", method="auto"):
    """``scipy.signal.convolve(x, w, mode, method)`` for same-rank real ``x`` and ``w``,
    differentiable in both (see the module docstring)."""
    x = dispatch.tensor_operand(x, "convolve")
    w = dispatch.tensor_operand(w, "convolve")
    if x.ndim != w.ndim:
        raise ValueError(f"convolve: x and w must have the same number of dimensions, got "
                         f"{x.ndim} and {w.ndim}")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")
    if mode == "valid":
        sx, sw = tuple(x.shape), tuple(w.shape)
        if not (all(a >= b for a, b in zip(sx, sw)) or all(a <= b for a, b in zip(sx, sw))):
            raise ValueError("convolve: for 'valid' mode, one must be at least as large as the "
                             f"other in every dimension (shapes {sx} and {sw})")
    return dispatch.composite(CONVOLVE, x, w, mode=mode, method=method)
