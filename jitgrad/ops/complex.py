"""Complex numbers: ``real``, ``imag``, ``conj``, ``angle`` and complex ``abs``, and the list of
dtype-agnostic rows that accept complex tensors (Note [complex support] in ``ops/core/operands.py``).

Gradient convention (PyTorch's, "Autograd for Complex Numbers"): for a real loss ``L`` of a
complex ``z = x + iy``, ``z.grad = dL/dx + i dL/dy`` (twice the conjugate Wirtinger derivative),
so ``z -= lr * z.grad`` descends. A holomorphic ``f`` then has ``grad_z = grad_out * conj(f'(z))``;
the non-holomorphic functions below state their rule in terms of ``x`` and ``y``.

These are composite rows (NumPy forward, Tensor-level backward), so double backward works; the
elementwise kernels stay real-only and pay nothing for complex support.
"""
from __future__ import annotations

import numpy as np

from . import binary, unary
from .core import dispatch, methods
from .core.registry import LINEAR, def_composite

# Rows that never look at element values (views, copies, index permutations, concatenation,
# sums) work on complex tensors as they are, and say so with ``complex_ok=True``: clone, cast,
# to_device (so that ``dispatch.move`` raises its own clearer NotImplementedError: complex
# tensors stay on the CPU), the shape and getitem rows, index_backward, as_strided_view, sum and
# mean, flip. Their backward rules use only such rows or complex rows, so gradients stay exact.




def _complex_of(g, ctx):
    """``g`` (real) as the complex dtype of the op's input."""
    return unary.cast(g, ctx._next_meta[0][1])


# --- real / imag / conj ------------------------------------------------------------------------
def _real_fwd(ctx, z):
    return np.array(z.real)  # a contiguous copy, 0-d stays 0-d (ascontiguousarray makes it 1-d)


def _real_bwd(ctx, g):
    # dL/dx = g, dL/dy = 0
    return (_complex_of(g, ctx),)


def _imag_fwd(ctx, z):
    return np.array(z.imag)


def _imag_bwd(ctx, g):
    # dL/dx = 0, dL/dy = g: grad = i g
    return (binary.mul(_complex_of(g, ctx), 1j),)


def _conj_fwd(ctx, z):
    return np.conj(z)


def _conj_bwd(ctx, g):
    # w = x - iy: dL/dx = dL/dRe(w), dL/dy = -dL/dIm(w), so grad_z = conj(grad_w)
    return (conj(g),)


def _same_batch(name):
    """The vmap rule of the elementwise composite row ``name``: the batch (dim 0) goes
    through (the row is looked up when the rule runs)."""
    def rule(args, batched):
        return dispatch.composite(_ROWS[name], args[0])
    return rule


# forward mode: real, imag and conj are real-linear maps, their tangents the same map of t
REAL = def_composite("real", "RealBackward0", ("z",), _real_fwd, _real_bwd, jvp=LINEAR,
                     batch_rule=_same_batch("real"), complex_ok=True)
IMAG = def_composite("imag", "ImagBackward0", ("z",), _imag_fwd, _imag_bwd, jvp=LINEAR,
                     batch_rule=_same_batch("imag"), complex_ok=True)
CONJ = def_composite("conj", "ConjBackward0", ("z",), _conj_fwd, _conj_bwd, jvp=LINEAR,
                     batch_rule=_same_batch("conj"), complex_ok=True)


def real(z):
    """Real part ``x`` of ``z = x + iy`` (real input: ``z`` itself).

    Derivative (PyTorch's convention): ``grad_z = g + 0i``."""
    z = dispatch.tensor_operand(z, "real")
    return dispatch.composite(REAL, z) if z._data.dtype.kind == "c" else z


def imag(z):
    """Imaginary part ``y`` of ``z = x + iy``. Derivative: ``grad_z = i g``.

    Real input: zeros (a constant, as NumPy; PyTorch refuses ``imag`` of real tensors)."""
    z = dispatch.tensor_operand(z, "imag")
    if z._data.dtype.kind == "c":
        return dispatch.composite(IMAG, z)
    return dispatch.zeros(z.shape, z.dtype, z.device)


def conj(z):
    """Complex conjugate ``x - iy`` (real input: ``z`` itself). Derivative: ``conj(g)``."""
    z = dispatch.tensor_operand(z, "conj")
    return dispatch.composite(CONJ, z) if z._data.dtype.kind == "c" else z


# --- abs / angle ---------------------------------------------------------------------------------
def _abs_fwd(ctx, z):
    return np.abs(z)


def _safe(r):
    """``r`` with its zeros replaced by 1: a divisor for ``z / r`` that is exactly 0 at z = 0."""
    return binary.where(r == 0.0, 1.0, r)


def _abs_bwd(ctx, g, z, result):
    # |z| = sqrt(x^2 + y^2): dL/dx = g x / |z|, dL/dy = g y / |z| -> g z / |z| (0 at z = 0)
    return (binary.mul(g, binary.div(z, _safe(result))),)


def _angle_fwd(ctx, z):
    return np.angle(z)


def _angle_bwd(ctx, g, z):
    # atan2(y, x): d/dx = -y / |z|^2, d/dy = x / |z|^2 -> grad = g (-y + ix) / |z|^2
    # = i g z / |z|^2 (0 at z = 0, like PyTorch)
    r = abs(z)
    return (binary.div(binary.mul(binary.mul(g, z), 1j), _safe(binary.mul(r, r))),)


def _abs_jvp(tangents, primals, outs):
    # d|z| = (x dx + y dy) / |z| = Re(conj(z) t) / |z| (0 at z = 0, like the gradient)
    (t,), (z,), (r,) = tangents, primals, outs
    return binary.div(real(binary.mul(conj(z), t)), _safe(r))


def _angle_jvp(tangents, primals, outs):
    # d atan2(y, x) = (x dy - y dx) / |z|^2 = Im(conj(z) t) / |z|^2
    (t,), (z,) = tangents, primals
    r = abs(z)
    return binary.div(imag(binary.mul(conj(z), t)), _safe(binary.mul(r, r)))


ABS = def_composite("abs_complex", "AbsBackward0", ("z",), _abs_fwd, _abs_bwd,
                    save=("z", "result"), jvp=_abs_jvp, batch_rule=_same_batch("abs"),
                    complex_ok=True)
ANGLE = def_composite("angle", "AngleBackward0", ("z",), _angle_fwd, _angle_bwd, save=("z",),
                      jvp=_angle_jvp, batch_rule=_same_batch("angle"), complex_ok=True)
_ROWS = {"real": REAL, "imag": IMAG, "conj": CONJ, "abs": ABS, "angle": ANGLE}


def abs(z):  # noqa: A001 - NumPy's name
    """Modulus ``|z| = sqrt(x^2 + y^2)`` of a complex tensor (real dtype of its precision).

    Derivative (PyTorch's convention): ``grad_z = g z / |z|``, 0 at ``z = 0``. Real tensors go
    to the elementwise ``abs`` row."""
    z = dispatch.tensor_operand(z, "abs")
    if z._data.dtype.kind != "c":
        return unary.abs(z)
    return dispatch.composite(ABS, z)


def angle(z, deg=False):
    """Argument ``atan2(y, x)`` of ``z = x + iy`` (in degrees with ``deg``).

    Derivative: ``grad_z = i g z / |z|^2`` (0 at ``z = 0``). Real input: 0 or pi by the sign, a
    constant (zero gradient, as PyTorch)."""
    z = dispatch.tensor_operand(z, "angle")
    if z._data.dtype.kind != "c":
        res = np.angle(z._data, deg).astype(np.result_type(z._data.dtype, 0.0))
        return dispatch.Tensor._make(res)
    out = dispatch.composite(ANGLE, z)
    return binary.mul(out, 180.0 / np.pi) if deg else out


# PyTorch's ``real``/``imag`` properties and ``conj()``/``angle()`` methods (Note [tensor
# methods] in ops/core/methods.py)
methods.declare({
    "real": property(real, doc="The real part (``real``); a real tensor itself."),
    "imag": property(imag, doc="The imaginary part (``imag``)."),
    "conj": conj, "angle": angle}, __name__)
