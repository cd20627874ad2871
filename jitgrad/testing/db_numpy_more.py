"""Op-database entries for the ``jitgrad.numpy`` functions added for issue 19 (order
statistics, NaN-aware reductions, covariance, convolution, interpolation, polynomials, array
assembly, elementwise extras). Each is a ``db_numpy.numpy_case`` in the NumPy call form:
forward against ``numpy.<name>`` in float64, gradients against finite differences and, for every
differentiable one, second derivatives (``gradgrad``). Entries whose call is not
``jitgrad.numpy.<name>(*sample)`` (a function argument, an in-place result) end in ``()``, so the
protocol test (``tests/numpy/test_numpy.py``) leaves them out; so do the constant creators
(no array argument to dispatch on) and the conversions (``asanyarray``...: NumPy does not
dispatch them, ``numpy.asarray(t)`` is an ndarray by design).
"""
from __future__ import annotations

import numpy as np

from .db_numpy import numpy_case


#: variants whose second derivatives another case of the same function already checks (a
#: different axis, mode or selection rule of the same composition): first order only, to keep
#: the suite fast
FIRST_ORDER_ONLY = {
    "quantile-lower", "quantile-higher", "quantile-nearest", "quantile-midpoint",
    "median-axis0-keep", "median-tuple", "quantile-keep-tuple", "interp-left-right",
    "cov-cols", "cov-bias", "cov-weights-ddof0", "nanvar-keep", "nanstd-keep",
    "append-axis0", "insert-scalar", "insert-axis1", "delete-flat", "compress-flat",
    "choose-clip", "diagflat-k", "ediff1d-ends", "fill_diagonal-wrap()",
    "apply_along_axis-scalar()", "piecewise-const()", "linalg.cond-fro",
    "linalg.tensorsolve-axes", "polyfit-w",
}


def _case(case_id, name, make_args, kwargs=None, **kw):
    first_only = case_id in FIRST_ORDER_ONLY or "-short-first" in case_id or (
        name.startswith("nan") and case_id.endswith("-axis1") and "var" not in name)
    kw.setdefault("gradgrad", kw.get("grad", True) and not first_only)
    return numpy_case(case_id, name, make_args, kwargs, rows=(), **kw)


def _x(*shape):
    return lambda r: (r.standard_normal(shape),)


def _with_nans(shape, where):
    def make(r):
        a = r.standard_normal(shape)
        a[where] = np.nan
        return (a,)
    return make


_NAN_AT = (np.array([0, 1, 1]), np.array([1, 0, 3]))  # no slice is all NaN


def stats_cases():
    c = _case
    out = [
        c("median", "median", _x(3, 4)),
        c("median-axis1", "median", _x(3, 4), dict(axis=1)),
        c("median-axis0-keep", "median", _x(4, 3), dict(axis=0, keepdims=True)),
        c("median-tuple", "median", _x(2, 3, 2), dict(axis=(0, 2))),
        c("percentile", "percentile", lambda r: (r.standard_normal(7), 33.3)),
        c("quantile-q-list", "quantile", lambda r: (r.standard_normal((3, 5)), [0.1, 0.5, 0.77]),
          dict(axis=1)),
        c("quantile-keep-tuple", "quantile", lambda r: (r.standard_normal((2, 3, 2)), 0.3),
          dict(axis=(0, 1), keepdims=True)),
        c("nanmedian", "nanmedian", _with_nans((2, 4), _NAN_AT), dict(axis=1)),
        c("nanquantile", "nanquantile", lambda r: (_with_nans((2, 4), _NAN_AT)(r)[0], [0.2, 0.9]),
          dict(axis=1)),
        c("nanpercentile", "nanpercentile", lambda r: (_with_nans((2, 4), _NAN_AT)(r)[0], 40.0)),
        c("median-nan", "median", _with_nans((2, 3), (np.array([0]), np.array([1]))),
          dict(axis=1), grad=False),
        c("nanmedian-allnan", "nanmedian", _with_nans((2, 3), (np.array([1, 1, 1]),
                                                               np.array([0, 1, 2]))),
          dict(axis=1), grad=False),
    ]
    for method in ("lower", "higher", "nearest", "midpoint"):
        out.append(c(f"quantile-{method}", "quantile",
                     lambda r: (r.standard_normal((2, 5)), [0.3, 0.6]), dict(axis=1, method=method)))
    for name in ("nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nancumsum", "nancumprod"):
        out.append(c(name, name, _with_nans((2, 4), _NAN_AT)))
        out.append(c(f"{name}-axis1", name, _with_nans((2, 4), _NAN_AT), dict(axis=1)))
    for name in ("nanvar", "nanstd"):
        # (every slice keeps two values at least: a one-value std is sqrt(0), not differentiable)
        out.append(c(f"{name}-axis1-ddof1", name, _with_nans((2, 4), _NAN_AT),
                     dict(axis=1, ddof=1)))
        out.append(c(f"{name}-keep", name, _with_nans((3, 4), _NAN_AT),
                     dict(axis=0, keepdims=True)))
    out.append(c("nanmax-allnan", "nanmax", _with_nans((2, 3), (np.array([1, 1, 1]),
                                                                np.array([0, 1, 2]))),
                 dict(axis=1), grad=False))
    out += [
        c("cov", "cov", _x(3, 5)),
        c("cov-cols", "cov", _x(5, 2), dict(rowvar=False)),
        c("cov-xy", "cov", lambda r: (r.standard_normal(5), r.standard_normal(5))),
        c("cov-bias", "cov", _x(2, 4), dict(bias=True)),
        c("cov-fweights", "cov", _x(2, 4), dict(fweights=np.array([1, 2, 1, 3]))),
        c("cov-aweights", "cov", lambda r: (r.standard_normal((2, 4)),),
          dict(aweights=np.array([0.5, 1.5, 1.0, 2.0]))),
        c("cov-weights-ddof0", "cov", _x(2, 4), dict(ddof=0, fweights=np.array([1, 2, 1, 3]),
                                                    aweights=np.array([0.5, 1.5, 1.0, 2.0]))),
        c("corrcoef", "corrcoef", _x(3, 5)),
        c("corrcoef-xy", "corrcoef", lambda r: (r.standard_normal(5), r.standard_normal(5))),
    ]
    return out


def poly_cases():
    c = _case
    out = []
    for mode in ("full", "same", "valid"):
        out += [
            c(f"convolve-{mode}", "convolve", lambda r: (r.standard_normal(5), r.standard_normal(3)),
              dict(mode=mode)),
            c(f"convolve-{mode}-short-first", "convolve",
              lambda r: (r.standard_normal(2), r.standard_normal(4)), dict(mode=mode)),
            c(f"correlate-{mode}", "correlate",
              lambda r: (r.standard_normal(5), r.standard_normal(3)), dict(mode=mode)),
            c(f"correlate-{mode}-short-first", "correlate",
              lambda r: (r.standard_normal(2), r.standard_normal(4)), dict(mode=mode)),
        ]

    def interp_args(r):
        xp = np.sort(r.uniform(-2, 2, 5))
        xp[1:] += np.arange(1, 5) * 0.1  # spaced apart
        return r.uniform(-2.5, 2.8, 6), xp, r.standard_normal(5)

    out += [
        c("interp", "interp", interp_args),
        c("interp-left-right", "interp", interp_args, dict(left=-3.0, right=4.0)),
        c("interp-period", "interp", lambda r: (r.uniform(-5, 5, 6), np.array([0.1, 0.7, 1.3, 1.8]),
                                                r.standard_normal(4)), dict(period=2.0)),
        c("trapezoid", "trapezoid", _x(2, 4)),
        c("trapezoid-dx-axis0", "trapezoid", _x(4, 2), dict(dx=0.3, axis=0)),
        c("trapezoid-x", "trapezoid", lambda r: (r.standard_normal((2, 4)),
                                                 np.sort(r.standard_normal(4)))),
        c("trapezoid-x2d", "trapezoid", lambda r: (r.standard_normal((2, 3)),
                                                   np.sort(r.standard_normal((2, 3)), axis=1))),
        c("vander", "vander", _x(3)),
        c("vander-N-increasing", "vander", lambda r: (r.standard_normal(3), 4),
          dict(increasing=True)),
        c("unwrap", "unwrap", lambda r: (np.cumsum(r.standard_normal(8) * 2.5),)),
        c("unwrap-period", "unwrap", lambda r: (np.cumsum(r.standard_normal(6) * 1.3),),
          dict(period=3.0)),
        c("polyval", "polyval", lambda r: (r.standard_normal(4), r.standard_normal(3))),
        c("polyadd", "polyadd", lambda r: (r.standard_normal(4), r.standard_normal(2))),
        c("polysub", "polysub", lambda r: (r.standard_normal(2), r.standard_normal(3))),
        c("polymul", "polymul", lambda r: (r.standard_normal(3), r.standard_normal(2))),
        c("polyder", "polyder", _x(4)),
        c("polyder-2", "polyder", lambda r: (r.standard_normal(4), 2)),
        c("polyint", "polyint", _x(3)),
        c("polyint-2-k", "polyint", lambda r: (r.standard_normal(3), 2), dict(k=[1.0, -2.0])),
        c("polydiv", "polydiv", lambda r: (r.standard_normal(4), r.standard_normal(2) + 2.0)),
        c("polyfit", "polyfit", lambda r: (np.linspace(0, 1, 6), r.standard_normal(6), 2)),
        c("polyfit-w", "polyfit", lambda r: (np.linspace(-1, 1, 6), r.standard_normal(6), 1),
          dict(w=np.linspace(1.0, 2.0, 6))),
        c("poly", "poly", _x(3)),
        c("roots", "roots", lambda r: (np.poly(np.array([-1.3, 0.4, 2.1])) * 1.7,), rtol=1e-6),
        c("i0", "i0", lambda r: (r.standard_normal((2, 3)) * 3,)),
        c("i0-wide", "i0", lambda r: (np.array([0.0, 1e-3, -2.5, 12.0]),), rtol=1e-12),
    ]
    for name in ("hanning", "hamming", "blackman", "bartlett"):
        out.append(c(f"{name}()", name, lambda r: (7,), grad=False))
    out += [c("kaiser()", "kaiser", lambda r: (6, 2.5), grad=False),
            c("geomspace()", "geomspace", lambda r: (1.0, 100.0, 5), grad=False)]
    return out


def _on_copy(name):
    """The in-place function ``name`` run on a copy of its first argument, which is returned:
    ``(jitgrad.numpy's, NumPy's)``, for an entry and its reference."""
    def ours(a, *args, **kw):
        import jitgrad.numpy as jnp

        out = jnp.copy(a)
        getattr(jnp, name)(out, *args, **kw)
        return out

    def reference(a, *args, **kw):
        out = a.copy()
        getattr(np, name)(out, *args, **kw)
        return out

    return ours, reference


_fill_diagonal, _np_fill_diagonal = _on_copy("fill_diagonal")
_put_along_axis, _np_put_along_axis = _on_copy("put_along_axis")
_copyto, _np_copyto = _on_copy("copyto")


def _namespace(name):
    def get(*args, **kwargs):
        return _attr(name)(*args, **kwargs)
    return get


def _attr(name):
    import jitgrad.numpy as jnp

    return getattr(jnp, name)


def assembly_cases():
    c = _case
    return [
        c("append", "append", lambda r: (r.standard_normal((2, 3)), r.standard_normal(2))),
        c("append-axis0", "append", lambda r: (r.standard_normal((2, 3)), r.standard_normal((1, 3))),
          dict(axis=0)),
        c("insert-scalar", "insert", lambda r: (r.standard_normal(4), 2, 9.0)),
        c("insert-values", "insert", lambda r: (r.standard_normal(4), [1, 1, 3],
                                                r.standard_normal(3))),
        c("insert-axis1", "insert", lambda r: (r.standard_normal((3, 4)), 1, r.standard_normal(3)),
          dict(axis=1)),
        c("insert-broadcast", "insert", lambda r: (r.standard_normal((2, 3)), [0, 2],
                                                   r.standard_normal((2, 1))), dict(axis=1)),
        c("delete", "delete", lambda r: (r.standard_normal((3, 4)), 1), dict(axis=1)),
        c("delete-flat", "delete", lambda r: (r.standard_normal((2, 3)), [0, 4])),
        c("resize", "resize", lambda r: (r.standard_normal((2, 3)), (4, 2))),
        c("compress", "compress", lambda r: ([True, False, True], r.standard_normal((3, 2))),
          dict(axis=0)),
        c("compress-flat", "compress", lambda r: (np.array([0, 1, 1, 0, 1]), r.standard_normal((2, 3)))),
        c("extract", "extract", lambda r: (np.array([[True, False, True], [False, True, True]]),
                                           r.standard_normal((2, 3)))),
        c("choose", "choose", lambda r: (np.array([0, 1, 2, 1]), [r.standard_normal(4),
                                                                  r.standard_normal(4),
                                                                  r.standard_normal(4)])),
        c("choose-clip", "choose", lambda r: (np.array([[0, 3], [1, -1]]),
                                              [r.standard_normal((2, 2)), r.standard_normal(2)]),
          dict(mode="clip")),
        c("block()", "block", lambda r: (r.standard_normal((2, 2)), r.standard_normal((2, 1)),
                                         r.standard_normal((1, 2)), r.standard_normal((1, 1))),
          fn=lambda a, b, c, d: _attr("block")([[a, b], [c, d]]),
          ref=lambda a, b, c, d: np.block([[a, b], [c, d]])),
        c("select", "select", lambda r: ([np.array([True, False, False, True]),
                                          np.array([False, True, False, True])],
                                         [r.standard_normal(4), r.standard_normal(4)]),
          dict(default=0.5)),
        c("diagflat", "diagflat", _x(3)),
        c("diagflat-k", "diagflat", lambda r: (r.standard_normal((2, 2)), -1)),
        c("ediff1d", "ediff1d", _x(2, 3)),
        c("ediff1d-ends", "ediff1d", lambda r: (r.standard_normal(4),),
          dict(to_begin=np.array([-1.0]), to_end=np.array([2.0, 3.0]))),
        c("trim_zeros", "trim_zeros", lambda r: (np.array([0.0, 0.0, 1.5, 0.0, -2.0, 0.0]),),
          grad=False),
        c("trim_zeros-f", "trim_zeros", lambda r: (np.array([0.0, 1.5, 0.0, -2.0, 0.0]), "f"),
          grad=False),
        c("fill_diagonal()", "fill_diagonal", lambda r: (r.standard_normal((3, 4)),
                                                          r.standard_normal(2)),
          fn=_fill_diagonal, ref=_np_fill_diagonal),
        c("fill_diagonal-wrap()", "fill_diagonal", lambda r: (r.standard_normal((7, 3)), 1.5),
          dict(wrap=True), fn=_fill_diagonal, ref=_np_fill_diagonal),
        c("put_along_axis()", "put_along_axis",
          lambda r: (r.standard_normal((2, 4)), np.array([[3, 0], [1, 2]]),
                     r.standard_normal((2, 2)), 1), fn=_put_along_axis, ref=_np_put_along_axis),
        c("apply_along_axis()", "apply_along_axis", _x(3, 4),
          fn=lambda a: _namespace("apply_along_axis")(lambda v: (v * v)[:2] + v[1:3], 1, a),
          ref=lambda a: np.apply_along_axis(lambda v: (v * v)[:2] + v[1:3], 1, a)),
        c("apply_along_axis-scalar()", "apply_along_axis", _x(3, 4),
          fn=lambda a: _namespace("apply_along_axis")(lambda v: _namespace("sum")(v * v), 0, a),
          ref=lambda a: np.apply_along_axis(lambda v: np.sum(v * v), 0, a)),
        c("apply_over_axes()", "apply_over_axes", _x(2, 3, 2),
          fn=lambda a: _namespace("apply_over_axes")(_namespace("sum"), a, [0, 2]),
          ref=lambda a: np.apply_over_axes(np.sum, a, [0, 2])),
        c("piecewise()", "piecewise", _x(6),
          fn=lambda x: _namespace("piecewise")(x, [x.detach().numpy() < 0],
                                               [lambda t: t * t, lambda t: t * 3.0]),
          ref=lambda x: np.piecewise(x, [x < 0], [lambda t: t * t, lambda t: t * 3.0])),
        c("piecewise-const()", "piecewise", _x(6),
          fn=lambda x: _namespace("piecewise")(x, [x.detach().numpy() < -0.3,
                                                   x.detach().numpy() > 0.3],
                                               [lambda t: -t, 2.0]),
          ref=lambda x: np.piecewise(x, [x < -0.3, x > 0.3], [lambda t: -t, 2.0])),
        c("fromfunction()", "fromfunction", _x(2, 3),
          fn=lambda a: _namespace("fromfunction")(lambda i, j: a[i.numpy().astype(int),
                                                                 j.numpy().astype(int)] * (i + j),
                                                  (2, 3)),
          ref=lambda a: np.fromfunction(lambda i, j: a[i.astype(int), j.astype(int)] * (i + j),
                                        (2, 3))),
        c("r_()", "r_", lambda r: (r.standard_normal(3), r.standard_normal(2)),
          fn=lambda a, b: _attr("r_")[a, 0:2, b, 7.0],
          ref=lambda a, b: np.r_[a, 0:2, b, 7.0]),
        c("c_()", "c_", lambda r: (r.standard_normal(3), r.standard_normal((3, 2))),
          fn=lambda a, b: _attr("c_")[a, b], ref=lambda a, b: np.c_[a, b]),
    ]


def elementwise_cases():
    c = _case
    return [
        c("divmod", "divmod", lambda r: (r.standard_normal((2, 3)) * 3,
                                         np.abs(r.standard_normal(3)) + 1.3)),
        c("modf", "modf", lambda r: (r.standard_normal((2, 3)) * 3,)),
        c("frexp", "frexp", lambda r: (r.standard_normal((2, 3)) * 10,)),
        c("ldexp", "ldexp", lambda r: (r.standard_normal((2, 3)), np.array([1, -2, 3]))),
        c("spacing", "spacing", lambda r: (r.standard_normal((2, 3)) * 5,)),
        c("copy", "copy", _x(2, 3)),
        c("matvec", "matvec", lambda r: (r.standard_normal((2, 2, 3)), r.standard_normal(3))),
        c("vecmat", "vecmat", lambda r: (r.standard_normal(2), r.standard_normal((2, 3)))),
        c("asanyarray()", "asanyarray", _x(2, 3)),
        c("ascontiguousarray()", "ascontiguousarray", _x(2, 3)),
        c("asfortranarray()", "asfortranarray", _x(2, 3)),
        c("require()", "require", _x(2, 3)),
        c("asarray_chkfinite()", "asarray_chkfinite", _x(2, 3)),
        c("copyto()", "copyto", lambda r: (r.standard_normal((2, 3)), r.standard_normal(3)),
          dict(where=np.array([True, False, True])), fn=_copyto, ref=_np_copyto),
        c("bincount-weights", "bincount", lambda r: (np.array([0, 2, 2, 5]), r.standard_normal(4)),
          dict(minlength=7)),
    ]


def linalg_cases():
    c = _case
    square = lambda r: (r.standard_normal((3, 3)) + 2 * np.eye(3),)  # noqa: E731
    return [
        c("linalg.cond", "linalg.cond", square),
        c("linalg.cond-m2", "linalg.cond", lambda r: (r.standard_normal((3, 2)), -2)),
        c("linalg.cond-fro", "linalg.cond", lambda r: (square(r)[0], "fro")),
        c("linalg.cond-1", "linalg.cond", lambda r: (square(r)[0], 1)),
        c("linalg.tensorinv", "linalg.tensorinv",
          lambda r: (r.standard_normal((6, 2, 3)) + np.eye(6).reshape(6, 2, 3) * 3, 1)),
        c("linalg.tensorsolve", "linalg.tensorsolve",
          lambda r: (r.standard_normal((2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3,
                     r.standard_normal((2, 3)))),
        c("linalg.tensorsolve-axes", "linalg.tensorsolve",
          lambda r: (r.standard_normal((6, 2, 3)) + np.eye(6).reshape(6, 2, 3) * 3,
                     r.standard_normal((2, 3))), dict(axes=(0,))),
    ]


#: this family's entries (collected by ``testing.op_db.all_entries``)
ENTRIES: list = (stats_cases() + poly_cases() + assembly_cases() + elementwise_cases()
                 + linalg_cases())
