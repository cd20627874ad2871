"""Op database entries for shape ops, indexing and matmul (see ``opinfo``)."""
from __future__ import annotations

import numpy as np

from ..ops import indexing, linalg, roll, scatter, scatter_reduce, shape
from .opinfo import Sample, registrar

#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = []
_entry = registrar(ENTRIES)


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
_entry("view", lambda x, s: x.view(*s), lambda a, s: a.reshape(s), _view_samples, rows=("view",))
_entry("view_tuple", shape.view, lambda a, s: a.reshape(s), _view_samples, rows=("view",))
_entry("reshape", shape.reshape, lambda a, s: a.reshape(s), _view_samples, rows=("view",))
_entry("reshape_noncontiguous", lambda x, s: shape.reshape(shape.transpose(x, 0, 1), s),
       lambda a, s: a.swapaxes(0, 1).reshape(s), _reshape_nc_samples,
       rows=("reshape_copy", "transpose", "view"))
_entry("flatten", shape.flatten, _ref_flatten, _flatten_samples, rows=("view",))
_entry("squeeze", shape.squeeze, _ref_squeeze, _squeeze_samples,
       rows=("squeeze", "squeeze_dim", "squeeze_dims"))
_entry("unsqueeze", shape.unsqueeze, np.expand_dims, _unsqueeze_samples, rows=("unsqueeze",))
_entry("expand", shape.expand, _ref_expand, _expand_samples, rows=("expand",))
_entry("transpose", shape.transpose, lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a,
       _transpose_samples, rows=("transpose",))
_entry("transpose_noncontiguous",
       lambda x, d0, d1: shape.transpose(shape.permute(x, -1, 0, 1), d0, d1),
       lambda a, d0, d1: np.swapaxes(np.transpose(a, (2, 0, 1)), d0, d1),
       lambda rng, dt: _transpose_samples(rng, dt)[:2], rows=("permute", "transpose"))
_entry("permute", shape.permute, lambda a, d: np.transpose(a, d), _permute_samples,
       rows=("permute",))
_entry("t", shape.t, _ref_t, _t_samples, rows=("t",))
_entry("cat", lambda *xs, dim=0: shape.cat(list(xs), dim=dim),
       lambda *xs, dim=0: np.concatenate(xs, axis=dim), _cat_samples, rows=("cat",))
_entry("stack", lambda *xs, dim=0: shape.stack(xs, dim=dim),
       lambda *xs, dim=0: np.stack(xs, axis=dim), _stack_samples, rows=("stack",))
_entry("getitem_basic", indexing.getitem, _getitem_ref, _getitem_basic_samples,
       rows=("getitem_alias", "getitem_select", "getitem_slice", "getitem_unsqueeze"))
_entry("getitem_advanced", lambda x, i: x[i], _getitem_ref, _getitem_adv_samples,
       rows=("getitem_advanced",), gradient_rows=("index_backward",))
_entry("getitem_noncontiguous", lambda x, i: shape.t(x)[i], lambda a, i: np.asarray(a.T[i]),
       lambda rng, dt: [Sample((_arr(rng, dt)(3, 4), (slice(None, None, 2), [0, 0, 2]))),
                        Sample((_arr(rng, dt)(3, 4), (1, slice(1, None))))],
       rows=("getitem_advanced", "getitem_slice", "t"))
_entry("matmul", linalg.matmul, np.matmul, _matmul_samples, rtol=1e-6, atol=1e-7,
       rows=("matmul_bmm", "matmul_dot", "matmul_mm", "matmul_mv"))
_entry("matmul_operator", lambda a, b: a @ b, np.matmul, _matmul_samples, rtol=1e-6, atol=1e-7,
       rows=("matmul_bmm", "matmul_dot", "matmul_mm", "matmul_mv"))
_entry("matmul_noncontiguous", lambda a, b: linalg.matmul(shape.transpose(a, -1, -2), b),
       lambda a, b: np.matmul(np.swapaxes(a, -1, -2), b), _matmul_nc_samples, rtol=1e-6,
       atol=1e-7, rows=("matmul_bmm", "matmul_mm", "transpose"))
_entry("dot", linalg.dot, np.dot, lambda rng, dt: [Sample((_arr(rng, dt)(4), _arr(rng, dt)(4)))],
       rows=("matmul_dot",))
_entry("mm", linalg.mm, np.matmul,
       lambda rng, dt: [Sample((_arr(rng, dt)(2, 3), _arr(rng, dt)(3, 4))),
                        Sample((_arr(rng, dt)(1, 1), _arr(rng, dt)(1, 3)))], rows=("matmul_mm",))


# --- diagonal / narrow / select and the index family ---------------------------------------
def _diagonal_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(3, 4),)), Sample((r(3, 4), 1)), Sample((r(3, 4), -2)),
            Sample((r(2, 3, 4), 1, 0, 2)), Sample((r(2, 3, 4), 0, -1, 1)), Sample((r(3, 4), 5))]


def _narrow_ref(a, dim, start, length):
    dim %= a.ndim
    start += a.shape[dim] if start < 0 else 0
    return a[(slice(None),) * dim + (slice(start, start + length),)]


def _gather_ref(a, dim, index):
    box = tuple(slice(None) if k == dim else slice(0, n) for k, n in enumerate(index.shape))
    return np.take_along_axis(a[box], index, axis=dim)


def _index_add_ref(a, dim, index, source, alpha=1):
    out = a.copy()
    np.add.at(out, (slice(None),) * dim + (index,), source * alpha)
    return out


def _scatter_add_ref(a, dim, index, src):
    out = a.copy()
    NumPyOps.scatter_add_(out, dim, index, src)
    return out


def _scatter_coords(dim, index):
    dim = dim % index.ndim
    return tuple(index if k == dim else np.arange(n).reshape(
        (1,) * k + (n,) + (1,) * (index.ndim - k - 1)) for k, n in enumerate(index.shape))


def _scatter_ref(a, dim, index, src, reduce=None):
    """PyTorch's scatter with the last write (in C order of ``index``) winning."""
    out = a.copy()
    co = [c.reshape(-1) for c in np.broadcast_arrays(*_scatter_coords(dim, index))]
    vals = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src[
        tuple(slice(0, n) for n in index.shape)]
    for k, v in enumerate(vals.reshape(-1)):
        at = tuple(c[k] for c in co)
        out[at] = v if reduce is None else out[at] + v if reduce == "add" else out[at] * v
    return out


def _scatter_reduce_ref(a, dim, index, src, reduce, include_self=True):
    out = a.copy()
    groups: dict = {}
    co = [c.reshape(-1) for c in np.broadcast_arrays(*_scatter_coords(dim, index))]
    vals = src[tuple(slice(0, n) for n in index.shape)].reshape(-1)
    for k, v in enumerate(vals):
        groups.setdefault(tuple(c[k] for c in co), []).append(v)
    fn = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    for at, vs in groups.items():
        out[at] = fn(([a[at]] if include_self else []) + vs)
    return out


def _index_put_ref(a, index, values, accumulate=False):
    out = a.copy()
    NumPyOps.index_put_(out, (index,), values, accumulate)
    return out


def _index_samples(rng, dt):
    r = _arr(rng, dt)
    return {
        "take": [Sample((r(3, 4), np.array([0, 5, 5, -1]))),
                 Sample((r(4), np.array([[1, 1], [3, 0]])))],
        "index_select": [Sample((r(4, 3), 0, np.array([3, 0, 3]))),
                         Sample((r(2, 4, 3), -2, np.array([1, 1])))],
        "gather": [Sample((r(3, 4), 1, np.array([[0, 0], [3, 1], [2, 2]]))),
                   Sample((r(3, 4), 0, np.array([[2, 1, 0, 2], [0, 0, 1, 1]]))),
                   Sample((r(2, 3, 2), 2, np.array([[[1], [0]]])))],
        "masked_fill": [Sample((r(3, 4), np.arange(12).reshape(3, 4) % 3 == 0, 2.5)),
                        Sample((r(3, 4), np.array([True, False, False, True]), r())),
                        Sample((r(4), np.array([[True], [False]]), -1.0))],
        "index_add": [Sample((r(4, 3), 0, np.array([1, 3, 1]), r(3, 3))),
                      Sample((r(2, 4), 1, np.array([0, 0]), r(2, 2)), {"alpha": 2.0})],
        "scatter_add": [Sample((r(3, 4), 0, np.array([[2, 0, 2, 2], [0, 0, 1, 2]]), r(2, 4))),
                        Sample((r(3, 4), 1, np.array([[3, 3], [0, 1]]), r(3, 3)))],
        "index_put": [Sample((r(5), np.array([4, 0, 4]), r(3))),
                      Sample((r(5), np.array([4, 0, 4]), r(3)), {"accumulate": True}),
                      Sample((r(3, 2), np.array([True, False, True]), r(2))),
                      Sample((r(4, 2), np.array([[0, 3], [3, 3]]), r(2, 2, 2)))],
        "scatter": [Sample((r(3, 4), 0, np.array([[2, 0, 2, 1], [0, 1, 1, 2]]), r(2, 4))),
                    # repeated targets: the last write wins, the others get no gradient
                    Sample((r(3, 4), 0, np.array([[2, 0, 2, 2], [2, 0, 1, 2]]), r(2, 4))),
                    Sample((r(3, 4), 1, np.array([[3, 3], [0, 1]]), r(3, 3))),
                    Sample((r(2, 3, 2), -1, np.array([[[1], [0]]]), r(1, 2, 2)))],
        "scatter_value": [Sample((r(3, 4), 0, np.array([[2, 0, 2, 1], [0, 1, 1, 2]]), 2.5)),
                          Sample((r(3, 4), 1, np.array([[3, 3], [0, 1]]), -1.0))],
        "scatter_legacy": [Sample((r(3, 4), 0, np.array([[2, 0, 2, 2], [0, 0, 1, 2]]), r(2, 4)),
                                  {"reduce": "add"}),
                           Sample((r(3, 4), 1, np.array([[3, 3], [0, 1]]), r(3, 3)),
                                  {"reduce": "multiply"}),
                           Sample((r(3, 4), 1, np.array([[3, 3], [0, 1]]), 1.5),
                                  {"reduce": "multiply"})],
    }


def _scatter_reduce_samples(reduce):
    def samples(rng, dt):
        r = _arr(rng, dt)
        idx0 = np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]])
        out = []
        for inc in (True, False):
            out += [Sample((r(2, 4), 0, idx0, r(3, 4), reduce), {"include_self": inc}),
                    Sample((r(3, 2), 1, np.array([[1, 1, 0], [0, 0, 0]]), r(3, 4), reduce),
                           {"include_self": inc})]
        if reduce == "prod":  # zeros: one per element of x and of src (the exact-zero path)
            x, src = r(2, 4), r(3, 4)
            x[0, 1] = 0.0
            src[1, 2] = src[2, 0] = 0.0
            out.append(Sample((x, 0, idx0, src, reduce)))
        return out
    return samples


def _samples_of(name):
    return lambda rng, dt: _index_samples(rng, dt)[name]


_entry("diagonal", shape.diagonal, lambda a, o=0, d1=0, d2=1: np.diagonal(a, o, d1, d2),
       _diagonal_samples, rows=("diagonal",), gradient_rows=("diagonal_backward",))
_entry("narrow", shape.narrow, _narrow_ref,
       lambda rng, dt: [Sample((_arr(rng, dt)(3, 4), 1, 1, 2)),
                        Sample((_arr(rng, dt)(3, 4), 0, -2, 2)),
                        Sample((_arr(rng, dt)(3, 4), -1, 4, 0))], rows=("getitem_slice",))
def _roll_samples(rng, dt):
    r = _arr(rng, dt)
    return [Sample((r(5), 2)), Sample((r(2, 3), -1)), Sample((r(2, 3), (1, -2), (0, 1))),
            Sample((r(2, 3), 4, -1)), Sample((r(), 1, 0))]


def _roll_ref(a, shifts, dims=None):
    return np.roll(a, shifts, axis=dims if a.ndim else None)


_entry("roll", roll.roll, _roll_ref, _roll_samples, rows=("roll",))
_entry("select", shape.select, lambda a, d, i: a[(slice(None),) * (d % a.ndim) + (i,)],
       lambda rng, dt: [Sample((_arr(rng, dt)(3, 4), 1, -1)), Sample((_arr(rng, dt)(3, 4), 0, 2))],
       rows=("getitem_select",))
_entry("take", indexing.take, lambda a, i: a.reshape(-1)[i], _samples_of("take"), rows=("take",),
       gradient_rows=("put",))
_entry("index_select", scatter.index_select, lambda a, d, i: np.take(a, i, axis=d),
       _samples_of("index_select"), rows=("index_select",))
_entry("gather", scatter.gather, _gather_ref, _samples_of("gather"), rows=("gather",))
_entry("masked_fill", scatter.masked_fill, lambda a, m, v: np.where(m, v, a).astype(a.dtype),
       _samples_of("masked_fill"), rows=("masked_fill",))
_entry("index_add", scatter.index_add, _index_add_ref, _samples_of("index_add"),
       rows=("index_add",))
_entry("scatter_add", scatter.scatter_add, _scatter_add_ref, _samples_of("scatter_add"),
       rows=("scatter_add",))
_entry("scatter", scatter_reduce.scatter, _scatter_ref, _samples_of("scatter"),
       rows=("scatter",), gradient_rows=("scatter_value",))
_entry("scatter_value", scatter_reduce.scatter, _scatter_ref, _samples_of("scatter_value"),
       rows=("scatter_value",))
# reduce="add"/"multiply": no derivative (as in PyTorch; tests/ops/test_scatter_reduce.py)
_entry("scatter_legacy", scatter_reduce.scatter, _scatter_ref, _samples_of("scatter_legacy"),
       rows=("scatter_reduce_legacy",), differentiable=False)
for _red in scatter_reduce.REDUCTIONS:
    _entry(f"scatter_reduce_{_red}", scatter_reduce.scatter_reduce, _scatter_reduce_ref,
           _scatter_reduce_samples(_red), rows=("scatter_reduce",))
_entry("index_put", lambda x, i, v, accumulate=False: indexing.index_put(x, (i,), v, accumulate),
       _index_put_ref, _samples_of("index_put"), rows=("index_put",))


# --- views and in-place ops: the same code on np.ndarray and on Tensor ---------------------
class NumPyOps:
    """PyTorch's in-place and view methods spelled for NumPy arrays, so that one function
    ``case(m, ...)`` runs on NumPy (``m = NumPyOps``, the reference) and on jitgrad
    (``m = TensorOps``); views are NumPy views, in-place ops write through them."""

    zeros = staticmethod(lambda *shape: np.zeros(shape))
    exp = staticmethod(np.exp)
    t = staticmethod(np.transpose)
    view = staticmethod(lambda a, *shape: _np_view(a.reshape(shape), a))
    transpose = staticmethod(np.swapaxes)
    permute = staticmethod(lambda a, *dims: np.transpose(a, dims))
    unsqueeze = staticmethod(np.expand_dims)
    squeeze = staticmethod(np.squeeze)
    narrow = staticmethod(_narrow_ref)
    select = staticmethod(lambda a, d, i: a[(slice(None),) * d + (i,)])

    @staticmethod
    def diagonal(a, offset=0):
        """A writable diagonal of a C-contiguous 2-d array (``np.diagonal`` is read-only)."""
        n, m = a.shape
        if offset >= 0:
            start, length = offset, min(n, m - offset)
        else:
            start, length = -offset * m, min(n + offset, m)
        return _np_view(a.reshape(-1)[start::m + 1][:max(length, 0)], a)

    add_ = staticmethod(lambda a, o: np.add(a, o, out=a))
    sub_ = staticmethod(lambda a, o: np.subtract(a, o, out=a))
    mul_ = staticmethod(lambda a, o: np.multiply(a, o, out=a))
    div_ = staticmethod(lambda a, o: np.true_divide(a, o, out=a))
    pow_ = staticmethod(lambda a, o: np.power(a, o, out=a))
    exp_ = staticmethod(lambda a: np.exp(a, out=a))
    log_ = staticmethod(lambda a: np.log(a, out=a))
    sin_ = staticmethod(lambda a: np.sin(a, out=a))
    cos_ = staticmethod(lambda a: np.cos(a, out=a))
    tanh_ = staticmethod(lambda a: np.tanh(a, out=a))
    sqrt_ = staticmethod(lambda a: np.sqrt(a, out=a))
    abs_ = staticmethod(lambda a: np.abs(a, out=a))
    neg_ = staticmethod(lambda a: np.negative(a, out=a))
    relu_ = staticmethod(lambda a: np.maximum(a, 0, out=a))
    clamp_ = staticmethod(lambda a, lo, hi: np.clip(a, lo, hi, out=a))

    @staticmethod
    def sigmoid_(a):
        a[...] = 1 / (1 + np.exp(-a))
        return a

    @staticmethod
    def zero_(a):
        a[...] = 0
        return a

    @staticmethod
    def fill_(a, v):
        a[...] = v
        return a

    @staticmethod
    def copy_(a, src):
        a[...] = src
        return a

    @staticmethod
    def masked_fill_(a, mask, v):
        np.copyto(a, v, where=mask)
        return a

    @staticmethod
    def index_add_(a, dim, index, src):
        np.add.at(a, (slice(None),) * dim + (index,), src)
        return a

    @staticmethod
    def index_put_(a, indices, v, accumulate=False):
        if accumulate:
            np.add.at(a, tuple(indices), v)
        else:
            a[tuple(indices)] = v
        return a

    @staticmethod
    def scatter_add_(a, dim, index, src):
        coords = tuple(index if k == dim else np.arange(n).reshape(
            (1,) * k + (n,) + (1,) * (index.ndim - k - 1)) for k, n in enumerate(index.shape))
        np.add.at(a, coords, src[tuple(slice(0, n) for n in index.shape)])
        return a


def _np_view(v, a):
    assert np.shares_memory(v, a), "the NumPy reference must be a view"
    return v


class TensorOps:
    """The jitgrad side of ``NumPyOps``: the same names as Tensor methods."""

    @staticmethod
    def zeros(*shape):
        from ..ops.creation import zeros

        return zeros(*shape, dtype="float64")

    def __getattr__(self, name):
        return lambda a, *args, **kwargs: getattr(a, name)(*args, **kwargs)


TensorOps = TensorOps()


def _inplace_case(body):
    """An OpInfo pair (fn, ref) running ``body(m, *args)`` on jitgrad and on NumPy."""
    return (lambda *args: body(TensorOps, *args),
            lambda *args: body(NumPyOps, *(a.copy() if isinstance(a, np.ndarray) else a
                                           for a in args)))


def _case_view_mul(m, x, v):  # in-place on a strided view of a transposed non-leaf
    y = x * 1.0
    m.mul_(m.t(y)[::2], v)
    return y


def _case_setitem_repeated(m, x, v):  # last write wins on repeated indices; += is buffered
    y = x * 1.0
    y[[3, 0, 3]] = v
    y[[1, 1]] += v[:2]
    return y


def _case_setitem_mask(m, x, v):
    y = x * 1.0
    y[np.array([[True, False, True], [False, False, True]])] = v
    y[:, 1:] *= 2.0
    return y


def _case_view_of_view(m, x, v):  # a chain of views of a view of exp(x) * 1, written through
    y = m.exp(x) * 1.0  # (writing into exp's own output would void the result exp saved)
    s = m.view(y, 3, 4)[1:].T[1::2]
    m.add_(s, v)
    m.sin_(m.diagonal(m.view(y, 3, 4)))
    return y


_INPLACE_CASES = [
    ("inplace_view_mul", _case_view_mul, lambda r: [Sample((r(3, 4), r(3)))]),
    ("setitem_repeated", _case_setitem_repeated, lambda r: [Sample((r(5), r(3)))]),
    ("setitem_mask", _case_setitem_mask, lambda r: [Sample((r(2, 3), r(3))),
                                                    Sample((r(2, 3), r(1)))]),
    ("inplace_view_of_view", _case_view_of_view, lambda r: [Sample((r(12), r(2)))]),
]
for _name, _body, _samples in _INPLACE_CASES:
    _fn, _ref = _inplace_case(_body)
    _entry(_name, _fn, _ref, (lambda s: lambda rng, dt: s(_arr(rng, dt)))(_samples))
