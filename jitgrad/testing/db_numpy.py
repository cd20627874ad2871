"""Op-database entries for ``jitgrad.numpy``: cases generated over scalars, vectors, matrices,
broadcasting pairs and every ``axis``/``keepdims`` combination (in the spirit of HIPS
autograd's ``unary_ufunc_check``/``binary_ufunc_check``).

A case is ``_case(id, fn_name, make_args, kwargs)``: an ``OpInfo`` in the NumPy call form
(``numpy_name``) comparing ``jitgrad.numpy.<fn_name>`` with ``numpy.<fn_name>`` in float64 on the
arguments ``make_args(rng)`` (seeded by the case's id; float64 arrays become tensors that
require grad, other values pass unchanged) and gradchecking it.
"""
from __future__ import annotations

import zlib

import numpy as np

from .opinfo import OpInfo, Sample


def _resolve(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


def _namespace_call(name):
    def call(*args, **kwargs):
        import jitgrad.numpy as jnp

        return _resolve(jnp, name)(*args, **kwargs)
    return call


def _case_samples(case_id, make_args, kwargs):
    """The case's one sample, the same values for every call (seeded by its id); float arrays
    in the requested dtype (the CUDA tests run float32 too)."""
    def samples(rng, dtype):
        args = make_args(np.random.default_rng(zlib.crc32(case_id.encode())))
        return [Sample(tuple(a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                             else a for a in args), dict(kwargs))]
    return samples


def numpy_case(case_id, name, make_args, kwargs=None, grad=True, rtol=1e-7, rows=None,
               gradgrad=False, fn=None, ref=None, atol=1e-12):
    """One jitgrad.numpy case: forward in float64 against NumPy (atol 1e-12), gradcheck
    (and gradgradcheck with ``gradgrad``). ``rows``: the registry rows it runs, when not those
    of every case of ``name`` (``ROWS``); ``fn``/``ref``: calls other than
    ``jitgrad.numpy.<name>`` / ``numpy.<name>`` (e.g. an in-place function and its result)."""
    def numpy_ref(*args, **kw):
        return _resolve(np, name)(*args, **kw)

    return OpInfo(f"np.{case_id}", fn or _namespace_call(name), ref or numpy_ref,
                  _case_samples(case_id, make_args, kwargs or {}),
                  rows=ROWS.get(name, ()) if rows is None else rows,
                  differentiable=grad, gradgrad=gradgrad, fused_check=False,
                  dtypes=("float64",), rtol=rtol, atol=atol, numpy_name=name)


_case = numpy_case


def _normal(shape, scale=1.0, shift=0.0):
    return lambda rng: (rng.standard_normal(shape) * scale + shift,)


# elementwise unary: name -> map from a standard normal sample into the function's domain
UNARY_DOMAINS = {
    "sin": None, "cos": None, "tan": lambda x: 0.5 * x, "tanh": None, "sinh": None, "cosh": None,
    "exp": None, "log": lambda x: np.abs(x) + 0.5, "sqrt": lambda x: np.abs(x) + 0.5,
    "expm1": None, "log1p": lambda x: np.abs(x), "negative": None, "absolute": lambda x: x + np.sign(x) * 0.1,
    "reciprocal": lambda x: np.sign(x) * (np.abs(x) + 0.5), "arcsin": lambda x: np.tanh(x) * 0.8,
    "arccos": lambda x: np.tanh(x) * 0.8, "arctan": None, "arcsinh": None,
    "arccosh": lambda x: np.abs(x) + 1.5, "arctanh": lambda x: np.tanh(x) * 0.8, "exp2": None,
    "log2": lambda x: np.abs(x) + 0.5, "log10": lambda x: np.abs(x) + 0.5,
    "cbrt": lambda x: np.sign(x) * (np.abs(x) + 0.5), "sinc": None, "square": None,
    "deg2rad": None, "rad2deg": None, "positive": None,
    "floor": lambda x: np.round(x * 3) / 3 + 0.1, "ceil": lambda x: np.round(x * 3) / 3 + 0.1,
    "trunc": lambda x: np.round(x * 3) / 3 + 0.1, "rint": lambda x: np.round(x * 3) / 3 + 0.1,
    "sign": lambda x: x + np.sign(x) * 0.1,
}

# elementwise binary: name -> maps for (x, y)
BINARY_DOMAINS = {
    "add": (None, None), "subtract": (None, None), "multiply": (None, None),
    "divide": (None, lambda y: np.sign(y) * (np.abs(y) + 0.5)),
    "power": (lambda x: np.abs(x) + 0.5, None), "maximum": (None, lambda y: y + 0.05),
    "minimum": (None, lambda y: y + 0.05), "arctan2": (None, lambda y: y + 0.05),
    "hypot": (None, None), "logaddexp": (None, None), "logaddexp2": (None, None),
    "remainder": (lambda x: x * 3, lambda y: np.abs(y) + 1.3),
    "fmod": (lambda x: x * 3, lambda y: np.abs(y) + 1.3), "fmax": (None, lambda y: y + 0.05),
    "fmin": (None, lambda y: y + 0.05), "copysign": (lambda x: x + np.sign(x) * 0.1, None),
}

SHAPES = [(), (3,), (2, 3)]
BROADCAST_PAIRS = [((), (3,)), ((3,), ()), ((2, 3), (3,)), ((2, 1), (1, 3)), ((2, 3), (2, 3))]


def _apply(f, a):
    return a if f is None else f(a)


def unary_cases():
    out = []
    for name, dom in UNARY_DOMAINS.items():
        for shape in SHAPES:
            out.append(_case(f"{name}-{shape}", name,
                              lambda rng, s=shape, d=dom: (np.asarray(_apply(d, rng.standard_normal(s))),)))
    return out


def binary_cases():
    out = []
    for name, (dx, dy) in BINARY_DOMAINS.items():
        for sx, sy in BROADCAST_PAIRS:
            out.append(_case(f"{name}-{sx}-{sy}", name, lambda rng, sx=sx, sy=sy, dx=dx, dy=dy: (
                np.asarray(_apply(dx, rng.standard_normal(sx))),
                np.asarray(_apply(dy, rng.standard_normal(sy))))))
    return out


AXES_2D = [None, 0, 1, -1, (0, 1)]


def reduction_cases():
    out = []
    for name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "ptp"):
        for axis in AXES_2D:
            for keepdims in (False, True):
                out.append(_case(f"{name}-axis{axis}-keep{keepdims}", name, _normal((2, 3)),
                                  dict(axis=axis, keepdims=keepdims)))
        out.append(_case(f"{name}-3d-axis(0,2)", name, _normal((2, 3, 2)), dict(axis=(0, 2))))
    for name in ("var", "std"):
        for axis in AXES_2D:
            for keepdims in (False, True):
                for ddof in (0, 1):
                    out.append(_case(f"{name}-axis{axis}-keep{keepdims}-ddof{ddof}", name,
                                      _normal((2, 3)), dict(axis=axis, keepdims=keepdims, ddof=ddof)))
    for name in ("cumsum", "cumprod"):
        for axis in (None, 0, 1, -1):
            out.append(_case(f"{name}-axis{axis}", name, _normal((2, 3)), dict(axis=axis)))
    out.append(_case("cumprod-zeros", "cumprod",
                      lambda rng: (np.array([[1.5, 0.0, 2.0], [0.0, 0.0, -1.0]]),), dict(axis=1)))
    out.append(_case("prod-zeros", "prod",
                      lambda rng: (np.array([[1.5, 0.0, 2.0], [0.5, 3.0, -1.0]]),), dict(axis=1)))
    out.append(_case("average-weights", "average",
                      lambda rng: (rng.standard_normal((2, 3)),), dict(axis=1, weights=np.array([1.0, 2.0, 3.0]))))
    return out


def _x(shape):
    return _normal(shape)


def shape_cases():
    c = _case
    return [
        c("reshape", "reshape", lambda r: (r.standard_normal((2, 3)), (3, 2))),
        c("ravel", "ravel", _x((2, 3))),
        c("transpose", "transpose", _x((2, 3, 2))),
        c("transpose-axes", "transpose", lambda r: (r.standard_normal((2, 3, 2)), (1, 2, 0))),
        c("moveaxis", "moveaxis", lambda r: (r.standard_normal((2, 3, 4)), 0, -1)),
        c("moveaxis-multi", "moveaxis", lambda r: (r.standard_normal((2, 3, 4)), (0, 1), (2, 0))),
        c("swapaxes", "swapaxes", lambda r: (r.standard_normal((2, 3, 4)), 0, 2)),
        c("expand_dims", "expand_dims", lambda r: (r.standard_normal((2, 3)), 1)),
        c("expand_dims-tuple", "expand_dims", lambda r: (r.standard_normal((2, 3)), (0, 3))),
        c("squeeze", "squeeze", _x((2, 1, 3, 1))),
        c("squeeze-axis", "squeeze", lambda r: (r.standard_normal((2, 1, 3, 1)), 1)),
        c("broadcast_to", "broadcast_to", lambda r: (r.standard_normal((3,)), (2, 3))),
        c("concatenate", "concatenate", lambda r: ([r.standard_normal((2, 3)), r.standard_normal((1, 3))],)),
        c("concatenate-axis1", "concatenate", lambda r: ([r.standard_normal((2, 3)), r.standard_normal((2, 1))],), dict(axis=1)),
        c("concatenate-None", "concatenate", lambda r: ([r.standard_normal((2, 3)), r.standard_normal((2,))],), dict(axis=None)),
        c("stack", "stack", lambda r: ([r.standard_normal((2, 3)), r.standard_normal((2, 3))],), dict(axis=1)),
        c("hstack", "hstack", lambda r: ([r.standard_normal((2, 3)), r.standard_normal((2, 1))],)),
        c("hstack-1d", "hstack", lambda r: ([r.standard_normal((3,)), r.standard_normal((2,))],)),
        c("vstack", "vstack", lambda r: ([r.standard_normal((3,)), r.standard_normal((2, 3))],)),
        c("dstack", "dstack", lambda r: ([r.standard_normal((2, 3)), r.standard_normal((2, 3))],)),
        c("column_stack", "column_stack", lambda r: ([r.standard_normal((3,)), r.standard_normal((3, 2))],)),
        c("atleast_2d", "atleast_2d", _x((3,))),
        c("atleast_3d", "atleast_3d", _x((2, 3))),
        c("split", "split", lambda r: (r.standard_normal((4, 3)), 2)),
        c("split-idx", "split", lambda r: (r.standard_normal((2, 5)), [1, 3]), dict(axis=1)),
        c("array_split", "array_split", lambda r: (r.standard_normal((5, 2)), 3)),
        c("tile", "tile", lambda r: (r.standard_normal((2, 3)), (2, 1))),
        c("tile-1d", "tile", lambda r: (r.standard_normal((3,)), 2)),
        c("tile-grow", "tile", lambda r: (r.standard_normal((3,)), (2, 2))),
        c("repeat", "repeat", lambda r: (r.standard_normal((2, 3)), 2), dict(axis=1)),
        c("repeat-flat", "repeat", lambda r: (r.standard_normal((2, 3)), 2)),
        c("repeat-counts", "repeat", lambda r: (r.standard_normal((2, 3)), [1, 0, 2]), dict(axis=1)),
        c("flip", "flip", _x((2, 3))),
        c("flip-axis", "flip", lambda r: (r.standard_normal((2, 3)), 1)),
        c("fliplr", "fliplr", _x((2, 3))),
        c("flipud", "flipud", _x((2, 3))),
        c("roll", "roll", lambda r: (r.standard_normal((2, 3)), 1), dict(axis=1)),
        c("roll-flat", "roll", lambda r: (r.standard_normal((2, 3)), -2)),
        c("roll-multi", "roll", lambda r: (r.standard_normal((2, 3)), (1, 2)), dict(axis=(0, 1))),
        c("pad-constant", "pad", lambda r: (r.standard_normal((2, 3)), ((1, 0), (2, 1))),
          rows=("pad_constant",)),
        c("pad-value", "pad", lambda r: (r.standard_normal((3,)), 2), dict(constant_values=1.5),
          rows=("pad_constant",)),
        c("pad-edge", "pad", lambda r: (r.standard_normal((2, 3)), 1), dict(mode="edge")),
        c("pad-reflect", "pad", lambda r: (r.standard_normal((2, 3)), ((1, 1), (2, 2))), dict(mode="reflect")),
        c("pad-symmetric", "pad", lambda r: (r.standard_normal((3,)), 2), dict(mode="symmetric")),
        c("pad-wrap", "pad", lambda r: (r.standard_normal((3,)), (1, 2)), dict(mode="wrap")),
        c("diff", "diff", _x((2, 4))),
        c("diff-n2-axis0", "diff", lambda r: (r.standard_normal((4, 3)),), dict(n=2, axis=0)),
        c("triu", "triu", _x((3, 3))),
        c("triu-k", "triu", lambda r: (r.standard_normal((3, 4)), 1)),
        c("tril", "tril", _x((3, 3))),
        c("tril-k", "tril", lambda r: (r.standard_normal((4, 3)), -1)),
        c("diag-1d", "diag", _x((3,)), rows=("diag_embed",)),
        c("diag-1d-k", "diag", lambda r: (r.standard_normal((3,)), -1), rows=("diag_embed",)),
        c("diag-2d", "diag", _x((3, 4))),
        c("diag-2d-k", "diag", lambda r: (r.standard_normal((3, 4)), 1)),
        c("diagonal", "diagonal", lambda r: (r.standard_normal((2, 3, 3)),), dict(axis1=1, axis2=2)),
        c("trace", "trace", _x((3, 3))),
        c("trace-offset", "trace", lambda r: (r.standard_normal((3, 4)), 1)),
        c("kron", "kron", lambda r: (r.standard_normal((2, 2)), r.standard_normal((2, 3)))),
        c("kron-1d", "kron", lambda r: (r.standard_normal((2,)), r.standard_normal((3,)))),
        c("where", "where", lambda r: (np.array([[True, False, True], [False, True, True]]),
                                       r.standard_normal((2, 3)), r.standard_normal((3,)))),
        c("clip", "clip", lambda r: (r.standard_normal((2, 3)), -0.5, 0.5)),
        c("clip-arr", "clip", lambda r: (r.standard_normal((2, 3)), np.array([-0.5, -0.1, 0.0]), 0.7)),
        c("sort", "sort", _x((2, 4))),
        c("sort-axis0", "sort", lambda r: (r.standard_normal((3, 2)),), dict(axis=0)),
        c("sort-None", "sort", lambda r: (r.standard_normal((3, 2)),), dict(axis=None)),
        c("partition", "partition", lambda r: (r.standard_normal((2, 5)), 2)),
        c("take", "take", lambda r: (r.standard_normal((2, 3)), np.array([0, 4, 4]))),
        c("take-axis", "take", lambda r: (r.standard_normal((2, 3)), np.array([2, 0, 2])), dict(axis=1)),
        c("take_along_axis", "take_along_axis", lambda r: (r.standard_normal((2, 3)),
                                                           np.array([[2, 0], [1, 1]]), 1)),
        c("cross", "cross", lambda r: (r.standard_normal((2, 3)), r.standard_normal((3,)))),
    ]


def product_cases():
    c = _case
    return [
        c("dot-vv", "dot", lambda r: (r.standard_normal(3), r.standard_normal(3))),
        c("dot-mv", "dot", lambda r: (r.standard_normal((2, 3)), r.standard_normal(3))),
        c("dot-mm", "dot", lambda r: (r.standard_normal((2, 3)), r.standard_normal((3, 2)))),
        c("dot-3d", "dot", lambda r: (r.standard_normal((2, 2, 3)), r.standard_normal((2, 3, 2)))),
        c("dot-scalar", "dot", lambda r: (r.standard_normal(()), r.standard_normal((2, 3)))),
        c("matmul-batch", "matmul", lambda r: (r.standard_normal((2, 2, 3)), r.standard_normal((3, 2)))),
        c("vdot", "vdot", lambda r: (r.standard_normal((2, 3)), r.standard_normal((2, 3)))),
        c("inner", "inner", lambda r: (r.standard_normal((2, 3)), r.standard_normal((4, 3)))),
        c("outer", "outer", lambda r: (r.standard_normal(3), r.standard_normal((2, 2)))),
        c("tensordot", "tensordot", lambda r: (r.standard_normal((2, 3, 4)), r.standard_normal((3, 4, 2)))),
        c("tensordot-axes", "tensordot", lambda r: (r.standard_normal((2, 3, 4)), r.standard_normal((4, 2))),
          dict(axes=([2], [0]))),
        c("tensordot-pairs", "tensordot", lambda r: (r.standard_normal((2, 3, 4)), r.standard_normal((3, 2))),
          dict(axes=([0, 1], [1, 0]))),
        c("einsum-mm", "einsum", lambda r: ("ij,jk->ik", r.standard_normal((2, 3)), r.standard_normal((3, 2)))),
        c("einsum-implicit", "einsum", lambda r: ("ij,jk", r.standard_normal((2, 3)), r.standard_normal((3, 2)))),
        c("einsum-sum-only-in-one", "einsum", lambda r: ("ij,j->", r.standard_normal((2, 3)), r.standard_normal(3))),
        c("einsum-broadcast-letter", "einsum", lambda r: ("ij,k->ik", r.standard_normal((2, 3)), r.standard_normal(2))),
        c("einsum-ellipsis", "einsum", lambda r: ("...ij,...jk->...ik", r.standard_normal((2, 2, 3)),
                                                   r.standard_normal((2, 3, 2)))),
        c("einsum-3ops", "einsum", lambda r: ("i,ij,j->", r.standard_normal(2), r.standard_normal((2, 3)),
                                              r.standard_normal(3))),
        c("einsum-transpose", "einsum", lambda r: ("ij->ji", r.standard_normal((2, 3)))),
    ]


def _spd(rng, n=3, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def linalg_cases():
    c = _case
    return [
        c("inv", "linalg.inv", lambda r: (_spd(r) + r.standard_normal((3, 3)) * 0.3,)),
        c("inv-batch", "linalg.inv", lambda r: (_spd(r, 2, (2,)),)),
        c("det", "linalg.det", lambda r: (r.standard_normal((3, 3)) + 2 * np.eye(3),)),
        c("det-batch", "linalg.det", lambda r: (r.standard_normal((2, 2, 2)) + 2 * np.eye(2),)),
        c("slogdet", "linalg.slogdet", lambda r: (r.standard_normal((3, 3)) + 2 * np.eye(3),)),
        c("solve-vec", "linalg.solve", lambda r: (_spd(r), r.standard_normal(3))),
        c("solve-mat", "linalg.solve", lambda r: (_spd(r), r.standard_normal((3, 2)))),
        c("norm", "linalg.norm", _x((2, 3))),
        c("norm-axis", "linalg.norm", lambda r: (r.standard_normal((2, 3)),), dict(axis=1)),
        c("norm-ord1", "linalg.norm", lambda r: (r.standard_normal(4),), dict(ord=1)),
        c("norm-ord3-keep", "linalg.norm", lambda r: (r.standard_normal((2, 3)),), dict(ord=3, axis=0, keepdims=True)),
        c("norm-inf", "linalg.norm", lambda r: (r.standard_normal(4),), dict(ord=np.inf)),
        c("norm-fro", "linalg.norm", lambda r: (r.standard_normal((2, 3)),), dict(ord="fro")),
        c("norm-mat1", "linalg.norm", lambda r: (r.standard_normal((2, 3)),), dict(ord=1)),
        c("norm-matinf", "linalg.norm", lambda r: (r.standard_normal((2, 3)),), dict(ord=np.inf)),
        c("matrix_power", "linalg.matrix_power", lambda r: (r.standard_normal((2, 2)), 3)),
        c("matrix_power-neg", "linalg.matrix_power", lambda r: (_spd(r, 2), -2)),
        c("norm-2", "linalg.norm", lambda r: (r.standard_normal((2, 3)),), dict(ord=2)),
        c("norm-nuc-keep", "linalg.norm", lambda r: (r.standard_normal((3, 2)),), dict(ord="nuc", keepdims=True)),
        c("norm-m2-axes", "linalg.norm", lambda r: (r.standard_normal((2, 3, 2)),), dict(ord=-2, axis=(2, 0))),
        c("svdvals", "linalg.svd", lambda r: (r.standard_normal((3, 2)),), dict(compute_uv=False)),
        c("pinv-tall", "linalg.pinv", _x((4, 2))),
        c("pinv-wide", "linalg.pinv", _x((2, 3))),
        c("pinv-square", "linalg.pinv", lambda r: (_spd(r),)),
        c("fftshift", "fft.fftshift", _x((3, 4))),
        c("fftshift-axes", "fft.fftshift", lambda r: (r.standard_normal((3, 4)),), dict(axes=1)),
        c("ifftshift", "fft.ifftshift", _x((5,))),
        c("fftfreq", "fft.fftfreq", lambda r: (8, 0.1)),
        c("qr-tall", "linalg.qr", _x((4, 3))),
        c("qr-square", "linalg.qr", _x((3, 3))),
        c("qr-wide", "linalg.qr", _x((2, 4))),
        c("qr-batch", "linalg.qr", _x((2, 3, 2))),
        c("qr-r", "linalg.qr", lambda r: (r.standard_normal((4, 2)),), dict(mode="r")),
        c("qr-complete-wide", "linalg.qr", lambda r: (r.standard_normal((2, 3)),), dict(mode="complete")),
        c("linalg.trace", "linalg.trace", lambda r: (r.standard_normal((2, 3, 3)),), dict(offset=1)),
        c("linalg.diagonal", "linalg.diagonal", lambda r: (r.standard_normal((2, 3, 4)),), dict(offset=-1)),
        c("linalg.cross", "linalg.cross", lambda r: (r.standard_normal((2, 3)), r.standard_normal((3,)))),
        c("linalg.vecdot", "linalg.vecdot", lambda r: (r.standard_normal((2, 3)), r.standard_normal((3,)))),
        c("linalg.outer", "linalg.outer", lambda r: (r.standard_normal(3), r.standard_normal(2))),
        c("linalg.matmul", "linalg.matmul", lambda r: (r.standard_normal((2, 2, 3)), r.standard_normal((3, 2)))),
        c("linalg.tensordot", "linalg.tensordot", lambda r: (r.standard_normal((2, 3)), r.standard_normal((3, 2))),
          dict(axes=1)),
        c("multi_dot", "linalg.multi_dot", lambda r: ([r.standard_normal((2, 3)), r.standard_normal((3, 3)),
                                                       r.standard_normal((3, 2))],)),
    ]


#: the registry rows each jitgrad.numpy function's forward runs on every case (filled below)
ROWS: dict = {
    'sin': ('sin',), 'cos': ('cos',), 'tan': ('tan',), 'tanh': ('tanh',), 'sinh': ('sinh',),
    'cosh': ('cosh',), 'exp': ('exp',), 'log': ('log',), 'sqrt': ('sqrt',), 'expm1': ('expm1',),
    'log1p': ('log1p',), 'negative': ('neg',), 'absolute': ('abs',), 'reciprocal': ('reciprocal',),
    'arcsin': ('arcsin',), 'arccos': ('arccos',), 'arctan': ('arctan',), 'arcsinh': ('arcsinh',),
    'arccosh': ('arccosh',), 'arctanh': ('arctanh',), 'exp2': ('exp2',), 'log2': ('log2',),
    'log10': ('log10',), 'cbrt': ('cbrt',), 'sinc': ('sinc',), 'square': ('pow_square',),
    'deg2rad': ('mul',), 'rad2deg': ('mul',), 'positive': ('clone',), 'floor': ('floor',),
    'ceil': ('ceil',), 'trunc': ('trunc',), 'rint': ('rint',), 'sign': ('sign',), 'add': ('add',),
    'subtract': ('sub',), 'multiply': ('mul',), 'divide': ('div',), 'power': ('pow',),
    'maximum': ('maximum',), 'minimum': ('minimum',), 'arctan2': ('arctan2',), 'hypot': ('hypot',),
    'logaddexp': ('logaddexp',), 'logaddexp2': ('logaddexp2',), 'remainder': ('remainder',),
    'fmod': ('fmod',), 'fmax': ('maximum', 'where'), 'fmin': ('minimum', 'where'),
    'copysign': ('copysign',), 'ptp': ('sub',), 'var': ('var',), 'std': ('std',),
    'cumsum': ('cumsum',), 'average': ('add', 'div', 'mul', 'sum_dim', 'view'),
    'reshape': ('view',), 'ravel': ('view',), 'transpose': ('permute',), 'moveaxis': ('permute',),
    'swapaxes': ('transpose',), 'expand_dims': ('unsqueeze',), 'broadcast_to': ('expand',),
    'concatenate': ('cat',), 'stack': ('stack',), 'hstack': ('cat',), 'vstack': ('cat', 'view'),
    'dstack': ('cat', 'view'), 'column_stack': ('cat', 'view'), 'atleast_2d': ('view',),
    'atleast_3d': ('view',), 'split': ('getitem_slice',), 'array_split': ('getitem_slice',),
    'tile': ('getitem_advanced', 'view'), 'repeat': ('getitem_advanced',), 'flip': ('flip',),
    'fliplr': ('flip',), 'flipud': ('flip',), 'roll': ('roll',),
    'diff': ('getitem_slice', 'sub'), 'triu': ('mul',), 'tril': ('mul',),
    'diagonal': ('diagonal',), 'trace': ('diagonal', 'sum_dim'), 'kron': ('mul', 'view'),
    'where': ('where',), 'sort': ('argsort', '_take_along_dim'), 'partition': ('gather',),
    'take': ('getitem_advanced',), 'take_along_axis': ('gather',),
    'cross': ('getitem_select', 'mul', 'permute', 'stack', 'sub'), 'matmul': ('matmul_bmm',),
    'vdot': ('matmul_dot', 'view'), 'inner': ('einsum2',), 'outer': ('mul', 'unsqueeze', 'view'),
    'tensordot': ('einsum2',), 'linalg.inv': ('inv',), 'linalg.det': ('det',),
    'linalg.slogdet': ('slogdet',), 'linalg.solve': ('solve',),
    'linalg.matrix_power': ('matmul_mm',), 'linalg.svd': ('svdvals',), 'linalg.pinv': ('pinv',),
    'fft.fftshift': ('roll',), 'fft.ifftshift': ('roll',),
    'linalg.qr': ('qr',), 'linalg.trace': ('diagonal', 'sum_dim'),
    'linalg.diagonal': ('diagonal',),
    'linalg.cross': ('getitem_select', 'mul', 'permute', 'stack', 'sub'),
    'linalg.vecdot': ('mul', 'sum_dim'), 'linalg.outer': ('mul', 'unsqueeze', 'view'),
    'linalg.matmul': ('matmul_bmm',), 'linalg.tensordot': ('einsum2',),
    'linalg.multi_dot': ('matmul_mm',), 'rollaxis': ('permute',), 'rot90': ('flip',),
    'dsplit': ('getitem_slice',), 'nan_to_num': ('where',),
    'gradient': ('cat', 'div', 'getitem_slice', 'sub'), 'cumulative_sum': ('cumsum',),
    'cumulative_prod': ('cumprod',), 'unstack': ('getitem_select',),
    'broadcast_arrays': ('expand',), 'meshgrid': ('expand', 'view'), 'nextafter': ('add',),
    'linalg.vector_norm': ('permute', 'view'), 'linalg.matrix_norm': ('sum_dim',),
}


def extra_cases():
    c = _case
    return [
        c("rollaxis", "rollaxis", lambda r: (r.standard_normal((2, 3, 4)), 2)),
        c("rollaxis-start", "rollaxis", lambda r: (r.standard_normal((2, 3, 4)), 0, 2)),
        c("rot90", "rot90", _x((2, 3))),
        c("rot90-k2", "rot90", lambda r: (r.standard_normal((2, 3)), 2)),
        c("rot90-k3-axes", "rot90", lambda r: (r.standard_normal((2, 3, 2)), 3, (1, 2))),
        c("dsplit", "dsplit", lambda r: (r.standard_normal((2, 2, 4)), 2)),
        c("nan_to_num", "nan_to_num", lambda r: (np.array([1.0, np.nan, np.inf, -np.inf, -2.0]),)),
        c("gradient-1d", "gradient", _x((5,))),
        c("gradient-2d", "gradient", lambda r: (r.standard_normal((3, 4)), 0.5)),
        c("gradient-axis", "gradient", lambda r: (r.standard_normal((3, 4)),), dict(axis=1)),
        c("gradient-2pts", "gradient", _x((2,))),
        c("angle", "angle", lambda r: (r.standard_normal(4),)),
        c("imag", "imag", _x((2, 2))),
        c("real_if_close", "real_if_close", _x((2, 2))),
    ] + array_api_cases()


def array_api_cases():
    """The Array API spellings and keywords (NumPy 2 has the same names as the reference)."""
    c = _case
    return [
        c("cumulative_sum", "cumulative_sum", _x((2, 3)), dict(axis=1)),
        c("cumulative_sum-initial", "cumulative_sum", _x((2, 3)), dict(axis=0, include_initial=True)),
        c("cumulative_sum-1d", "cumulative_sum", _x((4,)), dict(include_initial=True)),
        c("cumulative_prod", "cumulative_prod", _x((2, 3)), dict(axis=1)),
        c("cumulative_prod-initial", "cumulative_prod", _x((3,)), dict(include_initial=True)),
        c("unstack", "unstack", _x((2, 3)), dict(axis=1)),
        c("broadcast_arrays", "broadcast_arrays", lambda r: (r.standard_normal((2, 1)), r.standard_normal(3))),
        c("meshgrid-xy", "meshgrid", lambda r: (r.standard_normal(3), r.standard_normal(2), r.standard_normal(4))),
        c("meshgrid-ij", "meshgrid", lambda r: (r.standard_normal(3), r.standard_normal(2)), dict(indexing="ij")),
        c("nextafter", "nextafter", lambda r: (r.standard_normal((2, 3)), r.standard_normal(3))),
        c("std-correction", "std", _x((3, 4)), dict(axis=0, correction=1)),
        c("var-correction", "var", _x((3, 4)), dict(axis=1, correction=1.5, keepdims=True)),
        c("clip-min-max", "clip", _x((2, 3)), dict(min=-0.4, max=0.3)),
        c("reshape-copy", "reshape", lambda r: (r.standard_normal((2, 3)), (3, 2)), dict(copy=True)),
        c("vector_norm-axes-ord3", "linalg.vector_norm", _x((2, 3, 2)), dict(axis=(0, 2), ord=3, keepdims=True)),
        c("vector_norm-all-inf", "linalg.vector_norm", _x((2, 3)), dict(ord=np.inf)),
        c("vector_norm-keep", "linalg.vector_norm", _x((2, 3)), dict(keepdims=True)),
        c("matrix_norm-nuc", "linalg.matrix_norm", _x((2, 3, 2)), dict(ord="nuc")),
        c("matrix_norm-inf", "linalg.matrix_norm", _x((3, 2)), dict(ord=np.inf, keepdims=True)),
    ]


#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = (unary_cases() + binary_cases() + reduction_cases() + shape_cases()
                 + product_cases() + linalg_cases() + extra_cases())
