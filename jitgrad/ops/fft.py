"""Discrete Fourier transforms: three composite rows (NumPy forwards, Tensor-level backwards, so
double backward works), named like PyTorch's nodes.

* ``fft_c2c`` (``FftC2CBackward0``): ``fftn``/``ifftn`` over unique ``axes``, the input first
  cropped or zero-padded to the sizes ``s`` (NumPy's ``n``/``s``).
* ``fft_r2c`` (``FftR2CBackward0``): ``rfftn``, real input, half spectrum on the last axis.
* ``fft_c2r`` (``FftC2RBackward0``): ``irfftn``, half spectrum in, real output.
* ``fft_resize`` (``FftResizeBackward0``): crop / zero-pad along axes, used by the backwards.

Note [fft adjoints]: PyTorch's convention makes the gradient of a complex-linear map ``y = A x``
the adjoint ``grad_x = A^H grad_y``. The unnormalised DFT ``F`` has ``F^H = n * ifft`` (the
unnormalised inverse), so each transform's adjoint is the opposite-direction transform with the
*dual* norm, which carries the same scale factor: "backward" (1 forward, 1/n inverse) <->
"forward" (1/n forward, 1 inverse), "ortho" (1/sqrt(n) both ways) is its own dual. Cropping's
adjoint is zero-padding and the reverse.

* ``rfftn`` is ``P F R`` for a real input: ``R`` resizes to ``s``, ``F`` is the full c2c
  transform, ``P`` keeps bins ``0..n//2`` of the last axis. ``grad_x = Re(R^H F^H P^H g)``:
  ``P^H`` zero-extends the half spectrum to ``n`` bins, then a full inverse transform with the
  dual norm, the resize back, and the real part (a real input's gradient is the real part of
  the complex one). No Hermitian folding is needed: the zero bins do it.
* ``irfftn`` is ``y = Re(B h)`` with ``B = F^-1 W E`` (``E``: resize the half spectrum to
  ``n//2+1`` bins and the other axes to ``s``; ``W``: weight 1 on bin 0 and, for even ``n``,
  on bin ``n/2``, and 2 on the bins in between, which counts each bin's Hermitian mirror).
  NumPy's dropping of the imaginary parts of bins 0 and ``n/2`` is the ``Re``. For a real
  cotangent ``g``, ``grad_h = B^H g = E^H W rfftn(g, dual norm)``.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from . import binary
from .core import dispatch
from . import complex as _complex
from .core.registry import LINEAR, def_composite

NORMS = ("backward", "ortho", "forward")
DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def check_norm(norm) -> str:
    """``norm`` (None means "backward") validated like NumPy."""
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return norm


def _complex_out(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy 2 keeps float32/complex64 in single precision; float16 too is computed there."""
    want = dtypes.to_complex(dtypes.to_dtype(x.dtype) if x.dtype.kind in "fc"
                             else dtypes.get_default_dtype()).np
    return y.astype(want, copy=False)


def _sizes(shape, axes) -> tuple:
    return tuple(shape[a] for a in axes)


# --- resize (crop / zero-pad) ----------------------------------------------------------------
def _resize_fwd(ctx, x, axes, sizes):
    ctx.old = _sizes(x.shape, axes)
    shape = list(x.shape)
    for a, n in zip(axes, sizes):
        shape[a] = n
    out = np.zeros(shape, x.dtype)
    common = [slice(None)] * x.ndim
    for a, n in zip(axes, sizes):
        common[a] = slice(0, min(n, x.shape[a]))
    out[tuple(common)] = x[tuple(common)]
    return out


def _resize_bwd(ctx, g):
    # cropping and zero-padding are each other's adjoints
    return (resize(g, ctx.axes, ctx.old),)


def _batched(name):
    """The vmap rule of the row ``name``: the batch is dim 0, the (non-negative) axes move up
    by one (the row is looked up when the rule runs)."""
    def rule(args, batched, axes, **attrs):
        return dispatch.composite(_ROWS[name], args[0], axes=tuple(a + 1 for a in axes), **attrs)
    return rule


# forward mode: every row here is linear in x (over the reals), its tangent the same op of t
RESIZE = def_composite("fft_resize", "FftResizeBackward0", ("x",), _resize_fwd, _resize_bwd,
                       attrs=("axes", "sizes"), jvp=LINEAR, batch_rule=_batched("fft_resize"),
                       complex_ok=True)


def resize(x, axes, sizes):
    """``x`` cropped or zero-padded (at the end) to ``sizes`` along ``axes``; ``x`` itself when
    nothing changes. Derivative: ``g`` resized back (crop <-> pad)."""
    if _sizes(x.shape, axes) == tuple(sizes):
        return x
    return dispatch.composite(RESIZE, x, axes=tuple(axes), sizes=tuple(sizes))


# --- complex to complex ----------------------------------------------------------------------
def _c2c_fwd(ctx, x, s, axes, norm, inverse):
    ctx.in_sizes = _sizes(x.shape, axes)
    fn = np.fft.ifftn if inverse else np.fft.fftn
    return _complex_out(x, fn(x, s=s, axes=axes, norm=norm))


def _c2c_bwd(ctx, g):
    # Note [fft adjoints]: the opposite transform with the dual norm, then undo the resize
    back = c2c(g, None, ctx.axes, DUAL[ctx.norm], not ctx.inverse)
    return (resize(back, ctx.axes, ctx.in_sizes),)


C2C = def_composite("fft_c2c", "FftC2CBackward0", ("x",), _c2c_fwd, _c2c_bwd,
                    attrs=("s", "axes", "norm", "inverse"), jvp=LINEAR,
                    batch_rule=_batched("fft_c2c"), complex_ok=True)


def c2c(x, s, axes, norm, inverse):
    """``fftn`` (``inverse=False``) or ``ifftn`` of ``x`` over the unique ``axes`` (normalised,
    non-negative), after resizing to ``s`` (None: no resize).

    Forward ``y_k = c sum_j x_j exp(-+2 pi i j.k / n)`` with ``c`` set by ``norm``.
    Derivative: ``grad_x = A^H g``, the opposite transform with the dual norm, resized back
    (Note [fft adjoints])."""
    x = dispatch.tensor_operand(x, "fft")
    s = _sizes(x.shape, axes) if s is None else tuple(s)
    return dispatch.composite(C2C, x, s=s, axes=tuple(axes), norm=norm, inverse=bool(inverse))


# --- real to complex (half spectrum) ---------------------------------------------------------
def _r2c_fwd(ctx, x, s, axes, norm):
    ctx.in_sizes = _sizes(x.shape, axes)
    return _complex_out(x, np.fft.rfftn(x, s=s, axes=axes, norm=norm))


def _r2c_bwd(ctx, g):
    # Note [fft adjoints]: zero-extend the half spectrum, full inverse with the dual norm,
    # resize back, real part (the input is real)
    last, n = ctx.axes[-1], ctx.s[-1]
    full = resize(g, (last,), (n,))
    back = c2c(full, None, ctx.axes, DUAL[ctx.norm], True)
    return (_complex.real(resize(back, ctx.axes, ctx.in_sizes)),)


R2C = def_composite("fft_r2c", "FftR2CBackward0", ("x",), _r2c_fwd, _r2c_bwd,
                    attrs=("s", "axes", "norm"), jvp=LINEAR, batch_rule=_batched("fft_r2c"))


def r2c(x, s, axes, norm):
    """``rfftn`` of the real ``x`` over the unique ``axes`` (the last one halved to
    ``s[-1]//2 + 1`` bins) after resizing to ``s``.

    Derivative: ``Re(R^H F^H P^H g)`` (Note [fft adjoints])."""
    x = dispatch.tensor_operand(x, "rfft")
    if x._data.dtype.kind == "c":
        raise TypeError(f"rfft: expected a real input, got dtype {x.dtype.name} (use fft for "
                        "complex input)")
    return dispatch.composite(R2C, x, s=tuple(s), axes=tuple(axes), norm=norm)


# --- complex (half spectrum) to real ---------------------------------------------------------
def _c2r_fwd(ctx, x, s, axes, norm):
    ctx.in_sizes = _sizes(x.shape, axes)
    out = np.fft.irfftn(x, s=s, axes=axes, norm=norm)
    real = dtypes.to_real(dtypes.to_complex(dtypes.to_dtype(x.dtype) if x.dtype.kind in "fc"
                                            else dtypes.get_default_dtype()))
    return out.astype(real.np, copy=False)


def _half_weights(n: int, dtype) -> np.ndarray:
    """``W``: 1 on bin 0 (and on bin n/2 for even n), 2 on the bins between (Note [fft
    adjoints])."""
    w = np.full(n // 2 + 1, 2.0, dtype)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


def _c2r_bwd(ctx, g):
    last, n = ctx.axes[-1], ctx.s[-1]
    spec = r2c(g, ctx.s, ctx.axes, DUAL[ctx.norm])
    w = _half_weights(n, g._data.dtype).reshape((-1,) + (1,) * (g.ndim - 1 - last))
    spec = binary.mul(spec, dispatch.Tensor._make(w))
    return (resize(spec, ctx.axes, ctx.in_sizes),)


C2R = def_composite("fft_c2r", "FftC2RBackward0", ("x",), _c2r_fwd, _c2r_bwd,
                    attrs=("s", "axes", "norm"), jvp=LINEAR, batch_rule=_batched("fft_c2r"),
                    complex_ok=True)
_ROWS = {"fft_resize": RESIZE, "fft_c2c": C2C, "fft_r2c": R2C, "fft_c2r": C2R}


def c2r(x, s, axes, norm):
    """``irfftn`` of the half spectrum ``x`` over the unique ``axes``: output sizes ``s`` (the
    input resized to ``s`` and to ``s[-1]//2 + 1`` bins on the last axis).

    Forward ``y = Re(F^-1 W E x)``; derivative ``grad_x = E^H W rfftn(g, dual norm)``
    (Note [fft adjoints])."""
    x = dispatch.tensor_operand(x, "irfft")
    return dispatch.composite(C2R, x, s=tuple(s), axes=tuple(axes), norm=norm)
