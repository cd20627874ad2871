"""Op database entries for shape ops, indexing and matmul (see ``opinfo``)."""
from __future__ import annotations

import numpy as np

from ..ops import indexing, linalg, shape
from .opinfo import OpInfo, Sample


def _arr(rng, dt):
    return lambda *s: rng.standard_normal(s).astype(dt)


# --- NumPy references with PyTorch's argument conventions ---------------------------------
def _ref_squeeze(a, dim=None):
    if dim is None:
        return np.squeeze(a)
    dims = dim if isinstance(dim, tuple) else (dim,)
    dims = tuple(d % max(a.ndim, 1) for d in dims)
    return np.squeeze(a, axis=tuple(d for d in dims if a.ndim and a.shape[d] == 1))


def _ref_expand(a, sizes):
    lead = len(sizes) - a.ndim
    full = tuple(a.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return np.broadcast_to(a, full)


def _ref_flatten(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = start_dim % a.ndim, end_dim % a.ndim
    return a.reshape(a.shape[:s] + (-1,) + a.shape[e + 1:])


def _ref_t(a):
    return a.T


def _getitem_ref(a, index):
    return np.asarray(a[index])


# --- samples -------------------------------------------------------------------------------
def _view_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3, 2), (3, 4))), Sample((r(12), (-1, 3))), Sample((r(2, 3), (6,))),
            Sample((r(), (1, 1))), Sample((r(2, 3, 4), (2, -1))), Sample((r(4, 1), (-1,)))]


def _reshape_nc_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3), (6,))), Sample((r(3, 4, 2), (-1, 2))), Sample((r(2, 1), (2,)))]


def _flatten_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3, 4),)), Sample((r(2, 3, 4),), {"start_dim": 1}),
            Sample((r(2, 3, 4, 1),), {"start_dim": -3, "end_dim": -2}), Sample((r(),)),
            Sample((r(3, 2),), {"start_dim": 1, "end_dim": 1})]


def _squeeze_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(1, 3, 1, 2),)), Sample((r(1, 3, 1, 2),), {"dim": 2}),
            Sample((r(1, 3, 1, 2),), {"dim": -4}), Sample((r(1, 3, 1, 2),), {"dim": (0, -2)}),
            Sample((r(1, 3, 1, 2),), {"dim": 1}), Sample((r(),), {"dim": 0})]


def _unsqueeze_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3), 0)), Sample((r(2, 3), -1)), Sample((r(2, 3), 1)), Sample((r(), 0)),
            Sample((r(2, 3), -3))]


def _expand_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(3, 1), (2, 3, 4))), Sample((r(3, 1), (-1, 4))), Sample((r(), (2, 3))),
            Sample((r(1, 2), (3, 2, -1))), Sample((r(2, 3), (2, 3)))]


def _transpose_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3, 4), 0, 2)), Sample((r(2, 3, 4), -1, 0)), Sample((r(2, 3), 1, 1)),
            Sample((r(3), 0, -1)), Sample((r(), 0, 0))]


def _permute_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3, 4), (2, 0, 1))), Sample((r(2, 3, 4), (-1, 0, 1))),
            Sample((r(2, 3), (1, 0))), Sample((r(), ()))]


def _t_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3),)), Sample((r(3),)), Sample((r(),))]


def _cat_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3), r(4, 3))), Sample((r(2, 3), r(2, 1), r(2, 2)), {"dim": -1}),
            Sample((r(2, 1, 3), r(2, 2, 3)), {"dim": 1}), Sample((r(3),)),
            Sample((r(2), r(0), r(1)))]


def _stack_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(2, 3), r(2, 3))), Sample((r(2, 3), r(2, 3), r(2, 3)), {"dim": -1}),
            Sample((r(2, 3), r(2, 3)), {"dim": 1}), Sample((r(), r()))]


def _getitem_basic_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(5, 4), 1)), Sample((r(5, 4), -1)), Sample((r(5, 4), (1, 2))),
            Sample((r(5, 4), slice(1, None, 2))),
            Sample((r(5, 4), (slice(None, None, -1), slice(1, 3)))),
            Sample((r(5, 4), (slice(-2, 0, -2), -3))), Sample((r(3, 4), (None, Ellipsis, 1))),
            Sample((r(2, 3, 4), (Ellipsis, 0))), Sample((r(2, 3), ...)),
            Sample((r(2, 3), (slice(None), None)))]


def _getitem_adv_samples(rng, dt):
    r = _arr(rng, dt)
    x = r(3, 4)
    return [Sample((r(5, 4), [0, 0, 2])), Sample((r(5, 4), np.array([[0, 1], [1, 0]]))),
            Sample((r(5, 4), (slice(None), [3, 3, 0]))),
            Sample((r(2, 3, 4), ([0, 1], slice(None), [1, 2]))),
            Sample((r(2, 3, 4), (slice(None), [0, 2, 0], [1, 1, 3]))),
            Sample((r(2, 3, 4), (1, slice(None), [0, 3, 3]))),
            Sample((x, x > 0)), Sample((r(3, 4), (np.array([True, False, True]), 1))),
            Sample((r(3, 4), (slice(1, None), np.array([True, False, True, True])))),
            Sample((r(3), [-1, -1, 0])), Sample((r(3), True)), Sample((r(2, 2), (None, [1, 0])))]


def _matmul_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(3), r(3))), Sample((r(2, 3), r(3))), Sample((r(3), r(3, 4))),
            Sample((r(2, 3), r(3, 4))), Sample((r(2, 2, 3), r(3, 4))),
            Sample((r(3), r(2, 3, 4))), Sample((r(2, 1, 2, 3), r(3, 3, 2))),
            Sample((r(2, 3, 4), r(4))), Sample((r(4, 2, 3), r(1, 3, 2)))]


def _matmul_nc_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(3, 2), r(3, 4))), Sample((r(2, 3, 2), r(2, 3, 4)))]


# --- entries -------------------------------------------------------------------------------
OpInfo("view", lambda x, s: x.view(*s), lambda a, s: a.reshape(s), _view_samples)
OpInfo("view_tuple", shape.view, lambda a, s: a.reshape(s), _view_samples)
OpInfo("reshape", shape.reshape, lambda a, s: a.reshape(s), _view_samples)
OpInfo("reshape_noncontiguous", lambda x, s: shape.reshape(shape.transpose(x, 0, 1), s),
       lambda a, s: a.swapaxes(0, 1).reshape(s), _reshape_nc_samples)
OpInfo("flatten", shape.flatten, _ref_flatten, _flatten_samples)
OpInfo("squeeze", shape.squeeze, _ref_squeeze, _squeeze_samples)
OpInfo("unsqueeze", shape.unsqueeze, np.expand_dims, _unsqueeze_samples)
OpInfo("expand", shape.expand, _ref_expand, _expand_samples)
OpInfo("transpose", shape.transpose, lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a,
       _transpose_samples)
OpInfo("transpose_noncontiguous",
       lambda x, d0, d1: shape.transpose(shape.permute(x, -1, 0, 1), d0, d1),
       lambda a, d0, d1: np.swapaxes(np.transpose(a, (2, 0, 1)), d0, d1),
       lambda rng, dt: _transpose_samples(rng, dt)[:2])
OpInfo("permute", shape.permute, lambda a, d: np.transpose(a, d), _permute_samples)
OpInfo("t", shape.t, _ref_t, _t_samples)
OpInfo("cat", lambda *xs, dim=0: shape.cat(list(xs), dim=dim),
       lambda *xs, dim=0: np.concatenate(xs, axis=dim), _cat_samples)
OpInfo("stack", lambda *xs, dim=0: shape.stack(xs, dim=dim),
       lambda *xs, dim=0: np.stack(xs, axis=dim), _stack_samples)
OpInfo("getitem_basic", indexing.getitem, _getitem_ref, _getitem_basic_samples)
OpInfo("getitem_advanced", lambda x, i: x[i], _getitem_ref, _getitem_adv_samples)
OpInfo("getitem_noncontiguous", lambda x, i: shape.t(x)[i], lambda a, i: np.asarray(a.T[i]),
       lambda rng, dt: [Sample((_arr(rng, dt)(3, 4), (slice(None, None, 2), [0, 0, 2]))),
                        Sample((_arr(rng, dt)(3, 4), (1, slice(1, None))))])
OpInfo("matmul", linalg.matmul, np.matmul, _matmul_samples, rtol=1e-6, atol=1e-7)
OpInfo("matmul_operator", lambda a, b: a @ b, np.matmul, _matmul_samples, rtol=1e-6, atol=1e-7)
OpInfo("matmul_noncontiguous", lambda a, b: linalg.matmul(shape.transpose(a, -1, -2), b),
       lambda a, b: np.matmul(np.swapaxes(a, -1, -2), b), _matmul_nc_samples, rtol=1e-6,
       atol=1e-7)
OpInfo("dot", linalg.dot, np.dot, lambda rng, dt: [Sample((_arr(rng, dt)(4), _arr(rng, dt)(4)))])
OpInfo("mm", linalg.mm, np.matmul,
       lambda rng, dt: [Sample((_arr(rng, dt)(2, 3), _arr(rng, dt)(3, 4))),
                        Sample((_arr(rng, dt)(1, 1), _arr(rng, dt)(1, 3)))])
