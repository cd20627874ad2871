"""Non-differentiable NumPy utilities of ``jitgrad.numpy``: they run NumPy on the data.

``mark(fn)`` flags a function as a pass-through (``fn.passthrough = True``), which is how
``jitgrad.numpy._coverage`` and the docs table tell them from differentiable functions. The
functions defined here are NumPy's index helpers, printing options, set operations, file I/O,
bit packing and histograms. Results that are integer/bool (indices, masks, counts) or not
arrays (strings, option dicts) carry no gradient by nature; a result holding values of a
floating input (``union1d``, ``sort_complex``, ``histogram2d``'s edges...) would silently cut the
graph, so those raise ``TypeError`` when an input requires grad (``_refusing``), naming the
function and what to do.
"""
from __future__ import annotations

import numpy as _np

from .. import autograd as _autograd
from ..autograd import forward_ad as _forward_ad
from ..tensor import Tensor

__all__ = ["array_repr", "array_str", "get_printoptions", "set_printoptions", "printoptions",
           "load", "save", "savez", "frombuffer", "fromfile", "fromiter", "fromstring",
           "frompyfunc", "iterable", "diag_indices_from", "tril_indices_from",
           "triu_indices_from", "mask_indices", "histogram2d", "histogramdd",
           "histogram_bin_edges", "einsum_path", "lexsort", "packbits", "unpackbits",
           "intersect1d", "setdiff1d", "setxor1d", "union1d", "sort_complex", "nanargmax",
           "nanargmin", "bitwise_count", "bitwise_not", "place", "put",
           # NumPy-only names (jax.numpy lacks them): strings, error state, text I/O, dates
           "array2string", "base_repr", "binary_repr", "common_type", "mintypecode", "typename",
           "format_float_positional", "format_float_scientific", "getbufsize", "setbufsize",
           "geterr", "seterr", "geterrcall", "seterrcall", "savetxt", "loadtxt", "genfromtxt",
           "fromregex", "savez_compressed", "isfortran", "may_share_memory", "shares_memory",
           "isnat", "busday_count", "busday_offset", "is_busday", "datetime_as_string",
           "datetime_data", "get_include", "show_config", "show_runtime", "info", "putmask",
           "errstate"]


def mark(fn):
    """Flag ``fn`` as a documented pass-through to NumPy (no gradient); returns ``fn``."""
    fn.passthrough = True
    return fn


def _host(x):
    """NumPy data for ``x`` (Tensors at any depth of lists/tuples; CUDA copied to the host)."""
    if isinstance(x, Tensor):
        return x._host()
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v) for v in x)
    return x


def _wrap(r):
    if isinstance(r, (_np.ndarray, _np.generic)):
        return Tensor._make(_np.asarray(r))
    if isinstance(r, (tuple, list)):
        return type(r)(_wrap(v) for v in r)
    return r


def _requiring_grad(x):
    if isinstance(x, Tensor):
        return _forward_ad.needs_derivative(x)
    if isinstance(x, (list, tuple)):
        return any(_requiring_grad(v) for v in x)
    return False


def _passing(fn, name, wrap=True, refuse_grad=False):
    """``numpy.<name>`` on the data; ``refuse_grad``: raise when an input requires grad."""
    def f(*args, **kwargs):
        if refuse_grad and _autograd.is_grad_enabled() and (
                _requiring_grad(args) or _requiring_grad(list(kwargs.values()))):
            raise TypeError(
                f"jitgrad.numpy.{name} is not differentiable (its result holds input values "
                "chosen by comparisons, with no derivative rule here): call it on "
                "x.detach() if no gradient is needed")
        r = fn(*_host(args), **{k: _host(v) for k, v in kwargs.items()})
        return _wrap(r) if wrap else r

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = (f"``numpy.{name}`` on the data (a pass-through: no gradient"
                 + ("; an input that requires grad raises)." if refuse_grad else ")."))
    return mark(f)


# strings, options and I/O (and NumPy-only utilities, not in jax.numpy: error state, text I/O,
# dates, memory): nothing to differentiate
for _name in ("array_repr", "array_str", "get_printoptions", "set_printoptions", "printoptions",
              "iterable", "einsum_path", "frompyfunc", "save", "savez",
              "array2string", "base_repr", "binary_repr", "common_type", "mintypecode",
              "typename", "format_float_positional", "format_float_scientific", "getbufsize",
              "setbufsize", "geterr", "seterr", "geterrcall", "seterrcall", "savetxt",
              "savez_compressed", "isfortran", "may_share_memory", "shares_memory",
              "datetime_data", "get_include", "show_config", "show_runtime", "info"):
    globals()[_name] = _passing(getattr(_np, _name), _name, wrap=False)
# array results that carry no gradient: loaded data, integer/bool results (indices, masks, bits)
for _name in ("load", "frombuffer", "fromfile", "fromiter", "fromstring",
              "loadtxt", "genfromtxt", "fromregex", "isnat", "busday_count", "busday_offset",
              "is_busday", "datetime_as_string",
              "diag_indices_from", "tril_indices_from", "triu_indices_from", "mask_indices",
              "lexsort", "packbits", "unpackbits", "nanargmax", "nanargmin", "bitwise_not",
              "bitwise_count"):
    globals()[_name] = _passing(getattr(_np, _name), _name)
# values of the inputs picked by comparisons (or bin edges computed from them)
for _name in ("histogram2d", "histogramdd", "histogram_bin_edges", "intersect1d", "setdiff1d",
              "setxor1d", "union1d", "sort_complex"):
    globals()[_name] = _passing(getattr(_np, _name), _name, refuse_grad=True)
del _name
#: NumPy's floating-point error context itself (a class: ``with np.errstate(divide="ignore")``);
#: jitgrad's kernels never warn, so it governs the NumPy code around them
errstate = _np.errstate

def _in_place(fn, name):
    def f(a, *args, **kwargs):
        if not isinstance(a, Tensor):
            return fn(a, *_host(args), **{k: _host(v) for k, v in kwargs.items()})
        if a.requires_grad or _requiring_grad(args):
            raise TypeError(f"jitgrad.numpy.{name} writes into its array in place, with no "
                            "derivative rule: use put_along_axis / where (differentiable, not "
                            "in place), or call it on a tensor that does not require grad")
        data = a._host().copy()
        fn(data, *_host(args), **{k: _host(v) for k, v in kwargs.items()})
        with _autograd.no_grad():
            a.copy_(Tensor._make(data))  # (bumps the version, as any in-place write)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``numpy.{name}`` in place on a Tensor that does not require grad (a "
                 "pass-through; one that requires grad raises).")
    return mark(f)


place = _in_place(_np.place, "place")
put = _in_place(_np.put, "put")
putmask = _in_place(_np.putmask, "putmask")
