"""Differentiable rows for the NumPy namespace (``jitgrad.numpy``) that the core families lack.

Every row here is a ``def_composite``: the forward is the NumPy function itself on the tensors'
data (no kernel to compile; these ops are about coverage, not speed), and the backward is written
with Tensor ops, so ``create_graph=True`` double backward records its own graph. The elementwise
functions (arcsin ... copysign) are ordinary elementwise rows in ``ops.elementwise_np``, the
gamma family (gammaln, digamma, polygamma) in ``ops.special``.
"""
from __future__ import annotations

import numpy as np

from .core import dispatch, upper
from . import elementwise_np, npfuncs_cuda
from .complex import conj
from .special import gammaln
from .core.registry import LINEAR, def_composite, public


def _round_fwd(ctx, x, decimals):
    return np.asarray(np.round(x, decimals))


def _zeros(g):
    return dispatch.zeros(g.shape, g.dtype, g.device)


# --- elementwise: ops/elementwise_np.py; round with decimals stays here --------------------
def unary(name, x):
    """Apply the elementwise unary row ``name`` (``elementwise_np.UNARY``) to ``x``."""
    return elementwise_np.unary(name, x)


def binary(name, x, y):
    """Apply the elementwise binary row ``name`` (``elementwise_np.BINARY``) to ``x`` and ``y``
    (broadcasting)."""
    return elementwise_np.binary(name, x, y)


# round(x, decimals) stays composite: NumPy scales by 10**decimals in the input's own precision
# (a float32 factor and product for float32) and rounds integers for decimals < 0, which an
# elementwise row's attribute (promoted with the operands, converted to the compute dtype)
# would not reproduce bitwise
ROUND = def_composite("round", "RoundBackward1", ("x",), _round_fwd,
                      lambda ctx, g: (_zeros(g),), attrs=("decimals",),
                      jvp=lambda tangents, primals, outs, decimals: _zeros(outs[0]),
                      batch_rule=lambda args, batched, decimals: dispatch.composite(
                          ROUND, args[0], decimals=decimals),
                      cuda_forward=npfuncs_cuda.round_forward(_round_fwd))


def round_(x, decimals=0):
    """``round(x, decimals)``; its gradient is zero (piecewise constant)."""
    return dispatch.composite(ROUND, dispatch.tensor_operand(x, "round"), decimals=int(decimals))


# --- scans and reversals --------------------------------------------------------------------
def _flip_fwd(ctx, x, axis):
    return np.flip(x, axis).copy()


def _flip_batch(args, batched, axis):
    x = args[0]
    axes = tuple(range(1, x.ndim)) if axis is None else tuple(a + 1 for a in axis)
    return dispatch.composite(FLIP, x, axis=axes)


# complex_ok: a reversal never looks at the values (Note [complex support], ops/core/operands.py)
FLIP = def_composite("flip", "FlipBackward0", ("x",), _flip_fwd,
                     lambda ctx, g: (flip(g, ctx.axis),), attrs=("axis",), jvp=LINEAR,
                     batch_rule=_flip_batch, cuda_forward=npfuncs_cuda.flip_forward,
                     complex_ok=True, method=True, export=True)


@public(FLIP)
def flip(x, dims=None):
    """Reverse the order of elements along ``dims`` (an int or a tuple; all dims when None),
    ``torch.flip`` / ``numpy.flip``; the gradient is the incoming gradient flipped back."""
    x = dispatch.tensor_operand(x, "flip")
    if dims is not None:
        dims = tuple(int(a) % max(x.ndim, 1) for a in np.atleast_1d(dims))
    return dispatch.composite(FLIP, x, axis=dims)


def _cumsum_fwd(ctx, x, axis):
    return np.cumsum(x, axis=axis)


def _cumsum_back(ctx, g):
    # out_i = sum_{j <= i} x_j, so gx_j = sum_{i >= j} g_i: a reversed cumulative sum
    return (flip(cumsum(flip(g, ctx.axis), ctx.axis), ctx.axis),)


CUMSUM = def_composite("cumsum", "CumsumBackward0", ("x",), _cumsum_fwd, _cumsum_back,
                       attrs=("axis",), jvp=LINEAR,
                       batch_rule=lambda args, batched, axis: dispatch.composite(
                           CUMSUM, args[0], axis=axis + 1),
                       cuda_forward=npfuncs_cuda.scan_forward(_cumsum_fwd, product=False),
                       method=True, export=True)


def _scan_dtype(x, dtype):
    from .unary import cast
    from ..dtypes import to_dtype

    return x if dtype is None or to_dtype(dtype) == x.dtype else cast(x, to_dtype(dtype))


def _scan_dim(x, dim, axis):
    """``(x, dim)`` for a scan: ``axis`` is NumPy's name for ``dim``; neither given (NumPy's
    ``x.cumsum()``) scans the flattened tensor."""
    dim = axis if dim is None else dim
    if dim is None:
        from .shape import reshape

        return reshape(x, (-1,)), 0
    return x, int(dim) % max(x.ndim, 1)


@public(CUMSUM)
def cumsum(x, dim=None, *, dtype=None, axis=None):
    """Cumulative sum along an integer ``dim`` (``axis``: NumPy's name; neither: the flattened
    tensor, as NumPy) of ``x`` cast to ``dtype`` first, if given: ``out_i = sum_{j<=i} x_j``;
    the gradient is the reversed cumulative sum of ``g``."""
    x, dim = _scan_dim(_scan_dtype(dispatch.tensor_operand(x, "cumsum"), dtype), dim, axis)
    return dispatch.composite(CUMSUM, x, axis=dim)


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
                            CUMPROD, args[0], axis=axis + 1),
                        cuda_forward=npfuncs_cuda.scan_forward(_cumprod_fwd, product=True),
                        method=True, export=True)


@public(CUMPROD)
def cumprod(x, dim=None, *, dtype=None, axis=None):
    """Cumulative product along ``dim`` (``axis``: NumPy's name; neither: the flattened
    tensor): ``out_i = prod_{j<=i} x_j``. Gradient ``gx_j = sum_{i>=j} g_i out_i / x_j`` when
    no element is zero; with zeros the product is recorded as a chain of multiplications
    (exact gradient, slower)."""
    x, axis = _scan_dim(_scan_dtype(dispatch.tensor_operand(x, "cumprod"), dtype), dim, axis)
    # inside vmap the values are not readable here: the row's formula is used (nan, never a
    # wrong number, where an input is zero)
    if x.ndim == 0 or not _values_readable(x) or not _has_zero(x):
        return dispatch.composite(CUMPROD, x, axis=axis)
    from .shape import stack

    pre = (slice(None),) * axis
    acc = x[pre + (0,)]
    outs = [acc]
    for i in range(1, x.shape[axis]):
        acc = acc * x[pre + (i,)]
        outs.append(acc)
    return stack(outs, axis)


def _values_readable(x) -> bool:
    """Whether ``x``'s values can be read here: its data is an array (CPU or CUDA), not the
    placeholder a batched tensor inside vmap carries (an example shape without values)."""
    data = x._data
    return isinstance(data, np.ndarray) or dispatch.device_of(data) != "cpu"


def _has_zero(x) -> bool:
    if upper.host_read_hook is not None:  # jitgrad.compile traces: the graph exact for
        return True                       # every value, without reading this one
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
                           attrs=("k",), jvp=LINEAR, cuda_forward=npfuncs_cuda.diag_embed_forward)


def diag_embed(v, k=0):
    """A square matrix with the 1-d ``v`` on its ``k``-th diagonal; the gradient is that
    diagonal of ``g``."""
    return dispatch.composite(DIAG_EMBED, dispatch.tensor_operand(v, "diag"), k=int(k))


# --- constant pad ---------------------------------------------------------------------------
def _pad_fwd(ctx, x, pad_width, value):
    return np.pad(x, pad_width, mode="constant", constant_values=value)


def _pad_back(ctx, g):
    return (g[tuple(slice(b, b + n) for (b, _), n in zip(ctx.pad_width, ctx._next_meta[0][0]))],)


def _pad_jvp(tangents, primals, outs, pad_width, value):
    """Linear in ``x`` but affine in the padding: the tangent is padded with zeros."""
    return dispatch.composite(PAD, tangents[0], pad_width=pad_width, value=0.0)


PAD = def_composite("pad_constant", "ConstantPadNdBackward0", ("x",), _pad_fwd, _pad_back,
                    attrs=("pad_width", "value"), jvp=_pad_jvp,
                    cuda_forward=npfuncs_cuda.pad_constant_forward)


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
    # complex operands: PyTorch's conjugate-Wirtinger convention, g_i = einsum(g, conj(others))
    ops = [saved[f"x{i}"] for i in range(len(saved))]
    ops = [conj(o) if o.is_complex() else o for o in ops]
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


def _einsum_jvp(tangents, primals, outs, spec):
    """Multilinear: ``t_out = sum_i einsum(spec, x_0, ..., t_i, ..., x_n)``."""
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        term = einsum_explicit(spec, *primals[:i], t, *primals[i + 1:])
        total = term if total is None else total + term
    return total


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
                            attrs=("spec",), save=names, jvp=_einsum_jvp, complex_ok=True)
        _EINSUM_ROWS[n] = row
    ops = [dispatch.tensor_operand(o, "einsum") for o in operands]
    for s, o in zip(spec.split("->")[0].split(","), ops):
        if len(set(s)) != len(s) and o.requires_grad:
            raise NotImplementedError(
                f"einsum: the gradient of an operand with a repeated subscript ('{s}' in "
                f"'{spec}') is not supported; take the diagonal first (jitgrad.numpy.diagonal)")
    return dispatch.composite(row, *ops, spec=spec)


# --- stdtr (scipy.special's forward; the gamma family is in ops/special.py) ---------------
def _special(name):
    import scipy.special

    return getattr(scipy.special, name)


def _stdtr_fwd(ctx, x, df):
    return np.asarray(_special("stdtr")(df, x), dtype=x.dtype)


@upper.constant_maker
def _t_consts(df, like):
    """``df`` and, on the CPU, the t density's log normaliser
    ``log Gamma((df+1)/2) - log Gamma(df/2) - log(df pi) / 2`` as tensors in ``like``'s dtype
    and device (on CUDA the normaliser is None: it is computed there with ops). Constants of a
    traced program: ``df`` is the row's attribute, never a traced value."""
    dtype, device = like._data.dtype, dispatch.device_of(like._data)
    a = np.asarray(df, dtype=dtype)  # (ascontiguousarray would make a 0-d df 1-d)
    dft = dispatch.Tensor._make(dispatch.move(a if a.ndim == 0 else np.ascontiguousarray(a),
                                              device))
    if device != "cpu":
        return dft, None
    sp = _special("gammaln")
    logc = sp((df + 1.0) / 2.0) - sp(df / 2.0) - 0.5 * np.log(df * np.pi)
    return dft, dispatch.Tensor._make(np.asarray(logc, dtype=dtype))


def _t_pdf(x, df):
    """Student t density at Tensor ``x`` for a constant ``df`` array, as Tensor ops (so its own
    derivative is available for double backward)."""
    from .unary import exp, log1p

    dft, logc = _t_consts(df, x)
    if logc is None:  # the constants made on x's device
        logc = gammaln((dft + 1.0) * 0.5) - gammaln(dft * 0.5) - 0.5 * _log(dft * np.pi)
    return exp(logc - (dft + 1.0) * 0.5 * log1p(x * x / dft))


# d/dx stdtr(df, x) = t.pdf(x; df); df is a constant (the derivative of the regularized
# incomplete beta in its parameters has no closed form)
STDTR = def_composite("stdtr", "StdtrBackward0", ("x",), _stdtr_fwd,
                      lambda ctx, g, x: (g * _t_pdf(x, ctx.df),), attrs=("df",), save=("x",),
                      jvp=lambda tangents, primals, outs, df: tangents[0] * _t_pdf(primals[0], df),
                      cuda_forward=npfuncs_cuda.stdtr_forward)


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
        upper.host_read(df, "stdtr's df")
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
