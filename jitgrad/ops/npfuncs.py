"""Differentiable rows for the NumPy namespace (``jitgrad.numpy``) that the core families lack.

Every row is a ``def_composite``: the forward is the NumPy function itself on the tensors' data
(no kernel to compile; these ops are about coverage, not speed), and the backward is written
with Tensor ops, so ``create_graph=True`` double backward records its own graph.

Elementwise rows keep NumPy's broadcasting in the forward; their backward returns gradients of
the broadcast shape and the engine sums them to each input's shape (Note [broadcast reduction]).
"""
from __future__ import annotations

import math

import numpy as np

from . import dispatch
from .registry import LINEAR, def_composite
from .unary import cos, exp, sqrt

LN2 = math.log(2.0)
LN10 = math.log(10.0)


def _zeros(g):
    return dispatch.zeros(g.shape, g.dtype, g.device)


# --- elementwise unary ----------------------------------------------------------------------
def _unary_row(name, node, np_fn, deriv):
    """A unary row: ``out = np_fn(x)``, ``gx = g * deriv(x, result)`` (``deriv=None``: the
    function is piecewise constant and its gradient is zero)."""

    def forward(ctx, x):
        with np.errstate(all="ignore"):
            return np.asarray(np_fn(x))

    def backward(ctx, g, x, result):
        if deriv is None:
            return (_zeros(g),)
        return (g * deriv(x, result),)

    def jvp(tangents, primals, outs):
        if deriv is None:
            return _zeros(outs[0])
        return tangents[0] * deriv(primals[0], outs[0])

    op = def_composite(name, node, ("x",), forward, backward, save=("x", "result"), jvp=jvp)
    op.batch_rule = lambda args, batched: dispatch.composite(op, args[0])
    return op


def _align(args, batched):
    """vmap: give batched operands 1s after their batch dim so that broadcasting lines the
    examples up (as the core's elementwise batching does)."""
    nd = max(a.ndim - 1 if b else a.ndim for a, b in zip(args, batched))
    out = []
    for a, b in zip(args, batched):
        if b and a.ndim - 1 < nd:
            from .shape import reshape

            a = reshape(a, (a.shape[0],) + (1,) * (nd - a.ndim + 1) + tuple(a.shape[1:]))
        out.append(a)
    return out


def _sinc_d(x, r):
    # d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x, and 0 at x = 0
    safe = dispatch.Tensor.__ne__(x, 0.0)
    from .binary import where

    xs = where(safe, x, 1.0)
    return where(safe, (cos(xs * math.pi) - r) / xs, 0.0)


UNARY = {
    "arcsin": _unary_row("arcsin", "AsinBackward0", np.arcsin, lambda x, r: 1.0 / sqrt(1.0 - x * x)),
    "arccos": _unary_row("arccos", "AcosBackward0", np.arccos, lambda x, r: -1.0 / sqrt(1.0 - x * x)),
    "arctan": _unary_row("arctan", "AtanBackward0", np.arctan, lambda x, r: 1.0 / (1.0 + x * x)),
    "arcsinh": _unary_row("arcsinh", "AsinhBackward0", np.arcsinh,
                          lambda x, r: 1.0 / sqrt(x * x + 1.0)),
    "arccosh": _unary_row("arccosh", "AcoshBackward0", np.arccosh,
                          lambda x, r: 1.0 / sqrt(x * x - 1.0)),
    "arctanh": _unary_row("arctanh", "AtanhBackward0", np.arctanh, lambda x, r: 1.0 / (1.0 - x * x)),
    "exp2": _unary_row("exp2", "Exp2Backward0", np.exp2, lambda x, r: r * LN2),
    "log2": _unary_row("log2", "Log2Backward0", np.log2, lambda x, r: 1.0 / (x * LN2)),
    "log10": _unary_row("log10", "Log10Backward0", np.log10, lambda x, r: 1.0 / (x * LN10)),
    "cbrt": _unary_row("cbrt", "CbrtBackward0", np.cbrt, lambda x, r: 1.0 / (3.0 * r * r)),
    "sinc": _unary_row("sinc", "SincBackward0", np.sinc, _sinc_d),
    "floor": _unary_row("floor", "FloorBackward0", np.floor, None),
    "ceil": _unary_row("ceil", "CeilBackward0", np.ceil, None),
    "trunc": _unary_row("trunc", "TruncBackward0", np.trunc, None),
    "rint": _unary_row("rint", "RoundBackward0", np.rint, None),
}
ROUND = def_composite("round", "RoundBackward1", ("x",),
                      lambda ctx, x, decimals: np.asarray(np.round(x, decimals)),
                      lambda ctx, g: (_zeros(g),), attrs=("decimals",),
                      jvp=lambda tangents, primals, outs, decimals: _zeros(outs[0]))
ROUND.batch_rule = lambda args, batched, decimals: dispatch.composite(ROUND, args[0],
                                                                      decimals=decimals)


def unary(name, x):
    """Apply the unary row ``name`` (see ``UNARY``) to ``x``."""
    return dispatch.composite(UNARY[name], dispatch.tensor_operand(x, name))


def round_(x, decimals=0):
    """``round(x, decimals)``; its gradient is zero (piecewise constant)."""
    return dispatch.composite(ROUND, dispatch.tensor_operand(x, "round"), decimals=int(decimals))


# --- elementwise binary ---------------------------------------------------------------------
def _binary_row(name, node, np_fn, dx, dy):
    """``out = np_fn(x, y)`` (broadcasting); ``gx = g * dx(x, y, result)``,
    ``gy = g * dy(x, y, result)``."""

    def forward(ctx, x, y):
        with np.errstate(all="ignore"):
            return np.asarray(np_fn(x, y))

    def backward(ctx, g, x, y, result):
        nx, ny = ctx.needs_input_grad
        return (g * dx(x, y, result) if nx else None, g * dy(x, y, result) if ny else None)

    def jvp(tangents, primals, outs):
        (tx, ty), (x, y), r = tangents, primals, outs[0]
        total = None if tx is None else tx * dx(x, y, r)
        if ty is not None:
            c = ty * dy(x, y, r)
            total = c if total is None else total + c
        return total

    op = def_composite(name, node, ("x", "y"), forward, backward, save=("x", "y", "result"),
                       jvp=jvp)
    op.batch_rule = lambda args, batched: dispatch.composite(
        op, *_align([dispatch.tensor_operand(a, name) for a in args], batched))
    return op


def _floor_div(x, y):
    return dispatch.composite(UNARY["floor"], x / y)


def _trunc_div(x, y):
    return dispatch.composite(UNARY["trunc"], x / y)


BINARY = {
    # arctan2(y, x): NumPy's argument order; d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
    "arctan2": _binary_row("arctan2", "Atan2Backward0", np.arctan2,
                           lambda y, x, r: x / (x * x + y * y), lambda y, x, r: -y / (x * x + y * y)),
    "hypot": _binary_row("hypot", "HypotBackward0", np.hypot,
                         lambda x, y, r: x / r, lambda x, y, r: y / r),
    "logaddexp": _binary_row("logaddexp", "LogaddexpBackward0", np.logaddexp,
                             lambda x, y, r: exp(x - r), lambda x, y, r: exp(y - r)),
    "logaddexp2": _binary_row("logaddexp2", "Logaddexp2Backward0", np.logaddexp2,
                              lambda x, y, r: exp((x - r) * LN2), lambda x, y, r: exp((y - r) * LN2)),
    # x mod y = x - floor(x / y) y: d/dx = 1, d/dy = -floor(x / y)
    "remainder": _binary_row("remainder", "RemainderBackward1", np.remainder,
                             lambda x, y, r: dispatch.full_like(r, 1.0),
                             lambda x, y, r: -_floor_div(x, y)),
    "fmod": _binary_row("fmod", "FmodBackward1", np.fmod,
                        lambda x, y, r: dispatch.full_like(r, 1.0), lambda x, y, r: -_trunc_div(x, y)),
    "copysign": _binary_row("copysign", "CopysignBackward0", np.copysign,
                            lambda x, y, r: _sign_ratio(r, x), lambda x, y, r: _zeros(r)),
}


def _sign_ratio(r, x):
    # d/dx copysign(x, y) = sign(x) * sign(r) (1 where they agree, -1 where the sign flipped)
    from .unary import sign

    return sign(r) * sign(x)


def binary(name, x, y):
    """Apply the binary row ``name`` (see ``BINARY``) to ``x`` and ``y`` (broadcasting)."""
    x, y = dispatch.tensor_operand(x, name), dispatch.tensor_operand(y, name)
    dispatch.broadcast_shapes(name, x.shape, y.shape)
    return dispatch.composite(BINARY[name], x, y)


# --- scans and reversals --------------------------------------------------------------------
def _flip_fwd(ctx, x, axis):
    return np.flip(x, axis).copy()


FLIP = def_composite("flip", "FlipBackward0", ("x",), _flip_fwd,
                     lambda ctx, g: (flip(g, ctx.axis),), attrs=("axis",), jvp=LINEAR)


def _flip_batch(args, batched, axis):
    x = args[0]
    axes = tuple(range(1, x.ndim)) if axis is None else tuple(a + 1 for a in axis)
    return dispatch.composite(FLIP, x, axis=axes)


FLIP.batch_rule = _flip_batch


def flip(x, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None); the gradient is the
    incoming gradient flipped back."""
    x = dispatch.tensor_operand(x, "flip")
    if axis is not None:
        axis = tuple(int(a) % max(x.ndim, 1) for a in np.atleast_1d(axis))
    return dispatch.composite(FLIP, x, axis=axis)


def _cumsum_fwd(ctx, x, axis):
    return np.cumsum(x, axis=axis)


def _cumsum_back(ctx, g):
    # out_i = sum_{j <= i} x_j, so gx_j = sum_{i >= j} g_i: a reversed cumulative sum
    return (flip(cumsum(flip(g, ctx.axis), ctx.axis), ctx.axis),)


CUMSUM = def_composite("cumsum", "CumsumBackward0", ("x",), _cumsum_fwd, _cumsum_back,
                       attrs=("axis",), jvp=LINEAR,
                       batch_rule=lambda args, batched, axis: dispatch.composite(
                           CUMSUM, args[0], axis=axis + 1))


def cumsum(x, axis):
    """Cumulative sum along an integer ``axis``: ``out_i = sum_{j<=i} x_j``; the gradient is the
    reversed cumulative sum of ``g``."""
    x = dispatch.tensor_operand(x, "cumsum")
    return dispatch.composite(CUMSUM, x, axis=int(axis) % max(x.ndim, 1))


def _cumprod_fwd(ctx, x, axis):
    return np.cumprod(x, axis=axis)


def _cumprod_back(ctx, g, x, result):
    # for nonzero x: gx_j = sum_{i>=j} g_i out_i / x_j (the caller routes inputs with zeros to
    # an explicit product chain instead)
    a = ctx.axis
    return (flip(cumsum(flip(g * result, a), a), a) / x,)


def _cumprod_jvp(tangents, primals, outs, axis):
    # d out_i = sum_{j<=i} out_i t_j / x_j = out_i cumsum(t / x)_i (inputs without zeros)
    return outs[0] * cumsum(tangents[0] / primals[0], axis)


CUMPROD = def_composite("cumprod", "CumprodBackward0", ("x",), _cumprod_fwd, _cumprod_back,
                        attrs=("axis",), save=("x", "result"), jvp=_cumprod_jvp,
                        batch_rule=lambda args, batched, axis: dispatch.composite(
                            CUMPROD, args[0], axis=axis + 1))


def cumprod(x, axis):
    """Cumulative product along ``axis``: ``out_i = prod_{j<=i} x_j``. Gradient
    ``gx_j = sum_{i>=j} g_i out_i / x_j`` when no element is zero; with zeros the product is
    recorded as a chain of multiplications (exact gradient, slower)."""
    x = dispatch.tensor_operand(x, "cumprod")
    axis = int(axis) % max(x.ndim, 1)
    # inside vmap the values are not readable here: the row's formula is used (nan, never a
    # wrong number, where an input is zero)
    if x.ndim == 0 or type(x).__name__ == "BatchedTensor" or not _has_zero(x):
        return dispatch.composite(CUMPROD, x, axis=axis)
    from .shape import stack

    pre = (slice(None),) * axis
    acc = x[pre + (0,)]
    outs = [acc]
    for i in range(1, x.shape[axis]):
        acc = acc * x[pre + (i,)]
        outs.append(acc)
    return stack(outs, axis)


def _has_zero(x) -> bool:
    if dispatch.device_of(x._data) == "cpu":
        return bool((x._data == 0).any())
    # CUDA: which graph to record depends on the data, so one scalar comes back to the host
    # (a sync, as PyTorch's own data-dependent choices make); the count is made on the device
    from .reduce import sum as _sum

    return _sum(dispatch.Tensor.__eq__(x.detach(), 0.0)).item() > 0


# --- diag -----------------------------------------------------------------------------------
def _diag_fwd(ctx, v, k):
    return np.diag(v, k)


def _diag_back(ctx, g):
    from .shape import diagonal

    return (diagonal(g, ctx.k, 0, 1),)


DIAG_EMBED = def_composite("diag_embed", "DiagEmbedBackward0", ("v",), _diag_fwd, _diag_back,
                           attrs=("k",))


def diag_embed(v, k=0):
    """A square matrix with the 1-d ``v`` on its ``k``-th diagonal; the gradient is that
    diagonal of ``g``."""
    return dispatch.composite(DIAG_EMBED, dispatch.tensor_operand(v, "diag"), k=int(k))


# --- constant pad ---------------------------------------------------------------------------
def _pad_fwd(ctx, x, pad_width, value):
    return np.pad(x, pad_width, mode="constant", constant_values=value)


def _pad_back(ctx, g):
    return (g[tuple(slice(b, b + n) for (b, _), n in zip(ctx.pad_width, ctx._next_meta[0][0]))],)


PAD = def_composite("pad_constant", "ConstantPadNdBackward0", ("x",), _pad_fwd, _pad_back,
                    attrs=("pad_width", "value"))


def pad_constant(x, pad_width, value=0.0):
    """``x`` surrounded by ``value`` (``pad_width``: one ``(before, after)`` per axis); the
    gradient is the matching slice of ``g``."""
    x = dispatch.tensor_operand(x, "pad")
    pw = tuple((int(b), int(a)) for b, a in np.broadcast_to(np.asarray(pad_width), (x.ndim, 2)))
    return dispatch.composite(PAD, x, pad_width=pw, value=float(value))


# --- einsum ---------------------------------------------------------------------------------
def _einsum_fwd(ctx, *arrays, spec):
    return np.asarray(np.einsum(spec, *arrays, optimize=len(arrays) > 2))


def _einsum_back(ctx, g, **saved):
    ops = [saved[f"x{i}"] for i in range(len(saved))]
    ins, out = ctx.spec.split("->")
    subs = ins.split(",")
    grads = []
    for i, need in enumerate(ctx.needs_input_grad):
        if not need:
            grads.append(None)
            continue
        others = [s for j, s in enumerate(subs) if j != i]
        avail = set(out).union(*others) if others else set(out)
        target = "".join(c for c in subs[i] if c in avail)
        spec = ",".join([out] + others) + "->" + target
        gi = einsum_explicit(spec, g, *[o for j, o in enumerate(ops) if j != i])
        if len(target) != len(subs[i]):  # letters only in operand i: the gradient broadcasts
            from .shape import expand, reshape

            shape = ctx._next_meta[i][0]
            keep = [shape[k] if c in avail else 1 for k, c in enumerate(subs[i])]
            gi = expand(reshape(gi, tuple(keep)), tuple(shape))
        grads.append(gi)
    return tuple(grads)


_EINSUM_ROWS: dict = {}


def einsum_explicit(spec, *operands):
    """``np.einsum`` with an explicit ``->`` spec and no ellipsis; the gradient of operand ``i``
    is an einsum of ``g`` and the other operands into operand ``i``'s subscripts (letters only in
    operand ``i`` broadcast). Subscripts repeated inside one operand (diagonals) are not
    differentiable here and raise when the operand requires grad."""
    n = len(operands)
    row = _EINSUM_ROWS.get(n)
    if row is None:
        names = tuple(f"x{i}" for i in range(n))
        row = def_composite(f"einsum{n}", "EinsumBackward0", names, _einsum_fwd, _einsum_back,
                            attrs=("spec",), save=names)
        _EINSUM_ROWS[n] = row
    ops = [dispatch.tensor_operand(o, "einsum") for o in operands]
    for s, o in zip(spec.split("->")[0].split(","), ops):
        if len(set(s)) != len(s) and o.requires_grad:
            raise NotImplementedError(
                f"einsum: the gradient of an operand with a repeated subscript ('{s}' in "
                f"'{spec}') is not supported; take the diagonal first (jitgrad.numpy.diagonal)")
    return dispatch.composite(row, *ops, spec=spec)


# --- special functions (scipy.special forwards) ----------------------------------------------
def _special(name):
    import scipy.special

    return getattr(scipy.special, name)


def _gammaln_fwd(ctx, x):
    return np.asarray(_special("gammaln")(x))


def _digamma_fwd(ctx, x):
    return np.asarray(_special("digamma")(x))


def _polygamma_fwd(ctx, x, n):
    return np.asarray(_special("polygamma")(n, x))


# d/dx gammaln(x) = digamma(x); d/dx digamma(x) = polygamma(1, x); d/dx polygamma(n, x) =
# polygamma(n + 1, x): each backward is the next row, so derivatives of every order work
GAMMALN = def_composite("gammaln", "LgammaBackward0", ("x",), _gammaln_fwd,
                        lambda ctx, g, x: (g * digamma(x),), save=("x",))
DIGAMMA = def_composite("digamma", "DigammaBackward0", ("x",), _digamma_fwd,
                        lambda ctx, g, x: (g * polygamma(1, x),), save=("x",))
POLYGAMMA = def_composite("polygamma", "PolygammaBackward0", ("x",), _polygamma_fwd,
                          lambda ctx, g, x: (g * polygamma(ctx.n + 1, x),), attrs=("n",),
                          save=("x",))


def gammaln(x):
    """``log|Gamma(x)|``; derivative ``digamma(x)``."""
    return dispatch.composite(GAMMALN, dispatch.tensor_operand(x, "gammaln"))


def digamma(x):
    """``psi(x) = d/dx log Gamma(x)``; derivative ``polygamma(1, x)``."""
    return dispatch.composite(DIGAMMA, dispatch.tensor_operand(x, "digamma"))


def polygamma(n, x):
    """``psi^(n)(x)``, the n-th derivative of digamma; derivative ``polygamma(n + 1, x)``."""
    n = int(n)
    if n == 0:
        return digamma(x)
    return dispatch.composite(POLYGAMMA, dispatch.tensor_operand(x, "polygamma"), n=n)


def _stdtr_fwd(ctx, x, df):
    return np.asarray(_special("stdtr")(df, x), dtype=x.dtype)


def _t_pdf(x, df):
    """Student t density at Tensor ``x`` for a constant ``df`` array, as Tensor ops (so its own
    derivative is available for double backward)."""
    from .unary import exp, log1p

    if dispatch.device_of(x._data) != "cpu":  # the constants made on x's device
        dft = dispatch.Tensor._make(dispatch.move(np.ascontiguousarray(df, dtype=x._data.dtype),
                                                   dispatch.device_of(x._data)))
        logc = gammaln((dft + 1.0) * 0.5) - gammaln(dft * 0.5) - 0.5 * _log(dft * np.pi)
        return exp(logc - (dft + 1.0) * 0.5 * log1p(x * x / dft))
    sp = _special("gammaln")
    logc = sp((df + 1.0) / 2.0) - sp(df / 2.0) - 0.5 * np.log(df * np.pi)
    c = dispatch.Tensor._make(np.asarray(logc, dtype=x._data.dtype))
    dft = dispatch.Tensor._make(np.asarray(df, dtype=x._data.dtype))
    return exp(c - (dft + 1.0) * 0.5 * log1p(x * x / dft))


# d/dx stdtr(df, x) = t.pdf(x; df); df is a constant (the derivative of the regularized
# incomplete beta in its parameters has no closed form)
STDTR = def_composite("stdtr", "StdtrBackward0", ("x",), _stdtr_fwd,
                      lambda ctx, g, x: (g * _t_pdf(x, ctx.df),), attrs=("df",), save=("x",))


def stdtr(df, x):
    """Student t CDF ``F(x; df) = 1 - I_{df/(df+x^2)}(df/2, 1/2) / 2`` for ``x > 0`` (mirrored
    for ``x < 0``; ``I`` the regularized incomplete beta), ``scipy.special.stdtr``.
    ``d/dx F = Gamma((df+1)/2) / (sqrt(df pi) Gamma(df/2)) (1 + x^2/df)^(-(df+1)/2)``; ``df``
    is a constant here (an ndarray or a Tensor not requiring grad)."""
    x = dispatch.tensor_operand(x, "stdtr")
    if isinstance(df, dispatch.Tensor):
        if df.requires_grad:
            raise NotImplementedError(
                "stdtr / jitgrad.scipy.stats.t.cdf: the derivative with respect to df is not "
                "implemented; pass df without requires_grad (or detach it)")
        df = df._data
        if dispatch.device_of(df) != "cpu":  # a constant parameter: read to the host once
            df = df.get()
    df = np.asarray(df, dtype=x._data.dtype)
    shape = np.broadcast_shapes(x.shape, df.shape)
    if tuple(x.shape) != shape:
        x = dispatch.Tensor.expand(x, shape)
    return dispatch.composite(STDTR, x, df=np.broadcast_to(df, shape))


def _log(t):
    from .unary import log

    return log(t)


from . import npfuncs_cuda  # noqa: E402  (the rows' CUDA forwards: ops.npfuncs_cuda)

npfuncs_cuda.register()
